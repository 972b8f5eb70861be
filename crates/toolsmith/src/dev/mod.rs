//! The `toolsmith-dev` profile (docs/profiles.md, "The toolsmith-dev profile"): tools that
//! let an AI assistant write tools in the folder being served, over MCP. One file per tool;
//! each implements the model's [`Tool`] trait and is published with the folder's tools
//! ([`ServedFolder::add_builtins`]), so the server calls them like any other.
//!
//! They work on the served folder through [`Workbench`]: files are read and written only
//! inside it (`paths.rs`), and a write reloads the folder through the one reload path
//! ([`ServedFolder::reload`]) before it is answered, so the tool it defines is listed
//! (`notifications/tools/list_changed`) and callable by the time the client reads the
//! answer. A dev tool runs on a call thread of the server, outside any async runtime,
//! which is what publishing a reload needs (`ServerState::replace_blocking`).

mod call;
mod check;
mod list_tools;
mod new_tool;
mod paths;
mod read_file;
mod test;
mod write_file;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;
use toolsmith_folder::ToolFolder;
use toolsmith_model::{
    CallContext, CallOutcome, Content, Diagnostic, JsonObject, SourceLocation, Tool,
    ToolDefinition, ToolFailure, ToolReturn,
};

use crate::served::ServedFolder;

/// The profile's name: `toolsmith serve --profile toolsmith-dev DIR`.
pub(crate) const PROFILE: &str = toolsmith_folder::DEV_PROFILE;

/// What a dev tool's definition names as its source.
const SOURCE: &str = "<toolsmith-dev>";

/// Adds the dev tools to `served` when `profile` is `toolsmith-dev`; returns whether it
/// did. The folder is then also to be watched, for edits made outside MCP.
pub(crate) fn attach(served: &Arc<ServedFolder>, profile: Option<&str>) -> anyhow::Result<bool> {
    // The folder's own profiles were applied when it was loaded (an unknown one refused).
    if profile != Some(PROFILE) {
        return Ok(false);
    }
    let bench = Arc::new(Workbench::new(served)?);
    let tools: Vec<Arc<dyn Tool>> = [
        (list_tools::definition(), list_tools::run as Run),
        (read_file::definition(), read_file::run),
        (write_file::definition(), write_file::run),
        (check::definition(), check::run),
        (test::definition(), test::run),
        (call::definition(), call::run),
        (new_tool::definition(), new_tool::run),
    ]
    .into_iter()
    .map(|(definition, run)| {
        Arc::new(DevTool {
            definition,
            bench: Arc::clone(&bench),
            run,
        }) as Arc<dyn Tool>
    })
    .collect();
    served
        .add_builtins(tools)
        .context("cannot publish the toolsmith-dev tools")?;
    Ok(true)
}

/// How a dev tool runs: on the workbench, with the call's validated arguments.
type Run = fn(&Workbench, &JsonObject, &CallContext) -> Result<ToolReturn, ToolFailure>;

/// One dev tool: its definition (each tool's file has a `definition()` and a `run`).
struct DevTool {
    definition: ToolDefinition,
    bench: Arc<Workbench>,
    run: Run,
}

impl Tool for DevTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        (self.run)(&self.bench, arguments, context)
    }
}

/// What every dev tool works on: the served folder, and its path with links resolved, which
/// every path a client gives must stay inside.
pub(crate) struct Workbench {
    /// Weak: the served folder publishes the dev tools, which hold this.
    served: Weak<ServedFolder>,
    root: PathBuf,
}

impl Workbench {
    fn new(served: &Arc<ServedFolder>) -> anyhow::Result<Self> {
        let root = served.root().canonicalize().with_context(|| {
            format!(
                "cannot resolve the tools folder `{}`",
                served.root().display()
            )
        })?;
        Ok(Self {
            served: Arc::downgrade(served),
            root,
        })
    }

    /// The served folder.
    fn served(&self) -> Result<Arc<ServedFolder>, ToolFailure> {
        self.served
            .upgrade()
            .ok_or_else(|| ToolFailure::failed("the server is shutting down"))
    }

    /// The folder as it is on disk now (loaded again when its files changed).
    fn folder(&self) -> Result<Arc<ToolFolder>, ToolFailure> {
        self.served()?
            .fresh(PROFILE)
            .map_err(|error| ToolFailure::failed(format!("cannot load the tools folder: {error}")))
    }

    /// Loads the folder again and publishes it, after a write.
    fn reload(&self) -> Result<Arc<ToolFolder>, ToolFailure> {
        self.served()?.reload(PROFILE).map_err(|error| {
            ToolFailure::failed(format!("cannot reload the tools folder: {error}"))
        })
    }

    /// `path` (a loaded folder's, or a resolved one) relative to the folder, as clients
    /// name files; as it is when it is not inside.
    fn relative(&self, folder: &Path, path: &Path) -> PathBuf {
        path.strip_prefix(folder)
            .or_else(|_| path.strip_prefix(&self.root))
            .map_or_else(|_| path.to_owned(), Path::to_path_buf)
    }

    /// `diagnostic` with its file relative to the folder.
    fn relative_diagnostic(&self, folder: &Path, diagnostic: &Diagnostic) -> Diagnostic {
        let mut diagnostic = diagnostic.clone();
        diagnostic.location.path = self.relative(folder, &diagnostic.location.path);
        diagnostic
    }
}

/// A dev tool's definition: its input schema and output schema as JSON objects, published
/// from `<toolsmith-dev>`.
fn describe(
    name: &str,
    title: &str,
    description: &str,
    input: Value,
    output: Value,
) -> ToolDefinition {
    let mut definition = ToolDefinition::new(name, description, object(input));
    definition.title = Some(title.to_owned());
    definition.output_schema = Some(object(output).into());
    definition.source = SourceLocation::file(SOURCE);
    definition.keywords = vec!["toolsmith".to_owned(), "develop".to_owned()];
    definition
}

/// A definition's timeout, for dev tools that run other tools or whole test suites.
const LONG_TIMEOUT: Duration = Duration::from_mins(10);

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// A successful answer: `text` for the model to read, `structured` for programs.
fn answer(text: String, structured: Value) -> ToolReturn {
    ToolReturn::Outcome(CallOutcome {
        content: vec![Content::text(text)],
        structured_content: Some(structured),
        is_error: false,
        meta: None,
    })
}

/// The string argument `name` (the schema has made sure it is one when required).
fn string<'a>(arguments: &'a JsonObject, name: &str) -> Option<&'a str> {
    arguments.get(name).and_then(Value::as_str)
}
