//! How calls run: concurrently, under their timeout, stopped by cancellation, asking the
//! client's model (progress and logs: see `stdio.rs`, which sees the raw messages). Bounds are generous: these tests pin behaviour,
//! not speed.

use std::time::Duration;

use rmcp::model::{ClientRequest, Request};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

use crate::{BEHAVIOUR, call, folder, state_for, stdio_client, text};

/// Far less than the spinning tool's 30 s timeout: finishing within this shows the call
/// did not wait for it.
const GENEROUS: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_does_not_block_others() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let client = stdio_client(state_for(dir.path(), 8)).await;
    let spinning = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(call("spin", json!({})))),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let echoed = tokio::time::timeout(
        GENEROUS,
        client.call_tool(call("echo", json!({"text": "still here"}))),
    )
    .await
    .expect("the fast call waited for the slow one")
    .unwrap();
    assert_eq!(text(&echoed), "still here");
    spinning.cancel(None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_the_running_tool() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    // One call slot: the second call can only start once the cancelled tool's thread ended.
    let client = stdio_client(state_for(dir.path(), 1)).await;
    let spinning = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(call("spin", json!({})))),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    spinning
        .cancel(Some("changed my mind".into()))
        .await
        .unwrap();
    let echoed = tokio::time::timeout(
        GENEROUS,
        client.call_tool(call("echo", json!({"text": "next"}))),
    )
    .await
    .expect("the cancelled tool kept its slot")
    .unwrap();
    assert_eq!(text(&echoed), "next");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_timeout_is_an_error_result() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let client = stdio_client(state_for(dir.path(), 8)).await;
    let result = tokio::time::timeout(GENEROUS, client.call_tool(call("spin_briefly", json!({}))))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("timed out"), "{}", text(&result));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_can_ask_the_clients_model() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let client = stdio_client(state_for(dir.path(), 8)).await;
    let result = client
        .call_tool(call("ask", json!({"prompt": "ping"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(text(&result), "pong: ping");
}

/// A tool that ignores its interrupt and blocks until the test releases it: what a tool
/// stuck in a native call looks like to the server.
struct Stuck {
    definition: toolsmith_model::ToolDefinition,
    released: std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
}

impl toolsmith_model::Tool for Stuck {
    fn definition(&self) -> &toolsmith_model::ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        _arguments: &toolsmith_model::JsonObject,
        _context: &toolsmith_model::CallContext,
    ) -> Result<toolsmith_model::ToolReturn, toolsmith_model::ToolFailure> {
        let (released, wake) = &*self.released;
        let mut done = released.lock().unwrap();
        while !*done {
            done = wake.wait(done).unwrap();
        }
        Ok(toolsmith_model::ToolReturn::Text("released".into()))
    }
}

/// Returns its `text` argument.
struct Echo(toolsmith_model::ToolDefinition);

impl toolsmith_model::Tool for Echo {
    fn definition(&self) -> &toolsmith_model::ToolDefinition {
        &self.0
    }

    fn call(
        &self,
        arguments: &toolsmith_model::JsonObject,
        _context: &toolsmith_model::CallContext,
    ) -> Result<toolsmith_model::ToolReturn, toolsmith_model::ToolFailure> {
        let text = arguments["text"].as_str().unwrap_or_default().to_owned();
        Ok(toolsmith_model::ToolReturn::Text(text))
    }
}

fn definition(name: &str, timeout: Duration) -> toolsmith_model::ToolDefinition {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let serde_json::Value::Object(schema) = schema else {
        unreachable!()
    };
    let mut definition = toolsmith_model::ToolDefinition::new(name, "A test tool.", schema);
    definition.timeout = Some(timeout);
    definition
}

// Regression test for issue 14, item 4: a call the watchdog abandoned kept its slot until
// its thread ended, so as many stuck calls as slots left no later call answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_calls_give_their_slots_back() {
    let released = std::sync::Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let tools: Vec<std::sync::Arc<dyn toolsmith_model::Tool>> = vec![
        std::sync::Arc::new(Stuck {
            definition: definition("stuck", Duration::from_millis(300)),
            released: std::sync::Arc::clone(&released),
        }),
        std::sync::Arc::new(Echo(definition("echo", Duration::from_secs(5)))),
    ];
    let catalog = toolsmith_model::Catalog::new(tools, Vec::new());
    let options = toolsmith_server::ServerOptions {
        name: "stuck".into(),
        version: "1".into(),
        instructions: None,
        working_dir: std::env::temp_dir(),
        max_concurrent_calls: 2,
        page_size: 100,
        search: toolsmith_model::SearchSettings::default(),
    };
    let state = toolsmith_server::ServerState::new(std::sync::Arc::new(catalog), options);
    let client = stdio_client(state).await;
    // More stuck calls than slots, one after the other: two give their slots back (as many
    // abandoned threads as slots may go on), the third keeps its own.
    for _ in 0..3 {
        let result = tokio::time::timeout(GENEROUS, client.call_tool(call("stuck", json!({}))))
            .await
            .expect("a stuck call is answered")
            .unwrap();
        assert_eq!(result.is_error, Some(true));
        assert!(text(&result).contains("abandoned"), "{}", text(&result));
    }
    let echoed = tokio::time::timeout(
        GENEROUS,
        client.call_tool(call("echo", json!({"text": "still serving"}))),
    )
    .await
    .expect("an answer")
    .unwrap();
    assert_eq!(text(&echoed), "still serving");
    let (done, wake) = &*released;
    *done.lock().unwrap() = true;
    wake.notify_all();
}
