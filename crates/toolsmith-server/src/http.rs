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
//! the session's handler directly, with a JSON body (`session_calls.rs`): rmcp's session
//! worker costs more than the call on that hot path.
//!
//! Both services check `Host` (DNS rebinding) and `Origin`: loopback names are allowed by
//! default, more with [`HttpOptions::allowed_hosts`] / [`HttpOptions::allowed_origins`].
//! In front of them the endpoint refuses what those checks miss (a second `Host`, an
//! absolute-form target), caps sessions and refuses a reused request id (`sessions.rs`),
//! and answers a body that is not one message with its JSON-RPC error. [`serve_http`]
//! accepts connections itself, for header and body timeouts and a connection cap.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use toolsmith_model::Transport;

use crate::ServeError;
use crate::handler::McpHandler;
use crate::session_calls::{HostRule, SESSION_HEADER, SessionCalls};
use crate::sessions::{SessionBook, until_sent};
use crate::state::ServerState;

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
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth_token: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            shutdown_grace: Duration::from_secs(10),
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
    }
}

/// The HTTP application: MCP at [`MCP_PATH`], everything else 404.
///
/// Tests drive it in-process with `tower::ServiceExt::oneshot`.
pub fn router(state: ServerState, options: &HttpOptions) -> Router {
    let config = service_config(&state, options);
    let session_manager = Arc::new(LocalSessionManager::default());
    let calls = SessionCalls::new(Arc::clone(&session_manager));
    let book = SessionBook::new(options.max_sessions, Arc::clone(&session_manager));
    let session_factory = {
        let state = state.clone();
        let joiner = calls.joiner();
        move || Ok(McpHandler::for_http_session(state.clone(), joiner.clone()))
    };
    let sessions = StreamableHttpService::new(session_factory, session_manager, config.clone());
    let stateless = StreamableHttpService::new(
        move || Ok(McpHandler::new(state.clone(), Transport::Http)),
        Arc::new(NeverSessionManager::default()),
        config
            .with_legacy_session_mode(false)
            .with_json_response(true),
    );
    let hosts = if options.allowed_hosts.iter().any(|host| host == "*") {
        HostRule::new(["*"])
    } else {
        HostRule::new(
            LOOPBACK_HOSTS
                .iter()
                .copied()
                .chain(options.allowed_hosts.iter().map(String::as_str)),
        )
    };
    let endpoint = Arc::new(Endpoint {
        sessions,
        stateless,
        calls,
        book,
        hosts,
        max_body_bytes: options.max_body_bytes,
        body_timeout: options.body_timeout,
    });
    let app = Router::new().route(MCP_PATH, axum::routing::any(mcp).with_state(endpoint));
    // Without a token there is nothing to check: no layer (a boxed future per request).
    match &options.auth_token {
        Some(token) => app.layer(middleware::from_fn_with_state(
            Arc::new(token.as_bytes().to_vec()),
            authorize,
        )),
        None => app,
    }
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
    sessions: StreamableHttpService<McpHandler, LocalSessionManager>,
    stateless: StreamableHttpService<McpHandler, NeverSessionManager>,
    /// Plain `tools/call` POSTs in a live session, answered without rmcp's session worker.
    calls: SessionCalls,
    /// Every session, to cap them and to refuse a reused request id.
    book: SessionBook,
    hosts: HostRule,
    max_body_bytes: usize,
    body_timeout: Duration,
}

