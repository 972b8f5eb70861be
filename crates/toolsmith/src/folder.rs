//! Finding and loading the tools folder a command works on, with the errors and hints a
//! newcomer needs.

use std::path::{Path, PathBuf};

use toolsmith_folder::{FolderError, ToolFolder};
use toolsmith_model::{Catalog, Diagnostic, SearchMode, SearchSettings, Severity, Transport};

use crate::error::Hinted;
use crate::printer::{Printer, Style};

/// The folder used when none is given.
pub(crate) const DEFAULT_DIR: &str = "tools";

/// Loads `dir` (default `./tools`).
pub(crate) fn load(dir: Option<&Path>) -> anyhow::Result<ToolFolder> {
    load_for(dir, None)
}

/// Loads `dir` (default `./tools`) for serving over `transport`, its tools' per-transport
/// `overrides` applied.
pub(crate) fn load_for(
    dir: Option<&Path>,
    transport: Option<Transport>,
) -> anyhow::Result<ToolFolder> {
    load_profile(dir, transport, None)
}

/// Loads `dir` (default `./tools`) for `transport` as `profile` serves it (docs/profiles.md);
/// an unknown profile fails with the folder's profiles as hints.
pub(crate) fn load_profile(
    dir: Option<&Path>,
    transport: Option<Transport>,
    profile: Option<&str>,
) -> anyhow::Result<ToolFolder> {
    load_with(dir, |path| {
        ToolFolder::load_profile(path, transport, profile)
    })
}

/// [`load_profile`] without the source facts only `toolsmith check` reads
/// ([`ToolFolder::load_served`]): for `serve`, `list` and `search`.
pub(crate) fn load_served(
    dir: Option<&Path>,
    transport: Option<Transport>,
    profile: Option<&str>,
) -> anyhow::Result<ToolFolder> {
    load_with(dir, |path| {
        ToolFolder::load_served(path, transport, profile)
    })
}

/// `load` of `dir` (default `./tools`); a folder that cannot be loaded says what to do.
fn load_with(
    dir: Option<&Path>,
    load: impl FnOnce(&Path) -> Result<ToolFolder, FolderError>,
) -> anyhow::Result<ToolFolder> {
    load(&path_of(dir)).map_err(|error| hinted(dir, error))
}

/// The folder a command works on: `dir`, else `./tools`.
pub(crate) fn path_of(dir: Option<&Path>) -> PathBuf {
    dir.map_or_else(|| PathBuf::from(DEFAULT_DIR), Path::to_path_buf)
}

/// The folder `toolsmith serve` serves: [`load_served`], its tools deferred when `defer`
/// says they may be ([`ToolFolder::load_to_serve`]), except that `toolsmith dev` (its
/// profile) lints the folder and so keeps the source facts ([`load_profile`]).
pub(crate) fn load_to_serve(
    dir: Option<&Path>,
    transport: Option<Transport>,
    profile: Option<&str>,
    defer: bool,
) -> anyhow::Result<ToolFolder> {
    if profile == Some(crate::dev::PROFILE) {
        load_profile(dir, transport, profile)
    } else if defer {
        load_with(dir, |path| {
            ToolFolder::load_to_serve(path, transport, profile)
        })
    } else {
        load_served(dir, transport, profile)
    }
}

/// A folder that cannot be loaded, with what to do about it.
pub(crate) fn hinted(dir: Option<&Path>, error: FolderError) -> anyhow::Error {
    let hinted = match &error {
        FolderError::NotFound { .. } if dir.is_none() => Hinted::new(format!(
            "no tools folder: `./{DEFAULT_DIR}` does not exist"
        ))
        .hint("pass a folder, e.g. `toolsmith list examples/tools` to see the bundled examples")
        .hint(format!(
            "or start one: `toolsmith new folder {DEFAULT_DIR}`"
        )),
        _ => Hinted::wrap(error),
    };
    anyhow::Error::new(hinted)
}

/// Prints load diagnostics to stderr: `path:line:col: severity: message [rule]` + help.
pub(crate) fn report(printer: Printer, diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        let label = match diagnostic.severity {
            Severity::Error => printer.style_err(Style::Red, "error"),
            Severity::Warning => printer.style_err(Style::Yellow, "warning"),
            Severity::Info => printer.style_err(Style::Cyan, "info"),
        };
        let location = printer.style_err(Style::Bold, &diagnostic.location.to_string());
        let rule = printer.style_err(Style::Dim, &format!("[{}]", diagnostic.rule));
        printer.message(&format!(
            "{location}: {label}: {} {rule}",
            diagnostic.message
        ));
        if let Some(help) = &diagnostic.help {
            printer.message(&format!(
                "  {}: {help}",
                printer.style_err(Style::Cyan, "help")
            ));
        }
    }
}

/// Says on stderr why `[search] mode = "auto"` puts every tool of `catalog` behind
/// `tool_search`, when it does: at the default log level nothing else would, and
/// a server with no tools listed would look broken.
pub(crate) fn explain_search(printer: Printer, catalog: &Catalog, settings: SearchSettings) {
    if settings.mode != SearchMode::Auto {
        return;
    }
    if let Some(why) = toolsmith_search::Plan::new(catalog, settings).explain() {
        printer.message(&format!("search: {why}"));
    }
}
