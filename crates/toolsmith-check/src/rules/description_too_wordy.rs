use crate::checker::{Report, Server};
use crate::prose;
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that each description, together with its parameters' descriptions (what a
    /// docstring with its `Args:` section holds), is at most 250 tokens long, counted with
    /// the `o200k_base` tokenizer.
    ///
    /// ## Why is this bad?
    /// Every description is sent to the model with every request, so a long one costs
    /// context on every turn, for every tool. Past roughly 250 tokens the extra text is
    /// usually procedure (steps, error handling, output format) that does not help the model
    /// choose the tool.
    ///
    /// ## Example
    /// A docstring whose opening block also explains the response format field by field and
    /// lists every error the tool can return.
    ///
    /// ## How to fix
    /// Keep the opening block to a summary, "Use when:", "Do not use for:" and one
    /// "Example:"; describe parameters in `Args:` and let the output schema describe the
    /// result.
    pub(crate) static DESCRIPTION_TOO_WORDY: DescriptionTooWordy = {
        id: "description-too-wordy",
        summary: "A description is longer than 250 tokens",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let count = prose::description_tokens(tool.definition);
        if count > 250 {
            report
                .add(
                    tool.at_description(),
                    Some(tool.name()),
                    format!("description of `{}` is {count} tokens with its parameters; aim for 100 to 250", tool.name()),
                )
                .help("keep the summary, when (not) to use it and one example; move procedure and output details out");
        }
    }
}
