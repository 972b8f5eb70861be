//! The tokens of an upstream behind its own OAuth: its authorization server discovered
//! from its metadata (RFC 9728, RFC 8414, `OpenID` Connect discovery, in the order the MCP
//! specification gives), a token from the client credentials grant (RFC 6749 §4.4) for the
//! upstream's URL (RFC 8707), fetched again before it expires and when the upstream refuses
//! it. Blocking (ureq): called off the async threads.

use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;

use super::OAuthClient;

/// How long one request to an authorization server or for metadata may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// A token is fetched again when this share of its lifetime is left (at most
/// [`REFRESH_MARGIN`]).
const REFRESH_SHARE: u32 = 5;

/// The most of a token's lifetime left when it is fetched again.
const REFRESH_MARGIN: Duration = Duration::from_mins(1);

/// How the token endpoint wants the client to authenticate (RFC 8414
/// `token_endpoint_auth_methods_supported`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthMethod {
    /// HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1); the default.
    Basic,
    /// `client_id` and `client_secret` in the form.
    Post,
    /// A public client: `client_id` in the form, no secret.
    None,
}

/// Where tokens come from, as discovered.
#[derive(Debug, Clone)]
struct Endpoint {
    token_endpoint: String,
    method: AuthMethod,
}

/// A token and when to fetch the next one.
struct Token {
    value: String,
    /// When it should be fetched again (before it expires); `None` when the server gave no
    /// `expires_in`: it is then used until the upstream refuses it.
    refresh_at: Option<Instant>,
    /// When it expires.
    expires_at: Option<Instant>,
}

#[derive(Default)]
struct TokenState {
    endpoint: Option<Endpoint>,
    token: Option<Token>,
    /// Tokens fetched so far.
    fetched: u64,
}

/// The tokens of one upstream: discovery, the client credentials grant, refresh.
pub(crate) struct Credentials {
    /// `NAME`, for messages.
    upstream: String,
    /// The upstream's URL: the `resource` of every token request.
    url: String,
    client: OAuthClient,
    agent: ureq::Agent,
    state: Mutex<TokenState>,
    /// Held while a token is fetched: one fetch at a time; requests meanwhile wait and use it.
    fetching: Mutex<()>,
}

/// What a request may use now.
pub(super) enum Cached {
    /// A token that is not due for refresh.
    Fresh(String),
    /// A token is due (or there is none) and the token endpoint is known.
    Due,
    /// Nothing is discovered yet: the request goes without a token, and the upstream's
    /// 401 says where to get one.
    Undiscovered,
}

