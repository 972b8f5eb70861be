//! MCP prompts (MCP spec, server/prompts): what `prompts/list` publishes ([`Prompt`]),
//! the message templates `prompts/get` renders with the client's arguments
//! ([`Prompt::render`]), argument completion ([`Prompt::complete`]) and the set of a
//! server's prompts ([`Prompts`]).
//!
//! A prompt's messages are templates: text with `{{argument}}` placeholders, images and
//! audio (already base64-encoded when the prompt was loaded) and embedded resources whose
//! URI is fixed or taken from an argument, read through a [`ResourceReader`] at render
//! time.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::definition::{JsonObject, SourceLocation};
use crate::forward::{CompletionRef, Remote};
use crate::names::did_you_mean;
use crate::names::suggestion_suffix;
use crate::outcome::Content;
use crate::resource::{ResourceError, ResourceReader, complete_from};
use crate::template::TextTemplate;
use crate::tool::ClientBridge;

/// Who speaks a prompt message (MCP `Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

impl Role {
    /// Parses `user` or `assistant` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "user" => Some(Self::User),
            "assistant" => Some(Self::Assistant),
            _ => None,
        }
    }

    /// The MCP name of the role.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// One argument a prompt takes (MCP `PromptArgument`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptArgument {
    /// The argument's name, as `{{name}}` placeholders and clients use it.
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// What the argument is for.
    pub description: Option<String>,
    /// Whether `prompts/get` fails without it.
    pub required: bool,
    /// Values `completion/complete` offers (front matter `values:` or `enum:`).
    pub values: Vec<String>,
}

impl PromptArgument {
    /// An optional argument with no description.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    fn to_mcp(&self) -> Value {
        let mut argument = JsonObject::new();
        argument.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            argument.insert("title".into(), json!(title));
        }
        if let Some(description) = &self.description {
            argument.insert("description".into(), json!(description));
        }
        argument.insert("required".into(), json!(self.required));
        Value::Object(argument)
    }
}

/// Where the URI of an embedded resource comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriSource {
    /// A URI written in the prompt (`{{resource:URI}}`).
    Fixed(String),
    /// The value of an argument (`{{resource_from:ARGUMENT}}`).
    Argument(String),
}

/// The content of one message template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentTemplate {
    /// Text with `{{argument}}` placeholders.
    Text(TextTemplate),
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// `image/png`, …
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// `audio/wav`, …
        mime_type: String,
    },
    /// A resource read when the prompt renders, embedded as a `resource` content block.
    Resource(UriSource),
}

/// One message of a prompt, before the arguments are filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageTemplate {
    /// Who speaks it.
    pub role: Role,
    /// What it holds.
    pub content: ContentTemplate,
}

/// A rendered prompt message (MCP `PromptMessage`): serializes as
/// `{"role": "user", "content": {"type": "text", "text": "…"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks it.
    pub role: Role,
    /// One content block.
    pub content: Content,
}

/// Why `prompts/get` or `completion/complete` failed. Every variant is JSON-RPC -32602
/// (invalid params) except a resource that cannot be read, which is the server's fault
/// when its URI is written in the prompt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No prompt has this name.
    #[error("unknown prompt `{name}`{}", suggestion_suffix(.suggestions))]
    UnknownPrompt {
        /// The name asked for.
        name: String,
        /// Close names, best first.
        suggestions: Vec<String>,
    },
    /// A required argument is missing (or empty).
    #[error("prompt `{prompt}` needs argument `{argument}`")]
    MissingArgument {
        /// The prompt.
        prompt: String,
        /// The argument.
        argument: String,
    },
    /// An embedded resource could not be read.
    #[error("prompt `{prompt}` embeds resource `{uri}`: {source}")]
    Resource {
        /// The prompt.
        prompt: String,
        /// The URI it tried to embed.
        uri: String,
        /// Why it could not be read.
        #[source]
        source: ResourceError,
        /// Whether the URI came from an argument (the client's mistake) or the prompt
        /// itself (the server's).
        from_argument: bool,
    },
    /// The server that owns the prompt (an upstream) answered with an error or could not
    /// be reached.
    #[error("{message}")]
    Remote {
        /// The prompt.
        prompt: String,
        /// The JSON-RPC code to answer with (the upstream's own, when it answered one).
        code: i64,
        /// What happened, naming the upstream.
        message: String,
    },
}

