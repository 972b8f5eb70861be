//! The one place that talks to the `starlark` crate: parsing (with the small source rewrites
//! Scriptling scripts need), the globals (`mcp`, `tool`, `sum`, guarded `range`/`+`/`*`),
//! evaluating a file once at load, and running a frozen function or a script per call with
//! the deadline, heap and call-depth limits. Everything it hands out is plain Rust data
//! ([`Registration`], [`FunctionSyntax`], [`RunError`]) or an opaque handle ([`Function`],
//! [`Program`]), so the rest of the crate never sees a `Value`.

mod builtins;
mod convert;
mod mcp_module;
// SAFETY: the only unsafe code is what `#[derive(ProvidesStaticType)]` expands to, the
// starlark crate's own mechanism for downcasting `Evaluator::extra` and values.
#[expect(
    unsafe_code,
    reason = "derive(ProvidesStaticType) expands to an unsafe impl"
)]
mod session;
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
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use starlark::environment::{FrozenModule, Globals, GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::Evaluator;
use starlark::syntax::{AstModule, Dialect, DialectTypes};
use starlark::values::{OwnedFrozenValue, Value};
use starlark::{ErrorKind, PrintHandler};
use toolsmith_model::{CallContext, JsonObject, StopReason, ToolDefinition, ToolReturn};

pub(crate) use session::{ParamKind, Registration};
pub(crate) use syntax::{Annotation, FunctionSyntax};

use session::{CallState, ScriptState, Session, Stage};

/// How much memory the Starlark heap of one evaluation may use.
pub const HEAP_LIMIT: usize = 256 << 20;

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
}

