//! MCP over Streamable HTTP: rmcp's `StreamableHttpService` mounted at `/mcp`, behind a
//! bearer-token check, a body limit and a small router that makes a bare
//! `curl -X POST .../mcp -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'` work.
//!
//! Two rmcp services share one handler factory:
//! - the session service (`Mcp-Session-Id`, SSE responses, GET stream, DELETE): what MCP
//!   clients of the 2025-11-25 era and the conformance suite speak. It gets every request
//!   that carries a session id, every GET and DELETE, and `initialize` from a client that
//!   accepts both `application/json` and `text/event-stream`.
//! - a stateless service answering with plain JSON: it gets every other POST without a
//!   session id. rmcp's session service would answer those 406 (curl's `Accept: */*` is
//!   not enough for it) or 400 (no session id); serving them statelessly is what the
//!   2026-07-28 revision does anyway, and what Scriptling's documented curl calls expect.
//!
//! In front of the session service, a plain `tools/call` in a live session is answered by
//! the session's handler on the direct path (`direct.rs`), with a JSON body
//! ([`session_calls`]): rmcp's session worker costs more than the call on that hot path.
//!
//! Both services check `Host` (DNS rebinding) and `Origin`: loopback names are allowed by
//! default, more with [`HttpOptions::allowed_hosts`] / [`HttpOptions::allowed_origins`].
//! In front of them the endpoint's [`guard`] layers refuse what those checks miss (a second
//! `Host`, an absolute-form target), a body over the limit and a missing bearer token;
//! [`sessions`] caps sessions and refuses a reused request id; a body that is not one
//! message gets its JSON-RPC error ([`replies`]). Requests are routed by method: POST
//! carries messages, DELETE ends a session, GET (and any other method, which rmcp refuses)
//! goes to the session service. [`serve_http`] accepts connections itself
//! ([`connections`]), for header and body timeouts and a connection cap.

mod auth;
mod batch;
mod card;
mod connections;
mod experimental_tasks;
mod guard;
mod health;
mod limits;
mod metrics;
mod page;
mod peek;
mod relay;
mod replies;
mod session_calls;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::handler::Handler;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::error::ServeError;
use crate::handler::{McpHandler, Transport};
use crate::replicas::SharedState;
use crate::state::ServerState;
use crate::telemetry::{Traced, Wire};
pub use auth::{OAuthSettings, PROTECTED_RESOURCE_PATH};
pub use card::{
    AI_CATALOG_MEDIA_TYPE, AI_CATALOG_PATH, SERVER_CARD_MEDIA_TYPE, SERVER_CARD_PATH,
    SERVER_CARD_SCHEMA, ServerCard, ai_catalog,
};
use guard::{Guard, HostRule, OriginRule};
pub use health::{HEALTH_PATH, READY_PATH};
pub use metrics::{METRICS_PATH, serve_metrics};
pub use page::{INFO_PATH, InstallSnippet, InstallSnippets, PAGE_PATH, SnippetServer};
use peek::{accepts, has_method, is_json, request_id};
use replies::{id_in_use, not_a_message, not_json, sessions_busy, state_unreachable, too_large};
use session_calls::{SESSION_HEADER, SessionCalls};
use sessions::{SessionBook, until_sent};

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";

/// The request body limit unless configured otherwise: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How long a connection may take to send a request's headers unless configured otherwise.
const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request body may take to arrive unless configured otherwise.
const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The connection cap unless configured otherwise.
const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// The session cap unless configured otherwise.
const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// How long an idle session is kept unless configured otherwise (rmcp's own default).
const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_mins(5);

