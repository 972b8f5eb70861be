//! The paths the dev tools are given: relative to the tools folder, resolved with links
//! followed, and refused when they leave it, so a client can read and write only inside
//! the folder it was given (docs/profiles.md, "The toolsmith-dev profile").

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The largest file the dev tools read or write: tool files are small, and a result this
/// size is already a lot of a model's context.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Why a path was refused.
#[derive(Debug)]
pub(crate) enum PathError {
    /// No path was given.
    Empty,
    /// `/etc/passwd`: only paths relative to the folder are taken.
    Absolute(String),
    /// `../x.star`, or a link that points out of the folder.
    Outside {
        /// The path as given.
        path: String,
        /// Where it leads, when a link took it there.
        resolved: Option<PathBuf>,
    },
    /// The file (or a folder on its way) does not exist.
    NotFound(String),
    /// A link whose target does not exist: where a write through it would land is not
    /// known until it is written.
    DanglingLink(String),
    /// The path is a folder, not a file.
    Folder(String),
    /// The file could not be looked at.
    Io(String, std::io::Error),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "no path given; name a file relative to the tools folder"),
            Self::Absolute(path) => write!(
                f,
                "`{path}` is an absolute path; give a path relative to the tools folder, e.g. `weather.star`"
            ),
            Self::Outside {
                path,
                resolved: None,
            } => write!(
                f,
                "`{path}` leaves the tools folder; only files inside it can be read or written"
            ),
            Self::Outside {
                path,
                resolved: Some(resolved),
            } => write!(
                f,
                "`{path}` leaves the tools folder (a link leads to `{}`); only files inside it can be read or written",
                resolved.display()
            ),
            Self::NotFound(path) => write!(
                f,
                "`{path}` does not exist in the tools folder; `toolsmith_list_tools` lists its files"
            ),
            Self::DanglingLink(path) => write!(
                f,
                "`{path}` is a link to a file that does not exist; write the file it points to instead"
            ),
            Self::Folder(path) => write!(f, "`{path}` is a folder, not a file"),
            Self::Io(path, error) => write!(f, "cannot look at `{path}`: {error}"),
        }
    }
}

/// The existing file `path` names inside `root` (canonical), links followed.
pub(crate) fn existing_file(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    let relative = relative(path)?;
    let resolved = root.join(relative).canonicalize().map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            PathError::NotFound(path.to_owned())
        } else {
            PathError::Io(path.to_owned(), error)
        }
    })?;
    let resolved = inside(root, path, resolved)?;
    if resolved.is_dir() {
        return Err(PathError::Folder(path.to_owned()));
    }
    Ok(resolved)
}

/// Where a write of `path` inside `root` (canonical) lands: the file, links followed, or
/// the new file under the deepest folder that exists. Refused when that is outside `root`.
pub(crate) fn writable_file(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    let relative = relative(path)?;
    let mut resolved = root.to_owned();
    // Whether a component named something that does not exist yet: from there on, the
    // path is only names to create.
    let mut creating = false;
    for component in relative.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if creating => {
                return Err(PathError::Outside {
                    path: path.to_owned(),
                    resolved: None,
                });
            }
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                let next = resolved.join(name);
                if creating {
                    resolved = next;
                    continue;
                }
                match std::fs::symlink_metadata(&next) {
                    Ok(metadata) if metadata.file_type().is_symlink() => {
                        resolved = next
                            .canonicalize()
                            .map_err(|_| PathError::DanglingLink(path.to_owned()))?;
                    }
                    Ok(_) => resolved = next,
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                        creating = true;
                        resolved = next;
                    }
                    Err(error) => return Err(PathError::Io(path.to_owned(), error)),
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::Absolute(path.to_owned()));
            }
        }
    }
    let resolved = inside(root, path, resolved)?;
    if resolved == root || resolved.is_dir() {
        return Err(PathError::Folder(path.to_owned()));
    }
    Ok(resolved)
}

