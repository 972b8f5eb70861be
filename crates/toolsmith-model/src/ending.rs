//! How a call ended, as a closed set: decided where the call's outcome is made (the catalog's
//! call path, the server's call policy), so that metrics and logs never have to read it back
//! from the result's text. `toolsmith serve` counts calls by it (docs/http.md, "Metrics").

/// How one `tools/call` ended.
///
/// Most endings are `isError` results ([`CallOutcome`](crate::CallOutcome)); the last three
/// are the protocol answers a call can get instead of a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutcomeKind {
    /// The tool returned a result that is not `isError` (and matched its output schema).
    Ok,
    /// The tool returned an `isError` result, or failed: a script error, a program that
    /// exited non-zero, an init that failed.
    IsError,
    /// The arguments did not match the tool's input schema; the tool did not run.
    InvalidArguments,
    /// The tool's result did not match its output schema.
    InvalidOutput,
    /// The call ran past its timeout: the tool stopped at its deadline, or the watchdog
    /// gave up on it.
    Timeout,
    /// The client cancelled the call, or went away before its answer.
    Cancelled,
    /// No call slot came free in time (the tool's `max_concurrency`, its share of the
    /// server's slots, or the server's); the tool did not run.
    Busy,
    /// The tool's thread panicked, or no thread could be started for it.
    Crashed,
    /// The tool asked the client for input (MCP 2026-07-28's input-required result); the
    /// client calls again with the answers.
    InputRequired,
    /// The request itself was refused: a `requestState` that failed its check, or a tool
    /// that needed a capability the client did not declare (JSON-RPC errors).
    InvalidRequest,
    /// No tool of that name (JSON-RPC `-32602`).
    UnknownTool,
}

impl OutcomeKind {
    /// Every kind, in declaration order.
    pub const ALL: [Self; 11] = [
        Self::Ok,
        Self::IsError,
        Self::InvalidArguments,
        Self::InvalidOutput,
        Self::Timeout,
        Self::Cancelled,
        Self::Busy,
        Self::Crashed,
        Self::InputRequired,
        Self::InvalidRequest,
        Self::UnknownTool,
    ];

    /// The kind's name in metrics and logs: `ok`, `is_error`, `invalid_arguments`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::IsError => "is_error",
            Self::InvalidArguments => "invalid_arguments",
            Self::InvalidOutput => "invalid_output",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::Busy => "busy",
            Self::Crashed => "crashed",
            Self::InputRequired => "input_required",
            Self::InvalidRequest => "invalid_request",
            Self::UnknownTool => "unknown_tool",
        }
    }

    /// The kind's position in [`OutcomeKind::ALL`], to index per-kind counters.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_sits_at_its_index_with_a_distinct_name() {
        let mut names = std::collections::HashSet::new();
        for (index, kind) in OutcomeKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), index, "{kind}");
            assert!(names.insert(kind.as_str()), "{kind} named twice");
        }
    }
}
