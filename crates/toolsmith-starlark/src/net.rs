//! The guarded HTTP client behind Starlark's `http.*` and OpenAPI tools (docs/tools.md,
//! "The language and the sandbox"; docs/gateway.md, "OpenAPI"): a request reaches only the
//! hosts of a tool's `net` grant, stops at the call's deadline, reads at most 16 MiB, and
//! follows up to five redirects for `GET` and `HEAD`, each to a permitted host.
//!
//! A host granted by name (`api.example.com`, `*.example.com`, `*`) is reached at its public
//! addresses only: a name that resolves to a loopback, private or link-local address (the
//! machine itself, the local network, a cloud's metadata service at 169.254.169.254) is
//! refused, whoever controls its DNS. Such an address is reached when `net` names it
//! (`127.0.0.1:8080`, `[::1]`, `10.0.0.5`) or names `localhost`. The check runs on the
//! addresses the connection is made to, so a name cannot pass it and then resolve elsewhere.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Instant;

use toolsmith_model::telemetry::{Attribute, SpanRole, WorkSpan};
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// How many redirects a `GET` or `HEAD` follows.
const MAX_REDIRECTS: usize = 5;

/// The most a tool reads at once, from a file (`mcp.read_file`) or a response body
/// (`http.*`, an OpenAPI tool's call): a tool's heap is limited, and a model's context more.
pub const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// A request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// `GET`, `POST`, … (upper case).
    pub method: String,
    /// The whole URL, query included.
    pub url: String,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body and the content type to send with it unless `headers` names one.
    pub body: Option<(Vec<u8>, Option<&'static str>)>,
}

/// A response of any status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Header names (lower case) and values; a header sent more than once is one entry,
    /// its values joined by `", "` (RFC 9110).
    pub headers: Vec<(String, String)>,
    /// The body, at most [`READ_LIMIT`] bytes.
    pub body: Vec<u8>,
    /// The URL that answered, after redirects.
    pub url: String,
}

impl HttpResponse {
    /// The value of the header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Why a request got no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// The URL is not one the grant lets the tool reach; the message says what to grant.
    #[error("{0}")]
    Denied(String),
    /// The URL does not parse.
    #[error("{0}")]
    BadUrl(String),
    /// A host granted by name resolved to a private address; the message says what to grant.
    #[error("{0}")]
    Refused(String),
    /// The network failed or the body could not be read.
    #[error("{url}: {message}")]
    Failed {
        /// The URL the request was sent to.
        url: String,
        /// What went wrong.
        message: String,
    },
}

/// Sends `request` on behalf of the tool `tool`, whose `net` grant is `granted`, giving up at
/// `deadline`; `GET` and `HEAD` follow redirects to permitted hosts.
///
/// # Errors
///
/// [`NetError`]: a host outside the grant, a refused address, or a failed exchange.
pub fn send(
    request: HttpRequest,
    granted: &[String],
    tool: &str,
    deadline: Instant,
) -> Result<HttpResponse, NetError> {
    // A `CLIENT` span under the request's (docs/http.md, "Telemetry"), named and attributed
    // as OpenTelemetry's HTTP conventions say; free without a request span. The query is
    // left out: it may hold a key.
    let span = WorkSpan::start(
        SpanRole::Client,
        || request.method.clone(),
        || {
            vec![Attribute::new(
                "http.request.method",
                request.method.clone(),
            )]
        },
    );
    let result = exchange(request, granted, tool, deadline, &span);
    match &result {
        Ok(response) => {
            span.set(|| Attribute::new("http.response.status_code", i64::from(response.status)));
            if response.status >= 400 {
                span.fail(
                    || response.status.to_string(),
                    || format!("HTTP {}", response.status),
                );
            }
        }
        Err(error) => span.fail(
            || {
                match error {
                    NetError::Denied(_) => "denied",
                    NetError::BadUrl(_) => "bad_url",
                    NetError::Refused(_) => "refused",
                    NetError::Failed { .. } => "failed",
                }
                .to_owned()
            },
            || error.to_string(),
        ),
    }
    result
}