/// `path` as a relative path, refused when empty or absolute.
fn relative(path: &str) -> Result<&Path, PathError> {
    if path.trim().is_empty() {
        return Err(PathError::Empty);
    }
    let relative = Path::new(path);
    if relative.has_root()
        || relative
            .components()
            .any(|component| matches!(component, Component::Prefix(_)))
    {
        return Err(PathError::Absolute(path.to_owned()));
    }
    Ok(relative)
}

/// `resolved`, when it is inside `root`.
fn inside(root: &Path, path: &str, resolved: PathBuf) -> Result<PathBuf, PathError> {
    if resolved.starts_with(root) {
        return Ok(resolved);
    }
    // A `..` that leaves is plain to see; a link that does is worth naming.
    let through_link = !Path::new(path)
        .components()
        .any(|component| component == Component::ParentDir);
    Err(PathError::Outside {
        path: path.to_owned(),
        resolved: through_link.then_some(resolved),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A canonical tools folder with `tool.star`, `sub/`, and a sibling folder outside it.
    fn setup() -> (tempfile::TempDir, PathBuf) {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("tools");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.path().join("outside")).unwrap();
        std::fs::write(root.join("tool.star"), "x = 1\n").unwrap();
        std::fs::write(base.path().join("outside/secret.txt"), "secret").unwrap();
        let root = root.canonicalize().unwrap();
        (base, root)
    }

    #[test]
    fn paths_inside_the_folder_resolve() {
        let (_base, root) = setup();
        assert_eq!(
            existing_file(&root, "tool.star").unwrap(),
            root.join("tool.star")
        );
        assert_eq!(
            existing_file(&root, "./sub/../tool.star").unwrap(),
            root.join("tool.star")
        );
        assert_eq!(
            writable_file(&root, "new/deeper/tool.star").unwrap(),
            root.join("new/deeper/tool.star")
        );
        assert_eq!(
            writable_file(&root, "sub/../other.star").unwrap(),
            root.join("other.star")
        );
    }

    // Writes stay inside the tools folder.
    #[test]
    fn paths_that_leave_the_folder_are_refused() {
        let (_base, root) = setup();
        for path in ["../x.star", "sub/../../x.star", "new/../../x.star"] {
            let error = writable_file(&root, path).unwrap_err();
            assert!(
                matches!(error, PathError::Outside { .. }),
                "{path}: {error}"
            );
        }
        assert!(matches!(
            existing_file(&root, "../outside/secret.txt"),
            Err(PathError::Outside { .. })
        ));
        let absolute = root.join("tool.star").display().to_string();
        assert!(matches!(
            writable_file(&root, &absolute),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(writable_file(&root, ""), Err(PathError::Empty)));
        assert!(matches!(
            writable_file(&root, "sub"),
            Err(PathError::Folder(_))
        ));
    }

    #[test]
    fn links_are_followed_before_deciding() {
        let (base, root) = setup();
        let outside = base.path().join("outside").canonicalize().unwrap();
        std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("secret.star")).unwrap();
        std::os::unix::fs::symlink(outside.join("missing.txt"), root.join("dangling.star"))
            .unwrap();
        std::os::unix::fs::symlink(root.join("tool.star"), root.join("alias.star")).unwrap();

        let error = writable_file(&root, "out/x.star").unwrap_err();
        assert!(error.to_string().contains("a link leads to"), "{error}");
        assert!(matches!(
            writable_file(&root, "secret.star"),
            Err(PathError::Outside { .. })
        ));
        assert!(matches!(
            existing_file(&root, "secret.star"),
            Err(PathError::Outside { .. })
        ));
        assert!(matches!(
            writable_file(&root, "dangling.star"),
            Err(PathError::DanglingLink(_))
        ));
        assert_eq!(
            writable_file(&root, "alias.star").unwrap(),
            root.join("tool.star"),
            "a link inside the folder is written through"
        );
    }
}