impl Credentials {
    pub(crate) fn new(upstream: &str, url: &str, client: OAuthClient) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(FETCH_TIMEOUT))
            .http_status_as_error(false)
            .build()
            .into();
        Self {
            upstream: upstream.to_owned(),
            url: url.to_owned(),
            client,
            agent,
            state: Mutex::default(),
            fetching: Mutex::new(()),
        }
    }

    pub(super) fn cached(&self) -> Cached {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match (&state.token, &state.endpoint) {
            (Some(token), _) if token.refresh_at.is_none_or(|at| Instant::now() < at) => {
                Cached::Fresh(token.value.clone())
            }
            (_, Some(_)) => Cached::Due,
            (_, None) => Cached::Undiscovered,
        }
    }

    /// A token to send: the one held, else a new one (blocking). When fetching a new one
    /// fails while the one held has not expired yet, the one held is used.
    pub(super) fn current(&self) -> Result<String, String> {
        let _fetching = self.fetching.lock().unwrap_or_else(PoisonError::into_inner);
        if let Cached::Fresh(token) = self.cached() {
            return Ok(token);
        }
        match self.fetch(None) {
            Ok(token) => Ok(token),
            Err(error) => {
                let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                match &state.token {
                    Some(token) if token.expires_at.is_none_or(|at| Instant::now() < at) => {
                        tracing::warn!(upstream = %self.upstream, %error, "could not refresh the upstream's access token; using the current one until it expires");
                        Ok(token.value.clone())
                    }
                    _ => Err(error),
                }
            }
        }
    }

    /// A new token after the upstream refused `rejected` (or asked for one, when nothing
    /// was sent), with `challenge` its `WWW-Authenticate` header (blocking). A token that
    /// another request fetched meanwhile is used as it is.
    pub(super) fn renew(&self, rejected: Option<&str>, challenge: &str) -> Result<String, String> {
        let _fetching = self.fetching.lock().unwrap_or_else(PoisonError::into_inner);
        {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(token) = &state.token
                && Some(token.value.as_str()) != rejected
            {
                return Ok(token.value.clone());
            }
        }
        self.fetch(Some(challenge))
    }

    /// Discovers the token endpoint when it is not known yet (from `challenge`'s
    /// `resource_metadata` if given), then fetches a token and keeps it (blocking).
    fn fetch(&self, challenge: Option<&str>) -> Result<String, String> {
        let known = self
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .endpoint
            .clone();
        let endpoint = if let Some(endpoint) = known {
            endpoint
        } else {
            let endpoint = self.discover(challenge)?;
            tracing::info!(upstream = %self.upstream, token_endpoint = %endpoint.token_endpoint, "discovered the upstream's authorization server");
            endpoint
        };
        let token = self.request_token(&endpoint)?;
        let value = token.value.clone();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.endpoint = Some(endpoint);
        state.token = Some(token);
        state.fetched += 1;
        tracing::debug!(upstream = %self.upstream, fetched = state.fetched, "got an access token for the upstream");
        Ok(value)
    }

    /// The token endpoint, from the upstream's protected-resource metadata and its
    /// authorization server's metadata.
    fn discover(&self, challenge: Option<&str>) -> Result<Endpoint, String> {
        let named = challenge.and_then(|header| challenge_parameter(header, "resource_metadata"));
        let candidates = match named {
            Some(url) => vec![url],
            None => protected_resource_addresses(&self.url)?,
        };
        let mut tried = Vec::new();
        let mut metadata = None;
        for candidate in &candidates {
            match self.get_json(candidate) {
                Ok(document) => {
                    metadata = Some((candidate, document));
                    break;
                }
                Err(error) => tried.push(error),
            }
        }
        let Some((address, metadata)) = metadata else {
            return Err(format!(
                "has no protected-resource metadata (RFC 9728) to say where to get a token: {}",
                tried.join("; ")
            ));
        };
        if let Some(resource) = metadata.get("resource").and_then(Value::as_str)
            && resource.trim_end_matches('/') != self.url.trim_end_matches('/')
        {
            return Err(format!(
                "publishes metadata at {address} for the resource {resource}, not for {}; check `url`",
                self.url
            ));
        }
        let Some(issuer) = metadata
            .get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|servers| servers.first())
            .and_then(Value::as_str)
        else {
            return Err(format!(
                "names no `authorization_servers` in its metadata at {address}"
            ));
        };
        let mut tried = Vec::new();
        for candidate in authorization_server_addresses(issuer)? {
            match self.get_json(&candidate) {
                Ok(document) => return endpoint(issuer, &candidate, &document),
                Err(error) => tried.push(error),
            }
        }
        Err(format!(
            "names the authorization server {issuer}, which has no metadata (RFC 8414 or OpenID Connect discovery): {}",
            tried.join("; ")
        ))
    }

    fn get_json(&self, url: &str) -> Result<Value, String> {
        let mut response = self
            .agent
            .get(url)
            .header("Accept", "application/json")
            .call()
            .map_err(|error| format!("{url}: {error}"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("{url} answered {status}"));
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
            .map_err(|error| format!("{url}: {error}"))?;
        serde_json::from_str(&text)
            .map_err(|error| format!("{url} answered something that is not JSON: {error}"))
    }

    /// The client credentials grant at `endpoint` (RFC 6749 §4.4), for the upstream's URL
    /// (RFC 8707 `resource`).
    fn request_token(&self, endpoint: &Endpoint) -> Result<Token, String> {
        let secret = match &self.client.client_secret {
            None => None,
            Some(written) => Some(
                toolsmith_model::sources::expand(written, |name| std::env::var(name).ok())
                    .map_err(|error| format!("`oauth.client_secret`: {error}"))?,
            ),
        };
        let scope = self.client.scopes.join(" ");
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("resource", self.url.as_str()),
        ];
        if !scope.is_empty() {
            form.push(("scope", &scope));
        }
        // No redirect: the client's credentials go to the token endpoint the metadata names,
        // nowhere else.
        let mut request = self
            .agent
            .post(&endpoint.token_endpoint)
            .config()
            .max_redirects(0)
            .build()
            .header("Accept", "application/json");
        let basic;
        match (endpoint.method, &secret) {
            (AuthMethod::Basic, Some(secret)) => {
                basic = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(format!(
                        "{}:{}",
                        form_encode(&self.client.client_id),
                        form_encode(secret)
                    ))
                );
                request = request.header("Authorization", &basic);
            }
            (AuthMethod::Post, Some(secret)) => {
                form.push(("client_id", &self.client.client_id));
                form.push(("client_secret", secret));
            }
            (_, None) | (AuthMethod::None, _) => form.push(("client_id", &self.client.client_id)),
        }
        let from = &endpoint.token_endpoint;
        let mut response = request
            .send_form(form)
            .map_err(|error| format!("cannot get a token from {from}: {error}"))?;
        let status = response.status();
        let text = response
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
            .map_err(|error| format!("cannot get a token from {from}: {error}"))?;
        let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if !status.is_success() {
            // RFC 6749 §5.2: `error` and `error_description` say why; neither holds a secret.
            let error = answer.get("error").and_then(Value::as_str).unwrap_or("");
            let description = answer
                .get("error_description")
                .and_then(Value::as_str)
                .map(|text| format!(" ({text})"))
                .unwrap_or_default();
            let hint = if error == "invalid_client" || status == 401 {
                "; check `oauth.client_id` and `oauth.client_secret`"
            } else if error == "invalid_scope" {
                "; check `oauth.scopes`"
            } else {
                ""
            };
            return Err(format!(
                "cannot get a token from {from}: it answered {status} {error}{description}{hint}"
            ));
        }
        let Some(value) = answer.get("access_token").and_then(Value::as_str) else {
            return Err(format!(
                "cannot get a token from {from}: its answer has no `access_token`"
            ));
        };
        if let Some(kind) = answer.get("token_type").and_then(Value::as_str)
            && !kind.eq_ignore_ascii_case("bearer")
        {
            return Err(format!(
                "cannot use the token from {from}: its `token_type` is `{kind}`, not `Bearer`"
            ));
        }
        let now = Instant::now();
        let lifetime = answer
            .get("expires_in")
            .and_then(|value| {
                value
                    .as_u64()
                    .or_else(|| value.as_str().and_then(|text| text.parse().ok()))
            })
            .map(Duration::from_secs);
        Ok(Token {
            value: value.to_owned(),
            refresh_at: lifetime
                .map(|lifetime| now + lifetime.saturating_sub(refresh_margin(lifetime))),
            expires_at: lifetime.map(|lifetime| now + lifetime),
        })
    }
}

