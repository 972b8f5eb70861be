//! Errors at the CLI edge: anything can fail with `anyhow`, and errors that know the fix
//! carry hints. One renderer prints `error:`, a `Caused by:` line per source, then `hint:`
//! lines.

use std::fmt;

use crate::printer::Printer;

/// An error that says how to fix it.
#[derive(Debug)]
pub(crate) struct Hinted {
    message: String,
    hints: Vec<String>,
}

impl Hinted {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hints: Vec::new(),
        }
    }

    #[must_use]
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
}

impl fmt::Display for Hinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Hinted {}

/// Prints an error with its causes and hints.
pub(crate) fn render(printer: Printer, error: &anyhow::Error) {
    printer.error(&error.to_string());
    for cause in error.chain().skip(1) {
        printer.cause(&cause.to_string());
    }
    for cause in error.chain() {
        if let Some(hinted) = cause.downcast_ref::<Hinted>() {
            for hint in &hinted.hints {
                printer.hint(hint);
            }
        }
    }
}

/// Whether the error is a closed stdout (`toolsmith list | head`), which exits quietly.
pub(crate) fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
