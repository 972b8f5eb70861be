use serde_json::Value;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use crate::schema;

declare_rule! {
    /// ## What it does
    /// Checks a tool's input schema for constraints no value can meet: `minimum` above
    /// `maximum` (or the exclusive forms crossing), `minLength` above `maxLength`,
    /// `minItems` above `maxItems`, an empty `enum`, `enum` values of the wrong type, a
    /// `const` outside the `enum`, and required properties that `additionalProperties:
    /// false` forbids.
    ///
    /// ## Why is this bad?
    /// A parameter no value satisfies makes the tool uncallable: every call fails
    /// validation, and the model retries with other values that fail too.
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(forecast_get, params = {"days": {"minimum": 7, "maximum": 1}})
    /// ```
    ///
    /// ## How to fix
    /// Swap or correct the bounds: `{"minimum": 1, "maximum": 7}`.
    pub(crate) static CONTRADICTORY_CONSTRAINTS: ContradictoryConstraints = {
        id: "contradictory-constraints",
        summary: "A schema's constraints contradict each other, so no value is valid",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let mut found: Vec<(String, &'static str, String)> = Vec::new();
        schema::walk(
            tool.definition.input_schema.object(),
            "",
            &mut |path, subschema| {
                let number = |key: &str| subschema.get(key).and_then(Value::as_f64);
                let pairs = [
                    ("minimum", "maximum", false),
                    ("exclusiveMinimum", "exclusiveMaximum", true),
                    ("minimum", "exclusiveMaximum", true),
                    ("exclusiveMinimum", "maximum", true),
                    ("minLength", "maxLength", false),
                    ("minItems", "maxItems", false),
                    ("minProperties", "maxProperties", false),
                ];
                for (low_key, high_key, strict) in pairs {
                    if let (Some(low), Some(high)) = (number(low_key), number(high_key))
                        && (low > high || (strict && low >= high))
                    {
                        found.push((
                            path.to_owned(),
                            low_key,
                            format!("`{low_key}` {low} is not below `{high_key}` {high}"),
                        ));
                    }
                }
                if let Some(Value::Array(values)) = subschema.get("enum") {
                    if values.is_empty() {
                        found.push((path.to_owned(), "enum", "`enum` is empty".into()));
                    }
                    let types = schema::types(subschema);
                    if let Some(name) = types.first() {
                        for value in values
                            .iter()
                            .filter(|v| !types.iter().any(|t| schema::type_accepts(t, v)))
                        {
                            found.push((
                                path.to_owned(),
                                "enum",
                                format!("`enum` value {value} is not of type \"{name}\""),
                            ));
                        }
                    }
                    if let Some(constant) = subschema.get("const")
                        && !values.contains(constant)
                    {
                        found.push((
                            path.to_owned(),
                            "const",
                            format!("`const` {constant} is not in `enum`"),
                        ));
                    }
                }
                let closed = subschema.get("additionalProperties") == Some(&Value::Bool(false));
                if closed {
                    let properties = subschema.get("properties").and_then(Value::as_object);
                    for name in subschema
                        .get("required")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                    {
                        if !properties.is_some_and(|p| p.contains_key(name)) {
                            found.push((path.to_owned(), "required", format!("required property `{name}` is not allowed by `additionalProperties: false`")));
                        }
                    }
                }
            },
        );
        for (path, keyword, message) in found {
            let at = tool.at_schema_keyword(&path, keyword);
            let place = if path.is_empty() {
                "input schema".to_owned()
            } else {
                format!("`{path}`")
            };
            report
                .add(
                    at,
                    Some(tool.name()),
                    format!("{place} of `{}`: {message}", tool.name()),
                )
                .help("no value can satisfy this; correct the bounds or the listed values");
        }
    }
}