/// How long before it expires a token of `lifetime` is fetched again: a fifth of its
/// lifetime, at most a minute (a token of an hour is renewed after 59 minutes, one of 10
/// seconds after 8).
fn refresh_margin(lifetime: Duration) -> Duration {
    (lifetime / REFRESH_SHARE).min(REFRESH_MARGIN)
}

/// The token endpoint and the client authentication the metadata `document` (read from
/// `address`) of the authorization server `issuer` gives.
fn endpoint(issuer: &str, address: &str, document: &Value) -> Result<Endpoint, String> {
    if let Some(named) = document.get("issuer").and_then(Value::as_str)
        && named.trim_end_matches('/') != issuer.trim_end_matches('/')
    {
        return Err(format!(
            "the metadata at {address} is for the issuer {named}, not {issuer}"
        ));
    }
    let Some(token_endpoint) = document.get("token_endpoint").and_then(Value::as_str) else {
        return Err(format!(
            "the authorization server's metadata at {address} names no `token_endpoint`"
        ));
    };
    let methods: Option<Vec<&str>> = document
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|methods| methods.iter().filter_map(Value::as_str).collect());
    // RFC 8414 §2: without the list, client_secret_basic is the default; it is also what
    // is tried when the list names none of the three.
    let method = match methods {
        Some(methods)
            if methods.contains(&"client_secret_post")
                && !methods.contains(&"client_secret_basic") =>
        {
            AuthMethod::Post
        }
        Some(methods) if methods == ["none"] => AuthMethod::None,
        _ => AuthMethod::Basic,
    };
    Ok(Endpoint {
        token_endpoint: token_endpoint.to_owned(),
        method,
    })
}

/// The well-known addresses of the protected-resource metadata of `resource` (RFC 9728
/// §3.1), in the order the MCP specification tries them: with the resource's path, then at
/// the root.
fn protected_resource_addresses(resource: &str) -> Result<Vec<String>, String> {
    well_known(resource, "oauth-protected-resource").map(|(with_path, root)| {
        let mut addresses = vec![with_path];
        if !addresses.contains(&root) {
            addresses.push(root);
        }
        addresses
    })
}

