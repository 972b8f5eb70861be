//! Prompts and resources that another server renders and reads (docs/gateway.md): an
//! upstream MCP server's, published next to a folder's own. A [`Prompt`](crate::Prompt) or
//! a resource whose `remote` is set is listed like any other (so profiles, `toolsmith list`
//! and pagination treat it alike), but `prompts/get`, `resources/read` and
//! `completion/complete` are sent to its server through the [`Forward`] it carries, and that
//! server's answer is returned as it gave it. The model only names the trait; the upstream
//! crate implements it.

use std::sync::Arc;

use serde_json::Value;

use crate::definition::JsonObject;
use crate::tool::ClientBridge;

/// What a completion is for: a prompt's argument or a resource template's variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionRef<'a> {
    /// `ref/prompt`, by the prompt's name at its server.
    Prompt(&'a str),
    /// `ref/resource`, by the URI template.
    Resource(&'a str),
}

/// Why the server that owns a prompt or resource did not answer with a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ForwardError {
    /// The JSON-RPC error code to answer with: the server's own when it answered an error,
    /// -32603 (internal error) when it could not be reached.
    pub code: i64,
    /// What happened, naming the server.
    pub message: String,
}

/// A server that renders prompts and reads resources for Toolsmith: each method sends one
/// request and waits for its result (MCP `prompts/get`, `resources/read`,
/// `completion/complete`, `resources/subscribe` and `resources/unsubscribe`).
pub trait Forward: Send + Sync {
    /// `prompts/get` of `name` with `arguments`: the whole result, as the server gave it.
    ///
    /// # Errors
    ///
    /// The server's error, or why it could not be reached.
    ///
    /// What the server asks while it renders (sampling, elicitation, roots) is asked of
    /// `client`, the client that asked for the prompt; without one, the server is told
    /// there is nobody to ask.
    fn get_prompt(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, Value>,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<Value, ForwardError>;

    /// `resources/read` of `uri`: the whole result (`{"contents": [...]}`), as the server
    /// gave it; what the server asks meanwhile is asked of `client`, as for
    /// [`Forward::get_prompt`].
    ///
    /// # Errors
    ///
    /// The server's error, or why it could not be reached.
    fn read_resource(
        &self,
        uri: &str,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<Value, ForwardError>;

    /// `completion/complete`: the values the server offers for `argument` starting with
    /// `value`.
    ///
    /// # Errors
    ///
    /// The server's error, or why it could not be reached.
    fn complete(
        &self,
        reference: CompletionRef<'_>,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, ForwardError>;

    /// `resources/subscribe` of `uri`, so that the server reports its changes
    /// (`notifications/resources/updated`); asked once however many sessions subscribe. A
    /// server that offers no subscriptions is not asked.
    ///
    /// # Errors
    ///
    /// The server's error, or why it could not be reached.
    fn subscribe(&self, uri: &str) -> Result<(), ForwardError>;

    /// `resources/unsubscribe` of `uri`, when no session subscribes to it any more.
    ///
    /// # Errors
    ///
    /// The server's error, or why it could not be reached.
    fn unsubscribe(&self, uri: &str) -> Result<(), ForwardError>;
}

/// Where a prompt or resource is forwarded: its name (a prompt's name, a resource's URI, a
/// template's URI template) at the server called `owner`.
///
/// Two are equal when they name the same thing at the same owner, whatever connection
/// serves it, so a reload that kept an upstream's prompts does not count as a change.
#[derive(Clone)]
pub struct Remote {
    /// The name at its server.
    pub name: String,
    /// Its server's name (`NAME` of `[upstream.NAME]`).
    pub owner: String,
    forward: Arc<dyn Forward>,
}

impl Remote {
    /// `name` at the server `owner`, reached through `forward`.
    pub fn new(
        name: impl Into<String>,
        owner: impl Into<String>,
        forward: Arc<dyn Forward>,
    ) -> Self {
        Self {
            name: name.into(),
            owner: owner.into(),
            forward,
        }
    }

    /// The server's side.
    pub fn forward(&self) -> &dyn Forward {
        self.forward.as_ref()
    }

    /// `prompts/get` arguments are strings (MCP `GetPromptRequestParams.arguments`): other
    /// JSON values are sent as compact JSON, as a folder's own prompt renders them.
    pub(crate) fn string_arguments(arguments: &JsonObject) -> serde_json::Map<String, Value> {
        arguments
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(name, value)| {
                let text = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                (name.clone(), Value::String(text))
            })
            .collect()
    }
}

impl PartialEq for Remote {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.owner == other.owner
    }
}

impl Eq for Remote {}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("name", &self.name)
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}