/// [`send`], in `span`: the exchange, redirects followed.
fn exchange(
    mut request: HttpRequest,
    granted: &[String],
    tool: &str,
    deadline: Instant,
    span: &WorkSpan,
) -> Result<HttpResponse, NetError> {
    let left = deadline.saturating_duration_since(Instant::now());
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(left))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("toolsmith/", env!("CARGO_PKG_VERSION")))
        .build();
    let agent = ureq::Agent::with_parts(
        config,
        DefaultConnector::default(),
        PublicUnlessNamed {
            granted: granted.to_vec(),
        },
    );
    let mut redirects = 0;
    loop {
        let failed = |url: &str, message: String| NetError::Failed {
            url: url.to_owned(),
            message,
        };
        let uri: Uri = request.url.parse().map_err(|error| {
            NetError::BadUrl(format!("`{}` is not a URL: {error}", request.url))
        })?;
        permitted(&uri, granted, tool).map_err(NetError::Denied)?;
        span.set(|| Attribute::new("server.address", uri.host().unwrap_or_default().to_owned()));
        span.set(|| Attribute::new("url.path", uri.path().to_owned()));
        let mut response =
            dispatch(&agent, &request, uri.clone(), span).map_err(|error| match error {
                // The resolver's refusal says all there is to say.
                ureq::Error::Other(refusal) if refusal.is::<Refused>() => {
                    NetError::Refused(refusal.to_string())
                }
                error => failed(&request.url, error.to_string()),
            })?;
        let status = response.status();
        let location = response
            .headers()
            .get("location")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if status.is_redirection()
            && matches!(request.method.as_str(), "GET" | "HEAD")
            && redirects < MAX_REDIRECTS
            && let Some(next) = location.and_then(|location| redirected(&request.url, &location))
        {
            redirects += 1;
            request.url = next;
            continue;
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        for (name, value) in response.headers() {
            let value = String::from_utf8_lossy(value.as_bytes());
            match headers.iter_mut().find(|(key, _)| key == name.as_str()) {
                Some((_, joined)) => {
                    joined.push_str(", ");
                    joined.push_str(&value);
                }
                None => headers.push((name.as_str().to_owned(), value.into_owned())),
            }
        }
        let body = response
            .body_mut()
            .with_config()
            .limit(READ_LIMIT)
            .read_to_vec()
            .map_err(|error| failed(&request.url, error.to_string()))?;
        return Ok(HttpResponse {
            status: status.as_u16(),
            headers,
            body,
            url: request.url,
        });
    }
}

fn dispatch(
    agent: &ureq::Agent,
    request: &HttpRequest,
    uri: Uri,
    span: &WorkSpan,
) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    let mut builder = ureq::http::Request::builder()
        .method(request.method.as_str())
        .uri(uri);
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    // The receiver's spans join the trace, unless the tool sends a trace context of its own.
    if let Some((traceparent, tracestate)) = span.trace_context()
        && !request
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("traceparent"))
    {
        builder = builder.header("traceparent", traceparent);
        if let Some(tracestate) = tracestate {
            builder = builder.header("tracestate", tracestate);
        }
    }
    match &request.body {
        Some((body, content_type)) => {
            if let Some(content_type) = content_type
                && !request
                    .headers
                    .iter()
                    .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
            {
                builder = builder.header("content-type", *content_type);
            }
            agent.run(builder.body(body.as_slice())?)
        }
        None => agent.run(builder.body(())?),
    }
}

/// Where a redirect leads: `location` resolved against the URL that answered, as RFC 3986
/// §5 and browsers resolve it: `//host/path` is another host (whose grant is then checked
/// like any other), `next` a path beside the current one.
fn redirected(from: &str, location: &str) -> Option<String> {
    let mut next = url::Url::parse(from).ok()?.join(location).ok()?;
    next.set_fragment(None);
    Some(next.into())
}

/// Resolves as ureq does, then keeps only public addresses unless the `net` grant that lets
/// the tool reach the host names it by address or as `localhost`.
#[derive(Debug)]
struct PublicUnlessNamed {
    granted: Vec<String>,
}

impl Resolver for PublicUnlessNamed {
    fn resolve(
        &self,
        uri: &Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addresses = DefaultResolver::default().resolve(uri, config, timeout)?;
        if granted_hosts(uri, &self.granted).any(names_an_address) {
            return Ok(addresses);
        }
        let mut public = self.empty();
        for address in addresses.iter().filter(|address| is_public(address.ip())) {
            public.push(*address);
        }
        match addresses.first() {
            Some(refused) if public.is_empty() => Err(ureq::Error::Other(Box::new(Refused(
                private_address(uri, refused.ip()),
            )))),
            _ => Ok(public),
        }
    }
}

