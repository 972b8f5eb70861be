//! `tools/call` in a Streamable HTTP session, answered by us instead of rmcp's session worker.
//!
//! rmcp's `LocalSessionManager` routes every POST through the session's worker task: a
//! round trip to open a per-request channel (with a fresh UUID and an event cache), another
//! to push the message, a hop into rmcp's service loop and a task per request there, the
//! response back through the worker into the channel, and an SSE stream with a keep-alive
//! timer to carry one event. For the hot path — a plain `tools/call` in a live session —
//! that machinery costs more than the call. Here such a POST is dispatched to the session's
//! own handler on the direct path (`direct.rs`, which stdio's fast path takes too), and
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

use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::Response;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta, JsonRpcMessage,
    JsonRpcNotification, JsonRpcRequest, ProtocolVersion, ServerNotification,
};
use rmcp::service::NotificationContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager as _};
use rmcp::{Peer, RoleServer};
use toolsmith_model::LogLevel;

use super::guard::HostRule;
use super::peek::{accepts, has_method, is_json};
use super::replies::{empty_event_stream, json_response};
use crate::bridge::StreamElsewhere;
use crate::direct::{self, Calls};
use crate::handler::{McpHandler, SessionJoin};
use crate::replicas::{Message, Relayed, SharedState};

/// The header carrying the session id.
pub(super) const SESSION_HEADER: &str = "mcp-session-id";

/// How often a session busy only with calls on this path tells rmcp's session worker it is
/// alive: well within the worker's idle timeout (`--session-timeout`, 5 minutes by default),
/// which only sees rmcp's traffic. A fifth of that timeout when it is shorter.
const TOUCH_EVERY: Duration = Duration::from_mins(1);

/// The live sessions whose calls we answer. Cheap to clone.
#[derive(Clone)]
pub(super) struct SessionCalls(Arc<Registry>);

struct Registry {
    sessions: Mutex<HashMap<Box<str>, Arc<Session>>>,
    /// rmcp's sessions, the same ones the session service serves.
    rmcp: Arc<LocalSessionManager>,
    /// The state shared with other replicas, and how long a session's records there
    /// outlive its last use.
    shared: Option<(SharedState, Duration)>,
    /// How many `GET` streams of each session are open here: notifications for a session's
    /// `GET` stream go to the replicas that hold one (docs/deploy.md).
    streams: Mutex<HashMap<Box<str>, usize>>,
}

/// A session's `GET` stream open here, until dropped.
pub(super) struct StreamHeld {
    registry: Arc<Registry>,
    session: Box<str>,
}

/// A session's notifications for its `GET` stream, on a replica that shares its state:
/// relayed to the replicas holding such a stream when this one holds none.
struct ToStreamHolders {
    registry: Weak<Registry>,
    session: Box<str>,
}

/// What a session's handler holds to join the registry once its session is initialized;
/// weak, since the registry holds the handler.
struct Joiner(Weak<Registry>);

struct Session {
    handler: McpHandler,
    peer: Peer<RoleServer>,
    /// The calls running on this path.
    calls: Calls,
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
    /// The state shared with other replicas, with the session timeout; `None` without one.
    fn shared(&self) -> Option<(SharedState, Duration)> {
        self.0.upgrade()?.shared.clone()
    }
}