impl Program {
    /// The top-level functions of the file.
    pub(crate) fn functions(&self) -> &[FunctionSyntax] {
        &self.functions
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
/// are validated against the JSON Schema before a call, and DESIGN.md §3 lets any tool
/// return `mcp.error(...)` whatever its annotation).
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

/// Parses a file: the Scriptling rewrites, the dialect, then our own checks.
pub(crate) fn parse(path: &Path, source: &str, form: Form) -> Result<Program, SourceError> {
    check_nesting(source)?;
    let name = path.display().to_string();
    let mut text = match form {
        Form::Script => blank_scriptling_imports(source),
        Form::Native => source.to_owned(),
    };
    // `is` is a reserved word in Starlark. Each time the lexer rejects one, rewrite it in
    // place with an operator of the same width (`is not` → `!=    `, `is` → `==`) so that
    // strings and comments are never touched and columns stay exact.
    let mut ast = None;
    for _ in 0..10_000 {
        match AstModule::parse(&name, text.clone(), &dialect()) {
            Ok(parsed) => {
                ast = Some(parsed);
                break;
            }
            Err(error) => {
                if !rewrite_is(&mut text, &error) {
                    return Err(source_error(&error));
                }
            }
        }
    }
    let Some(mut ast) = ast else {
        return Err(SourceError {
            rule: "syntax-error",
            message: "too many `is` comparisons to rewrite".into(),
            line: 1,
            column: 1,
            span: None,
            help: None,
        });
    };
    if let Some(load) = ast.loads().first() {
        let at = load.span.resolve_span().begin;
        return Err(SourceError {
            rule: "load-not-supported",
            message: format!("`load(\"{}\", ...)` is not supported", load.module_id),
            line: u32::try_from(at.line + 1).unwrap_or(u32::MAX),
            column: u32::try_from(at.column + 1).unwrap_or(u32::MAX),
            span: Some(load.span.span.begin().get() as usize..load.span.span.end().get() as usize),
            help: Some(
                "every tool file is loaded on its own; copy the helper you need into this file"
                    .into(),
            ),
        });
    }
    let functions = syntax::top_level_functions(&ast);
    builtins::guard_operators(&mut ast);
    Ok(Program {
        ast,
        form,
        file: name,
        functions,
    })
}

/// Replaces `import scriptling.mcp.tool as tool` (and the `from` form) by blanks, keeping
/// line and column numbers.
fn blank_scriptling_imports(source: &str) -> String {
    source
        .split_inclusive('\n')
        .map(|line| {
            let code = line.trim();
            let code = code.split('#').next().unwrap_or_default().trim();
            let accepted = matches!(
                code.split_whitespace().collect::<Vec<_>>().as_slice(),
                ["import", "scriptling.mcp.tool"]
                    | ["import", "scriptling.mcp.tool", "as", "tool"]
                    | ["from", "scriptling.mcp", "import", "tool"]
            );
            if accepted {
                line.chars()
                    .map(|c| if c == '\n' || c == '\r' { c } else { ' ' })
                    .collect()
            } else {
                line.to_owned()
            }
        })
        .collect()
}

/// Rewrites the `is` the lexer just rejected; false when the error is about something else.
fn rewrite_is(text: &mut String, error: &starlark::Error) -> bool {
    if !error
        .without_diagnostic()
        .to_string()
        .contains("reserved keyword `is`")
    {
        return false;
    }
    let Some(span) = error.span() else {
        return false;
    };
    let begin = span.span.begin().get() as usize;
    let rest = text.get(begin..).unwrap_or_default();
    if !rest.starts_with("is") {
        return false;
    }
    let after = &rest[2..];
    let gap = after.len() - after.trim_start_matches([' ', '\t']).len();
    let negated = gap > 0
        && after[gap..].starts_with("not")
        && !after[gap + 3..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
    if negated {
        let width = 2 + gap + 3;
        text.replace_range(
            begin..begin + width,
            &format!("!={}", " ".repeat(width - 2)),
        );
    } else {
        text.replace_range(begin..begin + 2, "==");
    }
    true
}

fn check_nesting(source: &str) -> Result<(), SourceError> {
    let mut depth = 0usize;
    for (offset, ch) in source.char_indices() {
        match ch {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let (line, column) = toolsmith_model::line_column(source, offset);
                    return Err(SourceError {
                        rule: "syntax-error",
                        message: format!("brackets nested more than {MAX_NESTING} deep"),
                        line,
                        column,
                        span: Some(offset..offset + 1),
                        help: Some("split the expression into named parts".into()),
                    });
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// A parse error as a [`SourceError`], with a hint for Python constructs Starlark lacks.
fn source_error(error: &starlark::Error) -> SourceError {
    let message = first_line(&error.without_diagnostic().to_string());
    let (line, column, span) = match error.span() {
        Some(file_span) => {
            let at = file_span.resolve_span().begin;
            (
                u32::try_from(at.line + 1).unwrap_or(u32::MAX),
                u32::try_from(at.column + 1).unwrap_or(u32::MAX),
                Some(file_span.span.begin().get() as usize..file_span.span.end().get() as usize),
            )
        }
        None => (1, 1, None),
    };
    let keyword = message
        .split_once("reserved keyword `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(word, _)| word.to_owned());
    let (message, help) = match keyword.as_deref() {
        Some(word) => (
            format!("`{word}` is not Starlark"),
            Some(keyword_help(word).to_owned()),
        ),
        None if message == "repeated named argument" => {
            let name = error
                .span()
                .map(|span| {
                    span.source_span()
                        .split('=')
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_owned()
                })
                .unwrap_or_default();
            (
                format!("keyword argument `{name}` is given twice"),
                Some("keep one of the two".to_owned()),
            )
        }
        None => (
            message,
            Some(
                "tool files are Starlark, a small Python dialect: no classes, exceptions, \
                 `while` or imports (https://github.com/bazelbuild/starlark/blob/master/spec.md)"
                    .to_owned(),
            ),
        ),
    };
    SourceError {
        rule: "syntax-error",
        message,
        line,
        column,
        span,
        help,
    }
}

fn keyword_help(word: &str) -> &'static str {
    match word {
        "while" => {
            "Starlark has no `while` loop; use `for i in range(n):` with a bound and `break`"
        }
        "class" => "Starlark has no classes; use a dict, `struct(...)` or `record(...)`",
        "try" | "except" | "finally" | "raise" => {
            "Starlark has no exceptions; check values first and return `mcp.error(...)` (or \
             `tool.return_error(...)`), or stop with `fail(\"message\")`"
        }
        "import" | "from" => {
            "Starlark has no imports; only `import scriptling.mcp.tool as tool` is accepted \
             (in manifest scripts), and `json` is built in"
        }
        "with" => "Starlark has no `with` blocks; there are no files or resources to close",
        "del" => "Starlark has no `del`; use `dict.pop(key)` or assign a new value",
        "global" | "nonlocal" => {
            "Starlark has no `global`/`nonlocal`; return the new value from the function instead"
        }
        "yield" | "async" | "await" => {
            "Starlark has no generators or coroutines; build and return a list"
        }
        _ => "this Python keyword is reserved in Starlark and cannot be used",
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_owned()
}

/// Evaluates a native tool file once and freezes it; returns what `mcp.tool` registered.
pub(crate) fn load_native(
    program: &Program,
    timeout: Duration,
) -> Result<Vec<(Registration, Option<Function>)>, RunError> {
    let deadline = Instant::now() + timeout;
    let session = Session {
        stage: Stage::Load(std::cell::RefCell::new(Vec::new())),
    };
    let printer = TracingPrint {
        file: &program.file,
    };
    let stop = || (Instant::now() >= deadline).then_some(StopReason::Timeout);
    let frozen = guarded(|| {
        Module::with_temp_heap(|module| {
            {
                let mut eval = Evaluator::new(&module);
                configure(&mut eval, &printer, &stop);
                eval.extra = Some(&session);
                eval.eval_module(program.ast.clone(), globals(program.form))
                    .map_err(|error| run_error(&error, stop()))?;
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
            (registration, function)
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
            script: None,
        }),
    };
    let file = invocation.definition.source.path.display().to_string();
    let printer = TracingPrint { file: &file };
    let stop = || invocation.context.stop_reason();
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
            let mut eval = Evaluator::new(&module);
            configure(&mut eval, &printer, &stop);
            eval.extra = Some(&session);
            let returned = eval
                .eval_function(callee, &[], &named)
                .map_err(|error| run_error(&error, stop()))?;
            convert::to_return(returned).map_err(RunError::script)
        })
    })
}

/// Runs a manifest script top to bottom with the call's arguments.
pub(crate) fn run_script(
    program: &Program,
    arguments: &JsonObject,
    context: &CallContext,
    definition: &ToolDefinition,
) -> Result<ToolReturn, RunError> {
    let session = Session {
        stage: Stage::Call(CallState {
            context,
            definition,
            script: Some(ScriptState {
                arguments,
                result: std::cell::RefCell::new(None),
            }),
        }),
    };
    let file = definition.source.path.display().to_string();
    let printer = TracingPrint { file: &file };
    let stop = || context.stop_reason();
    guarded(|| {
        Module::with_temp_heap(|module| {
            let mut eval = Evaluator::new(&module);
            configure(&mut eval, &printer, &stop);
            eval.extra = Some(&session);
            eval.eval_module(program.ast.clone(), globals(program.form))
                .map_err(|error| run_error(&error, stop()))?;
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

fn configure<'a>(
    eval: &mut Evaluator<'_, 'a, '_>,
    printer: &'a TracingPrint<'a>,
    stop: &'a (dyn Fn() -> Option<StopReason> + 'a),
) {
    eval.set_print_handler(printer);
    eval.set_check_cancelled(Box::new(move || stop().is_some()));
    eval.set_max_heap_size(HEAP_LIMIT)
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
        format!(
            "heap limit exceeded: the script used more than {} MiB",
            HEAP_LIMIT >> 20
        )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_error(source: &str) -> SourceError {
        parse(Path::new("t.star"), source, Form::Script)
            .err()
            .expect("a source error")
    }

    #[test]
    fn scriptling_import_lines_become_blanks_of_the_same_width() {
        let source = "import scriptling.mcp.tool as tool  # the tool API\nx = 1\n";
        let blanked = blank_scriptling_imports(source);
        assert_eq!(blanked.len(), source.len());
        assert!(blanked.starts_with("     "));
        assert!(blanked.ends_with("\nx = 1\n"));
        assert_eq!(blank_scriptling_imports("import os\n"), "import os\n");
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let source = format!("x = {}{}\n", "[".repeat(300), "]".repeat(300));
        let error = parse_error(&source);
        assert_eq!(error.rule, "syntax-error");
        assert!(error.message.contains("nested more than"), "{error:?}");
        assert_eq!((error.line, error.column), (1, 205));
    }

    #[test]
    fn python_power_operator_is_a_syntax_error() {
        let error = parse_error("x = 10 ** 3\n");
        assert_eq!(error.rule, "syntax-error");
        assert_eq!(error.line, 1);
    }

    #[test]
    fn is_rewrites_keep_columns() {
        let program = parse(
            Path::new("t.star"),
            "def f(a, b):\n    return a is not None and b is None\n",
            Form::Native,
        )
        .expect("parses after the rewrite");
        assert_eq!(program.functions()[0].name, "f");
    }
}
