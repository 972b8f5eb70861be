//! HTTP request handling in-process: the router `serve --http` runs, driven with
//! `tower::ServiceExt::oneshot` (no sockets, so no hyper parsing: that is hyper's to fuzz).
//!
//! The input is a readable exchange of up to eight requests separated by `%%` lines, each
//!
//! ```text
//! POST /mcp
//! host: localhost
//! mcp-session-id: $SESSION
//!
//! {"jsonrpc":"2.0","id":1,"method":"tools/list"}
//! ```
//!
//! where `$SESSION` stands for the last `mcp-session-id` the server handed out, so that
//! session requests reach the session they name. A first line `@auth` serves with a bearer
//! token (`fuzz`). Checks that every request is answered and that JSON bodies are JSON.

#![no_main]

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, header};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use toolsmith_server::{HttpOptions, router};
use tower::ServiceExt;

/// Requests per input; more only makes an input slower, not more interesting.
const MAX_REQUESTS: usize = 8;

/// How long a response body may pause before we stop reading it: a `GET` stream stays
/// open for server-sent events that may never come.
const BODY_PAUSE: Duration = Duration::from_millis(20);

/// Stop reading a body after this much (a stream can go on forever).
const MAX_BODY: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (auth, text) = match text.strip_prefix("@auth\n") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let options = HttpOptions {
        auth_token: auth.then(|| "fuzz".to_owned()),
        max_body_bytes: 64 * 1024,
        ..HttpOptions::default()
    };
    let runtime = toolsmith_fuzz::runtime();
    runtime.block_on(async {
        let app = router(toolsmith_fuzz::server_state(), &options);
        let mut session = String::new();
        for exchange in text.split("\n%%\n").take(MAX_REQUESTS) {
            let Some(request) = request(exchange, &session) else {
                continue;
            };
            let response = app
                .clone()
                .oneshot(request)
                .await
                .expect("the router's error type is Infallible");
            if let Some(id) = response
                .headers()
                .get("mcp-session-id")
                .and_then(|id| id.to_str().ok())
            {
                id.clone_into(&mut session);
            }
            let json = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .is_some_and(|value| value.starts_with("application/json"));
            let (body, complete) = read_body(response.into_body()).await;
            if json && complete && !body.is_empty() {
                if let Err(error) = serde_json::from_slice::<serde_json::Value>(&body) {
                    panic!(
                        "an application/json body is not JSON ({error}): {}",
                        String::from_utf8_lossy(&body)
                    );
                }
            }
        }
    });
});

/// Builds one request from its text; `None` when the text is not a valid HTTP request
/// (a method, URI or header `http` refuses to build).
fn request(text: &str, session: &str) -> Option<Request<Body>> {
    let (head, body) = text.split_once("\n\n").unwrap_or((text, ""));
    let mut lines = head.lines();
    let (method, target) = lines.next()?.split_once(' ')?;
    let mut builder = Request::builder().method(method).uri(target.trim());
    for line in lines {
        let (name, value) = line.split_once(':')?;
        builder = builder.header(name.trim(), value.trim().replace("$SESSION", session));
    }
    builder.body(Body::from(body.to_owned())).ok()
}

/// Reads a body until it ends, pauses for [`BODY_PAUSE`] or passes [`MAX_BODY`]; `true`
/// when it ended.
async fn read_body(mut body: Body) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    while bytes.len() < MAX_BODY {
        match tokio::time::timeout(BODY_PAUSE, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    bytes.extend_from_slice(&data);
                }
            }
            Ok(Some(Err(_))) | Err(_) => return (bytes, false),
            Ok(None) => return (bytes, true),
        }
    }
    (bytes, false)
}
