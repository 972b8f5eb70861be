//! The endpoint's own answers: a JSON-RPC message as a JSON body, and the refusals of what
//! MCP never sees (a body that is not one message, a reused request id, the session cap, a
//! body over the limit, a missing bearer token).

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, RequestId, ServerJsonRpcMessage};

/// A JSON-RPC message as a JSON body; an error without an id carries `"id": null`, as
/// JSON-RPC 2.0 §5 requires.
pub(super) fn json_response(message: &ServerJsonRpcMessage) -> Response {
    let mut bytes = crate::jsonrpc::encode(message);
    if bytes.pop().is_none() {
        // `encode` logged why it could not serialize the message.
        return Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .body(Body::empty())
            .expect("a status and no headers make a valid response");
    }
    let mut response = Response::new(Body::from(bytes));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An event stream with no event: a call cancelled by the client, as rmcp ends it.
pub(super) fn empty_event_stream() -> Response {
    let mut response = Response::new(Body::empty());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// 400 with the JSON-RPC error for a body that is not one JSON-RPC message (the transport
/// lets the body of a refusal be a JSON-RPC error, 2025-11-25 basic/transports §2.1):
/// `-32700` when it is not JSON, `-32600` when it is JSON but not a message (a batch, which
/// MCP no longer has, a `jsonrpc` other than `"2.0"`, an id that is neither a string nor an
/// integer). The id is echoed when it is one.
pub(super) fn not_a_message(body: &[u8]) -> Response {
    let (code, message, id) = match serde_json::from_slice::<serde_json::Value>(body) {
        Err(error) => (
            ErrorCode::PARSE_ERROR,
            format!("Parse error: {error}"),
            None,
        ),
        Ok(serde_json::Value::Array(_)) => (
            ErrorCode::INVALID_REQUEST,
            "Invalid request: batches are not supported; send one message per request".to_owned(),
            None,
        ),
        Ok(value) => {
            let reason = serde_json::from_value::<ClientJsonRpcMessage>(value.clone())
                .err()
                .map_or_else(
                    || "not a JSON-RPC 2.0 message".to_owned(),
                    |error| error.to_string(),
                );
            let id = value
                .get("id")
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
            (
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: {reason}"),
                id,
            )
        }
    };
    refusal(code, message, id)
}

/// 415 with a JSON-RPC error (`"id": null`) for a body sent without `Content-Type:
/// application/json`, saying which header to send instead of rmcp's plain text.
pub(super) fn not_json(content_type: Option<&HeaderValue>) -> Response {
    let sent = content_type.map_or_else(
        || "none".to_owned(),
        |value| format!("`{}`", String::from_utf8_lossy(value.as_bytes())),
    );
    let mut response = refusal(
        ErrorCode::INVALID_REQUEST,
        format!(
            "Unsupported Media Type: send the JSON-RPC message with the header \
             `Content-Type: application/json` (this request's `Content-Type` was {sent})"
        ),
        None,
    );
    *response.status_mut() = StatusCode::UNSUPPORTED_MEDIA_TYPE;
    response
}

/// 400 for a request reusing the id of one still running in its session: answering it
/// would take the first one's answer. The error has no id, as the
/// transport specifies for a refused message, so a client does not take it for the first
/// one's answer.
pub(super) fn id_in_use(id: &RequestId) -> Response {
    tracing::warn!(%id, "refused a request reusing the id of a running one");
    refusal(
        ErrorCode::INVALID_REQUEST,
        format!(
            "Invalid request: the id `{id}` is in use by a request of this session that is still running; give each request its own id"
        ),
        None,
    )
}

/// 400 with a JSON-RPC error as the body.
fn refusal(code: ErrorCode, message: String, id: Option<RequestId>) -> Response {
    let error = ServerJsonRpcMessage::error(ErrorData::new(code, message, None), id);
    let mut response = json_response(&error);
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

/// 503 for an `initialize` at the session cap when no session is idle.
pub(super) fn sessions_busy() -> Response {
    tracing::warn!("refused a session: at the session cap and every session is busy");
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        "Service Unavailable: the server is at its session limit and every session is busy; try again soon",
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// 503 for a new session while the shared state (Redis) is unreachable: a session it does
/// not hold would be unknown to every other replica.
pub(super) fn state_unreachable(error: &crate::replicas::StateError) -> Response {
    tracing::warn!(%error, "refused a session: the shared state is unreachable");
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        format!("Service Unavailable: cannot open a session: {error}; try again soon"),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
    response
}

pub(super) fn too_large(limit: usize) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload Too Large: the request body limit is {limit} bytes"),
    )
        .into_response()
}

pub(super) fn unauthorized(challenge: &'static str) -> Response {
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "Unauthorized: a valid bearer token is required",
    )
        .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}