#[async_trait::async_trait]
impl SessionJoin for Joiner {
    /// Registers the session whose `notifications/initialized` this is (the POST carried the
    /// session id), with its handler and peer.
    fn join(&self, handler: &McpHandler, context: &NotificationContext<RoleServer>) {
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
            calls: Calls::default(),
            touched: Mutex::new(Instant::now()),
            client: ClientAsks::of(&context.peer),
        });
        let mut sessions = registry.lock();
        sessions.retain(|_, session| !session.peer.is_transport_closed());
        sessions.insert(id.into(), session);
    }

    async fn share_log_level(&self, session: &str, level: LogLevel) {
        let Some((shared, ttl)) = self.shared() else {
            return;
        };
        if let Err(error) = shared.set_log_level(session, level, ttl).await {
            tracing::warn!(%error, session, "could not share a session's log level with the other replicas");
        }
    }

    async fn shared_log_level(&self, session: &str) -> Option<LogLevel> {
        let (shared, _) = self.shared()?;
        shared
            .log_level(session)
            .await
            .inspect_err(|error| {
                tracing::warn!(%error, session, "could not read a session's log level from the shared state");
            })
            .ok()
            .flatten()
    }

    async fn share_subscription(&self, session: &str, uri: &str, subscribed: bool) {
        let Some((shared, ttl)) = self.shared() else {
            return;
        };
        if let Err(error) = shared.set_subscription(session, uri, subscribed, ttl).await {
            tracing::warn!(%error, session, uri, "could not share a session's subscription with the other replicas");
        }
    }

    async fn shared_subscriptions(&self, session: &str) -> Vec<String> {
        let Some((shared, _)) = self.shared() else {
            return Vec::new();
        };
        shared
            .subscriptions(session)
            .await
            .inspect_err(|error| {
                tracing::warn!(%error, session, "could not read a session's subscriptions from the shared state");
            })
            .unwrap_or_default()
    }

    async fn share_roots(&self, session: &str, roots: Option<&[String]>) {
        let Some((shared, ttl)) = self.shared() else {
            return;
        };
        if let Err(error) = shared.set_roots(session, roots, ttl).await {
            tracing::warn!(%error, session, "could not share a session's roots with the other replicas");
        }
    }

    async fn shared_roots(&self, session: &str) -> Option<Vec<String>> {
        let (shared, _) = self.shared()?;
        shared
            .roots(session)
            .await
            .inspect_err(|error| {
                tracing::warn!(%error, session, "could not read a session's roots from the shared state");
            })
            .ok()
            .flatten()
    }
}

impl StreamElsewhere for ToStreamHolders {
    fn take(&self, notification: &ServerNotification) -> bool {
        let Some(registry) = self.registry.upgrade() else {
            return false;
        };
        let Some((shared, _)) = registry.shared.clone() else {
            return false;
        };
        if registry.holds_stream(&self.session) {
            return false;
        }
        let message = match serde_json::to_value(notification) {
            Ok(message) => Message::ToClient(message),
            Err(error) => {
                tracing::debug!(%error, "a notification that is not JSON");
                return false;
            }
        };
        let session = self.session.clone();
        tokio::spawn(async move {
            if let Err(error) = shared.relay(&session, message).await {
                tracing::warn!(%error, session = &*session, "could not relay a notification to the replicas holding the session's stream");
            }
        });
        true
    }
}

