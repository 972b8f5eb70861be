//! Reloading a served folder while it is edited (`toolsmith serve --watch`): noticing that
//! its files changed ([`Snapshot`]) and deciding what the server publishes next
//! ([`Published::reloaded`]).
//!
//! The policy: a file that fails to load does not take its tools away. For each file with
//! an error diagnostic after the reload, the tools, prompts and resources that the
//! previously published lists had from it (by source path), and that the reload no longer
//! has, are kept as they were published. Every other file's tools are the reload's: a
//! removed file's tools go, an edited file's change. The catalog's diagnostics are always
//! the reload's, so the broken file is still reported.

use std::collections::HashSet;

use fnv::FnvHashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use toolsmith_model::{Catalog, CatalogEntry, Prompts, Resources, Severity};

use crate::{ToolFolder, Walk};

/// Folders this deep below the root are not looked into.
const MAX_DEPTH: usize = 16;

/// What a server publishes from a folder: its tools, prompts and resources.
#[derive(Debug, Clone)]
pub struct Published {
    /// The tools, with the diagnostics of what failed to load.
    pub catalog: Arc<Catalog>,
    /// The prompts.
    pub prompts: Arc<Prompts>,
    /// The resources and resource templates.
    pub resources: Arc<Resources>,
}

impl Published {
    /// What `folder` publishes as it was loaded.
    pub fn of(folder: &ToolFolder) -> Self {
        Self {
            catalog: Arc::clone(folder.catalog()),
            prompts: Arc::clone(folder.prompts()),
            resources: Arc::clone(folder.resources()),
        }
    }

    /// What to publish after `reloaded` was loaded while `self` was published: the
    /// reload, plus what `self` had from each file that is broken now (the module docs
    /// give the policy).
    #[must_use]
    pub fn reloaded(&self, reloaded: &ToolFolder) -> Self {
        let catalog = reloaded.catalog();
        let broken: HashSet<&Path> = catalog
            .diagnostics()
            .iter()
            .filter(|diagnostic| diagnostic.severity == Severity::Error)
            .map(|diagnostic| diagnostic.location.path.as_path())
            .collect();
        let from_broken = |path: &Path| broken.contains(path);

        let kept_tools: Vec<CatalogEntry> = self
            .catalog
            .entries()
            .iter()
            .filter(|entry| {
                from_broken(&entry.source().path) && catalog.get(entry.name()).is_none()
            })
            .cloned()
            .collect();
        let catalog = if kept_tools.is_empty() {
            Arc::clone(catalog)
        } else {
            Arc::new(catalog.with_entries(kept_tools))
        };

        let prompts = reloaded.prompts();
        let kept_prompts: Vec<_> = self
            .prompts
            .list()
            .iter()
            .filter(|prompt| from_broken(&prompt.source.path) && prompts.get(&prompt.name).is_err())
            .cloned()
            .collect();
        let prompts = if kept_prompts.is_empty() {
            Arc::clone(prompts)
        } else {
            let mut all = prompts.list().to_vec();
            all.extend(kept_prompts);
            Arc::new(Prompts::new(all))
        };

        let resources = reloaded.resources();
        let kept_resources: Vec<_> = self
            .resources
            .list()
            .iter()
            .filter(|resource| {
                from_broken(&resource.info.source.path) && resources.get(&resource.uri).is_none()
            })
            .cloned()
            .collect();
        let kept_templates: Vec<_> = self
            .resources
            .templates()
            .iter()
            .filter(|template| {
                from_broken(&template.info.source.path)
                    && resources.template(template.uri_template.as_str()).is_none()
            })
            .cloned()
            .collect();
        let resources = if kept_resources.is_empty() && kept_templates.is_empty() {
            Arc::clone(resources)
        } else {
            let mut all = resources.list().to_vec();
            all.extend(kept_resources);
            let mut templates = resources.templates().to_vec();
            templates.extend(kept_templates);
            // A skill whose `SKILL.md` broke keeps serving as it did, files and all.
            let skills = resources
                .skills()
                .iter()
                .chain(self.resources.skills().iter().filter(|skill| {
                    from_broken(&skill.source.path) && resources.skill(skill.uri()).is_none()
                }))
                .cloned()
                .collect();
            Arc::new(Resources::new(all, templates).with_skills(skills, Vec::new()))
        };
        Self {
            catalog,
            prompts,
            resources,
        }
    }
}

/// Every file under a folder a change to could matter (private `_` names too, hidden `.`
/// ones not), with its modification time and size: two snapshots differ when a file was
/// added, removed or written. Keyed by the paths' bytes: comparing `Path`s component by
/// component cost a reload of thousands of files more than its `stat`s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    files: FnvHashMap<OsString, (Option<SystemTime>, u64)>,
    /// Whether the walk read every folder it entered and left none unentered for its
    /// depth: then `files` are the folder's files, and a reload lists them from here
    /// instead of walking the folder again ([`Snapshot::listing`]).
    whole: bool,
}

