//! rmcp's Streamable HTTP client with the right token on each request: the caller's, lent
//! to one call of an upstream with `forward_caller_token = true`; else the upstream's own
//! ([`Credentials`]); else the static bearer of `headers`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, GetMeta as _, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use toolsmith_model::CallContext;

use super::CALLER_META_KEY;
use super::tokens::{Cached, Credentials};

/// The caller tokens lent to requests now in flight, by handle.
fn lent() -> &'static Mutex<HashMap<String, String>> {
    static LENT: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    LENT.get_or_init(Mutex::default)
}

/// A caller's token lent to one forwarded call: its handle goes in the request's `_meta`,
/// and the token is forgotten when the call ends.
pub(crate) struct LentToken {
    handle: String,
}

impl LentToken {
    /// The caller's token of `context`, lent for one call to an upstream with
    /// `forward_caller_token = true`; `None` for any other upstream, and for a caller
    /// without a token (stdio, HTTP without OAuth).
    pub(crate) fn lend(spec: &crate::UpstreamSpec, context: &CallContext) -> Option<Self> {
        let crate::UpstreamTransport::Http {
            forward_caller_token: true,
            ..
        } = spec.transport
        else {
            return None;
        };
        let token = context.caller.as_ref()?.token.as_ref()?;
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).ok()?;
        let mut handle = String::with_capacity(32);
        for byte in bytes {
            let _ = write!(handle, "{byte:02x}");
        }
        lent()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(handle.clone(), token.secret().to_owned());
        Some(Self { handle })
    }

    /// What goes in `_meta` under [`CALLER_META_KEY`].
    pub(crate) fn handle(&self) -> &str {
        &self.handle
    }
}

impl Drop for LentToken {
    fn drop(&mut self) {
        lent()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.handle);
    }
}

/// Takes the caller's handle out of `message` (always, whichever upstream it goes to) and
/// returns the token it names, if it is still lent.
fn take_caller_token(message: &mut ClientJsonRpcMessage) -> Option<String> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let handle = request.request.get_meta_mut().remove(CALLER_META_KEY)?;
    let handle = handle.as_str()?;
    lent()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(handle)
        .cloned()
}

/// rmcp's Streamable HTTP client (reqwest) with the upstream's token put on each request:
/// the caller's for a call that lends one, else one of the upstream's authorization server
/// when `oauth` is set, else the static bearer of `headers`.
#[derive(Clone)]
pub(crate) struct Authorized {
    http: reqwest::Client,
    credentials: Option<Arc<Credentials>>,
    upstream: String,
}

/// The transport's error type.
type Failure = StreamableHttpError<reqwest::Error>;

fn failure(message: String) -> Failure {
    StreamableHttpError::Io(std::io::Error::other(message))
}

impl Authorized {
    pub(crate) fn new(upstream: &str, credentials: Option<Arc<Credentials>>) -> Self {
        // No redirects: a token is never sent on to another address.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            http,
            credentials,
            upstream: upstream.to_owned(),
        }
    }

    /// Runs `call` with the right token: the caller's as it is (a refusal is the caller's
    /// to see); else the upstream's own, fetched again once when the upstream refuses it.
    async fn with_token<T, F, Fut>(
        &self,
        caller: Option<String>,
        configured: Option<String>,
        call: F,
    ) -> Result<T, Failure>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        if let Some(token) = caller {
            return match call(Some(token)).await {
                Err(StreamableHttpError::AuthRequired(challenge)) => Err(failure(format!(
                    "refused the caller's access token (`forward_caller_token`): {}",
                    challenge.www_authenticate_header
                ))),
                other => other,
            };
        }
        let Some(credentials) = &self.credentials else {
            return call(configured).await;
        };
        let sent = match credentials.cached() {
            Cached::Fresh(token) => Some(token),
            Cached::Undiscovered => None,
            Cached::Due => {
                let credentials = Arc::clone(credentials);
                Some(
                    crate::connection::unblocked(move || credentials.current())
                        .await
                        .map_err(|error| self.token_failure(&error))?,
                )
            }
        };
        match call(sent.clone()).await {
            Err(StreamableHttpError::AuthRequired(challenge)) => {
                let credentials = Arc::clone(credentials);
                let header = challenge.www_authenticate_header.clone();
                let rejected = sent.clone();
                let fresh = crate::connection::unblocked(move || {
                    credentials.renew(rejected.as_deref(), &header)
                })
                .await
                .map_err(|error| self.token_failure(&error))?;
                if sent.is_some() {
                    tracing::info!(upstream = %self.upstream, "the upstream refused its access token; sent the request again with a new one");
                }
                match call(Some(fresh)).await {
                    Err(StreamableHttpError::AuthRequired(challenge)) => Err(failure(format!(
                        "refused a new access token from its authorization server: {}",
                        challenge.www_authenticate_header
                    ))),
                    other => other,
                }
            }
            other => other,
        }
    }

    fn token_failure(&self, error: &str) -> Failure {
        tracing::warn!(upstream = %self.upstream, %error, "no access token for the upstream");
        failure(error.to_owned())
    }
}

