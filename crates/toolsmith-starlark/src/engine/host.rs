//! What a running tool may reach outside its sandbox, and only as its `permissions` grant:
//! files under the folders `fs.read` and `fs.write` name, and the environment variables
//! `env` names (docs/tools.md, "The language and the sandbox").
//!
//! Relative paths, in a call and in a grant alike, are taken from the call's working
//! directory: the client's root, or the tools folder. A path is checked after symbolic
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

/// `path` as an absolute path with links resolved, if `definition`'s permissions allow
/// `access` to it; otherwise an error saying what to grant.
pub(crate) fn permitted(
    definition: &ToolDefinition,
    base: &Path,
    path: &str,
    access: Access,
) -> Result<PathBuf, String> {
    let permission = access.permission();
    let granted = definition.permissions.family(permission);
    let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_owned());
    let folders: Vec<PathBuf> = granted
        .iter()
        .filter_map(|grant| resolved(&base.join(grant_folder(grant)), Access::Read).ok())
        .collect();
    let inside = |target: &Path| folders.iter().any(|folder| target.starts_with(folder));
    let target = match resolved(&base.join(path), access) {
        Ok(target) if inside(&target) => return Ok(target),
        Ok(target) => target,
        // A path that cannot be resolved is reported as such only inside a grant, so a
        // tool cannot learn what exists outside one.
        Err(error) => {
            let target = lexical(&base.join(path));
            if inside(&target) {
                return Err(format!("`{path}`: {error}"));
            }
            target
        }
    };
    let folder = target.parent().unwrap_or(&target).display().to_string();
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
        "; grant its folder: permissions = {{\"{permission}\": [\"{folder}\"]}}"
    );
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
/// or after the check) fails the call instead of leading out of the grant (issue 14, item
/// 8). Only regular files are opened: a FIFO, device or socket could block the call's
/// thread forever (issue 14, item 4), so the file is opened non-blocking and refused when it
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
                dir.path(),
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
        let error =
            permitted(&definition, dir.path(), "data/../secret.txt", Access::Read).unwrap_err();
        assert!(
            error.contains("outside the tool's `fs.read` permission"),
            "{error}"
        );
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), dir.path().join("data/link"))
            .unwrap();
        assert!(permitted(&definition, dir.path(), "data/link", Access::Read).is_err());
        assert!(permitted(&definition, dir.path(), "data/link", Access::Write).is_err());
    }

    #[test]
    fn reading_needs_fs_read_and_writing_fs_write() {
        let dir = base();
        let reader = tool(&["data"], &[]);
        assert!(permitted(&reader, dir.path(), "data/deep/a.txt", Access::Read).is_ok());
        let error = permitted(&reader, dir.path(), "data/new.txt", Access::Write).unwrap_err();
        assert!(error.contains("has no `fs.write` permission"), "{error}");
        assert!(error.contains(r#"permissions = {"fs.write": ["#), "{error}");
        let writer = tool(&[], &["data"]);
        let new = permitted(&writer, dir.path(), "data/new.txt", Access::Write).unwrap();
        assert_eq!(new.file_name().unwrap(), "new.txt");
    }

    #[test]
    fn a_missing_file_to_read_or_folder_to_write_in_is_an_error() {
        let dir = base();
        let definition = tool(&["data"], &["data"]);
        let error = permitted(&definition, dir.path(), "data/nope.txt", Access::Read).unwrap_err();
        assert!(error.starts_with("`data/nope.txt`: "), "{error}");
        assert!(permitted(&definition, dir.path(), "data/nope/new.txt", Access::Write).is_err());
    }

    #[test]
    fn what_exists_outside_a_grant_is_not_told() {
        let dir = base();
        let definition = tool(&["data"], &[]);
        let missing = permitted(&definition, dir.path(), "nope.txt", Access::Read).unwrap_err();
        let present = permitted(&definition, dir.path(), "secret.txt", Access::Read).unwrap_err();
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
