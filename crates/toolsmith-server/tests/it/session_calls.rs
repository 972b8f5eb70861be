//! Plain `tools/call` POSTs in a Streamable HTTP session, answered by Toolsmith itself
//! rather than rmcp's session worker (`src/http/session_calls.rs`): JSON answers, and everything
//! that needs the request's SSE stream still taking rmcp's path.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::{BEHAVIOUR, call, folder, state_for, text};
use toolsmith_server::{HttpOptions, router};

/// Far more than any call here takes; finishing within it is what is tested.
const GENEROUS: Duration = Duration::from_secs(15);

struct Answer {
    status: StatusCode,
    content_type: String,
    body: String,
}

async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    Answer {
        status: parts.status,
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

fn post(session: Option<&str>, body: &Value) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "127.0.0.1:8080")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(Body::from(body.to_string())).unwrap()
}

/// Opens a session for a client with `capabilities`; returns its id.
async fn open_session(app: &Router, capabilities: Value) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "session-calls-test", "version": "1"},
    }});
    let response = app.clone().oneshot(post(None, &initialize)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = send(app, post(Some(&session), &initialized)).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.body);
    session
}

/// Waits until the session's plain calls are answered with JSON: the session joins once
/// rmcp's loop has handled `notifications/initialized`, which can trail its 202.
async fn until_answered_with_json(app: &Router, session: &str) {
    for attempt in 0..100 {
        let call = tools_call(1000 + attempt, "echo", &json!({"text": "ready?"}));
        let answer = send(app, post(Some(session), &call)).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        if answer.content_type == "application/json" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("plain calls in session {session} never got a JSON answer");
}

fn tools_call(id: u64, name: &str, arguments: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

/// The JSON-RPC messages of an SSE body, in order.
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

fn behaviour_app(calls: usize) -> (tempfile::TempDir, Router) {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let app = router(state_for(dir.path(), calls), &HttpOptions::default());
    (dir, app)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_session_call_is_answered_with_json() {
    let (_dir, app) = behaviour_app(8);
    let session = open_session(&app, json!({})).await;
    until_answered_with_json(&app, &session).await;
    let answer = send(
        &app,
        post(
            Some(&session),
            &tools_call(7, "echo", &json!({"text": "hi"})),
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.content_type, "application/json");
    let message: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(message["id"], 7);
    assert_eq!(message["result"]["content"][0]["text"], "hi");
    assert_eq!(message["result"]["isError"], false);

    // An unknown tool is still a JSON-RPC error with "did you mean".
    let answer = send(
        &app,
        post(Some(&session), &tools_call(8, "ecko", &json!({}))),
    )
    .await;
    let message: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(message["id"], 8);
    assert_eq!(message["error"]["code"], -32602, "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_or_deleted_session_is_not_found() {
    let (_dir, app) = behaviour_app(8);
    let call = tools_call(1, "echo", &json!({"text": "hi"}));
    let answer = send(&app, post(Some("no-such-session"), &call)).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);

    let session = open_session(&app, json!({})).await;
    until_answered_with_json(&app, &session).await;
    let delete = Request::delete("/mcp")
        .header(header::HOST, "127.0.0.1:8080")
        .header("mcp-session-id", &session)
        .body(Body::empty())
        .unwrap();
    let answer = send(&app, delete).await;
    assert!(answer.status.is_success(), "{}", answer.status);
    let answer = send(&app, post(Some(&session), &call)).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_still_rides_the_request_stream() {
    let (_dir, app) = behaviour_app(8);
    let session = open_session(&app, json!({})).await;
    until_answered_with_json(&app, &session).await;
    let mut request = tools_call(3, "chatty", &json!({"steps": 2}));
    request["params"]["_meta"] = json!({"progressToken": "p1"});
    let answer = send(&app, post(Some(&session), &request)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.content_type, "text/event-stream");
    let events = events(&answer.body);
    let progress: Vec<&Value> = events
        .iter()
        .filter(|event| event["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{events:?}");
    assert_eq!(progress[1]["params"]["progressToken"], "p1");
    let last = events.last().unwrap();
    assert_eq!(last["id"], 3);
    assert_eq!(last["result"]["content"][0]["text"], "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_can_be_asked_for_sampling_gets_rmcp_streams() {
    let (_dir, app) = behaviour_app(8);
    let session = open_session(&app, json!({"sampling": {}})).await;
    let answer = send(
        &app,
        post(
            Some(&session),
            &tools_call(4, "echo", &json!({"text": "hi"})),
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.content_type, "text/event-stream");
    let events = events(&answer.body);
    assert_eq!(events.last().unwrap()["result"]["content"][0]["text"], "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_a_session_call_and_drops_its_answer() {
    // One call slot: the next call can only run once the cancelled tool gave it back.
    let (_dir, app) = behaviour_app(1);
    let session = open_session(&app, json!({})).await;
    until_answered_with_json(&app, &session).await;
    let spinning = tokio::spawn({
        let app = app.clone();
        let request = post(Some(&session), &tools_call(5, "spin", &json!({})));
        async move { send(&app, request).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 5, "reason": "changed my mind"}});
    let answer = send(&app, post(Some(&session), &cancel)).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    let spun = tokio::time::timeout(GENEROUS, spinning)
        .await
        .expect("the cancelled call kept running")
        .unwrap();
    assert_eq!(spun.status, StatusCode::OK);
    assert!(events(&spun.body).is_empty(), "{}", spun.body);

    let answer = tokio::time::timeout(
        GENEROUS,
        send(
            &app,
            post(
                Some(&session),
                &tools_call(6, "echo", &json!({"text": "next"})),
            ),
        ),
    )
    .await
    .expect("the cancelled tool kept its slot");
    let message: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(message["result"]["content"][0]["text"], "next");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_without_capabilities_calls_over_a_socket() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = router(state_for(dir.path(), 8), &HttpOptions::default());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{address}/mcp"
        )))
        .await
        .unwrap();
    for round in 0..3 {
        let echoed = client
            .call_tool(call("echo", json!({"text": format!("round {round}")})))
            .await
            .unwrap();
        assert_eq!(text(&echoed), format!("round {round}"));
    }
    client.cancel().await.unwrap();
}