async fn mcp(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    if let Some(refusal) = endpoint
        .hosts
        .refuse_target(request.uri(), request.headers())
    {
        return refusal;
    }
    if content_length(request.headers()).is_some_and(|length| length > endpoint.max_body_bytes) {
        return too_large(endpoint.max_body_bytes);
    }
    if request.method() == Method::DELETE {
        let session = request.headers().get(SESSION_HEADER).cloned();
        let response = endpoint.sessions.handle(request).await.map(Body::new);
        if response.status().is_success()
            && let Some(session) = session.as_ref().and_then(|id| id.to_str().ok())
        {
            endpoint.calls.forget(session);
            endpoint.book.forget(session);
        }
        return response;
    }
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|id| id.to_str().ok())
        .map(str::to_owned);
    if request.method() != Method::POST {
        // A `GET` stream keeps its session busy while it is open.
        let in_flight = session
            .and_then(|session| endpoint.book.enter(&session, None).ok())
            .flatten();
        let response = endpoint.sessions.handle(request).await.map(Body::new);
        return until_sent(response, in_flight);
    }
    if request.headers().contains_key(SESSION_HEADER) {
        let (parts, body) = request.into_parts();
        let bytes = match endpoint.read_body(body).await {
            Ok(bytes) => bytes,
            Err(refusal) => return refusal,
        };
        let in_flight =
            match session.map(|session| endpoint.book.enter(&session, request_id(&bytes))) {
                Some(Err(id)) => return id_in_use(&id),
                Some(Ok(in_flight)) => in_flight,
                None => None,
            };
        let response = match endpoint.calls.serve(&endpoint.hosts, parts, &bytes).await {
            Ok(response) => response,
            Err(parts) => post_to(&endpoint.sessions, parts, bytes).await,
        };
        return until_sent(response, in_flight);
    }
    let (mut parts, body) = request.into_parts();
    let bytes = match endpoint.read_body(body).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    let accepts_both =
        accepts(&parts.headers, "application/json") && accepts(&parts.headers, "text/event-stream");
    if accepts_both && has_method(&bytes, "initialize") {
        let Some((opening, closed)) = endpoint.book.open().await else {
            return sessions_busy();
        };
        if let Some(closed) = closed {
            endpoint.calls.forget(&closed);
        }
        let response = post_to(&endpoint.sessions, parts, bytes).await;
        if let Some(session) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|id| id.to_str().ok())
        {
            opening.opened(session);
        }
        return response;
    }
    if !accepts_both {
        parts.headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
    post_to(&endpoint.stateless, parts, bytes).await
}

impl Endpoint {
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
/// error it is (issue 14, item 17).
async fn post_to<M: SessionManager>(
    service: &StreamableHttpService<McpHandler, M>,
    parts: Parts,
    bytes: Bytes,
) -> Response {
    // With another content type, 415 is the right answer (rmcp checks that first).
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or_default();
            essence.trim().eq_ignore_ascii_case("application/json")
        });
    let response = service
        .handle(Request::from_parts(parts, Body::from(bytes.clone())))
        .await
        .map(Body::new);
    if json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return not_a_message(&bytes);
    }
    response
}

