use crate::checker::{Report, Server};
use crate::prose;
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that a description opens with a one-sentence summary: one sentence, ending in
    /// a period, on the first line or the first paragraph, at most 200 characters.
    ///
    /// ## Why is this bad?
    /// Clients show the first line in tool pickers, and models weigh the opening sentence
    /// most when they scan a long tool list. A summary that is cut mid-thought, or that runs
    /// into several sentences, hides what the tool is for.
    ///
    /// ## Example
    /// ```toml
    /// description = "Process a list of numbers and return statistics"
    /// ```
    ///
    /// ## How to fix
    /// Start with one complete sentence, then a blank line, then the details:
    /// ```toml
    /// description = """Compute a statistic of a list of numbers.
    ///
    /// Use when: ..."""
    /// ```
    pub(crate) static MISSING_SUMMARY_LINE: MissingSummaryLine = {
        id: "missing-summary-line",
        summary: "A description does not open with a one-sentence summary",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        if let Some(problem) = prose::summary_problem(&tool.definition.description) {
            report
                .add(
                    tool.at_description(),
                    Some(tool.name()),
                    format!("`{}`: {problem}", tool.name()),
                )
                .help("open with one sentence that ends in a period, then a blank line");
        }
    }
}
