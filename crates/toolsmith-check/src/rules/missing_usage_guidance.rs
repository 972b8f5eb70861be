use crate::checker::{Report, Server};
use crate::prose;
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that a description has the three parts of the description convention:
    /// a "Use when:" list, a "Do not use for:" list and one "Example:" line.
    ///
    /// ## Why is this bad?
    /// A model choosing among many tools needs to know when a tool is the right one, when
    /// another tool is better, and what a call looks like. These three parts carry exactly
    /// that, in few tokens, and make tool choice reliable for smaller models.
    ///
    /// ## Example
    /// ```python
    /// def forecast_get(city: str) -> dict:
    ///     """Get the weather forecast for a city."""
    /// ```
    ///
    /// ## How to fix
    /// ```python
    /// def forecast_get(city: str) -> dict:
    ///     """Get the weather forecast for a city.
    ///
    ///     Use when:
    ///     - The user asks what the weather will be somewhere.
    ///
    ///     Do not use for:
    ///     - Past weather (use the history tool instead).
    ///
    ///     Example: forecast_get(city="Oslo")
    ///     """
    /// ```
    pub(crate) static MISSING_USAGE_GUIDANCE: MissingUsageGuidance = {
        id: "missing-usage-guidance",
        summary: "A description lacks \"Use when:\", \"Do not use for:\" or \"Example:\"",
        severity: Info,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        if tool.definition.description.trim().is_empty() {
            continue;
        }
        let missing = prose::missing_guidance(&tool.definition.description);
        if missing.is_empty() {
            continue;
        }
        let quoted: Vec<String> = missing.iter().map(|part| format!("\"{part}\"")).collect();
        report
            .add(
                tool.at_description(),
                Some(tool.name()),
                format!(
                    "description of `{}` has no {}",
                    tool.name(),
                    quoted.join(", ")
                ),
            )
            .help(format!(
                "add {}; `toolsmith check --explain missing-usage-guidance` shows the template",
                quoted.join(", ")
            ));
    }
}