/// 400 with the JSON-RPC error for a body that is not one JSON-RPC message (the transport
/// lets the body of a refusal be a JSON-RPC error, 2025-11-25 basic/transports §2.1):
/// `-32700` when it is not JSON, `-32600` when it is JSON but not a message (a batch, which
/// MCP no longer has, a `jsonrpc` other than `"2.0"`, an id that is neither a string nor an
/// integer). The id is echoed when it is one.
fn not_a_message(body: &[u8]) -> Response {
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

/// The id of a request (not of a notification or a response), read without building the
/// message.
fn request_id(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Peek {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    let peek = serde_json::from_slice::<Peek>(body).ok()?;
    peek.method.and(peek.id)
}

/// 400 for a request reusing the id of one still running in its session: answering it
/// would take the first one's answer (issue 14, item 18). The error has no id, as the
/// transport specifies for a refused message, so a client does not take it for the first
/// one's answer.
fn id_in_use(id: &RequestId) -> Response {
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
    let mut response = crate::session_calls::json_response(&error);
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

/// 503 for an `initialize` at the session cap when no session is idle.
fn sessions_busy() -> Response {
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

fn content_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

fn too_large(limit: usize) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload Too Large: the request body limit is {limit} bytes"),
    )
        .into_response()
}

/// Whether the `Accept` header names `media_type` itself (not just `*/*`).
pub(crate) fn accepts(headers: &HeaderMap, media_type: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| {
            value.split(',').any(|entry| {
                let mut pieces = entry.split(';');
                let essence = pieces.next().unwrap_or_default().trim();
                let refused = pieces.any(|parameter| {
                    parameter
                        .trim()
                        .strip_prefix("q=")
                        .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
                });
                essence.eq_ignore_ascii_case(media_type) && !refused
            })
        })
}

/// Whether the body is a JSON-RPC message with this `method`, read without building the
/// message: `initialize` (the only request that opens a session) or
/// `notifications/cancelled` (`session_calls.rs`).
pub(crate) fn has_method(body: &[u8], method: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<Method<'_>>(body)
        .is_ok_and(|peek| peek.method.as_deref() == Some(method))
}

/// Checks `Authorization: Bearer <token>` against the configured token in constant time
/// (RFC 6750 §3: 401 with `WWW-Authenticate: Bearer`).
async fn authorize(State(expected): State<Arc<Vec<u8>>>, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim().as_bytes());
    match given {
        Some(given) if bool::from(given.ct_eq(expected.as_slice())) => next.run(request).await,
        Some(_) => unauthorized(r#"Bearer realm="toolsmith", error="invalid_token""#),
        None => unauthorized(r#"Bearer realm="toolsmith""#),
    }
}

fn unauthorized(challenge: &'static str) -> Response {
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
        let app = router(state.clone(), options);
        let mut server = tokio::spawn(accept(listener, app, options.header_timeout, Arc::clone(&connections), stop_accepting.clone()));
        tokio::select! {
            finished = &mut server => {
                return finished.map_err(|error| ServeError::Http(std::io::Error::other(error)));
            }
            () = crate::shutdown_signal() => {}
        }
        tracing::info!(calls = state.calls_in_flight(), "stopping: signal received");
        stop_accepting.cancel();
        tokio::select! {
            drained = state.drain(options.shutdown_grace) => {
                if !drained {
                    tracing::warn!(calls = state.calls_in_flight(), "calls still running after the grace period");
                }
            }
            () = crate::shutdown_signal() => tracing::warn!("second signal: not waiting for running calls"),
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

/// Accepts connections until `stop`, each holding a permit of `connections`, and serves
/// each with hyper's HTTP/1 server: headers must arrive within `header_timeout` (hyper
/// starts that clock when it waits for a request, so an idle keep-alive connection closes
/// too). Past the cap a connection gets 503 and is closed, so idle or slow clients cannot
/// use up the file descriptors (issue 14, item 9). On `stop`, connections finish what they
/// are answering and close.
async fn accept(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    connections: Arc<Semaphore>,
    stop: CancellationToken,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let lingering = Arc::new(Semaphore::new(LINGERING_REFUSALS));
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, or a connection reset before we got to it:
                    // wait a little rather than spin.
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = stop.cancelled() => return,
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            refuse_connection(stream, &lingering);
            continue;
        };
        // SSE responses go out in pieces; without TCP_NODELAY each waits ~40 ms for the
        // client's delayed ACK (harness RESULTS-peers.md).
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%error, "connection closed");
            }
        });
    }
}

const CONNECTION_REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 57\r\n\r\nService Unavailable: too many connections; try again soon";

/// How many refused connections may linger at once to read their request (for a clean
/// close); more are closed at once.
const LINGERING_REFUSALS: usize = 64;

/// Answers a connection over the cap with 503 without serving its request. Closing a socket
/// with unread input resets it, and the client may lose the answer: so the refusal reads
/// what the client sends for up to a second, then closes.
fn refuse_connection(mut stream: TcpStream, lingering: &Arc<Semaphore>) {
    tracing::warn!("refused a connection: too many open");
    let Ok(permit) = Arc::clone(lingering).try_acquire_owned() else {
        let _ = stream.try_write(CONNECTION_REFUSAL);
        return;
    };
    tokio::spawn(async move {
        let _permit = permit;
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            stream.write_all(CONNECTION_REFUSAL).await?;
            stream.shutdown().await?;
            let mut sink = [0; 1024];
            while stream.read(&mut sink).await? > 0 {}
            Ok::<(), std::io::Error>(())
        })
        .await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_refusal_is_well_formed() {
        let text = std::str::from_utf8(CONNECTION_REFUSAL).unwrap();
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(text.contains(&format!("content-length: {}\r\n", body.len())));
    }

    fn headers(accept: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(accept).unwrap());
        headers
    }

    #[test]
    fn accept_needs_the_media_type_itself() {
        assert!(accepts(
            &headers("application/json, text/event-stream"),
            "text/event-stream"
        ));
        assert!(accepts(
            &headers("Application/JSON;q=0.5"),
            "application/json"
        ));
        assert!(!accepts(&headers("*/*"), "application/json"));
        assert!(!accepts(
            &headers("application/json;q=0"),
            "application/json"
        ));
    }

    #[test]
    fn only_initialize_opens_a_session() {
        assert!(has_method(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "initialize"
        ));
        assert!(!has_method(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "initialize"
        ));
        assert!(!has_method(b"[1]", "initialize"));
        assert!(!has_method(b"not json", "initialize"));
    }
}
