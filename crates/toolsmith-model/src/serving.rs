//! Settings for serving a team over HTTP: the OAuth resource server (`[auth]`,
//! `--oauth-*`; docs/auth.md) and the rate limits (`[limits]`; docs/limits.md). They live in
//! the model, plain data with their defaults written once, because two crates fill them: the
//! folder's `toolsmith.toml` reader and the CLI's flags, and the server reads them.

use std::collections::BTreeMap;
use std::time::Duration;

/// How the HTTP endpoint checks OAuth access tokens (`[auth]`, `--oauth-issuer`;
/// docs/auth.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthSettings {
    /// The authorization server whose tokens are accepted: `iss` must equal it, and its
    /// metadata names the JWKS.
    pub issuer: String,
    /// What `aud` must contain; `None`: this server's own URL ([`OAuthSettings::resource`],
    /// RFC 8707).
    pub audience: Option<String>,
    /// This server's URL as clients know it (`https://tools.example.com/mcp`); `None`:
    /// `http://` + the request's `Host` + `/mcp`.
    pub resource: Option<String>,
    /// The JWKS address, instead of the one the issuer's metadata names.
    pub jwks_uri: Option<String>,
    /// Scopes every token must hold (403 `insufficient_scope` otherwise).
    pub required_scopes: Vec<String>,
    /// Leeway for `exp` and `nbf`.
    pub clock_skew: Duration,
    /// Scopes the metadata lists besides the required ones (the tools' `scopes`).
    pub scopes_supported: Vec<String>,
    /// RFC 7662 token introspection, for opaque (non-JWT) access tokens.
    pub introspection: Option<Introspection>,
}

impl OAuthSettings {
    /// The clock skew unless configured otherwise.
    pub const DEFAULT_CLOCK_SKEW: Duration = Duration::from_mins(1);

    /// Tokens of `issuer`, for this server's own URL, with a minute of clock skew.
    pub fn new(issuer: String) -> Self {
        Self {
            issuer,
            audience: None,
            resource: None,
            jwks_uri: None,
            required_scopes: Vec::new(),
            clock_skew: Self::DEFAULT_CLOCK_SKEW,
            scopes_supported: Vec::new(),
            introspection: None,
        }
    }
}

/// Where and as whom to introspect opaque access tokens (RFC 7662; docs/auth.md).
#[derive(Clone, PartialEq, Eq)]
pub struct Introspection {
    /// The introspection endpoint (`introspection_url`).
    pub url: String,
    /// This server's client id at the authorization server (HTTP Basic authentication).
    pub client_id: String,
    /// Its client secret.
    pub client_secret: String,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Introspection")
            .field("url", &self.url)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .finish()
    }
}

/// Rate limits and quotas (`[limits]` in `toolsmith.toml`; docs/limits.md). Every limit is
/// off unless set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitSettings {
    /// `calls_per_minute`: tool calls one caller (a token's subject, else a client address;
    /// over stdio, the one client) may start per minute.
    pub calls_per_minute: Option<u32>,
    /// `concurrent_calls`: tool calls one caller may have running at once.
    pub concurrent_calls: Option<u32>,
    /// `[limits.tools]`: calls per minute of each named tool, over all callers.
    pub tools: BTreeMap<String, u32>,
}

impl LimitSettings {
    /// The length of a rate limit's window.
    pub const WINDOW: Duration = Duration::from_mins(1);

    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.calls_per_minute.is_none() && self.concurrent_calls.is_none() && self.tools.is_empty()
    }
}
