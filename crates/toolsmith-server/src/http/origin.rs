//! The `Origin` rule for the paths this crate answers itself (rmcp checks `/mcp`'s): a
//! request with an `Origin` must come from an allowed origin, with rmcp's matching (RFC 6454
//! `(scheme, host, port)`; `:*` is any port, an entry without a port any port, `null`
//! matches `Origin: null`, `*` any origin), so every path of the port answers a browser
//! page the same way. A request without an `Origin` (not from a browser) passes.

use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

/// The origins a browser page may call from; `None`: any.
#[derive(Debug, Clone)]
pub(super) struct OriginRule(Option<Vec<Allowed>>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    Null,
    Origin {
        scheme: String,
        host: String,
        /// `None`: any port.
        port: Option<u16>,
    },
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

    /// Accepts the origins in `allowed` (`scheme://host[:port]`, `scheme://host:*`, `null`);
    /// `*` accepts any. Entries that are none of these are left out.
    pub(super) fn new<'a>(allowed: impl IntoIterator<Item = &'a str>) -> Self {
        let mut origins = Vec::new();
        for entry in allowed {
            let entry = entry.trim();
            if entry == "*" {
                return Self(None);
            }
            if entry.eq_ignore_ascii_case("null") {
                origins.push(Allowed::Null);
            } else if let Some(base) = entry.strip_suffix(":*") {
                origins.extend(parse(base).filter(|(_, _, port)| port.is_none()).map(
                    |(scheme, host, _)| Allowed::Origin {
                        scheme,
                        host,
                        port: None,
                    },
                ));
            } else if let Some((scheme, host, port)) = parse(entry) {
                origins.push(Allowed::Origin { scheme, host, port });
            }
        }
        Self(Some(origins))
    }

    /// The 403 for a request whose `Origin` is not allowed (or not an origin); `None` to
    /// let it through.
    pub(super) fn refuse(&self, headers: &HeaderMap) -> Option<Response> {
        let allowed = self.0.as_ref()?;
        let origin = headers.get(header::ORIGIN)?;
        let origin = origin.to_str().ok().map(str::trim).unwrap_or_default();
        let accepted = if origin.eq_ignore_ascii_case("null") {
            allowed.contains(&Allowed::Null)
        } else {
            parse(origin).is_some_and(|(scheme, host, port)| {
                let port = port.or_else(|| default_port(&scheme));
                allowed.iter().any(|allowed| match allowed {
                    Allowed::Null => false,
                    Allowed::Origin {
                        scheme: allowed_scheme,
                        host: allowed_host,
                        port: allowed_port,
                    } => {
                        *allowed_scheme == scheme
                            && *allowed_host == host
                            && allowed_port.is_none_or(|allowed| port == Some(allowed))
                    }
                })
            })
        };
        if accepted {
            return None;
        }
        tracing::warn!(
            origin,
            "refused a request from an origin that is not allowed"
        );
        Some((StatusCode::FORBIDDEN, "Forbidden: Origin not allowed").into_response())
    }
}

/// `(scheme, host, port)` of `scheme://host[:port]`, lowercased, brackets off IPv6.
fn parse(origin: &str) -> Option<(String, String, Option<u16>)> {
    let uri = Uri::try_from(origin).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    let host = authority
        .host()
        .trim_matches(['[', ']'])
        .to_ascii_lowercase();
    Some((scheme, host, authority.port_u16()))
}

/// The port a scheme implies when an origin omits it (RFC 6454 §4).
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(value: &str) -> HeaderMap {
        super::super::peek::one_header(header::ORIGIN, value)
    }

    #[test]
    fn origins_match_by_scheme_host_and_port() {
        let rule = OriginRule::new([
            "http://localhost:*",
            "https://app.example.com",
            "http://intranet:8080",
        ]);
        assert!(rule.refuse(&HeaderMap::new()).is_none(), "no Origin");
        for allowed in [
            "http://localhost:3000",
            "http://LOCALHOST",
            "https://app.example.com",
            "https://app.example.com:8443",
            "http://intranet:8080",
        ] {
            assert!(rule.refuse(&origin(allowed)).is_none(), "{allowed}");
        }
        for refused in [
            "https://localhost:3000",
            "http://evil.example",
            "http://intranet",
            "null",
            "not an origin",
        ] {
            let refusal = rule.refuse(&origin(refused));
            assert_eq!(
                refusal.map(|response| response.status()),
                Some(StatusCode::FORBIDDEN),
                "{refused}"
            );
        }
        assert!(
            OriginRule::new(["*"])
                .refuse(&origin("http://evil.example"))
                .is_none()
        );
        assert!(OriginRule::new(["null"]).refuse(&origin("null")).is_none());
    }
}
