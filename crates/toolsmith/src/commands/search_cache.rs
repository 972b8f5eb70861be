//! The index `toolsmith search` keeps between runs (docs/search.md, "From the command
//! line"): a one-shot search of a big folder would otherwise load every file and index
//! every tool each time (issue 21). It is kept in Toolsmith's cache folder, one file per
//! folder and profile, under the folder's [`Snapshot::digest`] (every file's path,
//! modification time and size) and this build of Toolsmith: any change to the folder, or
//! another Toolsmith, and it is made again. Folders whose tools do not all come from their
//! own files (upstream servers, OpenAPI services, packages) and folders with diagnostics
//! to show are not kept.

use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolsmith_folder::{Snapshot, ToolFolder};
use toolsmith_search::SearchIndex;

/// Bumped when what is stored changes shape.
const FORMAT: u32 = 2;

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

/// A found tool as `toolsmith search` shows it.
#[derive(Serialize, Deserialize)]
pub(crate) struct Row {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    /// Its input schema as JSON text (read only for the tools found).
    input_schema: String,
}

impl Row {
    pub(crate) fn input_schema(&self) -> Value {
        serde_json::from_str(&self.input_schema).unwrap_or(Value::Null)
    }
}

/// What is stored: the index and, in its order, the rows of its tools.
#[derive(Serialize, Deserialize)]
pub(crate) struct Stored {
    key: Key,
    pub(crate) index: SearchIndex,
    pub(crate) rows: Vec<Row>,
}

impl Cache {
    /// The cache of `root` served as `profile`, as the folder is now; `None` without a
    /// cache folder or a readable folder.
    pub(crate) fn of(root: &Path, profile: Option<&str>) -> Option<Self> {
        let canonical = std::fs::canonicalize(root).ok()?;
        let mut name = std::hash::DefaultHasher::new();
        canonical.hash(&mut name);
        profile.hash(&mut name);
        let path = toolsmith_folder::packages::cache_dir()?
            .join("search")
            .join(format!("{:016x}.index", name.finish()));
        let key = Key {
            format: FORMAT,
            build: build()?,
            folder: Snapshot::take(&canonical).digest(),
        };
        Some(Self { path, key })
    }

    /// The stored index, when there is one for the folder as it is now.
    pub(crate) fn read(&self) -> Option<Stored> {
        let bytes = std::fs::read(&self.path).ok()?;
        let stored: Stored = postcard::from_bytes(&bytes).ok()?;
        (stored.key == self.key && stored.index.len() == stored.rows.len()).then_some(stored)
    }

    /// Keeps `index` of `folder` for the next run, when the folder may be kept; a cache
    /// that cannot be written is only logged.
    pub(crate) fn write(self, folder: &ToolFolder, index: SearchIndex) {
        if !keepable(folder) {
            return;
        }
        let rows = folder
            .catalog()
            .definitions()
            .map(|definition| Row {
                name: definition.name.clone(),
                title: definition.title.clone(),
                description: definition.description.clone(),
                input_schema: definition.input_schema.text().to_owned(),
            })
            .collect();
        let stored = Stored {
            key: self.key,
            index,
            rows,
        };
        if let Err(error) = store(&self.path, &stored) {
            tracing::debug!(path = %self.path.display(), %error, "search cache not written");
        }
    }
}

/// Whether every tool of `folder` comes from its own files, and it has nothing to report.
fn keepable(folder: &ToolFolder) -> bool {
    folder.upstreams().is_empty()
        && folder.packages().is_empty()
        && !folder.config().raw.contains_key("openapi")
        && folder.catalog().diagnostics().is_empty()
}

/// Writes `stored` whole or not at all (a temporary file renamed into place), and removes
/// the indexes not written for [`KEPT_FOR`] (folders gone or no longer searched).
fn store(path: &Path, stored: &Stored) -> anyhow::Result<()> {
    let bytes = postcard::to_stdvec(stored)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let temporary = dir.join(format!(".{}.tmp", std::process::id()));
    std::fs::write(&temporary, bytes)?;
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