/// Host names always accepted in the `Host` header.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Origins always accepted (any port).
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// How the HTTP endpoint guards itself.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Extra host names accepted in the `Host` header (besides `localhost`, `127.0.0.1`
    /// and `::1`), with or without a port; `*` accepts any host.
    pub allowed_hosts: Vec<String>,
    /// Extra origins accepted in the `Origin` header (besides loopback ones), such as
    /// `https://app.example.com` or `http://intranet:*`; `*` accepts any origin. Requests
    /// without an `Origin` (non-browser clients) are always accepted.
    pub allowed_origins: Vec<String>,
    /// When set, every request must carry `Authorization: Bearer <token>`.
    pub auth_token: Option<String>,
    /// When set, every request to MCP must carry an OAuth access token of this issuer
    /// (docs/auth.md).
    pub oauth: Option<OAuthSettings>,
    /// Larger request bodies are refused with 413.
    pub max_body_bytes: usize,
    /// On SIGINT/SIGTERM, how long running calls may take to finish.
    pub shutdown_grace: Duration,
    /// How long a connection may take to send a request's headers, counted from when it
    /// opens or its previous response ends: so also how long an idle keep-alive connection
    /// stays open. ([`serve_http`] only; the in-process [`router`] has no connections.)
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive once its headers have; slower ones get
    /// 408.
    pub body_timeout: Duration,
    /// Connections open at once; one more is answered 503 and closed. ([`serve_http`]
    /// only.)
    pub max_connections: usize,
    /// Sessions open at once. At the cap, a new `initialize` closes the session idle
    /// longest; when every session is busy it gets 503.
    pub max_sessions: usize,
    /// A session idle this long is closed. When more than half of `max_sessions` are open,
    /// a fifth of it is enough ([`sessions`]).
    pub session_timeout: Duration,
    /// The install snippets the page at [`PAGE_PATH`] shows; without them it shows the
    /// `toolsmith install` command line only.
    pub install_snippets: Option<InstallSnippets>,

    /// The state shared with other replicas of this server (`--state redis://…`,
    /// docs/deploy.md): sessions are kept there, so any replica serves any session. `None`:
    /// sessions live in this process only.
    pub shared_state: Option<SharedState>,
    /// The secret 2026-07-28 `requestState` is signed with (`--state-key`), the same on
    /// every replica. Without it, a shared state holds a key the first replica made; without
    /// either, the key is random per process.
    pub state_key: Option<String>,
    /// This replica's name, sent in the `Toolsmith-Replica` header of every response
    /// (`--replica-name`). With a shared state it defaults to `HOST:PORT` ([`serve_http`]);
    /// without one and unset, there is no header.
    pub replica_name: Option<String>,

    /// Whether `GET /metrics` is served on this port (behind the token); off when the
    /// metrics have a listener of their own ([`serve_metrics`]).
    pub metrics_on_port: bool,

    /// The Server Card served at [`SERVER_CARD_PATH`] and listed at [`AI_CATALOG_PATH`]
    /// (SEP-2127); `None`: neither is served.
    pub server_card: Option<ServerCard>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth_token: None,
            oauth: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            shutdown_grace: Duration::from_secs(10),
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            install_snippets: None,
            shared_state: None,
            state_key: None,
            replica_name: None,
            metrics_on_port: true,
            server_card: None,
        }
    }
}

