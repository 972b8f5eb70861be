use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use crate::schema;

declare_rule! {
    /// ## What it does
    /// Checks for parameters that are both `required` and have a `default`.
    ///
    /// ## Why is this bad?
    /// A default is the value used when the argument is left out, but a required argument
    /// can never be left out. The model is told two different things and has to pass a
    /// value it might have relied on the default for.
    ///
    /// ## Example
    /// ```toml
    /// [[parameters]]
    /// name = "count"
    /// type = "integer"
    /// required = true
    /// default = 10
    /// ```
    ///
    /// ## How to fix
    /// Drop `required = true` (the default then applies), or drop the default.
    pub(crate) static REQUIRED_WITH_DEFAULT: RequiredWithDefault = {
        id: "required-with-default",
        summary: "A required parameter also has a default",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        for property in schema::properties(tool.definition) {
            if property.required && property.schema.contains_key("default") {
                report
                    .add(
                        tool.at_parameter_keyword(property.name, "required"),
                        Some(tool.name()),
                        format!(
                            "parameter `{}` of `{}` is required but has a default",
                            property.name,
                            tool.name()
                        ),
                    )
                    .help("remove `required = true` so the default applies, or remove the default");
            }
        }
    }
}
