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

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use crate::ServeError;
use crate::handler::McpHandler;
use crate::session_calls::{HostRule, SESSION_HEADER, SessionCalls};
use crate::state::ServerState;

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";

/// The request body limit unless configured otherwise: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

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
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth_token: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            shutdown_grace: Duration::from_secs(10),
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
    let session_factory = {
        let state = state.clone();
        let joiner = calls.joiner();
        move || Ok(McpHandler::for_http_session(state.clone(), joiner.clone()))
    };
    let sessions = StreamableHttpService::new(session_factory, session_manager, config.clone());
    let stateless = StreamableHttpService::new(
        move || Ok(McpHandler::new(state.clone(), "http")),
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
        hosts,
        max_body_bytes: options.max_body_bytes,
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
    hosts: HostRule,
    max_body_bytes: usize,
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
        }
        return response;
    }
    if request.method() != Method::POST {
        return endpoint.sessions.handle(request).await.map(Body::new);
    }
    if request.headers().contains_key(SESSION_HEADER) {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, endpoint.max_body_bytes).await else {
            return too_large(endpoint.max_body_bytes);
        };
        return match endpoint.calls.serve(&endpoint.hosts, parts, &bytes).await {
            Ok(response) => response,
            Err(parts) => endpoint
                .sessions
                .handle(Request::from_parts(parts, Body::from(bytes)))
                .await
                .map(Body::new),
        };
    }
    let (mut parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, endpoint.max_body_bytes).await else {
        return too_large(endpoint.max_body_bytes);
    };
    let accepts_both =
        accepts(&parts.headers, "application/json") && accepts(&parts.headers, "text/event-stream");
    if accepts_both && has_method(&bytes, "initialize") {
        return endpoint
            .sessions
            .handle(Request::from_parts(parts, Body::from(bytes)))
            .await
            .map(Body::new);
    }
    if !accepts_both {
        parts.headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
    endpoint
        .stateless
        .handle(Request::from_parts(parts, Body::from(bytes)))
        .await
        .map(Body::new)
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
            tokio::net::TcpListener::bind(address).await.map_err(|source| ServeError::Bind { address, source })?;
        on_listening(listener.local_addr().unwrap_or(address));
        // SSE responses go out in pieces; without TCP_NODELAY each waits ~40 ms for the
        // client's delayed ACK (harness RESULTS-peers.md).
        let listener = listener.tap_io(|stream| {
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "could not set TCP_NODELAY");
            }
        });
        let stop_accepting = CancellationToken::new();
        let server = axum::serve(listener, router(state.clone(), options))
            .with_graceful_shutdown(stop_accepting.clone().cancelled_owned());
        let mut server = tokio::spawn(async move { server.await });
        tokio::select! {
            finished = &mut server => {
                return finished.map_err(|error| ServeError::Http(std::io::Error::other(error)))?.map_err(ServeError::Http);
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
        if tokio::time::timeout(Duration::from_secs(2), server).await.is_err() {
            tracing::debug!("connections still open after 2 s");
        }
        Ok(())
    });
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

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
