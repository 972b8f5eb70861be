//! Which files of a folder are tools, and how each is loaded: `.star` files are Starlark
//! modules unless a manifest of the same stem claims them; `.toml` files (except
//! `toolsmith.toml`) are manifests. Names starting with `_` or `.` are ignored, and so are
//! the folders that hold prompts, resources, icons and tests.

use std::hash::BuildHasher as _;
use std::path::{Path, PathBuf};

use fnv::{FnvBuildHasher, FnvHashSet};
use toolsmith_model::{Diagnostic, SourceLocation};
use toolsmith_starlark::{LoadSettings, LoadedModule};

use crate::config::CONFIG_FILE;
use crate::inits::CommandInits;
use crate::manifest::{self, ManifestKind};
use crate::{FolderError, Snapshot};

/// Top-level folders of a tools folder that hold what is not tools (build folders neither).
const CONTENT_FOLDERS: &[&str] = &["prompts", "resources", "skills", "icons", "tests"];

/// A file that defines tools. Two are the same when they are of one kind and their paths
/// have the same bytes (the walk writes every path the same way): a reload of thousands of
/// files looks each up, and `Path`'s own comparison and hash parse its components.
#[derive(Debug, Clone)]
pub(crate) enum ToolFile {
    /// A Starlark module registering tools with `mcp.tool(...)`.
    Starlark(PathBuf),
    /// A manifest (with a script of the same stem, or a command).
    Manifest(PathBuf),
}

impl ToolFile {
    /// Its kind and its path's bytes: what tells it from another.
    fn identity(&self) -> (u8, &[u8]) {
        match self {
            Self::Starlark(path) => (0, path.as_os_str().as_encoded_bytes()),
            Self::Manifest(path) => (1, path.as_os_str().as_encoded_bytes()),
        }
    }
}

impl PartialEq for ToolFile {
    fn eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }
}

impl Eq for ToolFile {}

impl std::hash::Hash for ToolFile {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.identity().hash(state);
    }
}

/// The tool files of a folder, with every file the walk listed beside them.
pub(crate) struct ToolFiles {
    /// The tool files, sorted by path.
    pub(crate) files: Vec<ToolFile>,
    /// Every file the walk listed, by the hash of its path's bytes: whether a manifest's
    /// script exists is looked up here rather than asked of the file system (a folder of
    /// thousands of manifests paid two `stat`s for each), and the paths are not
    /// copied to be looked up (a reload of thousands of files did that too).
    /// Hashed with FNV: a quick hash of short paths mattered to a reload.
    listed: FnvHashSet<u64>,
    hasher: FnvBuildHasher,
    /// Whether a `.star` or `.py` file was listed: a folder of manifests alone has no
    /// manifest script to look up.
    scripts: bool,
}

impl ToolFiles {
    /// Whether `path` was among the folder's files. (Two paths of one 64-bit hash are
    /// taken to be the same: far less likely than the file changing while it is looked at.)
    pub(crate) fn lists(&self, path: &Path) -> bool {
        self.listed
            .contains(&self.hasher.hash_one(path.as_os_str().as_encoded_bytes()))
    }

    /// Whether any `.star` or `.py` file was among the folder's files.
    pub(crate) fn lists_scripts(&self) -> bool {
        self.scripts
    }
}

/// Whether `name`, a folder right under the root, holds no tool files: prompts, resources,
/// icons, tests, build output.
fn reserved(name: &str) -> bool {
    CONTENT_FOLDERS.contains(&name) || crate::walk::BUILD_FOLDERS.contains(&name)
}

