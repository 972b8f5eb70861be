//! Packages (docs/packages.md): other tools folders whose tools a folder serves, each named
//! in its `toolsmith.toml` as `[packages.NAME]` with a `path`, or a `git` URL pinned in
//! `toolsmith.lock`. A package's tools load from the package folder with their permissions
//! capped to the host's `allow`, are published under the package's prefix
//! (`weather_forecast_get`), answer to their qualified name (`acme/weather/forecast_get`)
//! and run in the package folder. A package that cannot be found or fetched is a
//! diagnostic at its table, and the folder's other tools still load.

mod allow;
mod git;
mod lock;
mod spec;
mod tool;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use toolsmith_model::{Diagnostic, PackageOrigin, Severity, SourceLocation, Tool, ToolDefinition};

use crate::config::FolderConfig;
use crate::loading::LoadedFile;

pub use git::{CACHE_DIR_ENV, GitError, cache_dir};
pub use lock::LOCK_FILE;
pub use spec::Source;

/// One package of a folder, as it loaded.
#[derive(Debug, Clone)]
pub struct Package {
    /// `NAME` of `[packages.NAME]`.
    pub key: String,
    /// `[package] publisher` of the package's `toolsmith.toml`, else `NAME`.
    pub publisher: String,
    /// `[package] name`, else `NAME`.
    pub name: String,
    /// `[package] version`.
    pub version: Option<String>,
    /// `[package] description`.
    pub description: Option<String>,
    /// Where it comes from.
    pub source: Source,
    /// The commit a git package is pinned to.
    pub commit: Option<String>,
    /// The package folder: the tools' own folder.
    pub folder: PathBuf,
    /// What its tools' names start with (`prefix`, else the package name); empty for none.
    pub prefix: String,
    /// Its tools as published (their `permissions` what they hold, `withheld` what they
    /// asked for beyond `allow`), sorted by name; a tool whose name another took is not
    /// among them.
    pub tools: Vec<ToolDefinition>,
    /// `allow = {"commands" = true}`: whether its tools may run programs, confined.
    pub commands: bool,
    /// The published names of its tools that run a program (a `command`, `worker` or
    /// `init` command) and were not loaded because `allow` does not name `commands`.
    pub refused: Vec<String>,
}

/// What the packages of a folder loaded, before they join the folder's own tools.
#[derive(Default)]
pub(crate) struct Loaded {
    /// Each tool with the index of its package.
    tools: Vec<(usize, Arc<dyn Tool>)>,
    diagnostics: Vec<Diagnostic>,
    files: Vec<LoadedFile>,
    packages: Vec<Package>,
}

/// Loads the packages `config` (the `toolsmith.toml` of `root`) names, reusing from
/// `previous` each file that has not changed, and pins new git packages in
/// `toolsmith.lock`.
pub(crate) fn load(root: &Path, config: &FolderConfig, previous: &[LoadedFile]) -> Loaded {
    let (specs, diagnostics) = spec::parse(root, config);
    let mut loaded = Loaded {
        diagnostics,
        ..Loaded::default()
    };
    if specs.is_empty() {
        return loaded;
    }
    let read = lock::Lock::read(root);
    let mut pins = read.clone().ok();
    for spec in &specs {
        let located = match (&spec.source, pins.as_mut()) {
            (Source::Path(path), _) => local(root, path, spec),
            (Source::Git { url, rev }, Some(pins)) => pinned(url, rev, spec, pins),
            (Source::Git { .. }, None) => Err(at(
                spec,
                format!(
                    "package `{}` is not loaded: {LOCK_FILE} cannot be read",
                    spec.key
                ),
            )
            .with_help(format!(
                "fix or delete {LOCK_FILE}; `toolsmith packages update` writes it again"
            ))),
        };
        match located {
            Ok((folder, commit)) => load_package(root, spec, folder, commit, previous, &mut loaded),
            Err(diagnostic) => loaded.diagnostics.push(diagnostic),
        }
    }
    if let (Ok(before), Some(mut pins)) = (read, pins) {
        pins.packages.retain(|key, _| {
            specs
                .iter()
                .any(|spec| spec.key == *key && matches!(spec.source, Source::Git { .. }))
        });
        if pins != before
            && let Err(error) = pins.write(root)
        {
            let mut warning = Diagnostic::error(
                "invalid-config",
                SourceLocation::file(root.join(LOCK_FILE)),
                format!("cannot write {LOCK_FILE}: {error}"),
            )
            .with_help("the git packages load, but are not pinned until it can be written");
            warning.severity = Severity::Warning;
            loaded.diagnostics.push(warning);
        }
    }
    loaded
}

