//! Code mode's evaluator (docs/code-mode.md): one program a model wrote, run top to bottom
//! with the folder's tools as functions under `tools`, after the globals its session kept
//! are restored. What the program leaves behind comes back as plain data ([`KeptGlobals`]):
//! JSON-like values by value, `def` functions by their source text, since frozen Starlark
//! values cannot be written to a file.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::Path;
use std::sync::Arc;

use allocative::Allocative;
use starlark::environment::Module;
use starlark::eval::{Arguments, Evaluator};
use starlark::syntax::AstModule;
use starlark::syntax::ast::{AssignTargetP, ExprP, StmtP};
use starlark::values::dict::AllocDict;
use starlark::values::{
    Heap, NoSerialize, ProvidesStaticType, StarlarkValue, Value, ValueLike, starlark_value,
};
use starlark::{PrintHandler, starlark_simple_value};
use toolsmith_model::{
    CallContext, CallOutcome, JsonObject, StopReason, ToolDefinition, ToolReturn,
};

use super::convert::{self, from_json, to_json};
use super::session::{self, CallState, Session, Stage};
use super::{
    Form, RunError, RunErrorKind, SourceError, configure, dialect, globals, guarded, parse, reserve,
};

/// The file name a program's errors name.
pub const CODE_FILE: &str = "<code>";

/// How much of what a program prints comes back; the rest is cut off with a note.
const MAX_PRINTED_BYTES: usize = 64 << 10;

/// The global that holds the tools.
const TOOLS_GLOBAL: &str = "tools";

/// What a program can call: the tools of the server, by name.
pub trait CodeHost {
    /// The names of the tools the program may call.
    fn tool_names(&self) -> Vec<String>;

    /// Calls the tool `name` with `arguments` through the server's call path (validation,
    /// the tool's timeout within the run's deadline, its permissions). `Err` names an
    /// unknown tool, with what to do instead.
    fn call(&self, name: &str, arguments: JsonObject) -> Result<CallOutcome, String>;
}

/// The name under which the tool `name` is an attribute of `tools`: the name with every
/// character that cannot be in a Starlark identifier replaced by `_` (`github-search` →
/// `github_search`).
pub fn attribute_name(name: &str) -> String {
    let mut attribute: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if attribute.starts_with(|c: char| c.is_ascii_digit()) {
        attribute.insert(0, '_');
    }
    attribute
}

/// What a session keeps between runs: values that are JSON by value, functions by the
/// source of their `def`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeptGlobals {
    /// Global name → value, for `None`, bools, numbers, strings, lists, tuples (kept as
    /// lists) and dicts of those.
    pub values: JsonObject,
    /// Top-level `def`s, in the order they are restored.
    pub definitions: Vec<Definition>,
}

/// A function a session keeps: its name and the source of its `def` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The function's name.
    pub name: String,
    /// The whole `def` statement, as the program wrote it.
    pub source: String,
}

/// A program that ran to its end.
#[derive(Debug, Clone)]
pub struct CodeRun {
    /// The value of the last expression, else of `result` when the program assigns it;
    /// `None` when there is neither.
    pub value: Option<ToolReturn>,
    /// What the program printed.
    pub printed: String,
    /// The globals after the run, to keep for the session's next run.
    pub globals: KeptGlobals,
    /// Globals that cannot be kept, and definitions of earlier runs that could not be
    /// restored, one sentence each.
    pub notes: Vec<String>,
}

/// A program that did not run to its end: a syntax error, a run-time error, a limit, the
/// time constraint or a cancellation.
#[derive(Debug, Clone)]
pub struct CodeFailure {
    /// What happened, written for the program's author to fix it: `line:column`, the
    /// offending line with a caret, and the innermost function.
    pub message: String,
    /// What the program printed before it stopped.
    pub printed: String,
    /// Set when the program was stopped from outside (time constraint, cancellation).
    pub stopped: Option<StopReason>,
}

