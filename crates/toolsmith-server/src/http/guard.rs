//! The endpoint's guards, as layers in front of MCP: the request's target (a second `Host`,
//! an absolute-form target naming a host that is not allowed), a declared body over the
//! limit, and the bearer token; and the [`OriginRule`] and [`Bearer`] check that the page
//! and `/api/info` apply themselves (rmcp checks `Origin` for `/mcp`).
//!
//! [`Guard`] is a tower layer on each method's handler, not on the router: axum boxes a
//! router layer's future, and this one is on the `tools/call` hot path; its own future is
//! the handler's, or the refusal. The token check is a router layer (so it covers every
//! path), present only when a token is set.
//!
//! A body declared over the limit is read and thrown away (up to [`DRAIN_FACTOR`] times the
//! limit, for at most [`DRAIN_PATIENCE`]) before the 413 goes out with `Connection: close`:
//! a socket closed with the client's bytes unread sends a reset, and the client would see
//! that instead of the 413.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;
use subtle::ConstantTimeEq;
use tower::{Layer, Service};

use super::peek::content_length;
use super::replies::{too_large, unauthorized};

/// How many times the body limit a refused body is read to answer 413 on a connection the
/// client can still read; a longer one gets the 413 at once, and likely a reset.
const DRAIN_FACTOR: usize = 4;

/// How long a refused body is read for before the 413 goes out anyway.
const DRAIN_PATIENCE: Duration = Duration::from_secs(10);

/// Refuses, before MCP sees it, a request whose target the `Host` checks would miss
/// ([`HostRule::refuse_target`]) or whose declared body is over the limit (413).
#[derive(Clone)]
pub(super) struct Guard(Arc<Rules>);

struct Rules {
    hosts: HostRule,
    max_body_bytes: usize,
}

impl Guard {
    pub(super) fn new(hosts: HostRule, max_body_bytes: usize) -> Self {
        Self(Arc::new(Rules {
            hosts,
            max_body_bytes,
        }))
    }

    fn refuse(&self, request: &Request) -> Option<Refusal> {
        if let Some(refusal) = self.0.hosts.refuse_target(request.uri(), request.headers()) {
            return Some(Refusal::Now(refusal));
        }
        let limit = self.0.max_body_bytes;
        let length = content_length(request.headers()).filter(|&length| length > limit)?;
        if length > limit.saturating_mul(DRAIN_FACTOR) {
            return Some(Refusal::Now(closing(too_large(limit))));
        }
        Some(Refusal::AfterBody(limit))
    }
}

/// How a request is refused.
enum Refusal {
    /// With this answer, at once.
    Now(Response),
    /// With 413 for a body over this limit, once the body was read (and thrown away).
    AfterBody(usize),
}

/// Reads `body` to its end (for at most [`DRAIN_PATIENCE`], and no more than
/// [`DRAIN_FACTOR`] times `limit`), then answers 413 and closes the connection.
async fn drain_then_refuse(body: Body, limit: usize) -> Response {
    let bound = limit.saturating_mul(DRAIN_FACTOR);
    let drain = async {
        let mut body = body;
        let mut read = 0usize;
        while let Some(Ok(frame)) = body.frame().await {
            read = read.saturating_add(frame.data_ref().map_or(0, axum::body::Bytes::len));
            if read > bound {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_PATIENCE, drain).await;
    closing(too_large(limit))
}

/// `response`, with `Connection: close`: the connection is not kept for another request.
fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

impl<S> Layer<S> for Guard {
    type Service = Guarded<S>;

    fn layer(&self, inner: S) -> Guarded<S> {
        Guarded {
            guard: self.clone(),
            inner,
        }
    }
}

/// A service behind the [`Guard`].
#[derive(Clone)]
pub(super) struct Guarded<S> {
    guard: Guard,
    inner: S,
}

impl<S> Service<Request> for Guarded<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Unpin,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Checked<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Checked<S::Future> {
        match self.guard.refuse(&request) {
            Some(Refusal::Now(refusal)) => Checked::Refused(Some(refusal)),
            Some(Refusal::AfterBody(limit)) => {
                Checked::Draining(Box::pin(drain_then_refuse(request.into_body(), limit)))
            }
            None => Checked::Passed(self.inner.call(request)),
        }
    }
}

/// The answer of a [`Guarded`] service: the refusal, or the inner service's answer.
pub(super) enum Checked<F> {
    /// Refused; `None` once answered.
    Refused(Option<Response>),
    /// Refused once the body is read (a body over the limit).
    Draining(Pin<Box<dyn Future<Output = Response> + Send>>),
    /// Let through.
    Passed(F),
}

impl<F> Future for Checked<F>
where
    F: Future<Output = Result<Response, Infallible>> + Unpin,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Self::Refused(refusal) => {
                Poll::Ready(Ok(refusal.take().expect("a refusal is answered once")))
            }
            Self::Draining(draining) => draining.as_mut().poll(cx).map(Ok),
            Self::Passed(future) => Pin::new(future).poll(cx),
        }
    }
}