/// The HTTP application: MCP at [`MCP_PATH`], the health probes at [`HEALTH_PATH`] and
/// [`READY_PATH`], the metrics at [`METRICS_PATH`], the page at [`PAGE_PATH`] and its data
/// at [`INFO_PATH`], everything else 404.
///
/// Tests drive it in-process with `tower::ServiceExt::oneshot`.
#[expect(
    clippy::too_many_lines,
    reason = "the one place the application is assembled, a route or a layer per step, in order"
)]
pub fn router(state: ServerState, options: &HttpOptions) -> Router {
    let probe_state = state.clone();
    if let (Some(audit), Some(name)) = (state.audit(), options.replica_name.as_deref()) {
        audit.set_replica(name);
    }
    let config = service_config(&state, options);
    let mut session_manager = LocalSessionManager::default();
    session_manager.session_config.keep_alive = Some(options.session_timeout);
    let session_manager = Arc::new(session_manager);
    let shared = options
        .shared_state
        .clone()
        .map(|shared| (shared, options.session_timeout));
    let calls = SessionCalls::new(Arc::clone(&session_manager), shared);
    let book = SessionBook::new(
        options.max_sessions,
        options.session_timeout,
        Arc::clone(&session_manager),
    );
    let session_factory = {
        let state = state.clone();
        let joiner = calls.joiner();
        move || {
            Ok(Traced::new(
                McpHandler::new(state.clone(), Transport::HttpSession(Arc::clone(&joiner))),
                Wire::Tcp,
            ))
        }
    };
    let session_config = with_session_store(config.clone(), options);
    let sessions = StreamableHttpService::new(session_factory, session_manager, session_config);
    let stateless = StreamableHttpService::new(
        move || {
            Ok(Traced::new(
                McpHandler::new(state.clone(), Transport::Http),
                Wire::Tcp,
            ))
        },
        Arc::new(NeverSessionManager::default()),
        config
            .with_legacy_session_mode(false)
            .with_json_response(true),
    );
    let hosts = HostRule::of(options);
    let front = page::Front {
        state: probe_state.clone(),
        hosts: hosts.clone(),
        origins: OriginRule::of(options),
        token: options
            .auth_token
            .as_ref()
            .map(|token| Arc::new(token.as_bytes().to_vec())),
        snippets: options.install_snippets.clone(),
        oauth: options.oauth.is_some(),
        card: options.server_card.is_some(),
    };
    let guard = Guard::new(hosts.clone(), options.max_body_bytes);
    let endpoint = Arc::new(Endpoint {
        state: probe_state.clone(),
        sessions,
        stateless,
        calls,
        book,
        hosts,
        max_body_bytes: options.max_body_bytes,
        body_timeout: options.body_timeout,
        shared: options.shared_state.clone(),
        session_timeout: options.session_timeout,
    });
    relay::relay_to(&endpoint);
    let mcp = post(post_message.layer(guard.clone()))
        .delete(delete_session.layer(guard.clone()))
        .get(to_sessions.layer(guard.clone()))
        .fallback(to_sessions.layer(guard))
        .with_state(endpoint);
    let app = Router::new()
        .route(MCP_PATH, mcp)
        .merge(metrics::routes(&probe_state, options));
    // Without a token there is nothing to check: no layer (a boxed future per request).
    let app = match &options.auth_token {
        Some(token) => app.layer(middleware::from_fn_with_state(
            Arc::new(token.as_bytes().to_vec()),
            guard::authorize,
        )),
        None => app,
    };
    let app = match &options.oauth {
        Some(settings) => {
            let oauth = auth::OAuth::new(settings.clone());
            app.layer(middleware::from_fn_with_state(
                Arc::clone(&oauth),
                auth::authorize,
            ))
            .merge(auth::routes(oauth))
        }
        None => app,
    };
    // Merged after the token layer, which therefore does not stand before the probes; the
    // page checks the token itself, to ask for it in its own words.
    let app = app
        .merge(health::routes(probe_state.clone()))
        .merge(card::routes(options))
        .merge(page::routes(front))
        .layer(metrics::count_statuses(probe_state));
    match options.replica_name.as_deref().map(HeaderValue::from_str) {
        Some(Ok(name)) => app.layer(middleware::map_response_with_state(name, name_replica)),
        Some(Err(_)) => {
            tracing::warn!(
                "the replica name is not a valid header value: no `Toolsmith-Replica` header"
            );
            app
        }
        None => app,
    }
}

/// The header naming the replica that served a response (docs/deploy.md).
pub const REPLICA_HEADER: &str = "toolsmith-replica";

async fn name_replica(State(name): State<HeaderValue>, mut response: Response) -> Response {
    response.headers_mut().insert(REPLICA_HEADER, name);
    response
}

