use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Reports tools whose `requires={"env": [...]}` names an environment variable that is
    /// not set where `toolsmith check` runs. The folder loader reports the same thing under
    /// the same id when it hides such a tool.
    ///
    /// ## Why is this bad?
    /// It may not be: the variable may only be set in production. But a server started in
    /// this environment hides the tool (with a reason in the log), so the model never sees
    /// it — a common cause of "my tool is missing".
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(issues_search, requires = {"env": ["GITHUB_TOKEN"]})
    /// ```
    ///
    /// ## How to fix
    /// Set the variable where the server runs (`GITHUB_TOKEN=... toolsmith serve tools`), or
    /// ignore this rule in CI: `[check] ignore = ["missing-requirement"]`.
    pub(crate) static MISSING_REQUIREMENT: MissingRequirement = {
        id: "missing-requirement",
        summary: "A tool requires an environment variable that is not set",
        severity: Info,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let missing: Vec<String> = tool
            .definition
            .requires
            .env
            .iter()
            .filter(|name| !server.context.env.contains(name.as_str()))
            .map(|name| format!("`{name}`"))
            .collect();
        if !missing.is_empty() {
            report
                .add(
                    tool.at_keyword("requires"),
                    Some(tool.name()),
                    format!(
                        "tool `{}` is hidden: environment variable {} is not set",
                        tool.name(),
                        missing.join(", ")
                    ),
                )
                .help("set the variable before starting the server, or remove it from `requires`");
        }
    }
}
