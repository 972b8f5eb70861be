//! Who makes a call: the subject, scopes and client of the OAuth access token it came with
//! (docs/auth.md). The transport decides it; the model only reads it, to hide the tools a
//! caller's scopes do not cover and to tell tools on whose behalf they act.

use serde_json::{Value, json};

/// The verified identity behind a call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    /// The token's subject (`sub`): the user or service the call acts for.
    pub subject: Option<String>,
    /// The token's scopes (`scope`, space-separated in the token).
    pub scopes: Vec<String>,
    /// The OAuth client that obtained the token (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// The access token itself, as it came: sent on only to an upstream whose table says
    /// `forward_caller_token = true` (docs/gateway.md); never printed.
    pub token: Option<AccessToken>,
}

/// An access token as a caller presented it. Its `Debug` shows no part of it, so no log
/// line or error that prints a [`Caller`] can leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

impl AccessToken {
    /// `token`, as it came in the `Authorization` header.
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The token, to send on.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessToken(…)")
    }
}

impl Caller {
    /// Whether the caller holds every scope in `required`.
    pub fn holds(&self, required: &[String]) -> bool {
        self.missing(required).is_none()
    }

    /// The first scope in `required` the caller does not hold.
    pub fn missing<'a>(&self, required: &'a [String]) -> Option<&'a str> {
        required
            .iter()
            .find(|scope| !self.scopes.contains(scope))
            .map(String::as_str)
    }

    /// The JSON tools see (`mcp.caller()`, `TOOLSMITH_CALLER`):
    /// `{"subject": ..., "scopes": [...], "client_id": ...}`.
    pub fn to_json(&self) -> Value {
        json!({
            "subject": self.subject,
            "scopes": self.scopes,
            "client_id": self.client_id,
        })
    }
}

/// Whether `caller` may see and call a tool requiring `scopes`: always without a caller
/// (stdio, or HTTP without OAuth; docs/auth.md).
pub fn may_use(caller: Option<&Caller>, scopes: &[String]) -> bool {
    caller.is_none_or(|caller| caller.holds(scopes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(scopes: &[&str]) -> Caller {
        Caller {
            subject: Some("alice".into()),
            scopes: scopes.iter().map(|&scope| scope.to_owned()).collect(),
            client_id: None,
            token: None,
        }
    }

    #[test]
    fn a_caller_needs_every_required_scope() {
        let required = vec!["tickets:read".to_owned(), "tickets:write".to_owned()];
        assert!(caller(&["tickets:read", "tickets:write", "x"]).holds(&required));
        assert_eq!(
            caller(&["tickets:read"]).missing(&required),
            Some("tickets:write")
        );
        assert!(caller(&[]).holds(&[]));
        assert!(may_use(None, &required));
        assert!(!may_use(Some(&caller(&[])), &required));
    }
}
