//! The `run_code` tool: its definition (parameters `code`, `session`, `time_constraint`),
//! and one run: the session held and loaded, the program evaluated with the catalog's tools
//! (each call through [`toolsmith_search::execute`], the path `execute_tool` takes too),
//! the session saved and pruned, and the result put together (docs/code-mode.md, "What
//! comes back").

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith_model::telemetry::{Attribute, SpanRole, WorkSpan};
use toolsmith_model::{
    CallContext, CallOutcome, Catalog, CatalogEntry, Content, JsonObject, SourceLocation,
    StopReason, Tool, ToolDefinition, ToolFailure, ToolReturn,
};
use toolsmith_search::TOOL_SEARCH;
use toolsmith_starlark::{CodeHost, KeptGlobals};

use crate::description::describe;
use crate::options::CodeOptions;
use crate::sessions::{Scope, SessionId, Sessions};

/// The evaluator tool over one catalog's tools.
pub(crate) struct RunCode {
    definition: ToolDefinition,
    /// The tools programs call: the served catalog without this tool.
    catalog: Arc<Catalog>,
    options: CodeOptions,
    /// The file name prefix of the served folder's sessions ([`Sessions::folder`]).
    folder: String,
}

impl RunCode {
    /// The evaluator named `name` over `catalog`, with `options` (`[options.run_code]`),
    /// keeping the sessions of `folder` (the tools folder served, if any).
    pub(crate) fn new(
        catalog: Arc<Catalog>,
        name: &str,
        options: &JsonObject,
        folder: Option<&Path>,
    ) -> Self {
        let (resolved, problems) = CodeOptions::resolve(options);
        for problem in problems {
            tracing::warn!(tool = name, "{problem}; its default applies");
        }
        let max = resolved.max_time_constraint().as_secs_f64();
        let default = resolved.time_constraint.as_secs_f64();
        let schema = json!({
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The Starlark program; its last expression (or `result = ...`) is the result",
                },
                "session": {
                    "type": "string",
                    "pattern": "^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$",
                    "description": "Keep globals and functions under this id for later runs (e.g. \"analysis\")",
                },
                "time_constraint": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "maximum": max,
                    "description": format!("Seconds the program may run (default {default})"),
                },
            },
            "required": ["code"],
        });
        let schema = match schema {
            Value::Object(schema) => schema,
            _ => JsonObject::new(),
        };
        let mut definition = ToolDefinition::new(name, describe(&catalog, name), schema);
        definition.title = Some("Run code".into());
        definition.source = SourceLocation::file("<builtin>");
        // The call path's watchdog allows the longest run; each run's own time constraint
        // stops the program earlier.
        definition.timeout = Some(resolved.max_time_constraint());
        definition.options.clone_from(options);
        Self {
            definition,
            catalog,
            options: resolved,
            folder: crate::sessions::folder_prefix(folder),
        }
    }

    fn sessions(&self) -> Option<Sessions> {
        Some(Sessions {
            dir: self.options.sessions_dir.clone()?,
            max_count: self.options.max_session_count,
            max_bytes: self.options.max_session_bytes,
            max_age: self.options.max_session_age,
            folder: self.folder.clone(),
        })
    }
}

impl Tool for RunCode {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        let code = arguments
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let constraint = arguments
            .get("time_constraint")
            .and_then(Value::as_f64)
            .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
            .unwrap_or(self.options.time_constraint)
            .min(self.options.max_time_constraint());
        let context = CallContext {
            deadline: context.deadline.min(Instant::now() + constraint),
            ..context.clone()
        };
        let session = match arguments.get("session").and_then(Value::as_str) {
            None => None,
            Some(text) => Some(SessionId::parse(text).map_err(ToolFailure::failed)?),
        };
        let Some(session) = session else {
            return Ok(self.run(code, None, &context, constraint));
        };
        let Some(sessions) = self.sessions() else {
            return Err(ToolFailure::failed(
                "sessions need a folder to be saved in: set XDG_DATA_HOME or HOME, or the \
                 evaluator's `sessions_dir` option; run without `session` meanwhile",
            ));
        };
        let path = sessions.path(&Scope::of(&context), &session);
        let Some(_held) = Sessions::hold(&path, &context) else {
            return Err(match context.stop_reason() {
                Some(StopReason::Cancelled) => ToolFailure::Cancelled,
                _ => ToolFailure::failed(format!(
                    "session `{}` was busy with another run for the whole time constraint",
                    session.as_str()
                )),
            });
        };
        let open = Open {
            sessions: &sessions,
            path: &path,
            id: &session,
        };
        Ok(self.run(code, Some(&open), &context, constraint))
    }
}

/// The session a run uses.
struct Open<'a> {
    sessions: &'a Sessions,
    path: &'a std::path::Path,
    id: &'a SessionId,
}

