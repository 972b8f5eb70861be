//! JSON-RPC batches over Streamable HTTP, in sessions of protocol revision 2025-03-26: the
//! only revision that has them (its transport lets one POST carry a batch of requests,
//! notifications and responses; later revisions removed batches). Each message of a batch
//! is posted to its session as if it came alone, all at once; the answers to its requests
//! come back together as one JSON array (JSON-RPC 2.0 §6), and a batch of notifications
//! and responses only gets 202 Accepted.
//!
//! What a request's event stream carries besides its answer (progress, a server request)
//! is not relayed: the answer to a batch is one JSON body.

use std::future::Future;
use std::pin::Pin;

use axum::body::{Body, Bytes};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{ErrorCode, ServerJsonRpcMessage};
use serde_json::Value;

use super::Endpoint;
use super::replies::json_response;

/// The revision whose sessions take batches.
const REVISION: &str = "2025-03-26";

/// The most an answer of one message may take up; more is not collected.
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// Whether an `initialize` body asks for the revision that has batches.
pub(super) fn asks_for_batches(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Initialize {
        params: Params,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        protocol_version: String,
    }
    serde_json::from_slice::<Initialize>(body)
        .is_ok_and(|initialize| initialize.params.protocol_version == REVISION)
}

/// The messages of a body that is a batch (a JSON array), each as a body of its own;
/// `None` when the body is not one.
pub(super) fn messages(body: &[u8]) -> Option<Vec<Value>> {
    if body.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'[') {
        return None;
    }
    match serde_json::from_slice(body) {
        Ok(Value::Array(messages)) => Some(messages),
        _ => None,
    }
}

impl Endpoint {
    /// Answers a batch of `messages` sent to a session that takes batches. (A boxed future:
    /// it posts each message through [`Endpoint::post_in_session`], which may call it.)
    pub(super) fn post_batch(
        &self,
        parts: Parts,
        messages: Vec<Value>,
    ) -> Pin<Box<dyn Future<Output = Response> + Send + '_>> {
        Box::pin(async move {
            if messages.is_empty() {
                return refused("Invalid request: an empty batch; send at least one message");
            }
            let answering = messages.into_iter().map(|message| {
                let mut parts = parts.clone();
                async move {
                    if message.is_array() {
                        return vec![error_value(
                            "Invalid request: a batch inside a batch; send its messages in \
                             the outer batch",
                        )];
                    }
                    let body = Bytes::from(message.to_string());
                    parts
                        .headers
                        .insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
                    answers(self.post_in_session(parts, body).await).await
                }
            });
            let answers: Vec<Value> = futures_util::future::join_all(answering)
                .await
                .into_iter()
                .flatten()
                .collect();
            if answers.is_empty() {
                return StatusCode::ACCEPTED.into_response();
            }
            let mut response = Response::new(Body::from(Value::Array(answers).to_string()));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        })
    }
}

/// The answers to requests in one message's response: its JSON body, or the events of its
/// stream that answer a request.
async fn answers(response: Response) -> Vec<Value> {
    let stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    let Ok(body) = axum::body::to_bytes(response.into_body(), MAX_ANSWER_BYTES).await else {
        return Vec::new();
    };
    let values: Vec<Value> = if stream {
        events(&body)
    } else {
        serde_json::from_slice(&body).into_iter().collect()
    };
    values.into_iter().filter(is_answer).collect()
}

/// The JSON data of each event of an event stream.
fn events(stream: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(stream);
    let mut values = Vec::new();
    let mut data = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        } else if line.is_empty() && !data.is_empty() {
            values.extend(serde_json::from_str::<Value>(&data).ok());
            data.clear();
        }
    }
    values
}

/// Whether `message` answers a request: a response or an error, not a notification or a
/// server request.
fn is_answer(message: &Value) -> bool {
    message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// A `-32600` error with `"id": null`, as a value.
fn error_value(message: &str) -> Value {
    let error = ServerJsonRpcMessage::error(
        rmcp::ErrorData::new(ErrorCode::INVALID_REQUEST, message.to_owned(), None),
        None,
    );
    let mut bytes = crate::jsonrpc::encode(&error);
    bytes.pop();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// 400 with a `-32600` error.
fn refused(message: &str) -> Response {
    let mut response = json_response(&ServerJsonRpcMessage::error(
        rmcp::ErrorData::new(ErrorCode::INVALID_REQUEST, message.to_owned(), None),
        None,
    ));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_events_are_read_and_only_answers_kept() {
        let stream = b"data: \nid: 0\nretry: 3000\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 1/0\n\n";
        let found: Vec<Value> = events(stream).into_iter().filter(is_answer).collect();
        assert_eq!(
            found,
            [serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})]
        );
    }
}
