//! `serve --audit-log FILE` and `--audit-arguments` (docs/http.md, "Audit log").

use clap::Args;

/// The audit log: who called which tool, prompt or resource, and how it ended.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Audit log")]
pub(crate) struct AuditArgs {
    /// Append one JSON line per tool call, prompt get and resource read to FILE (`-`: stderr).
    ///
    /// Each line has the time, the caller (`oauth` with the token's subject and client id,
    /// `token` for --auth-token, else `anonymous`), the session, the replica, the tool (or
    /// prompt, or resource URI), the outcome (as in `/metrics`), the duration, the SHA-256
    /// of the arguments as canonical JSON and the result's size; each call code mode's
    /// `run_code` makes of a tool gets a line too (docs/http.md, "Audit log"). Argument
    /// values are left out unless --audit-arguments. The file is opened for appending,
    /// each line written whole with one write, and opened again on SIGHUP (logrotate). A
    /// line that cannot be written is a warning, never a failed call. Also `[audit] file`
    /// in toolsmith.toml (relative to the folder).
    #[arg(long, value_name = "FILE")]
    pub(crate) audit_log: Option<String>,

    /// Write each call's argument values in the audit log too (they may hold secrets).
    ///
    /// Also `[audit] arguments = true`.
    #[arg(long)]
    pub(crate) audit_arguments: bool,
}
