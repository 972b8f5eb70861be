//! How stdout becomes the result (docs/tools.md, "Command tools"; docs/result-contract.md).

use serde_json::json;
use toolsmith_model::{CallOutcome, Content, TextFormat, ToolReturn};

use crate::support::{call, failure, text, tool};

fn printing(output: &str) -> Result<ToolReturn, toolsmith_model::ToolFailure> {
    let dir = tempfile::tempdir().expect("a temp dir can be created");
    let tool = tool(
        dir.path(),
        &json!({"output": {"type": "string"}}),
        &["printf", "%s", "{output}"],
    );
    call(&tool, &json!({ "output": output }))
}

#[test]
fn mcp_result_with_is_error_is_passed_through() {
    let printed = r#"{"content": [{"type": "text", "text": "city not found"}], "structuredContent": {"city": "Olso"}, "isError": true}"#;
    let expected = CallOutcome {
        content: vec![Content::text("city not found")],
        structured_content: Some(json!({"city": "Olso"})),
        is_error: true,
        meta: None,
    };
    assert_eq!(printing(printed), Ok(ToolReturn::Outcome(expected)));
}

#[test]
fn malformed_mcp_result_fails_with_the_reason() {
    let message = failure(printing(r#"{"content": "just a string"}"#));
    assert!(message.contains("not a valid CallToolResult"), "{message}");
    assert!(
        message.contains("command `printf %s {output}`"),
        "{message}"
    );
}

#[test]
fn json_object_becomes_structured_content() {
    let returned = printing("{\"temperature\": 21, \"sky\": \"clear\"}\n").unwrap();
    let outcome = returned.into_outcome(TextFormat::Json);
    assert!(!outcome.is_error);
    assert_eq!(
        outcome.structured_content,
        Some(json!({"temperature": 21, "sky": "clear"}))
    );
    assert_eq!(outcome.joined_text(), r#"{"temperature":21,"sky":"clear"}"#);
}

#[test]
fn json_array_becomes_a_wrapped_result() {
    let returned = printing("[1, 2, 3]").unwrap();
    assert_eq!(returned, ToolReturn::Value(json!([1, 2, 3])));
    let outcome = returned.into_outcome(TextFormat::Json);
    assert_eq!(
        outcome.structured_content,
        Some(json!({"result": [1, 2, 3]}))
    );
}

#[test]
fn plain_text_is_returned_as_is_minus_one_trailing_newline() {
    assert_eq!(
        text(printing("  two lines\nof text\n\n")),
        "  two lines\nof text\n"
    );
    assert_eq!(text(printing("{not json")), "{not json");
}

#[test]
fn empty_output_is_empty_text() {
    assert_eq!(text(printing("")), "");
}
