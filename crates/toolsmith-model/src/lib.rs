//! The pure core of Toolsmith: what a tool is, how its arguments are checked and how what it
//! returns becomes an MCP result.
//!
//! - [`ToolDefinition`]: everything known about a tool, rendered for `tools/list` by
//!   [`ToolDefinition::to_mcp`].
//! - [`Tool`]: the one trait every kind of tool (Starlark, manifest script, command, Rust)
//!   implements; the server calls tools only through it.
//! - [`Catalog`]: the tools of a server with their schema validators, and the single call
//!   path (validate → run → result contract → output check).
//! - [`LazyInit`]: a tool's `init`, run once before the first call of the tools naming it.
//! - [`Watchdog`] and [`CallFailure`]: the one call policy every call path follows — the
//!   deadline, the hard watchdog past it, and the result of a call whose tool gave none.
//! - [`Prompts`] and [`Resources`]: a server's MCP prompts (rendered with
//!   [`Prompt::render`]) and resources (read with [`Resources::read`], templates included).
//!
//! This crate does no I/O and has no async; it is handed text and values.
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolsmith_model::{
//!     CallContext, Catalog, JsonObject, ParamType, Parameter, Tool, ToolDefinition, ToolFailure, ToolReturn,
//!     input_schema,
//! };
//!
//! struct Shout(ToolDefinition);
//!
//! impl Tool for Shout {
//!     fn definition(&self) -> &ToolDefinition {
//!         &self.0
//!     }
//!     fn call(&self, arguments: &JsonObject, _: &CallContext) -> Result<ToolReturn, ToolFailure> {
//!         let text = arguments["text"].as_str().unwrap_or_default();
//!         Ok(ToolReturn::Text(text.to_uppercase()))
//!     }
//! }
//!
//! let schema = input_schema(&[Parameter::new("text", ParamType::String)]);
//! let catalog = Catalog::new(vec![Arc::new(Shout(ToolDefinition::new("shout", "Shout text.", schema)))], vec![]);
//! let context = CallContext::detached(std::time::Duration::from_secs(1));
//! let arguments = json!({"text": "hi"}).as_object().cloned().unwrap();
//! let outcome = catalog.call("shout", arguments, &context).unwrap();
//! assert_eq!(outcome.joined_text(), "HI");
//! assert!(catalog.call("shuot", JsonObject::new(), &context).unwrap_err().to_string().contains("did you mean `shout`"));
//! ```

mod caller;
mod catalog;
mod deferred;
mod definition;
mod diagnostic;
mod discovery;
pub mod duration;
mod ending;
mod evaluator;
mod facts;
mod forward;
mod held_schema;
mod hint;
mod init;
mod json;
pub mod names;
mod notifications;
mod outcome;
mod prompt;
mod properties;
mod resource;
mod schema;
mod serving;
mod skill;
pub mod sources;
pub mod telemetry;
pub mod template;
mod tool;
pub mod toon;
mod transport;
mod uri_template;
mod validate;
mod watchdog;

pub use caller::{AccessToken, Caller, may_use};
pub use catalog::{Catalog, CatalogEntry, UnknownTool};
pub use deferred::{Adjusted, Deferred, LoadTool};
pub use definition::{
    Annotations, DEFAULT_INIT_TIMEOUT, DEFAULT_TIMEOUT, Icon, Init, JsonObject, PackageOrigin,
    PermissionFamily, Permissions, Requires, SourceLocation, TaskSupport, TextFormat,
    ToolDefinition, Ui, Unmet, Withheld, subfolders,
};
pub use diagnostic::{Diagnostic, Severity, Span, line_column, offset_of};
pub use discovery::{DEFAULT_BUDGET_TOKENS, SearchMode, SearchSettings, UnknownSearchMode};
pub use ending::OutcomeKind;
pub use evaluator::{EvaluatorMode, EvaluatorSettings, RUN_CODE, UnknownEvaluatorMode};
pub use facts::{Call, Code, Key, SourceFacts};
pub use forward::{CompletionRef, Forward, ForwardError, Remote};
pub use held_schema::Schema;
pub use hint::Hint;
pub use init::{
    InitStatus, InitSummary, InitializedTool, Initializer, LazyInit, MAX_INIT_BACKOFF,
    RETRIES_BEFORE_BACKOFF,
};
pub use notifications::{NOTIFICATION_BURST, NOTIFICATIONS_PER_SECOND};
pub use outcome::{CallOutcome, Content, EmbeddedResource, ToolReturn, render};
pub use prompt::{
    ContentTemplate, MessageTemplate, Prompt, PromptArgument, PromptError, PromptMessage, Prompts,
    Role, UriSource,
};
pub use properties::{PropertyError, TOOL_PROPERTIES, apply_property, check_init, kind};
pub use resource::{
    Escape, MCP_APP_MIME_TYPE, NoResources, RESOURCE_NOT_FOUND, Resource, ResourceBody,
    ResourceContents, ResourceError, ResourceInfo, ResourceReader, ResourceTemplate, Resources,
};
pub use schema::{MANIFEST_TYPES, ParamType, Parameter, input_schema, wrapped_output_schema};
pub use serving::{Introspection, LimitSettings, OAuthSettings};
pub use skill::{
    MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILL_FILE, SKILL_MANIFEST, SKILL_SCHEME, SKILLS_EXTENSION,
    Skill, SkillFile,
};
pub use tool::{
    AsyncTool, CallContext, ClientBridge, InnerCall, Interrupt, LogLevel, NoClient, Question,
    StopReason, Tool, ToolFailure, ToolFuture, Withdrawal,
};
pub use transport::Transport;
pub use uri_template::{UriTemplate, UriTemplateError, percent_encode};
pub use validate::{
    ArgumentErrors, ArgumentValidator, SchemaError, SchemaValidator, Violation, compile_schema,
};
pub use watchdog::{CallFailure, HARD_WATCHDOG_GRACE, Watchdog};
