//! Streamable HTTP: rmcp's client over a real socket (sessions), and raw requests through
//! the router in-process: bare curl-style POSTs, Host/Origin checks, bearer tokens, limits.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::{TestClient, call, examples, state_for, text};
use toolsmith_server::testing::ReplaceCatalog as _;
use toolsmith_server::{HttpOptions, router};

/// Serves the example tools on 127.0.0.1 (a free port); returns the `/mcp` URL.
async fn serve(options: HttpOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = router(state_for(&examples(), 8), &options);
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_and_call_over_a_socket() {
    let url = serve(HttpOptions::default()).await;
    let client = TestClient::default()
        .serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "forecast_get"));
    assert!(!tools.iter().any(|tool| tool.name == "add"));
    let hello = client
        .call_tool(call("hello", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(text(&hello), "Hello, Ada!");
    let forecast = client
        .call_tool(call("forecast_get", json!({"city": "Lisbon", "days": 2})))
        .await
        .unwrap();
    assert_eq!(forecast.structured_content.unwrap()["city"], "Lisbon");
    client.cancel().await.unwrap();
}

fn post() -> axum::http::request::Builder {
    post_to("localhost")
}

fn post_to(host: &str) -> axum::http::request::Builder {
    Request::post("/mcp")
        .header(header::HOST, host)
        .header(header::CONTENT_TYPE, "application/json")
}

async fn send(
    options: &HttpOptions,
    request: Request<Body>,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let app = router(state_for(&examples(), 8), options);
    let response = app.oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    (
        parts.status,
        parts.headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

#[tokio::test]
async fn bare_post_without_accept_or_session_is_answered_with_json() {
    // Exactly what Scriptling's docs (seeds/002) tell people to run with curl.
    let (status, headers, body) = send(
        &HttpOptions::default(),
        post().body(Body::from(LIST)).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert!(
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "hello")
    );

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{"name":"Alice","times":2}}}"#;
    let request = post()
        .header(header::ACCEPT, "*/*")
        .body(Body::from(call))
        .unwrap();
    let (status, _, body) = send(&HttpOptions::default(), request).await;
    assert_eq!(status, StatusCode::OK);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Hello, Alice!\nHello, Alice!"
    );
}

#[tokio::test]
async fn initialize_from_an_sse_client_opens_a_session() {
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = post()
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(Body::from(initialize))
        .unwrap();
    let (status, headers, body) = send(&HttpOptions::default(), request).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers.contains_key("mcp-session-id"), "{headers:?}");
    assert_eq!(headers[header::CONTENT_TYPE], "text/event-stream");
    assert!(body.contains("toolsmith-examples"), "{body}");
}

#[tokio::test]
async fn foreign_host_and_origin_are_forbidden() {
    let request = post_to("evil.example").body(Body::from(LIST)).unwrap();
    let (status, _, _) = send(&HttpOptions::default(), request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let request = post()
        .header(header::ORIGIN, "https://evil.example")
        .body(Body::from(LIST))
        .unwrap();
    let (status, _, _) = send(&HttpOptions::default(), request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let request = post()
        .header(header::ORIGIN, "http://localhost:5173")
        .body(Body::from(LIST))
        .unwrap();
    let (status, _, _) = send(&HttpOptions::default(), request).await;
    assert_eq!(status, StatusCode::OK);

    let options = HttpOptions {
        allowed_hosts: vec!["tools.internal".into()],
        ..HttpOptions::default()
    };
    let request = post_to("tools.internal:8080")
        .body(Body::from(LIST))
        .unwrap();
    let (status, _, body) = send(&options, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn bearer_token_is_required_when_configured() {
    let options = HttpOptions {
        auth_token: Some("s3cret".into()),
        ..HttpOptions::default()
    };
    for authorization in [
        None,
        Some("Bearer wrong"),
        Some("Basic czNjcmV0"),
        Some("Bearer s3cre"),
    ] {
        let mut request = post();
        if let Some(value) = authorization {
            request = request.header(header::AUTHORIZATION, value);
        }
        let (status, headers, _) = send(&options, request.body(Body::from(LIST)).unwrap()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{authorization:?}");
        assert!(
            headers[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
    }
    let request = post()
        .header(header::AUTHORIZATION, "Bearer s3cret")
        .body(Body::from(LIST))
        .unwrap();
    let (status, _, _) = send(&options, request).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let options = HttpOptions {
        max_body_bytes: 1024,
        ..HttpOptions::default()
    };
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"hello","arguments":{{"name":"{}"}}}}}}"#,
        "x".repeat(4096)
    );
    // Announced by Content-Length, and not announced.
    let request = post()
        .header(header::CONTENT_LENGTH, big.len())
        .body(Body::from(big.clone()))
        .unwrap();
    assert_eq!(
        send(&options, request).await.0,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let request = post().body(Body::from(big.clone())).unwrap();
    assert_eq!(
        send(&options, request).await.0,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    // Within a session, rmcp applies the same limit.
    let request = post()
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-session-id", "some-session")
        .body(Body::from(big))
        .unwrap();
    assert_eq!(
        send(&options, request).await.0,
        StatusCode::PAYLOAD_TOO_LARGE
    );
}

#[tokio::test]
async fn other_paths_are_not_found() {
    // `/` is the page; a path nobody serves is not found.
    let request = Request::get("/nothing-here")
        .header(header::HOST, "localhost")
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        send(&HttpOptions::default(), request).await.0,
        StatusCode::NOT_FOUND
    );
}

const ASKS: &str = r#"
def ask() -> str:
    """Asks for a name, then for a color."""
    name = mcp.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key = "name")
    color = mcp.elicit("Color?", {"type": "object", "properties": {"color": {"type": "string"}}})
    return "%s likes %s" % (name["content"]["name"], color["content"]["color"])

mcp.tool(ask)
"#;

/// A 2026-07-28 `tools/call` of `ask` with `extra` params, answered with JSON.
async fn call_2026(app: &axum::Router, extra: &str) -> Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"ask","arguments":{{}}{extra},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"elicitation":{{}}}}}}}}}}"#
    );
    let request = post()
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "ask")
        .body(Body::from(body))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let json = text
        .lines()
        .find_map(|line| line.strip_prefix("data:"))
        .unwrap_or(&text);
    serde_json::from_str(json.trim()).unwrap_or_else(|_| panic!("{text}"))
}

