//! The client side Toolsmith shows an upstream (docs/gateway.md, "A faithful proxy"): its
//! progress and log notifications go to the client of the call they belong to, and its
//! sampling, elicitation and roots requests are asked of that client, through the call's
//! [`ClientBridge`], and withdrawn from it when the upstream cancels them;
//! `tools/list_changed` marks the upstream's tools stale, and
//! `resources/updated` goes to the sessions subscribed to the resource.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks sampling, roots and logging deprecated (SEP-2577); they still work"
)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorData, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, NumberOrString, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, ResourceUpdatedNotificationParam, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use toolsmith_model::{ClientBridge, LogLevel, Question, Withdrawal};

use crate::connection::Subscribed;

/// A call in flight: its progress token upstream (`None` while it is being sent), the
/// client it came from, and the key its [`Registration`] removes it by.
struct InFlight {
    token: Option<ProgressToken>,
    client: Arc<dyn ClientBridge>,
    key: u64,
}

/// The calls in flight on one upstream connection, each with its client.
#[derive(Clone, Default)]
pub(crate) struct Relay {
    calls: Arc<Mutex<Vec<InFlight>>>,
    /// Held while a call is sent: at most one call is without its token at a time.
    sending: Arc<tokio::sync::Mutex<()>>,
    /// The key of the next call registered.
    keys: Arc<AtomicU64>,
    /// Set by `notifications/tools/list_changed`.
    pub(crate) tools_changed: Arc<AtomicBool>,
    /// Set by `notifications/prompts/list_changed` and `resources/list_changed`.
    pub(crate) content_changed: Arc<AtomicBool>,
    /// The URIs subscribed to at this upstream, for its `resources/updated`.
    subscribed: Subscribed,
}

/// Removes a call from its relay when the call ends, however it ends.
pub(crate) struct Registration {
    relay: Relay,
    key: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.relay
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|call| call.key != self.key);
    }
}

impl Relay {
    /// The relay of a new connection to the upstream whose subscriptions are `subscribed`.
    pub(crate) fn new(subscribed: Subscribed) -> Self {
        Self {
            subscribed,
            ..Self::default()
        }
    }

    /// Sends a call with `send` and routes what the upstream says about it to `client`.
    ///
    /// rmcp picks the request's progress token as it sends it, and a quick upstream may
    /// report progress (or ask for sampling) before `send` has returned. So the call is
    /// registered first, without its token, and sends are taken one at a time: what comes
    /// with a token no registered call has belongs to the one being sent.
    pub(crate) async fn send<T, E>(
        &self,
        client: Arc<dyn ClientBridge>,
        send: impl Future<Output = Result<T, E>>,
        token_of: impl FnOnce(&T) -> ProgressToken,
    ) -> Result<(T, Registration), E> {
        let _sending = self.sending.lock().await;
        let key = self.keys.fetch_add(1, Ordering::Relaxed);
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(InFlight {
                token: None,
                client,
                key,
            });
        let registration = Registration {
            relay: self.clone(),
            key,
        };
        let handle = send.await?;
        let token = token_of(&handle);
        if let Some(call) = self
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter_mut()
            .find(|call| call.key == key)
        {
            call.token = Some(token);
        }
        Ok((handle, registration))
    }

    /// Routes what the upstream says about the call whose progress token is `token` to
    /// `client`, until the registration is dropped: a call of the direct path, whose token
    /// Toolsmith picks before sending it.
    pub(crate) fn register(
        &self,
        client: Arc<dyn ClientBridge>,
        token: ProgressToken,
    ) -> Registration {
        let key = self.keys.fetch_add(1, Ordering::Relaxed);
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(InFlight {
                token: Some(token),
                client,
                key,
            });
        Registration {
            relay: self.clone(),
            key,
        }
    }

    /// Passes an upstream's progress to the client of its call. Inline, not on a blocking
    /// thread: a bridge's `progress` only queues the message, and so it is queued before
    /// the call's result, which the upstream sent after it.
    pub(crate) fn progress(&self, params: &ProgressNotificationParam) {
        if let Some(client) = self.client_of(&params.progress_token) {
            client.progress(params.progress, params.total, params.message.as_deref());
        }
    }

    /// Passes an upstream's log message to the client of the newest call (the message
    /// does not say which call it belongs to). A bridge's `log` only queues it.
    pub(crate) fn log(&self, params: LoggingMessageNotificationParam) {
        let Some(client) = self.latest() else {
            return;
        };
        let (level, logger, message) = log_message(params);
        if client.wants_log(level) {
            client.log(level, &logger, &message);
        }
    }

