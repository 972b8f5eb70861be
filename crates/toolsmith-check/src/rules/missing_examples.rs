use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Reports tools without test cases: no `examples=[...]` on `mcp.tool`, no `[[tests]]`
    /// in the manifest, and no case in the folder's `tests/*.toml`.
    ///
    /// ## Why is this bad?
    /// `toolsmith test` runs each tool's examples through the same path the server uses.
    /// A tool without any is only tested by the model, in front of a user. One example that
    /// calls the tool with typical arguments catches most breakage.
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(text_slugify, read_only = True)
    /// ```
    ///
    /// ## How to fix
    /// ```python
    /// mcp.tool(
    ///     text_slugify,
    ///     read_only = True,
    ///     examples = [{"args": {"text": "Hello, World!"}, "expect": {"text": "hello-world"}}],
    /// )
    /// ```
    /// In a manifest: `[[tests]]` with `args = {...}` and `expect = {...}`.
    pub(crate) static MISSING_EXAMPLES: MissingExamples = {
        id: "missing-examples",
        summary: "A tool has no examples or tests",
        severity: Info,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        if tool.definition.examples.is_empty() && !server.context.tested_tools.contains(tool.name())
        {
            report
                .add(tool.at_name(), Some(tool.name()), format!("tool `{}` has no examples or tests", tool.name()))
                .help("add `examples=[{\"args\": {...}, \"expect\": {...}}]` (Starlark) or a `[[tests]]` table (manifest)");
        }
    }
}
