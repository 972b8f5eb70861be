//! `tools/call` in a Streamable HTTP session, answered by us instead of rmcp's session worker.
//!
//! rmcp's `LocalSessionManager` routes every POST through the session's worker task: a
//! round trip to open a per-request channel (with a fresh UUID and an event cache), another
//! to push the message, a hop into rmcp's service loop and a task per request there, the
//! response back through the worker into the channel, and an SSE stream with a keep-alive
//! timer to carry one event. For the hot path — a plain `tools/call` in a live session —
//! that machinery costs more than the call. Here such a POST is dispatched directly to the
//! session's own handler through rmcp's `Service::handle_request` (as `stdio.rs` does), and
//! answered with a JSON body, which the spec allows whenever the client accepts both
//! `application/json` and `text/event-stream` (2025-11-25, basic/transports §2.1).
//!
//! Only calls that need nothing from the request's SSE stream take this path; everything
//! else goes to rmcp unchanged:
//! - a progress token (progress rides the POST's stream), or a client that can be asked for
//!   sampling or elicitation (those requests ride it too, SEP-2260), or whose roots are not
//!   known yet (asking for them is a request);
//! - a request naming its own protocol version (2026-07-28), an `Mcp-Method` header, an
//!   `Origin` header, a `Host` we do not plainly allow, or anything else rmcp would check
//!   and might refuse.
//!
//! What stays the same: the tool talks to the client through the session's `Peer`, so log
//! messages reach the session's GET stream as they do through rmcp (which routes every
//! `notifications/message` there); the session's log level and root apply; the call holds a
//! slot of the concurrency limit and counts for the shutdown drain; and
//! `notifications/cancelled` for it stops it and drops its response (the POST then ends
//! with an empty event stream, as rmcp ends it); and rmcp's idle timeout still closes a
//! session nobody uses, since one busy with calls here tells rmcp's worker it is alive.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::uri::Authority;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetExtensions, GetMeta,
    JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, ProtocolVersion, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{NotificationContext, RequestContext, Service};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::handler::McpHandler;

/// The header carrying the session id.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// How often a session busy only with calls on this path tells rmcp's session worker it is
/// alive: well within the worker's idle timeout (5 minutes), which only sees rmcp's traffic.
const TOUCH_EVERY: Duration = Duration::from_mins(1);

/// The live sessions whose calls we answer. Cheap to clone.
#[derive(Clone)]
pub(crate) struct SessionCalls(Arc<Registry>);

struct Registry {
    sessions: Mutex<HashMap<Box<str>, Arc<Session>>>,
    /// rmcp's sessions, the same ones the session service serves.
    rmcp: Arc<LocalSessionManager>,
}

/// What a handler holds to join the registry once its session is initialized; weak, since
/// the registry holds the handler.
#[derive(Clone)]
pub(crate) struct Joiner(Weak<Registry>);

struct Session {
    handler: McpHandler,
    peer: Peer<RoleServer>,
    /// The calls running on this path, by request id: cancelling one removes it, so its
    /// response is dropped.
    running: Mutex<HashMap<RequestId, CancellationToken>>,
    /// When rmcp's session worker last heard of this session from us.
    touched: Mutex<Instant>,
    /// What a tool may have to ask the client, by its capabilities (fixed at `initialize`).
    client: ClientAsks,
}

/// What a call may have to ask the client over the request's stream.
#[derive(Debug, Clone, Copy)]
enum ClientAsks {
    /// Nothing: the client declared neither sampling, elicitation nor roots.
    Nothing,
    /// Its roots, until the session knows them.
    Roots,
    /// Its model or its user (sampling, elicitation): any call might.
    Model,
}

impl ClientAsks {
    fn of(peer: &Peer<RoleServer>) -> Self {
        let Some(info) = peer.peer_info() else {
            return Self::Model;
        };
        let capabilities = &info.capabilities;
        if capabilities.sampling.is_some() || capabilities.elicitation.is_some() {
            Self::Model
        } else if capabilities.roots.is_some() {
            Self::Roots
        } else {
            Self::Nothing
        }
    }
}

impl Session {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a call in this session can run without the request's SSE stream: the
    /// client cannot be asked for sampling or elicitation, and its root is known (or it
    /// has none to give).
    fn needs_no_stream(&self) -> bool {
        match self.client {
            ClientAsks::Nothing => true,
            ClientAsks::Roots => self.handler.knows_client_root(),
            ClientAsks::Model => false,
        }
    }
}