impl PromptError {
    /// The JSON-RPC error code the server answers with: -32602 (invalid params), or
    /// -32603 (internal error) for a resource URI written in the prompt that cannot be
    /// read.
    pub fn json_rpc_code(&self) -> i64 {
        match self {
            Self::Resource {
                from_argument: false,
                ..
            } => -32603,
            Self::Remote { code, .. } => *code,
            _ => -32602,
        }
    }
}

/// A prompt: what `prompts/list` publishes and the messages `prompts/get` renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// Unique name.
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// What the prompt is for.
    pub description: Option<String>,
    /// The arguments it takes, in order.
    pub arguments: Vec<PromptArgument>,
    /// The messages it renders, in order.
    pub messages: Vec<MessageTemplate>,
    /// Extra `_meta` published on the prompt.
    pub meta: JsonObject,
    /// MCP `icons`, as an upstream listed them.
    pub icons: Option<Value>,
    /// Where it was defined.
    pub source: SourceLocation,
    /// The server that renders it, for an upstream's prompt (`messages` is then empty).
    pub remote: Option<Remote>,
}

impl Prompt {
    /// A prompt with no arguments and no messages.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            messages: Vec::new(),
            meta: JsonObject::new(),
            icons: None,
            source: SourceLocation::default(),
            remote: None,
        }
    }

    /// The argument called `name`.
    pub fn argument(&self, name: &str) -> Option<&PromptArgument> {
        self.arguments.iter().find(|argument| argument.name == name)
    }

    /// The `prompts/list` entry: `{name, title?, description?, arguments?, icons?, _meta?}`.
    pub fn to_mcp(&self) -> Value {
        let mut prompt = JsonObject::new();
        prompt.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            prompt.insert("title".into(), json!(title));
        }
        if let Some(description) = &self.description {
            prompt.insert("description".into(), json!(description));
        }
        if !self.arguments.is_empty() {
            let arguments = self.arguments.iter().map(PromptArgument::to_mcp).collect();
            prompt.insert("arguments".into(), Value::Array(arguments));
        }
        if let Some(icons) = &self.icons {
            prompt.insert("icons".into(), icons.clone());
        }
        if !self.meta.is_empty() {
            prompt.insert("_meta".into(), Value::Object(self.meta.clone()));
        }
        Value::Object(prompt)
    }

    /// Renders the messages with `arguments` (`prompts/get`).
    ///
    /// A required argument that is missing or empty is an error naming it; an optional one
    /// renders as empty text; arguments the prompt does not declare are ignored. String
    /// values are used as they are, other JSON values as compact JSON. Embedded resources
    /// are read from `resources`; a text message that renders empty, and a resource whose
    /// optional URI argument is left out, are left out.
    pub fn render(
        &self,
        arguments: &JsonObject,
        resources: &dyn ResourceReader,
    ) -> Result<Vec<PromptMessage>, PromptError> {
        if self.remote.is_some() {
            let result = self.get_result(arguments, resources, None)?;
            return serde_json::from_value(result["messages"].clone()).map_err(|error| {
                PromptError::Remote {
                    prompt: self.name.clone(),
                    code: -32603,
                    message: format!("its server answered messages Toolsmith cannot read: {error}"),
                }
            });
        }
        let value = |name: &str| match arguments.get(name) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        };
        if let Some(missing) = self
            .arguments
            .iter()
            .find(|argument| argument.required && value(&argument.name).is_empty())
        {
            return Err(PromptError::MissingArgument {
                prompt: self.name.clone(),
                argument: missing.name.clone(),
            });
        }
        let mut messages = Vec::with_capacity(self.messages.len());
        for message in &self.messages {
            let content = match &message.content {
                ContentTemplate::Text(template) => {
                    let text = template.render(value);
                    if text.trim().is_empty() {
                        continue;
                    }
                    Content::text(text)
                }
                ContentTemplate::Image { data, mime_type } => Content::image(data, mime_type),
                ContentTemplate::Audio { data, mime_type } => Content::audio(data, mime_type),
                ContentTemplate::Resource(source) => {
                    let (uri, from_argument) = match source {
                        UriSource::Fixed(uri) => (uri.clone(), false),
                        UriSource::Argument(name) => (value(name), true),
                    };
                    // An optional argument left out embeds nothing.
                    if from_argument && uri.is_empty() {
                        continue;
                    }
                    let contents =
                        resources
                            .read(&uri)
                            .map_err(|source| PromptError::Resource {
                                prompt: self.name.clone(),
                                uri: uri.clone(),
                                source,
                                from_argument,
                            })?;
                    Content::resource(contents.to_embedded())
                }
            };
            messages.push(PromptMessage {
                role: message.role,
                content,
            });
        }
        Ok(messages)
    }

    /// The `prompts/get` result: `{"description"?, "messages": [...]}`. An upstream's prompt
    /// asks `client` what its server asks while rendering it.
    pub fn get_result(
        &self,
        arguments: &JsonObject,
        resources: &dyn ResourceReader,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<Value, PromptError> {
        if let Some(remote) = &self.remote {
            // The upstream's result as it gave it: its messages, description and `_meta`.
            return remote
                .forward()
                .get_prompt(&remote.name, &Remote::string_arguments(arguments), client)
                .map_err(|error| PromptError::Remote {
                    prompt: self.name.clone(),
                    code: error.code,
                    message: error.message,
                });
        }
        let messages = self.render(arguments, resources)?;
        let mut result = JsonObject::new();
        if let Some(description) = &self.description {
            result.insert("description".into(), json!(description));
        }
        result.insert(
            "messages".into(),
            serde_json::to_value(messages)
                .expect("prompt messages always serialize: they hold only strings"),
        );
        Ok(Value::Object(result))
    }

    /// Completion values for `argument` that start with `prefix` (ignoring case), from the
    /// argument's `values`; empty for an unknown argument or one without values.
    /// An upstream's prompt asks its server; what it cannot answer completes nothing.
    pub fn complete(&self, argument: &str, prefix: &str) -> Vec<String> {
        if let Some(remote) = &self.remote {
            return remote
                .forward()
                .complete(CompletionRef::Prompt(&remote.name), argument, prefix)
                .unwrap_or_default();
        }
        self.argument(argument)
            .map(|argument| complete_from(&argument.values, prefix))
            .unwrap_or_default()
    }
}

