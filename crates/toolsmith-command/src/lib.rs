//! Command tools for Toolsmith: any executable, in any language, as an MCP tool
//! (docs/tools.md, "Command tools").
//!
//! A manifest such as `git_log.toml` with `command = ["git", "log", "-n", "{count}"]` or
//! `command = ["python3", "weather.py"]` becomes a [`CommandTool`], which implements the
//! model's [`Tool`](toolsmith_model::Tool) trait, so the server runs it like any other tool.
//!
//! - [`CommandTool`]: spawns the program per call (never through a shell) in its own process
//!   group, hands it the arguments as JSON on stdin, turns stdout into the result, and kills
//!   the whole group on timeout, cancellation or runaway output.
//! - [`CommandInit`]: a manifest's `init = [...]`, a program run once before the first call
//!   of the tools naming it, the way a command tool runs.
//! - [`WorkerPool`]: a manifest's `worker = true`, warm processes serving one call at a
//!   time as a JSON line on stdin answered by a JSON line on stdout (docs/tools.md, "Warm
//!   command tools"), shared by the tools whose manifests name the same command.
//! - [`Confinement`] and [`confined`]: what the programs a package's tool starts may touch
//!   (docs/packages.md, "Command tools of a package"): Landlock where the kernel has it,
//!   refused where it does not.
//! - [`ArgvTemplate`]: the `{name}` placeholders of a command line, checked against the
//!   tool's parameters at load time ([`TemplateError`] lists the valid names).
//!
//! The protocol a program sees:
//!
//! | channel | what |
//! |---|---|
//! | stdin | the arguments, schema defaults filled in, as one compact JSON object; then closed |
//! | argv | the command with `{name}` placeholders substituted |
//! | working directory | the client's root when known, else the tools folder |
//! | environment | `PATH`, `HOME`, `LANG`, what `permissions.env` names, `TOOLSMITH_TOOL`, `TOOLSMITH_TOOL_DIR`, `TOOLSMITH_OPTIONS`, `TOOLSMITH_CALL_ID` |
//! | stdout | an MCP `CallToolResult` object (passed through), other JSON (structured content) or text |
//! | exit status | non-zero fails the call with the tail of stderr |
//!
//! ```
//! use std::time::Duration;
//! use serde_json::json;
//! use toolsmith_command::CommandTool;
//! use toolsmith_model::{CallContext, ParamType, Parameter, Tool, ToolDefinition, ToolReturn, input_schema};
//!
//! let schema = input_schema(&[Parameter::new("name", ParamType::String)]);
//! let definition = ToolDefinition::new("greet", "Greet someone by name.", schema);
//! let command = vec!["echo".to_owned(), "Hello, {name}!".to_owned()];
//! let tool = CommandTool::new(definition, command, ".").expect("`name` is a parameter");
//!
//! let arguments = json!({"name": "Ada"}).as_object().cloned().unwrap();
//! let returned = tool.call(&arguments, &CallContext::detached(Duration::from_secs(5)));
//! assert_eq!(returned, Ok(ToolReturn::Text("Hello, Ada!".into())));
//!
//! let misspelt = vec!["echo".to_owned(), "{nmae}".to_owned()];
//! let definition = tool.definition().clone();
//! let error = CommandTool::new(definition, misspelt, ".").unwrap_err();
//! assert!(error.to_string().contains("valid names: `name`"));
//! ```

mod confine;
mod init;
mod leftovers;
mod output;
mod process;
mod template;
mod tool;
mod worker;
mod worker_process;

pub use confine::{Confinement, confined, confinement_support};
pub use init::CommandInit;
pub use template::{ArgvTemplate, TemplateError};
pub use tool::{CommandTool, DEFAULT_OUTPUT_LIMIT};
pub use worker::{WorkerPool, WorkerSettings};
