//! What the endpoint reads of a request without building its message: the media types it
//! accepts and sends, a declared body length, and a body's `method` and request id.

use std::borrow::Cow;

use axum::http::{HeaderMap, header};
use rmcp::model::RequestId;

pub(super) fn content_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Whether the `Content-Type` is `application/json` (parameters aside).
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or_default();
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// Whether the `Accept` header names `media_type` itself (not just `*/*`).
pub(super) fn accepts(headers: &HeaderMap, media_type: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| {
            value.split(',').any(|entry| {
                let mut pieces = entry.split(';');
                let essence = pieces.next().unwrap_or_default().trim();
                let refused = pieces.any(|parameter| {
                    parameter
                        .trim()
                        .strip_prefix("q=")
                        .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
                });
                essence.eq_ignore_ascii_case(media_type) && !refused
            })
        })
}

/// Whether the body is a JSON-RPC message with this `method`, read without building the
/// message: `initialize` (the only request that opens a session) or
/// `notifications/cancelled` (`session_calls.rs`).
pub(super) fn has_method(body: &[u8], method: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<Method<'_>>(body)
        .is_ok_and(|peek| peek.method.as_deref() == Some(method))
}

/// The id of a request (not of a notification or a response), read without building the
/// message.
pub(super) fn request_id(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Peek {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    let peek = serde_json::from_slice::<Peek>(body).ok()?;
    peek.method.and(peek.id)
}

/// Whether the body is a message another replica may be waiting for: a
/// response or an error (an answer to a server→client request), `notifications/cancelled`
/// (the call may run elsewhere), or `notifications/roots/list_changed` (every replica
/// holding the session asks for the roots again). Read without building the message.
pub(super) fn for_any_replica(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Peek<'a> {
        id: Option<serde::de::IgnoredAny>,
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<Peek<'_>>(body).is_ok_and(|peek| match peek.method {
        Some(method) => {
            method == "notifications/cancelled" || method == "notifications/roots/list_changed"
        }
        None => peek.id.is_some(),
    })
}

/// A header map holding one header, for tests.
#[cfg(test)]
pub(super) fn one_header(name: header::HeaderName, value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let value = axum::http::HeaderValue::from_str(value).expect("a test's header value is valid");
    headers.insert(name, value);
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(accept: &str) -> HeaderMap {
        one_header(header::ACCEPT, accept)
    }

    #[test]
    fn accept_needs_the_media_type_itself() {
        assert!(accepts(
            &headers("application/json, text/event-stream"),
            "text/event-stream"
        ));
        assert!(accepts(
            &headers("Application/JSON;q=0.5"),
            "application/json"
        ));
        assert!(!accepts(&headers("*/*"), "application/json"));
        assert!(!accepts(
            &headers("application/json;q=0"),
            "application/json"
        ));
    }

    #[test]
    fn only_initialize_opens_a_session() {
        assert!(has_method(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "initialize"
        ));
        assert!(!has_method(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "initialize"
        ));
        assert!(!has_method(b"[1]", "initialize"));
        assert!(!has_method(b"not json", "initialize"));
    }

    #[test]
    fn cancellations_are_recognised() {
        assert!(has_method(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#,
            "notifications/cancelled"
        ));
        assert!(!has_method(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            "notifications/cancelled"
        ));
        assert!(!has_method(b"[]", "notifications/cancelled"));
    }

    /// What other replicas of the session must see too.
    #[test]
    fn answers_cancellations_and_root_changes_are_for_any_replica() {
        for body in [
            br#"{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}"#.as_slice(),
            br#"{"jsonrpc":"2.0","id":0,"error":{"code":-1,"message":"no"}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
        ] {
            assert!(for_any_replica(body), "{}", String::from_utf8_lossy(body));
        }
        for body in [
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#.as_slice(),
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            b"[]",
        ] {
            assert!(!for_any_replica(body), "{}", String::from_utf8_lossy(body));
        }
    }
}