/// The prompts a server offers, sorted by name (the stable order of `prompts/list`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompts {
    prompts: Vec<Prompt>,
}

impl Prompts {
    /// A set of prompts; of two with the same name the first is kept.
    pub fn new(mut prompts: Vec<Prompt>) -> Self {
        prompts.sort_by(|a, b| a.name.cmp(&b.name));
        prompts.dedup_by(|later, earlier| later.name == earlier.name);
        Self { prompts }
    }

    /// Whether there are no prompts.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    /// The prompts, sorted by name.
    pub fn list(&self) -> &[Prompt] {
        &self.prompts
    }

    /// The prompt called `name`, or [`PromptError::UnknownPrompt`] with suggestions.
    pub fn get(&self, name: &str) -> Result<&Prompt, PromptError> {
        self.prompts
            .binary_search_by(|prompt| prompt.name.as_str().cmp(name))
            .map(|index| &self.prompts[index])
            .map_err(|_| PromptError::UnknownPrompt {
                name: name.to_owned(),
                suggestions: did_you_mean(name, self.prompts.iter().map(|p| p.name.as_str()))
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            })
    }

    /// Renders the prompt called `name` into its `prompts/get` result (see
    /// [`Prompt::get_result`]).
    pub fn get_result(
        &self,
        name: &str,
        arguments: &JsonObject,
        resources: &dyn ResourceReader,
        client: Option<&Arc<dyn ClientBridge>>,
    ) -> Result<Value, PromptError> {
        self.get(name)?.get_result(arguments, resources, client)
    }

