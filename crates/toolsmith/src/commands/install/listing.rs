//! `toolsmith install --list`: every client, its file on this machine (the user's, and the
//! project's when the current folder has one), whether the file exists, and which of its
//! entries serve the tools folder.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{clients, user_path};
use crate::ExitStatus;
use crate::folder::DEFAULT_DIR;
use crate::install::clients::ClientSpec;
use crate::install::config_file::ConfigFile;
use crate::install::entry;
use crate::install::files::{self, Servers};
use crate::install::paths::Os;
use crate::printer::{Printer, Style};

/// One client's file, as `--list` reports it.
struct Row {
    spec: &'static ClientSpec,
    scope: &'static str,
    /// The file, or why there is none here.
    file: Result<PathBuf, String>,
    present: bool,
    /// The names of the entries that serve the folder.
    installed: Vec<String>,
    /// Why the file could not be read.
    problem: Option<String>,
}

pub(super) fn run(dir: Option<&Path>, json: bool, printer: Printer) -> anyhow::Result<ExitStatus> {
    let folder = match dir {
        Some(dir) => Some(std::fs::canonicalize(dir).map_err(|error| {
            crate::error::Hinted::new(format!("no tools folder at {}", dir.display()))
                .caused_by(error)
        })?),
        None => std::fs::canonicalize(DEFAULT_DIR).ok(),
    };
    let folder_text = folder.as_ref().map(|f| f.to_string_lossy().into_owned());
    let cwd = std::env::current_dir()?;
    let mut rows = Vec::new();
    for spec in clients() {
        rows.push(row(
            spec,
            "user",
            user_path(spec, Os::current()),
            folder_text.as_deref(),
        ));
        if let Some(project) = spec.project {
            let path = cwd.join(project);
            if path.is_file() {
                rows.push(row(spec, "project", Ok(path), folder_text.as_deref()));
            }
        }
    }
    if json {
        let clients: Vec<Value> = rows
            .iter()
            .map(|row| {
                json!({
                    "client": row.spec.id,
                    "name": row.spec.name,
                    "scope": row.scope,
                    "config": row.file.as_ref().ok(),
                    "present": row.present,
                    "installed": row.installed,
                    "problem": row.problem.as_ref().or(row.file.as_ref().err()),
                })
            })
            .collect();
        let report = json!({"folder": folder, "clients": clients});
        printer.data(&serde_json::to_string_pretty(&report)?)?;
        return Ok(ExitStatus::Success);
    }
    let mut lines = Vec::new();
    match &folder {
        Some(folder) => lines.push(format!("the tools folder: {}", folder.display())),
        None => lines.push(format!(
            "no tools folder (./{DEFAULT_DIR} does not exist): showing the files only"
        )),
    }
    let width = rows.iter().map(|row| row.spec.id.len()).max().unwrap_or(0);
    for row in &rows {
        let id = format!("{:width$}", row.spec.id);
        let line = match &row.file {
            Err(why) => format!("{id}  {}", printer.style(Style::Dim, why)),
            Ok(path) => {
                let state = match (&row.problem, row.present, row.installed.as_slice()) {
                    (Some(problem), _, _) => {
                        printer.style(Style::Red, &format!("unreadable: {problem}"))
                    }
                    (None, false, _) => printer.style(Style::Dim, "no file"),
                    (None, true, []) => "not installed".to_owned(),
                    (None, true, names) => {
                        printer.style(Style::Green, &format!("installed as {}", quoted(names)))
                    }
                };
                let scope = if row.scope == "project" {
                    " (project)"
                } else {
                    ""
                };
                format!("{id}  {}{scope}: {state}", path.display())
            }
        };
        lines.push(line);
    }
    printer.data(&lines.join("\n"))?;
    Ok(ExitStatus::Success)
}

fn row(
    spec: &'static ClientSpec,
    scope: &'static str,
    file: Result<PathBuf, String>,
    folder: Option<&str>,
) -> Row {
    let mut row = Row {
        spec,
        scope,
        present: false,
        installed: Vec::new(),
        problem: None,
        file,
    };
    let Ok(path) = &row.file else {
        return row;
    };
    // A FIFO or a folder at the path is a problem to show, never a read that hangs.
    let text = match ConfigFile::new(path).and_then(|file| file.read()) {
        Ok(Some(text)) => text,
        Ok(None) => return row,
        Err(error) => {
            row.present = true;
            row.problem = Some(error.to_string());
            return row;
        }
    };
    row.present = true;
    match spec.format.read(&text) {
        Ok(document) => {
            let servers = Servers {
                key: spec.key,
                layout: spec.layout,
            };
            row.installed = files::entries(&document, servers)
                .into_iter()
                .filter(|(_, entry)| folder.is_some_and(|dir| entry::serves(entry, dir)))
                .map(|(name, _)| name)
                .collect();
        }
        Err(problem) => row.problem = Some(problem),
    }
    row
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