/// The addresses of the metadata of the authorization server `issuer`, in the order the
/// MCP specification (2025-11-25, "Authorization Server Metadata Discovery") tries them:
/// RFC 8414 with the path inserted, `OpenID` Connect with the path inserted, `OpenID`
/// Connect with the path appended; for an issuer without a path, RFC 8414 then `OpenID`
/// Connect.
fn authorization_server_addresses(issuer: &str) -> Result<Vec<String>, String> {
    let (oauth, _) = well_known(issuer, "oauth-authorization-server")?;
    let (openid, _) = well_known(issuer, "openid-configuration")?;
    let mut addresses = vec![oauth, openid];
    let appended = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    if !addresses.contains(&appended) {
        addresses.push(appended);
    }
    Ok(addresses)
}

/// `https://host/.well-known/NAME/path` and `https://host/.well-known/NAME` for `url`.
fn well_known(url: &str, name: &str) -> Result<(String, String), String> {
    let parsed = url::Url::parse(url).map_err(|error| format!("`{url}` is not a URL: {error}"))?;
    let origin = parsed.origin().ascii_serialization();
    let path = parsed.path().trim_end_matches('/');
    Ok((
        format!("{origin}/.well-known/{name}{path}"),
        format!("{origin}/.well-known/{name}"),
    ))
}

/// The parameter `name` of a `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3), quoted
/// or not.
fn challenge_parameter(header: &str, name: &str) -> Option<String> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before = lower[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = header[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let value = match rest.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default(),
            None => rest.split([',', ' ']).next().unwrap_or_default(),
        };
        return (!value.is_empty()).then(|| value.to_owned());
    }
    None
}

/// `application/x-www-form-urlencoded` encoding of one value (what RFC 6749 §2.3.1 asks
/// of the client id and secret before they are joined for HTTP Basic).
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(char::from(byte));
            }
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
    out
}

/// For messages: the tokens fetched so far for `credentials` (tests, docs).
#[cfg(test)]
fn fetched(credentials: &Credentials) -> u64 {
    credentials
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .fetched
}
#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn challenge_names_the_metadata() {
        let header = r#"Bearer error="invalid_token", resource_metadata="http://h:1/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(
            challenge_parameter(header, "resource_metadata").as_deref(),
            Some("http://h:1/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            challenge_parameter("Bearer realm=x", "resource_metadata"),
            None
        );
        assert_eq!(
            challenge_parameter(
                "Bearer resource_metadata=http://a/b, x=1",
                "resource_metadata"
            )
            .as_deref(),
            Some("http://a/b")
        );
    }

    #[test]
    fn discovery_tries_the_addresses_the_mcp_specification_lists() {
        assert_eq!(
            protected_resource_addresses("https://tools.example.com/public/mcp").unwrap(),
            [
                "https://tools.example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://tools.example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            authorization_server_addresses("https://auth.example.com/tenant1").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            authorization_server_addresses("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn the_auth_method_follows_the_metadata() {
        let method = |methods: Value| {
            let mut document = json!({"token_endpoint": "https://a/token"});
            if !methods.is_null() {
                document["token_endpoint_auth_methods_supported"] = methods;
            }
            endpoint("https://a", "https://a/.well-known/x", &document)
                .unwrap()
                .method
        };
        assert_eq!(method(Value::Null), AuthMethod::Basic);
        assert_eq!(method(json!(["client_secret_post"])), AuthMethod::Post);
        assert_eq!(
            method(json!(["client_secret_post", "client_secret_basic"])),
            AuthMethod::Basic
        );
        let error = endpoint(
            "https://a",
            "x",
            &json!({"issuer": "https://b", "token_endpoint": "t"}),
        )
        .unwrap_err();
        assert!(error.contains("for the issuer https://b"), "{error}");
    }

    #[test]
    fn tokens_are_renewed_before_they_expire() {
        assert_eq!(
            refresh_margin(Duration::from_hours(1)),
            Duration::from_mins(1)
        );
        assert_eq!(
            refresh_margin(Duration::from_secs(10)),
            Duration::from_secs(2)
        );
    }

    #[test]
    fn an_unset_secret_is_named_and_nothing_is_sent() {
        let credentials = Credentials::new(
            "remote",
            "http://127.0.0.1:9/mcp",
            OAuthClient {
                client_id: "c".into(),
                client_secret: Some("${TOOLSMITH_TEST_UNSET_SECRET}".into()),
                scopes: Vec::new(),
            },
        );
        let endpoint = Endpoint {
            token_endpoint: "http://127.0.0.1:9/token".into(),
            method: AuthMethod::Basic,
        };
        let error = credentials.request_token(&endpoint).err().unwrap();
        assert!(
            error.contains("`oauth.client_secret`: environment variable `TOOLSMITH_TEST_UNSET_SECRET` is not set"),
            "{error}"
        );
        assert_eq!(fetched(&credentials), 0);
    }
}
