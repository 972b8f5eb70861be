//! A tools folder (docs/tools.md) loaded into a [`Catalog`]: Starlark files, manifests with a
//! script or a command, and `toolsmith.toml`; plus its MCP prompts (`prompts/*.md`) and
//! resources (`resources/**`).
//!
//! - [`ToolFolder`]: a loaded folder — its configuration, its catalog and what failed.
//! - [`ToolFolder::prompts`] and [`ToolFolder::resources`]: the folder's prompts and
//!   resources (file formats in the `prompts` and `resources` module docs).
//! - [`ToolFolder::caller`]: the call path `toolsmith call` and `toolsmith test` use, with
//!   a watchdog that returns a timeout result even when a tool cannot be interrupted.
//! - [`Published::reloaded`]: what a server publishes after a reload (`serve --watch`),
//!   a broken file keeping what it published before; [`Snapshot`] tells when to reload.
//! - [`Walk`]: the one walk over a folder's files, for the loader, `toolsmith check` and
//!   the watcher.
//!
//! Every file loads in isolation: a broken file becomes a [`Diagnostic`] with its path, line
//! and column, and every other tool still loads.
//!
//! ```no_run
//! use std::path::Path;
//! use toolsmith_folder::ToolFolder;
//!
//! let folder = ToolFolder::load(Path::new("examples/tools")).expect("the folder exists");
//! for tool in folder.catalog().definitions() {
//!     println!("{}: {}", tool.name, tool.description);
//! }
//! for problem in folder.catalog().diagnostics() {
//!     eprintln!("{problem}");
//! }
//! ```

mod config;
mod defer;
mod discover;
mod front_matter;
#[doc(hidden)]
pub mod fuzzing;
mod icons;
mod inits;
mod keys;
mod loading;
mod manifest;
mod mime;
mod openapi;
pub mod packages;
mod profiles;
pub mod prompts;
pub mod read;
mod reload;
pub mod resources;
mod run;
mod serving;
mod settings;
pub mod skills;
mod telemetry;
mod upstreams;
mod walk;
mod wraps;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolsmith_model::{
    Catalog, Diagnostic, JsonObject, Prompts, Resources, Severity, SourceLocation, ToolDefinition,
    Transport,
};

pub use config::{CONFIG_FILE, FolderConfig};
pub use keys::{key_location, toml_keys};
pub use manifest::{parse_toml, toml_to_json};
pub use profiles::{DEV_PROFILE, PROFILE_PROBLEM, Profile};
pub use reload::{Published, Snapshot};
pub use run::{Caller, OPTIONS_ENV};
pub use serving::StateConfig;
pub use upstreams::token_passthrough;
pub use walk::Walk;

/// A folder that cannot be loaded at all.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// The path does not exist.
    #[error("tools folder `{}` does not exist", .path.display())]
    NotFound {
        /// The path given.
        path: PathBuf,
    },
    /// The path is a file, not a folder.
    #[error("`{}` is not a folder", .path.display())]
    NotAFolder {
        /// The path given.
        path: PathBuf,
    },
    /// `--profile NAME` names no `[profiles.NAME]` of the folder's `toolsmith.toml`.
    #[error("the tools folder has no profile `{name}`")]
    UnknownProfile {
        /// The name given.
        name: String,
        /// The profiles the folder has (the built-in one included), sorted.
        known: Vec<String>,
    },
    /// The folder cannot be read.
    #[error("cannot read tools folder `{}`", .path.display())]
    Unreadable {
        /// The path given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl toolsmith_model::Hint for FolderError {
    fn hints(&self) -> Vec<String> {
        match self {
            Self::NotFound { path } => vec![format!(
                "check the path; `{}` is relative to {}",
                path.display(),
                current_dir()
            )],
            Self::NotAFolder { .. } => {
                vec!["pass the folder that holds the tool files, not a file".to_owned()]
            }
            Self::UnknownProfile { name, known } => {
                let mut hints: Vec<String> =
                    toolsmith_model::names::suggestion(name, known.iter().map(String::as_str))
                        .into_iter()
                        .collect();
                hints.push(format!("the folder's profiles: {}", known.join(", ")));
                hints.push(format!(
                    "a profile is a `[profiles.{name}]` table in {CONFIG_FILE}; see docs/profiles.md"
                ));
                hints
            }
            Self::Unreadable { .. } => Vec::new(),
        }
    }
}

