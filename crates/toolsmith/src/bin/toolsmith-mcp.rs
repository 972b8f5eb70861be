//! `toolsmith-mcp`: the command named after the Python package, so that `uvx toolsmith-mcp
//! serve DIR` works (uvx runs the command that has the package's name). It runs the
//! `toolsmith` binary installed beside it with the same arguments and standard streams
//! (docs/install-toolsmith.md).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let toolsmith = match beside_this_program() {
        Ok(path) => path,
        Err(error) => return fail(&format!("cannot find the `toolsmith` binary: {error}")),
    };
    let mut command = Command::new(&toolsmith);
    command.args(std::env::args_os().skip(1));
    run(command, &toolsmith)
}

/// `toolsmith` in the folder of this program (the links to it resolved).
fn beside_this_program() -> std::io::Result<PathBuf> {
    let this = std::env::current_exe()?.canonicalize()?;
    Ok(this.with_file_name(format!("toolsmith{}", std::env::consts::EXE_SUFFIX)))
}

/// Replaces this process with `toolsmith`, so that signals and the exit status are its own.
#[cfg(unix)]
fn run(mut command: Command, toolsmith: &std::path::Path) -> ExitCode {
    use std::os::unix::process::CommandExt as _;
    let error = command.exec();
    fail(&format!("cannot run `{}`: {error}", toolsmith.display()))
}

/// Runs `toolsmith` and exits with its status.
#[cfg(not(unix))]
fn run(mut command: Command, toolsmith: &std::path::Path) -> ExitCode {
    match command.status() {
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(2)).unwrap_or(2)),
        Err(error) => fail(&format!("cannot run `{}`: {error}", toolsmith.display())),
    }
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(
        std::io::stderr().lock(),
        "error: {message}\n  hint: reinstall the package: `uv tool install --reinstall toolsmith-mcp` or `pipx reinstall toolsmith-mcp`"
    );
    ExitCode::from(2)
}
