use crate::checker::{Report, Server};
use crate::context::command_program;
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Reports command tools whose program (the first element of `command`) is not on
    /// `PATH` where `toolsmith check` runs, or, written as a path (`./run.sh`), is not an
    /// executable file in the tools folder.
    ///
    /// ## Why is this bad?
    /// The tool loads, is listed and looks fine, and every call of it fails with "program
    /// not found": the model sees a broken tool, and the author finds out only when a call
    /// is made. It may be fine where the server really runs (a program installed only in
    /// production), hence a warning.
    ///
    /// ## Example
    /// ```toml
    /// # page_fetch.toml
    /// description = "Fetch a web page as text."
    /// command = ["curll", "-s", "{url}"]
    /// ```
    ///
    /// ## How to fix
    /// Fix the spelling, install the program (or add its folder to `PATH`), or make the
    /// script executable (`chmod +x run.sh`). A tool that should be hidden while its program
    /// is missing says so with `requires = {"commands": ["curl"]}`
    /// ([`missing-requirement`](missing-requirement.md)).
    pub(crate) static PROGRAM_NOT_FOUND: ProgramNotFound = {
        id: "program-not-found",
        summary: "A command tool runs a program that is not on PATH (or not in the folder)",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let Some(source) = tool.source else {
            continue;
        };
        let Some((program, span)) = command_program(tool.definition, source) else {
            continue;
        };
        if server.context.programs.contains(&program) {
            continue;
        }
        let (message, help) = if program.contains('/') {
            (
                format!(
                    "program `{program}` of `{}` is not an executable file in the tools folder",
                    tool.name()
                ),
                "fix the path in `command` (relative to the tools folder), or `chmod +x` the file",
            )
        } else {
            (
                format!("program `{program}` of `{}` is not on `PATH`", tool.name()),
                "install it or fix the spelling in `command`; every call fails until then",
            )
        };
        report
            .add(tool.at_span(span), Some(tool.name()), message)
            .help(help);
    }
}