impl StreamableHttpClient for Authorized {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        mut message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let caller = take_caller_token(&mut message);
        self.with_token(caller, auth_header, |token| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
            );
            async move {
                self.http
                    .post_message(uri, message, session_id, token, headers)
                    .await
            }
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        mut message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let caller = take_caller_token(&mut message);
        self.with_token(caller, auth_header, |token| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
            );
            async move {
                self.http
                    .post_message_with_max_sse_event_size(
                        uri,
                        message,
                        session_id,
                        token,
                        headers,
                        max_sse_event_size,
                    )
                    .await
            }
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        mut message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let caller = take_caller_token(&mut message);
        self.with_token(caller, auth_header, |token| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
            );
            async move {
                self.http
                    .post_message_with_response_limits(
                        uri, message, session_id, token, headers, limits,
                    )
                    .await
            }
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        self.with_token(None, auth_header, |token| {
            let (uri, session_id, headers) =
                (uri.clone(), session_id.clone(), custom_headers.clone());
            async move {
                self.http
                    .delete_session(uri, session_id, token, headers)
                    .await
            }
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        self.with_token(None, auth_header, |token| {
            let (uri, session_id, last_event_id, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                custom_headers.clone(),
            );
            async move {
                self.http
                    .get_stream(uri, session_id, last_event_id, token, headers)
                    .await
            }
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        self.with_token(None, auth_header, |token| {
            let (uri, session_id, last_event_id, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                custom_headers.clone(),
            );
            async move {
                self.http
                    .get_stream_with_max_sse_event_size(
                        uri,
                        session_id,
                        last_event_id,
                        token,
                        headers,
                        max_sse_event_size,
                    )
                    .await
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientRequest, JsonRpcRequest, NumberOrString,
    };
    use serde_json::json;
    use toolsmith_model::{AccessToken, Caller};

    use super::*;
    use crate::UpstreamSpec;

    fn context(token: &str) -> CallContext {
        let mut context = CallContext::detached(Duration::from_secs(1));
        context.caller = Some(Arc::new(Caller {
            subject: Some("alice".into()),
            token: Some(AccessToken::new(token)),
            ..Caller::default()
        }));
        context
    }

    fn message(handle: Option<&str>) -> ClientJsonRpcMessage {
        let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("whoami"),
        ));
        if let Some(handle) = handle {
            request
                .get_meta_mut()
                .insert(CALLER_META_KEY.to_owned(), handle.into());
        }
        JsonRpcMessage::Request(JsonRpcRequest::new(NumberOrString::Number(1), request))
    }

    #[test]
    fn the_callers_token_is_lent_only_to_an_upstream_that_opted_in() {
        let spec = |table| UpstreamSpec::parse("u", &table, Path::new(".")).unwrap();
        let context = context("the-callers-token");
        let plain = spec(json!({"url": "http://127.0.0.1:9/mcp"}));
        assert!(LentToken::lend(&plain, &context).is_none());
        let forwarding =
            spec(json!({"url": "http://127.0.0.1:9/mcp", "forward_caller_token": true}));
        assert!(
            LentToken::lend(&forwarding, &CallContext::detached(Duration::from_secs(1))).is_none()
        );

        let lent = LentToken::lend(&forwarding, &context).unwrap();
        let mut sent = message(Some(lent.handle()));
        assert_eq!(
            take_caller_token(&mut sent).as_deref(),
            Some("the-callers-token")
        );
        // What goes on the wire has no trace of it, nor of the handle.
        let wire = serde_json::to_string(&sent).unwrap();
        assert!(
            !wire.contains(CALLER_META_KEY) && !wire.contains(lent.handle()),
            "{wire}"
        );
        assert!(!wire.contains("the-callers-token"), "{wire}");

        // Once the call is over, the handle names nothing.
        let handle = lent.handle().to_owned();
        drop(lent);
        assert_eq!(take_caller_token(&mut message(Some(&handle))), None);
        assert_eq!(take_caller_token(&mut message(None)), None);
    }
}
