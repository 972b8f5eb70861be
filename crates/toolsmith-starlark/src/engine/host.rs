//! What a running tool may reach outside its sandbox, and only as its `permissions` grant:
//! files under the folders `fs.read` and `fs.write` name, and the environment variables
//! `env` names (docs/tools.md, "The language and the sandbox").
//!
//! A relative path, in a call and in a grant alike, means the tools folder (the tool's own
//! files, which must work under any client); `root:PATH` means the client's root (the
//! tools folder when the client sent none). A path is checked after symbolic
//! links and `..` are resolved, so neither leads out of a granted folder, and the file is
//! then opened along that checked path without following any link (see [`open`]).

use std::fmt::Write as _;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;
use toolsmith_model::{PermissionFamily, ToolDefinition};

pub(crate) use crate::net::READ_LIMIT;

/// What a file is opened for, and the permission that allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

impl Access {
    fn permission(self) -> PermissionFamily {
        match self {
            Self::Read => PermissionFamily::FsRead,
            Self::Write => PermissionFamily::FsWrite,
        }
    }
}

/// The prefix of a path or grant that means the client's root, not the tools folder:
/// `root:notes/` (docs/tools.md, "Which folder a path means").
pub(crate) const ROOT_PREFIX: &str = "root:";

/// The two places a relative path may mean: the tools folder (the tool's own files, the
/// default) and the client's root (`root:` paths; the tools folder when the client sent no
/// roots). Both canonical.
#[derive(Debug, Clone)]
pub(crate) struct Places {
    folder: PathBuf,
    root: PathBuf,
}

/// Which of the [`Places`] a path or grant names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Relative to the tools folder.
    Folder,
    /// `root:`, relative to the client's root.
    Root,
    /// Absolute.
    Absolute,
}

impl Places {
    /// The tools folder `folder` and the call's working directory `root` (the client's root,
    /// or the tools folder).
    pub(crate) fn new(folder: &Path, root: &Path) -> Self {
        let canonical =
            |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        Self {
            folder: canonical(folder),
            root: canonical(root),
        }
    }

    /// `text` (a path or grant) as the place it names, that place's folder, and the rest.
    fn split<'t>(&self, text: &'t str) -> (Place, &Path, &'t str) {
        match text.strip_prefix(ROOT_PREFIX) {
            Some(rest) => (Place::Root, &self.root, rest),
            None if Path::new(text).is_absolute() => (Place::Absolute, &self.folder, text),
            None => (Place::Folder, &self.folder, text),
        }
    }

    /// The folder a grant names, absolute: `data/`, `data/*` and `data/**` all mean `data`
    /// of the tools folder; `root:data/` that of the client's root; `*` means `/` and
    /// `root:*` (or `root:`) the whole client's root.
    fn grant(&self, grant: &str) -> PathBuf {
        match self.split(grant) {
            (Place::Root, root, rest) => {
                let folder = rest.trim_end_matches("**").trim_end_matches('*');
                root.join(folder)
            }
            (_, folder, rest) => folder.join(grant_folder(rest)),
        }
    }

    /// The grant to suggest for `target`'s folder, written the way `path` was: relative to
    /// the tools folder, `root:` and relative to the client's root, or absolute.
    fn suggestion(&self, path: &str, target: &Path) -> String {
        let folder = target.parent().unwrap_or(target);
        let (place, base, _) = self.split(path);
        let relative = || {
            folder.strip_prefix(base).ok().map(|relative| {
                if relative.as_os_str().is_empty() {
                    ".".to_owned()
                } else {
                    format!("{}/", relative.display())
                }
            })
        };
        match place {
            Place::Folder => relative(),
            Place::Root => relative().map(|relative| format!("{ROOT_PREFIX}{relative}")),
            Place::Absolute => None,
        }
        .unwrap_or_else(|| folder.display().to_string())
    }
}

