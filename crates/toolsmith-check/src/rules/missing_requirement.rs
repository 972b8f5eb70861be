use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Reports tools whose `requires={"env": [...], "commands": [...]}` names an environment
    /// variable that is not set, or a program that is not on `PATH`, where `toolsmith check`
    /// runs. The folder loader reports the same thing under the same id when it hides such
    /// a tool.
    ///
    /// ## Why is this bad?
    /// It may not be: the variable may only be set, or the program installed, in
    /// production. But a server started in this environment hides the tool (with a reason in
    /// the log, and in the error a call of it gets), so the model never sees it — a common
    /// cause of "my tool is missing".
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(issues_search, requires = {"env": ["GITHUB_TOKEN"]})
    /// mcp.tool(video_trim, requires = {"commands": ["ffmpeg"]})
    /// ```
    ///
    /// ## How to fix
    /// Set the variable where the server runs (`GITHUB_TOKEN=... toolsmith serve tools`),
    /// install the program, or ignore this rule in CI: `[check] ignore =
    /// ["missing-requirement"]`.
    pub(crate) static MISSING_REQUIREMENT: MissingRequirement = {
        id: "missing-requirement",
        summary: "A tool requires an environment variable that is not set or a program that is not on PATH",
        severity: Info,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let unmet = tool.definition.requires.unmet(
            |name| server.context.env.contains(name),
            |program| server.context.programs.contains(program),
        );
        if let Some(unmet) = unmet {
            report
                .add(
                    tool.at_keyword("requires"),
                    Some(tool.name()),
                    unmet.message(tool.name()),
                )
                .help(unmet.help());
        }
    }
}