impl Loaded {
    /// Adds the packages' tools to `tools` (the folder's own), their files to `files` and
    /// their diagnostics to `diagnostics`; a package tool whose published name is taken
    /// is left out with a `duplicate-tool-name` error naming both sources. Returns the
    /// packages.
    pub(crate) fn join(
        self,
        tools: &mut Vec<Arc<dyn Tool>>,
        files: &mut Vec<LoadedFile>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Vec<Package> {
        let Self {
            tools: package_tools,
            diagnostics: package_diagnostics,
            files: package_files,
            mut packages,
        } = self;
        diagnostics.extend(package_diagnostics);
        files.extend(package_files);
        if package_tools.is_empty() {
            // Nothing can collide: the folder's own names are not copied to be looked up
            // (a reload of thousands of tools did that).
            return packages;
        }
        let mut taken: HashMap<String, SourceLocation> = HashMap::new();
        for tool in tools.iter() {
            taken.entry(tool.name().to_owned()).or_insert_with(|| {
                // A deferred tool's file is not read again for where it is.
                tool.deferred()
                    .map_or_else(|| tool.definition().source.clone(), |d| d.source().clone())
            });
        }
        for (index, tool) in package_tools {
            let definition = tool.definition();
            let package = &mut packages[index];
            if let Some(first) = taken.get(&definition.name) {
                diagnostics.push(collision(package, definition, first));
                package.tools.retain(|tool| tool.name != definition.name);
                continue;
            }
            taken.insert(definition.name.clone(), definition.source.clone());
            tools.push(tool);
        }
        packages
    }
}

/// A package tool whose published name the tool at `first` has already.
fn collision(package: &Package, definition: &ToolDefinition, first: &SourceLocation) -> Diagnostic {
    Diagnostic::error(
        "duplicate-tool-name",
        definition.source.clone(),
        format!(
            "tool `{}` of package `{}` ({}) has the name of the tool at {first}; it is not served",
            definition.name, package.key, definition.source
        ),
    )
    .with_help(format!(
        "set `prefix` in `[packages.{}]` to publish the package's tools under other names, or rename one of the two",
        package.key
    ))
}

/// A diagnostic at the `[packages.NAME]` table of `spec`.
fn at(spec: &spec::Spec, message: String) -> Diagnostic {
    Diagnostic::error("invalid-package", spec.location.clone(), message)
}

/// The folder of a path package.
fn local(
    root: &Path,
    path: &Path,
    spec: &spec::Spec,
) -> Result<(PathBuf, Option<String>), Diagnostic> {
    let folder = root.join(path);
    if folder.is_dir() {
        return Ok((tidy(folder), None));
    }
    Err(at(
        spec,
        format!(
            "package `{}` is not loaded: `{}` is not a folder",
            spec.key,
            folder.display()
        ),
    )
    .with_help(format!(
        "`path` is relative to the tools folder `{}`",
        root.display()
    )))
}

/// `folder` with `.` and `..` taken away by name (`tools/../weather` → `weather`), for
/// messages, when that is the same folder (no link on the way says otherwise).
fn tidy(folder: PathBuf) -> PathBuf {
    let tidy = toolsmith_starlark::lexical(&folder);
    let same = |a: &Path, b: &Path| matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(a), Ok(b)) if a == b);
    if !tidy.as_os_str().is_empty() && same(&tidy, &folder) {
        tidy
    } else {
        folder
    }
}

/// The folder of a git package at its pin in `pins`, pinning it first when it has none
/// (or `git` or `rev` changed since).
fn pinned(
    url: &str,
    rev: &str,
    spec: &spec::Spec,
    pins: &mut lock::Lock,
) -> Result<(PathBuf, Option<String>), Diagnostic> {
    let checkout = match pins.packages.get(&spec.key) {
        Some(pin) if pin.git == url && pin.rev == rev => git::pinned(url, &pin.commit, &pin.hash),
        _ => git::resolve(url, rev),
    };
    match checkout {
        Ok(checkout) => {
            pins.packages.insert(
                spec.key.clone(),
                lock::Pin {
                    git: url.to_owned(),
                    rev: rev.to_owned(),
                    commit: checkout.commit.clone(),
                    hash: checkout.hash,
                },
            );
            Ok((checkout.folder, Some(checkout.commit)))
        }
        Err(error) => {
            let hints = toolsmith_model::Hint::hints(&error);
            let diagnostic = at(
                spec,
                format!("package `{}` is not loaded: {error}", spec.key),
            );
            Err(match hints.first() {
                Some(hint) => diagnostic.with_help(hint.clone()),
                None => diagnostic,
            })
        }
    }
}