impl RunCode {
    fn run(
        &self,
        code: &str,
        session: Option<&Open<'_>>,
        context: &CallContext,
        constraint: Duration,
    ) -> ToolReturn {
        let mut notes = Vec::new();
        let previous = match session {
            Some(open) => {
                let loaded = Sessions::load(open.path, open.id);
                notes.extend(loaded.problem);
                loaded.globals
            }
            None => KeptGlobals::default(),
        };
        let host = CatalogHost {
            catalog: &self.catalog,
            own_name: &self.definition.name,
            context,
        };
        let ran = toolsmith_starlark::run_code(code, &previous, &host, context, &self.definition);
        let mut run = match ran {
            Ok(run) => run,
            Err(failure) => {
                let mut message = failure.message;
                if failure.stopped == Some(StopReason::Timeout) {
                    let _ = write!(
                        message,
                        "\nhelp: the time constraint was {}; pass a larger `time_constraint` \
                         (at most {}) or do less in one run",
                        toolsmith_model::duration::format(constraint),
                        toolsmith_model::duration::format(self.options.max_time_constraint()),
                    );
                }
                let mut blocks = printed(&failure.printed);
                blocks.push(Content::text(message));
                blocks.extend(notes.into_iter().map(Content::text));
                blocks.push(Content::text(match session {
                    Some(open) => {
                        format!("session: {} (unchanged: the run failed)", open.id.as_str())
                    }
                    None => "session: none".to_owned(),
                }));
                return ToolReturn::Outcome(CallOutcome {
                    content: blocks,
                    structured_content: None,
                    is_error: true,
                    meta: None,
                });
            }
        };
        notes.append(&mut run.notes);
        let session_line = match session {
            Some(open) => match open.sessions.save(open.path, &run.globals) {
                Ok(_) => format!(
                    "session: {} (kept {} value{} and {} function{})",
                    open.id.as_str(),
                    run.globals.values.len(),
                    plural(run.globals.values.len()),
                    run.globals.definitions.len(),
                    plural(run.globals.definitions.len()),
                ),
                Err(error) => format!(
                    "session: {} (not saved: {error}; the next run starts from the last save)",
                    open.id.as_str()
                ),
            },
            None => "session: none (nothing is kept; pass `session` to keep globals and functions)"
                .to_owned(),
        };
        let mut outcome = run.value.map_or_else(
            || CallOutcome {
                content: Vec::new(),
                structured_content: None,
                is_error: false,
                meta: None,
            },
            |value| program_outcome(value, self.definition.text_format),
        );
        let mut blocks = printed(&run.printed);
        blocks.append(&mut outcome.content);
        blocks.extend(notes.into_iter().map(Content::text));
        blocks.push(Content::text(session_line));
        outcome.content = blocks;
        ToolReturn::Outcome(outcome)
    }
}

/// What a program's value answers. Only an error is an error: a dict with an `error` key
/// is the program's data (a `tools.call_result(...)` that failed is `{"ok": false, "error":
/// ...}`, which the program may mean to show), where a tool's dict of that shape would be
/// an error result. `mcp.error(...)` is still one.
fn program_outcome(value: ToolReturn, format: toolsmith_model::TextFormat) -> CallOutcome {
    match value {
        ToolReturn::Value(value @ Value::Object(_)) => CallOutcome {
            content: vec![Content::text(toolsmith_model::render(&value, format))],
            structured_content: Some(value),
            is_error: false,
            meta: None,
        },
        value => value.into_outcome(format),
    }
}

/// What a program printed, as its own text block.
fn printed(text: &str) -> Vec<Content> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![Content::text(format!("printed:\n{}", text.trim_end()))]
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// The catalog's tools, as a program calls them.
struct CatalogHost<'a> {
    catalog: &'a Catalog,
    own_name: &'a str,
    context: &'a CallContext,
}

impl CodeHost for CatalogHost<'_> {
    fn tool_names(&self) -> Vec<String> {
        self.catalog
            .entries()
            .iter()
            .map(CatalogEntry::name)
            .filter(|name| *name != self.own_name)
            .map(str::to_owned)
            .collect()
    }

    fn call(&self, name: &str, arguments: JsonObject) -> Result<CallOutcome, String> {
        if name == self.own_name {
            return Err(format!(
                "a program cannot call `{name}` itself; write the code inline"
            ));
        }
        // A span per inner call, current while it runs so that its own work nests under it
        // (docs/http.md, "Telemetry"); free without a request span.
        let span = WorkSpan::start(
            SpanRole::Internal,
            || format!("execute_tool {name}"),
            || {
                vec![
                    Attribute::new("gen_ai.operation.name", "execute_tool"),
                    Attribute::new("gen_ai.tool.name", name.to_owned()),
                ]
            },
        );
        let _current = span.attach();
        let outcome = toolsmith_search::execute(self.catalog, name, arguments, self.context)
            .map_err(|unknown| {
                let find = if self.catalog.get(TOOL_SEARCH).is_some() {
                    format!("; find tools with `tools.{TOOL_SEARCH}(query = \"...\")`")
                } else {
                    "; `dir(tools)` lists them".to_owned()
                };
                format!("{unknown}{find}")
            });
        match &outcome {
            Ok(outcome) if outcome.is_error => {
                span.fail(|| "tool_error".to_owned(), || outcome.joined_text());
            }
            Ok(_) => {}
            Err(message) => span.fail(|| "unknown_tool".to_owned(), || message.clone()),
        }
        outcome
    }
}
