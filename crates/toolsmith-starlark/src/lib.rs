//! Starlark tools for Toolsmith: load a file, introspect its functions into MCP tool
//! definitions, and run them with limits.
//!
//! Two forms are supported (docs/tools.md, "Starlark tools" and "Manifest + script
//! (Scriptling)"):
//!
//! - **Native** `.star` files, loaded with [`load_module`]: the file runs once at load with
//!   a global `mcp` module; each `mcp.tool(function, ...)` call registers a tool whose name,
//!   parameters, types and descriptions come from the `def`, its annotations and its
//!   docstring. Calls run the frozen function with the arguments as keywords.
//! - **Manifest + script** (Scriptling-compatible), loaded with [`load_script`]: the
//!   manifest gives the definition; the script is parsed once and runs top to bottom on each
//!   call with a `tool` module (`tool.get_int("a")`, `tool.return_string(...)`, …).
//!
//! Both produce [`toolsmith_model::Tool`]s, so the catalog and the server call them like any
//! other tool.
//!
//! # What a native file can use
//!
//! - `mcp.tool(function, name=, title=, description=, keywords=, tags=, discoverable=,
//!   read_only=, destructive=, idempotent=, open_world=, params=, output=, timeout=,
//!   options=, overrides=, requires=, init=, init_timeout=, permissions=, ui=, icons=,
//!   examples=, text_format=)`: every keyword but `params` and `init` goes through
//!   [`toolsmith_model::apply_property`], the parser manifests use too; `init = setup`
//!   names a top-level function run once before the first call of the tools naming it
//!   (its return value is `mcp.init_value()`). Parameter types come from annotations (`str`, `int`, `float`,
//!   `bool`, `list[T]`, `dict`, `T | None`, `typing.Any`), descriptions from the docstring
//!   (text before `Args:`/`Returns:`, and the `Args:` entries).
//! - Results ([the result contract](toolsmith_model::CallOutcome), docs/result-contract.md):
//!   return a string, a dict, a list or number, or
//!   `mcp.error(message, **details)`, `mcp.result(content=[...], structured=..., is_error=...)`
//!   and the content helpers `mcp.text`, `mcp.image`, `mcp.audio`, `mcp.resource`,
//!   `mcp.resource_link` (alone or in a list). Annotations are not checked at run time, so
//!   a `-> str` tool may still return `mcp.error(...)`.
//! - The call: `mcp.init_value()`, `mcp.option(name, default)`, `mcp.progress(done, total, message)`,
//!   `mcp.log(level, message)`, `mcp.sample(prompt, system, max_tokens)`,
//!   `mcp.elicit(message, schema)`, `mcp.roots()`; and, as the tool's `permissions`
//!   grant, `mcp.read_file(path)`, `mcp.write_file(path, text)`, `mcp.list_dir(path)`,
//!   `mcp.getenv(name, default)`, and the `http` module (`http.get`, `http.post`,
//!   `http.request`) to the hosts `net` names.
//! - Besides Starlark's builtins: `json.encode`/`json.decode`, `sum(iterable, start=0)`,
//!   `struct`, `record`, `enum`, `set`, `map`, `filter`, `partial`, `typing`.
//!
//! # Limits
//!
//! Every evaluation (a file's top level at load, each call) stops at the deadline or when
//! the call is cancelled (checked every thousand loop iterations or calls), and fails with
//! a clean error past [`heap_limit`] of Starlark heap or [`CALL_DEPTH_LIMIT`] nested calls.
//! Single native steps that no periodic check can interrupt are bounded where Starlark
//! lets us: `range` is limited to [`MAX_RANGE_LENGTH`] items; `+`, `*`, `%`, `x += y`,
//! f-strings, `str`, `repr`, `print`, `json.encode`, `.join`, `.replace`, `.format` and `.extend`
//! measure what they would build and refuse results over [`MAX_VALUE_BYTES`]; values are
//! converted to JSON at most 128 levels deep and a result at most [`result_limit`] bytes
//! long; a panic in the interpreter becomes an error. All running evaluations share one
//! [`memory_budget`]: a call that cannot get its share fails as busy. Not covered: `+=` on
//! an attribute or index, the other augmented operators, and guarded methods inside an
//! f-string's braces (caught only by the periodic heap check); callers run calls under a
//! watchdog. The heap limit counts
//! garbage too: starlark collects it only between a file's top-level statements.
//! `print` goes to the `tracing` log (target `toolsmith_starlark::print`), never to stdout;
//! there is no file, network or environment access beyond what the tool's `permissions`
//! grant, and `load()` is refused.
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use std::time::Duration;
//! use serde_json::json;
//! use toolsmith_model::{CallContext, Catalog};
//! use toolsmith_starlark::{LoadSettings, load_module};
//!
//! let source = r#"
//! def shout(text: str, times: int = 1) -> str:
//!     """Shout text back.
//!
//!     Args:
//!         text: What to shout.
//!         times: How many times.
//!     """
//!     return " ".join([text.upper()] * times)
//!
//! mcp.tool(shout, read_only=True)
//! "#;
//! let settings = LoadSettings::new(PathBuf::from("tools"));
//! let loaded = load_module(Path::new("tools/shout.star"), source, &settings);
//! assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
//!
//! let definition = loaded.tools[0].definition().to_mcp();
//! assert_eq!(definition["description"], "Shout text back.");
//! assert_eq!(definition["inputSchema"]["properties"]["times"]["default"], 1);
//!
//! let catalog = Catalog::new(loaded.tools, loaded.diagnostics);
//! let context = CallContext::detached(Duration::from_secs(5));
//! let arguments = json!({"text": "hi", "times": 2}).as_object().cloned().unwrap();
//! let outcome = catalog.call("shout", arguments, &context).unwrap();
//! assert_eq!(outcome.joined_text(), "HI HI");
//! ```