/// `path` as an absolute path with links resolved, if `definition`'s permissions allow
/// `access` to it; otherwise an error saying what to grant.
///
/// A relative `path` (and grant) means the tools folder, `root:PATH` the client's root
/// ([`Places`]). A file that does not exist inside a grant is "not found"; outside every
/// grant a path is refused whether it exists or not, so a tool cannot learn what exists
/// there.
pub(crate) fn permitted(
    definition: &ToolDefinition,
    places: &Places,
    path: &str,
    access: Access,
) -> Result<PathBuf, String> {
    let permission = access.permission();
    let granted = definition.permissions.family(permission);
    let folders: Vec<PathBuf> = granted
        .iter()
        .filter_map(|grant| resolved(&places.grant(grant), Access::Read).ok())
        .collect();
    let inside = |target: &Path| folders.iter().any(|folder| target.starts_with(folder));
    let (_, base, rest) = places.split(path);
    let joined = base.join(rest);
    let target = match resolved(&joined, access) {
        Ok(target) if inside(&target) => return Ok(target),
        Ok(target) => target,
        Err(error) => {
            let target = lexical(&joined);
            if inside(&target) {
                if error.kind() == std::io::ErrorKind::NotFound {
                    return Err(format!("`{path}` was not found (no {})", target.display()));
                }
                return Err(format!("`{path}`: {error}"));
            }
            target
        }
    };
    let suggestion = places.suggestion(path, &target);
    let mut message = if granted.is_empty() {
        format!(
            "`{path}`: the tool `{}` has no `{permission}` permission",
            definition.name
        )
    } else {
        format!(
            "`{path}` ({}) is outside the tool's `{permission}` permission ({})",
            target.display(),
            granted.join(", ")
        )
    };
    let _ = write!(
        message,
        "; grant its folder: permissions = {{\"{permission}\": [\"{suggestion}\"]}}"
    );
    if places.root != places.folder && places.split(path).0 == Place::Folder {
        let _ = write!(
            message,
            " (a relative path means the tools folder; write `{ROOT_PREFIX}{path}` for the client's root)"
        );
    }
    message.push_str(&withheld_note(definition, permission));
    Err(message)
}

/// For a package's tool that asked for `family` and had it withheld by the host's
/// `[packages.NAME] allow` (docs/packages.md), what a message must add: the grant is the
/// host's to make, not the tool's. Empty otherwise.
pub(crate) fn withheld_note(definition: &ToolDefinition, family: PermissionFamily) -> String {
    let Some(withheld) = &definition.withheld else {
        return String::new();
    };
    let asked = withheld.permissions.family(family);
    if asked.is_empty() {
        return String::new();
    }
    let asked: Vec<String> = asked.iter().map(|grant| format!("`{grant}`")).collect();
    format!(
        "; the tool asked for `{family}` {}, which the host's `[packages.{}] allow` does not grant",
        asked.join(", "),
        withheld.package
    )
}

/// The folder an `fs.read` or `fs.write` grant names: `data/`, `data/*` and `data/**` all
/// mean `data`; `*` means `/`.
pub fn grant_folder(grant: &str) -> &str {
    let folder = grant.trim_end_matches("**").trim_end_matches('*');
    if folder.is_empty() { "/" } else { folder }
}

/// `path` made absolute with links and `..` resolved. A file to be written need not exist
/// yet; its folder must.
fn resolved(path: &Path, access: Access) -> std::io::Result<PathBuf> {
    match (std::fs::canonicalize(path), access) {
        (Ok(path), _) => Ok(path),
        (Err(error), Access::Write) if error.kind() == std::io::ErrorKind::NotFound => {
            let (Some(parent), Some(Component::Normal(name))) =
                (path.parent(), path.components().next_back())
            else {
                return Err(error);
            };
            Ok(std::fs::canonicalize(parent)?.join(name))
        }
        (Err(error), _) => Err(error),
    }
}

