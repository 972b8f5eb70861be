use toolsmith_model::compile_schema;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use crate::schema;

declare_rule! {
    /// ## What it does
    /// Checks that each parameter's `default` is a valid value of the parameter itself: of
    /// its type, in its `enum`, within its bounds.
    ///
    /// ## Why is this bad?
    /// Clients show the default to the model and to people as the value used when the
    /// argument is left out. A default the schema rejects is a contradiction: a model that
    /// copies it gets a validation error, and the tool runs with a value no caller could
    /// have passed.
    ///
    /// ## Example
    /// ```python
    /// def forecast_get(city: str, days: int = 10) -> dict: ...
    /// mcp.tool(forecast_get, params = {"days": {"minimum": 1, "maximum": 7}})
    /// ```
    ///
    /// ## How to fix
    /// Make the default a value the schema accepts (`days: int = 3`), or widen the schema.
    pub(crate) static INVALID_DEFAULT: InvalidDefault = {
        id: "invalid-default",
        summary: "A parameter's default does not match its own schema",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        for property in schema::properties(tool.definition) {
            let Some(default) = property.schema.get("default") else {
                continue;
            };
            let mut without = property.schema.clone();
            without.remove("default");
            let problems: Vec<String> = match compile_schema(&without) {
                Ok(validator) => validator
                    .iter_errors(default)
                    .map(|error| error.to_string())
                    .collect(),
                // A schema that does not compile is reported elsewhere; check the type alone.
                Err(_) => schema::types(&without)
                    .first()
                    .filter(|name| !schema::type_accepts(name, default))
                    .map(|name| vec![format!("{default} is not of type \"{name}\"")])
                    .unwrap_or_default(),
            };
            if let Some(problem) = problems.first() {
                report
                    .add(
                        tool.at_parameter_keyword(property.name, "default"),
                        Some(tool.name()),
                        format!(
                            "default of parameter `{}` of `{}` is invalid: {problem}",
                            property.name,
                            tool.name()
                        ),
                    )
                    .help("make the default a value the parameter's schema accepts, or drop it");
            }
        }
    }
}
