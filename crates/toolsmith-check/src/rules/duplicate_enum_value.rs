use serde_json::Value;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use crate::schema;

declare_rule! {
    /// ## What it does
    /// Checks that no `enum` in a tool's input schema lists the same value twice.
    ///
    /// ## Why is this bad?
    /// A repeated value is at best noise in the model's context and at worst a typo that
    /// hides a missing value (`["sum", "average", "sum"]` where `"max"` was meant). Some
    /// strict validators reject such schemas (JSON Schema says enum items *should* be
    /// unique).
    ///
    /// ## Example
    /// ```toml
    /// [[parameters]]
    /// name = "operation"
    /// enum = ["sum", "average", "sum"]
    /// ```
    ///
    /// ## How to fix
    /// List each value once, and check whether a different value was meant.
    pub(crate) static DUPLICATE_ENUM_VALUE: DuplicateEnumValue = {
        id: "duplicate-enum-value",
        summary: "An `enum` lists the same value more than once",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let mut found = Vec::new();
        schema::walk(
            tool.definition.input_schema.object(),
            "",
            &mut |path, subschema| {
                let Some(Value::Array(values)) = subschema.get("enum") else {
                    return;
                };
                for (index, value) in values.iter().enumerate() {
                    if values[..index]
                        .iter()
                        .filter(|earlier| *earlier == value)
                        .count()
                        == 1
                    {
                        found.push((path.to_owned(), value.clone()));
                    }
                }
            },
        );
        for (path, value) in found {
            let at = tool.at_schema_keyword(&path, "enum");
            report
                .add(
                    at,
                    Some(tool.name()),
                    format!(
                        "`enum` at `{path}` of `{}` lists {value} more than once",
                        tool.name()
                    ),
                )
                .help("list each value once; check whether another value was meant");
        }
    }
}
