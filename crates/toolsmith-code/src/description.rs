//! The evaluator's description: a few lines that teach the language, then the callable
//! tools as Starlark signatures with one line each, or, when there are too many to list,
//! where to find them (`tool_search`).

use std::fmt::Write as _;

use serde_json::Value;
use toolsmith_model::{Catalog, CatalogEntry, JsonObject, ToolDefinition};
use toolsmith_search::TOOL_SEARCH;
use toolsmith_starlark::attribute_name;

/// Past this many tools the description names none and points to `tool_search`.
pub(crate) const MAX_LISTED_TOOLS: usize = 40;

/// The longest one-line description of a tool in the list.
const MAX_SUMMARY_CHARS: usize = 120;

const TEACHING: &str = "Run a Starlark program (Python syntax, no imports, classes or \
try/except; loop with `for`) that calls this server's tools as functions, so intermediate \
results stay here and only what you return comes back. Use it to chain calls, loop over \
results, filter and aggregate.
- `tools.NAME(arg = value, ...)` runs a tool (keyword arguments only) and returns its \
structured result (a dict) or its text; a tool error stops the program. \
`tools.call_result(\"NAME\", arg = value)` returns {\"ok\": bool, \"value\": ..., \"error\": \
str or None} instead, to handle errors.
- The value of the last expression (or of `result = ...`) is returned, with what the \
program `print`s. `json.encode`/`json.decode` are there.
- Pass `session` to keep globals and `def` functions for the next run with the same id.";

/// The description of the evaluator over `catalog`'s tools.
pub(crate) fn describe(catalog: &Catalog, own_name: &str) -> String {
    // Counted by name: a big folder's tools are not all held (docs/performance.md).
    let others = || {
        catalog
            .entries()
            .iter()
            .filter(|entry| entry.name() != own_name)
    };
    let count = others().count();
    let mut text = TEACHING.to_owned();
    if count > MAX_LISTED_TOOLS {
        let search = if catalog.get(TOOL_SEARCH).is_some() {
            format!(
                "find them with `tools.{TOOL_SEARCH}(query = \"what it does\")` (or the \
                 `{TOOL_SEARCH}` tool): each result's `name` is callable as `tools.NAME`, its \
                 `inputSchema` lists the arguments"
            )
        } else {
            "`dir(tools)` lists their names".to_owned()
        };
        let _ = write!(text, "\n\nThis server has {count} tools; {search}.");
        return text;
    }
    text.push_str("\n\nTools:");
    for tool in others().map(CatalogEntry::definition) {
        let _ = write!(text, "\n{}", signature(tool));
        let summary = summary(&tool.description);
        if !summary.is_empty() {
            let _ = write!(text, "  # {summary}");
        }
    }
    text
}

/// `tools.get_weather(city: str, days: int = 3)`: required parameters first, optional
/// ones with their default (or `None`).
pub(crate) fn signature(tool: &ToolDefinition) -> String {
    let schema = tool.input_schema.to_object();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let empty = JsonObject::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut parameters: Vec<String> = Vec::new();
    for (name, property) in properties
        .iter()
        .filter(|(name, _)| required.contains(&name.as_str()))
    {
        parameters.push(format!("{name}: {}", type_name(property)));
    }
    for (name, property) in properties
        .iter()
        .filter(|(name, _)| !required.contains(&name.as_str()))
    {
        let default = property
            .get("default")
            .map_or_else(|| "None".to_owned(), starlark_literal);
        parameters.push(format!("{name}: {} = {default}", type_name(property)));
    }
    format!(
        "tools.{}({})",
        attribute_name(&tool.name),
        parameters.join(", ")
    )
}

/// The Starlark type of a JSON Schema property.
fn type_name(property: &Value) -> String {
    let one = |kind: &str| -> String {
        match kind {
            "string" => "str".to_owned(),
            "integer" => "int".to_owned(),
            "number" => "float".to_owned(),
            "boolean" => "bool".to_owned(),
            "array" => match property.get("items") {
                Some(items) if items.get("type").is_some() => format!("list[{}]", type_name(items)),
                _ => "list".to_owned(),
            },
            "object" => "dict".to_owned(),
            "null" => "None".to_owned(),
            _ => "Any".to_owned(),
        }
    };
    match property.get("type") {
        Some(Value::String(kind)) => one(kind),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .map(one)
            .collect::<Vec<_>>()
            .join(" | "),
        _ if property.get("enum").is_some() => "str".to_owned(),
        _ => "Any".to_owned(),
    }
}

/// A JSON default as Starlark writes it.
fn starlark_literal(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        other => other.to_string(),
    }
}

/// The first sentence of `description`, on one line and at most [`MAX_SUMMARY_CHARS`].
fn summary(description: &str) -> String {
    let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let first = flat.find(". ").map_or(flat.as_str(), |end| &flat[..=end]);
    if first.chars().count() <= MAX_SUMMARY_CHARS {
        return first.to_owned();
    }
    let cut: String = first.chars().take(MAX_SUMMARY_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn signatures_read_as_starlark() {
        let schema = json!({
            "type": "object",
            "properties": {
                "days": {"type": "integer", "default": 3},
                "city": {"type": "string"},
                "metric": {"type": "boolean", "default": true},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["city"],
        });
        let tool = ToolDefinition::new("get-weather", "x", schema.as_object().cloned().unwrap());
        assert_eq!(
            signature(&tool),
            "tools.get_weather(city: str, days: int = 3, metric: bool = True, tags: list[str] = None)"
        );
    }

    #[test]
    fn summaries_are_one_short_sentence() {
        assert_eq!(
            summary("Get the weather.\nIt is nice. More."),
            "Get the weather."
        );
        assert_eq!(
            summary(&"word ".repeat(60)).chars().count(),
            MAX_SUMMARY_CHARS
        );
    }
}
