//! The one walk over a folder's files, for every part of Toolsmith that lists them: the
//! loader (tool files, prompts, resources), `toolsmith check` (which files exist) and
//! `serve --watch` (what changed). Recursive and sorted; names starting with `.` are never
//! listed, names starting with `_` are private to a tools folder and left out unless asked
//! for (docs/tools.md).

use std::path::{Path, PathBuf};

/// Folders that build tools write into, never part of a tools folder's own files.
pub(crate) const BUILD_FOLDERS: &[&str] = &["target", "node_modules", "__pycache__"];

/// A folder or entry a walk could not read, and why.
pub(crate) type Unread = (PathBuf, std::io::Error);

/// Which files under a folder a walk lists, built up from [`Walk::new`].
///
/// ```no_run
/// use std::path::Path;
/// use toolsmith_folder::Walk;
///
/// // Every file a change to could matter, as `serve --watch` looks at them.
/// let files = Walk::new(Path::new("tools")).private(true).max_depth(16).readable_files();
/// ```
#[derive(Clone, Copy)]
pub struct Walk<'a> {
    root: &'a Path,
    private: bool,
    follow_links: bool,
    max_depth: usize,
    prune: &'a dyn Fn(&Path) -> bool,
}

impl<'a> Walk<'a> {
    /// A walk over every file under `root` except hidden (`.`) and private (`_`) names, at
    /// any depth, symbolic links to folders not followed.
    pub fn new(root: &'a Path) -> Self {
        Self {
            root,
            private: false,
            follow_links: false,
            max_depth: usize::MAX,
            prune: &|_| false,
        }
    }

    /// Whether names starting with `_` are listed (and folders so named entered).
    #[must_use]
    pub fn private(self, private: bool) -> Self {
        Self { private, ..self }
    }

    /// Whether a symbolic link to a folder is entered (otherwise it is listed as a file).
    #[must_use]
    pub fn follow_links(self, follow_links: bool) -> Self {
        Self {
            follow_links,
            ..self
        }
    }

    /// Folders more than `depth` levels below the root are not entered.
    #[must_use]
    pub fn max_depth(self, depth: usize) -> Self {
        Self {
            max_depth: depth,
            ..self
        }
    }

    /// Folders for which `prune` is true are not entered.
    #[must_use]
    pub fn prune(self, prune: &'a dyn Fn(&Path) -> bool) -> Self {
        Self { prune, ..self }
    }

    /// The files, sorted.
    ///
    /// # Errors
    ///
    /// The first folder or entry that cannot be read.
    pub fn files(&self) -> std::io::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        self.collect(
            self.root,
            0,
            &mut files,
            &mut |_, error| Err(error),
            &mut false,
        )?;
        Ok(files)
    }

    /// The files, sorted, and each folder or entry below the root that could not be read,
    /// with why: one unreadable subfolder costs only its own files.
    ///
    /// # Errors
    ///
    /// The root itself cannot be read.
    pub(crate) fn files_skipping(&self) -> std::io::Result<(Vec<PathBuf>, Vec<Unread>)> {
        let mut files = Vec::new();
        let mut skipped = Vec::new();
        let root = self.root;
        self.collect(
            root,
            0,
            &mut files,
            &mut |path, error| {
                if path == root {
                    return Err(error);
                }
                skipped.push((path.to_owned(), error));
                Ok(())
            },
            &mut false,
        )?;
        Ok((files, skipped))
    }

    /// The files, sorted, leaving out whatever cannot be read.
    pub fn readable_files(&self) -> Vec<PathBuf> {
        self.readable_files_whole().0
    }

    /// [`Walk::readable_files`], and whether they are all of them: nothing could not be
    /// read, and no folder was left unentered for being too deep.
    pub fn readable_files_whole(&self) -> (Vec<PathBuf>, bool) {
        let mut files = Vec::new();
        let (mut readable, mut too_deep) = (true, false);
        // Skipping every error leaves nothing to fail.
        let _ = self.collect(
            self.root,
            0,
            &mut files,
            &mut |_, _| {
                readable = false;
                Ok(())
            },
            &mut too_deep,
        );
        (files, readable && !too_deep)
    }

    /// Adds the files under `dir` (`depth` levels below the root) to `files`; `failed`
    /// decides whether an error about a path stops the walk (`Err`) or skips the path (`Ok`);
    /// `too_deep` is set when a folder is not entered for its depth.
    fn collect(
        &self,
        dir: &Path,
        depth: usize,
        files: &mut Vec<PathBuf>,
        failed: &mut dyn FnMut(&Path, std::io::Error) -> std::io::Result<()>,
        too_deep: &mut bool,
    ) -> std::io::Result<()> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) => return failed(dir, error),
        };
        // Each folder's names sorted, and folders entered in that order, list the files in
        // the order of their paths without comparing whole paths (which cost a folder of
        // thousands of files more than reading it).
        let mut named = Vec::new();
        for entry in entries {
            match entry {
                Ok(entry) => named.push((entry.file_name(), entry)),
                Err(error) => failed(dir, error)?,
            }
        }
        named.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        for (name, entry) in named {
            if left_out(name.as_encoded_bytes(), self.private) {
                continue;
            }
            let path = entry.path();
            let is_dir = if self.follow_links {
                Ok(path.is_dir())
            } else {
                entry.file_type().map(|kind| kind.is_dir())
            };
            match is_dir {
                Ok(true) if depth >= self.max_depth => *too_deep = true,
                Ok(true) => {
                    if !(self.prune)(&path) {
                        self.collect(&path, depth + 1, files, failed, too_deep)?;
                    }
                }
                Ok(false) => files.push(path),
                Err(error) => failed(&path, error)?,
            }
        }
        Ok(())
    }
}

