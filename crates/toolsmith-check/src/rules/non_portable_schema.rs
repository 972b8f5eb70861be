use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use crate::schema;

declare_rule! {
    /// ## What it does
    /// Checks tool schemas for keywords that some clients reject or ignore: `$ref`,
    /// `$defs`/`definitions` and the `nullable` of `OpenAPI` 3.0.
    ///
    /// ## Why is this bad?
    /// Several clients and model APIs accept only self-contained schemas: they do not
    /// resolve `$ref`, and refuse the tool or drop the parameter. `nullable` is not JSON
    /// Schema at all (it comes from `OpenAPI` 3.0); validators ignore it, so `null` is rejected
    /// anyway.
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(route_plan, params = {"stops": {"items": {"$ref": "#/$defs/stop"}}})
    /// ```
    ///
    /// ## How to fix
    /// Inline the referenced schema where it is used. For an optional value, leave the
    /// parameter out of `required` (or give it a default) instead of `nullable`.
    pub(crate) static NON_PORTABLE_SCHEMA: NonPortableSchema = {
        id: "non-portable-schema",
        summary: "A schema uses `$ref`, `$defs` or `nullable`, which some clients reject",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    const KEYWORDS: &[(&str, &str)] = &[
        (
            "$ref",
            "inline the referenced schema; some clients do not resolve references",
        ),
        ("$defs", "inline the definitions where they are used"),
        ("definitions", "inline the definitions where they are used"),
        (
            "nullable",
            "`nullable` is OpenAPI, not JSON Schema: leave the parameter out of `required` instead",
        ),
    ];
    for tool in &server.tools {
        let mut found = Vec::new();
        let mut schemas = vec![("", &tool.definition.input_schema)];
        if let Some(output) = &tool.definition.output_schema {
            schemas.push(("/outputSchema", output));
        }
        for (prefix, root) in schemas {
            schema::walk(root.object(), "", &mut |path, subschema| {
                for (keyword, help) in KEYWORDS {
                    if subschema.contains_key(*keyword) {
                        found.push((format!("{prefix}{path}"), *keyword, *help));
                    }
                }
            });
        }
        for (path, keyword, help) in found {
            let at = tool.at_schema_keyword(&path, keyword);
            let place = if path.is_empty() {
                "the input schema".to_owned()
            } else {
                format!("`{path}`")
            };
            report
                .add(
                    at,
                    Some(tool.name()),
                    format!("`{keyword}` in {place} of `{}`", tool.name()),
                )
                .help(help);
        }
    }
}
