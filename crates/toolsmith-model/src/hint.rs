//! Errors that know how their user can fix them. The CLI prints an error as `error:`, a
//! `Caused by:` line per [`std::error::Error::source`], then a `hint:` line per hint; a
//! library error that knows its fix says it here rather than in its message, so the
//! message stays what went wrong.

/// An error that knows how to fix it.
pub trait Hint: std::error::Error {
    /// How to fix the error, one line each, most useful first; empty when the message and
    /// its causes are all there is to say.
    fn hints(&self) -> Vec<String>;
}