/// `[package] KEY` of a package folder's `toolsmith.toml`.
fn info(config: &FolderConfig, key: &str) -> Option<String> {
    config
        .raw
        .get("package")
        .and_then(|package| package.get(key))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The publisher, name and prefix of a package, or why its prefix cannot be used.
fn identity(
    spec: &spec::Spec,
    config: &FolderConfig,
) -> Result<(String, String, String), Diagnostic> {
    let name = info(config, "name").unwrap_or_else(|| spec.key.clone());
    let publisher = info(config, "publisher").unwrap_or_else(|| spec.key.clone());
    let prefix = spec.prefix.clone().unwrap_or_else(|| name.clone());
    if prefix
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Ok((publisher, name, prefix));
    }
    Err(at(
        spec,
        format!(
            "package `{}` is not loaded: its prefix `{prefix}` would make tool names MCP clients refuse",
            spec.key
        ),
    )
    .with_help(format!(
        "set `prefix` in `[packages.{}]` to letters, digits, `_`, `-` or `.`",
        spec.key
    )))
}

/// Loads the tools of one package from `folder` into `loaded`.
fn load_package(
    root: &Path,
    spec: &spec::Spec,
    folder: PathBuf,
    commit: Option<String>,
    previous: &[LoadedFile],
    loaded: &mut Loaded,
) {
    let (config, problems) = FolderConfig::load(&folder);
    loaded.diagnostics.extend(problems);
    let (publisher, name, prefix) = match identity(spec, &config) {
        Ok(identity) => identity,
        Err(diagnostic) => {
            loaded.diagnostics.push(diagnostic);
            return;
        }
    };
    let found = match crate::discover::tool_files(&folder, &mut loaded.diagnostics) {
        Ok(found) => found,
        Err(error) => {
            loaded.diagnostics.push(at(
                spec,
                format!(
                    "package `{}` is not loaded: cannot read `{}`: {error}",
                    spec.key,
                    folder.display()
                ),
            ));
            return;
        }
    };
    let allow = allow::Allow::new(&spec.key, &folder, root, spec.allow.clone(), spec.commands);
    loaded.diagnostics.extend(unconfinable(spec));
    let settings = toolsmith_starlark::LoadSettings {
        base_dir: folder.clone(),
        load_timeout: config
            .load_timeout
            .unwrap_or(toolsmith_starlark::DEFAULT_LOAD_TIMEOUT),
        restrict: Some(allow.restriction()),
        source_facts: true,
    };
    let files = crate::loading::load_files(found, &settings, previous, None);
    let prefixed = |tool: &str| {
        if prefix.is_empty() {
            tool.to_owned()
        } else {
            format!("{prefix}_{tool}")
        }
    };
    let index = loaded.packages.len();
    let mut definitions = Vec::new();
    let mut refused = Vec::new();
    for file in &files {
        for diagnostic in &file.module.diagnostics {
            let mut diagnostic = diagnostic.clone();
            diagnostic.rename_tools(|tool| prefixed(tool));
            loaded.diagnostics.push(diagnostic);
        }
        for tool in &file.module.tools {
            let mut definition = tool.definition().clone();
            let own = std::mem::replace(&mut definition.name, prefixed(&tool.definition().name));
            definition.package = Some(Box::new(PackageOrigin {
                publisher: publisher.clone(),
                name: name.clone(),
                tool: own,
            }));
            if let Err(diagnostic) = crate::adjust(&folder, &config, &mut definition) {
                loaded
                    .diagnostics
                    .push(diagnostic.for_tool(&definition.name));
                continue;
            }
            if !allow.commands() && runs_programs(&definition) {
                loaded
                    .diagnostics
                    .push(commands_denied(&allow, &definition));
                refused.push(definition.name);
                continue;
            }
            definitions.push(definition.clone());
            let confinement = allow.confinement(&definition);
            let tool =
                tool::PackageTool::new(definition, Arc::clone(tool), folder.clone(), confinement);
            loaded.tools.push((index, Arc::new(tool)));
        }
    }
    definitions.sort_by(|a, b| a.name.cmp(&b.name));
    loaded.files.extend(files);
    loaded.packages.push(Package {
        key: spec.key.clone(),
        publisher,
        name,
        version: info(&config, "version"),
        description: info(&config, "description"),
        source: spec.source.clone(),
        commit,
        folder,
        prefix,
        tools: definitions,
        commands: spec.commands,
        refused,
    });
}

/// A warning when `spec` lets its tools run programs where they cannot be confined: they
/// are refused at each call.
fn unconfinable(spec: &spec::Spec) -> Option<Diagnostic> {
    if !spec.commands {
        return None;
    }
    let reason = toolsmith_command::confinement_support().err()?;
    let mut warning = at(
        spec,
        format!(
            "the command tools of package `{}` cannot run here: they run only confined, and {reason}",
            spec.key
        ),
    )
    .with_help("its other tools are served; run the server on Linux 5.13 or later for its command tools");
    warning.severity = Severity::Warning;
    Some(warning)
}

