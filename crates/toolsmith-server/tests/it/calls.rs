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
