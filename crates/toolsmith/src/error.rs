//! Errors at the CLI edge: anything can fail with `anyhow`, and errors that know the fix
//! carry hints. One renderer prints `error:`, a `Caused by:` line per source, then `hint:`
//! lines (the shape is in the README's "Commands").

use std::error::Error;
use std::fmt;

use toolsmith_model::Hint;

use crate::printer::Printer;

/// An error that says how to fix it: a message of the CLI's own, or a library error as it
/// is (its message, and its sources as causes) with the hints it knows; either way plus
/// any the CLI adds.
#[derive(Debug)]
pub(crate) struct Hinted {
    error: Box<dyn Error + Send + Sync>,
    /// What caused an error of the CLI's own.
    cause: Option<Box<dyn Error + Send + Sync>>,
    hints: Vec<String>,
}

impl Hinted {
    /// An error of the CLI's own.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            error: message.into().into(),
            cause: None,
            hints: Vec::new(),
        }
    }

    /// A library error with the hints it knows.
    pub(crate) fn wrap(error: impl Hint + Send + Sync + 'static) -> Self {
        let hints = error.hints();
        Self {
            error: Box::new(error),
            cause: None,
            hints,
        }
    }

    /// The error that caused this one, printed as a `Caused by:` line of its own rather
    /// than flattened into the message.
    #[must_use]
    pub(crate) fn caused_by(mut self, cause: impl Error + Send + Sync + 'static) -> Self {
        self.cause = Some(Box::new(cause));
        self
    }

    #[must_use]
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
}

impl fmt::Display for Hinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

/// The cause given, else the wrapped error's sources: the renderer prints each as a cause.
impl Error for Hinted {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.cause {
            Some(cause) => Some(cause.as_ref()),
            None => self.error.source(),
        }
    }
}

/// Prints an error with its causes and hints:
///
/// ```text
/// error: cannot listen on `127.0.0.1:8080`
///   Caused by: Address already in use (os error 98)
///   hint: another program is using port 8080; pick another with --http PORT
/// ```
pub(crate) fn render(printer: Printer, error: &anyhow::Error) {
    printer.error(&error.to_string());
    for cause in error.chain().skip(1) {
        printer.cause(&cause.to_string());
    }
    for hint in hints(error) {
        printer.hint(hint);
    }
}

/// An error as plain lines, as [`render`] shows it (without `error:`): the message of an
/// `isError` result that a `toolsmith-dev` tool answers with.
pub(crate) fn text(error: &anyhow::Error) -> String {
    let mut lines = vec![error.to_string()];
    lines.extend(
        error
            .chain()
            .skip(1)
            .map(|cause| format!("Caused by: {cause}")),
    );
    lines.extend(hints(error).map(|hint| format!("hint: {hint}")));
    lines.join("\n")
}

/// The hints of every error in `error`'s chain, outermost first.
fn hints(error: &anyhow::Error) -> impl Iterator<Item = &String> {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<Hinted>())
        .flat_map(|hinted| &hinted.hints)
}

/// Whether the error is a closed stdout (`toolsmith list | head`), which exits quietly.
pub(crate) fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
