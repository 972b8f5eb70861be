use serde_json::Value;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use crate::schema;

declare_rule! {
    /// ## What it does
    /// Checks that every parameter has a description: an `Args:` line in the Starlark
    /// docstring, or `description = "..."` on the manifest parameter.
    ///
    /// ## Why is this bad?
    /// The model fills in arguments from the schema. A parameter called `days` could mean
    /// "how many days" or "which day"; without a description the model guesses, and the
    /// call fails validation or does the wrong thing.
    ///
    /// ## Example
    /// ```python
    /// def forecast_get(city: str, days: int = 3) -> dict:
    ///     """Get the weather forecast for a city."""
    /// ```
    ///
    /// ## How to fix
    /// ```python
    /// def forecast_get(city: str, days: int = 3) -> dict:
    ///     """Get the weather forecast for a city.
    ///
    ///     Args:
    ///         city: City name, e.g. "Oslo".
    ///         days: How many days ahead, 1 to 7.
    ///     """
    /// ```
    pub(crate) static UNDOCUMENTED_PARAMETER: UndocumentedParameter = {
        id: "undocumented-parameter",
        summary: "A parameter has no description",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        for property in schema::properties(tool.definition) {
            let documented = property
                .schema
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|text| !text.trim().is_empty());
            if !documented {
                report
                    .add(
                        tool.at_parameter(property.name),
                        Some(tool.name()),
                        format!("parameter `{}` of `{}` has no description", property.name, tool.name()),
                    )
                    .help(format!(
                        "describe it in the docstring's `Args:` section (`{}: ...`) or with `description = \"...\"` in the manifest",
                        property.name
                    ));
            }
        }
    }
}
