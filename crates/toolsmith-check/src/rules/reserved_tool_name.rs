use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that no tool is named like a tool Toolsmith publishes itself: `tool_search`
    /// and `execute_tool`, the two tools of discovery mode.
    ///
    /// ## Why is this bad?
    /// When a server switches to discovery mode (many tools, or `discoverable = true`), it
    /// lists `tool_search` and `execute_tool`. A tool of the same name is shadowed by the
    /// built-in one, or shadows it, and the model can no longer find the other tools.
    ///
    /// ## Example
    /// ```python
    /// def tool_search(query: str) -> list: ...
    /// mcp.tool(tool_search)
    /// ```
    ///
    /// ## How to fix
    /// Give the tool a name in its own service's namespace, e.g. `docs_search`.
    pub(crate) static RESERVED_TOOL_NAME: ReservedToolName = {
        id: "reserved-tool-name",
        summary: "A tool is named like one of Toolsmith's built-in discovery tools",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    // The tools Toolsmith itself publishes in discovery mode (docs/search.md, "The built-in
    // tools").
    const BUILT_IN: &[&str] = &["tool_search", "execute_tool"];
    for tool in &server.tools {
        if BUILT_IN.contains(&tool.name()) {
            report
                .add(
                    tool.at_name(),
                    Some(tool.name()),
                    format!(
                        "tool name `{}` is reserved for Toolsmith's discovery mode",
                        tool.name()
                    ),
                )
                .help("rename the tool after its own service, e.g. `docs_search`");
        }
    }
}
