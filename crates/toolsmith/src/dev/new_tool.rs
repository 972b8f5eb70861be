//! `toolsmith_new_tool`: scaffold a tool as `toolsmith new tool` does, then reload the folder
//! so it is callable at once.

use clap::ValueEnum as _;
use serde_json::json;
use toolsmith_model::{CallContext, JsonObject, ToolDefinition, ToolFailure, ToolReturn};

use super::{Workbench, answer, describe, string};
use crate::args::{Lang, ToolForm};
use crate::commands::new::scaffold;

pub(super) fn definition() -> ToolDefinition {
    let mut definition = describe(
        "toolsmith_new_tool",
        "Start a new tool",
        "Write a new tool into the tools folder, as `toolsmith new tool` does: a working \
         tool (it repeats a text) whose description, parameters and example test show the \
         shape to keep, then reload the folder so it is callable at once. Never replaces \
         a file.\n\n\
         Use when:\n\
         - Starting a tool: scaffold it, read it with toolsmith_read_file, then rewrite \
         it with toolsmith_write_file.\n\n\
         Example: toolsmith_new_tool(name=\"weather_get\", form=\"star\")",
        json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 64,
                    "description": "The tool's name: snake_case ASCII, e.g. \"weather_get\"",
                },
                "form": {
                    "enum": ["star", "manifest", "command"],
                    "description": "star: one Starlark file; manifest: a TOML manifest and a Starlark script; command: a manifest that runs a program. Default star, or command with `lang`",
                },
                "lang": {
                    "enum": ["python", "node", "bash"],
                    "description": "The language of a command tool (default python)",
                },
            },
            "required": ["name"],
        }),
        json!({
            "type": "object",
            "properties": {
                "tool": {"type": "string"},
                "kind": {"type": "string"},
                "files": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["tool", "kind", "files"],
        }),
    );
    definition.annotations.read_only = Some(false);
    definition.annotations.destructive = Some(false);
    definition.annotations.open_world = Some(false);
    definition
}

pub(super) fn run(
    bench: &Workbench,
    arguments: &JsonObject,
    _: &CallContext,
) -> Result<ToolReturn, ToolFailure> {
    let name = string(arguments, "name").unwrap_or_default();
    // The schema allows only the values these parse.
    let form = string(arguments, "form").and_then(|form| ToolForm::from_str(form, false).ok());
    let lang = string(arguments, "lang").and_then(|lang| Lang::from_str(lang, false).ok());
    let scaffolded = scaffold(&bench.root, name, form, lang)
        .map_err(|error| ToolFailure::failed(crate::error::text(&error)))?;
    let folder = bench.reload()?;
    let files: Vec<String> = scaffolded
        .written
        .iter()
        .map(|path| bench.relative(folder.root(), path).display().to_string())
        .collect();
    let text = format!(
        "Created tool `{name}` ({}): {}; it is callable now. Next: read it with toolsmith_read_file, make it do the real work with toolsmith_write_file, then run toolsmith_check and toolsmith_test.",
        scaffolded.kind,
        files.join(", ")
    );
    Ok(answer(
        text,
        json!({"tool": name, "kind": scaffolded.kind, "files": files}),
    ))
}