/// Runs `code` after restoring `previous`, with `host`'s tools under `tools`, within
/// `context`'s deadline, interrupt and the Starlark heap limit; `definition` is the
/// evaluator tool's own (its options answer `mcp.option`).
pub fn run_code(
    code: &str,
    previous: &KeptGlobals,
    host: &dyn CodeHost,
    context: &CallContext,
    definition: &ToolDefinition,
) -> Result<CodeRun, CodeFailure> {
    let sources = Sources::new(code, previous);
    let program = parse(Path::new(CODE_FILE), code, Form::Native).map_err(|error| CodeFailure {
        message: sources.render_source_error(CODE_FILE, &error),
        printed: String::new(),
        stopped: None,
    })?;
    let written = written(code);
    let mut notes = Vec::new();
    let restored = parse_kept(previous, &mut notes);
    let session = Session {
        stage: Stage::Call(CallState {
            context,
            definition,
            folder: None,
            init_value: None,
            script: None,
            tools: Some(host),
        }),
    };
    let printer = Collect::default();
    let stop = || context.stop_reason();
    let failure = |error: RunError, printer: &Collect| CodeFailure {
        message: sources.render(&error),
        printed: printer.take(),
        stopped: match error.kind {
            RunErrorKind::Stopped(reason) => Some(reason),
            RunErrorKind::Script => None,
        },
    };
    let _reservation =
        reserve(&stop, context.deadline).map_err(|error| failure(error, &printer))?;
    let tools = ToolsValue {
        attributes: Arc::new(
            host.tool_names()
                .into_iter()
                .map(|name| (attribute_name(&name), name))
                .collect(),
        ),
    };
    let ran = guarded(|| {
        Module::with_temp_heap(|module| {
            let heap = module.heap();
            module.set(TOOLS_GLOBAL, heap.alloc_simple(tools));
            for (name, value) in &previous.values {
                match from_json(heap, value) {
                    Ok(value) => module.set(name, value),
                    Err(error) => notes.push(format!(
                        "`{name}` from the session could not be restored: {error}"
                    )),
                }
            }
            let watch = super::Watch::new(&stop, heap);
            let mut eval = Evaluator::new(&module);
            configure(&mut eval, &printer, &watch);
            eval.extra = Some(&session);
            let mut kept = Vec::new();
            for (definition, parsed) in restored {
                match eval.eval_module(parsed.ast.clone(), globals(Form::Native)) {
                    Ok(_) => kept.push(definition.clone()),
                    Err(error) => {
                        let error = watch.failed(&error);
                        if let RunErrorKind::Stopped(_) = error.kind {
                            return Err(error);
                        }
                        notes.push(format!(
                            "`{}` from the session could not be restored: {}",
                            definition.name, error.message
                        ));
                    }
                }
            }
            let last = eval
                .eval_module(program.ast.clone(), globals(Form::Native))
                .map_err(|error| watch.failed(&error))?;
            let value = if !last.is_none() {
                Some(last)
            } else if written.assigns_result {
                module.get("result")
            } else {
                None
            };
            let value = value.map(program_value).transpose()?;
            let globals = kept_globals(&module, &written.definitions, &kept, &mut notes);
            Ok((value, globals))
        })
    });
    let (value, globals) = ran.map_err(|error| failure(error, &printer))?;
    Ok(CodeRun {
        value,
        printed: printer.take(),
        globals,
        notes,
    })
}

/// The kept definitions of `previous`, parsed; one that no longer parses, or is not just
/// the `def` it is saved as, is a note.
///
/// A session file is only data: a statement appended after a saved `def` ran at the next
/// run's restore (a `tools.delete(...)` after `def f(): ...` called the tool), and so
/// does a call in a parameter's default. So only a source that is one `def` of its
/// saved name, with no call outside its body, is run to restore it.
fn parse_kept<'a>(
    previous: &'a KeptGlobals,
    notes: &mut Vec<String>,
) -> Vec<(&'a Definition, super::Program)> {
    let mut restored = Vec::new();
    for kept in &previous.definitions {
        if let Err(why) = only_a_def(kept) {
            notes.push(format!(
                "`{}` from the session could not be restored: {why}",
                kept.name
            ));
            continue;
        }
        match parse(
            Path::new(&definition_file(&kept.name)),
            &kept.source,
            Form::Native,
        ) {
            Ok(parsed) => restored.push((kept, parsed)),
            Err(error) => notes.push(format!(
                "`{}` from the session could not be restored: {}",
                kept.name, error.message
            )),
        }
    }
    restored
}

