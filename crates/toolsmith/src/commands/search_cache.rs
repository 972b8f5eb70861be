//! The search index `toolsmith search` and `toolsmith serve` keep between runs
//! (docs/search.md, "The kept index"): a one-shot search of a big folder would otherwise
//! load every file and index every tool each time, and a server would make its first
//! `tool_search` wait for both. It is kept in Toolsmith's cache folder, one file
//! per folder and profile, under the folder's [`Snapshot::digest`] (every file's path,
//! modification time and size) and this build of Toolsmith: any change to the folder, or
//! another Toolsmith, and it is made again. A server's is kept apart from the command
//! line's, per transport: a tool's `overrides` may describe it differently to each.
//! Folders whose tools do not all come from their own files (upstream servers, OpenAPI
//! services, packages) and folders with diagnostics to show are not kept.

use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolsmith_folder::{Snapshot, ToolFolder};
use toolsmith_model::{Catalog, Transport};
use toolsmith_search::{KeptIndex, KeptTool, KeptTools, SearchIndex};

/// Bumped when what is stored changes shape.
const FORMAT: u32 = 7;

/// How long an index not written again is kept.
const KEPT_FOR: std::time::Duration = std::time::Duration::from_hours(30 * 24);

/// One stored index: where it is and what it must match.
pub(crate) struct Cache {
    path: PathBuf,
    key: Key,
}

#[derive(Serialize, Deserialize, PartialEq)]
struct Key {
    format: u32,
    /// This build of Toolsmith: its version, and its executable's size and time.
    build: String,
    folder: u64,
}

/// What is stored: the index and, in its order, what `tool_search` shows of its tools.
#[derive(Deserialize)]
struct Stored {
    key: Key,
    index: SearchIndex,
    tools: Vec<KeptTool<'static>>,
}

/// [`Stored`] as it is written, borrowing the index.
#[derive(Serialize)]
struct ToStore<'a> {
    key: &'a Key,
    index: &'a SearchIndex,
    tools: KeptTools<'a>,
}

impl Cache {
    /// The cache of `root` as `toolsmith search` loads it, as `profile`, as the folder is
    /// now; `None` without a cache folder or a readable folder.
    pub(crate) fn of(root: &Path, profile: Option<&str>) -> Option<Self> {
        let canonical = std::fs::canonicalize(root).ok()?;
        let place = Place {
            transport: None,
            profile,
            flags: "",
        };
        Self::at(&canonical, &place, &Snapshot::take(&canonical))
    }

    /// The cache of `root` served as `place` says, when its files are `seen` (a snapshot of
    /// `root`).
    pub(crate) fn at(root: &Path, place: &Place<'_>, seen: &Snapshot) -> Option<Self> {
        let key = Key {
            format: FORMAT,
            build: build()?,
            folder: seen.digest(),
        };
        Some(Self {
            path: place.path(root)?,
            key,
        })
    }

    /// The stored index, when there is one for the folder as it is now.
    pub(crate) fn read(&self) -> Option<KeptIndex> {
        self.check(ReadAhead(read_stored(&self.path)))
    }

    /// The index `ahead` read, when it is the one for the folder as it is now.
    pub(crate) fn check(&self, ahead: ReadAhead) -> Option<KeptIndex> {
        let stored = ahead.0.filter(|stored| stored.key == self.key)?;
        KeptIndex::new(stored.index, stored.tools)
    }

    /// Keeps `index` of `folder` for the next run, when the folder may be kept; a cache
    /// that cannot be written is only logged.
    pub(crate) fn write(&self, folder: &ToolFolder, index: &SearchIndex) {
        if keepable(folder) {
            self.write_catalog(folder.catalog(), index);
        }
    }

    /// Keeps `index` of `catalog`, a folder's that may be kept ([`keepable`]).
    pub(crate) fn write_catalog(&self, catalog: &Catalog, index: &SearchIndex) {
        let stored = ToStore {
            key: &self.key,
            index,
            tools: KeptTools(catalog),
        };
        if let Err(error) = store(&self.path, &stored) {
            tracing::debug!(path = %self.path.display(), %error, "search cache not written");
        }
    }
}

/// A stored index read before the folder's files were looked at, to be checked against
/// them ([`Cache::check`]): reading it meanwhile saves a server started again the time of
/// one of the two (docs/search.md, "The kept index").
pub(crate) struct ReadAhead(Option<Stored>);

impl ReadAhead {
    /// Nothing read.
    pub(crate) const NONE: Self = Self(None);

    /// The index kept for `root` served as `place` says, whatever its key.
    pub(crate) fn read(root: &Path, place: &Place<'_>) -> Self {
        Self(place.path(root).and_then(|path| read_stored(&path)))
    }
}

/// How a folder is served, which decides which index is kept for it: one file each.
pub(crate) struct Place<'a> {
    /// The transport a server loads it for (a tool's `overrides` may describe it
    /// differently to each); `None` for `toolsmith search`.
    pub(crate) transport: Option<Transport>,
    /// The profile served.
    pub(crate) profile: Option<&'a str>,
    /// The server's flags that decide what `tool_search` searches (`--search`,
    /// `--code-mode`), written out.
    pub(crate) flags: &'a str,
}

impl Place<'_> {
    /// Where the index of `root` served so is kept.
    fn path(&self, root: &Path) -> Option<PathBuf> {
        let canonical = std::fs::canonicalize(root).ok()?;
        let mut name = std::hash::DefaultHasher::new();
        canonical.hash(&mut name);
        self.profile.hash(&mut name);
        self.transport.map(Transport::name).hash(&mut name);
        self.flags.hash(&mut name);
        Some(
            toolsmith_folder::packages::cache_dir()?
                .join("search")
                .join(format!("{:016x}.index", name.finish())),
        )
    }
}

fn read_stored(path: &Path) -> Option<Stored> {
    let bytes = std::fs::read(path).ok()?;
    postcard::from_bytes(&bytes).ok()
}

/// Whether every tool of `folder` comes from its own files, and it has nothing to report.
pub(crate) fn keepable(folder: &ToolFolder) -> bool {
    folder.upstreams().is_empty()
        && folder.packages().is_empty()
        && !folder.config().raw.contains_key("openapi")
        && folder.catalog().diagnostics().is_empty()
}

/// Writes `stored` whole or not at all (a temporary file renamed into place), and removes
/// the indexes not written for [`KEPT_FOR`] (folders gone or no longer searched).
fn store(path: &Path, stored: &ToStore<'_>) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let temporary = dir.join(format!(".{}.tmp", std::process::id()));
    // Written as it is encoded: a big folder's index is megabytes, not copied once more.
    let mut file = std::io::BufWriter::new(std::fs::File::create(&temporary)?);
    postcard::to_io(stored, &mut file)?;
    std::io::Write::flush(&mut file)?;
    drop(file);
    std::fs::rename(&temporary, path)?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        let old = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age > KEPT_FOR));
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}

/// This build of Toolsmith: its version and its executable's size and modification time.
fn build() -> Option<String> {
    let executable = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    let modified = executable
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "{} {} {}",
        env!("CARGO_PKG_VERSION"),
        executable.len(),
        modified.as_nanos()
    ))
}