/// The `Host` rule of the endpoint, as far as it applies it itself: rmcp's services check
/// `Host` too, and the direct path (`session_calls.rs`) leaves to them a request it does
/// not plainly accept.
#[derive(Debug, Clone)]
pub(super) struct HostRule {
    /// `None`: any host.
    allowed: Option<Vec<(String, Option<u16>)>>,
}

impl HostRule {
    /// The rule of an endpoint with `options`: loopback names and
    /// [`HttpOptions::allowed_hosts`](super::HttpOptions::allowed_hosts).
    pub(super) fn of(options: &super::HttpOptions) -> Self {
        Self::new(
            super::LOOPBACK_HOSTS
                .iter()
                .copied()
                .chain(options.allowed_hosts.iter().map(String::as_str)),
        )
    }

    /// Accepts the hosts in `allowed` (`name` or `name:port`); `*` accepts any.
    pub(super) fn new<'a>(allowed: impl IntoIterator<Item = &'a str>) -> Self {
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

    pub(super) fn accepts(&self, headers: &HeaderMap) -> bool {
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
    pub(super) fn refuse_target(&self, uri: &Uri, headers: &HeaderMap) -> Option<Response> {
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

/// The `Origin` rule, for the paths rmcp does not serve (the page, `/api/info`): the same
/// patterns, read the way rmcp reads them for `/mcp`, so one `--allow-origin` list means
/// the same everywhere.
#[derive(Debug, Clone)]
pub(super) struct OriginRule {
    /// `None`: any origin.
    allowed: Option<Vec<AllowedOrigin>>,
}

/// One allowed origin: `scheme://host`, `scheme://host:port`, `scheme://host:*` or `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AllowedOrigin {
    scheme: String,
    host: String,
    /// `None`: any port (`:*`, or no port, as rmcp still reads it).
    port: Option<u16>,
}

impl OriginRule {
    /// The rule of an endpoint with `options`: loopback origins and
    /// [`HttpOptions::allowed_origins`](super::HttpOptions::allowed_origins), as rmcp is
    /// given them for `/mcp`.
    pub(super) fn of(options: &super::HttpOptions) -> Self {
        Self::new(
            super::LOOPBACK_ORIGINS
                .iter()
                .copied()
                .chain(options.allowed_origins.iter().map(String::as_str)),
        )
    }

    /// Accepts the origins in `allowed`; `*` accepts any. A pattern that is not an origin
    /// accepts nothing.
    pub(super) fn new<'a>(allowed: impl IntoIterator<Item = &'a str>) -> Self {
        let mut origins = Vec::new();
        for pattern in allowed {
            let pattern = pattern.trim();
            if pattern == "*" {
                return Self { allowed: None };
            }
            let (base, any_port) = match pattern.strip_suffix(":*") {
                Some(base) => (base, true),
                None => (pattern, false),
            };
            if let Some(mut origin) = parse_origin(base) {
                if any_port {
                    origin.port = None;
                }
                origins.push(origin);
            } else if pattern.eq_ignore_ascii_case("null") {
                origins.push(AllowedOrigin {
                    scheme: "null".into(),
                    host: String::new(),
                    port: None,
                });
            }
        }
        Self {
            allowed: Some(origins),
        }
    }

    /// The 403 of a request whose `Origin` is not allowed; a request without one (not
    /// from a browser's script, or a plain navigation) passes.
    pub(super) fn refuse(&self, headers: &HeaderMap) -> Option<Response> {
        let allowed = self.allowed.as_ref()?;
        let value = headers.get(header::ORIGIN)?;
        let origin = value.to_str().ok().map(str::trim);
        let accepted = match origin {
            Some(origin) if origin.eq_ignore_ascii_case("null") => {
                allowed.iter().any(|allowed| allowed.scheme == "null")
            }
            Some(origin) => parse_origin(origin).is_some_and(|origin| {
                allowed.iter().any(|allowed| {
                    allowed.scheme == origin.scheme
                        && allowed.host == origin.host
                        && allowed.port.is_none_or(|port| {
                            origin.port.or_else(|| default_port(&origin.scheme)) == Some(port)
                        })
                })
            }),
            None => false,
        };
        if accepted {
            return None;
        }
        tracing::warn!(origin = ?value, "refused a request with an Origin that is not allowed");
        Some(
            (
                StatusCode::FORBIDDEN,
                "Forbidden: Origin header is not allowed",
            )
                .into_response(),
        )
    }
}

fn parse_origin(text: &str) -> Option<AllowedOrigin> {
    let uri = Uri::try_from(text).ok()?;
    let authority = uri.authority()?;
    Some(AllowedOrigin {
        scheme: uri.scheme_str()?.to_ascii_lowercase(),
        host: normalize_host(authority.host()),
        port: authority.port_u16(),
    })
}

/// The port an origin without one has (RFC 6454 §4).
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// Checks `Authorization: Bearer <token>` against the configured token in constant time
/// (RFC 6750 §3: 401 with `WWW-Authenticate: Bearer`).
pub(super) async fn authorize(
    State(expected): State<Arc<Vec<u8>>>,
    mut request: Request,
    next: Next,
) -> Response {
    match Bearer::of(request.headers(), &expected) {
        Bearer::Valid => {
            // The audit log's caller `token`.
            request.extensions_mut().insert(crate::audit::StaticToken);
            next.run(request).await
        }
        refused => unauthorized(refused.challenge()),
    }
}

/// The token of a request's `Authorization: Bearer <token>` header (RFC 6750 §2.1).
pub(super) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// What a request's `Authorization` header says about the bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bearer {
    /// No bearer token.
    Missing,
    /// A token other than the configured one.
    Wrong,
    /// The configured token.
    Valid,
}