/// Opens `path`, as [`permitted`] returned it (absolute, links resolved), for `access`:
/// for reading, or for writing (created if missing, else emptied).
///
/// Each folder on the way and the file itself are opened without following symbolic links,
/// so what is opened is the file that was checked: a link made at the checked path (before
/// or after the check) fails the call instead of leading out of the grant
/// (docs/faults.md). Only regular files are opened: a FIFO, device or socket could block the call's
/// thread forever, so the file is opened non-blocking and refused when it
/// is none. `shown` is the path as the tool gave it, for messages.
pub(crate) fn open(path: &Path, access: Access, shown: &str) -> Result<File, String> {
    let failed = |errno: Errno| match errno {
        // The file itself is a link: only a dangling one passes the check (a write to a new
        // name), or one made since.
        Errno::ELOOP => format!(
            "`{shown}` is a symbolic link to a missing file (or was replaced by one); a tool \
             writes through no such link: remove it, or write to another name"
        ),
        // A FIFO without a reader (opened to write) or a socket.
        Errno::ENXIO => not_regular(shown, "a FIFO, device or socket"),
        // A folder on the way is a link: it was replaced since the check.
        Errno::ENOTDIR => format!("`{shown}`: a folder on its path changed while it was opened"),
        errno => format!("`{shown}`: {}", std::io::Error::from(errno)),
    };
    let mut folder: OwnedFd = File::open("/")
        .map_err(|error| format!("`{shown}`: {error}"))?
        .into();
    let mut names = path.components().filter_map(|component| match component {
        Component::Normal(name) => Some(name),
        _ => None,
    });
    let Some(file_name) = names.next_back() else {
        return Err(format!("`{shown}` is a folder, not a file"));
    };
    let walk = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    for name in names {
        folder = openat(&folder, name, walk, Mode::empty()).map_err(failed)?;
    }
    let flags = OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let (flags, mode) = match access {
        Access::Read => (flags | OFlag::O_RDONLY, Mode::empty()),
        Access::Write => (
            flags | OFlag::O_WRONLY | OFlag::O_CREAT,
            Mode::from_bits_truncate(0o666),
        ),
    };
    let file = File::from(openat(&folder, file_name, flags, mode).map_err(failed)?);
    let metadata = file
        .metadata()
        .map_err(|error| format!("`{shown}`: {error}"))?;
    if !metadata.is_file() {
        let kind = if metadata.is_dir() {
            "a folder"
        } else {
            "a FIFO, device or socket"
        };
        return Err(not_regular(shown, kind));
    }
    if access == Access::Write {
        file.set_len(0)
            .map_err(|error| format!("`{shown}`: {error}"))?;
    }
    Ok(file)
}

fn not_regular(shown: &str, kind: &str) -> String {
    format!("`{shown}` is {kind}, not a regular file; a tool reads and writes regular files only")
}

