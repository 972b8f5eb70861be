//! Discovery (docs/search.md): with a discoverable tool in the folder, `tool_search`
//! and `execute_tool` are listed, find the hidden tool and run it through the validated
//! call path.

use serde_json::json;

use crate::{call, examples, folder, state_for, stdio_client, text};

#[tokio::test]
async fn builtins_are_listed_when_a_tool_is_discoverable() {
    let client = stdio_client(state_for(&examples(), 8)).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert!(names.contains(&"tool_search"), "{names:?}");
    assert!(names.contains(&"execute_tool"), "{names:?}");
    assert!(!names.contains(&"add"), "discoverable `add` is listed");
}

#[tokio::test]
async fn builtins_are_not_listed_without_discoverable_tools() {
    let dir = folder(&[(
        "echo.star",
        "def echo(text: str) -> str:\n    \"\"\"Returns its text.\"\"\"\n    return text\n\nmcp.tool(echo)\n",
    )]);
    let client = stdio_client(state_for(dir.path(), 8)).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["echo"]);
}

#[tokio::test]
async fn search_finds_the_hidden_tool_with_its_schema() {
    let client = stdio_client(state_for(&examples(), 8)).await;
    let result = client
        .call_tool(call("tool_search", json!({"query": "sum two numbers"})))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let structured = result.structured_content.clone().unwrap();
    let first = &structured["results"][0];
    assert_eq!(first["name"], "add");
    assert_eq!(first["description"], "Calculate the sum of two numbers");
    assert!(first["score"].as_f64().unwrap() > 0.0);
    assert_eq!(first["inputSchema"]["required"], json!(["a", "b"]));
    assert!(text(&result).starts_with("add ("), "{}", text(&result));
}

#[tokio::test]
async fn execute_runs_the_hidden_tool() {
    let client = stdio_client(state_for(&examples(), 8)).await;
    for key in ["arguments", "parameters"] {
        let result = client
            .call_tool(call(
                "execute_tool",
                json!({"name": "add", key: {"a": 2, "b": 3}}),
            ))
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{}", text(&result));
        assert_eq!(text(&result), "2 + 3 = 5");
    }
}

#[tokio::test]
async fn execute_validates_like_a_direct_call() {
    let client = stdio_client(state_for(&examples(), 8)).await;
    let result = client
        .call_tool(call(
            "execute_tool",
            json!({"name": "add", "arguments": {"a": 2}}),
        ))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    insta::assert_snapshot!(text(&result));
}

#[tokio::test]
async fn execute_with_an_unknown_name_suggests_one() {
    let client = stdio_client(state_for(&examples(), 8)).await;
    let result = client
        .call_tool(call("execute_tool", json!({"name": "ad", "arguments": {}})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("did you mean `add`"),
        "{}",
        text(&result)
    );
}
