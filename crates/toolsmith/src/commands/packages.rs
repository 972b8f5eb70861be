//! `toolsmith packages`: the packages of a folder (docs/packages.md). `list` shows each
//! one with its pin, its tools and the permissions they asked for and got; `update` moves
//! the pins of git packages in `toolsmith.lock`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolsmith_folder::packages::{self, Package, Source};
use toolsmith_model::{PermissionFamily, Permissions, Severity, ToolDefinition};

use crate::ExitStatus;
use crate::args::{PackagesArgs, PackagesCommand, PackagesListArgs, PackagesUpdateArgs};
use crate::error::Hinted;
use crate::folder::{self, DEFAULT_DIR};
use crate::printer::{Printer, Style};

pub(crate) fn run(args: &PackagesArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let PackagesArgs { action } = args;
    match action {
        PackagesCommand::List(args) => list(args, printer),
        PackagesCommand::Update(args) => update(args, printer),
    }
}

fn list(args: &PackagesListArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let PackagesListArgs {
        folder: folder_arg,
        json,
    } = args;
    let loaded = folder::load(folder_arg.dir.as_deref())?;
    let diagnostics = loaded.catalog().diagnostics();
    if *json {
        let document = json!({
            "packages": loaded.packages().iter().map(package_json).collect::<Vec<_>>(),
            "errors": diagnostics.iter().map(toolsmith_model::Diagnostic::to_json).collect::<Vec<_>>(),
        });
        printer.data(&serde_json::to_string_pretty(&document)?)?;
    } else {
        for package in loaded.packages() {
            printer.data(&human(printer, package))?;
        }
        folder::report(printer, diagnostics);
        let tools: usize = loaded.packages().iter().map(|p| p.tools.len()).sum();
        let withheld = loaded
            .packages()
            .iter()
            .flat_map(|package| &package.tools)
            .filter(|tool| tool.withheld.is_some())
            .count();
        let count = loaded.packages().len();
        let mut summary = format!(
            "{count} package{}, {tools} tool{} in {}",
            plural(count),
            plural(tools),
            loaded.root().display()
        );
        if withheld > 0 {
            let _ = write!(
                summary,
                "; {withheld} {} less than {} asked for (`toolsmith check` says what to allow)",
                if withheld == 1 {
                    "tool holds"
                } else {
                    "tools hold"
                },
                if withheld == 1 { "it" } else { "they" }
            );
        }
        printer.message(&summary);
    }
    let failed = diagnostics.iter().any(|d| d.severity == Severity::Error);
    Ok(if failed {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    })
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// One package as `packages list` prints it.
fn human(printer: Printer, package: &Package) -> String {
    let mut text = printer.style(Style::Bold, &package.key);
    let _ = write!(text, " ({}/{}", package.publisher, package.name);
    if let Some(version) = &package.version {
        let _ = write!(text, " {version}");
    }
    text.push(')');
    if let Some(description) = &package.description {
        let _ = write!(text, ": {description}");
    }
    match &package.source {
        Source::Path(path) => {
            let _ = write!(text, "\n  path {}", path.display());
        }
        Source::Git { url, rev } => {
            let _ = write!(text, "\n  git {url} at {rev}");
            if let Some(commit) = &package.commit {
                let _ = write!(text, ", pinned to {commit}");
            }
        }
    }
    if package.commands {
        text.push_str("\n  commands: allowed, confined to the package folder and its grants");
    } else if !package.refused.is_empty() {
        let refused = format!(
            "commands: not allowed; not served: {} (add `\"commands\" = true` to `[packages.{}] allow`)",
            package.refused.join(", "),
            package.key
        );
        let _ = write!(text, "\n  {}", printer.style(Style::Yellow, &refused));
    }
    if package.tools.is_empty() {
        text.push_str("\n  no tools");
    }
    for tool in &package.tools {
        let qualified = tool.qualified_name().unwrap_or_default();
        let _ = write!(text, "\n  {} = {qualified}", tool.name);
        let withheld = tool.withheld.as_ref().map(|withheld| &withheld.permissions);
        for family in PermissionFamily::ALL {
            let granted = tool.permissions.family(family);
            let denied = withheld.map_or(&[][..], |withheld| withheld.family(family));
            if granted.is_empty() && denied.is_empty() {
                continue;
            }
            let mut line = format!("\n    {family}: {}", granted.join(", "));
            if !denied.is_empty() {
                if !granted.is_empty() {
                    line.push_str("; ");
                }
                line.push_str(
                    &printer.style(Style::Yellow, &format!("withheld: {}", denied.join(", "))),
                );
            }
            text.push_str(&line);
        }
    }
    text
}

fn package_json(package: &Package) -> Value {
    let source = match &package.source {
        Source::Path(path) => json!({"path": path}),
        Source::Git { url, rev } => json!({"git": url, "rev": rev, "commit": package.commit}),
    };
    json!({
        "name": package.key,
        "publisher": package.publisher,
        "package": package.name,
        "version": package.version,
        "description": package.description,
        "source": source,
        "folder": package.folder,
        "prefix": package.prefix,
        "tools": package.tools.iter().map(tool_json).collect::<Vec<_>>(),
        "commands": package.commands,
        "refused": package.refused,
    })
}

fn tool_json(tool: &ToolDefinition) -> Value {
    let withheld = tool
        .withheld
        .as_ref()
        .map(|withheld| withheld.permissions.clone())
        .unwrap_or_default();
    let mut asked = tool.permissions.clone();
    for family in PermissionFamily::ALL {
        asked
            .family_mut(family)
            .extend(withheld.family(family).iter().cloned());
    }
    json!({
        "name": tool.name,
        "qualified_name": tool.qualified_name(),
        "asked": permissions_json(&asked),
        "granted": permissions_json(&tool.permissions),
        "withheld": permissions_json(&withheld),
    })
}

/// The families that grant something, as `{"net": [...], ...}`.
fn permissions_json(permissions: &Permissions) -> Value {
    let families = PermissionFamily::ALL
        .iter()
        .filter(|family| !permissions.family(**family).is_empty())
        .map(|family| (family.name().to_owned(), json!(permissions.family(*family))));
    Value::Object(families.collect())
}

fn update(args: &PackagesUpdateArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let PackagesUpdateArgs { words } = args;
    let (dir, only) = match words.as_slice() {
        [] => (None, None),
        [word] if Path::new(word).is_dir() => (Some(PathBuf::from(word)), None),
        [word] => (None, Some(word.as_str())),
        [dir, name, ..] => (Some(PathBuf::from(dir)), Some(name.as_str())),
    };
    let root = dir.unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
    if !root.is_dir() {
        let missing = toolsmith_folder::FolderError::NotFound { path: root };
        return Err(Hinted::wrap(missing).into());
    }
    let updates = packages::update(&root, only).map_err(|error| {
        let hinted = Hinted::wrap(error);
        if words.len() == 1 && only.is_some() {
            return hinted.hint(format!(
                "a single word is a folder when one exists by that name, else a package of ./{DEFAULT_DIR}"
            ));
        }
        hinted
    })?;
    if updates.is_empty() {
        printer.message(&format!(
            "no git packages in {}; path packages are used as they are",
            root.display()
        ));
    }
    for update in &updates {
        let line = match &update.from {
            Some(from) if *from == update.to => {
                format!("{}: {} (unchanged)", update.key, update.to)
            }
            Some(from) => format!("{}: {} -> {}", update.key, from, update.to),
            None => format!("{}: pinned to {}", update.key, update.to),
        };
        printer.data(&line)?;
    }
    Ok(ExitStatus::Success)
}