/// [`PublicUnlessNamed`]'s refusal, told apart from ureq's own errors.
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Why a host granted by name was not reached at `address`, and what to grant instead.
fn private_address(uri: &Uri, address: IpAddr) -> String {
    let host = uri.host().unwrap_or_default();
    let grant = match (address, uri.port_u16()) {
        (IpAddr::V6(v6), Some(port)) => format!("[{v6}]:{port}"),
        (IpAddr::V6(v6), None) => format!("[{v6}]"),
        (v4, Some(port)) => format!("{v4}:{port}"),
        (v4, None) => v4.to_string(),
    };
    let what = if host.trim_matches(['[', ']']).parse::<IpAddr>().is_ok() {
        format!("{address} is")
    } else {
        format!("`{host}` resolves to {address},")
    };
    format!(
        "{what} a loopback, private or link-local address, and a grant by host name, \
         `*.domain` or `*` reaches public addresses only; if the tool should reach it, grant \
         the address: permissions = {{\"net\": [\"{grant}\"]}}"
    )
}

/// Whether a grant's host is an address (`127.0.0.1`, `::1`) or `localhost`: the grants
/// that reach loopback and private addresses.
fn names_an_address(grant_host: &str) -> bool {
    grant_host.parse::<IpAddr>().is_ok() || grant_host.eq_ignore_ascii_case("localhost")
}

/// Whether `address` is on the public internet: not loopback, private, link-local,
/// unspecified, broadcast, multicast, reserved or shared (carrier-grade NAT). An IPv6
/// address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`,
/// NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:aabb:ccdd::`) counts as that IPv4 address.
fn is_public(address: IpAddr) -> bool {
    let v4_is_public = |v4: Ipv4Addr| {
        let [first, second, ..] = v4.octets();
        let shared = first == 100 && (second & 0xc0) == 64;
        !(v4.is_loopback()
            || v4.is_private()
            || v4.is_link_local()
            || v4.is_unspecified()
            || v4.is_broadcast()
            || v4.is_multicast()
            || first == 0
            || first >= 240
            || shared)
    };
    match address {
        IpAddr::V4(v4) => v4_is_public(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return v4_is_public(v4);
            }
            let [first, second, ..] = v6.segments();
            let site_local = (first & 0xffc0) == 0xfec0;
            // The rest of 64:ff9b::/32 than the well-known NAT64 prefix is for local use.
            let local_nat64 = first == 0x64 && second == 0xff9b;
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_unique_local()
                || v6.is_unicast_link_local()
                || v6.is_multicast()
                || site_local
                || local_nat64)
        }
    }
}

/// The IPv4 address an IPv6 address stands for, if it embeds one: a mapped, compatible
/// (`::1` and `::` included, as `0.0.0.1` and `0.0.0.0`), NAT64 or 6to4 address.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let segments = v6.segments();
    let [.., high, low] = segments;
    let last = Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    match segments {
        [0, 0, 0, 0, 0, 0 | 0xffff, _, _] | [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(last),
        [0x2002, high, low, ..] => Some(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low))),
        _ => None,
    }
}

/// The hosts of the grants in `granted` that let a tool reach `uri`.
fn granted_hosts<'a>(uri: &'a Uri, granted: &'a [String]) -> impl Iterator<Item = &'a str> {
    let host = uri.host().unwrap_or_default().trim_matches(['[', ']']);
    let port = uri.port_u16();
    granted.iter().filter_map(move |grant| {
        let (grant_host, grant_port) = match grant.rsplit_once(':') {
            Some((host, port)) if port.parse::<u16>().is_ok() => (host, port.parse().ok()),
            _ => (grant.as_str(), None),
        };
        let grant_host = grant_host.trim_matches(['[', ']']);
        let host_matches = grant_host == "*"
            || grant_host.eq_ignore_ascii_case(host)
            || grant_host.strip_prefix("*.").is_some_and(|domain| {
                host.len() > domain.len()
                    && host
                        .to_ascii_lowercase()
                        .ends_with(&format!(".{}", domain.to_ascii_lowercase()))
            });
        (host_matches && (grant_port.is_none() || grant_port == port)).then_some(grant_host)
    })
}