impl Joiner {
    /// Registers the session whose `notifications/initialized` this is (the POST carried the
    /// session id), with its handler and peer.
    pub(crate) fn join(&self, handler: &McpHandler, context: &NotificationContext<RoleServer>) {
        let Some(registry) = self.0.upgrade() else {
            return;
        };
        let Some(id) = context
            .extensions
            .get::<Parts>()
            .and_then(|parts| parts.headers.get(SESSION_HEADER))
            .and_then(|value| value.to_str().ok())
        else {
            return;
        };
        let session = Arc::new(Session {
            handler: handler.clone(),
            peer: context.peer.clone(),
            running: Mutex::default(),
            touched: Mutex::new(Instant::now()),
            client: ClientAsks::of(&context.peer),
        });
        let mut sessions = registry.lock();
        sessions.retain(|_, session| !session.peer.is_transport_closed());
        sessions.insert(id.into(), session);
    }
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The `Host` and `Origin` rules of the endpoint, as far as this path applies them: a
/// request it does not plainly accept goes to rmcp, which decides.
#[derive(Debug, Clone)]
pub(crate) struct HostRule {
    /// `None`: any host.
    allowed: Option<Vec<(String, Option<u16>)>>,
}

impl HostRule {
    /// Accepts the hosts in `allowed` (`name` or `name:port`); `*` accepts any.
    pub(crate) fn new<'a>(allowed: impl IntoIterator<Item = &'a str>) -> Self {
        let mut hosts = Vec::new();
        for host in allowed {
            if host == "*" {
                return Self { allowed: None };
            }
            let parsed = match Authority::try_from(host.trim()) {
                Ok(authority) => (normalize_host(authority.host()), authority.port_u16()),
                Err(_) => (normalize_host(host.trim()), None),
            };
            hosts.push(parsed);
        }
        Self {
            allowed: Some(hosts),
        }
    }

    fn accepts(&self, headers: &HeaderMap) -> bool {
        if self.allowed.is_none() {
            return true;
        }
        headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .and_then(|host| Authority::try_from(host).ok())
            .is_some_and(|authority| self.accepts_authority(&authority))
    }

    fn accepts_authority(&self, authority: &Authority) -> bool {
        let Some(allowed) = &self.allowed else {
            return true;
        };
        let host = normalize_host(authority.host());
        let port = authority.port_u16();
        allowed.iter().any(|(name, allowed_port)| {
            *name == host && allowed_port.is_none_or(|p| port == Some(p))
        })
    }