#[tokio::test]
async fn input_required_rounds_replay_the_tool_with_the_answers() {
    let dir = crate::folder(&[("ask.star", ASKS)]);
    let app = router(state_for(dir.path(), 8), &HttpOptions::default());

    let first = call_2026(&app, "").await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    let answer = r#","inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}}"#;
    let second = call_2026(&app, &format!(r#"{answer},"requestState":"{state}""#)).await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    // The second request of the call gets a key by call order.
    assert_eq!(
        result["inputRequests"]["elicit-1"]["params"]["message"],
        "Color?"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    let answer = r#","inputResponses":{"elicit-1":{"action":"accept","content":{"color":"teal"}}}"#;
    let third = call_2026(&app, &format!(r#"{answer},"requestState":"{state}""#)).await;
    assert_eq!(
        third["result"]["content"][0]["text"], "Ada likes teal",
        "{third}"
    );

    let tampered = call_2026(&app, &format!(r#"{answer},"requestState":"{state}x""#)).await;
    assert_eq!(tampered["error"]["code"], -32602, "{tampered}");
}

#[tokio::test]
async fn subscriptions_listen_acknowledges_then_reports_reloads() {
    use http_body_util::BodyExt;
    let dir = crate::folder(&[("ask.star", ASKS)]);
    let state = state_for(dir.path(), 8);
    let app = router(state.clone(), &HttpOptions::default());
    let body = r#"{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let request = post()
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "subscriptions/listen")
        .body(Body::from(body))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    let mut body = response.into_body();
    let mut seen = String::new();
    let mut next_frame = async || {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame())
            .await
            .expect("a frame in time")
            .expect("the stream is open")
            .unwrap();
        String::from_utf8_lossy(&frame.into_data().unwrap_or_default()).into_owned()
    };
    while !seen.contains("notifications/subscriptions/acknowledged") {
        seen.push_str(&next_frame().await);
    }
    // A reload that changes the tools (one with the same tools announces nothing).
    let catalog = std::sync::Arc::clone(
        toolsmith_folder::ToolFolder::load(&crate::examples())
            .unwrap()
            .catalog(),
    );
    state.replace_catalog(catalog).await;
    while !seen.contains("notifications/tools/list_changed") {
        seen.push_str(&next_frame().await);
    }
    assert!(
        seen.contains("io.modelcontextprotocol/subscriptionId"),
        "{seen}"
    );
}

const BOTH: &str = "application/json, text/event-stream";

/// A POST in `session`, from a client that accepts both media types.
fn in_session(session: &str) -> axum::http::request::Builder {
    post()
        .header(header::ACCEPT, BOTH)
        .header("mcp-session-id", session)
}

/// The whole body of a response, which must end within a bound.
async fn body_of(response: axum::response::Response) -> String {
    let bytes = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        axum::body::to_bytes(response.into_body(), usize::MAX),
    )
    .await
    .expect("the body ends in time")
    .unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// An `initialize` for a client with `capabilities`, as a request.
fn initialize(capabilities: &str) -> Request<Body> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    );
    post()
        .header(header::ACCEPT, BOTH)
        .body(Body::from(body))
        .unwrap()
}

/// Opens a session (`initialize`, then `notifications/initialized`); returns its id.
async fn open_session(app: &axum::Router, capabilities: &str) -> String {
    let response = app.clone().oneshot(initialize(capabilities)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    body_of(response).await;
    let initialized = in_session(&session)
        .body(Body::from(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ))
        .unwrap();
    let response = app.clone().oneshot(initialized).await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    session
}

/// The status of a `tools/list` in `session`.
async fn list_in(app: &axum::Router, session: &str) -> StatusCode {
    let request = in_session(session).body(Body::from(LIST)).unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    body_of(response).await;
    status
}

// Regression test: every `initialize` kept a session for 5 minutes, so
// a flood of them grew the server until it aborted.
#[tokio::test]
async fn at_the_session_cap_the_session_idle_longest_goes_and_busy_ones_stay() {
    let options = HttpOptions {
        max_sessions: 2,
        ..HttpOptions::default()
    };
    let app = router(state_for(&examples(), 8), &options);
    let first = open_session(&app, "{}").await;
    let second = open_session(&app, "{}").await;
    assert_eq!(list_in(&app, &second).await, StatusCode::OK);
    let third = open_session(&app, "{}").await;
    assert_eq!(list_in(&app, &first).await, StatusCode::NOT_FOUND);
    assert_eq!(list_in(&app, &second).await, StatusCode::OK);

    // With both sessions listening on their GET streams, none can go.
    let mut streams = Vec::new();
    for session in [&second, &third] {
        let request = Request::get("/mcp")
            .header(header::HOST, "localhost")
            .header(header::ACCEPT, "text/event-stream")
            .header("mcp-session-id", session.as_str())
            .body(Body::empty())
            .unwrap();
        let stream = app.clone().oneshot(request).await.unwrap();
        assert_eq!(stream.status(), StatusCode::OK);
        streams.push(stream);
    }
    let refused = app.clone().oneshot(initialize("{}")).await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(list_in(&app, &second).await, StatusCode::OK);
    drop(streams);
    open_session(&app, "{}").await;
}

// Regression test: idle sessions waited out rmcp's five minutes however
// full the server was. With more than half the cap open, a session idle for a fifth of the
// session timeout is closed when the next one opens; below half, it stays.
#[tokio::test]
async fn under_pressure_sessions_idle_a_fifth_of_the_timeout_are_closed() {
    let options = HttpOptions {
        max_sessions: 4,
        session_timeout: std::time::Duration::from_secs(5),
        ..HttpOptions::default()
    };
    let app = router(state_for(&examples(), 8), &options);
    let first = open_session(&app, "{}").await;
    let second = open_session(&app, "{}").await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    // Two of four is not more than half: both idle sessions are still there.
    let third = open_session(&app, "{}").await;
    assert_eq!(list_in(&app, &first).await, StatusCode::OK);
    assert_eq!(list_in(&app, &second).await, StatusCode::OK);

    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(list_in(&app, &third).await, StatusCode::OK);
    // Three of four open: the two idle for 1.5 s (more than 5 s / 5) go, the one just used stays.
    let fourth = open_session(&app, "{}").await;
    assert_eq!(list_in(&app, &first).await, StatusCode::NOT_FOUND);
    assert_eq!(list_in(&app, &second).await, StatusCode::NOT_FOUND);
    assert_eq!(list_in(&app, &third).await, StatusCode::OK);
    assert_eq!(list_in(&app, &fourth).await, StatusCode::OK);
}

// Regression test (HTTP): a request reusing the id of one still
// running in its session took the first one's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_reusing_a_running_id_is_refused_and_the_first_is_answered() {
    let dir = crate::folder(&[("behaviour.star", crate::BEHAVIOUR)]);
    let state = state_for(dir.path(), 8);
    let app = router(state.clone(), &HttpOptions::default());
    // A client that can be asked for sampling: its calls take rmcp's path.
    let session = open_session(&app, r#"{"sampling":{}}"#).await;
    let first = {
        let app = app.clone();
        let request = in_session(&session)
            .body(Body::from(
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"spin_briefly","arguments":{}}}"#,
            ))
            .unwrap();
        tokio::spawn(async move { body_of(app.oneshot(request).await.unwrap()).await })
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while state.calls_in_flight() == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the first call starts");

    let again = in_session(&session)
        .body(Body::from(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}"#,
        ))
        .unwrap();
    let response = app.clone().oneshot(again).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let refusal: Value = serde_json::from_str(&body_of(response).await).unwrap();
    assert_eq!(refusal["error"]["code"], -32600, "{refusal}");

    let answer = first.await.unwrap();
    let message = answer
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == 5)
        .unwrap_or_else(|| panic!("no answer to the first call in `{answer}`"));
    assert_eq!(message["result"]["isError"], true, "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_read_before_its_413() {
    // A 5 MB `Content-Length` POST got its 413 before its body was read, and the
    // connection was closed with the body unread: the client saw a reset, not the 413.
    let url = serve(HttpOptions::default()).await;
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let answer = tokio::task::spawn_blocking(move || {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let body = vec![b' '; 5 * 1024 * 1024];
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        stream.write_all(&body).expect("the server reads the whole body");
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .expect("the answer is read to its end, not reset");
        answer
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(
        answer.contains("the request body limit is 4194304 bytes"),
        "{answer}"
    );
}
