//! Prompts, resources and completion over stdio streams, on the conformance fixture.

use rmcp::model::{
    CompleteRequestParams, ErrorCode, GetPromptRequestParams, ReadResourceRequestParams,
    SubscribeRequestParams,
};
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use toolsmith_folder::ToolFolder;
use toolsmith_server::{DEFAULT_MAX_CONCURRENT_CALLS, ServerState};

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use toolsmith_model::{Prompt, Prompts, Resource, ResourceBody, ResourceInfo, Resources};

use crate::{examples, options_for, state_for, stdio_client};

fn conformance() -> ServerState {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/conformance");
    let folder = ToolFolder::load(&dir).unwrap();
    ServerState::with_content(
        Arc::clone(folder.catalog()),
        Arc::clone(folder.prompts()),
        Arc::clone(folder.resources()),
        options_for(&folder, DEFAULT_MAX_CONCURRENT_CALLS),
    )
}

fn params<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).unwrap()
}

fn error_code(error: ServiceError) -> ErrorCode {
    match error {
        ServiceError::McpError(error) => error.code,
        other => panic!("expected a JSON-RPC error, got {other}"),
    }
}

#[tokio::test]
async fn capabilities_declare_prompts_resources_and_completions() {
    let client = stdio_client(conformance()).await;
    let capabilities = serde_json::to_value(&client.peer_info().unwrap().capabilities).unwrap();
    assert_eq!(capabilities["prompts"], json!({"listChanged": true}));
    assert_eq!(
        capabilities["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert!(capabilities.get("completions").is_some());
}

#[tokio::test]
async fn prompts_list_and_render() {
    let client = stdio_client(conformance()).await;
    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert!(names.contains(&"test_prompt_with_arguments"), "{names:?}");

    let result = client
        .get_prompt(params::<GetPromptRequestParams>(json!({
            "name": "test_prompt_with_arguments",
            "arguments": {"arg1": "a", "arg2": "b"},
        })))
        .await
        .unwrap();
    let result = serde_json::to_value(result).unwrap();
    assert_eq!(
        result["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );

    let missing = client
        .get_prompt(params::<GetPromptRequestParams>(
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a"}}),
        ))
        .await
        .unwrap_err();
    assert_eq!(error_code(missing), ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn resources_read_templates_and_not_found() {
    let client = stdio_client(conformance()).await;
    let resources = client.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "test://static-text"));
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "test://template/{id}/data")
    );

    let read = client
        .read_resource(ReadResourceRequestParams::new("test://template/42/data"))
        .await
        .unwrap();
    let read = serde_json::to_value(read).unwrap();
    assert_eq!(read["contents"][0]["uri"], "test://template/42/data");
    assert!(read["contents"][0]["text"].as_str().unwrap().contains("42"));

    let unknown = client
        .read_resource(ReadResourceRequestParams::new("test://nope"))
        .await
        .unwrap_err();
    assert_eq!(error_code(unknown), ErrorCode::RESOURCE_NOT_FOUND);

    client
        .subscribe(params::<SubscribeRequestParams>(
            json!({"uri": "test://static-text"}),
        ))
        .await
        .unwrap();
    let unknown = client
        .subscribe(params::<SubscribeRequestParams>(
            json!({"uri": "test://nope"}),
        ))
        .await
        .unwrap_err();
    assert_eq!(error_code(unknown), ErrorCode::RESOURCE_NOT_FOUND);
}

// Regression test: a template resource matches endless URIs, and each
// subscription stayed for the session's life, so one session could grow without bound.
#[tokio::test]
async fn one_session_subscribes_to_at_most_a_thousand_resources() {
    let client = stdio_client(conformance()).await;
    let subscribe = |id: usize| {
        client.subscribe(params::<SubscribeRequestParams>(
            json!({"uri": format!("test://template/{id}/data")}),
        ))
    };
    for id in 0..1000 {
        subscribe(id).await.unwrap();
    }
    // Again for one it has: still fine.
    subscribe(7).await.unwrap();
    let refused = subscribe(1000).await.unwrap_err();
    let ServiceError::McpError(error) = refused else {
        panic!("expected a JSON-RPC error, got {refused}");
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(
        error
            .message
            .contains("already subscribes to 1000 resources"),
        "{}",
        error.message
    );
    client
        .unsubscribe(params(json!({"uri": "test://template/7/data"})))
        .await
        .unwrap();
    subscribe(1000).await.unwrap();
}

#[tokio::test]
async fn completes_prompt_arguments_and_template_variables() {
    let client = stdio_client(conformance()).await;
    let prompt = client
        .complete(params::<CompleteRequestParams>(json!({
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "par"},
        })))
        .await
        .unwrap();
    assert_eq!(prompt.completion.values, ["paris", "park", "party"]);
    assert_eq!(prompt.completion.has_more, Some(false));

    let template = client
        .complete(params::<CompleteRequestParams>(json!({
            "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
            "argument": {"name": "id", "value": "4"},
        })))
        .await
        .unwrap();
    assert_eq!(template.completion.values, ["456"]);

    let unknown = client
        .complete(params::<CompleteRequestParams>(json!({
            "ref": {"type": "ref/prompt", "name": "nope"},
            "argument": {"name": "x", "value": ""},
        })))
        .await
        .unwrap_err();
    assert_eq!(error_code(unknown), ErrorCode::INVALID_PARAMS);
}

fn text_resource(uri: &str, text: &str) -> Arc<Resources> {
    let resource = Resource {
        uri: uri.into(),
        info: ResourceInfo {
            name: "a".into(),
            mime_type: Some("text/plain".into()),
            ..ResourceInfo::default()
        },
        body: ResourceBody::Text(text.into()),
        size: None,
    };
    Arc::new(Resources::new(vec![resource], Vec::new()))
}

async fn eventually(what: &str, done: impl Fn() -> bool) {
    for _ in 0..300 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never happened: {what}");
}

#[tokio::test]
async fn replace_announces_changed_lists_and_updated_subscriptions() {
    let state = state_for(&examples(), 8);
    let client = stdio_client(state.clone()).await;
    let seen = client.service().seen.clone();
    assert!(client.list_all_prompts().await.unwrap().is_empty());

    state
        .replace(
            state.catalog(),
            Arc::default(),
            text_resource("test://a", "one"),
        )
        .await;
    eventually("resources/list_changed", || {
        seen.resources_changed.load(Ordering::SeqCst) == 1
    })
    .await;
    // The same tools: no `tools/list_changed`.
    assert_eq!(seen.tools_changed.load(Ordering::SeqCst), 0);
    assert_eq!(seen.prompts_changed.load(Ordering::SeqCst), 0);

    client
        .subscribe(params::<SubscribeRequestParams>(json!({"uri": "test://a"})))
        .await
        .unwrap();
    state
        .replace(
            state.catalog(),
            Arc::new(Prompts::new(vec![Prompt::new("p")])),
            text_resource("test://a", "two"),
        )
        .await;
    eventually("resources/updated", || {
        seen.updated.lock().unwrap().as_slice() == ["test://a"]
    })
    .await;
    assert_eq!(seen.prompts_changed.load(Ordering::SeqCst), 1);
    assert_eq!(seen.resources_changed.load(Ordering::SeqCst), 2);
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "p");
    let read = client
        .read_resource(ReadResourceRequestParams::new("test://a"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(read).unwrap()["contents"][0]["text"],
        "two"
    );
}
