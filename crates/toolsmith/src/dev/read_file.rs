//! `toolsmith_read_file`: one text file of the folder.

use serde_json::json;
use toolsmith_model::{CallContext, JsonObject, ToolDefinition, ToolFailure, ToolReturn};

use super::paths::{self, MAX_FILE_BYTES};
use super::{Workbench, answer, describe, string};

pub(super) fn definition() -> ToolDefinition {
    let mut definition = describe(
        "toolsmith_read_file",
        "Read a file of the tools folder",
        "Read one text file of the tools folder being served: a tool (`.star`, `.toml`, a \
         command's script), a test file, `toolsmith.toml`.\n\n\
         Use when:\n\
         - Changing a tool: read it first, then write it back with toolsmith_write_file.\n\n\
         Example: toolsmith_read_file(path=\"weather.star\")\n\n\
         Paths are relative to the folder; links are followed but must stay inside it. \
         Files over 1 MiB or not UTF-8 are refused.",
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The file, relative to the tools folder, e.g. \"weather.star\"",
                },
            },
            "required": ["path"],
        }),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "bytes": {"type": "integer"},
            },
            "required": ["path", "content", "bytes"],
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
    let path = string(arguments, "path").unwrap_or_default();
    let file = paths::existing_file(&bench.root, path)
        .map_err(|error| ToolFailure::failed(error.to_string()))?;
    let size = std::fs::metadata(&file)
        .map_err(|error| ToolFailure::failed(format!("cannot read `{path}`: {error}")))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(ToolFailure::failed(format!(
            "`{path}` is {size} bytes, more than the {MAX_FILE_BYTES} this tool reads"
        )));
    }
    let bytes = std::fs::read(&file)
        .map_err(|error| ToolFailure::failed(format!("cannot read `{path}`: {error}")))?;
    let content = String::from_utf8(bytes)
        .map_err(|_| ToolFailure::failed(format!("`{path}` is not UTF-8 text")))?;
    let bytes = content.len();
    Ok(answer(
        content.clone(),
        json!({"path": path, "content": content, "bytes": bytes}),
    ))
}