/// The current directory, for messages about relative paths.
fn current_dir() -> String {
    std::env::current_dir().map_or_else(
        |_| "the current directory".into(),
        |dir| format!("`{}`", dir.display()),
    )
}

/// What a reload reuses of the folder it replaces.
#[derive(Default, Clone, Copy)]
struct Previous<'a> {
    /// What each tool file loaded: a file that did not change is not evaluated again.
    files: &'a [loading::LoadedFile],
    /// The upstream servers, kept running.
    upstreams: &'a [Arc<toolsmith_upstream::Upstream>],
    /// The catalog: a tool of a file that did not change keeps its entry.
    catalog: Option<&'a Catalog>,
    /// The folder's files as the reload began, with their stamps.
    seen: Option<&'a Snapshot>,
    /// The settings the catalog was built with: a kept tool is adjusted again only when
    /// they changed, or when its adjustment reads more than them.
    config: Option<&'a FolderConfig>,
}

/// A loaded tools folder.
#[derive(Debug)]
pub struct ToolFolder {
    root: PathBuf,
    config: FolderConfig,
    catalog: Arc<Catalog>,
    prompts: Arc<Prompts>,
    resources: Arc<Resources>,
    transport: Option<Transport>,
    /// The profile applied ([`ToolFolder::with_profile`]), kept by [`ToolFolder::reload`].
    profile: Option<String>,
    /// What each tool file loaded (the packages' too), for [`ToolFolder::reload`] to reuse.
    files: Vec<loading::LoadedFile>,
    /// `[packages]` as they loaded.
    packages: Arc<[packages::Package]>,
    /// `[upstream]` servers (docs/gateway.md), kept running across [`ToolFolder::reload`].
    upstreams: Arc<[Arc<toolsmith_upstream::Upstream>]>,
    /// Whether definitions keep their source facts ([`ToolFolder::load_served`]).
    source_facts: bool,
    /// Whether a big folder's plain manifests are deferred ([`ToolFolder::load_to_serve`]).
    defer: bool,
}

impl ToolFolder {
    /// Loads every tool in `root`.
    ///
    /// Fails only when `root` is not a readable folder; anything wrong inside it is a
    /// diagnostic on the catalog.
    pub fn load(root: &Path) -> Result<Self, FolderError> {
        Self::load_for(root, None)
    }

    /// [`ToolFolder::load`] for serving over `transport`: each tool's
    /// `overrides[transport]` properties replace its own (docs/serve.md, "Per-transport
    /// overrides"). A tool whose override is invalid is left out with an `invalid-override`
    /// diagnostic.
    pub fn load_for(root: &Path, transport: Option<Transport>) -> Result<Self, FolderError> {
        Self::load_reusing(root, transport, Previous::default(), true, false)
    }

    /// Loads the folder again (for the same transport), evaluating only the tool files
    /// that changed on disk since `self` was loaded: the others keep their tools and
    /// diagnostics, so a file whose top level runs until its load timeout does not delay
    /// a reload caused by another file. Prompts, resources and
    /// `toolsmith.toml` are always read again.
    pub fn reload(&self) -> Result<Self, FolderError> {
        self.reload_reusing(None)
    }

    /// [`ToolFolder::reload`] as of `seen`, the snapshot of the folder's files taken when
    /// the reload began (`serve --watch`): the files' stamps are taken from it instead of
    /// asked of the file system again, so a reload of a folder of thousands of files costs
    /// one `stat` a file, not four (docs/performance.md).
    pub fn reload_as_of(&self, seen: &Snapshot) -> Result<Self, FolderError> {
        self.reload_reusing(Some(seen))
    }

    fn reload_reusing(&self, seen: Option<&Snapshot>) -> Result<Self, FolderError> {
        let reloaded = Self::load_reusing(
            &self.root,
            self.transport,
            Previous {
                files: &self.files,
                upstreams: &self.upstreams,
                catalog: Some(&self.catalog),
                seen,
                config: Some(&self.config),
            },
            self.source_facts,
            self.defer,
        )?;
        match &self.profile {
            Some(profile) => reloaded.with_profile(profile),
            None => Ok(reloaded),
        }
    }

