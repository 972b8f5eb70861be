//! The printer owns the terminal: data goes to stdout, messages and progress to stderr,
//! colours only when the stream is a terminal and `NO_COLOR` is unset.

use std::io::{IsTerminal, Write};

use crate::progress::Progress;

/// Where and how output is written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Printer {
    colour_stdout: bool,
    colour_stderr: bool,
    quiet: bool,
    messages: Messages,
}

/// How messages, warnings, errors and hints reach stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Messages {
    /// Written as lines.
    Lines,
    /// As log events (`serve --log-format json`), so that every line on stderr has one
    /// format.
    Logs,
}

/// Text styles, rendered only where colour is on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Style {
    Bold,
    Dim,
    Red,
    Green,
    Yellow,
    Cyan,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Bold => "1",
            Self::Dim => "2",
            Self::Red => "1;31",
            Self::Green => "32",
            Self::Yellow => "1;33",
            Self::Cyan => "36",
        }
    }
}

impl Printer {
    pub(crate) fn new(quiet: bool) -> Self {
        let allowed = std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
        Self {
            colour_stdout: allowed && std::io::stdout().is_terminal(),
            colour_stderr: allowed && std::io::stderr().is_terminal(),
            quiet,
            messages: Messages::Lines,
        }
    }

    /// The same printer, writing what it writes to stderr as `tracing` events (target
    /// `toolsmith`) for the log subscriber to format.
    pub(crate) fn as_logs(self) -> Self {
        Self {
            colour_stderr: false,
            messages: Messages::Logs,
            ..self
        }
    }

    /// Styles text for stdout.
    pub(crate) fn style(self, style: Style, text: &str) -> String {
        paint(self.colour_stdout, style, text)
    }

    /// Whether stdout gets colours (a terminal, and `NO_COLOR` unset).
    pub(crate) fn colours_stdout(self) -> bool {
        self.colour_stdout
    }

    /// Styles text for stderr.
    pub(crate) fn style_err(self, style: Style, text: &str) -> String {
        paint(self.colour_stderr, style, text)
    }

    /// A progress bar on stderr, drawn only when stderr is a terminal and not `--quiet`.
    pub(crate) fn progress(self, label: &str, total: usize) -> Progress {
        if self.quiet || !std::io::stderr().is_terminal() {
            Progress::hidden()
        } else {
            Progress::new(label, total)
        }
    }

    /// Writes data to stdout (a line).
    #[expect(
        clippy::unused_self,
        reason = "all output goes through the printer, data included"
    )]
    pub(crate) fn data(self, text: &str) -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        if !text.ends_with('\n') {
            stdout.write_all(b"\n")?;
        }
        stdout.flush()
    }

    /// Writes a message to stderr, unless `--quiet`.
    pub(crate) fn message(self, text: &str) {
        if self.messages == Messages::Logs {
            tracing::info!(target: "toolsmith", "{text}");
        } else if !self.quiet {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    }

    /// Writes an error to stderr (always).
    pub(crate) fn error(self, text: &str) {
        if self.messages == Messages::Logs {
            tracing::error!(target: "toolsmith", "{text}");
            return;
        }
        let label = self.style_err(Style::Red, "error");
        let _ = writeln!(std::io::stderr().lock(), "{label}: {text}");
    }

    /// Writes a warning to stderr (always).
    pub(crate) fn warning(self, text: &str) {
        if self.messages == Messages::Logs {
            tracing::warn!(target: "toolsmith", "{text}");
            return;
        }
        let label = self.style_err(Style::Yellow, "warning");
        let _ = writeln!(std::io::stderr().lock(), "{label}: {text}");
    }

    /// Writes a `  hint: ...` line to stderr (always).
    pub(crate) fn hint(self, text: &str) {
        if self.messages == Messages::Logs {
            tracing::info!(target: "toolsmith", "hint: {text}");
            return;
        }
        let label = self.style_err(Style::Cyan, "hint");
        let _ = writeln!(std::io::stderr().lock(), "  {label}: {text}");
    }

    /// Writes a `  Caused by: ...` line to stderr (always).
    pub(crate) fn cause(self, text: &str) {
        if self.messages == Messages::Logs {
            tracing::error!(target: "toolsmith", "Caused by: {text}");
            return;
        }
        let label = self.style_err(Style::Bold, "Caused by");
        let _ = writeln!(std::io::stderr().lock(), "  {label}: {text}");
    }
}

fn paint(colour: bool, style: Style, text: &str) -> String {
    if colour {
        format!("\x1b[{}m{text}\x1b[0m", style.code())
    } else {
        text.to_owned()
    }
}

/// `"s"` after a count other than one: `format!("{n} tool{}", plural(n))`.
pub(crate) fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
