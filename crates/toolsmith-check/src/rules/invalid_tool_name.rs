use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that every tool name is 1 to 128 characters from the set the MCP specification
    /// allows: ASCII letters, digits, `_`, `-` and `.`.
    ///
    /// ## Why is this bad?
    /// Clients validate tool names before they offer a tool to the model. A name with a
    /// space, a slash or a non-ASCII letter is rejected or mangled: the tool silently goes
    /// missing in some clients, and a model that saw it under one spelling calls it under
    /// another.
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(forecast_get, name = "weather/forecast get")
    /// ```
    ///
    /// ## How to fix
    /// Use `snake_case` ASCII, in the `service_noun_verb` pattern:
    /// ```python
    /// mcp.tool(forecast_get, name = "weather_forecast_get")
    /// ```
    pub(crate) static INVALID_TOOL_NAME: InvalidToolName = {
        id: "invalid-tool-name",
        summary: "A tool name is empty, longer than 128 characters or uses characters MCP does not allow",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let name = tool.name();
        if let Some(message) = toolsmith_model::names::tool_name_problem(name) {
            report
                .add(tool.at_name(), Some(name), message)
                .help(toolsmith_model::names::TOOL_NAME_HELP);
        }
    }
}