    /// Loads `root` for `transport` as [`ToolFolder::load_for`] does, then serves only
    /// `profile`'s tools, prompts and resources with its server settings
    /// ([`ToolFolder::with_profile`]); `None` serves everything.
    pub fn load_profile(
        root: &Path,
        transport: Option<Transport>,
        profile: Option<&str>,
    ) -> Result<Self, FolderError> {
        Self::load_profile_keeping(root, transport, profile, true, false)
    }

    /// [`ToolFolder::load_profile`] for a server (or a one-shot `list` or `search`):
    /// the definitions leave out their source facts (where each name and key is written),
    /// which only `toolsmith check` reads, so a folder of thousands of manifests costs far
    /// less memory and time (docs/performance.md). Its reloads leave them out too.
    pub fn load_served(
        root: &Path,
        transport: Option<Transport>,
        profile: Option<&str>,
    ) -> Result<Self, FolderError> {
        Self::load_profile_keeping(root, transport, profile, false, false)
    }

    /// [`ToolFolder::load_served`] for `toolsmith serve`, whose tools a folder of hundreds
    /// of tool files has behind `tool_search`: each plain command manifest's tool is read
    /// again from its file when something needs it, not held meanwhile
    /// (docs/performance.md, "Tools not held"). Not for `[search] mode = "never"`, whose
    /// `tools/list` needs every tool.
    pub fn load_to_serve(
        root: &Path,
        transport: Option<Transport>,
        profile: Option<&str>,
    ) -> Result<Self, FolderError> {
        Self::load_profile_keeping(root, transport, profile, false, true)
    }

    fn load_profile_keeping(
        root: &Path,
        transport: Option<Transport>,
        profile: Option<&str>,
        source_facts: bool,
        defer: bool,
    ) -> Result<Self, FolderError> {
        let folder = Self::load_reusing(root, transport, Previous::default(), source_facts, defer)?;
        match profile {
            Some(profile) => folder.with_profile(profile),
            None => Ok(folder),
        }
    }

    /// This folder as its profile `name` serves it (docs/profiles.md): the tools, prompts
    /// and resources the profile selects, and a configuration whose `[server]` and
    /// `[search]` settings are the profile's where it sets them. A selector that matches
    /// nothing is a warning on the catalog. [`DEV_PROFILE`] selects everything.
    ///
    /// It selects from what this folder serves: on a folder that already has a profile it
    /// narrows that profile's selection (every caller applies it to a folder loaded whole,
    /// and [`ToolFolder::reload`] loads whole before applying the profile again).
    ///
    /// # Errors
    ///
    /// [`FolderError::UnknownProfile`] when the folder has no profile `name`.
    pub fn with_profile(&self, name: &str) -> Result<Self, FolderError> {
        let whole = self.shallow_copy();
        if name == DEV_PROFILE {
            return Ok(Self {
                profile: Some(name.to_owned()),
                ..whole
            });
        }
        let config = whole.config.with_profile(name)?;
        let profile = &whole.config.profiles[name];
        let (catalog, prompts, resources) =
            profile.apply(&whole.catalog, &whole.prompts, &whole.resources);
        Ok(Self {
            config,
            catalog: Arc::new(catalog),
            prompts: Arc::new(prompts),
            resources: Arc::new(resources),
            profile: Some(name.to_owned()),
            ..whole
        })
    }

    /// The profile this folder serves, if one was applied.
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    fn shallow_copy(&self) -> Self {
        Self {
            root: self.root.clone(),
            config: self.config.clone(),
            catalog: Arc::clone(&self.catalog),
            prompts: Arc::clone(&self.prompts),
            resources: Arc::clone(&self.resources),
            transport: self.transport,
            profile: self.profile.clone(),
            files: self.files.clone(),
            packages: Arc::clone(&self.packages),
            upstreams: Arc::clone(&self.upstreams),
            source_facts: self.source_facts,
            defer: self.defer,
        }
    }

    /// What a server of `root` as `profile` serves it says in its `initialize` result and
    /// is configured with (`toolsmith.toml` with the profile's `[server]`, `[search]` and
    /// `[evaluator]`), read without loading a tool: `toolsmith serve` answers `initialize`
    /// from it while the tools load (docs/performance.md). Its diagnostics are
    /// left to the full load, which reads the file again.
    ///
    /// # Errors
    ///
    /// As [`ToolFolder::load_profile`] for a folder that is not one or an unknown profile.
    pub fn server_config(root: &Path, profile: Option<&str>) -> Result<FolderConfig, FolderError> {
        Self::check_root(root)?;
        let (config, _) = FolderConfig::load(root);
        match profile {
            Some(DEV_PROFILE) | None => Ok(config),
            Some(name) => config.with_profile(name),
        }
    }

