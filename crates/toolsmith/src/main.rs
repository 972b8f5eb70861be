//! The `toolsmith` command: a thin layer of argument parsing, output and exit codes over the
//! library crates. One file per subcommand in `commands/`.

mod args;
mod commands;
mod dev;
mod error;
mod folder;
mod install;
mod printer;
mod progress;
mod served;
mod skills;
mod watch;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command, LogFormat};
use crate::printer::Printer;

/// mimalloc rather than the system allocator. A `tools/call` served over stdio makes about
/// 50 allocations, several of them futures past glibc's ~1 KB fast path, and with glibc
/// `malloc`/`free` were about a quarter of the server's instructions per call
/// (`valgrind --tool=callgrind`, bench/serve.py's echo tool).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Gives the memory the allocator holds free back to the system. Loading a big folder and
/// indexing it allocate far more than they keep (files' text, parse trees, the index's
/// working tables), and mimalloc keeps freed pages for reuse: called once a folder is
/// served, this brings the server's resident memory down to what it holds: a 5,548-tool
/// server's median 46–53 MB instead of 57–73 MB (docs/performance.md, "What each build
/// setting measured").
pub(crate) fn release_free_memory() {
    #[expect(
        unsafe_code,
        reason = "mimalloc's own API, which Rust's allocator trait lacks"
    )]
    // SAFETY: `mi_collect` takes no pointers and may be called on any thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// mimalloc's `mi_option_abandoned_page_purge` (`mimalloc.h`, v2): a thread that ends gives
/// back at once the free pages it had left to give back later.
const MI_OPTION_ABANDONED_PAGE_PURGE: libmimalloc_sys::mi_option_t = 12;

/// Has threads that end give their free memory back as they end. A big folder loads on
/// threads that end when it is loaded, leaving mimalloc pages it means to give back later:
/// a 5,548-tool server then holds about 45 MB or 53–63 MB from one start to the next. With
/// this, 22 of 35 starts held about 45 MB (median 45.5 MB), without it 14 of 35 (median
/// 54.7 MB) (docs/performance.md, "What each build setting measured"). It costs nothing
/// while threads run.
fn tune_allocator() {
    #[expect(
        unsafe_code,
        reason = "mimalloc's own API, which Rust's allocator trait lacks"
    )]
    // SAFETY: `mi_option_set` takes no pointers and may be called at any time.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_ABANDONED_PAGE_PURGE, 1);
    }
}

/// How a command ended, as scripts see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitStatus {
    /// Everything worked.
    Success,
    /// The command worked and found problems (a failed load, an `isError` result).
    Findings,
    /// Toolsmith could not do what was asked.
    Failure,
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        match status {
            ExitStatus::Success => Self::SUCCESS,
            ExitStatus::Findings => Self::from(1),
            ExitStatus::Failure => Self::from(2),
        }
    }
}

fn main() -> ExitCode {
    tune_allocator();
    let cli = Cli::parse();
    let log_format = match &cli.command {
        Command::Serve(args) => args.log_format,
        Command::Dev(args) => args.serve.log_format,
        _ => LogFormat::Text,
    };
    init_logging(cli.verbose, cli.quiet, log_format);
    let printer = match log_format {
        LogFormat::Text => Printer::new(cli.quiet),
        LogFormat::Json => Printer::new(cli.quiet).as_logs(),
    };
    let result = match cli.command {
        Command::List(args) => commands::list::run(&args, printer),
        Command::Call(args) => commands::call::run(&args, printer),
        Command::Test(args) => commands::test::run(&args, printer),
        Command::New(args) => commands::new::run(&args, printer),
        Command::Check(args) => commands::check::run(&args, printer),
        Command::Serve(args) => commands::serve::run(&args, printer),
        Command::Dev(args) => commands::dev::run(args, printer),
        Command::Search(args) => commands::search::run(&args, printer),
        Command::Install(args) => commands::install::run(&args, printer),
        Command::Skills(args) => commands::skills::run(&args, printer),
        Command::Packages(args) => commands::packages::run(&args, printer),
        Command::Upstream(args) => commands::upstream::run(&args, printer),
        Command::Bundle(args) => commands::bundle::run(&args, printer),
        Command::Completions(args) => commands::completions::run(&args, printer),
        Command::Card(args) => commands::card::run(&args, printer),
        Command::Icon(args) => commands::icon::run(&args, printer),
    };
    match result {
        Ok(status) => status.into(),
        Err(error) if error::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            error::render(printer, &error);
            ExitStatus::Failure.into()
        }
    }
}

/// Logs go to stderr, never stdout: over stdio, stdout carries protocol messages only.
///
/// As text (the default) they are terse lines at `warn`; as JSON (`serve --log-format
/// json`, docs/http.md, "Logs") one object per line with its time, level and target, at
/// `info`, so that the event of every tool call (`toolsmith::call`) is in.
fn init_logging(verbose: u8, quiet: bool, format: LogFormat) {
    let default = match (quiet, verbose, format) {
        (true, _, _) => "error",
        (false, 0, LogFormat::Text) => "warn",
        (false, 0, LogFormat::Json) => "info",
        (false, 1, _) => "debug",
        (false, _, _) => "trace",
    };
    // rmcp logs every error response it sends at WARN; those are answers, not problems.
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLSMITH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("{default},rmcp=error")));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => logs
            .with_ansi(
                std::io::IsTerminal::is_terminal(&std::io::stderr())
                    && std::env::var_os("NO_COLOR").is_none(),
            )
            .with_target(false)
            .without_time()
            .init(),
        LogFormat::Json => logs
            .with_ansi(false)
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .init(),
    }
}