/// Whether a walk leaves out the file or folder called `name`: hidden (`.`) names always,
/// private (`_`) ones unless it lists them.
pub(crate) fn left_out(name: &[u8], private: bool) -> bool {
    match name.first() {
        Some(b'.') => true,
        Some(b'_') => !private,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "a.star",
            "_private.star",
            ".hidden",
            "sub/b.toml",
            "sub/deeper/c.star",
            "_helpers/d.star",
            "skipped/e.star",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        dir
    }

    fn relative(root: &Path, files: &[PathBuf]) -> Vec<String> {
        files
            .iter()
            .map(|path| path.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    /// Sorting each folder's names lists the files in the order of their paths.
    #[test]
    fn files_come_in_the_order_of_their_paths() {
        let dir = tempfile::tempdir().unwrap();
        for file in ["a-b", "a/z", "a.txt", "ab/c", "a/b/c", "B", "a/a b"] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let files = Walk::new(dir.path()).files().unwrap();
        let mut sorted = files.clone();
        sorted.sort();
        assert_eq!(files, sorted);
        assert_eq!(files.len(), 7);
    }

    #[test]
    fn leaves_out_hidden_and_private_names_by_default() {
        let dir = folder();
        let files = Walk::new(dir.path()).files().unwrap();
        assert_eq!(
            relative(dir.path(), &files),
            [
                "a.star",
                "skipped/e.star",
                "sub/b.toml",
                "sub/deeper/c.star"
            ]
        );
    }

    #[test]
    fn private_names_on_request_hidden_never() {
        let dir = folder();
        let files = Walk::new(dir.path()).private(true).readable_files();
        assert_eq!(
            relative(dir.path(), &files),
            [
                "_helpers/d.star",
                "_private.star",
                "a.star",
                "skipped/e.star",
                "sub/b.toml",
                "sub/deeper/c.star"
            ]
        );
    }

    #[test]
    fn pruned_and_too_deep_folders_are_not_entered() {
        let dir = folder();
        let prune = |path: &Path| path.ends_with("skipped");
        let files = Walk::new(dir.path())
            .prune(&prune)
            .max_depth(1)
            .files()
            .unwrap();
        assert_eq!(relative(dir.path(), &files), ["a.star", "sub/b.toml"]);
    }

    #[test]
    fn a_missing_root_fails_or_lists_nothing() {
        let dir = folder();
        let missing = dir.path().join("missing");
        assert!(Walk::new(&missing).files().is_err());
        assert!(Walk::new(&missing).readable_files().is_empty());
    }
}
