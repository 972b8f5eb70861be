//! Opaque access tokens, checked by asking the issuer (RFC 7662 token introspection;
//! docs/auth.md, "Opaque tokens"): a token that is not a JWT is sent to the
//! `introspection_url` with this server's client credentials, and an active answer is kept
//! until the token's `exp`, at most [`MAX_CACHED`] and for at most [`CACHE_SIZE`] tokens,
//! so a busy caller costs the issuer one request per token, not one per call.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};
use toolsmith_model::{Caller, Introspection};

use super::TokenError;

/// The longest an introspection's answer is trusted: a token revoked at the issuer is
/// refused here within this time.
pub(super) const MAX_CACHED: Duration = Duration::from_mins(5);

/// How many tokens' answers are kept.
const CACHE_SIZE: usize = 10_000;

/// How long one introspection may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The introspection endpoint, its credentials and the answers it gave.
pub(super) struct Introspector {
    settings: Introspection,
    issuer: String,
    agent: ureq::Agent,
    /// By the token's SHA-256 (the token itself is not kept).
    cache: Mutex<HashMap<[u8; 32], (Caller, Instant)>>,
}

impl Introspector {
    pub(super) fn new(settings: Introspection, issuer: String) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .build()
            .into();
        Self {
            settings,
            issuer,
            agent,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The caller of `token` if an answer about it is still fresh.
    pub(super) fn cached(&self, token: &str) -> Option<Caller> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache
            .get(&digest(token))
            .filter(|(_, until)| *until > Instant::now())
            .map(|(caller, _)| caller.clone())
    }

    /// Asks the endpoint about `token` (blocking: call it off the async threads) and checks
    /// the answer: `active`, and where given `iss`, `aud` (must hold `audience`) and `exp`.
    pub(super) fn introspect(&self, token: &str, audience: &str) -> Result<Caller, TokenError> {
        let issuer = |problem: String| {
            TokenError::Issuer(format!("introspection at {}: {problem}", self.settings.url))
        };
        let credentials = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form_encode(&self.settings.client_id),
            form_encode(&self.settings.client_secret)
        ));
        let mut response = self
            .agent
            .post(&self.settings.url)
            .header("Authorization", &format!("Basic {credentials}"))
            .header("Accept", "application/json")
            .content_type("application/x-www-form-urlencoded")
            .send(format!(
                "token={}&token_type_hint=access_token",
                form_encode(token)
            ))
            .map_err(|error| issuer(error.to_string()))?;
        let status = response.status();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|error| issuer(error.to_string()))?;
        if !status.is_success() {
            return Err(issuer(format!(
                "answered {status} (are `client_id` and `client_secret` right?): {}",
                text.chars().take(200).collect::<String>()
            )));
        }
        let answer: Value =
            serde_json::from_str(&text).map_err(|error| issuer(error.to_string()))?;
        let until = check(&answer, &self.issuer, audience)?;
        let caller = caller(&answer);
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.len() >= CACHE_SIZE {
            let now = Instant::now();
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= CACHE_SIZE {
                cache.clear();
            }
        }
        cache.insert(digest(token), (caller.clone(), until));
        Ok(caller)
    }
}

/// Checks an introspection answer; until when it may be trusted.
fn check(answer: &Value, issuer: &str, audience: &str) -> Result<Instant, TokenError> {
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err(TokenError::Invalid(
            "the issuer says the token is not active (introspection)".into(),
        ));
    }
    if let Some(iss) = answer.get("iss").and_then(Value::as_str)
        && iss.trim_end_matches('/') != issuer.trim_end_matches('/')
    {
        return Err(TokenError::Invalid(format!(
            "the token's issuer is `{iss}`, not `{issuer}` (introspection)"
        )));
    }
    let audiences: Vec<&str> = match answer.get("aud") {
        Some(Value::String(aud)) => vec![aud.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if answer.get("aud").is_some() && !audiences.contains(&audience) {
        return Err(TokenError::Invalid(format!(
            "the token is not for `{audience}` (its audience: {}; introspection)",
            audiences.join(", ")
        )));
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let mut trusted = MAX_CACHED;
    if let Some(exp) = answer.get("exp").and_then(Value::as_u64) {
        if exp <= now {
            return Err(TokenError::Invalid(
                "the token has expired (introspection)".into(),
            ));
        }
        trusted = trusted.min(Duration::from_secs(exp - now));
    }
    Ok(Instant::now() + trusted)
}

fn caller(answer: &Value) -> Caller {
    let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
    Caller {
        subject: text("sub").or_else(|| text("username")),
        scopes: answer
            .get("scope")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect(),
        client_id: text("client_id"),
        token: None,
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// `application/x-www-form-urlencoded` (also what RFC 6749 §2.3.1 asks of Basic
/// credentials).
fn form_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_answer_is_checked_and_read() {
        let issuer = "https://auth.example.com";
        let inactive = check(&json!({"active": false}), issuer, "x").unwrap_err();
        assert!(inactive.to_string().contains("not active"), "{inactive}");
        let other = check(&json!({"active": true, "iss": "https://evil"}), issuer, "x");
        assert!(other.is_err());
        let aud = check(&json!({"active": true, "aud": ["a", "b"]}), issuer, "c");
        assert!(aud.unwrap_err().to_string().contains("not for `c`"));
        let expired = check(&json!({"active": true, "exp": 1}), issuer, "x");
        assert!(expired.is_err());
        assert!(check(&json!({"active": true, "aud": "x"}), issuer, "x").is_ok());
        let caller = caller(&json!({"sub": "carol", "scope": "a b", "client_id": "app"}));
        assert_eq!(caller.subject.as_deref(), Some("carol"));
        assert_eq!(caller.scopes, ["a", "b"]);
    }

    #[test]
    fn form_encoding_escapes_what_it_must() {
        assert_eq!(form_encode("a b+c:d"), "a%20b%2Bc%3Ad");
    }
}