/// Whether the source of `kept`, as written, is one `def` of its name that runs nothing
/// when executed (no call in a parameter's default or annotation); else why not.
fn only_a_def(kept: &Definition) -> Result<(), &'static str> {
    let file = definition_file(&kept.name);
    let Ok(ast) = AstModule::parse(&file, kept.source.clone(), &dialect()) else {
        // The guarded parse that follows says where it fails.
        return Ok(());
    };
    let statement = match &ast.statement().node {
        StmtP::Statements(statements) => match statements.as_slice() {
            [one] => one,
            _ => return Err("its saved source is not a single `def` statement"),
        },
        _ => ast.statement(),
    };
    let StmtP::Def(def) = &statement.node else {
        return Err("its saved source is not a `def` statement");
    };
    if def.name.node.ident != kept.name {
        return Err("its saved source defines another name");
    }
    let mut calls = false;
    for parameter in &def.params {
        parameter.node.visit_expr(|expr| calls |= has_call(expr));
    }
    if calls {
        return Err("a parameter's default calls a function, which would run at restore");
    }
    Ok(())
}

/// Whether `expr` calls anything, anywhere inside it.
fn has_call(expr: &starlark::syntax::ast::AstExpr) -> bool {
    if let ExprP::Call(..) = expr.node {
        return true;
    }
    let mut found = false;
    expr.node.visit_expr(|inner| found |= has_call(inner));
    found
}

/// What a program's value means as the evaluator's result (the result contract).
fn program_value(value: Value) -> Result<ToolReturn, RunError> {
    convert::to_return(value, super::result_limit()).map_err(|error| match error {
        convert::ConvertError::TooLarge(limit) => RunError::script(format!(
            "{}; return less (keep the rest in a global)",
            convert::too_large("the program's value", limit)
        )),
        convert::ConvertError::Invalid(message) => {
            RunError::script(format!("the program's value cannot be returned: {message}"))
        }
    })
}

/// The file name errors inside a definition restored from the session name.
fn definition_file(name: &str) -> String {
    format!("<session: def {name}>")
}

/// What the program's own top level writes: its `def`s (source text) and whether it
/// assigns `result`.
struct Written {
    definitions: Vec<Definition>,
    assigns_result: bool,
}

/// Reads the top-level statements of `code` as written (before any rewriting); a program
/// that does not parse has none.
fn written(code: &str) -> Written {
    let mut found = Written {
        definitions: Vec::new(),
        assigns_result: false,
    };
    let Ok(ast) = AstModule::parse(CODE_FILE, code.to_owned(), &dialect()) else {
        return found;
    };
    let statements = match &ast.statement().node {
        StmtP::Statements(statements) => statements.iter().collect(),
        _ => vec![ast.statement()],
    };
    for statement in statements {
        match &statement.node {
            StmtP::Def(def) => found.definitions.push(Definition {
                name: def.name.node.ident.clone(),
                source: ast.file_span(statement.span).source_span().to_owned(),
            }),
            StmtP::Assign(assign) => {
                if let AssignTargetP::Identifier(name) = &assign.lhs.node
                    && name.node.ident == "result"
                {
                    found.assigns_result = true;
                }
            }
            _ => {}
        }
    }
    found
}

/// The globals of `module` a session can keep, with a note for each one it cannot.
fn kept_globals(
    module: &Module,
    written: &[Definition],
    restored: &[Definition],
    notes: &mut Vec<String>,
) -> KeptGlobals {
    let mut globals = KeptGlobals::default();
    let mut names: Vec<String> = module
        .names()
        .map(|name| name.as_str().to_owned())
        .collect();
    names.sort();
    for name in names {
        if name == TOOLS_GLOBAL {
            continue;
        }
        let Some(value) = module.get(&name) else {
            continue;
        };
        let kind = value.get_type();
        match kind {
            "function" => {
                let source = written
                    .iter()
                    .rev()
                    .chain(restored.iter().rev())
                    .find(|definition| definition.name == name);
                match source {
                    Some(definition) => globals.definitions.push(definition.clone()),
                    None => notes.push(format!(
                        "`{name}` is not kept: only functions written with `def {name}(...)` are"
                    )),
                }
            }
            "NoneType" | "bool" | "int" | "float" | "string" | "list" | "tuple" | "dict" => {
                match to_json(value) {
                    Ok(json) => {
                        globals.values.insert(name, json);
                    }
                    Err(error) => notes.push(format!("`{name}` is not kept: {error}")),
                }
            }
            other => notes.push(format!(
                "`{name}` is not kept: a `{other}` is not JSON; keep its data in a dict"
            )),
        }
    }
    // Definitions are restored in the order they were first written, so one may use another.
    let order = |name: &str| {
        restored
            .iter()
            .chain(written)
            .position(|definition| definition.name == name)
            .unwrap_or(usize::MAX)
    };
    globals
        .definitions
        .sort_by_key(|definition| order(&definition.name));
    globals
}

