//! Verifying OAuth access tokens: JWTs checked against the issuer's JWKS, discovered from
//! its metadata (RFC 8414, or `OpenID` Connect discovery), cached, and fetched again when a
//! token names a key id the cache does not hold, at most once per [`MIN_REFRESH`]
//! (docs/auth.md, "Tokens").

use std::sync::{PoisonError, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use toolsmith_model::Caller;

use super::OAuthSettings;

/// The shortest time between two fetches of the JWKS: a stream of tokens with made-up key
/// ids cannot turn into a stream of requests to the issuer.
pub(super) const MIN_REFRESH: Duration = Duration::from_secs(1);

/// How long a fetch from the issuer may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The signature algorithms accepted: asymmetric only, so `none` and HS* (a public key
/// used as an HMAC secret) are refused before any key is looked at.
const ALGORITHMS: [Algorithm; 3] = [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA];

/// Why a token was refused; the text goes into the 401's `error_description`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TokenError {
    /// Not a JWT, a bad signature, or claims that do not fit.
    #[error("the access token is not valid: {0}")]
    Invalid(String),
    /// Signed with an algorithm other than `RS256`, `ES256` or `EdDSA`.
    #[error("the access token is signed with `{0}`; accepted: RS256, ES256, EdDSA")]
    Algorithm(String),
    /// No key of the issuer's JWKS has the token's key id, even after fetching it again.
    #[error("the access token's key id `{0}` is not in the issuer's JWKS")]
    UnknownKey(String),
    /// The issuer's metadata or JWKS could not be fetched.
    #[error("the issuer's keys could not be fetched: {0}")]
    Issuer(String),
}

/// The issuer's keys, fetched on first use.
pub(crate) struct KeyCache {
    settings: OAuthSettings,
    agent: ureq::Agent,
    keys: RwLock<Fetched>,
}

#[derive(Default)]
struct Fetched {
    keys: Vec<Jwk>,
    at: Option<Instant>,
    /// Found in the issuer's metadata (or configured) once.
    jwks_uri: Option<String>,
}

/// The claims read from an access token; `exp`, `nbf`, `iss` and `aud` are checked by
/// [`Validation`].
#[derive(Debug, Deserialize)]
struct Claims {
    sub: Option<String>,
    /// RFC 9068 §2.2.3: space-separated.
    scope: Option<String>,
    /// Some issuers (Azure AD, Okta) send a list.
    scp: Option<Value>,
    client_id: Option<String>,
    azp: Option<String>,
}

