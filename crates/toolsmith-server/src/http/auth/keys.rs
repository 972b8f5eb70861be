//! Verifying OAuth access tokens: JWTs checked against the issuer's JWKS, discovered from
//! its metadata (RFC 8414, or `OpenID` Connect discovery), cached, and fetched again when a
//! token names a key id the cache does not hold, at most once per [`MIN_REFRESH`]
//! (docs/auth.md, "Tokens"). One fetch at a time: a token that would fetch while another
//! fetch is under way waits for it and reads its keys.

use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
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
    /// The header marks extensions as critical (`crit`, RFC 7515 §4.1.11), which this
    /// server, understanding none, must refuse.
    #[error(
        "the access token's header marks extensions as critical (`crit`: {0}); this server \
         understands none, so it accepts no token with `crit`"
    )]
    Critical(String),
    /// The issuer's metadata or JWKS could not be fetched.
    #[error("the issuer's keys could not be fetched: {0}")]
    Issuer(String),
}

/// The issuer's keys, fetched on first use.
pub(crate) struct KeyCache {
    settings: OAuthSettings,
    agent: ureq::Agent,
    keys: RwLock<Fetched>,
    /// Held while the JWKS is fetched: one fetch in flight, and a token that would fetch
    /// meanwhile waits and then reads the cache (which then is fresh).
    fetching: Mutex<()>,
}