    /// Completion values for an argument of the prompt called `name` (`completion/complete`
    /// with a `ref/prompt` reference).
    pub fn complete(
        &self,
        name: &str,
        argument: &str,
        prefix: &str,
    ) -> Result<Vec<String>, PromptError> {
        Ok(self.get(name)?.complete(argument, prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::NoResources;
    use crate::template::scan;

    fn text(source: &str) -> ContentTemplate {
        ContentTemplate::Text(TextTemplate::from_tokens(scan(source).unwrap()))
    }

    fn arguments(value: Value) -> JsonObject {
        match value {
            Value::Object(object) => object,
            other => panic!("arguments must be an object, got {other}"),
        }
    }

    fn with_arguments() -> Prompt {
        let mut prompt = Prompt::new("test_prompt_with_arguments");
        prompt.description = Some("A prompt with required arguments".into());
        prompt.arguments = vec![
            PromptArgument {
                required: true,
                values: vec!["paris".into(), "park".into(), "Party".into(), "rome".into()],
                ..PromptArgument::new("arg1")
            },
            PromptArgument::new("arg2"),
        ];
        prompt.messages = vec![MessageTemplate {
            role: Role::User,
            content: text("Prompt with arguments: arg1='{{arg1}}', arg2='{{arg2}}'"),
        }];
        prompt
    }

    #[test]
    fn renders_arguments_into_one_user_message() {
        let messages = with_arguments()
            .render(
                &arguments(json!({"arg1": "hello", "arg2": "world"})),
                &NoResources,
            )
            .unwrap();
        assert_eq!(
            serde_json::to_value(messages).unwrap(),
            json!([{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='hello', arg2='world'"}}])
        );
    }

    #[test]
    fn missing_required_argument_is_named() {
        let error = with_arguments()
            .render(&arguments(json!({"arg2": "world"})), &NoResources)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "prompt `test_prompt_with_arguments` needs argument `arg1`"
        );
        assert_eq!(error.json_rpc_code(), -32602);
    }

    #[test]
    fn lists_arguments_in_mcp_shape() {
        assert_eq!(
            with_arguments().to_mcp(),
            json!({
                "name": "test_prompt_with_arguments",
                "description": "A prompt with required arguments",
                "arguments": [{"name": "arg1", "required": true}, {"name": "arg2", "required": false}]
            })
        );
    }

    #[test]
    fn completes_from_values_ignoring_case() {
        let prompt = with_arguments();
        assert_eq!(prompt.complete("arg1", "par"), ["paris", "park", "Party"]);
        assert_eq!(
            prompt.complete("arg1", ""),
            ["paris", "park", "Party", "rome"]
        );
        assert!(prompt.complete("arg2", "x").is_empty());
        assert!(prompt.complete("nope", "").is_empty());
    }

    #[test]
    fn unreadable_resource_from_an_argument_is_the_clients_error() {
        let mut prompt = Prompt::new("embed");
        prompt.arguments = vec![PromptArgument {
            required: true,
            ..PromptArgument::new("uri")
        }];
        prompt.messages = vec![MessageTemplate {
            role: Role::User,
            content: ContentTemplate::Resource(UriSource::Argument("uri".into())),
        }];
        let error = prompt
            .render(&arguments(json!({"uri": "test://nope"})), &NoResources)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "prompt `embed` embeds resource `test://nope`: unknown resource `test://nope`"
        );
        assert_eq!(error.json_rpc_code(), -32602);

        // Left out, an optional URI argument embeds nothing.
        prompt.arguments[0].required = false;
        assert!(
            prompt
                .render(&JsonObject::new(), &NoResources)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn unknown_prompt_suggests_close_names() {
        let prompts = Prompts::new(vec![with_arguments(), Prompt::new("test_simple_prompt")]);
        assert_eq!(prompts.list()[1].name, "test_simple_prompt");
        let error = prompts.get("test_simple_promt").unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown prompt `test_simple_promt`; did you mean `test_simple_prompt`?"
        );
    }
}
