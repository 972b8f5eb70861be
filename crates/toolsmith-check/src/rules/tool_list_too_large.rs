use crate::checker::{Report, Server};
use crate::rule::declare_rule;
use crate::tokens;

declare_rule! {
    /// ## What it does
    /// Adds up the tokens of every listed tool's definition (name, description, schemas,
    /// annotations: the JSON `tools/list` sends) and reports when the total passes 25,000,
    /// unless discovery mode is configured (`[search] mode = "auto"` or `"always"` in
    /// `toolsmith.toml`). Tools marked `discoverable = true` are not listed and do not count.
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
    /// Switch the server to discovery mode, where the model sees `tool_search` and
    /// `execute_tool` and finds the rest on demand:
    /// ```toml
    /// [search]
    /// mode = "auto"
    /// ```
    /// or mark rarely used tools `discoverable = true`.
    pub(crate) static TOOL_LIST_TOO_LARGE: ToolListTooLarge = {
        id: "tool-list-too-large",
        summary: "The listed tools' definitions exceed 25,000 tokens without discovery mode",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    const BUDGET: usize = 25_000;
    if matches!(
        server.context.search_mode.as_deref(),
        Some("auto" | "always")
    ) {
        return;
    }
    let listed: Vec<_> = server
        .tools
        .iter()
        .filter(|tool| !tool.definition.discoverable)
        .collect();
    let total: usize = listed
        .iter()
        .map(|tool| tokens::count(&tool.definition.to_mcp().to_string()))
        .sum();
    if total > BUDGET {
        report
            .add(
                server.at_config(),
                None,
                format!("the {} listed tools' definitions are {total} tokens, over the {BUDGET} clients handle well", listed.len()),
            )
            .help("set `[search] mode = \"auto\"` in toolsmith.toml (discovery mode), or mark rarely used tools `discoverable = true`");
    }
}