/// Whether verifying a token may fetch the issuer's JWKS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// When the token's key is not in the cache and the cache is older than
    /// [`MIN_REFRESH`]: blocking, so on a thread that may block.
    Allowed,
    /// Never: an unknown key is refused (on an async thread).
    Never,
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
            fetching: Mutex::new(()),
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
    /// `exp`, `nbf`, no `crit` header) and returns who it names. With [`Fetch::Allowed`]
    /// it may fetch the JWKS: blocking, so call it off the async threads when
    /// [`KeyCache::needs_fetch`] says so.
    pub(crate) fn verify(
        &self,
        token: &str,
        audience: &str,
        fetch: Fetch,
    ) -> Result<Caller, TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|error| TokenError::Invalid(sentence(&error, token, audience)))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(TokenError::Algorithm(format!("{:?}", header.alg)));
        }
        if let Some(critical) = critical(token) {
            return Err(TokenError::Critical(critical));
        }
        let kid = header.kid.as_deref();
        let unknown = || TokenError::UnknownKey(kid.unwrap_or("(none)").to_owned());
        let key = match (self.cached(kid), fetch) {
            ((Some(key), _), _) => key,
            ((None, true), Fetch::Allowed) => self.fetch_for(kid)?.ok_or_else(unknown)?,
            ((None, _), _) => return Err(unknown()),
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
            .map_err(|error| TokenError::Invalid(sentence(&error, token, audience)))?
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

    /// The key for `kid` after fetching the JWKS, unless another fetch did so within
    /// [`MIN_REFRESH`] (then from what that one fetched): the check and the fetch happen
    /// under [`KeyCache::fetching`], so concurrent tokens with unknown key ids make one
    /// fetch, not one each.
    fn fetch_for(&self, kid: Option<&str>) -> Result<Option<Jwk>, TokenError> {
        let _fetching = self.fetching.lock().unwrap_or_else(PoisonError::into_inner);
        match self.cached(kid) {
            (Some(key), _) => return Ok(Some(key)),
            (None, false) => return Ok(None),
            (None, true) => {}
        }
        self.fetch()?;
        Ok(self.cached(kid).0)
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

/// The `crit` member of `token`'s JOSE header, as written, when it has one (RFC 7515
/// §4.1.11: a recipient that does not understand every extension listed must refuse the
/// token; this server understands none).
/// Why `token` was refused, as a sentence a person can act on: jsonwebtoken's errors print
/// as enum names (`ExpiredSignature`), which landed in `error_description`.
/// The claims are read here only to say what they held; they were not trusted.
fn sentence(error: &jsonwebtoken::errors::Error, token: &str, audience: &str) -> String {
    use jsonwebtoken::errors::ErrorKind;
    let claim = |name: &str| -> Option<Value> {
        let encoded = token.split('.').nth(1)?;
        let decoded = URL_SAFE_NO_PAD.decode(encoded.trim_end_matches('=')).ok()?;
        serde_json::from_slice::<Value>(&decoded)
            .ok()?
            .get(name)
            .cloned()
    };
    let time = |name: &str| claim(name).as_ref().and_then(Value::as_i64).map(utc);
    // In backticks: `error_description` may hold no double quote (RFC 6750 §3).
    let named = |value: Value| match value {
        Value::String(text) => format!("`{text}`"),
        Value::Array(items) => items
            .into_iter()
            .map(|item| {
                item.as_str()
                    .map_or_else(|| item.to_string(), |text| format!("`{text}`"))
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => format!("`{other}`"),
    };
    match error.kind() {
        ErrorKind::InvalidToken => {
            "it is not a JWT (three base64url parts joined by dots)".to_owned()
        }
        ErrorKind::InvalidSignature => "its signature does not match the issuer's key".to_owned(),
        ErrorKind::ExpiredSignature => time("exp").map_or_else(
            || "it has expired".to_owned(),
            |at| format!("it expired at {at}; get a new token"),
        ),
        ErrorKind::ImmatureSignature => time("nbf").map_or_else(
            || "it is not valid yet".to_owned(),
            |at| format!("it is not valid before {at}"),
        ),
        ErrorKind::InvalidIssuer => match claim("iss") {
            Some(issuer) => format!(
                "it was issued by {}, not by this server's issuer",
                named(issuer)
            ),
            None => "it was not issued by this server's issuer".to_owned(),
        },
        ErrorKind::InvalidAudience => match claim("aud") {
            Some(aud) => format!("its audience is {}, not `{audience}`", named(aud)),
            None => format!("its audience is not `{audience}`"),
        },
        ErrorKind::MissingRequiredClaim(name) => format!("it has no `{name}` claim"),
        ErrorKind::InvalidAlgorithm => {
            "its algorithm does not match the issuer's key for it".to_owned()
        }
        ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidRsaKey(_) | ErrorKind::InvalidKeyFormat => {
            "the issuer's key for it cannot be used".to_owned()
        }
        ErrorKind::Base64(_) | ErrorKind::Json(_) | ErrorKind::Utf8(_) => {
            format!("it is not a well-formed JWT ({error})")
        }
        _ => format!("it could not be checked ({error})"),
    }
}

/// `seconds` since the Unix epoch as an RFC 3339 UTC time (`2026-12-07T20:00:00Z`); the
/// number itself for a time chrono cannot represent.
fn utc(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(seconds, 0).map_or_else(
        || format!("{seconds} s after the Unix epoch"),
        |time| time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    )
}

fn critical(token: &str) -> Option<String> {
    let encoded = token.split('.').next()?;
    let decoded = URL_SAFE_NO_PAD.decode(encoded.trim_end_matches('=')).ok()?;
    let header: Value = serde_json::from_slice(&decoded).ok()?;
    header.get("crit").map(Value::to_string)
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
        token: None,
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

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

    /// A JWT with `header` (JSON), empty claims and a made-up signature.
    fn token_with(header: &Value) -> String {
        format!("{}.e30.c2ln", URL_SAFE_NO_PAD.encode(header.to_string()))
    }

    // Regression test: `error_description` said `ExpiredSignature`,
    // `InvalidAudience`: jsonwebtoken's enum names, not what to do.
    #[test]
    fn refusals_are_sentences() {
        use jsonwebtoken::errors::{Error, ErrorKind};
        let payload = URL_SAFE_NO_PAD.encode(
            r#"{"exp":1796673600,"nbf":951827696,"aud":["a","b"],"iss":"http://evil.example"}"#,
        );
        let token = format!("e30.{payload}.c2ln");
        let said = |kind: ErrorKind| {
            TokenError::Invalid(sentence(&Error::from(kind), &token, "http://here/mcp")).to_string()
        };
        assert_eq!(
            said(ErrorKind::ExpiredSignature),
            "the access token is not valid: it expired at 2026-12-07T20:00:00Z; get a new token"
        );
        assert_eq!(
            said(ErrorKind::ImmatureSignature),
            "the access token is not valid: it is not valid before 2000-02-29T12:34:56Z"
        );
        assert_eq!(
            said(ErrorKind::InvalidAudience),
            "the access token is not valid: its audience is `a`, `b`, not `http://here/mcp`"
        );
        assert_eq!(
            said(ErrorKind::InvalidIssuer),
            "the access token is not valid: it was issued by `http://evil.example`, not by \
             this server's issuer"
        );
        assert_eq!(
            said(ErrorKind::InvalidSignature),
            "the access token is not valid: its signature does not match the issuer's key"
        );
        assert_eq!(utc(-1), "1969-12-31T23:59:59Z");
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn a_token_with_a_crit_header_is_refused() {
        // RFC 7515 §4.1.11: a token whose `crit` names extensions the recipient does not
        // understand must be refused; such a token was accepted.
        let cache = KeyCache::new(OAuthSettings::new("http://127.0.0.1:9".into()));
        for crit in [serde_json::json!(["exp"]), serde_json::json!([])] {
            let token = token_with(&serde_json::json!({"alg": "RS256", "kid": "k", "crit": crit}));
            let refused = cache.verify(&token, "x", Fetch::Allowed).unwrap_err();
            assert_eq!(refused, TokenError::Critical(crit.to_string()));
            assert!(
                refused.to_string().contains("accepts no token with `crit`"),
                "{refused}"
            );
        }
    }

    /// A JWKS endpoint on a free loopback port that answers an empty key set, each answer
    /// a little late (so that fetches overlap), counting the requests.
    fn slow_jwks() -> (String, Arc<AtomicUsize>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        let fetches = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&fetches);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let counted = Arc::clone(&counted);
                std::thread::spawn(move || {
                    let mut request = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                        match stream.read(&mut buffer) {
                            Ok(0) | Err(_) => return,
                            Ok(read) => request.extend_from_slice(&buffer[..read]),
                        }
                    }
                    counted.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(200));
                    let body = r#"{"keys": []}"#;
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        (url, fetches)
    }

    #[test]
    fn concurrent_unknown_key_ids_make_one_fetch() {
        // 32 clients sending tokens with made-up key ids made 4.3 fetches a second of
        // the issuer's JWKS against "at most once a second": each saw the cache old and
        // fetched.
        let (url, fetches) = slow_jwks();
        let mut settings = OAuthSettings::new("http://127.0.0.1:9".into());
        settings.jwks_uri = Some(url);
        let cache = Arc::new(KeyCache::new(settings));
        let start = Arc::new(std::sync::Barrier::new(32));
        let verifying: Vec<_> = (0..32)
            .map(|client| {
                let cache = Arc::clone(&cache);
                let start = Arc::clone(&start);
                std::thread::spawn(move || {
                    let kid = format!("made-up-{client}");
                    let token = token_with(&serde_json::json!({"alg": "RS256", "kid": kid}));
                    start.wait();
                    cache.verify(&token, "x", Fetch::Allowed)
                })
            })
            .collect();
        for verified in verifying {
            let refused = verified.join().unwrap().unwrap_err();
            assert!(matches!(refused, TokenError::UnknownKey(_)), "{refused}");
        }
        assert!(fetches.load(Ordering::SeqCst) <= 2, "{fetches:?} fetches");
    }

    #[test]
    fn symmetric_algorithms_are_refused_before_any_key() {
        let settings = OAuthSettings::new("http://127.0.0.1:9".into());
        let cache = KeyCache::new(settings);
        // {"alg":"HS256","typ":"JWT"} . {} . signature
        let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.c2ln";
        assert_eq!(
            cache.verify(token, "x", Fetch::Allowed),
            Err(TokenError::Algorithm("HS256".into()))
        );
    }
}