    /// `root` is a folder Toolsmith can read.
    fn check_root(root: &Path) -> Result<(), FolderError> {
        let metadata = std::fs::metadata(root).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => FolderError::NotFound {
                path: root.to_owned(),
            },
            _ => FolderError::Unreadable {
                path: root.to_owned(),
                source,
            },
        })?;
        if metadata.is_dir() {
            Ok(())
        } else {
            Err(FolderError::NotAFolder {
                path: root.to_owned(),
            })
        }
    }

    fn load_reusing(
        root: &Path,
        transport: Option<Transport>,
        previous: Previous<'_>,
        source_facts: bool,
        defer: bool,
    ) -> Result<Self, FolderError> {
        Self::check_root(root)?;
        let (mut config, mut diagnostics) = FolderConfig::load(root);
        let same_settings = previous
            .config
            .is_some_and(|previous| previous.raw == config.raw);
        let reusable = defer::reusable(previous.files, same_settings);
        let seen = previous
            .seen
            .and_then(|seen| discover::tool_files_seen(root, seen));
        let found = match seen {
            Some(found) => found,
            None => discover::folder_tool_files(root, &mut diagnostics)?,
        };
        let settings = toolsmith_starlark::LoadSettings {
            base_dir: root.to_owned(),
            load_timeout: config
                .load_timeout
                .unwrap_or(toolsmith_starlark::DEFAULT_LOAD_TIMEOUT),
            restrict: None,
            source_facts,
        };
        let mut files = loading::load_files(found, &settings, &reusable, previous.seen);
        let mut tools = Vec::new();
        for loaded in &files {
            tools.extend(loaded.module.tools.iter().cloned());
            diagnostics.extend(loaded.module.diagnostics.iter().cloned());
        }
        // A package's manifests cannot wrap this folder's upstreams' tools.
        let own_files = files.len();
        let packages = packages::load(root, &config, previous.files).join(
            &mut tools,
            &mut files,
            &mut diagnostics,
        );
        let mut upstreams = upstreams::load(root, &config, previous.upstreams);
        let wrapped = upstreams.wrap(&files[..own_files]);
        tools.extend(
            std::mem::take(&mut upstreams.tools)
                .into_iter()
                .filter(|tool| !wrapped.replaced.contains(&tool.definition().name)),
        );
        tools.extend(wrapped.tools);
        diagnostics.append(&mut upstreams.diagnostics);
        diagnostics.extend(wrapped.diagnostics);
        let (apis, mut problems) = openapi::load(root, &config);
        tools.extend(apis);
        diagnostics.append(&mut problems);
        let (resources, mut problems) = resources::load(root, &config);
        diagnostics.append(&mut problems);
        let (skills, skill_files, mut problems) = skills::load(root);
        diagnostics.append(&mut problems);
        let resources = upstreams
            .join_resources(resources)
            .with_skills(skills, skill_files);
        let (prompts, mut problems) = prompts::load(root, &resources);
        diagnostics.append(&mut problems);
        let prompts = upstreams.join_prompts(prompts, &mut diagnostics);
        let options = run::options_by_tool(&config, &mut diagnostics);
        // The evaluator is built by the server; its options are resolved here with the
        // tools' own. A profile may rename it, so they are kept under both names' lookup.
        config.evaluator.options = options
            .get(&config.evaluator.name)
            .or_else(|| options.get(toolsmith_model::RUN_CODE))
            .cloned()
            .unwrap_or_default();
        diagnostics.extend(config::evaluator_clash(root, &config.evaluator, &tools));
        if defer && defer::pays(own_files, &config) {
            let (root, config, options) = (root.to_owned(), config.clone(), options.clone());
            let publish: Arc<defer::Publish> = Arc::new(move |definition: &mut ToolDefinition| {
                publish(&root, transport, &config, &options, definition)
            });
            defer::defer(&mut files[..own_files], &mut tools, &settings, &publish);
        }
        let adjusted = |definition: &mut ToolDefinition| {
            publish(root, transport, &config, &options, definition)
        };
        // What `adjusted` reads besides the settings: the environment and `PATH`
        // (`requires`) and icon files.
        let unchanged = |definition: &ToolDefinition| {
            same_settings
                && definition.requires.env.is_empty()
                && definition.requires.commands.is_empty()
                && definition.icons.is_empty()
        };
        let catalog = match previous.catalog {
            Some(previous) => Catalog::rebuild(tools, diagnostics, adjusted, previous, unchanged),
            None => Catalog::build(tools, diagnostics, adjusted),
        };
        Ok(Self {
            root: root.to_owned(),
            config,
            catalog: Arc::new(catalog),
            prompts: Arc::new(prompts),
            resources: Arc::new(resources),
            transport,
            profile: None,
            files,
            packages: packages.into(),
            upstreams: upstreams.upstreams.into(),
            source_facts,
            defer,
        })
    }

    /// The folder's path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder's `toolsmith.toml`.
    pub fn config(&self) -> &FolderConfig {
        &self.config
    }

    /// The loaded tools and the diagnostics of what failed.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The folder's packages (`[packages.NAME]` of `toolsmith.toml`, docs/packages.md), by
    /// name; one that failed to load is a diagnostic on the catalog instead.
    pub fn packages(&self) -> &[packages::Package] {
        &self.packages
    }

    /// The folder's upstream MCP servers (`[upstream.NAME]`, docs/gateway.md), running or
    /// not; one whose table is invalid is a diagnostic on the catalog instead.
    pub fn upstreams(&self) -> &[Arc<toolsmith_upstream::Upstream>] {
        &self.upstreams
    }

    /// The folder's prompts (`prompts/**/*.md`), sorted by name. Files that failed to load
    /// are diagnostics on the catalog.
    pub fn prompts(&self) -> &Arc<Prompts> {
        &self.prompts
    }

    /// The folder's resources and resource templates (`resources/**`). Files that failed to
    /// load are diagnostics on the catalog.
    pub fn resources(&self) -> &Arc<Resources> {
        &self.resources
    }

    /// Every file in the folder, relative to it, as `toolsmith check` looks at them:
    /// private (`_`) names included; hidden (`.`) names and the build folders `target/`,
    /// `node_modules/` and `__pycache__/` left out; at most 16 folders deep, links to
    /// folders followed, what cannot be read skipped.
    pub fn files(&self) -> BTreeSet<PathBuf> {
        let build = |dir: &Path| {
            dir.file_name()
                .is_some_and(|name| walk::BUILD_FOLDERS.contains(&name.to_string_lossy().as_ref()))
        };
        Walk::new(&self.root)
            .private(true)
            .follow_links(true)
            .max_depth(16)
            .prune(&build)
            .readable_files()
            .into_iter()
            .filter_map(|path| Some(path.strip_prefix(&self.root).ok()?.to_owned()))
            .collect()
    }

    /// A caller that runs this folder's tools under a watchdog.
    pub fn caller(&self) -> Caller {
        Caller::new(Arc::clone(&self.catalog), self.root.clone())
    }

    /// Whether any file failed to load (an error-severity diagnostic).
    pub fn has_errors(&self) -> bool {
        self.catalog
            .diagnostics()
            .iter()
            .any(|d| d.severity == Severity::Error)
    }
}

