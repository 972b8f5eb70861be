//! The one place that talks to the `starlark` crate: parsing (with the small source rewrites
//! Scriptling scripts need), the globals (`mcp`, `tool`, `sum`, guarded `range`/`+`/`*`),
//! evaluating a file once at load, and running a frozen function or a script per call with
//! the deadline, heap and call-depth limits. Everything it hands out is plain Rust data
//! ([`Registration`], [`FunctionSyntax`], [`RunError`]) or an opaque handle ([`Function`],
//! [`Program`]), so the rest of the crate never sees a `Value`.

mod budget;
mod builtins;
// SAFETY: as for `session`: only `#[derive(ProvidesStaticType)]`.
#[expect(
    unsafe_code,
    reason = "derive(ProvidesStaticType) expands to an unsafe impl"
)]
mod code;
mod convert;
mod facts;
mod host;
mod http_module;
mod mcp_module;
mod parse;
mod rewrite;
// SAFETY: the only unsafe code is what `#[derive(ProvidesStaticType)]` expands to, the
// starlark crate's own mechanism for downcasting `Evaluator::extra` and values.
#[expect(
    unsafe_code,
    reason = "derive(ProvidesStaticType) expands to an unsafe impl"
)]
mod session;
mod size;
mod syntax;
mod tool_module;
// SAFETY: as for `session`: only `#[derive(ProvidesStaticType)]`.
#[expect(
    unsafe_code,
    reason = "derive(ProvidesStaticType) expands to an unsafe impl"
)]
mod values;

use std::fmt::Write as _;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use starlark::environment::{FrozenModule, Globals, GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::Evaluator;
use starlark::syntax::{AstModule, Dialect, DialectTypes};
use starlark::values::{Heap, OwnedFrozenValue, Value};
use starlark::{ErrorKind, PrintHandler};
use toolsmith_model::{CallContext, JsonObject, StopReason, ToolDefinition, ToolReturn};

pub use budget::{
    DEFAULT_HEAP_LIMIT, DEFAULT_RESULT_LIMIT, HEAP_LIMIT_VAR, MEMORY_BUDGET_VAR, RESULT_LIMIT_VAR,
    heap_limit, memory_budget, parse_size, result_limit, set_heap_limit, set_memory_budget,
    set_result_limit,
};
pub use code::{
    CODE_FILE, CodeFailure, CodeHost, CodeRun, Definition, KeptGlobals, attribute_name, run_code,
};
pub(crate) use facts::FileFacts;
pub use host::{grant_folder, lexical};
pub(crate) use parse::parse;
pub(crate) use session::{ParamKind, Registration};
pub(crate) use syntax::{Annotation, FunctionSyntax};

use parse::first_line;

use session::{CallState, ScriptState, Session, Stage};

/// How many Starlark calls may be nested (recursion included).
pub const CALL_DEPTH_LIMIT: usize = 100;

/// The longest `range(...)` a script may create. Longer ranges are what turns
/// `list(range(n))`/`sorted(range(n))` into a multi-gigabyte native allocation that no
/// periodic check can interrupt.
pub const MAX_RANGE_LENGTH: i64 = 10_000_000;

/// The largest string or list a single `+` or `*` may build (in bytes; list items count
/// 8 bytes each).
pub const MAX_VALUE_BYTES: usize = 64 << 20;

/// Brackets nested deeper than this are refused before parsing: the parser is recursive and
/// would overflow the native stack long before a real file gets close.
const MAX_NESTING: usize = 200;

/// The module variable prefix under which `mcp.tool` keeps registered functions alive
/// through freezing; `$` keeps it out of reach of Starlark code.
const TOOL_SLOT_PREFIX: &str = "$toolsmith_tool_";

/// Which global environment a file is evaluated in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// A `.star` file that registers tools with `mcp.tool(...)`.
    Native,
    /// A manifest's script, run top to bottom per call with the `tool` module.
    Script,
}

/// A problem found before anything ran: a syntax error or a construct we refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceError {
    /// Diagnostic rule id.
    pub(crate) rule: &'static str,
    /// What is wrong.
    pub(crate) message: String,
    /// Where (1-based).
    pub(crate) line: u32,
    /// Where (1-based).
    pub(crate) column: u32,
    /// Byte range, when known.
    pub(crate) span: Option<Range<usize>>,
    /// How to fix it.
    pub(crate) help: Option<String>,
}