impl Bearer {
    /// Compares the request's token with `expected` in constant time.
    pub(super) fn of(headers: &HeaderMap, expected: &[u8]) -> Self {
        match bearer_token(headers).map(str::as_bytes) {
            Some(given) if bool::from(given.ct_eq(expected)) => Self::Valid,
            Some(_) => Self::Wrong,
            None => Self::Missing,
        }
    }

    /// The `WWW-Authenticate` challenge of a refusal (RFC 6750 §3).
    pub(super) fn challenge(self) -> &'static str {
        match self {
            Self::Wrong => r#"Bearer realm="toolsmith", error="invalid_token""#,
            Self::Missing | Self::Valid => r#"Bearer realm="toolsmith""#,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(value: &str) -> HeaderMap {
        super::super::peek::one_header(header::HOST, value)
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
    fn origin_rule_reads_patterns_as_rmcp_does() {
        let origin = |value: &str| super::super::peek::one_header(header::ORIGIN, value);
        let rule = OriginRule::new(["http://localhost:*", "https://app.example:8443", "null"]);
        assert!(rule.refuse(&HeaderMap::new()).is_none());
        assert!(rule.refuse(&origin("http://localhost:3000")).is_none());
        assert!(rule.refuse(&origin("http://LOCALHOST")).is_none());
        assert!(rule.refuse(&origin("https://app.example:8443")).is_none());
        assert!(rule.refuse(&origin("null")).is_none());
        assert!(rule.refuse(&origin("https://app.example")).is_some());
        assert!(rule.refuse(&origin("https://localhost:3000")).is_some());
        assert!(rule.refuse(&origin("http://evil.example")).is_some());
        assert!(rule.refuse(&origin("not an origin")).is_some());
        assert!(
            OriginRule::new(["https://app.example:443"])
                .refuse(&origin("https://app.example"))
                .is_none()
        );
        assert!(
            OriginRule::new(["*"])
                .refuse(&origin("http://evil.example"))
                .is_none()
        );
    }
}