impl Snapshot {
    /// The files under `root` now; what cannot be read is left out.
    pub fn take(root: &Path) -> Self {
        let (files, mut whole) = Walk::new(root)
            .private(true)
            .max_depth(MAX_DEPTH)
            .readable_files_whole();
        let files = files
            .into_iter()
            .filter_map(|path| {
                let Some(stamp) = stamp(&path) else {
                    // Gone since it was listed, or unreadable.
                    whole = false;
                    return None;
                };
                Some((path.into_os_string(), stamp))
            })
            .collect();
        Self { files, whole }
    }

    /// The paths of the snapshot's files, when they are all of the folder's (a walk that
    /// read everything): a reload lists its files from here instead of walking again.
    pub(crate) fn listing(&self) -> Option<impl Iterator<Item = &Path>> {
        self.whole
            .then(|| self.files.keys().map(|path| Path::new(path.as_os_str())))
    }

    /// A number that changes whenever any file of the snapshot does (its path, modification
    /// time or size), for a cache of what was made from the folder (`toolsmith search`
    /// keeps its index by it). The same files give the same number in every run of one
    /// build of Toolsmith.
    #[must_use]
    pub fn digest(&self) -> u64 {
        use std::hash::{Hash as _, Hasher as _};
        let mut files: Vec<_> = self.files.iter().collect();
        files.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut hasher = std::hash::DefaultHasher::new();
        for (path, (modified, size)) in files {
            path.hash(&mut hasher);
            modified
                .and_then(|time| time.duration_since(SystemTime::UNIX_EPOCH).ok())
                .hash(&mut hasher);
            size.hash(&mut hasher);
        }
        hasher.finish()
    }

    /// This snapshot with the files at `changed` looked at again (the paths the operating
    /// system reported, `serve --watch`), which costs a `stat` a path rather than one a file
    /// of the folder. `None` when only a new [`Snapshot::take`] can tell: a path
    /// that is a folder now (created or moved in), one the snapshot did not hold that is
    /// gone (perhaps a removed folder), or one outside `root`.
    #[must_use]
    pub fn updated(&self, root: &Path, changed: &[PathBuf]) -> Option<Self> {
        let canonical = std::fs::canonicalize(root).ok();
        let mut updated = self.clone();
        for path in changed {
            // The snapshot names files as `root` joined with their path below it.
            let relative = path
                .strip_prefix(root)
                .ok()
                .or_else(|| path.strip_prefix(canonical.as_ref()?).ok())?;
            let components: Vec<_> = relative.components().collect();
            let hidden = components
                .iter()
                .any(|part| part.as_os_str().to_string_lossy().starts_with('.'));
            if components.is_empty() || path.is_dir() {
                return None;
            }
            if hidden || components.len() > MAX_DEPTH + 1 {
                continue;
            }
            let key = root.join(relative).into_os_string();
            match stamp(Path::new(&key)) {
                Some(stamp) => {
                    updated.files.insert(key, stamp);
                }
                None => {
                    updated.files.remove(&key)?;
                }
            }
        }
        Some(updated)
    }

    /// The modification time and size of `path` as the snapshot saw it; `None` for a path
    /// it did not list.
    pub(crate) fn stamp(&self, path: &Path) -> Option<(Option<SystemTime>, u64)> {
        self.files.get(path.as_os_str()).copied()
    }
}