/// A parsed, checked file; evaluated once ([`load_native`]) or per call ([`run_script`]).
#[derive(Clone)]
pub(crate) struct Program {
    ast: AstModule,
    form: Form,
    /// The file name spans report.
    file: String,
    /// The top-level `def`s, for annotations and docstrings.
    functions: Vec<FunctionSyntax>,
    /// The calls, strings and registrations of the unedited file.
    facts: FileFacts,
}

impl Program {
    /// The top-level functions of the file.
    pub(crate) fn functions(&self) -> &[FunctionSyntax] {
        &self.functions
    }

    /// The calls, strings and registrations of the file, as written.
    pub(crate) fn facts(&self) -> &FileFacts {
        &self.facts
    }
}

/// A frozen Starlark function, callable from any thread.
pub(crate) struct Function(OwnedFrozenValue);

/// Why an evaluation did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunError {
    /// What happened.
    pub(crate) kind: RunErrorKind,
    /// The error message, without location.
    pub(crate) message: String,
    /// Where it happened, when known.
    pub(crate) location: Option<Location>,
    /// The innermost Starlark frame: `in `f`, called from file:line:col`.
    pub(crate) frame: Option<String>,
}

/// The classes of [`RunError`] that callers treat differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunErrorKind {
    /// The script failed (`fail`, a type error, a limit, …).
    Script,
    /// The deadline passed or the call was cancelled.
    Stopped(StopReason),
}

/// A position in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    /// The file, as given to the parser.
    pub(crate) file: String,
    /// 1-based line.
    pub(crate) line: u32,
    /// 1-based column.
    pub(crate) column: u32,
    /// Byte range.
    pub(crate) span: Range<usize>,
}

impl RunError {
    /// The message with its location and innermost frame, as a tool failure shows it.
    pub(crate) fn describe(&self) -> String {
        let mut text = match &self.location {
            Some(at) => format!("{}:{}:{}: {}", at.file, at.line, at.column, self.message),
            None => self.message.clone(),
        };
        if let Some(frame) = &self.frame {
            let _ = write!(text, "\n  {frame}");
        }
        text
    }
}

/// The dialect both forms use: Starlark with top-level statements, f-strings, keyword-only
/// arguments and type annotations that are parsed but not checked at run time (arguments
/// are validated against the JSON Schema before a call, and the result contract lets any
/// tool return `mcp.error(...)` whatever its annotation: docs/result-contract.md).
fn dialect() -> Dialect {
    Dialect {
        enable_def: true,
        enable_lambda: true,
        // Kept on so that a `load` statement parses and gets our own diagnostic.
        enable_load: true,
        enable_keyword_only_arguments: true,
        enable_positional_only_arguments: false,
        enable_types: DialectTypes::ParseOnly,
        enable_load_reexport: false,
        enable_top_level_stmt: true,
        enable_f_strings: true,
        ..Dialect::Standard
    }
}

fn globals(form: Form) -> &'static Globals {
    static NATIVE: OnceLock<Globals> = OnceLock::new();
    static SCRIPT: OnceLock<Globals> = OnceLock::new();
    let build = || {
        use LibraryExtension::{
            EnumType, Filter, Map, NamespaceType, Partial, Print, RecordType, SetType, StructType,
            Typing,
        };
        GlobalsBuilder::extended_by(&[
            StructType,
            RecordType,
            EnumType,
            NamespaceType,
            SetType,
            Map,
            Filter,
            Partial,
            Print,
            Typing,
        ])
        .with(builtins::register)
        .with_namespace("json", builtins::json)
        .with_namespace("mcp", mcp_module::register)
        .with_namespace("http", http_module::register)
    };
    match form {
        Form::Native => NATIVE.get_or_init(|| build().build()),
        Form::Script => SCRIPT.get_or_init(|| {
            build()
                .with_namespace("tool", tool_module::register)
                .with_namespace("scriptling", |scriptling| {
                    scriptling.namespace("mcp", |mcp| mcp.namespace("tool", tool_module::register));
                })
                .build()
        }),
    }
}

