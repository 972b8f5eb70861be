use crate::checker::{Report, Server};
use crate::locate::first_call;
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
const WRITES: &[&str] = &["mcp.write_file(", "http.post("];

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        if tool.definition.annotations.read_only != Some(true) {
            continue;
        }
        let Some((code, offset)) = tool.running_code() else {
            continue;
        };
        let write = first_call(code, WRITES)
            .into_iter()
            .chain(changing_requests(code).map(|at| (at, "http.request")))
            .min();
        let Some((at, call)) = write else {
            continue;
        };
        report
            .add(
                tool.at_call(offset, at, call, "read_only"),
                Some(tool.name()),
                format!(
                    "`{}` is marked read-only but calls `{call}`, which changes something",
                    tool.name()
                ),
            )
            .help(
                "drop `read_only = True`, or move the change into a tool of its own; clients \
                 may run read-only tools without asking",
            );
    }
}

/// Where `code` calls `http.request` with a method other than a literal `"GET"` or
/// `"HEAD"` (a method in a variable counts as a change: it may be one).
fn changing_requests(code: &str) -> impl Iterator<Item = usize> + '_ {
    code.match_indices("http.request(")
        .filter_map(|(at, call)| {
            let method = code[at + call.len()..]
                .trim_start()
                .trim_start_matches(['"', '\''])
                .get(..4)
                .unwrap_or_default()
                .to_ascii_uppercase();
            (!method.starts_with("GET") && method != "HEAD").then_some(at)
        })
}
