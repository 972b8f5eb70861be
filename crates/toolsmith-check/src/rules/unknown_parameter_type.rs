use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use crate::schema;

declare_rule! {
    /// ## What it does
    /// Checks that the model can tell what type each parameter is: every top-level
    /// parameter has a `type`, and every `type` in the input schema is a JSON Schema type
    /// (`string`, `integer`, `number`, `boolean`, `array`, `object` or `null`).
    ///
    /// ## Why is this bad?
    /// Models fill in arguments from the schema. A Starlark parameter without an annotation
    /// (or annotated `typing.Any`) is published without a `type`, so the model guesses:
    /// `"5"` or `5`, a list or a comma-separated string. A type name that is not JSON Schema
    /// (`str`, `date`, from a definition built in code) makes strict clients reject the
    /// tool. (An unknown type in a manifest's `[[parameters]]` is already a load error.)
    ///
    /// ## Example
    /// ```python
    /// def report_get(since, limit: int = 10) -> dict:
    ///     ...
    /// ```
    ///
    /// ## How to fix
    /// Annotate the parameter, and add a `format` where it helps:
    /// ```python
    /// def report_get(since: str, limit: int = 10) -> dict:
    ///     ...
    ///
    /// mcp.tool(report_get, params = {"since": {"format": "date"}})
    /// ```
    pub(crate) static UNKNOWN_PARAMETER_TYPE: UnknownParameterType = {
        id: "unknown-parameter-type",
        summary: "A parameter has no type, or a `type` that is not a JSON Schema type",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    const JSON_TYPES: &[&str] = &[
        "string", "integer", "number", "boolean", "array", "object", "null",
    ];
    const COMBINATORS: &[&str] = &["anyOf", "oneOf", "allOf", "$ref", "enum", "const"];
    for tool in &server.tools {
        for property in schema::properties(tool.definition) {
            let typed = property.schema.contains_key("type")
                || COMBINATORS
                    .iter()
                    .any(|key| property.schema.contains_key(*key));
            if !typed {
                report
                    .add(
                        tool.at_parameter(property.name),
                        Some(tool.name()),
                        format!("parameter `{}` of `{}` has no type", property.name, tool.name()),
                    )
                    .help("annotate it (`name: str`, `count: int`, `items: list[str]`) or set `type` in the manifest");
            }
        }
        let mut found = Vec::new();
        schema::walk(
            tool.definition.input_schema.object(),
            "",
            &mut |path, subschema| {
                for name in schema::types(subschema) {
                    if !JSON_TYPES.contains(&name) {
                        found.push((path.to_owned(), name.to_owned()));
                    }
                }
            },
        );
        for (path, name) in found {
            let at = tool.at_schema_keyword(&path, "type");
            let place = if path.is_empty() {
                "the input schema".to_owned()
            } else {
                format!("`{path}`")
            };
            report
                .add(at, Some(tool.name()), format!("{place} of `{}` has unknown type `{name}`", tool.name()))
                .help("use string, integer, number, boolean, array, object or null (add `format` for dates, URIs, …)");
        }
    }
}