/// One `mcp.tool(...)` call of a loaded file, with the frozen functions it named.
pub(crate) struct Registered {
    pub(crate) registration: Registration,
    /// The tool's function, when it is one we can call.
    pub(crate) function: Option<Function>,
    /// The `init` function, when it names one we can call.
    pub(crate) init: Option<Function>,
}

/// Evaluates a native tool file once and freezes it; returns what `mcp.tool` registered.
pub(crate) fn load_native(
    program: &Program,
    timeout: Duration,
) -> Result<Vec<Registered>, RunError> {
    let deadline = Instant::now() + timeout;
    let session = Session {
        stage: Stage::Load(std::cell::RefCell::new(Vec::new())),
    };
    let printer = TracingPrint {
        file: &program.file,
    };
    let stop = || (Instant::now() >= deadline).then_some(StopReason::Timeout);
    let _reservation = reserve(&stop, deadline)?;
    let frozen = guarded(|| {
        Module::with_temp_heap(|module| {
            {
                let watch = Watch::new(&stop, module.heap());
                let mut eval = Evaluator::new(&module);
                configure(&mut eval, &printer, &watch);
                eval.extra = Some(&session);
                eval.eval_module(program.ast.clone(), globals(program.form))
                    .map_err(|error| watch.failed(&error))?;
            }
            module
                .freeze()
                .map_err(|error| RunError::script(format!("cannot freeze the module: {error:?}")))
        })
    })?;
    let Stage::Load(registrations) = session.stage else {
        unreachable!("the session was created in the load stage")
    };
    Ok(registrations
        .into_inner()
        .into_iter()
        .map(|registration| {
            let function = registration
                .slot
                .as_deref()
                .and_then(|slot| frozen_get(&frozen, slot));
            let init = registration
                .init
                .as_ref()
                .and_then(|init| init.slot.as_deref())
                .and_then(|slot| frozen_get(&frozen, slot));
            Registered {
                registration,
                function,
                init,
            }
        })
        .collect())
}

fn frozen_get(frozen: &FrozenModule, slot: &str) -> Option<Function> {
    frozen.get(slot).ok().map(Function)
}

/// What one call of a frozen function needs besides the function.
pub(crate) struct Invocation<'a> {
    /// The validated arguments.
    pub(crate) arguments: &'a JsonObject,
    /// Parameters that are passed as `None` when the caller omits them (`T | None` without
    /// a default).
    pub(crate) fill_none: &'a [String],
    /// The parameters the function declares; other arguments are dropped unless
    /// `accepts_extra`.
    pub(crate) declared: &'a [String],
    /// The function takes `**kwargs`.
    pub(crate) accepts_extra: bool,
    /// The running call.
    pub(crate) context: &'a CallContext,
    /// The tool being called.
    pub(crate) definition: &'a ToolDefinition,
    /// The tools folder the tool was loaded from.
    pub(crate) folder: &'a std::sync::Arc<std::path::Path>,
    /// What the tool's init returned, once it has run.
    pub(crate) init_value: Option<&'a serde_json::Value>,
}

/// Calls a frozen function with keyword arguments from JSON and converts what it returns.
pub(crate) fn call_function(
    function: &Function,
    invocation: &Invocation<'_>,
) -> Result<ToolReturn, RunError> {
    let session = Session {
        stage: Stage::Call(CallState {
            context: invocation.context,
            definition: invocation.definition,
            folder: Some(invocation.folder),
            init_value: invocation.init_value,
            script: None,
            tools: None,
        }),
    };
    let file = invocation.definition.source.path.display().to_string();
    let printer = TracingPrint { file: &file };
    let stop = || invocation.context.stop_reason();
    let _reservation = reserve(&stop, invocation.context.deadline)?;
    guarded(|| {
        Module::with_temp_heap(|module| {
            let heap = module.heap();
            // SAFETY: `owned_frozen_value` records `function`'s frozen heap as a dependency
            // of this module's frozen heap, so the value stays alive as long as the module;
            // and `function` itself outlives this closure.
            #[expect(unsafe_code, reason = "the documented way to call a frozen function")]
            let callee = unsafe { function.0.owned_frozen_value(module.frozen_heap()) }.to_value();
            let mut named: Vec<(&str, Value)> = Vec::with_capacity(invocation.arguments.len());
            for (name, value) in invocation.arguments {
                if invocation.accepts_extra || invocation.declared.iter().any(|d| d == name) {
                    let value = convert::from_json(heap, value).map_err(RunError::script)?;
                    named.push((name.as_str(), value));
                }
            }
            for name in invocation.fill_none {
                if !invocation.arguments.contains_key(name) {
                    named.push((name.as_str(), Value::new_none()));
                }
            }
            let watch = Watch::new(&stop, heap);
            let mut eval = Evaluator::new(&module);
            configure(&mut eval, &printer, &watch);
            eval.extra = Some(&session);
            let returned = eval
                .eval_function(callee, &[], &named)
                .map_err(|error| watch.failed(&error))?;
            let limit = result_limit();
            convert::to_return(returned, limit).map_err(|error| match error {
                convert::ConvertError::TooLarge(limit) => RunError::script(format!(
                    "{}; return less, or raise the limit with `{RESULT_LIMIT_VAR}`",
                    convert::too_large("the result", limit)
                )),
                convert::ConvertError::Invalid(message) => RunError::script(message),
            })
        })
    })
}