/// Serves `state` over Streamable HTTP on `address` until SIGINT/SIGTERM. Blocks; runs its
/// own tokio runtime.
///
/// `on_listening` is told the bound address (useful with port 0). On a signal the server
/// stops accepting connections, lets running calls finish for
/// [`HttpOptions::shutdown_grace`] (a second signal cuts that short), closes the remaining
/// streams and sessions, and returns `Ok`.
pub fn serve_http(
    state: ServerState,
    options: &HttpOptions,
    address: SocketAddr,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = runtime.block_on(async move {
        let listener =
            TcpListener::bind(address).await.map_err(|source| ServeError::Bind { address, source })?;
        on_listening(listener.local_addr().unwrap_or(address));
        let stop_accepting = CancellationToken::new();
        let connections = Arc::new(Semaphore::new(options.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
        let options = &replica_options(options, listener.local_addr().unwrap_or(address)).await?;
        let app = router(state.clone(), options);
        let mut server = tokio::spawn(connections::accept(listener, app, options.header_timeout, Arc::clone(&connections), stop_accepting.clone()));
        tokio::select! {
            finished = &mut server => {
                return finished.map_err(|error| ServeError::Http(std::io::Error::other(error)));
            }
            () = crate::signal::shutdown_signal() => {}
        }
        tracing::info!(calls = state.calls_in_flight(), "stopping: signal received");
        stop_accepting.cancel();
        tokio::select! {
            drained = state.drain(options.shutdown_grace) => {
                if !drained {
                    tracing::warn!(calls = state.calls_in_flight(), "calls still running after the grace period");
                }
            }
            () = crate::signal::shutdown_signal() => tracing::warn!("second signal: not waiting for running calls"),
        }
        state.shutdown_token().cancel();
        tracing::debug!("closing connections");
        // Every connection holds a permit: all of them back means all are closed.
        let all = u32::try_from(options.max_connections.clamp(1, Semaphore::MAX_PERMITS)).unwrap_or(u32::MAX);
        if tokio::time::timeout(Duration::from_secs(2), connections.acquire_many(all)).await.is_err() {
            tracing::debug!("connections still open after 2 s");
        }
        Ok(())
    });
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

/// `options` made ready to serve next to other replicas: the `requestState` key shared
/// (from `--state-key`, else from the shared state), and with a shared state a replica
/// name (`HOST:PORT` by default).
async fn replica_options(
    options: &HttpOptions,
    bound: SocketAddr,
) -> Result<HttpOptions, ServeError> {
    let mut options = options.clone();
    if let Some(shared) = &options.shared_state {
        let key = shared
            .request_state_key(options.state_key.as_deref())
            .await?;
        crate::mrtr::share_key(key);
        if options.replica_name.is_none() {
            options.replica_name =
                Some(format!("{}:{}", crate::replicas::host_name(), bound.port()));
        }
    } else if let Some(secret) = &options.state_key {
        crate::mrtr::share_key(crate::replicas::key_from_secret(secret));
    }
    Ok(options)
}

/// `config` with the session store of the shared state, if any: sessions are kept there.
fn with_session_store(
    mut config: StreamableHttpServerConfig,
    options: &HttpOptions,
) -> StreamableHttpServerConfig {
    if let Some(shared) = &options.shared_state {
        config.session_store = Some(Arc::new(shared.sessions(options.session_timeout)));
    }
    config
}

fn service_config(state: &ServerState, options: &HttpOptions) -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(state.shutdown_token().child_token());
    config = if options.allowed_hosts.iter().any(|host| host == "*") {
        config.disable_allowed_hosts()
    } else {
        let hosts = LOOPBACK_HOSTS
            .iter()
            .map(|&host| host.to_owned())
            .chain(options.allowed_hosts.iter().cloned());
        config.with_allowed_hosts(hosts)
    };
    if options.allowed_origins.iter().any(|origin| origin == "*") {
        config.disable_allowed_origins()
    } else {
        let origins = LOOPBACK_ORIGINS
            .iter()
            .map(|&origin| origin.to_owned())
            .chain(options.allowed_origins.iter().cloned());
        config.with_allowed_origins(origins)
    }
}

struct Endpoint {
    /// The server's state, for its limits and metrics.
    state: ServerState,
    sessions: StreamableHttpService<Traced<McpHandler>, LocalSessionManager>,
    stateless: StreamableHttpService<Traced<McpHandler>, NeverSessionManager>,
    /// Plain `tools/call` POSTs in a live session, answered without rmcp's session worker.
    calls: SessionCalls,
    /// Every session, to cap them and to refuse a reused request id.
    book: SessionBook,
    /// Which hosts a request to the direct path may name (rmcp checks the others).
    hosts: HostRule,
    max_body_bytes: usize,
    body_timeout: Duration,
    /// The state shared with other replicas, if any.
    shared: Option<SharedState>,
    /// How long a session's record in the shared state outlives its last use.
    session_timeout: Duration,
}

/// POST: a message, in a session or not.
async fn post_message(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match endpoint.read_body(body).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    let admission = match limits::admit(
        endpoint.state.limits(),
        endpoint.state.metrics(),
        &parts,
        &bytes,
    )
    .await
    {
        Ok(admission) => admission,
        Err(too_many) => return too_many,
    };
    let response = if parts.headers.contains_key(SESSION_HEADER) {
        endpoint.post_in_session(parts, bytes).await
    } else {
        endpoint.post_without_session(parts, bytes).await
    };
    limits::hold(response, admission)
}

/// DELETE: rmcp ends the session; once it has, the endpoint forgets it too.
async fn delete_session(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    let session = request.headers().get(SESSION_HEADER).cloned();
    let response = endpoint.sessions.handle(request).await.map(Body::new);
    if response.status().is_success()
        && let Some(session) = session.as_ref().and_then(|id| id.to_str().ok())
    {
        endpoint.calls.forget(session);
        endpoint.book.forget(session);
    }
    response
}

/// GET, a session's stream, and any other method, which rmcp refuses: to the session
/// service. A `GET` stream keeps its session busy while it is open, and is counted so that
/// other replicas' notifications for it come here (docs/deploy.md).
async fn to_sessions(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|id| id.to_str().ok())
        .map(str::to_owned);
    let in_flight = session
        .as_deref()
        .and_then(|session| endpoint.book.enter(session, None).ok())
        .flatten();
    let get = request.method() == axum::http::Method::GET;
    let response = endpoint.sessions.handle(request).await.map(Body::new);
    let stream = session
        .filter(|_| get && endpoint.shared.is_some() && response.status().is_success())
        .map(|session| endpoint.calls.stream_opened(&session));
    if in_flight.is_none() && stream.is_none() {
        return response;
    }
    until_sent(response, Some((in_flight, stream)))
}

impl Endpoint {
    /// A POST carrying a session id: a plain call takes the direct path, the rest goes to
    /// the session service.
    async fn post_in_session(&self, mut parts: Parts, bytes: Bytes) -> Response {
        if let Some(messages) = batch::messages(&bytes)
            && parts
                .headers
                .get(SESSION_HEADER)
                .and_then(|id| id.to_str().ok())
                .is_some_and(|session| self.book.takes_batches(session))
        {
            return self.post_batch(parts, messages).await;
        }
        let bytes = experimental_tasks::renamed(&parts, bytes);
        if let Some(elsewhere) = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|id| id.to_str().ok())
            .and_then(|session| self.calls.stream_elsewhere(session))
        {
            parts.extensions.insert(elsewhere);
        }
        let session = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|id| id.to_str().ok());
        let in_flight = match session.map(|session| self.book.enter(session, request_id(&bytes))) {
            Some(Err(id)) => return id_in_use(&id),
            Some(Ok(in_flight)) => in_flight,
            None => None,
        };
        // A session another replica opened: rmcp restores it from the shared state; the
        // book learns of it once it has.
        let restoring = match (&self.shared, session) {
            (Some(shared), Some(session)) => {
                shared.touch(session, self.session_timeout);
                self.relay(shared, session, &bytes).await;
                in_flight.is_none().then(|| session.to_owned())
            }
            _ => None,
        };
        let response = match self.calls.serve(&self.hosts, parts, &bytes).await {
            Ok(response) => response,
            Err(parts) => post_to(&self.sessions, parts, bytes).await,
        };
        if let Some(session) = restoring
            && response.status().is_success()
        {
            self.book.adopt(&session);
        }
        until_sent(response, in_flight)
    }

    /// A POST without a session id: `initialize` from a client that accepts event streams
    /// opens a session; anything else is served statelessly.
    async fn post_without_session(&self, mut parts: Parts, bytes: Bytes) -> Response {
        let accepts_both = accepts(&parts.headers, "application/json")
            && accepts(&parts.headers, "text/event-stream");
        if accepts_both && has_method(&bytes, "initialize") {
            if let Some(shared) = &self.shared
                && let Err(error) = shared.check().await
            {
                return state_unreachable(&error);
            }
            let Some((opening, closed)) = self.book.open().await else {
                return sessions_busy();
            };
            if let Some(closed) = closed {
                self.calls.forget(&closed);
            }
            let batches = batch::asks_for_batches(&bytes);
            let response =
                experimental_tasks::advertised(post_to(&self.sessions, parts, bytes).await);
            if let Some(session) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|id| id.to_str().ok())
            {
                opening.opened(session, batches);
            }
            return response;
        }
        if !accepts_both {
            parts.headers.insert(
                header::ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            );
        }
        post_to(&self.stateless, parts, bytes).await
    }

    /// The whole request body, within the size limit (413) and the body timeout (408).
    async fn read_body(&self, body: Body) -> Result<Bytes, Response> {
        match tokio::time::timeout(
            self.body_timeout,
            axum::body::to_bytes(body, self.max_body_bytes),
        )
        .await
        {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(_)) => Err(too_large(self.max_body_bytes)),
            Err(_) => Err((
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the request body did not arrive within {} s",
                    self.body_timeout.as_secs_f64()
                ),
            )
                .into_response()),
        }
    }
}