    /// The refusal of a request whose target the `Host` check alone would let through:
    /// more than one `Host` header (rmcp reads only the first; RFC 9112 §3.2 says 400), or
    /// an absolute-form request line such as `POST http://evil.example/mcp` naming a host
    /// that is not allowed (its host, not `Host`, is the target: RFC 9112 §3.2.2).
    pub(crate) fn refuse_target(&self, uri: &Uri, headers: &HeaderMap) -> Option<Response> {
        if headers.get_all(header::HOST).iter().nth(1).is_some() {
            tracing::warn!("refused a request with more than one `Host` header");
            return Some(
                (
                    StatusCode::BAD_REQUEST,
                    "Bad Request: more than one Host header",
                )
                    .into_response(),
            );
        }
        let authority = uri.authority()?;
        if self.accepts_authority(authority) {
            return None;
        }
        tracing::warn!(%authority, "refused an absolute-form request for a host that is not allowed");
        Some(
            (
                StatusCode::FORBIDDEN,
                "Forbidden: the host in the request line is not allowed",
            )
                .into_response(),
        )
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

impl SessionCalls {
    /// Answers calls in the sessions of `rmcp`, the session service's manager.
    pub(crate) fn new(rmcp: Arc<LocalSessionManager>) -> Self {
        Self(Arc::new(Registry {
            sessions: Mutex::default(),
            rmcp,
        }))
    }

    /// Keeps rmcp's session worker from closing `session` as idle while its calls take this
    /// path: an event that resets the worker's idle timer and does nothing else (closing a
    /// request stream that does not exist; stream ids count up from 0).
    async fn touch(&self, id: &str, session: &Session) {
        {
            let mut touched = session
                .touched
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if touched.elapsed() < TOUCH_EVERY {
                return;
            }
            *touched = Instant::now();
        }
        let handle = self.0.rmcp.sessions.read().await.get(id).cloned();
        if let Some(handle) = handle {
            let _ = handle.close_request_wise_channel(u64::MAX).await;
        }
    }

    /// The handle a session's handler joins with.
    pub(crate) fn joiner(&self) -> Joiner {
        Joiner(Arc::downgrade(&self.0))
    }

    /// Forgets `id` (the client deleted the session).
    pub(crate) fn forget(&self, id: &str) {
        self.0.lock().remove(id);
    }

    fn session(&self, id: &str) -> Option<Arc<Session>> {
        let mut sessions = self.0.lock();
        let session = sessions.get(id)?;
        if session.peer.is_transport_closed() {
            sessions.remove(id);
            return None;
        }
        Some(session.clone())
    }

    /// Answers the session POST (`parts`, `body`) when it is a call this path serves
    /// (see the module documentation); otherwise hands it back for rmcp. A
    /// `notifications/cancelled` for one of our calls cancels it and is handed back too
    /// (rmcp ignores an id it does not know).
    pub(crate) async fn serve(
        &self,
        hosts: &HostRule,
        parts: Parts,
        body: &[u8],
    ) -> Result<Response, Parts> {
        let Some(id) = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
        else {
            return Err(parts);
        };
        let Some(session) = self.session(id) else {
            return Err(parts);
        };
        self.touch(id, &session).await;
        if !plain_request(&parts.headers, hosts) {
            return Err(parts);
        }
        // The hot path's parse: one pass straight into rmcp's types; `None` for anything
        // but a plain call (`_meta`, so a progress token, included).
        let Some(JsonRpcMessage::Request(JsonRpcRequest {
            id,
            request: mut request @ ClientRequest::CallToolRequest(_),
            ..
        })) = crate::jsonrpc::parse_call(body)
        else {
            if crate::http::has_method(body, "notifications/cancelled") {
                cancel(&session, body);
            }
            return Err(parts);
        };
        let meta = request.get_meta();
        if meta.protocol_version().is_some()
            || meta.get_progress_token().is_some()
            || !session.needs_no_stream()
        {
            return Err(parts);
        }
        let ct = session.handler.shutdown_token().child_token();
        {
            let mut running = session.running();
            if running.contains_key(&id) {
                // An id still in use (a client bug): rmcp's path sorts that out.
                return Err(parts);
            }
            running.insert(id.clone(), ct.clone());
        }
        // As rmcp's service loop and HTTP service build the context: `_meta` and the
        // extensions move into it, with the HTTP request's parts.
        let meta = std::mem::take(request.get_meta_mut());
        let mut extensions = std::mem::take(request.extensions_mut());
        extensions.insert(parts);
        let mut context = RequestContext::new(id.clone(), session.peer.clone());
        context.ct = ct;
        context.meta = meta;
        context.extensions = extensions;
        // The entry must go even if the client hangs up and this future is dropped.
        let running = Running {
            session: &session,
            id: &id,
        };
        let result = Box::pin(session.handler.handle_request(request, context)).await;
        if !running.finish() {
            // Cancelled by the client: rmcp ends the stream without a response too.
            return Ok(empty_event_stream());
        }
        let message = match result {
            Ok(result) => ServerJsonRpcMessage::response(result, id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        Ok(json_response(&message))
    }
}

/// Removes a call from its session's running calls when done (or dropped).
struct Running<'a> {
    session: &'a Session,
    id: &'a RequestId,
}

impl Running<'_> {
    /// Whether the call was still running (not cancelled by the client).
    fn finish(self) -> bool {
        let found = self.session.running().remove(self.id).is_some();
        std::mem::forget(self);
        found
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.session.running().remove(self.id);
    }
}

fn cancel(session: &Session, body: &[u8]) {
    if let Ok(JsonRpcMessage::Notification(JsonRpcNotification {
        notification: ClientNotification::CancelledNotification(cancelled),
        ..
    })) = serde_json::from_slice::<ClientJsonRpcMessage>(body)
        && let Some(id) = &cancelled.params.request_id
        && let Some(ct) = session.running().remove(id)
    {
        tracing::info!(%id, reason = cancelled.params.reason, "cancelled");
        ct.cancel();
    }
}

/// Whether rmcp would take this POST as it is, with nothing to refuse or negotiate: an
/// allowed `Host`, no `Origin`, both media types accepted, a JSON body, a session-era
/// protocol version and no SEP-2243 headers.
fn plain_request(headers: &HeaderMap, hosts: &HostRule) -> bool {
    let legacy_version = headers.get("mcp-protocol-version").is_none_or(|value| {
        value.to_str().is_ok_and(|version| {
            version < ProtocolVersion::STANDARD_HEADERS.as_str()
                && ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|known| known.as_str() == version)
        })
    });
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or_default();
            essence.trim().eq_ignore_ascii_case("application/json")
        });
    legacy_version
        && json_body
        && !headers.contains_key(header::ORIGIN)
        && !headers.contains_key("mcp-method")
        && crate::http::accepts(headers, "application/json")
        && crate::http::accepts(headers, "text/event-stream")
        && hosts.accepts(headers)
}

pub(crate) fn json_response(message: &ServerJsonRpcMessage) -> Response {
    let mut bytes = Vec::with_capacity(256);
    if let Err(error) = serde_json::to_writer(&mut bytes, message) {
        // rmcp's message types only hold JSON values and strings.
        tracing::error!(%error, "cannot serialize a response");
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

fn empty_event_stream() -> Response {
    let mut response = Response::new(Body::empty());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn host_rule_matches_names_and_ports() {
        let rule = HostRule::new(["localhost", "127.0.0.1", "::1", "example.com:8080"]);
        assert!(rule.accepts(&host("localhost:3000")));
        assert!(rule.accepts(&host("LOCALHOST")));
        assert!(rule.accepts(&host("[::1]:80")));
        assert!(rule.accepts(&host("example.com:8080")));
        assert!(!rule.accepts(&host("example.com:8081")));
        assert!(!rule.accepts(&host("evil.example")));
        assert!(!rule.accepts(&HeaderMap::new()));
        assert!(HostRule::new(["*"]).accepts(&HeaderMap::new()));
    }

    #[test]
    fn cancellations_are_recognised() {
        assert!(crate::http::has_method(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#,
            "notifications/cancelled"
        ));
        assert!(!crate::http::has_method(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            "notifications/cancelled"
        ));
        assert!(!crate::http::has_method(b"[]", "notifications/cancelled"));
    }
}
