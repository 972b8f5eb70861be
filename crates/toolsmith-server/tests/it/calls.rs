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

// Regression test: a call the watchdog abandoned kept its slot until
// its thread ended, so as many stuck calls as slots left no later call answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_calls_give_their_slots_back() {
    let gate = std::sync::Arc::new(Gate::default());
    let state = serve_tools(
        vec![
            std::sync::Arc::new(Hold {
                definition: definition("stuck", Duration::from_millis(300)),
                gate: std::sync::Arc::clone(&gate),
            }),
            std::sync::Arc::new(Echo(definition("echo", Duration::from_secs(5)))),
        ],
        2,
    );
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
    gate.release();
}

/// A tool that holds its call until the test releases it (ignoring its interrupt), and
/// counts the calls that started.
struct Hold {
    definition: toolsmith_model::ToolDefinition,
    gate: std::sync::Arc<Gate>,
}

#[derive(Default)]
struct Gate {
    /// Calls started, and whether they may return.
    state: std::sync::Mutex<(usize, bool)>,
    changed: std::sync::Condvar,
}

impl Gate {
    fn release(&self) {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
    }

    /// Waits (at most 10 s) until `count` calls have started.
    fn wait_for_started(&self, count: usize) {
        let state = self.state.lock().unwrap();
        let (state, _) = self
            .changed
            .wait_timeout_while(state, Duration::from_secs(10), |(started, _)| {
                *started < count
            })
            .unwrap();
        assert!(state.0 >= count, "only {} calls started", state.0);
    }
}

impl toolsmith_model::Tool for Hold {
    fn definition(&self) -> &toolsmith_model::ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        _arguments: &toolsmith_model::JsonObject,
        _context: &toolsmith_model::CallContext,
    ) -> Result<toolsmith_model::ToolReturn, toolsmith_model::ToolFailure> {
        let mut state = self.gate.state.lock().unwrap();
        state.0 += 1;
        self.gate.changed.notify_all();
        while !state.1 {
            state = self.gate.changed.wait(state).unwrap();
        }
        Ok(toolsmith_model::ToolReturn::Text("released".into()))
    }
}

/// Returns after a short while, recording how many of its calls ever ran at once.
struct Gauge {
    definition: toolsmith_model::ToolDefinition,
    running: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

impl toolsmith_model::Tool for Gauge {
    fn definition(&self) -> &toolsmith_model::ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        _arguments: &toolsmith_model::JsonObject,
        _context: &toolsmith_model::CallContext,
    ) -> Result<toolsmith_model::ToolReturn, toolsmith_model::ToolFailure> {
        use std::sync::atomic::Ordering::SeqCst;
        let now = self.running.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        std::thread::sleep(Duration::from_millis(100));
        self.running.fetch_sub(1, SeqCst);
        Ok(toolsmith_model::ToolReturn::Text("measured".into()))
    }
}

fn serve_tools(
    tools: Vec<std::sync::Arc<dyn toolsmith_model::Tool>>,
    max_concurrent_calls: usize,
) -> toolsmith_server::ServerState {
    let catalog = toolsmith_model::Catalog::new(tools, Vec::new());
    let options = toolsmith_server::ServerOptions {
        max_concurrent_calls,
        ..toolsmith_server::ServerOptions::new(std::env::temp_dir())
    };
    toolsmith_server::ServerState::new(std::sync::Arc::new(catalog), options)
}

// Regression test: calls of one slow tool took every slot, and a
// trivial call of another tool waited for one of them to end (or gave up "busy").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tool_cannot_take_every_call_slot() {
    let gate = std::sync::Arc::new(Gate::default());
    let state = serve_tools(
        vec![
            std::sync::Arc::new(Hold {
                definition: definition("hold", Duration::from_secs(20)),
                gate: std::sync::Arc::clone(&gate),
            }),
            std::sync::Arc::new(Echo(definition("echo", Duration::from_secs(3)))),
        ],
        4,
    );
    let client = stdio_client(state).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        let peer = client.peer().clone();
        held.push(tokio::spawn(async move {
            peer.call_tool(call("hold", json!({}))).await
        }));
    }
    // Three of the four slots: one is kept for other tools.
    let waiting = std::sync::Arc::clone(&gate);
    tokio::task::spawn_blocking(move || waiting.wait_for_started(3))
        .await
        .unwrap();
    let echoed = tokio::time::timeout(
        GENEROUS,
        client.call_tool(call("echo", json!({"text": "still serving"}))),
    )
    .await
    .expect("an answer")
    .unwrap();
    assert_eq!(text(&echoed), "still serving");
    gate.release();
    for call in held {
        let result = tokio::time::timeout(GENEROUS, call)
            .await
            .expect("held calls end once released")
            .unwrap()
            .unwrap();
        assert_eq!(text(&result), "released");
    }
}

// Regression test: `max_concurrency` bounds how many calls of one
// tool run at once; the others wait for a slot of that tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_concurrency_bounds_one_tool_s_calls() {
    let mut limited = definition("gauge", Duration::from_secs(20));
    limited.max_concurrency = Some(1);
    let gauge = std::sync::Arc::new(Gauge {
        definition: limited,
        running: std::sync::atomic::AtomicUsize::new(0),
        most: std::sync::atomic::AtomicUsize::new(0),
    });
    let tool: std::sync::Arc<dyn toolsmith_model::Tool> = gauge.clone();
    let client = stdio_client(serve_tools(vec![tool], 8)).await;
    let mut calls = Vec::new();
    for _ in 0..3 {
        let peer = client.peer().clone();
        calls.push(tokio::spawn(async move {
            peer.call_tool(call("gauge", json!({}))).await
        }));
    }
    for call in calls {
        let result = tokio::time::timeout(GENEROUS, call)
            .await
            .expect("every call ends")
            .unwrap()
            .unwrap();
        assert_eq!(text(&result), "measured");
    }
    assert_eq!(gauge.most.load(std::sync::atomic::Ordering::SeqCst), 1);

    // The keyword reaches the definition from a script (manifests share the same code).
    let dir = folder(&[(
        "limited.star",
        "def limited() -> str:\n    \"\"\"One at a time.\"\"\"\n    return \"1\"\n\nmcp.tool(limited, max_concurrency = 2)\n",
    )]);
    let loaded = toolsmith_folder::ToolFolder::load(dir.path()).unwrap();
    let entry = loaded.catalog().get("limited").expect("the tool loaded");
    assert_eq!(entry.definition().max_concurrency, Some(2));
}