/// The source texts errors may point into: the program and the restored definitions.
struct Sources<'a> {
    code: &'a str,
    previous: &'a KeptGlobals,
}

impl<'a> Sources<'a> {
    fn new(code: &'a str, previous: &'a KeptGlobals) -> Self {
        Self { code, previous }
    }

    fn text(&self, file: &str) -> Option<&str> {
        if file == CODE_FILE {
            return Some(self.code);
        }
        self.previous
            .definitions
            .iter()
            .find(|definition| definition_file(&definition.name) == file)
            .map(|definition| definition.source.as_str())
    }

    /// `file:line:column: message`, the line with a caret under the column, then the
    /// innermost frame.
    fn render(&self, error: &RunError) -> String {
        let mut text = match &error.kind {
            RunErrorKind::Stopped(StopReason::Timeout) => {
                "the program ran past its time constraint and was stopped".to_owned()
            }
            RunErrorKind::Stopped(StopReason::Cancelled) => {
                "the program was cancelled by the client".to_owned()
            }
            RunErrorKind::Script => error.message.clone(),
        };
        if let Some(at) = &error.location {
            text = format!("{}:{}:{}: {text}", at.file, at.line, at.column);
            text.push_str(&self.excerpt(&at.file, at.line, at.column));
        }
        if let Some(frame) = &error.frame {
            text.push_str("\n  ");
            text.push_str(frame);
        }
        text
    }

    fn render_source_error(&self, file: &str, error: &SourceError) -> String {
        let mut text = format!("{file}:{}:{}: {}", error.line, error.column, error.message);
        text.push_str(&self.excerpt(file, error.line, error.column));
        if let Some(help) = &error.help {
            text.push_str("\nhelp: ");
            text.push_str(help);
        }
        text
    }

    /// The line `line` of `file` and a caret under `column`, indented; empty when the
    /// source is not known.
    fn excerpt(&self, file: &str, line: u32, column: u32) -> String {
        let Some(source) = self.text(file) else {
            return String::new();
        };
        let index = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
        let Some(written) = source.lines().nth(index) else {
            return String::new();
        };
        let number = line.to_string();
        let pad = " ".repeat(number.len());
        let before: String = written
            .chars()
            .take(usize::try_from(column.saturating_sub(1)).unwrap_or(0))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        format!("\n {number} | {written}\n {pad} | {before}^")
    }
}

/// `print(...)` of a program: collected for its result, at most [`MAX_PRINTED_BYTES`].
#[derive(Default)]
struct Collect {
    text: RefCell<String>,
    dropped: std::cell::Cell<usize>,
}

impl Collect {
    fn take(&self) -> String {
        let mut text = self.text.take();
        let dropped = self.dropped.take();
        if dropped > 0 {
            let _ = writeln!(text, "… ({dropped} more bytes printed, not shown)");
        }
        text
    }
}

impl PrintHandler for Collect {
    fn println(&self, line: &str) -> starlark::Result<()> {
        let mut text = self.text.borrow_mut();
        if text.len() + line.len() < MAX_PRINTED_BYTES {
            text.push_str(line);
            text.push('\n');
        } else {
            self.dropped.set(self.dropped.get() + line.len() + 1);
        }
        Ok(())
    }
}

/// The `tools` global: each tool is an attribute, plus `tools.call(name, **arguments)` and
/// `tools.call_result(name, **arguments)`.
#[derive(Debug, Clone, ProvidesStaticType, NoSerialize, Allocative)]
struct ToolsValue {
    /// Attribute name → tool name.
    #[allocative(skip)]
    attributes: Arc<BTreeMap<String, String>>,
}

starlark_simple_value!(ToolsValue);

impl fmt::Display for ToolsValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<tools: {}>",
            self.attributes
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

#[starlark_value(type = "tools")]
impl<'v> StarlarkValue<'v> for ToolsValue {
    fn get_attr(&self, attribute: &str, heap: Heap<'v>) -> Option<Value<'v>> {
        let target = match attribute {
            "call" => Target::Call,
            "call_result" => Target::CallResult,
            _ => Target::Tool(self.attributes.get(attribute)?.clone()),
        };
        Some(heap.alloc_simple(ToolFunction(target)))
    }

    fn has_attr(&self, attribute: &str, _heap: Heap<'v>) -> bool {
        matches!(attribute, "call" | "call_result") || self.attributes.contains_key(attribute)
    }

    fn dir_attr(&self) -> Vec<String> {
        let mut names: Vec<String> = self.attributes.keys().cloned().collect();
        names.extend(["call".to_owned(), "call_result".to_owned()]);
        names
    }
}

/// What a [`ToolFunction`] calls.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// `tools.NAME(**arguments)`: this tool; an error result fails the program.
    Tool(String),
    /// `tools.call("name", **arguments)`: the tool named first.
    Call,
    /// `tools.call_result("name" or tools.NAME, **arguments)`: `{ok, value, error}`, never
    /// failing on the tool's error.
    CallResult,
}