/// The modification time and size of the file at `path` (of a link's target; of the link
/// itself when its target is gone), `None` when there is none.
pub(crate) fn stamp(path: &Path) -> Option<(Option<SystemTime>, u64)> {
    let metadata = std::fs::metadata(path)
        .or_else(|_| std::fs::symlink_metadata(path))
        .ok()?;
    Some((metadata.modified().ok(), metadata.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot updated at the reported paths is the one a new walk takes, and
    /// what only a walk can tell is left to one.
    #[test]
    fn a_snapshot_updated_at_the_changed_paths_is_a_fresh_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        for file in ["a.star", "sub/b.toml", "gone.star"] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        let before = Snapshot::take(root);
        std::fs::write(root.join("sub/b.toml"), "longer").unwrap();
        std::fs::write(root.join("new.toml"), "x").unwrap();
        std::fs::write(root.join(".hidden.swp"), "x").unwrap();
        std::fs::remove_file(root.join("gone.star")).unwrap();
        let changed =
            ["sub/b.toml", "new.toml", ".hidden.swp", "gone.star"].map(|file| root.join(file));
        let updated = before.updated(root, &changed).expect("files only");
        assert_eq!(updated, Snapshot::take(root));
        assert_ne!(updated, before);

        // Reported by their canonical paths, as some watchers do.
        let canonical = root.canonicalize().unwrap();
        std::fs::write(root.join("a.star"), "edited").unwrap();
        let again = updated.updated(root, &[canonical.join("a.star")]).unwrap();
        assert_eq!(again, Snapshot::take(root));

        // A new folder, a path that was never there, one outside: a walk is needed.
        std::fs::create_dir(root.join("more")).unwrap();
        std::fs::write(root.join("more/c.star"), "x").unwrap();
        assert_eq!(again.updated(root, &[root.join("more")]), None);
        assert_eq!(again.updated(root, &[root.join("never")]), None);
        assert_eq!(again.updated(root, &[std::env::temp_dir()]), None);
    }

    const TWO_TOOLS: &str = r#"
def first(text: str) -> str:
    """Returns its text."""
    return text

mcp.tool(first, title = "First")

def second(text: str) -> str:
    """Returns its text, twice."""
    return text + text

mcp.tool(second)
"#;

    const OTHER: &str = r#"
def other(text: str) -> str:
    """Returns its text."""
    return text

mcp.tool(other)
"#;

    const BROKEN: &str = "def first(text: str) -> str:\n    return (\n";

    const PROMPT: &str = "---\ndescription: Says hello.\n---\nHello!\n";

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn names(published: &Published) -> Vec<String> {
        published
            .catalog
            .definitions()
            .map(|definition| definition.name.clone())
            .collect()
    }

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "tools.star", TWO_TOOLS);
        write(dir.path(), "other.star", OTHER);
        write(dir.path(), "prompts/hello.md", PROMPT);
        write(dir.path(), "resources/notes.txt", "notes");
        write(
            dir.path(),
            "resources/notes.txt.toml",
            "description = \"Notes\"\n",
        );
        dir
    }

    #[test]
    fn a_broken_file_keeps_its_tools_as_published() {
        let dir = folder();
        let first = ToolFolder::load(dir.path()).unwrap();
        let published = Published::of(&first);
        write(dir.path(), "tools.star", BROKEN);
        let reloaded = first.reload().unwrap();
        assert!(reloaded.catalog().get("first").is_none());

        let next = published.reloaded(&reloaded);
        assert_eq!(names(&next), ["first", "other", "second"]);
        let kept = next.catalog.get("first").unwrap().definition();
        assert_eq!(kept.title.as_deref(), Some("First"));
        // The break is still reported.
        assert!(
            next.catalog
                .diagnostics()
                .iter()
                .any(|diagnostic| diagnostic.location.path.ends_with("tools.star"))
        );
    }

    #[test]
    fn a_removed_or_edited_file_that_loads_replaces_its_tools() {
        let dir = folder();
        let first = ToolFolder::load(dir.path()).unwrap();
        let published = Published::of(&first);
        std::fs::remove_file(dir.path().join("other.star")).unwrap();
        write(
            dir.path(),
            "tools.star",
            OTHER.replace("other", "renamed").as_str(),
        );
        let next = published.reloaded(&first.reload().unwrap());
        assert_eq!(names(&next), ["renamed"]);
    }

    #[test]
    fn broken_prompts_and_resources_keep_what_they_published() {
        let dir = folder();
        let first = ToolFolder::load(dir.path()).unwrap();
        let published = Published::of(&first);
        assert_eq!(published.prompts.list().len(), 1);
        assert_eq!(published.resources.list().len(), 1);
        write(
            dir.path(),
            "prompts/hello.md",
            "---\ndescription: [\n---\nHello!\n",
        );
        write(dir.path(), "resources/notes.txt.toml", "mime_type = [\n");
        let reloaded = first.reload().unwrap();
        assert!(reloaded.prompts().list().is_empty(), "the prompt breaks");
        assert!(
            reloaded.resources().list().is_empty(),
            "the resource breaks"
        );

        let next = published.reloaded(&reloaded);
        assert_eq!(next.prompts.list()[0].name, "hello");
        assert_eq!(next.resources.list().len(), 1);
    }

    #[test]
    fn nothing_is_kept_when_nothing_broke() {
        let dir = folder();
        let first = ToolFolder::load(dir.path()).unwrap();
        let published = Published::of(&first);
        let reloaded = first.reload().unwrap();
        let next = published.reloaded(&reloaded);
        assert!(Arc::ptr_eq(&next.catalog, reloaded.catalog()));
        assert!(Arc::ptr_eq(&next.prompts, reloaded.prompts()));
        assert!(Arc::ptr_eq(&next.resources, reloaded.resources()));
    }

    #[test]
    fn a_snapshot_changes_when_a_file_is_added_or_written() {
        let dir = folder();
        let before = Snapshot::take(dir.path());
        assert_eq!(before, Snapshot::take(dir.path()));
        write(dir.path(), "_helpers.star", "x = 1\n");
        let added = Snapshot::take(dir.path());
        assert_ne!(before, added, "private files are watched");
        write(dir.path(), ".cache", "ignored");
        assert_eq!(added, Snapshot::take(dir.path()), "hidden files are not");
        write(dir.path(), "other.star", TWO_TOOLS);
        assert_ne!(added, Snapshot::take(dir.path()));
    }
}