/// Whether the tool's `net` permission names `uri`'s host: `api.example.com`, a host and
/// port (`127.0.0.1:8080`), `*.example.com` (its subdomains) or `*` (any).
fn permitted(uri: &Uri, granted: &[String], tool: &str) -> Result<(), String> {
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(format!("`{uri}`: only http and https URLs can be fetched"));
    }
    if granted_hosts(uri, granted).next().is_some() {
        return Ok(());
    }
    let host = uri.host().unwrap_or_default().trim_matches(['[', ']']);
    let port = uri.port_u16();
    let authority = uri.authority().map_or(host, |authority| authority.as_str());
    let grant = if port.is_some() { authority } else { host };
    if granted.is_empty() {
        Err(format!(
            "the tool `{tool}` has no `net` permission; grant the host: permissions = {{\"net\": [\"{grant}\"]}}"
        ))
    } else {
        Err(format!(
            "`{authority}` is not among the hosts the tool `{tool}` may reach ({}); grant it: permissions = {{\"net\": [\"{grant}\"]}}",
            granted.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(url: &str, granted: &[&str]) -> Result<(), String> {
        let granted: Vec<String> = granted.iter().map(|g| (*g).to_owned()).collect();
        permitted(&url.parse().unwrap(), &granted, "forecast_get")
    }

    #[test]
    fn hosts_match_exactly_by_port_or_by_wildcard() {
        assert!(check("https://api.example.com/v1", &["api.example.com"]).is_ok());
        assert!(check("https://API.example.com/v1", &["api.example.com"]).is_ok());
        assert!(check("http://127.0.0.1:8080/x", &["127.0.0.1:8080"]).is_ok());
        assert!(check("http://127.0.0.1:9090/x", &["127.0.0.1:8080"]).is_err());
        assert!(check("http://127.0.0.1:9090/x", &["127.0.0.1"]).is_ok());
        assert!(check("https://eu.api.example.com/", &["*.example.com"]).is_ok());
        assert!(check("https://example.com/", &["*.example.com"]).is_err());
        assert!(check("https://evilexample.com/", &["*.example.com"]).is_err());
        assert!(check("https://anything.test/", &["*"]).is_ok());
    }

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            // Regression test: IPv4-compatible, NAT64 and 6to4
            // addresses carry the IPv4 address they stand for.
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
            "fec0::1",
            "ff02::1",
            "224.0.0.1",
            "240.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:808:808::1",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    // Regression test: a network-path reference (`//host/path`) is
    // another host, not a path on this one.
    #[test]
    fn redirects_resolve_as_references() {
        let from = "http://127.0.0.1:8080/a/b?q=1";
        for (location, expected) in [
            ("//127.0.0.1:18082/x", "http://127.0.0.1:18082/x"),
            ("/c", "http://127.0.0.1:8080/c"),
            ("c", "http://127.0.0.1:8080/a/c"),
            ("../c#part", "http://127.0.0.1:8080/c"),
            ("?q=2", "http://127.0.0.1:8080/a/b?q=2"),
            ("https://example.com/", "https://example.com/"),
            ("ftp://example.com/x", "ftp://example.com/x"),
        ] {
            assert_eq!(
                redirected(from, location).as_deref(),
                Some(expected),
                "{location}"
            );
        }
    }

    #[test]
    fn addresses_and_localhost_are_grants_by_address() {
        for grant in ["127.0.0.1", "::1", "10.0.0.5", "localhost", "LocalHost"] {
            assert!(names_an_address(grant), "{grant}");
        }
        for grant in [
            "*",
            "*.example.com",
            "api.example.com",
            "localhost.example.com",
        ] {
            assert!(!names_an_address(grant), "{grant}");
        }
        let granted = ["*".to_owned(), "127.0.0.1:8080".to_owned()];
        let uri: Uri = "http://127.0.0.1:8080/x".parse().unwrap();
        assert_eq!(
            granted_hosts(&uri, &granted).collect::<Vec<_>>(),
            ["*", "127.0.0.1"]
        );
    }

    #[test]
    fn a_refusal_says_what_to_grant() {
        let error = check("https://api.example.com/v1", &[]).unwrap_err();
        assert!(error.contains("has no `net` permission"), "{error}");
        assert!(
            error.contains(r#"permissions = {"net": ["api.example.com"]}"#),
            "{error}"
        );
        let error = check("http://127.0.0.1:8080/", &["example.com"]).unwrap_err();
        assert!(error.contains(r#"["127.0.0.1:8080"]"#), "{error}");
        assert!(
            check("ftp://example.com/x", &["*"])
                .unwrap_err()
                .contains("only http")
        );
    }
}