impl KeyCache {
    pub(crate) fn new(settings: OAuthSettings) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(FETCH_TIMEOUT))
            .build()
            .into();
        let jwks_uri = settings.jwks_uri.clone();
        Self {
            settings,
            agent,
            keys: RwLock::new(Fetched {
                jwks_uri,
                ..Fetched::default()
            }),
        }
    }

    /// The key for `kid` in the cache, and whether the cache may be fetched again now.
    fn cached(&self, kid: Option<&str>) -> (Option<Jwk>, bool) {
        let fetched = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let key = match kid {
            Some(kid) => fetched
                .keys
                .iter()
                .find(|key| key.common.key_id.as_deref() == Some(kid)),
            // Without a key id, only a set of one key says which key it is.
            None => match fetched.keys.as_slice() {
                [only] => Some(only),
                _ => None,
            },
        };
        let may_fetch = fetched.at.is_none_or(|at| at.elapsed() >= MIN_REFRESH);
        (key.cloned(), may_fetch)
    }

    /// Checks `token` (its signature with the issuer's key, `iss`, `aud` = `audience`,
    /// `exp`, `nbf`) and returns who it names. May fetch the JWKS: blocking, so call it
    /// off the async threads when [`KeyCache::needs_fetch`] says so.
    pub(crate) fn verify(&self, token: &str, audience: &str) -> Result<Caller, TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|error| TokenError::Invalid(error.to_string()))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(TokenError::Algorithm(format!("{:?}", header.alg)));
        }
        let kid = header.kid.as_deref();
        let key = match self.cached(kid) {
            (Some(key), _) => key,
            (None, true) => {
                self.fetch()?;
                self.cached(kid)
                    .0
                    .ok_or_else(|| TokenError::UnknownKey(kid.unwrap_or("(none)").to_owned()))?
            }
            (None, false) => {
                return Err(TokenError::UnknownKey(kid.unwrap_or("(none)").to_owned()));
            }
        };
        if let Some(algorithm) = key.common.key_algorithm
            && !same_algorithm(algorithm, header.alg)
        {
            return Err(TokenError::Invalid(format!(
                "the key `{}` is for {algorithm:?}, the token is signed with {:?}",
                kid.unwrap_or_default(),
                header.alg
            )));
        }
        let decoding = DecodingKey::from_jwk(&key)
            .map_err(|error| TokenError::Invalid(format!("the issuer's key: {error}")))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.settings.clock_skew.as_secs();
        let claims = jsonwebtoken::decode::<Claims>(token, &decoding, &validation)
            .map_err(|error| TokenError::Invalid(error.to_string()))?
            .claims;
        Ok(caller(claims))
    }

    /// Whether verifying a token with `kid` would fetch the JWKS first (so the caller
    /// moves to a blocking thread).
    pub(crate) fn needs_fetch(&self, token: &str) -> bool {
        let kid = jsonwebtoken::decode_header(token)
            .ok()
            .and_then(|header| header.kid);
        matches!(self.cached(kid.as_deref()), (None, true))
    }

    /// Fetches the JWKS (discovering its address first if needed) into the cache.
    fn fetch(&self) -> Result<(), TokenError> {
        let known = self
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .jwks_uri
            .clone();
        let jwks_uri = match known {
            Some(uri) => uri,
            None => self.discover()?,
        };
        // Marked fetched even when the fetch fails: a broken issuer is not asked again
        // faster than a working one.
        let result = self.get_json(&jwks_uri).map(|set| jwks(&set));
        let mut fetched = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        fetched.at = Some(Instant::now());
        fetched.jwks_uri = Some(jwks_uri);
        let keys = result?;
        tracing::debug!(keys = keys.len(), "fetched the issuer's JWKS");
        fetched.keys = keys;
        Ok(())
    }

    /// The `jwks_uri` of the issuer's metadata: RFC 8414's document, else `OpenID`
    /// Connect discovery's.
    fn discover(&self) -> Result<String, TokenError> {
        let issuer = self.settings.issuer.trim_end_matches('/');
        let mut problems = Vec::new();
        for document in [
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ] {
            let url = format!("{issuer}{document}");
            match self.get_json(&url) {
                Ok(metadata) => {
                    if let Some(uri) = metadata.get("jwks_uri").and_then(Value::as_str) {
                        return Ok(uri.to_owned());
                    }
                    problems.push(format!("{url} names no `jwks_uri`"));
                }
                Err(TokenError::Issuer(problem)) => problems.push(problem),
                Err(other) => problems.push(other.to_string()),
            }
        }
        Err(TokenError::Issuer(problems.join("; ")))
    }

    fn get_json(&self, url: &str) -> Result<Value, TokenError> {
        let problem = |error: &dyn std::fmt::Display| TokenError::Issuer(format!("{url}: {error}"));
        let text = self
            .agent
            .get(url)
            .header("Accept", "application/json")
            .call()
            .map_err(|error| problem(&error))?
            .body_mut()
            .read_to_string()
            .map_err(|error| problem(&error))?;
        serde_json::from_str(&text).map_err(|error| problem(&error))
    }
}

/// The keys of a JWKS document that this server can use; one of an unknown type (or a
/// symmetric one) is skipped, not a reason to refuse the whole set.
fn jwks(set: &Value) -> Vec<Jwk> {
    set.get("keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|key| serde_json::from_value::<Jwk>(key.clone()).ok())
        .filter(|key| {
            !matches!(
                key.algorithm,
                jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
            )
        })
        .collect()
}

fn same_algorithm(key: KeyAlgorithm, token: Algorithm) -> bool {
    matches!(
        (key, token),
        (KeyAlgorithm::RS256, Algorithm::RS256)
            | (KeyAlgorithm::ES256, Algorithm::ES256)
            | (KeyAlgorithm::EdDSA, Algorithm::EdDSA)
    )
}

fn caller(claims: Claims) -> Caller {
    let mut scopes: Vec<String> = claims
        .scope
        .as_deref()
        .unwrap_or_default()
        .split_ascii_whitespace()
        .map(str::to_owned)
        .collect();
    match claims.scp {
        Some(Value::String(text)) => {
            scopes.extend(text.split_ascii_whitespace().map(str::to_owned));
        }
        Some(Value::Array(items)) => {
            scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        _ => {}
    }
    Caller {
        subject: claims.sub,
        scopes,
        client_id: claims.client_id.or(claims.azp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let claims: Claims = serde_json::from_value(serde_json::json!({
            "sub": "alice", "scope": "a b", "scp": ["c"], "azp": "app"
        }))
        .unwrap();
        let caller = caller(claims);
        assert_eq!(caller.scopes, ["a", "b", "c"]);
        assert_eq!(caller.client_id.as_deref(), Some("app"));
    }

    #[test]
    fn symmetric_algorithms_are_refused_before_any_key() {
        let settings = OAuthSettings::new("http://127.0.0.1:9".into());
        let cache = KeyCache::new(settings);
        // {"alg":"HS256","typ":"JWT"} . {} . signature
        let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.c2ln";
        assert_eq!(
            cache.verify(token, "x"),
            Err(TokenError::Algorithm("HS256".into()))
        );
    }
}
