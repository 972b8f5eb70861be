use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that tool names are at most 64 characters long.
    ///
    /// ## Why is this bad?
    /// MCP allows 128 characters, but several clients and model APIs cap function names at
    /// 64 — and some of them prefix the server's name (`mcp__weather__forecast_get`), which
    /// counts too. A longer name is cut off or refused there, so the tool works in one client
    /// and is missing in the next.
    ///
    /// ## Example
    /// ```toml
    /// # fetch_the_current_weather_forecast_for_a_city_by_its_name_and_country.toml
    /// description = "Get the weather forecast for a city."
    /// ```
    ///
    /// ## How to fix
    /// Name the service, the noun and the verb, and leave the rest to the description:
    /// `forecast_get.toml`.
    pub(crate) static TOOL_NAME_TOO_LONG: ToolNameTooLong = {
        id: "tool-name-too-long",
        summary: "A tool name is longer than the 64 characters many clients accept",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let length = tool.name().chars().count();
        if (65..=128).contains(&length) {
            report
                .add(
                    tool.at_name(),
                    Some(tool.name()),
                    format!("tool name `{}` is {length} characters long", tool.name()),
                )
                .help(
                    "keep names to 64 characters or fewer (clients may add a server prefix, too)",
                );
        }
    }
}