/// A function of `tools`.
#[derive(Debug, Clone, ProvidesStaticType, NoSerialize, Allocative)]
struct ToolFunction(#[allocative(skip)] Target);

starlark_simple_value!(ToolFunction);

impl fmt::Display for ToolFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Target::Tool(name) => write!(f, "tools.{}", attribute_name(name)),
            Target::Call => f.write_str("tools.call"),
            Target::CallResult => f.write_str("tools.call_result"),
        }
    }
}

#[starlark_value(type = "tool_function")]
impl<'v> StarlarkValue<'v> for ToolFunction {
    fn invoke(
        &self,
        _me: Value<'v>,
        args: &Arguments<'v, '_>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let heap = eval.heap();
        let host = session::call(eval, "tools")
            .ok()
            .and_then(|call| call.tools)
            .ok_or_else(|| other("`tools` can only be called from a `run_code` program"))?;
        let mut positional: Vec<Value<'v>> = args.positions(heap)?.collect();
        let (name, checked) = match &self.0 {
            Target::Tool(name) => (name.clone(), true),
            Target::Call | Target::CallResult => {
                if positional.is_empty() {
                    return Err(other(format!(
                        "`{self}` needs the tool first: {self}(\"tool_name\", arg = ...)"
                    )));
                }
                let first = positional.remove(0);
                let name = if let Some(name) = first.unpack_str() {
                    name.to_owned()
                } else if let Some(ToolFunction(Target::Tool(name))) =
                    first.downcast_ref::<ToolFunction>()
                {
                    name.clone()
                } else {
                    return Err(other(format!(
                        "`{self}` takes the tool's name (or `tools.NAME`) first, got a `{}`",
                        first.get_type()
                    )));
                };
                (name, self.0 == Target::Call)
            }
        };
        if !positional.is_empty() {
            return Err(other(format!(
                "pass the arguments of tool `{name}` by name: tools.{}(arg = value, ...)",
                attribute_name(&name)
            )));
        }
        let mut arguments = JsonObject::new();
        for (key, value) in args.names_map()? {
            let json = to_json(value).map_err(|error| {
                other(format!(
                    "argument `{}` of tool `{name}` cannot be JSON: {error}",
                    key.as_str()
                ))
            })?;
            arguments.insert(key.as_str().to_owned(), json);
        }
        let outcome = host.call(&name, arguments).map_err(other)?;
        let value = outcome_value(&outcome);
        if checked {
            if outcome.is_error {
                return Err(starlark::Error::new_other(ToolFailed(format!(
                    "tool `{name}` failed: {}",
                    outcome.joined_text()
                ))));
            }
            return from_json(heap, &value).map_err(other);
        }
        let (ok, value, error) = if outcome.is_error {
            (false, serde_json::Value::Null, Some(outcome.joined_text()))
        } else {
            (true, value, None)
        };
        let value = from_json(heap, &value).map_err(other)?;
        let error = error.map_or_else(Value::new_none, |error| heap.alloc(error));
        Ok(heap.alloc(AllocDict([
            ("ok", Value::new_bool(ok)),
            ("value", value),
            ("error", error),
        ])))
    }
}

/// What a tool's outcome is worth inside a program: its structured content, else its text.
fn outcome_value(outcome: &CallOutcome) -> serde_json::Value {
    match &outcome.structured_content {
        Some(structured) => structured.clone(),
        None => serde_json::Value::String(outcome.joined_text()),
    }
}

/// A tool's error result that stops a program: its message is kept whole (every line a
/// validation error lists), where other errors keep their first line.
#[derive(Debug)]
pub(crate) struct ToolFailed(pub(crate) String);

impl fmt::Display for ToolFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToolFailed {}

fn other(message: impl fmt::Display) -> starlark::Error {
    starlark::Error::new_other(anyhow::anyhow!("{message}"))
}
