//! What native functions (`mcp.*`, `tool.*`) can reach through `Evaluator::extra`: while a
//! file loads, the list `mcp.tool(...)` appends to; while a tool runs, the call's context,
//! the tool's definition and, for manifest scripts, the arguments and the result slot.

use std::cell::RefCell;

use starlark::any::ProvidesStaticType;
use starlark::eval::Evaluator;
use toolsmith_model::{CallContext, JsonObject, ToolDefinition, ToolReturn};

/// The state of one evaluation.
#[derive(ProvidesStaticType)]
pub(crate) struct Session<'a> {
    pub(crate) stage: Stage<'a>,
}

/// Loading a file, or running a call.
pub(crate) enum Stage<'a> {
    /// The file's top level is being evaluated; `mcp.tool` registers here.
    Load(RefCell<Vec<Registration>>),
    /// A tool is running.
    Call(CallState<'a>),
}

/// A running call.
pub(crate) struct CallState<'a> {
    pub(crate) context: &'a CallContext,
    pub(crate) definition: &'a ToolDefinition,
    /// The tools folder the tool was loaded from, which its relative paths mean; `None`
    /// for a code-mode program (its paths mean the call's working directory).
    pub(crate) folder: Option<&'a std::sync::Arc<std::path::Path>>,
    /// What the tool's init returned (`mcp.init_value()`), once it has run.
    pub(crate) init_value: Option<&'a serde_json::Value>,
    /// Set for manifest scripts only.
    /// Boxed: a script's state (its result) is most of a call's, and native calls have none.
    pub(crate) script: Option<Box<ScriptState<'a>>>,
    /// The tools a code-mode program calls (`tools.NAME(...)`); set for programs only.
    pub(crate) tools: Option<&'a dyn super::CodeHost>,
}

/// A running manifest script: its arguments and the first `tool.return_*` result.
pub(crate) struct ScriptState<'a> {
    pub(crate) arguments: &'a JsonObject,
    pub(crate) result: RefCell<Option<ToolReturn>>,
}

/// One `mcp.tool(...)` call, as plain data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Registration {
    /// The module variable holding the function, when it is one we can call.
    pub(crate) slot: Option<String>,
    /// Why the first argument is not a usable function.
    pub(crate) problem: Option<String>,
    /// The function's name (`def` name).
    pub(crate) function_name: String,
    /// The function's parameters, in order, with defaults converted to JSON.
    pub(crate) params: Vec<RuntimeParam>,
    /// The keywords given to `mcp.tool`, in order, converted to JSON (all but `init`).
    pub(crate) keywords: Vec<(String, Result<serde_json::Value, String>)>,
    /// `init = setup`: the function to run once before the first call.
    pub(crate) init: Option<InitRegistration>,
    /// 1-based line of the `mcp.tool(...)` call.
    pub(crate) line: u32,
    /// 1-based column of the `mcp.tool(...)` call.
    pub(crate) column: u32,
    /// Byte range of the call.
    pub(crate) span: Option<std::ops::Range<usize>>,
}

/// The `init` keyword of one `mcp.tool(...)` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InitRegistration {
    /// The function's name (`def` name).
    pub(crate) function_name: String,
    /// The module variable holding the function, when it is one we can call.
    pub(crate) slot: Option<String>,
    /// Why the value is not a usable init function.
    pub(crate) problem: Option<String>,
}

/// A parameter as the running function declares it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RuntimeParam {
    pub(crate) name: String,
    pub(crate) kind: ParamKind,
    /// The default, as JSON (an error when the default is not JSON-like, e.g. a function).
    pub(crate) default: Option<Result<serde_json::Value, String>>,
}

/// How a parameter can be passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// By name (or position).
    Named,
    /// `*args`: never filled from JSON arguments.
    Args,
    /// `**kwargs`: receives any extra arguments.
    Kwargs,
}

/// The session of the running evaluation.
pub(crate) fn session<'a>(eval: &Evaluator<'_, 'a, '_>) -> anyhow::Result<&'a Session<'a>> {
    eval.extra
        .and_then(|extra| extra.downcast_ref::<Session>())
        .ok_or_else(|| anyhow::anyhow!("this function is only available inside a Toolsmith tool"))
}

/// The running call; an error naming `what` when the file is only loading.
pub(crate) fn call<'a>(
    eval: &Evaluator<'_, 'a, '_>,
    what: &str,
) -> anyhow::Result<&'a CallState<'a>> {
    match &session(eval)?.stage {
        Stage::Call(call) => Ok(call),
        Stage::Load(_) => Err(anyhow::anyhow!(
            "`{what}` can only be used while a tool runs, not while the file loads"
        )),
    }
}

/// The running manifest script; an error naming `what` otherwise.
pub(crate) fn script<'a>(
    eval: &Evaluator<'_, 'a, '_>,
    what: &str,
) -> anyhow::Result<&'a ScriptState<'a>> {
    call(eval, what)?.script.as_deref().ok_or_else(|| {
        anyhow::anyhow!(
            "`{what}` is for manifest scripts; a native tool reads its parameters and returns its result"
        )
    })
}
