use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that every tool has a description: a Starlark docstring (or `description=`),
    /// or `description = "..."` in a manifest.
    ///
    /// ## Why is this bad?
    /// The description is what the model reads to decide whether to call a tool and how.
    /// Without one the model guesses from the name alone, and picks the wrong tool or none.
    ///
    /// ## Example
    /// ```python
    /// def forecast_get(city: str) -> dict:
    ///     return {"city": city}
    ///
    /// mcp.tool(forecast_get)
    /// ```
    ///
    /// ## How to fix
    /// Add a docstring that says what the tool does and when to use it:
    /// ```python
    /// def forecast_get(city: str) -> dict:
    ///     """Get the weather forecast for a city.
    ///
    ///     Use when:
    ///     - The user asks what the weather will be somewhere.
    ///     """
    /// ```
    pub(crate) static MISSING_DESCRIPTION: MissingDescription = {
        id: "missing-description",
        summary: "A tool has no description",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        if tool.definition.description.trim().is_empty() {
            report
                .add(tool.at_name(), Some(tool.name()), format!("tool `{}` has no description", tool.name()))
                .help("add a docstring (Starlark) or `description = \"...\"` (manifest): it is what the model picks tools by");
        }
    }
}
