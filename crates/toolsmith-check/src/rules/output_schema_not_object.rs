use serde_json::Value;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that a tool's output schema, when it has one, describes an object.
    ///
    /// ## Why is this bad?
    /// `structuredContent` is always a JSON object, and clients of the 2025 protocol
    /// revisions validate it against `outputSchema`. A schema of a list or a string can
    /// never match, so every successful call looks like an invalid result.
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(cities_list, output = {"type": "array", "items": {"type": "string"}})
    /// ```
    ///
    /// ## How to fix
    /// Wrap the value in an object: `output = {"type": "object", "properties": {"cities":
    /// {"type": "array", "items": {"type": "string"}}}}`, and return `{"cities": [...]}`.
    /// A `-> list[str]` return annotation does this for you.
    pub(crate) static OUTPUT_SCHEMA_NOT_OBJECT: OutputSchemaNotObject = {
        id: "output-schema-not-object",
        summary: "A tool's output schema does not describe an object",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let Some(output) = &tool.definition.output_schema else {
            continue;
        };
        let kind = output.object().get("type");
        if kind != Some(&Value::String("object".into())) {
            let shown = kind.map_or_else(|| "no `type`".to_owned(), |kind| format!("type {kind}"));
            report
                .add(
                    tool.at_keyword("output"),
                    Some(tool.name()),
                    format!(
                        "output schema of `{}` has {shown}, not \"object\"",
                        tool.name()
                    ),
                )
                .help(
                    "structuredContent is always an object: wrap the value, e.g. {\"result\": ...}",
                );
        }
    }
}
