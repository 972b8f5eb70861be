use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use toolsmith_model::SearchMode;
use toolsmith_search::Plan;

use crate::tokens;

declare_rule! {
    /// ## What it does
    /// Adds up the tokens of every listed tool's definition (name, description, schemas,
    /// annotations: the JSON `tools/list` sends) and reports when the total passes 25,000
    /// and `serve` would still list them all: with `[search] mode = "never"`, or with mode
    /// `auto` and a `budget_tokens` above the total. Tools marked `discoverable = true` are
    /// not listed and do not count (with mode `never` they are listed and count).
    ///
    /// ## Why is this bad?
    /// Clients put every listed tool definition into the model's context on every request.
    /// Around 25,000 tokens clients start warning, responses slow down and get more
    /// expensive, and models pick tools less reliably among so many.
    ///
    /// ## Example
    /// A folder of 120 tools, each with a 200-token description and a detailed schema.
    ///
    /// ## How to fix
    /// Let the server switch to discovery mode, where the model sees `tool_search` and
    /// `execute_tool` and finds the rest on demand: `auto` (the default) does when the
    /// listed tools pass `budget_tokens` (8,000 unless set):
    /// ```toml
    /// [search]
    /// mode = "auto"
    /// ```
    /// or mark rarely used tools `discoverable = true`.
    pub(crate) static TOOL_LIST_TOO_LARGE: ToolListTooLarge = {
        id: "tool-list-too-large",
        summary: "The listed tools' definitions exceed 25,000 tokens and discovery mode stays off",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    const LIMIT: usize = 25_000;
    let settings = server.context.search;
    let listed: Vec<_> = server
        .tools
        .iter()
        .filter(|tool| settings.mode == SearchMode::Never || !tool.definition.discoverable)
        .collect();
    let total: usize = listed
        .iter()
        .map(|tool| tokens::cost(tool.definition))
        .sum();
    if total <= LIMIT || Plan::decide(settings, Some(total)).all_behind_search {
        return;
    }
    let why = match settings.mode {
        SearchMode::Never => "`[search] mode = \"never\"` lists them all".to_owned(),
        _ => format!(
            "`[search] budget_tokens = {}` lets them all be listed",
            settings.budget_tokens
        ),
    };
    report
        .add(
            server.at_config(),
            None,
            format!(
                "the {} listed tools' definitions are {total} tokens, over the {LIMIT} clients handle well; {why}",
                listed.len()
            ),
        )
        .help("use `[search] mode = \"auto\"` with the default budget_tokens (8000) so serve puts the tools behind tool_search, or mark rarely used tools `discoverable = true`");
}
