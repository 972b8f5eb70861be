use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks descriptions for the exact names of *other* tools of the same server.
    ///
    /// ## Why is this bad?
    /// Clients often prefix tool names with the server's name (`weather_forecast_get`,
    /// `mcp__weather__forecast_get`), and the prefix differs between clients and deployments.
    /// A description that says "use `forecast_history` instead" points at a name the model
    /// cannot call; a role ("use the forecast history tool") survives any prefix.
    ///
    /// ## Example
    /// ```python
    /// """Get the weather forecast for a city.
    ///
    /// Do not use for:
    /// - Past weather (use forecast_history instead).
    /// """
    /// ```
    ///
    /// ## How to fix
    /// Refer to the other tool by what it does: "(use the weather history tool instead)".
    /// A tool's own name in its "Example:" line is fine.
    pub(crate) static TOOL_NAME_IN_DESCRIPTION: ToolNameInDescription = {
        id: "tool-name-in-description",
        summary: "A description names another tool, whose name clients may prefix",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    for tool in &server.tools {
        let description = &tool.definition.description;
        for other in &server.tools {
            let name = other.name();
            if name == tool.name() || name.is_empty() {
                continue;
            }
            // A plain word ("add", "search") is too likely to be prose; only names with a
            // separator or digit, or written as code (`add` / add(...)), count.
            let distinctive =
                name.contains(['_', '-', '.']) || name.chars().any(|c| c.is_ascii_digit());
            let mentioned = description.match_indices(name).any(|(at, _)| {
                let before = description[..at].chars().next_back();
                let after = description[at + name.len()..].chars().next();
                let whole = !before.is_some_and(is_ident) && !after.is_some_and(is_ident);
                whole
                    && (distinctive
                        || before == Some('`')
                        || after == Some('(')
                        || after == Some('`'))
            });
            if mentioned {
                report
                    .add(
                        tool.at_description(),
                        Some(tool.name()),
                        format!("description of `{}` names the tool `{name}`", tool.name()),
                    )
                    .help(format!("refer to it by its role (\"the … tool\"): clients may call it `myserver_{name}`"));
            }
        }
    }
}
