//! The Streamable HTTP side of 2025-11-25's experimental tasks (`tasks/experimental.rs`):
//! a session's task messages are renamed before rmcp reads them, and the `initialize`
//! result that agreed on that revision declares `capabilities.tasks` on its way out.

use axum::body::{Body, Bytes};
use axum::http::request::Parts;
use axum::response::Response;
use http_body_util::BodyExt as _;

use crate::tasks::experimental::{REVISION, advertise, rename};

/// `bytes`, the body of a POST in a session, renamed when the session speaks 2025-11-25
/// (its `MCP-Protocol-Version` header) and the message is a task request.
pub(super) fn renamed(parts: &Parts, bytes: Bytes) -> Bytes {
    let revision = parts
        .headers
        .get("mcp-protocol-version")
        .and_then(|value| value.to_str().ok());
    if revision != Some(REVISION) {
        return bytes;
    }
    rename(&bytes).map_or(bytes, Bytes::from)
}

/// `response`, rmcp's answer to `initialize` (an event stream or a JSON body), with the
/// result declaring `capabilities.tasks` when it agreed on 2025-11-25.
pub(super) fn advertised(response: Response) -> Response {
    response.map(|body| Body::new(body.map_frame(|frame| frame.map_data(advertise_in))))
}

/// One chunk of the answer: a JSON-RPC message, or SSE lines whose `data:` carry one.
fn advertise_in(chunk: Bytes) -> Bytes {
    let Ok(text) = std::str::from_utf8(&chunk) else {
        return chunk;
    };
    // Only the one message that agreed on the revision is read.
    if !text.contains(&format!("\"protocolVersion\":\"{REVISION}\"")) {
        return chunk;
    }
    let rewrite = |data: &str| -> Option<String> {
        let mut message: serde_json::Value = serde_json::from_str(data).ok()?;
        advertise(message.get_mut("result")?);
        Some(message.to_string())
    };
    if let Some(message) = rewrite(text) {
        return Bytes::from(message);
    }
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            line.strip_prefix("data:")
                .and_then(|data| rewrite(data.trim_start()))
                .map_or_else(|| line.to_owned(), |data| format!("data: {data}"))
        })
        .collect();
    Bytes::from(lines.join("\n"))
}
