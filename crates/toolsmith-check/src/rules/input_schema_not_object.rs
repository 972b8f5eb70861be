use serde_json::Value;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that a tool's input schema is an object schema (`"type": "object"`).
    ///
    /// ## Why is this bad?
    /// MCP sends a tool's arguments as one JSON object, and the specification requires the
    /// input schema to describe that object. Clients refuse tools whose schema is anything
    /// else, or send arguments the tool cannot read.
    ///
    /// ## Example
    /// A tool built in code with `{"type": "string"}` as its input schema.
    ///
    /// ## How to fix
    /// Describe the arguments as properties of an object:
    /// `{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}`.
    pub(crate) static INPUT_SCHEMA_NOT_OBJECT: InputSchemaNotObject = {
        id: "input-schema-not-object",
        summary: "A tool's input schema does not describe an object",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let kind = tool.definition.input_schema.object().get("type");
        if kind != Some(&Value::String("object".into())) {
            let shown = kind.map_or_else(|| "no `type`".to_owned(), |kind| format!("type {kind}"));
            report
                .add(
                    tool.at_name(),
                    Some(tool.name()),
                    format!(
                        "input schema of `{}` has {shown}, not \"object\"",
                        tool.name()
                    ),
                )
                .help("MCP passes arguments as one object: describe them as its `properties`");
        }
    }
}
