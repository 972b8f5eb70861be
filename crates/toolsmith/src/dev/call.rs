//! `toolsmith_call`: call one of the folder's tools by name and see the whole result, as
//! `toolsmith call --json` prints it.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use toolsmith_model::{CallContext, JsonObject, Tool, ToolDefinition, ToolFailure, ToolReturn};

use super::{LONG_TIMEOUT, Workbench, answer, definition, string};

pub(super) struct Call {
    definition: ToolDefinition,
    bench: Arc<Workbench>,
}

impl Call {
    pub(super) fn new(bench: Arc<Workbench>) -> Self {
        let mut definition = definition(
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
        Self { definition, bench }
    }
}

impl Tool for Call {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        let name = string(arguments, "name").unwrap_or_default();
        let inner = match arguments.get("arguments") {
            None | Some(Value::Null) => JsonObject::new(),
            Some(Value::Object(inner)) => inner.clone(),
            Some(_) => {
                return Err(ToolFailure::failed(
                    "`arguments` must be an object of the tool's arguments",
                ));
            }
        };
        // Edits made outside MCP count, as they would once the watcher saw them.
        self.bench.folder()?;
        let catalog = self.bench.served()?.state().catalog();
        let entry = catalog
            .lookup(name)
            .map_err(|unknown| ToolFailure::failed(unknown.to_string()))?;
        let definition = entry.definition();
        let context = CallContext {
            deadline: context
                .deadline
                .min(Instant::now() + definition.effective_timeout()),
            options: definition.options.clone(),
            ..context.clone()
        };
        let outcome = entry.call(inner, &context);
        let mut text = outcome.joined_text();
        if outcome.is_error {
            text = format!("`{name}` answered with isError: true\n{text}");
        }
        Ok(answer(
            text,
            json!({"tool": name, "result": outcome.to_json()}),
        ))
    }
}
