use crate::checker::{Report, Server};
use crate::prose;
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that each description, together with its parameters' descriptions (what a
    /// docstring with its `Args:` section holds), is at least 100 tokens long, counted with
    /// the `o200k_base` tokenizer.
    ///
    /// ## Why is this bad?
    /// A one-line description tells the model what the tool does but not when to use it,
    /// when not to, or what a call looks like. Smaller models in particular pick tools
    /// better with a short structured note: roughly 100 to 250 tokens per tool (the tool-use
    /// guides of the major model vendors, and Klea's conventions, agree).
    ///
    /// ## Example
    /// ```toml
    /// description = "Greet a person by name"
    /// ```
    ///
    /// ## How to fix
    /// Follow the description convention:
    /// ```toml
    /// description = """Greet a person by name.
    ///
    /// Use this tool to write a friendly greeting for someone.
    ///
    /// Use when:
    /// - The user asks to say hello to someone.
    ///
    /// Do not use for:
    /// - Formal letters (use a letter-writing tool instead).
    ///
    /// Example: hello(name="Ada", times=2)"""
    /// ```
    pub(crate) static DESCRIPTION_TOO_SHORT: DescriptionTooShort = {
        id: "description-too-short",
        summary: "A description is shorter than 100 tokens",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let description = tool.definition.description.trim();
        if description.is_empty() {
            continue;
        }
        let count = prose::description_tokens(tool.definition);
        if count < 100 {
            let tokens = if count == 1 { "token" } else { "tokens" };
            report
                .add(
                    tool.at_description(),
                    Some(tool.name()),
                    format!("description of `{}` is {count} {tokens} with its parameters; aim for 100 to 250", tool.name()),
                )
                .help("add a \"Use when:\" list, a \"Do not use for:\" list and one \"Example:\" line");
        }
    }
}