/// Hands a POST whose body has been read to one of rmcp's services. rmcp answers a body it
/// cannot read as one message with 415 "fail to deserialize"; that becomes the JSON-RPC
/// error it is.
async fn post_to<M: SessionManager>(
    service: &StreamableHttpService<Traced<McpHandler>, M>,
    parts: Parts,
    bytes: Bytes,
) -> Response {
    // With another content type, 415 is the right answer (rmcp checks that first), with a
    // JSON-RPC error that names the header to send.
    let json = is_json(&parts.headers);
    let content_type = parts.headers.get(header::CONTENT_TYPE).cloned();
    let response = service
        .handle(Request::from_parts(parts, Body::from(bytes.clone())))
        .await
        .map(Body::new);
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return if json {
            not_a_message(&bytes)
        } else {
            not_json(content_type.as_ref())
        };
    }
    response
}

#[cfg(test)]
mod tests {
    use axum::http::Method;
    use tower::ServiceExt as _;

    use super::*;
    use crate::state::ServerOptions;

    fn app() -> Router {
        let dir = tempfile::tempdir().unwrap();
        let folder = toolsmith_folder::ToolFolder::load(dir.path()).unwrap();
        let state = ServerState::new(
            Arc::clone(folder.catalog()),
            ServerOptions::new(folder.root().to_owned()),
        );
        let options = HttpOptions {
            max_body_bytes: 16,
            ..HttpOptions::default()
        };
        router(state, &options)
    }