/// Whether a tool runs a program: a manifest's `command` (a `worker` too) or `init`
/// command. A manifest's keys are among its source facts, which a package's load keeps.
fn runs_programs(definition: &ToolDefinition) -> bool {
    matches!(definition.init, Some(toolsmith_model::Init::Command(_)))
        || definition
            .facts
            .as_ref()
            .is_some_and(|facts| facts.key(&["command"]).is_some())
}

/// A package's tool that runs a program, left out because `allow` does not name
/// `commands`.
fn commands_denied(allow: &allow::Allow, definition: &ToolDefinition) -> Diagnostic {
    Diagnostic::error(
        "package-permission-denied",
        definition.source.clone(),
        format!(
            "tool `{}` runs a program, which `{}` does not allow; it is not served",
            definition.name,
            allow.table()
        ),
    )
    .with_help(allow.commands_denied())
    .for_tool(&definition.name)
}

/// One pin `toolsmith packages update` moved (or made, or kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// `NAME` of `[packages.NAME]`.
    pub key: String,
    /// The commit it was pinned to, if any.
    pub from: Option<String>,
    /// The commit it is pinned to now.
    pub to: String,
}

/// Why `toolsmith packages update` could not update.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// The name given is no `[packages.NAME]`.
    #[error("the tools folder has no package `{name}`")]
    UnknownPackage {
        /// The name given.
        name: String,
        /// The folder's packages.
        known: Vec<String>,
    },
    /// The package named is a path package, which has no pin.
    #[error("package `{name}` is a `path` package; only `git` packages are pinned")]
    NotGit {
        /// The name given.
        name: String,
    },
    /// A package could not be fetched.
    #[error("cannot update package `{name}`")]
    Git {
        /// The package.
        name: String,
        /// Why.
        #[source]
        source: GitError,
    },
    /// The lock file could not be written.
    #[error("cannot write `{}`", .path.display())]
    Write {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl toolsmith_model::Hint for UpdateError {
    fn hints(&self) -> Vec<String> {
        match self {
            Self::UnknownPackage { name, known } => {
                let mut hints: Vec<String> =
                    toolsmith_model::names::suggestion(name, known.iter().map(String::as_str))
                        .into_iter()
                        .collect();
                if known.is_empty() {
                    hints.push("the folder's toolsmith.toml has no `[packages.NAME]`".into());
                } else {
                    hints.push(format!("the folder's packages: {}", known.join(", ")));
                }
                hints
            }
            Self::NotGit { .. } => {
                vec!["a path package is used as its folder is; there is nothing to update".into()]
            }
            Self::Git { source, .. } => toolsmith_model::Hint::hints(source),
            Self::Write { .. } => Vec::new(),
        }
    }
}

/// Pins every git package of `root` (or only `only`) to the commit its `rev` names now,
/// fetching each, and writes `toolsmith.lock`. A lock file that cannot be read is written
/// anew.
///
/// # Errors
///
/// An unknown or path package named, a package that cannot be fetched, a lock file that
/// cannot be written.
pub fn update(root: &Path, only: Option<&str>) -> Result<Vec<Update>, UpdateError> {
    let (config, _) = FolderConfig::load(root);
    let (specs, _) = spec::parse(root, &config);
    if let Some(name) = only {
        match specs.iter().find(|spec| spec.key == name) {
            None => {
                return Err(UpdateError::UnknownPackage {
                    name: name.to_owned(),
                    known: specs.iter().map(|spec| spec.key.clone()).collect(),
                });
            }
            Some(spec) if matches!(spec.source, Source::Path(_)) => {
                return Err(UpdateError::NotGit {
                    name: name.to_owned(),
                });
            }
            Some(_) => {}
        }
    }
    let mut pins = lock::Lock::read(root).unwrap_or_else(|_| lock::Lock {
        version: 1,
        ..lock::Lock::default()
    });
    let mut updates = Vec::new();
    for spec in &specs {
        let Source::Git { url, rev } = &spec.source else {
            continue;
        };
        if only.is_some_and(|name| name != spec.key) {
            continue;
        }
        let checkout = git::resolve(url, rev).map_err(|source| UpdateError::Git {
            name: spec.key.clone(),
            source,
        })?;
        let from = pins.packages.get(&spec.key).map(|pin| pin.commit.clone());
        updates.push(Update {
            key: spec.key.clone(),
            from,
            to: checkout.commit.clone(),
        });
        pins.packages.insert(
            spec.key.clone(),
            lock::Pin {
                git: url.clone(),
                rev: rev.clone(),
                commit: checkout.commit,
                hash: checkout.hash,
            },
        );
    }
    pins.packages.retain(|key, _| {
        specs
            .iter()
            .any(|spec| spec.key == *key && matches!(spec.source, Source::Git { .. }))
    });
    pins.write(root).map_err(|source| UpdateError::Write {
        path: root.join(LOCK_FILE),
        source,
    })?;
    Ok(updates)
}