impl Drop for StreamHeld {
    fn drop(&mut self) {
        let mut streams = self.registry.lock_streams();
        if let Some(open) = streams.get_mut(&self.session) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                streams.remove(&self.session);
            }
        }
    }
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_streams(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, usize>> {
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a `GET` stream of `session` is open here.
    fn holds_stream(&self, session: &str) -> bool {
        self.lock_streams().contains_key(session)
    }
}

impl SessionCalls {
    /// Answers calls in the sessions of `rmcp`, the session service's manager; `shared`:
    /// the state shared with other replicas, with the session timeout.
    pub(super) fn new(
        rmcp: Arc<LocalSessionManager>,
        shared: Option<(SharedState, Duration)>,
    ) -> Self {
        Self(Arc::new(Registry {
            sessions: Mutex::default(),
            rmcp,
            shared,
            streams: Mutex::default(),
        }))
    }

    /// Counts a `GET` stream of `session` open here until the returned guard drops.
    pub(super) fn stream_opened(&self, session: &str) -> StreamHeld {
        *self.0.lock_streams().entry(session.into()).or_default() += 1;
        StreamHeld {
            registry: Arc::clone(&self.0),
            session: session.into(),
        }
    }

    /// Where the notifications a request of `session` makes for its `GET` stream go when
    /// replicas share their state ([`StreamElsewhere`]): none without a shared state.
    pub(super) fn stream_elsewhere(&self, session: &str) -> Option<Arc<dyn StreamElsewhere>> {
        self.0.shared.as_ref()?;
        Some(Arc::new(ToStreamHolders {
            registry: Arc::downgrade(&self.0),
            session: session.into(),
        }))
    }

    /// Acts on what another replica relayed for a session this one holds
    /// (docs/deploy.md): hands a client's message to rmcp's session, as if posted here (a
    /// cancellation also stops a call on the direct path), applies a log level or a subscription, or
    /// sends a notification on the session's `GET` stream when one is open here. A session
    /// not held here is left alone: it is not restored for that.
    pub(super) async fn relayed(&self, relayed: Relayed) {
        let id: SessionId = relayed.session.into();
        if !self.0.rmcp.has_session(&id).await.unwrap_or(false) {
            return;
        }
        let session = self.session(&id);
        match relayed.message {
            Message::FromClient(message) => {
                let message = match serde_json::from_value::<ClientJsonRpcMessage>(message) {
                    Ok(message) => message,
                    Err(error) => {
                        tracing::debug!(%error, session = %id, "a relayed message that is not a client's");
                        return;
                    }
                };
                if let (
                    Some(session),
                    JsonRpcMessage::Notification(JsonRpcNotification {
                        notification: ClientNotification::CancelledNotification(cancelled),
                        ..
                    }),
                ) = (&session, &message)
                {
                    session.calls.cancel(&cancelled.params);
                }
                if let Err(error) = self.0.rmcp.accept_message(&id, message).await {
                    tracing::debug!(%error, session = %id, "a relayed message for a session that is gone");
                }
            }
            Message::LogLevel(level) => {
                if let (Some(session), Some(level)) = (session, LogLevel::parse(&level)) {
                    session.handler.set_session_log_level(level);
                }
            }
            Message::Subscription { uri, subscribed } => {
                let Some(session) = session else { return };
                let followed = if subscribed {
                    session.handler.follow(uri.clone(), &session.peer).await
                } else {
                    session.handler.unfollow(&uri).await
                };
                if let Err(error) = followed {
                    tracing::debug!(uri, %error.message, session = %id, "a subscription made on another replica does not hold here");
                }
            }
            Message::ToClient(notification) => {
                let Some(session) = session.filter(|_| self.0.holds_stream(&id)) else {
                    return;
                };
                match serde_json::from_value::<ServerNotification>(notification) {
                    Ok(notification) => {
                        if let Err(error) = session.peer.send_notification(notification).await {
                            tracing::debug!(%error, session = %id, "could not send a relayed notification");
                        }
                    }
                    Err(error) => {
                        tracing::debug!(%error, session = %id, "a relayed notification that is not a server's");
                    }
                }
            }
        }
    }

    /// Keeps rmcp's session worker from closing `session` as idle while its calls take this
    /// path (at most once per [`TOUCH_EVERY`]).
    async fn touch(&self, id: &str, session: &Session) {
        {
            let mut touched = session
                .touched
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let every = self
                .0
                .rmcp
                .session_config
                .keep_alive
                .map_or(TOUCH_EVERY, |timeout| (timeout / 5).min(TOUCH_EVERY));
            if touched.elapsed() < every {
                return;
            }
            *touched = Instant::now();
        }
        super::sessions::keep_alive(&self.0.rmcp, id).await;
    }

    /// What a session's handler joins with ([`Transport::HttpSession`]).
    ///
    /// [`Transport::HttpSession`]: crate::handler::Transport::HttpSession
    pub(super) fn joiner(&self) -> Arc<dyn SessionJoin> {
        Arc::new(Joiner(Arc::downgrade(&self.0)))
    }

    /// Forgets `id` (the client deleted the session).
    pub(super) fn forget(&self, id: &str) {
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
    pub(super) async fn serve(
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
            if has_method(body, "notifications/cancelled") {
                cancel(&session, body);
            }
            return Err(parts);
        };
        if !direct::takes(&request)
            || request.get_meta().get_progress_token().is_some()
            || !session.needs_no_stream()
        {
            return Err(parts);
        }
        // An id still in use (a client bug): rmcp's path sorts that out.
        let Ok((call, mut context)) = session.calls.start(
            id,
            &mut request,
            session.peer.clone(),
            session.handler.shutdown_token(),
        ) else {
            return Err(parts);
        };
        // As rmcp's HTTP service does: the HTTP request's parts go with the extensions.
        context.extensions.insert(parts);
        let result = Box::pin(crate::telemetry::handle(
            &session.handler,
            request,
            context,
            crate::telemetry::Wire::Tcp,
        ))
        .await;
        // Cancelled by the client: rmcp ends the stream without a response too.
        Ok(call
            .finish(result)
            .map_or_else(empty_event_stream, |message| json_response(&message)))
    }
}

fn cancel(session: &Session, body: &[u8]) {
    if let Ok(JsonRpcMessage::Notification(JsonRpcNotification {
        notification: ClientNotification::CancelledNotification(cancelled),
        ..
    })) = serde_json::from_slice::<ClientJsonRpcMessage>(body)
    {
        session.calls.cancel(&cancelled.params);
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
    legacy_version
        && is_json(headers)
        && !headers.contains_key(header::ORIGIN)
        && !headers.contains_key("mcp-method")
        && accepts(headers, "application/json")
        && accepts(headers, "text/event-stream")
        && hosts.accepts(headers)
}
