//! `toolsmith_test`: `toolsmith test` on the folder or one tool, the report as structured
//! content in the shape of `toolsmith test --json`.

use std::fmt::Write as _;

use serde_json::json;
use toolsmith_model::{CallContext, JsonObject, ToolDefinition, ToolFailure, ToolReturn};

use super::{LONG_TIMEOUT, Workbench, answer, describe, string};
use crate::commands::test::{collect, human, run_cases};

pub(super) fn definition() -> ToolDefinition {
    let mut definition = describe(
        "toolsmith_test",
        "Run the tools' tests",
        "Run `toolsmith test` on the tools folder, or on one tool: every test case \
         (`examples=[{\"args\": {...}, \"expect\": {...}}]` on mcp.tool, `[[tests]]` in a \
         manifest or in tests/*.toml) is called through the server's call path and its \
         result compared with what it expects. A failing case shows expected against \
         actual.\n\n\
         Use when:\n\
         - You wrote or changed a tool or its tests: every case should pass.\n\n\
         Example: toolsmith_test(tool=\"weather_get\")",
        json!({
            "type": "object",
            "properties": {
                "tool": {
                    "type": "string",
                    "description": "Only this tool's cases; every case when left out",
                },
            },
        }),
        json!({
            "type": "object",
            "description": "As `toolsmith test --json` prints it",
            "properties": {
                "folder": {"type": "string"},
                "passed": {"type": "boolean"},
                "totals": {
                    "type": "object",
                    "properties": {
                        "passed": {"type": "integer"},
                        "failed": {"type": "integer"},
                        "skipped": {"type": "integer"},
                    },
                    "required": ["passed", "failed", "skipped"],
                },
                "duration_ms": {"type": "number"},
                "cases": {"type": "array", "items": {"type": "object"}},
                "load_errors": {"type": "array", "items": {"type": "object"}},
            },
            "required": ["passed", "totals", "cases", "load_errors"],
        }),
    );
    definition.timeout = Some(LONG_TIMEOUT);
    definition.annotations.open_world = Some(true);
    definition
}

pub(super) fn run(
    bench: &Workbench,
    arguments: &JsonObject,
    _: &CallContext,
) -> Result<ToolReturn, ToolFailure> {
    let folder = bench.folder()?;
    let root = folder.root();
    let (mut cases, mut diagnostics) = collect(&folder);
    if let Some(name) = string(arguments, "tool") {
        cases.retain(|case| case.tool == name);
        if cases.is_empty()
            && let Err(unknown) = folder.catalog().lookup(name)
        {
            return Err(ToolFailure::failed(unknown.to_string()));
        }
        // Only the load errors of the tool's own file fail its run.
        let file = folder
            .catalog()
            .get(name)
            .map(|entry| entry.definition().source.path.clone());
        diagnostics.retain(|diagnostic| Some(&diagnostic.location.path) == file.as_ref());
    }
    let mut report = run_cases(&folder, cases, &diagnostics, &|_| {});
    report.folder = ".".into();
    for result in &mut report.results {
        result.case.source.path = bench.relative(root, &result.case.source.path);
    }
    for error in &mut report.load_errors {
        *error = bench.relative_diagnostic(root, error);
    }
    let mut text = human(&report, &|_, text| text.to_owned()).join("\n");
    if report.results.is_empty() {
        text.push_str(
                "\nno test cases: add `examples=[{\"args\": {...}, \"expect\": {...}}]` to mcp.tool(...), `[[tests]]` to a manifest, or a tests/NAME.toml file",
            );
    }
    for error in &report.load_errors {
        let _ = write!(text, "\nload error: {error}");
    }
    Ok(answer(text, report.to_json()))
}
