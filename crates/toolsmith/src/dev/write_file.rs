//! `toolsmith_write_file`: write one file of the folder, then reload the folder and publish
//! it before answering, so the tools the file defines are callable at once.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolsmith_model::{
    CallContext, Diagnostic, JsonObject, Severity, ToolDefinition, ToolFailure, ToolReturn,
};

use super::paths::{self, MAX_FILE_BYTES};
use super::{Workbench, answer, describe, string};

pub(super) fn definition() -> ToolDefinition {
    let mut definition = describe(
        "toolsmith_write_file",
        "Write a file of the tools folder",
        "Write one text file of the tools folder being served (created, with its folders, \
         or replaced), then reload the folder: the answer says which tools the file \
         defines and what failed to load, and the tools are callable as soon as it comes \
         (clients also get notifications/tools/list_changed).\n\n\
         Use when:\n\
         - Writing a new tool or changing one (read it first with toolsmith_read_file).\n\
         - Adding test cases (`tests/NAME.toml`) or editing `toolsmith.toml`.\n\n\
         Example: toolsmith_write_file(path=\"weather.star\", content=\"def weather_get(city: str) -> str:\\n    ...\")\n\n\
         Paths are relative to the folder and must stay inside it (no `..` out, no \
         absolute paths, no links that lead out). At most 1 MiB. The folder's format is \
         in the README of Toolsmith; toolsmith_new_tool writes a working starting point.",
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The file, relative to the tools folder, e.g. \"weather.star\" or \"tests/weather.toml\"",
                },
                "content": {
                    "type": "string",
                    "description": "The whole new content of the file",
                },
                "create_only": {
                    "type": "boolean",
                    "default": false,
                    "description": "Refuse to replace a file that exists",
                },
            },
            "required": ["path", "content"],
        }),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "bytes": {"type": "integer"},
                "created": {"type": "boolean", "description": "The file did not exist before"},
                "tools": {"type": "array", "items": {"type": "string"}, "description": "The tools the file defines now"},
                "diagnostics": {"type": "array", "items": {"type": "object"}, "description": "What failed to load in the file, as toolsmith_list_tools reports it"},
            },
            "required": ["path", "bytes", "created", "tools", "diagnostics"],
        }),
    );
    definition.annotations.read_only = Some(false);
    definition.annotations.destructive = Some(true);
    definition.annotations.idempotent = Some(true);
    definition.annotations.open_world = Some(false);
    definition
}

pub(super) fn run(
    bench: &Workbench,
    arguments: &JsonObject,
    _: &CallContext,
) -> Result<ToolReturn, ToolFailure> {
    let path = string(arguments, "path").unwrap_or_default();
    let content = string(arguments, "content").unwrap_or_default();
    let create_only = arguments
        .get("create_only")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let target = paths::writable_file(&bench.root, path)
        .map_err(|error| ToolFailure::failed(error.to_string()))?;
    if u64::try_from(content.len()).unwrap_or(u64::MAX) > MAX_FILE_BYTES {
        return Err(ToolFailure::failed(format!(
            "the content is {} bytes, more than the {MAX_FILE_BYTES} a file may have here",
            content.len()
        )));
    }
    let created = !target.exists();
    if create_only && !created {
        return Err(ToolFailure::failed(format!(
            "`{path}` exists and `create_only` is set; read it with toolsmith_read_file, or write without `create_only` to replace it"
        )));
    }
    write(&target, content)
        .map_err(|error| ToolFailure::failed(format!("cannot write `{path}`: {error}")))?;

    let folder = bench.reload()?;
    let root = folder.root();
    let written = bench.relative(root, &target);
    let catalog = bench.served()?.state().catalog();
    let from_file = |source: &Path| defined_by(&bench.relative(root, source), &written);
    let tools: Vec<String> = catalog
        .definitions()
        .filter(|tool| from_file(&tool.source.path))
        .map(|tool| tool.name.clone())
        .collect();
    let diagnostics: Vec<Diagnostic> = catalog
        .diagnostics()
        .iter()
        .filter(|diagnostic| from_file(&diagnostic.location.path))
        .map(|diagnostic| bench.relative_diagnostic(root, diagnostic))
        .collect();

    let shown = written.display();
    let mut text = format!(
        "{} {shown} ({} bytes) and reloaded the folder",
        if created { "Created" } else { "Wrote" },
        content.len()
    );
    if !tools.is_empty() {
        let names: Vec<String> = tools.iter().map(|name| format!("`{name}`")).collect();
        let _ = write!(text, "; it defines {}", names.join(", "));
    }
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        text.push_str("; it does not load:");
    }
    for diagnostic in &diagnostics {
        let _ = write!(text, "\n  {diagnostic}");
    }
    Ok(answer(
        text,
        json!({
            "path": shown.to_string(),
            "bytes": content.len(),
            "created": created,
            "tools": tools,
            "diagnostics": diagnostics.iter().map(Diagnostic::to_json).collect::<Vec<Value>>(),
        }),
    ))
}

/// Writes `content` to `target`, creating the folders it is in.
fn write(target: &Path, content: &str) -> std::io::Result<()> {
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(target, content)
}

/// Whether what came from `source` (relative) is defined by the file `written`: the file
/// itself, or the manifest a script belongs to (`hello.py` → `hello.toml`).
fn defined_by(source: &Path, written: &PathBuf) -> bool {
    source == written || source == written.with_extension("toml")
}
