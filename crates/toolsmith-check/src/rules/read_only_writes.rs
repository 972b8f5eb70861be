use crate::checker::{Report, Server};
use toolsmith_model::Call;

use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks tools marked `read_only = true` (the MCP annotation `readOnlyHint`) for calls
    /// that change something: `mcp.write_file`, `http.post`, and `http.request` with a
    /// method other than `GET` or `HEAD`. A Starlark tool's own `def` is read (not the
    /// helpers it calls), a manifest tool's whole script.
    ///
    /// ## Why is this bad?
    /// Clients trust the annotation: some run read-only tools without asking the user, and
    /// a model picks them when it only means to look. A tool that writes anyway does what
    /// nobody approved.
    ///
    /// ## Example
    /// ```python
    /// def notes_save(text: str) -> str:
    ///     mcp.write_file("notes/today.txt", text)
    ///     return "saved"
    ///
    /// mcp.tool(notes_save, read_only = True, permissions = {"fs.write": ["notes/"]})
    /// ```
    ///
    /// ## How to fix
    /// Drop `read_only = True` (and say `destructive = False` if the change is harmless),
    /// or move the write into a tool of its own.
    pub(crate) static READ_ONLY_WRITES: ReadOnlyWrites = {
        id: "read-only-writes",
        summary: "A tool marked read-only writes files or sends changes",
        severity: Warning,
        check: check,
    }
}

/// Calls that change something, whatever their arguments.
const WRITES: &[&str] = &["mcp.write_file", "http.post"];

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        if tool.definition.annotations.read_only != Some(true) {
            continue;
        }
        let Some(call) = tool
            .calls()
            .iter()
            .filter(|call| WRITES.contains(&call.name.as_str()) || is_changing_request(call))
            .min_by_key(|call| call.span.start)
        else {
            continue;
        };
        report
            .add(
                tool.at_call(call, "read_only"),
                Some(tool.name()),
                format!(
                    "`{}` is marked read-only but calls `{}`, which changes something",
                    tool.name(),
                    call.name
                ),
            )
            .help(
                "drop `read_only = True`, or move the change into a tool of its own; clients \
                 may run read-only tools without asking",
            );
    }
}

/// Whether `call` is an `http.request` with a method other than a literal `"GET"` or
/// `"HEAD"` (a method in a variable counts as a change: it may be one).
fn is_changing_request(call: &Call) -> bool {
    call.name == "http.request"
        && !call
            .first_literal
            .as_deref()
            .is_some_and(|method| matches!(method.to_ascii_uppercase().as_str(), "GET" | "HEAD"))
}
