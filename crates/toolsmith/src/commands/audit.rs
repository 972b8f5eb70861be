//! The audit log `serve` writes: `--audit-log`, `--audit-arguments` and `[audit]` of
//! `toolsmith.toml` (docs/http.md, "Audit log"), the flags winning.

use std::path::Path;

use serde_json::Value;
use toolsmith_folder::FolderConfig;
use toolsmith_server::{AuditDestination, AuditLog, AuditSettings};

use crate::args::AuditArgs;
use crate::error::Hinted;
use crate::printer::Printer;

/// The keys `[audit]` has.
const KEYS: [&str; 2] = ["file", "arguments"];

/// The audit log the flags and `[audit]` of `config` ask for, opened; `None` when neither
/// names a file. A relative `[audit] file` is in the folder (`root`), a flag's in the
/// working directory.
pub(crate) fn open(
    args: &AuditArgs,
    config: &FolderConfig,
    root: &Path,
    printer: Printer,
) -> anyhow::Result<Option<AuditLog>> {
    let table = config.raw.get("audit").and_then(Value::as_object);
    let mut file = None;
    let mut arguments = false;
    if let Some(table) = table {
        for (key, value) in table {
            match (key.as_str(), value) {
                ("file", Value::String(path)) => {
                    file = Some(if path == "-" {
                        AuditDestination::Stderr
                    } else {
                        AuditDestination::File(root.join(path))
                    });
                }
                ("arguments", Value::Bool(wanted)) => arguments = *wanted,
                (key, _) if KEYS.contains(&key) => {
                    return Err(Hinted::new(format!("`[audit] {key}` has the wrong type"))
                        .hint("write file = \"audit.jsonl\" and arguments = false")
                        .into());
                }
                (key, _) => printer.warning(&format!(
                    "unknown key `{key}` in `[audit]` (known keys: {})",
                    KEYS.join(", ")
                )),
            }
        }
    }
    if let Some(path) = &args.audit_log {
        file = Some(if path == "-" {
            AuditDestination::Stderr
        } else {
            AuditDestination::File(path.into())
        });
    }
    let Some(destination) = file else {
        if args.audit_arguments {
            printer.warning(
                "--audit-arguments without --audit-log or `[audit] file`: there is no audit log",
            );
        }
        return Ok(None);
    };
    let settings = AuditSettings {
        destination,
        arguments: arguments || args.audit_arguments,
    };
    let log = AuditLog::open(&settings).map_err(|error| {
        let place = match &settings.destination {
            AuditDestination::File(path) => path.display().to_string(),
            AuditDestination::Stderr => "stderr".to_owned(),
        };
        Hinted::new(format!("cannot open the audit log {place}: {error}"))
            .hint("check that its folder exists and is writable, or pass another --audit-log FILE")
    })?;
    Ok(Some(log))
}
