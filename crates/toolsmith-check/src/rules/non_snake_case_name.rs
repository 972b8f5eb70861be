use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that tool names are `snake_case`: lowercase ASCII letters and digits separated
    /// by single underscores, starting with a letter.
    ///
    /// ## Why is this bad?
    /// Models call tools by name, and one naming style across a server makes names
    /// predictable: after `forecast_get` a model guesses `forecast_list`, not
    /// `ForecastList`. The `service_noun_verb` convention (`kv_namespace_create`) also sorts
    /// related tools together in a long list.
    ///
    /// ## Example
    /// ```python
    /// def GetForecast(city: str) -> dict:
    ///     ...
    /// ```
    ///
    /// ## How to fix
    /// Rename the function (or pass `name=`): `def forecast_get(city: str) -> dict:`.
    pub(crate) static NON_SNAKE_CASE_NAME: NonSnakeCaseName = {
        id: "non-snake-case-name",
        summary: "A tool name is not snake_case",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let name = tool.name();
        let snake = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !name.contains("__")
            && !name.ends_with('_');
        if snake || name.is_empty() {
            continue;
        }
        let suggestion = crate::prose::snake_case(name);
        report
            .add(
                tool.at_name(),
                Some(name),
                format!("tool name `{name}` is not snake_case"),
            )
            .help(format!(
                "rename it to `{suggestion}` (the `service_noun_verb` pattern reads best)"
            ));
    }
}