/// Runs a manifest script top to bottom with the call's arguments.
pub(crate) fn run_script(
    program: &Program,
    arguments: &JsonObject,
    context: &CallContext,
    definition: &ToolDefinition,
    folder: &std::sync::Arc<std::path::Path>,
) -> Result<ToolReturn, RunError> {
    let session = Session {
        stage: Stage::Call(CallState {
            context,
            definition,
            folder: Some(folder),
            init_value: None,
            script: Some(Box::new(ScriptState {
                arguments,
                result: std::cell::RefCell::new(None),
            })),
            tools: None,
        }),
    };
    let file = definition.source.path.display().to_string();
    let printer = TracingPrint { file: &file };
    let stop = || context.stop_reason();
    let _reservation = reserve(&stop, context.deadline)?;
    guarded(|| {
        Module::with_temp_heap(|module| {
            let watch = Watch::new(&stop, module.heap());
            let mut eval = Evaluator::new(&module);
            configure(&mut eval, &printer, &watch);
            eval.extra = Some(&session);
            eval.eval_module(program.ast.clone(), globals(program.form))
                .map_err(|error| watch.failed(&error))?;
            Ok(())
        })
    })?;
    let Stage::Call(CallState {
        script: Some(script),
        ..
    }) = session.stage
    else {
        unreachable!("the session was created for a script call")
    };
    Ok(script
        .result
        .into_inner()
        .unwrap_or_else(|| ToolReturn::Text(String::new())))
}

/// Takes an evaluation's first share of the memory budget.
fn reserve(
    stop: &dyn Fn() -> Option<StopReason>,
    deadline: Instant,
) -> Result<budget::Reservation, RunError> {
    budget::reserve(&|| stop().is_some(), deadline).map_err(|busy| RunError::script(busy.message()))
}

/// What the periodic check of a running evaluation looks at: the call's deadline and
/// cancellation, and whether its heap still fits its share of the memory budget.
struct Watch<'a, 'v> {
    stop: &'a (dyn Fn() -> Option<StopReason> + 'a),
    heap: Heap<'v>,
    /// The budget could not cover the heap: the evaluation was stopped for that.
    busy: std::cell::Cell<Option<budget::Busy>>,
}

impl<'a, 'v> Watch<'a, 'v> {
    fn new(stop: &'a (dyn Fn() -> Option<StopReason> + 'a), heap: Heap<'v>) -> Self {
        Self {
            stop,
            heap,
            busy: std::cell::Cell::new(None),
        }
    }

    fn should_stop(&self) -> bool {
        if (self.stop)().is_some() {
            return true;
        }
        let stopped = || (self.stop)().is_some();
        if let Err(busy) = budget::ensure(self.heap.allocated_bytes(), &stopped) {
            // Stopped while waiting for memory: the stop is the reason, not the budget.
            self.busy.set((!stopped()).then_some(busy));
            return true;
        }
        false
    }

    /// The [`RunError`] for a failed evaluation.
    fn failed(&self, error: &starlark::Error) -> RunError {
        if let Some(busy) = self.busy.get() {
            let mut failed = run_error(error, None);
            failed.message = busy.message();
            return failed;
        }
        run_error(error, (self.stop)())
    }
}

