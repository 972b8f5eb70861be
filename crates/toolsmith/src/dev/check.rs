//! `toolsmith_check`: `toolsmith check` on the folder or one tool, its findings as
//! structured content in the shape of `toolsmith check --format json`.

use std::collections::BTreeMap;

use serde_json::json;
use toolsmith_check::{counts, render};
use toolsmith_model::{CallContext, JsonObject, ToolDefinition, ToolFailure, ToolReturn};

use super::{Workbench, answer, describe, string};
use crate::commands::check::{lint, summary};

pub(super) fn definition() -> ToolDefinition {
    let mut definition = describe(
        "toolsmith_check",
        "Lint the tools",
        "Run `toolsmith check` on the tools folder, or on one tool: names, descriptions, \
         parameters, schemas and permissions against the rules that make tools work well \
         with models, plus the files that failed to load. Each finding has the rule, \
         severity, file, line, column, message and a help line saying how to fix it.\n\n\
         Use when:\n\
         - You wrote or changed a tool: fix every error and warning before moving on.\n\n\
         Example: toolsmith_check(tool=\"weather_get\")",
        json!({
            "type": "object",
            "properties": {
                "tool": {
                    "type": "string",
                    "description": "Only this tool's findings (and its file's load errors); all of them when left out",
                },
            },
        }),
        json!({
            "type": "object",
            "properties": {
                "findings": {
                    "type": "array",
                    "description": "As `toolsmith check --format json` prints them",
                    "items": {
                        "type": "object",
                        "properties": {
                            "rule": {"type": "string"},
                            "severity": {"enum": ["error", "warning", "info"]},
                            "path": {"type": "string"},
                            "line": {"type": "integer"},
                            "column": {"type": "integer"},
                            "message": {"type": "string"},
                            "help": {"type": ["string", "null"]},
                        },
                        "required": ["rule", "severity", "path", "line", "column", "message"],
                    },
                },
                "errors": {"type": "integer"},
                "warnings": {"type": "integer"},
                "infos": {"type": "integer"},
                "summary": {"type": "string"},
            },
            "required": ["findings", "errors", "warnings", "infos", "summary"],
        }),
    );
    definition.annotations.read_only = Some(true);
    definition
}

pub(super) fn run(
    bench: &Workbench,
    arguments: &JsonObject,
    _: &CallContext,
) -> Result<ToolReturn, ToolFailure> {
    let folder = bench.folder()?;
    let root = folder.root();
    let catalog = folder.catalog();
    let (mut findings, context) = lint(&folder, Vec::new(), Vec::new());
    let mut tools = catalog.entries().len();
    if let Some(name) = string(arguments, "tool") {
        let file = match catalog.lookup(name) {
            Ok(entry) => entry.definition().source.path.clone(),
            // A tool whose file does not load has no entry, but its file's findings
            // name it.
            Err(unknown) if !findings.iter().any(|f| f.tool.as_deref() == Some(name)) => {
                return Err(ToolFailure::failed(unknown.to_string()));
            }
            Err(_) => std::path::PathBuf::new(),
        };
        findings.retain(|finding| match &finding.tool {
            Some(tool) => tool == name,
            None => finding.diagnostic.location.path == file,
        });
        tools = 1;
    }
    for finding in &mut findings {
        finding.diagnostic = bench.relative_diagnostic(root, &finding.diagnostic);
    }
    toolsmith_check::sort(&mut findings);
    let sources: BTreeMap<_, _> = context
        .sources
        .into_iter()
        .map(|(path, text)| (bench.relative(root, &path), text))
        .collect();

    let summary = summary(&findings, tools, 0);
    let rendered = render::human(&findings, &sources, false);
    let text = if rendered.trim().is_empty() {
        summary.clone()
    } else {
        format!("{}\n\n{summary}", rendered.trim_end())
    };
    let (errors, warnings, infos) = counts(&findings);
    Ok(answer(
        text,
        json!({
            "findings": render::json_value(&findings),
            "errors": errors,
            "warnings": warnings,
            "infos": infos,
            "summary": summary,
        }),
    ))
}