    async fn status_and_body(request: Request) -> (StatusCode, String) {
        let response = app().oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    fn request(method: &Method) -> axum::http::request::Builder {
        Request::builder()
            .method(method)
            .uri(MCP_PATH)
            .header(header::HOST, "localhost")
    }

    #[tokio::test]
    async fn the_guard_stands_before_every_method() {
        for method in [Method::POST, Method::GET, Method::DELETE, Method::PUT] {
            let twice = request(&method)
                .header(header::HOST, "localhost")
                .body(Body::empty())
                .unwrap();
            assert_eq!(
                status_and_body(twice).await.0,
                StatusCode::BAD_REQUEST,
                "{method} with two Host headers"
            );
            let large = request(&method)
                .header(header::CONTENT_LENGTH, "17")
                .body(Body::from("x".repeat(17)))
                .unwrap();
            assert_eq!(
                status_and_body(large).await.0,
                StatusCode::PAYLOAD_TOO_LARGE,
                "{method} with a body over the limit"
            );
        }
    }

    async fn answer_on(app: &Router, request: Request) -> (StatusCode, String) {
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn the_probes_answer_without_the_token_or_a_host_check() {
        // `/healthz` and `/readyz` for load balancers and orchestrators.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("t.star"),
            "def t() -> str:\n    \"\"\"T.\"\"\"\n    return \"t\"\n\nmcp.tool(t)\n",
        )
        .unwrap();
        let folder = toolsmith_folder::ToolFolder::load(dir.path()).unwrap();
        let state = ServerState::new(
            Arc::clone(folder.catalog()),
            ServerOptions::new(folder.root().to_owned()),
        );
        let options = HttpOptions {
            auth_token: Some("secret".into()),
            ..HttpOptions::default()
        };
        let app = router(state.clone(), &options);
        let get = |path: &str| {
            Request::builder()
                .uri(path)
                .header(header::HOST, "balancer.internal")
                .body(Body::empty())
                .unwrap()
        };
        let answer = |request| answer_on(&app, request);
        assert_eq!(
            answer(get(HEALTH_PATH)).await,
            (StatusCode::OK, "ok\n".to_owned())
        );
        let (status, body) = answer(get(READY_PATH)).await;
        assert_eq!(status, StatusCode::OK);
        let ready: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(ready["status"], "ready");
        assert_eq!(ready["tools"], 1);
        // The MCP endpoint itself still wants the token (and a loopback Host).
        let (status, _) = answer(get(MCP_PATH)).await;
        assert_ne!(status, StatusCode::OK);
        // Once shutting down begins, readiness fails so a balancer stops sending.
        assert!(state.drain(Duration::from_millis(10)).await);
        let (status, body) = answer(get(READY_PATH)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(answer(get(HEALTH_PATH)).await.0, StatusCode::OK);
    }

    #[tokio::test]
    async fn methods_mcp_does_not_use_get_rmcps_answer() {
        let put = request(&Method::PUT).body(Body::empty()).unwrap();
        assert_eq!(
            status_and_body(put).await,
            (
                StatusCode::METHOD_NOT_ALLOWED,
                "Method Not Allowed".to_owned()
            )
        );
    }
}
