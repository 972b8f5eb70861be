use std::collections::HashMap;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that no two tools share a name, also when the names differ only in case or in
    /// `-` versus `_`.
    ///
    /// ## Why is this bad?
    /// A server can publish one tool per name; the second definition is dropped when the
    /// folder loads (this is also reported as a load error). Names that differ only in case
    /// or punctuation are legal but collide in clients that normalise names, and they
    /// confuse the model either way.
    ///
    /// ## Example
    /// ```python
    /// # weather.star
    /// def forecast_get(city: str) -> dict: ...
    /// mcp.tool(forecast_get)
    ///
    /// # legacy.star
    /// def Forecast_Get(city: str) -> dict: ...
    /// mcp.tool(Forecast_Get)
    /// ```
    ///
    /// ## How to fix
    /// Remove one of the two tools, or give one a distinct name with `name=`.
    pub(crate) static DUPLICATE_TOOL_NAME: DuplicateToolName = {
        id: "duplicate-tool-name",
        summary: "Two tools have the same name, or names that differ only in case or punctuation",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    let mut first: HashMap<String, usize> = HashMap::new();
    for (index, tool) in server.tools.iter().enumerate() {
        let key = tool.name().to_lowercase().replace('-', "_");
        let Some(&earlier) = first.get(&key) else {
            first.insert(key, index);
            continue;
        };
        let other = &server.tools[earlier];
        let message = if other.name() == tool.name() {
            format!("tool `{}` is defined twice", tool.name())
        } else {
            format!(
                "tool name `{}` differs from `{}` only in case or punctuation",
                tool.name(),
                other.name()
            )
        };
        report
            .add(tool.at_name(), Some(tool.name()), message)
            .help(format!(
                "the other one is at {}; rename or remove one of them",
                other.definition.source
            ));
    }
}
