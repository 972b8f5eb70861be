//! `toolsmith_call`: call one of the folder's tools by name and see the whole result, as
//! `toolsmith call --json` prints it.

use serde_json::json;
use toolsmith_model::{CallContext, JsonObject, ToolDefinition, ToolFailure, ToolReturn};

use super::{LONG_TIMEOUT, Workbench, answer, describe, string};

pub(super) fn definition() -> ToolDefinition {
    let mut definition = describe(
        "toolsmith_call",
        "Call a tool and see its whole result",
        "Call one of the served tools by name, through the same path as a client's call \
         (arguments validated against its inputSchema, its timeout, the result \
         contract), and return the whole MCP result: content, structuredContent and \
         isError. Works for tools behind tool_search too.\n\n\
         Use when:\n\
         - Trying a tool you just wrote, to see exactly what a client gets.\n\n\
         Example: toolsmith_call(name=\"weather_get\", arguments={\"city\": \"Oslo\"})",
        json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The tool to call",
                },
                "arguments": {
                    "type": "object",
                    "description": "Its arguments, matching its inputSchema",
                },
            },
            "required": ["name"],
        }),
        json!({
            "type": "object",
            "properties": {
                "tool": {"type": "string"},
                "result": {
                    "type": "object",
                    "description": "The tool's CallToolResult",
                    "properties": {
                        "content": {"type": "array"},
                        "structuredContent": {},
                        "isError": {"type": "boolean"},
                    },
                    "required": ["content"],
                },
            },
            "required": ["tool", "result"],
        }),
    );
    // The tool it calls keeps its own timeout within this one.
    definition.timeout = Some(LONG_TIMEOUT);
    definition.annotations.open_world = Some(true);
    definition
}

pub(super) fn run(
    bench: &Workbench,
    arguments: &JsonObject,
    context: &CallContext,
) -> Result<ToolReturn, ToolFailure> {
    let name = string(arguments, "name").unwrap_or_default();
    let inner = toolsmith_search::inner_arguments(arguments)?;
    // Edits made outside MCP count, as they would once the watcher saw them.
    bench.folder()?;
    let catalog = bench.served()?.state().catalog();
    let outcome = toolsmith_search::execute(&catalog, name, inner, context)
        .map_err(|unknown| ToolFailure::failed(unknown.to_string()))?;
    let mut text = outcome.joined_text();
    if outcome.is_error {
        text = format!("`{name}` answered with isError: true\n{text}");
    }
    Ok(answer(
        text,
        json!({"tool": name, "result": outcome.to_json()}),
    ))
}