mod docstring;
mod engine;
mod init;
mod native;
pub mod net;
mod script;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toolsmith_model::{Diagnostic, Tool, ToolDefinition};

pub use engine::{
    CALL_DEPTH_LIMIT, DEFAULT_HEAP_LIMIT, DEFAULT_RESULT_LIMIT, HEAP_LIMIT_VAR, MAX_RANGE_LENGTH,
    MAX_VALUE_BYTES, MEMORY_BUDGET_VAR, RESULT_LIMIT_VAR, grant_folder, heap_limit, lexical,
    memory_budget, parse_size, result_limit, set_heap_limit, set_memory_budget, set_result_limit,
};
pub use engine::{
    CODE_FILE, CodeFailure, CodeHost, CodeRun, Definition, KeptGlobals, attribute_name, run_code,
};

/// How long evaluating a file's top level may take when nothing else is configured.
pub const DEFAULT_LOAD_TIMEOUT: Duration = Duration::from_secs(5);

/// How files are loaded.
#[derive(Debug, Clone)]
pub struct LoadSettings {
    /// The tools folder.
    pub base_dir: PathBuf,
    /// How long evaluating a file's top level may take.
    pub load_timeout: Duration,
    /// Applied to each tool's definition before its tool is built, so the tool runs with
    /// what it leaves; `None` keeps definitions as written.
    pub restrict: Option<Restrict>,
    /// Whether definitions keep their [`SourceFacts`](toolsmith_model::SourceFacts) (where
    /// each name and key is written, the calls the code makes), which only `toolsmith
    /// check` reads. A server leaves them out: on a folder of thousands of manifests they
    /// were a large share of its memory (docs/performance.md).
    pub source_facts: bool,
}

impl LoadSettings {
    /// Settings for the tools folder `base_dir` with the default load timeout.
    pub fn new(base_dir: impl Into<PathBuf>) -> Self {
        Self {
            base_dir: base_dir.into(),
            load_timeout: DEFAULT_LOAD_TIMEOUT,
            restrict: None,
            source_facts: true,
        }
    }
}

/// A change made to every definition a load builds a tool from: how the host's
/// `[packages.NAME] allow` caps the permissions a package's tools hold (docs/packages.md).
///
/// Two restrictions with the same `id` make the same change, so a reload may reuse a file
/// loaded under either.
#[derive(Clone)]
pub struct Restrict {
    /// Names the change: equal ids, equal changes.
    pub id: String,
    /// The change.
    pub apply: Arc<dyn Fn(&mut ToolDefinition) + Send + Sync>,
}

impl std::fmt::Debug for Restrict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Restrict")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl LoadSettings {
    /// `definition` as these settings let a tool hold it: restricted, and without its
    /// source facts unless they are kept.
    pub fn restricted(&self, mut definition: ToolDefinition) -> ToolDefinition {
        if let Some(restrict) = &self.restrict {
            (restrict.apply)(&mut definition);
        }
        if !self.source_facts {
            definition.facts = None;
        }
        definition
    }
}

/// What one `.star` file defined.
#[derive(Default)]
pub struct LoadedModule {
    /// The tools registered with `mcp.tool(...)`.
    pub tools: Vec<Arc<dyn Tool>>,
    /// What went wrong: a syntax error (then there are no tools), or one diagnostic per
    /// registration that could not become a tool.
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Debug for LoadedModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedModule")
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|tool| &tool.definition().name)
                    .collect::<Vec<_>>(),
            )
            .field("diagnostics", &self.diagnostics)
            .finish()
    }
}

/// Loads a native Starlark tool file (docs/tools.md, "Starlark tools").
///
/// The file is parsed, its top level evaluated once (within `settings.load_timeout`) and
/// frozen; each `mcp.tool(...)` call becomes a tool. Problems are diagnostics with the
/// file, line and column: a file that does not parse or fails at its top level yields no
/// tools; a bad `mcp.tool(...)` call loses only that tool.
pub fn load_module(path: &Path, source: &str, settings: &LoadSettings) -> LoadedModule {
    native::load(path, source, settings)
}

/// Loads the script of a manifest tool (docs/tools.md, "Manifest + script (Scriptling)"):
/// `.star`, or `.py` in Scriptling's Python subset.
///
/// The script is parsed once now (a syntax error is the returned diagnostic) and runs top
/// to bottom on every call, reading arguments with `tool.get_*` and setting the result
/// with `tool.return_*`; the first `return_*` call wins and the script runs on to its end.
/// `import scriptling.mcp.tool as tool` is accepted and ignored, `x is None` / `x is not
/// None` are read as `==` / `!=`, and `sum` is available.
pub fn load_script(
    definition: ToolDefinition,
    path: &Path,
    source: &str,
    settings: &LoadSettings,
) -> Result<Arc<dyn Tool>, Diagnostic> {
    script::load(
        settings.restricted(definition),
        path,
        source,
        settings.source_facts,
        &settings.base_dir,
    )
}