/// Replaces `definition`'s properties with those of its `overrides[transport]`.
fn apply_overrides(
    definition: &mut ToolDefinition,
    transport: Transport,
) -> Result<(), Diagnostic> {
    let Some(overrides) = definition.overrides.get(transport.name()).cloned() else {
        return Ok(());
    };
    let name = definition.name.clone();
    let source = definition.source.clone();
    let invalid = |message: String| {
        Diagnostic::error("invalid-override", source.clone(), message).with_help(
            "write overrides as {\"http\": {\"description\": ...}, \"stdio\": {...}} with tool properties as keys",
        )
    };
    let serde_json::Value::Object(properties) = overrides else {
        return Err(invalid(format!(
            "tool `{name}`: `overrides.{transport}` must be a table of tool properties"
        )));
    };
    for (key, value) in &properties {
        if key == "overrides" || key == "name" || key == "init" {
            return Err(invalid(format!(
                "tool `{name}`: `overrides.{transport}` cannot change `{key}`"
            )));
        }
        match toolsmith_model::apply_property(definition, key, value) {
            Ok(true) => {}
            Ok(false) => {
                let unknown = invalid(format!(
                    "tool `{name}`: `overrides.{transport}` has unknown property `{key}`"
                ));
                let suggestion = toolsmith_model::names::suggestion(
                    key,
                    toolsmith_model::TOOL_PROPERTIES.iter().copied(),
                );
                return Err(match suggestion {
                    Some(suggestion) => unknown.with_help(suggestion),
                    None => unknown,
                });
            }
            Err(error) => {
                return Err(invalid(format!(
                    "tool `{name}`: `overrides.{transport}.{key}`: {error}"
                )));
            }
        }
    }
    Ok(())
}

