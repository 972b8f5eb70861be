//! An upstream behind its own OAuth (docs/gateway.md, "Upstreams behind their own OAuth"):
//! Toolsmith reaches it as an OAuth client would, as the MCP authorization specification
//! (2025-11-25) describes. The upstream's first 401 names its protected-resource metadata
//! (RFC 9728, `WWW-Authenticate: Bearer resource_metadata="…"`; without it the well-known
//! addresses are tried), which names the authorization server, whose metadata (RFC 8414,
//! then `OpenID` Connect discovery) names the token endpoint. A token comes from the client
//! credentials grant with the upstream's URL as the `resource` (RFC 8707); it is fetched again
//! before it expires, and once when the upstream refuses it.
//!
//! The caller's own token is never sent on, unless the table says `forward_caller_token =
//! true`: then a call made for a caller with an access token sends that token instead. The
//! call's request carries only a random handle to the token (in `_meta`, under
//! [`CALLER_META_KEY`]), which [`Authorized`] takes out before the request is sent, so no log of
//! rmcp's ever holds a token.
//!
//! Tokens, the client secret and the caller's token never appear in a log line or an error
//! message.

//!
//! - `tokens.rs`: discovery and the client credentials grant ([`Credentials`]).
//! - `client.rs`: rmcp's HTTP client with the right token on each request ([`Authorized`]),
//!   and the caller's token lent to one call ([`LentToken`]).

mod client;
mod tokens;

use serde_json::Value;

pub(crate) use client::{Authorized, LentToken};
pub(crate) use tokens::Credentials;

/// The key of a forwarded call's `_meta` that names the caller's token for
/// [`Authorized`] to send; taken out before the request leaves Toolsmith.
pub const CALLER_META_KEY: &str = "toolsmith/caller-token";

/// `oauth = { client_id = "…", client_secret = "${VAR}", scopes = [...] }` of an
/// `[upstream.NAME]`. Its `Debug` leaves the secret out.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthClient {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret` as written: a `${VAR}` reference, read from the environment when a
    /// token is fetched. `None` for a public client.
    pub client_secret: Option<String>,
    /// `scopes`, asked for in the token request (`scope`, space-separated).
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// The keys `oauth` may have.
const OAUTH_KEYS: &[&str] = &["client_id", "client_secret", "scopes"];

impl OAuthClient {
    /// Reads `[upstream.NAME] oauth` (`value`, as JSON).
    ///
    /// # Errors
    ///
    /// What is wrong, naming the key and what to write instead.
    pub(crate) fn parse(name: &str, value: &Value) -> Result<Self, String> {
        let Value::Object(table) = value else {
            return Err(format!(
                "`[upstream.{name}] oauth` must be a table: oauth = {{ client_id = \"…\", client_secret = \"${{VAR}}\", scopes = [\"…\"] }}"
            ));
        };
        if let Some(key) = table.keys().find(|key| !OAUTH_KEYS.contains(&key.as_str())) {
            let hint = toolsmith_model::names::suggestion(key, OAUTH_KEYS.iter().copied())
                .map(|hint| format!("; {hint}"))
                .unwrap_or_default();
            return Err(format!(
                "`[upstream.{name}] oauth` has unknown key `{key}`{hint} (known: {})",
                OAUTH_KEYS.join(", ")
            ));
        }
        let client_id = match table.get("client_id") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
            Some(Value::String(_)) => {
                return Err(format!(
                    "`[upstream.{name}] oauth.client_id` is empty; give the client id the authorization server registered for Toolsmith"
                ));
            }
            Some(_) => {
                return Err(format!(
                    "`[upstream.{name}] oauth.client_id` must be a string"
                ));
            }
            None => {
                return Err(format!(
                    "`[upstream.{name}] oauth` needs `client_id`: the client id the upstream's authorization server registered for Toolsmith"
                ));
            }
        };
        let client_secret = match table.get("client_secret") {
            None => None,
            Some(Value::String(secret)) if secret.contains("${") => Some(secret.clone()),
            Some(Value::String(_)) => {
                return Err(format!(
                    "`[upstream.{name}] oauth.client_secret` must name an environment variable, as `client_secret = \"${{VAR}}\"`, so that no secret sits in toolsmith.toml; set VAR where Toolsmith runs"
                ));
            }
            Some(_) => {
                return Err(format!(
                    "`[upstream.{name}] oauth.client_secret` must be a string: \"${{VAR}}\""
                ));
            }
        };
        let scopes = match table.get("scopes") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    format!("`[upstream.{name}] oauth.scopes` must be a list of strings")
                })?,
            Some(Value::String(scopes)) => {
                scopes.split_ascii_whitespace().map(str::to_owned).collect()
            }
            Some(_) => {
                return Err(format!(
                    "`[upstream.{name}] oauth.scopes` must be a list of strings"
                ));
            }
        };
        Ok(Self {
            client_id,
            client_secret,
            scopes,
        })
    }
}

/// `oauth` and `forward_caller_token` of the `[upstream.NAME]` `table` of a `url`, whose
/// `headers` are given.
///
/// # Errors
///
/// What is wrong, naming the key.
pub(crate) fn http_keys(
    name: &str,
    table: &serde_json::Map<String, Value>,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<(Option<OAuthClient>, bool), String> {
    let oauth = table
        .get("oauth")
        .map(|oauth| OAuthClient::parse(name, oauth))
        .transpose()?;
    if oauth.is_some()
        && let Some(key) = headers
            .keys()
            .find(|key| key.eq_ignore_ascii_case("authorization"))
    {
        return Err(format!(
            "`[upstream.{name}]` has both `oauth` and `headers.{key}`; the token `oauth` gets is sent as the `Authorization` header, so remove `headers.{key}`"
        ));
    }
    let forward_caller_token = match table.get("forward_caller_token") {
        None => false,
        Some(Value::Bool(forward)) => *forward,
        Some(_) => {
            return Err(format!(
                "`[upstream.{name}] forward_caller_token` must be `true` or `false`"
            ));
        }
    };
    Ok((oauth, forward_caller_token))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_table_says_what_to_fix() {
        let parse = |value: Value| OAuthClient::parse("remote", &value);
        assert!(
            parse(json!({"client_secret": "${S}"}))
                .unwrap_err()
                .contains("needs `client_id`")
        );
        assert!(
            parse(json!({"client_id": "c", "client_secret": "hunter2"}))
                .unwrap_err()
                .contains("must name an environment variable")
        );
        assert!(
            parse(json!({"client_id": "c", "scope": ["a"]}))
                .unwrap_err()
                .contains("unknown key `scope`")
        );
        let client =
            parse(json!({"client_id": "c", "client_secret": "${S}", "scopes": ["a", "b"]}))
                .unwrap();
        assert_eq!(client.scopes, ["a", "b"]);
        assert!(!format!("{client:?}").contains("${S}"));
    }
}