/// `path` with `.` and `..` taken away by their names alone (for a path that does not
/// exist, so has no links to follow).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether `definition`'s `env` permission names `variable` (or is `*`).
pub(crate) fn env_permitted(definition: &ToolDefinition, variable: &str) -> Result<(), String> {
    let granted = &definition.permissions.env;
    if granted.iter().any(|name| name == variable || name == "*") {
        return Ok(());
    }
    Err(format!(
        "the tool `{}` may not read the environment variable `{variable}`; grant it: \
         permissions = {{\"env\": [\"{variable}\"]}}{}",
        definition.name,
        withheld_note(definition, PermissionFamily::Env)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(read: &[&str], write: &[&str]) -> ToolDefinition {
        let mut definition =
            ToolDefinition::new("notes", "Reads notes.", toolsmith_model::JsonObject::new());
        definition.permissions.fs_read = read.iter().map(|s| (*s).to_owned()).collect();
        definition.permissions.fs_write = write.iter().map(|s| (*s).to_owned()).collect();
        definition
    }

    fn base() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data/deep")).unwrap();
        std::fs::write(dir.path().join("data/deep/a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        dir
    }

    #[test]
    fn a_file_under_a_granted_folder_is_permitted() {
        let dir = base();
        for grant in ["data", "data/", "data/*", "data/**"] {
            let found = permitted(
                &tool(&[grant], &[]),
                &Places::new(dir.path(), dir.path()),
                "data/deep/a.txt",
                Access::Read,
            );
            let expected = dir.path().join("data/deep/a.txt").canonicalize().unwrap();
            assert_eq!(found, Ok(expected), "grant {grant}");
        }
    }

    #[test]
    fn dot_dot_and_links_do_not_lead_out_of_a_grant() {
        let dir = base();
        let definition = tool(&["data"], &["data"]);
        let error = permitted(
            &definition,
            &Places::new(dir.path(), dir.path()),
            "data/../secret.txt",
            Access::Read,
        )
        .unwrap_err();
        assert!(
            error.contains("outside the tool's `fs.read` permission"),
            "{error}"
        );
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), dir.path().join("data/link"))
            .unwrap();
        assert!(
            permitted(
                &definition,
                &Places::new(dir.path(), dir.path()),
                "data/link",
                Access::Read
            )
            .is_err()
        );
        assert!(
            permitted(
                &definition,
                &Places::new(dir.path(), dir.path()),
                "data/link",
                Access::Write
            )
            .is_err()
        );
    }

    #[test]
    fn reading_needs_fs_read_and_writing_fs_write() {
        let dir = base();
        let reader = tool(&["data"], &[]);
        assert!(
            permitted(
                &reader,
                &Places::new(dir.path(), dir.path()),
                "data/deep/a.txt",
                Access::Read
            )
            .is_ok()
        );
        let error = permitted(
            &reader,
            &Places::new(dir.path(), dir.path()),
            "data/new.txt",
            Access::Write,
        )
        .unwrap_err();
        assert!(error.contains("has no `fs.write` permission"), "{error}");
        assert!(error.contains(r#"permissions = {"fs.write": ["#), "{error}");
        let writer = tool(&[], &["data"]);
        let new = permitted(
            &writer,
            &Places::new(dir.path(), dir.path()),
            "data/new.txt",
            Access::Write,
        )
        .unwrap();
        assert_eq!(new.file_name().unwrap(), "new.txt");
    }

    #[test]
    fn a_missing_file_to_read_or_folder_to_write_in_is_an_error() {
        let dir = base();
        let definition = tool(&["data"], &["data"]);
        let error = permitted(
            &definition,
            &Places::new(dir.path(), dir.path()),
            "data/nope.txt",
            Access::Read,
        )
        .unwrap_err();
        assert!(
            error.starts_with("`data/nope.txt` was not found (no "),
            "{error}"
        );
        assert!(
            permitted(
                &definition,
                &Places::new(dir.path(), dir.path()),
                "data/nope/new.txt",
                Access::Write
            )
            .is_err()
        );
    }

    #[test]
    fn what_exists_outside_a_grant_is_not_told() {
        let dir = base();
        let definition = tool(&["data"], &[]);
        let missing = permitted(
            &definition,
            &Places::new(dir.path(), dir.path()),
            "nope.txt",
            Access::Read,
        )
        .unwrap_err();
        let present = permitted(
            &definition,
            &Places::new(dir.path(), dir.path()),
            "secret.txt",
            Access::Read,
        )
        .unwrap_err();
        assert!(
            missing.contains("outside the tool's `fs.read` permission"),
            "{missing}"
        );
        assert!(
            present.contains("outside the tool's `fs.read` permission"),
            "{present}"
        );
        assert!(!missing.contains("No such file"), "{missing}");
    }

    #[test]
    fn relative_paths_mean_the_tools_folder_and_root_paths_the_clients_root() {
        // Under a client that sent roots, `notes/` next to the tool was looked up in the
        // user's project: "outside the tool's `fs.read` permission", with a grant in the
        // project suggested.
        let folder = base();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join("data")).unwrap();
        std::fs::write(project.path().join("data/b.txt"), "b").unwrap();
        let places = Places::new(folder.path(), project.path());
        let own = permitted(
            &tool(&["data"], &[]),
            &places,
            "data/deep/a.txt",
            Access::Read,
        );
        let expected = folder
            .path()
            .join("data/deep/a.txt")
            .canonicalize()
            .unwrap();
        assert_eq!(own, Ok(expected));
        let theirs = permitted(
            &tool(&["root:data"], &[]),
            &places,
            "root:data/b.txt",
            Access::Read,
        );
        let expected = project.path().join("data/b.txt").canonicalize().unwrap();
        assert_eq!(theirs, Ok(expected));
        // A tools-folder grant does not reach the client's root, nor the reverse.
        let error = permitted(
            &tool(&["data"], &[]),
            &places,
            "root:data/b.txt",
            Access::Read,
        )
        .unwrap_err();
        assert!(
            error.contains(r#"permissions = {"fs.read": ["root:data/"]}"#),
            "{error}"
        );
        let error = permitted(
            &tool(&["root:data"], &[]),
            &places,
            "data/deep/a.txt",
            Access::Read,
        )
        .unwrap_err();
        assert!(
            error.contains(r#"permissions = {"fs.read": ["data/deep/"]}"#),
            "{error}"
        );
        assert!(
            error.contains("write `root:data/deep/a.txt` for the client's root"),
            "{error}"
        );
        // A missing file inside a grant is not found, wherever the grant points.
        let error = permitted(
            &tool(&["data"], &[]),
            &places,
            "data/none.txt",
            Access::Read,
        )
        .unwrap_err();
        assert!(error.contains("was not found"), "{error}");
        let error = permitted(
            &tool(&["root:*"], &[]),
            &places,
            "root:none.txt",
            Access::Read,
        )
        .unwrap_err();
        assert!(error.contains("was not found"), "{error}");
    }

    #[test]
    fn environment_variables_need_their_name_granted() {
        let mut definition = tool(&[], &[]);
        definition.permissions.env = vec!["API_KEY".into()];
        assert!(env_permitted(&definition, "API_KEY").is_ok());
        let error = env_permitted(&definition, "HOME").unwrap_err();
        assert!(
            error.contains(r#"permissions = {"env": ["HOME"]}"#),
            "{error}"
        );
    }
}
