use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that descriptions are at most 1,024 characters long.
    ///
    /// ## Why is this bad?
    /// Some clients and model APIs truncate or reject tool descriptions past 1,024
    /// characters, and every character is sent with every request. What the model needs to
    /// pick a tool fits in far less; details belong in the parameter descriptions.
    ///
    /// ## Example
    /// A description that documents every parameter, the error cases and the output format
    /// in prose, 2,000 characters long.
    ///
    /// ## How to fix
    /// Keep the summary, "Use when:", "Do not use for:" and one "Example:"; move parameter
    /// details into `Args:` (Starlark) or each parameter's `description` (manifest).
    pub(crate) static DESCRIPTION_TOO_LONG: DescriptionTooLong = {
        id: "description-too-long",
        summary: "A description is longer than 1,024 characters",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let length = tool.definition.description.chars().count();
        if length > 1024 {
            report
                .add(
                    tool.at_description(),
                    Some(tool.name()),
                    format!("description of `{}` is {length} characters long (limit 1,024)", tool.name()),
                )
                .help("cut it to the summary, when to use it and one example; parameter details go in `Args:`");
        }
    }
}
