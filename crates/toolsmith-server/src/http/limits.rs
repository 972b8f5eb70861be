//! The HTTP side of `[limits]` (docs/limits.md): a `tools/call` POST is admitted against its
//! caller's limits before it reaches MCP, and refused with 429, `Retry-After` and a JSON-RPC
//! error body naming the limit. The caller is the OAuth token's subject, else the client's
//! address as the connection gives it (behind a load balancer, the balancer's: see
//! docs/limits.md). The admission is held until the response body has been sent, so a call
//! answered on an event stream keeps its `concurrent_calls` slot while it runs.

use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use hyper::body::{Frame, SizeHint};
use rmcp::model::ServerJsonRpcMessage;
use toolsmith_model::Caller;

use super::peek::{has_method, request_id};
use super::replies::json_response;
use crate::limits::{Admission, Limits, Refusal};
use crate::metrics::Metrics;

/// The peer address of the connection a request came on (set by `connections.rs`).
#[derive(Debug, Clone, Copy)]
pub(super) struct ClientAddress(pub(super) IpAddr);

/// Admits a POST of `bytes` against the caller's limits: `Ok(None)` for anything but a
/// `tools/call` (or with no limit per caller), the 429 for a call over a limit.
pub(super) async fn admit(
    limits: &Limits,
    metrics: &Metrics,
    parts: &Parts,
    bytes: &[u8],
) -> Result<Option<Admission>, Response> {
    if !limits.per_caller() || !has_method(bytes, "tools/call") {
        return Ok(None);
    }
    let subject = parts
        .extensions
        .get::<Arc<Caller>>()
        .and_then(|caller| caller.subject.as_deref());
    let caller = match (subject, parts.extensions.get::<ClientAddress>()) {
        (Some(subject), _) => format!("sub:{subject}"),
        (None, Some(ClientAddress(address))) => format!("addr:{}", address.to_canonical()),
        (None, None) => "addr:unknown".to_owned(),
    };
    match limits.admit(&caller).await {
        Ok(admission) => Ok(Some(admission)),
        Err(refusal) => {
            metrics.limited(refusal.kind);
            Err(too_many_requests(&refusal, bytes))
        }
    }
}

/// 429 with `Retry-After` and the JSON-RPC error (`-32029`, data naming the limit) for the
/// request in `bytes`.
fn too_many_requests(refusal: &Refusal, bytes: &[u8]) -> Response {
    tracing::info!(%refusal, "refused a call");
    let error = ServerJsonRpcMessage::error(refusal.error_data(), request_id(bytes));
    let mut response = json_response(&error);
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from(refusal.retry_after.as_secs()),
    );
    response
}

/// `response`, holding `admission` until its body has been sent (or dropped).
pub(super) fn hold(response: Response, admission: Option<Admission>) -> Response {
    match admission {
        Some(admission) => response.map(|body| {
            Body::new(Held {
                body,
                _admission: admission,
            })
        }),
        None => response,
    }
}

struct Held {
    body: Body,
    _admission: Admission,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