fn configure<'v, 'a>(
    eval: &mut Evaluator<'v, 'a, '_>,
    printer: &'a dyn PrintHandler,
    watch: &'a Watch<'a, 'v>,
) {
    eval.set_print_handler(printer);
    eval.set_check_cancelled(Box::new(move || watch.should_stop()));
    eval.set_max_heap_size(heap_limit())
        .expect("the heap limit is set once, on a fresh evaluator, and is not zero");
    eval.set_max_callstack_size(CALL_DEPTH_LIMIT)
        .expect("the call depth limit is set once, on a fresh evaluator, and is not zero");
}

/// Runs an evaluation, turning a panic inside the interpreter into an error: starlark
/// 0.14.3 panics on some oversized values (e.g. "len overflow" past 4 GiB strings).
fn guarded<T>(run: impl FnOnce() -> Result<T, RunError>) -> Result<T, RunError> {
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(result) => result,
        Err(panic) => {
            let detail = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(RunError::script(format!(
                "the Starlark interpreter gave up: {detail} (a value probably grew too large)"
            )))
        }
    }
}

impl RunError {
    fn script(message: impl Into<String>) -> Self {
        Self {
            kind: RunErrorKind::Script,
            message: message.into(),
            location: None,
            frame: None,
        }
    }
}

/// What a call that reached the heap limit is told. Garbage counts until the call ends
/// (see [`budget`]), so the message says so and how to raise the limit.
pub(crate) fn heap_limit_message() -> String {
    format!(
        "heap limit exceeded: the call allocated more than {} MiB (values it no longer uses \
         count until it returns; build less, or raise `{HEAP_LIMIT_VAR}`)",
        heap_limit() >> 20
    )
}

/// Converts a Starlark error, classifying stops and limits.
fn run_error(error: &starlark::Error, stopped: Option<StopReason>) -> RunError {
    let raw = error.without_diagnostic().to_string();
    let message = if let Some(reason) = stopped {
        return RunError {
            kind: RunErrorKind::Stopped(reason),
            message: raw,
            location: location(error),
            frame: None,
        };
    } else if matches!(error.kind(), ErrorKind::StackOverflow(_)) {
        format!(
            "call depth limit exceeded: more than {CALL_DEPTH_LIMIT} nested calls (runaway recursion?)"
        )
    } else if raw.starts_with("Heap memory limit") {
        heap_limit_message()
    } else if let ErrorKind::Other(inner) = error.kind()
        && let Some(failed) = inner.downcast_ref::<code::ToolFailed>()
    {
        // What a tool said was wrong (each invalid argument on its line) is what the
        // program must fix: kept whole.
        failed.0.clone()
    } else {
        first_line(&raw)
    };
    let frame = error
        .call_stack()
        .frames
        .iter()
        .rev()
        .find(|frame| !frame.name.starts_with("__toolsmith"))
        .map(|frame| match &frame.location {
            Some(at) => {
                let begin = at.resolve_span().begin;
                format!(
                    "in `{}`, called from {}:{}:{}",
                    frame.name,
                    at.filename(),
                    begin.line + 1,
                    begin.column + 1
                )
            }
            None => format!("in `{}`", frame.name),
        });
    RunError {
        kind: RunErrorKind::Script,
        message,
        location: location(error),
        frame,
    }
}

fn location(error: &starlark::Error) -> Option<Location> {
    let file_span = error.span()?;
    let at = file_span.resolve_span().begin;
    Some(Location {
        file: file_span.filename().to_owned(),
        line: u32::try_from(at.line + 1).unwrap_or(u32::MAX),
        column: u32::try_from(at.column + 1).unwrap_or(u32::MAX),
        span: file_span.span.begin().get() as usize..file_span.span.end().get() as usize,
    })
}

/// `print(...)` goes to the log, never to stdout (stdout carries the MCP protocol).
struct TracingPrint<'a> {
    file: &'a str,
}

impl PrintHandler for TracingPrint<'_> {
    fn println(&self, text: &str) -> starlark::Result<()> {
        tracing::info!(target: "toolsmith_starlark::print", file = self.file, "{text}");
        Ok(())
    }
}
