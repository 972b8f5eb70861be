//! `toolsmith completions SHELL`: the shell completion script, generated from the same clap
//! types that parse the command line, so it never drifts from the flags
//! (docs/install-toolsmith.md, "Shell completions").

use clap::CommandFactory as _;

use crate::ExitStatus;
use crate::args::{Cli, CompletionsArgs};
use crate::printer::Printer;

pub(crate) fn run(args: &CompletionsArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let CompletionsArgs { shell } = args;
    let mut script = Vec::new();
    clap_complete::generate(*shell, &mut Cli::command(), "toolsmith", &mut script);
    printer.data(&String::from_utf8_lossy(&script))?;
    Ok(ExitStatus::Success)
}
