//! Other MCP servers as a source of Toolsmith tools (docs/gateway.md): `[upstream.NAME]`
//! in a folder's `toolsmith.toml` names a program to run over stdio or a Streamable HTTP
//! URL, and each tool it lists is served under the upstream's prefix, behind the model's
//! one [`Tool`](toolsmith_model::Tool) trait, so search, profiles, lint and limits apply to
//! it like to any other tool. This crate and `toolsmith-server` are the two that name rmcp:
//! this one for its client.
//!
//! - [`UpstreamSpec`]: one `[upstream.NAME]` table, read.
//! - [`Upstream`]: the server itself, started when first asked for its tools, started
//!   again with backoff when it has stopped; its messages carry its stderr's tail.
//! - [`UpstreamTool`]: one of its tools, forwarded faithfully (arguments, progress, logs,
//!   cancellation, the result as it came).
//! - [`transform`]: a manifest's wrapping of one upstream tool (its own name, description
//!   and parameters), and the [`ArgumentMap`] that turns its calls' arguments back.
//! - [`OAuthClient`]: `oauth = {...}` of an upstream behind its own OAuth, whose tokens
//!   come from the client credentials grant (`oauth/`); the caller's token is sent on only
//!   with `forward_caller_token = true`.
//! - [`UpstreamContent`]: its prompts (under the prefix), resources and resource templates
//!   (under their own URIs), whose `prompts/get` and `resources/read` are forwarded.
//!
//! ```no_run
//! use std::path::Path;
//! use std::sync::Arc;
//! use toolsmith_model::SourceLocation;
//! use toolsmith_upstream::{Upstream, UpstreamSpec, UpstreamTool};
//!
//! let table = serde_json::json!({"command": ["toolsmith", "serve", "other-tools/"]});
//! let spec = UpstreamSpec::parse("other", &table, Path::new(".")).expect("a valid table");
//! let upstream = Arc::new(Upstream::new(spec));
//! let tools = upstream.tools().expect("it starts");
//! for tool in UpstreamTool::all(&upstream, &tools, &SourceLocation::default()) {
//!     println!("{}", toolsmith_model::Tool::definition(&tool).name);
//! }
//! ```

mod changes;
mod connection;
mod content;
mod direct;
mod oauth;
mod relay;
mod spec;
mod tool;
mod transform;

pub use changes::{on_resource_updated, on_tools_changed};
pub use connection::{Upstream, UpstreamError, kill_all};
pub use content::{Listing, UpstreamContent};
pub use oauth::{CALLER_META_KEY, OAuthClient};
/// A tool as an upstream lists it (rmcp's `Tool`).
pub use rmcp::model::Tool as RemoteTool;
pub use spec::{DEFAULT_STARTUP_TIMEOUT, KEYS, UpstreamSpec, UpstreamTransport};
pub use tool::{OPTIONS_META_KEY, UpstreamTool};
pub use toolsmith_model::sources::expand;
pub use transform::{ArgumentMap, ParameterChange, TransformError, transform};