/// Lists the tool files under `root`, sorted by path. A folder (or entry) under `root` that
/// cannot be read is an `unreadable-file` error in `diagnostics`, naming it: it costs only
/// its own tools.
///
/// # Errors
///
/// `root` itself cannot be read.
pub(crate) fn tool_files(
    root: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> std::io::Result<ToolFiles> {
    let reserved = |dir: &Path| {
        dir.parent() == Some(root)
            && dir
                .file_name()
                .is_some_and(|name| reserved(&name.to_string_lossy()))
    };
    let (listed, skipped) = crate::Walk::new(root).prune(&reserved).files_skipping()?;
    diagnostics.extend(skipped.into_iter().map(|(path, error)| {
        Diagnostic::error(
            "unreadable-file",
            SourceLocation::file(&path),
            format!("cannot read: {error}; the tools in it are skipped"),
        )
        .with_help(
            "give read permission to it (`chmod -R u+rX`), or rename it to start with `_` to leave it out",
        )
    }));
    Ok(tool_files_of(root, listed))
}

/// [`tool_files`] of the tools folder `root`, whose own unreadability is a
/// [`FolderError::Unreadable`].
pub(crate) fn folder_tool_files(
    root: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<ToolFiles, FolderError> {
    tool_files(root, diagnostics).map_err(|source| FolderError::Unreadable {
        path: root.to_owned(),
        source,
    })
}

/// [`tool_files`] as `seen`, a snapshot of `root` taken for this load, lists them, instead
/// of walking the folder again: a quarter of a one-file reload of thousands of files.
/// `None` when the snapshot cannot stand for a walk ([`Snapshot::listing`]).
pub(crate) fn tool_files_seen(root: &Path, seen: &Snapshot) -> Option<ToolFiles> {
    let prefix = root.as_os_str().as_encoded_bytes();
    let mut listed = Vec::new();
    // Looked at as bytes: parsing every path's components was a tenth of a one-file
    // reload of thousands of files.
    for path in seen.listing()? {
        let rest = path.as_os_str().as_encoded_bytes().strip_prefix(prefix)?;
        // Under `root`: past its last byte comes a separator, unless it ended with one.
        let relative = match rest.strip_prefix(b"/") {
            Some(relative) => relative,
            None if prefix.ends_with(b"/") => rest,
            None => return None,
        };
        let mut parts = relative
            .split(|byte| *byte == b'/')
            .filter(|part| !part.is_empty());
        // What the walk leaves out: hidden and private names, reserved folders.
        let hidden = parts.clone().any(|part| crate::walk::left_out(part, false));
        let first = parts.next();
        let in_reserved = parts.next().is_some()
            && first.is_some_and(|part| reserved(&String::from_utf8_lossy(part)));
        if !hidden && !in_reserved {
            listed.push(path);
        }
    }
    // In the walk's order: by component, as if the separator came before every other
    // byte. So each path is compared by a copy with its separators made the lowest byte
    // (never in a path), as plain bytes: mapping every byte in each comparison was a tenth
    // of a one-file reload of thousands of files.
    let mut keyed: Vec<(Vec<u8>, &Path)> = listed
        .into_iter()
        .map(|path| {
            let key = path
                .as_os_str()
                .as_encoded_bytes()
                .iter()
                .map(|&byte| if byte == b'/' { 0 } else { byte })
                .collect();
            (key, path)
        })
        .collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Some(tool_files_of(
        root,
        keyed
            .into_iter()
            .map(|(_, path)| path.to_path_buf())
            .collect(),
    ))
}

/// The extension of the file at `path` (what follows the last `.` of its name, unless the
/// name starts there), read from its bytes.
fn extension(path: &Path) -> Option<&[u8]> {
    let bytes = path.as_os_str().as_encoded_bytes();
    let name = bytes.rsplit(|byte| *byte == b'/').next()?;
    let dot = name.iter().rposition(|byte| *byte == b'.')?;
    (dot > 0).then(|| &name[dot + 1..])
}

/// The tool files of `listed`, every file under `root` a walk lists, in its order.
fn tool_files_of(root: &Path, listed: Vec<PathBuf>) -> ToolFiles {
    let hasher = FnvBuildHasher::default();
    let mut found = ToolFiles {
        files: Vec::new(),
        listed: listed
            .iter()
            .map(|path| hasher.hash_one(path.as_os_str().as_encoded_bytes()))
            .collect(),
        hasher,
        scripts: listed
            .iter()
            .any(|path| matches!(extension(path), Some(b"star" | b"py"))),
    };
    let config = root.join(CONFIG_FILE);
    found.files = listed
        .into_iter()
        .filter_map(|path| match extension(&path) {
            // Both joined to `root`: equal paths have equal bytes.
            Some(b"toml") if path.as_os_str() != config.as_os_str() => {
                Some(ToolFile::Manifest(path))
            }
            Some(b"star") if !found.lists(&path.with_extension("toml")) => {
                Some(ToolFile::Starlark(path))
            }
            _ => None,
        })
        .collect();
    found
}

/// Loads one tool file; never fails as a whole. A manifest's `init` command joins the
/// folder's `inits`.
pub(crate) fn load_file(
    file: &ToolFile,
    settings: &LoadSettings,
    inits: &CommandInits,
) -> LoadedModule {
    match file {
        ToolFile::Starlark(path) => match crate::read::read_definition(path) {
            Ok(source) => toolsmith_starlark::load_module(path, &source, settings),
            Err(error) => unreadable(path, &error),
        },
        ToolFile::Manifest(path) => {
            let mut loaded = load_manifest(path, settings, inits);
            // A manifest defines one tool, named for its file: a call of that name says
            // why it is missing.
            if loaded.tools.is_empty()
                && let Some(stem) = path.file_stem()
            {
                let name = stem.to_string_lossy();
                loaded.diagnostics = std::mem::take(&mut loaded.diagnostics)
                    .into_iter()
                    .map(|diagnostic| diagnostic.for_tool(name.as_ref()))
                    .collect();
            }
            loaded
        }
    }
}

/// A `worker = true` command tool, served by the load's pool for its command and settings.
fn worker_tool(
    path: &Path,
    definition: toolsmith_model::ToolDefinition,
    argv: Vec<String>,
    worker: toolsmith_command::WorkerSettings,
    settings: &LoadSettings,
    inits: &CommandInits,
) -> Result<std::sync::Arc<dyn toolsmith_model::Tool>, Diagnostic> {
    let invalid = |error: toolsmith_command::TemplateError| {
        Diagnostic::error("invalid-command", crate::file_location(path), format!("`worker`: {error}"))
            .with_help("a worker reads its arguments from stdin as JSON lines; remove the `{placeholders}` from `command`")
    };
    let pool = inits
        .worker(&argv, worker, &settings.base_dir)
        .map_err(invalid)?;
    let definition = settings.restricted(definition);
    pool.permit_env(&definition.permissions.env);
    let tool = toolsmith_command::CommandTool::new(definition, argv, settings.base_dir.clone())
        .map_err(invalid)?
        .with_worker(pool);
    Ok(std::sync::Arc::new(tool))
}

pub(crate) fn load_manifest(
    path: &Path,
    settings: &LoadSettings,
    inits: &CommandInits,
) -> LoadedModule {
    let source = match crate::read::read_definition(path) {
        Ok(source) => source,
        Err(error) => return unreadable(path, &error),
    };
    let mut manifest = match manifest::parse(path, &source, settings.source_facts) {
        Ok(manifest) => manifest,
        Err(diagnostics) => {
            return LoadedModule {
                tools: Vec::new(),
                diagnostics,
            };
        }
    };
    // Set here rather than by the catalog's builder, which would copy the definition to
    // set it.
    manifest.definition.folder = toolsmith_model::subfolders(&settings.base_dir, path);
    let result = match manifest.kind {
        // Bound to its upstream's tool after the upstreams have listed theirs (`wraps.rs`).
        ManifestKind::Upstream => {
            return LoadedModule {
                tools: Vec::new(),
                diagnostics: Vec::new(),
            };
        }
        ManifestKind::Command(argv) => match manifest.worker {
            Some(worker) => worker_tool(path, manifest.definition, argv, worker, settings, inits),
            None => toolsmith_command::CommandTool::new(settings.restricted(manifest.definition), argv, settings.base_dir.clone())
                .map(|tool| std::sync::Arc::new(tool) as std::sync::Arc<dyn toolsmith_model::Tool>)
                .map_err(|error| {
                    Diagnostic::error("invalid-command", crate::file_location(path), error.to_string())
                        .with_help("placeholders in `command` must name a parameter: `{name}`")
                }),
        },
        ManifestKind::Script => match script_for(path) {
            Some(script) => match crate::read::read_definition(&script) {
                Ok(code) => toolsmith_starlark::load_script(manifest.definition, &script, &code, settings),
                Err(error) => return unreadable(&script, &error),
            },
            None => Err(Diagnostic::error(
                "missing-script",
                crate::file_location(path),
                format!(
                    "manifest `{}` has no script and no `command`",
                    path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
                ),
            )
            .with_help(format!(
                "add `{stem}.star` or `{stem}.py` next to it, or a `command = [...]` to run a program",
                stem = path.file_stem().map(|n| n.to_string_lossy()).unwrap_or_default()
            ))),
        },
    };
    let result = result.and_then(|tool| {
        inits.attach(tool, &settings.base_dir).map_err(|error| {
            // An init takes no arguments; the error says how to write literal braces.
            Diagnostic::error(
                "invalid-command",
                crate::file_location(path),
                format!("`init`: {error}"),
            )
        })
    });
    match result {
        Ok(tool) => LoadedModule {
            tools: vec![tool],
            diagnostics: Vec::new(),
        },
        Err(diagnostic) => LoadedModule {
            tools: Vec::new(),
            diagnostics: vec![diagnostic],
        },
    }
}

/// The script of a manifest: `stem.star`, else `stem.py`.
fn script_for(manifest: &Path) -> Option<PathBuf> {
    ["star", "py"]
        .iter()
        .map(|ext| manifest.with_extension(ext))
        // Whatever is there (a FIFO too): reading it says why it cannot be used.
        .find(|path| path.exists())
}

fn unreadable(path: &Path, error: &crate::read::ReadError) -> LoadedModule {
    LoadedModule {
        tools: Vec::new(),
        diagnostics: vec![error.diagnostic(SourceLocation::file(path))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(found: &ToolFiles) -> Vec<PathBuf> {
        found
            .files
            .iter()
            .map(|file| match file {
                ToolFile::Starlark(path) | ToolFile::Manifest(path) => path.clone(),
            })
            .collect()
    }

    // A reload lists the tool files from the snapshot it began with, exactly as a
    // walk of the folder does, or walks when the snapshot cannot tell.
    #[test]
    fn a_whole_snapshot_lists_the_tool_files_a_walk_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "a-b.toml",
            "a/b.toml",
            "a/c.star",
            "a/c.toml",
            "a/d.star",
            "a/d.py",
            "z.toml",
            "toolsmith.toml",
            ".hidden/x.toml",
            "_private/x.toml",
            "a/_x.toml",
            "prompts/p.toml",
            "tests/t.toml",
            "node_modules/m/x.toml",
            "deep/er/still/x.toml",
            "tests.toml",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let walked = tool_files(root, &mut Vec::new()).unwrap();
        let seen = tool_files_seen(root, &Snapshot::take(root)).expect("a whole snapshot");
        assert_eq!(paths(&seen), paths(&walked));
        assert_eq!(seen.files, walked.files);
        for path in [
            "a/d.py",
            "a/c.star",
            "z.toml",
            "prompts/p.toml",
            "_private/x.toml",
        ] {
            let path = root.join(path);
            assert_eq!(seen.lists(&path), walked.lists(&path), "{path:?}");
        }

        // Deeper than a snapshot goes: only a walk can tell.
        let mut deep = root.join("deep");
        for level in 0..20 {
            deep = deep.join(format!("l{level}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("bottom.toml"), "").unwrap();
        assert!(tool_files_seen(root, &Snapshot::take(root)).is_none());
        assert!(
            paths(&tool_files(root, &mut Vec::new()).unwrap()).contains(&deep.join("bottom.toml"))
        );
    }
}