    /// The client of the call whose progress token is `token`; a number no call has yet is
    /// rmcp's, of the call being sent. A string is a direct call's, which has it from the
    /// start: one no call has goes nowhere.
    fn client_of(&self, token: &ProgressToken) -> Option<Arc<dyn ClientBridge>> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let being_sent = || {
            matches!(token.0, NumberOrString::Number(_))
                .then(|| calls.iter().find(|call| call.token.is_none()))
                .flatten()
        };
        calls
            .iter()
            .find(|call| call.token.as_ref() == Some(token))
            .or_else(being_sent)
            .map(|call| Arc::clone(&call.client))
    }

    /// The client of the newest call in flight: requests and logs of the 2025 protocol do
    /// not say which request they belong to, so they go to the call most likely to have
    /// caused them.
    fn latest(&self) -> Option<Arc<dyn ClientBridge>> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.last().map(|call| Arc::clone(&call.client))
    }
}

/// A log message's level, logger and text, as a [`ClientBridge`] takes them.
fn log_message(params: LoggingMessageNotificationParam) -> (LogLevel, String, String) {
    let level = serde_json::to_value(params.level)
        .ok()
        .and_then(|level| LogLevel::parse(level.as_str()?))
        .unwrap_or(LogLevel::Info);
    let message = match params.data {
        Value::String(text) => text,
        other => other.to_string(),
    };
    (level, params.logger.unwrap_or_default(), message)
}

/// Asks `question` of `client` on a blocking thread, off the runtime's threads. When the
/// upstream cancels its request first (`cancelled`, from rmcp's token for the request,
/// resolves), the question is withdrawn, so the client hears `notifications/cancelled` too.
async fn ask<T>(
    client: Option<Arc<dyn ClientBridge>>,
    question: Question,
    cancelled: impl Future<Output = ()>,
) -> Result<T, ErrorData>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    let what = match &question {
        Question::Sample(_) => "sampling",
        Question::Elicit { .. } => "elicitation",
        Question::Roots => "roots",
    };
    let Some(client) = client else {
        return Err(ErrorData::internal_error(
            format!("Toolsmith has no call in flight to ask the client for {what}"),
            None,
        ));
    };
    let withdrawal = Withdrawal::new();
    let asking = withdrawal.clone();
    let mut answer = tokio::task::spawn_blocking(move || client.ask(question, &asking));
    let answer = tokio::select! {
        answer = &mut answer => answer,
        () = cancelled => {
            withdrawal.withdraw();
            // rmcp sends no response to a request its peer cancelled.
            return Err(ErrorData::internal_error(
                format!("the upstream cancelled its {what} request"),
                None,
            ));
        }
    };
    let answer = answer
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?
        .map_err(|message| ErrorData::internal_error(message, None))?;
    serde_json::from_value(answer).map_err(|error| {
        ErrorData::internal_error(format!("the client's answer to {what}: {error}"), None)
    })
}

/// The protocol revision Toolsmith asks an upstream for in `initialize`: 2025-11-25
/// (docs/gateway.md, "A faithful proxy").
///
/// rmcp 3.11's client asks for its newest revision, 2026-07-28, unless told otherwise. An
/// upstream that grants it may send sampling, elicitation and roots requests only while a
/// request of Toolsmith's is in flight at rmcp, whose client rejects the rest (SEP-2260). A
/// call on the direct path (`direct.rs`) bypasses rmcp, so every request such an upstream
/// made during a call would be rejected instead of forwarded live to the client of the
/// call. In the 2025-11-25 revision an upstream may ask during a call.
const UPSTREAM_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

impl ClientHandler for Relay {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "sampling": {},
            "elicitation": {"form": {}},
            "roots": {},
        }))
        .expect("a fixed capabilities object");
        ClientConfig::new(
            capabilities,
            Implementation::new("toolsmith", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(UPSTREAM_PROTOCOL)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress(&params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let Some(client) = self.latest() else {
            return;
        };
        let (level, logger, message) = log_message(params);
        let _ = tokio::task::spawn_blocking(move || {
            if client.wants_log(level) {
                client.log(level, &logger, &message);
            }
        })
        .await;
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::Release);
        crate::changes::notify();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.content_changed.store(true, Ordering::Release);
        crate::changes::notify();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.content_changed.store(true, Ordering::Release);
        crate::changes::notify();
    }

    /// Goes to the sessions subscribed to the URI; when none is any more (they ended
    /// without unsubscribing), the upstream is told to stop.
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        if crate::changes::resource_updated(&params.uri) {
            return;
        }
        let was = self
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&params.uri);
        if was {
            let _ = context
                .peer
                .unsubscribe(UnsubscribeRequestParams::new(params.uri))
                .await;
        }
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let request = serde_json::to_value(params)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        ask(
            self.latest(),
            Question::Sample(request),
            context.ct.cancelled(),
        )
        .await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Err(ErrorData::invalid_params(
                "Toolsmith forwards form elicitation only",
                None,
            ));
        };
        let schema = serde_json::to_value(requested_schema)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        ask(
            self.latest(),
            Question::Elicit { message, schema },
            context.ct.cancelled(),
        )
        .await
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let Some(client) = self.latest() else {
            return Ok(ListRootsResult::default());
        };
        ask(Some(client), Question::Roots, context.ct.cancelled()).await
    }
}