/// `definition` as the folder publishes it: the `transport`'s overrides applied, then the
/// folder's settings ([`adjust`]) and the `[run]` options set for it (`options`).
fn publish(
    root: &Path,
    transport: Option<Transport>,
    config: &FolderConfig,
    options: &std::collections::HashMap<String, JsonObject>,
    definition: &mut ToolDefinition,
) -> Result<(), Diagnostic> {
    if let Some(transport) = transport {
        apply_overrides(definition, transport)?;
    }
    adjust(root, config, definition)?;
    if let Some(values) = options.get(&definition.name) {
        definition
            .options
            .extend(values.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Ok(())
}

/// Applies folder-level settings to a tool's published definition: default timeout,
/// icon files turned into `data:` URIs, and `requires` (a tool whose variables are not set
/// or whose programs are not on `PATH` is left out with an info diagnostic saying which).
/// A package's tool gets its package folder's first, then the host's (docs/packages.md).
pub(crate) fn adjust(
    root: &Path,
    config: &FolderConfig,
    definition: &mut ToolDefinition,
) -> Result<(), Diagnostic> {
    if definition.timeout.is_none() {
        definition.timeout = config.default_timeout;
    }
    if definition.package.is_none() {
        definition.folder = toolsmith_model::subfolders(root, &definition.source.path);
    }
    let unmet = definition.requires.unmet(
        |name| std::env::var_os(name).is_some(),
        |program| program_found(root, program),
    );
    if let Some(unmet) = unmet {
        let mut diagnostic = Diagnostic::error(
            "missing-requirement",
            definition.source.clone(),
            unmet.message(&definition.name),
        )
        .with_help(unmet.help());
        diagnostic.severity = Severity::Info;
        return Err(diagnostic);
    }
    icons::resolve(root, definition)
}

/// Whether `program` (of `requires.commands`) can be run: an executable file in a folder of
/// `PATH`, or, for a path with a `/`, relative to the tools folder `root`.
pub fn program_found(root: &Path, program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let executable = |path: &Path| {
        std::fs::metadata(path)
            .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
    };
    if program.is_empty() {
        return false;
    }
    if program.contains('/') {
        return executable(&root.join(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(program))))
}

/// The arguments object of a call from loose JSON (`null` → empty).
pub fn arguments_object(value: serde_json::Value) -> Result<JsonObject, String> {
    match value {
        serde_json::Value::Object(object) => Ok(object),
        serde_json::Value::Null => Ok(JsonObject::new()),
        other => Err(format!(
            "arguments must be a JSON object, got {}",
            toolsmith_model::kind(&other)
        )),
    }
}

/// `path` made absolute, with links resolved when it exists, else with `.` and `..` taken
/// away by name (a folder about to be made).
pub fn resolved_path(path: &Path) -> PathBuf {
    if let Ok(path) = std::fs::canonicalize(path) {
        return path;
    }
    toolsmith_starlark::lexical(&std::path::absolute(path).unwrap_or_else(|_| path.to_owned()))
}

/// A location at the top of `path` (for file-level diagnostics).
pub(crate) fn file_location(path: &Path) -> SourceLocation {
    SourceLocation::file(path)
}

#[cfg(test)]
mod tests {
    use toolsmith_model::Hint as _;

    use super::*;

    #[test]
    fn folder_errors_say_how_to_fix_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hello.star");
        std::fs::write(&file, "").unwrap();
        let not_a_folder = ToolFolder::load(&file).unwrap_err();
        assert_eq!(
            not_a_folder.hints(),
            ["pass the folder that holds the tool files, not a file"]
        );
        let missing = ToolFolder::load(&dir.path().join("missing")).unwrap_err();
        let hints = missing.hints();
        assert_eq!(hints.len(), 1);
        assert!(hints[0].starts_with("check the path; `"), "{hints:?}");
    }
}
