//! `toolsmith_list_tools`: the folder's tools as served, what failed to load, and its files.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolsmith_model::{
    CallContext, CatalogEntry, Diagnostic, JsonObject, ToolDefinition, ToolFailure, ToolReturn,
};

use super::{SOURCE, Workbench, answer, describe};
use crate::printer::plural;

pub(super) fn definition() -> ToolDefinition {
    let diagnostic = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "line": {"type": "integer"},
            "column": {"type": "integer"},
            "rule": {"type": "string"},
            "severity": {"enum": ["error", "warning", "info"]},
            "message": {"type": "string"},
            "help": {"type": ["string", "null"]},
        },
        "required": ["path", "line", "column", "rule", "severity", "message"],
    });
    let mut definition = describe(
        "toolsmith_list_tools",
        "List the tools being written",
        "List the tools of the folder being served (not the toolsmith_* tools), the files \
         that failed to load with file, line and message, and every file in the folder.\n\n\
         Use when:\n\
         - Starting work on the folder, to see what exists.\n\
         - A tool you wrote is missing: its load error is here.\n\n\
         Paths are relative to the folder, as toolsmith_read_file and toolsmith_write_file \
         take them.",
        json!({"type": "object", "properties": {}}),
        json!({
            "type": "object",
            "properties": {
                "tools": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "title": {"type": ["string", "null"]},
                        "description": {"type": "string"},
                        "source": {"type": "string", "description": "file:line:column"},
                        "discoverable": {"type": "boolean"},
                    },
                    "required": ["name", "description", "source", "discoverable"],
                }},
                "errors": {"type": "array", "items": diagnostic},
                "files": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["tools", "errors", "files"],
        }),
    );
    definition.annotations.read_only = Some(true);
    definition
}

pub(super) fn run(
    bench: &Workbench,
    _: &JsonObject,
    _: &CallContext,
) -> Result<ToolReturn, ToolFailure> {
    let folder = bench.folder()?;
    let root = folder.root();
    let catalog = bench.served()?.state().catalog();
    let tools: Vec<&CatalogEntry> = catalog
        .entries()
        .iter()
        .filter(|entry| entry.definition().source.path.as_os_str() != SOURCE)
        .collect();
    let errors: Vec<Diagnostic> = catalog
        .diagnostics()
        .iter()
        .map(|diagnostic| bench.relative_diagnostic(root, diagnostic))
        .collect();
    let files: Vec<String> = folder
        .files()
        .iter()
        .map(|path| path.display().to_string())
        .collect();

    let mut text = format!("{} tool{}:\n", tools.len(), plural(tools.len()));
    let mut listed = Vec::new();
    for entry in &tools {
        let tool = entry.definition();
        let mut source = tool.source.clone();
        source.path = bench.relative(root, &source.path);
        let summary = tool.description.lines().next().unwrap_or_default();
        let _ = writeln!(text, "  {} ({source}): {summary}", tool.name);
        listed.push(json!({
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "source": source.to_string(),
            "discoverable": entry.discoverable(),
        }));
    }
    if !errors.is_empty() {
        let _ = writeln!(
            text,
            "{} load problem{}:",
            errors.len(),
            plural(errors.len())
        );
        for error in &errors {
            let _ = writeln!(text, "  {error}");
        }
    }
    let _ = write!(text, "files: {}", files.join(", "));
    Ok(answer(
        text,
        json!({
            "tools": listed,
            "errors": errors.iter().map(Diagnostic::to_json).collect::<Vec<Value>>(),
            "files": files,
        }),
    ))
}
