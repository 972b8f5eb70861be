//! The client side Toolsmith shows an upstream (docs/gateway.md, "A faithful proxy"): its
//! progress and log notifications go to the client of the call they belong to, and its
//! sampling, elicitation and roots requests are asked of that client, through the call's
//! [`ClientBridge`]; `tools/list_changed` marks the upstream's tools stale.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks sampling, roots and logging deprecated (SEP-2577); they still work"
)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorData, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use toolsmith_model::{ClientBridge, LogLevel};

/// A call in flight: its progress token upstream and the client it came from.
type InFlight = (ProgressToken, Arc<dyn ClientBridge>);

/// The calls in flight on one upstream connection, each with its client.
#[derive(Clone, Default)]
pub(crate) struct Relay {
    calls: Arc<Mutex<Vec<InFlight>>>,
    /// Set by `notifications/tools/list_changed`.
    pub(crate) tools_changed: Arc<AtomicBool>,
}

/// Removes a call from its relay when the call ends, however it ends.
pub(crate) struct Registration {
    relay: Relay,
    token: ProgressToken,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.relay
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(token, _)| *token != self.token);
    }
}

impl Relay {
    /// Routes what the upstream sends about the request with `token` to `client`.
    pub(crate) fn register(
        &self,
        token: ProgressToken,
        client: Arc<dyn ClientBridge>,
    ) -> Registration {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((token.clone(), client));
        Registration {
            relay: self.clone(),
            token,
        }
    }

    fn client_of(&self, token: &ProgressToken) -> Option<Arc<dyn ClientBridge>> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls
            .iter()
            .find(|(t, _)| t == token)
            .map(|(_, client)| Arc::clone(client))
    }

    /// The client of the newest call in flight: requests and logs of the 2025 protocol do
    /// not say which request they belong to, so they go to the call most likely to have
    /// caused them.
    fn latest(&self) -> Option<Arc<dyn ClientBridge>> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.last().map(|(_, client)| Arc::clone(client))
    }
}

/// Runs a blocking [`ClientBridge`] request off the runtime's threads.
async fn ask<T>(
    client: Option<Arc<dyn ClientBridge>>,
    what: &str,
    request: impl FnOnce(&dyn ClientBridge) -> Result<Value, String> + Send + 'static,
) -> Result<T, ErrorData>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    let Some(client) = client else {
        return Err(ErrorData::internal_error(
            format!("Toolsmith has no call in flight to ask the client for {what}"),
            None,
        ));
    };
    let answer = tokio::task::spawn_blocking(move || request(client.as_ref()))
        .await
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?
        .map_err(|message| ErrorData::internal_error(message, None))?;
    serde_json::from_value(answer).map_err(|error| {
        ErrorData::internal_error(format!("the client's answer to {what}: {error}"), None)
    })
}

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
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(client) = self.client_of(&params.progress_token) {
            let _ = tokio::task::spawn_blocking(move || {
                client.progress(params.progress, params.total, params.message.as_deref());
            })
            .await;
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let Some(client) = self.latest() else {
            return;
        };
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|level| LogLevel::parse(level.as_str()?))
            .unwrap_or(LogLevel::Info);
        let message = match params.data {
            Value::String(text) => text,
            other => other.to_string(),
        };
        let logger = params.logger.unwrap_or_default();
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

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let request = serde_json::to_value(params)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        ask(self.latest(), "sampling", move |client| {
            client.sample(request)
        })
        .await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
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
        ask(self.latest(), "elicitation", move |client| {
            client.elicit(&message, schema)
        })
        .await
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let Some(client) = self.latest() else {
            return Ok(ListRootsResult::default());
        };
        ask(Some(client), "roots", |client| {
            client
                .roots()
                .map(|roots| serde_json::json!({ "roots": roots }))
        })
        .await
    }
}
