//! `toolsmith.lock`: the commit each git package of a folder is pinned to, with a hash of
//! its files, next to the folder's `toolsmith.toml`. Loading the folder writes a pin for a
//! git package that has none (or whose `git` or `rev` changed); `toolsmith packages
//! update` moves pins. Path packages are not pinned.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file name of a folder's lock file.
pub const LOCK_FILE: &str = "toolsmith.lock";

/// What the file says before its tables.
const HEADER: &str = "# Written by Toolsmith: the commit each git package of toolsmith.toml is pinned to.\n\
                      # `toolsmith packages update` moves the pins. Keep this file with toolsmith.toml.\n\n";

/// The whole lock file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Lock {
    /// The format's version: 1.
    pub(crate) version: u32,
    /// Pins by package `NAME`.
    #[serde(default)]
    pub(crate) packages: BTreeMap<String, Pin>,
}

/// Where one git package is pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Pin {
    /// `git` as `toolsmith.toml` gave it when the pin was made.
    pub(crate) git: String,
    /// `rev` as `toolsmith.toml` gave it.
    pub(crate) rev: String,
    /// The commit `rev` named then.
    pub(crate) commit: String,
    /// `sha256:` of the commit's files ([`super::git::content_hash`]).
    pub(crate) hash: String,
}

impl Lock {
    /// Reads `root`'s lock file; none is an empty lock.
    pub(crate) fn read(root: &Path) -> Result<Self, String> {
        let path = root.join(LOCK_FILE);
        match crate::read::read_definition(&path) {
            Ok(text) => toml::from_str(&text).map_err(|error| error.message().to_owned()),
            Err(error) if error.is_not_found() => Ok(Self {
                version: 1,
                packages: BTreeMap::new(),
            }),
            Err(error) => Err(error.to_string()),
        }
    }

    /// Writes the lock file into `root`.
    pub(crate) fn write(&self, root: &Path) -> std::io::Result<()> {
        let text = toml::to_string(self).map_err(std::io::Error::other)?;
        std::fs::write(root.join(LOCK_FILE), format!("{HEADER}{text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_reads_back_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Lock::read(dir.path()).unwrap().packages.len(), 0);
        let mut lock = Lock::read(dir.path()).unwrap();
        lock.packages.insert(
            "geo".into(),
            Pin {
                git: "https://example.com/geo.git".into(),
                rev: "main".into(),
                commit: "0123456789abcdef0123456789abcdef01234567".into(),
                hash: "sha256:00".into(),
            },
        );
        lock.write(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert!(text.starts_with("# Written by Toolsmith"), "{text}");
        assert!(text.contains("[packages.geo]"), "{text}");
        assert_eq!(Lock::read(dir.path()).unwrap(), lock);
    }
}
