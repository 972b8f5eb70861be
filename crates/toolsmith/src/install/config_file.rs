//! A client's configuration file on disk, read and replaced without damaging or exposing
//! it. Every format's edit goes through [`ConfigFile::update`]: a symlink is followed and its
//! target edited in place, only a regular file is opened (never blocking on a FIFO), a
//! read-only file is refused, the new file keeps the old one's mode and owner, a lock file
//! beside it serialises concurrent installs, the file is compared with what was read just
//! before the rename (a client that rewrote it meanwhile gets its change kept, the edit is
//! made again), and the file as it was before Toolsmith first changed it is kept once as
//! `FILE.toolsmith.bak`, never over a backup of the user's own.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::Hinted;

/// How many times an edit is made again when the file changed under it.
const ATTEMPTS: usize = 5;

/// How long an install waits for another one editing the same file.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Symbolic links followed before giving up, as the kernel's own limit.
const MAX_LINKS: usize = 40;

/// A client's configuration file: the path as named, and the file it leads to.
#[derive(Debug)]
pub(crate) struct ConfigFile {
    /// The path as the user or the client table names it, for messages.
    path: PathBuf,
    /// `path` with every symbolic link followed: the file that is read and replaced.
    target: PathBuf,
}

/// What an edit of the file's text gives: the new text (`None` to leave the file as it
/// is) and what the edit did.
pub(crate) struct Edit<T> {
    pub(crate) text: Option<String>,
    pub(crate) outcome: T,
}

/// A finished update (or, for a preview, what it would be).
pub(crate) struct Updated<T> {
    /// The file as read, or `None` when there was none.
    pub(crate) before: Option<String>,
    /// The file afterwards.
    pub(crate) after: String,
    pub(crate) outcome: T,
    /// The file as it was before Toolsmith first changed it, when there is one.
    pub(crate) backup: Option<PathBuf>,
}

/// The file as read: its text and metadata, or nothing there.
struct Contents {
    text: String,
    metadata: Metadata,
}

impl ConfigFile {
    /// The file at `path`, its symbolic links followed (a dangling link leads to the file
    /// it names, which an update creates).
    pub(crate) fn new(path: &Path) -> Result<Self, Hinted> {
        let target = resolve(path).map_err(|error| {
            Hinted::new(format!("cannot follow the links of `{}`", path.display())).caused_by(error)
        })?;
        Ok(Self {
            path: path.to_owned(),
            target,
        })
    }

    /// The file's text, or `None` when there is no file.
    pub(crate) fn read(&self) -> Result<Option<String>, Hinted> {
        Ok(self.contents()?.map(|contents| contents.text))
    }

    /// `edit` applied to the file as read, nothing written: what [`Self::update`] would do.
    pub(crate) fn preview<T>(
        &self,
        edit: impl FnOnce(Option<&str>) -> Result<Edit<T>, Hinted>,
    ) -> Result<Updated<T>, Hinted> {
        let before = self.read()?;
        let Edit { text, outcome } = edit(before.as_deref())?;
        let after = text.unwrap_or_else(|| before.clone().unwrap_or_default());
        Ok(Updated {
            before,
            after,
            outcome,
            backup: None,
        })
    }

    /// Applies `edit` to the file and writes the result, keeping its mode and owner.
    ///
    /// Holds `FILE.toolsmith.lock` throughout, so concurrent installs take turns. When the
    /// file changes between the read and the rename (a client saving it), the edit is made
    /// again on the new text, up to [`ATTEMPTS`] times. Refuses a read-only file, a file that
    /// is not a regular one, and a file whose owner cannot be kept.
    pub(crate) fn update<T>(
        &self,
        mut edit: impl FnMut(Option<&str>) -> Result<Edit<T>, Hinted>,
    ) -> Result<Updated<T>, Hinted> {
        if let Some(parent) = self.folder() {
            std::fs::create_dir_all(parent).map_err(|error| self.cannot_write(error))?;
        }
        let _lock = self.lock()?;
        for _ in 0..ATTEMPTS {
            let contents = self.contents()?;
            if let Some(contents) = &contents {
                self.check_writable(&contents.metadata)?;
            }
            let before = contents.as_ref().map(|contents| contents.text.clone());
            let Edit { text, outcome } = edit(before.as_deref())?;
            let Some(after) = text else {
                return Ok(Updated {
                    after: before.clone().unwrap_or_default(),
                    before,
                    outcome,
                    backup: self.existing_backup(),
                });
            };
            let temporary = self.sibling(".toolsmith-tmp");
            let written = self.write_temporary(&temporary, &after, contents.as_ref());
            if let Err(error) = written {
                let _ = std::fs::remove_file(&temporary);
                return Err(error);
            }
            let now = self.contents().map(|now| now.map(|now| now.text));
            if now.as_ref().ok() != Some(&before) {
                let _ = std::fs::remove_file(&temporary);
                now?;
                continue;
            }
            let backup = match &contents {
                Some(contents) => match self.keep_backup(contents) {
                    Ok(backup) => Some(backup),
                    Err(error) => {
                        let _ = std::fs::remove_file(&temporary);
                        return Err(error);
                    }
                },
                None => None,
            };
            std::fs::rename(&temporary, &self.target).map_err(|error| {
                let _ = std::fs::remove_file(&temporary);
                self.cannot_write(error)
            })?;
            return Ok(Updated {
                before,
                after,
                outcome,
                backup,
            });
        }
        Err(Hinted::new(format!(
            "`{}` kept changing while toolsmith edited it; it is left as it is",
            self.path.display()
        ))
        .hint("quit the program that keeps writing it (the client), then run the command again"))
    }

    /// The folder the target is in, when the path names one.
    fn folder(&self) -> Option<&Path> {
        self.target
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
    }

    /// The target's path with `suffix` added: a file beside it.
    fn sibling(&self, suffix: &str) -> PathBuf {
        let mut other = self.target.as_os_str().to_owned();
        other.push(suffix);
        PathBuf::from(other)
    }

    /// Waits for `FILE.toolsmith.lock`, an advisory lock on a file that stays (the config
    /// file itself is replaced by a rename, so a lock on it would guard the old inode).
    fn lock(&self) -> Result<File, Hinted> {
        let path = self.sibling(".toolsmith.lock");
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(|error| {
            Hinted::new(format!("cannot create the lock file `{}`", path.display()))
                .caused_by(error)
        })?;
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Hinted::new(format!(
                        "another toolsmith has been editing `{}` for {} seconds",
                        self.path.display(),
                        LOCK_WAIT.as_secs()
                    ))
                    .hint(format!(
                        "wait for it to finish; if none is running, delete `{}`",
                        path.display()
                    )));
                }
                Err(std::fs::TryLockError::Error(error)) => {
                    return Err(
                        Hinted::new(format!("cannot lock `{}`", path.display())).caused_by(error)
                    );
                }
            }
        }
    }

    /// The file's text and metadata, `None` when there is none. Opens without blocking and
    /// refuses anything but a regular file, so a FIFO at the path cannot hang the command.
    fn contents(&self) -> Result<Option<Contents>, Hinted> {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(
            &mut options,
            nix::fcntl::OFlag::O_NONBLOCK.bits(),
        );
        let mut file = match options.open(&self.target) {
            Ok(file) => file,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(self.cannot_read(error)),
        };
        let metadata = file.metadata().map_err(|error| self.cannot_read(error))?;
        if !metadata.is_file() {
            return Err(Hinted::new(format!(
                "`{}` is {}, not a regular file; toolsmith edits only regular files",
                self.path.display(),
                kind(&metadata)
            ))
            .hint("name the client's file with --config PATH, or remove what is at that path"));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|error| self.cannot_read(error))?;
        let text = String::from_utf8(bytes).map_err(|error| self.cannot_read(error))?;
        Ok(Some(Contents { text, metadata }))
    }

    /// Refuses a file the user has made read-only: replacing it by a rename would succeed
    /// (the folder is writable) and undo their protection.
    fn check_writable(&self, metadata: &Metadata) -> Result<(), Hinted> {
        let denied = metadata.permissions().readonly()
            || OpenOptions::new()
                .write(true)
                .open(&self.target)
                .is_err_and(|error| error.kind() == ErrorKind::PermissionDenied);
        if !denied {
            return Ok(());
        }
        Err(Hinted::new(format!(
            "`{}` is read-only{}; it is left as it is",
            self.path.display(),
            mode_note(metadata)
        ))
        .hint(format!(
            "to let toolsmith edit it, make it writable (chmod u+w {}); or add the entry by hand (--dry-run shows it)",
            self.target.display()
        )))
    }

    /// Writes `text` to `temporary` with the mode and owner of the file as read.
    fn write_temporary(
        &self,
        temporary: &Path,
        text: &str,
        old: Option<&Contents>,
    ) -> Result<(), Hinted> {
        // Left over from an interrupted install: this one holds the lock.
        match std::fs::remove_file(temporary) {
            Err(error) if error.kind() != ErrorKind::NotFound => {
                return Err(self.cannot_write(error));
            }
            _ => {}
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        // Private until the old mode is set: the file may hold credentials.
        #[cfg(unix)]
        if old.is_some() {
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        }
        let mut file = options
            .open(temporary)
            .map_err(|error| self.cannot_write(error))?;
        if let Some(old) = old {
            self.keep_owner_and_mode(&file, &old.metadata)?;
        }
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|error| self.cannot_write(error))
    }

    /// Gives `file` the owner, group and mode in `metadata`.
    #[cfg(unix)]
    fn keep_owner_and_mode(&self, file: &File, metadata: &Metadata) -> Result<(), Hinted> {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let now = file.metadata().map_err(|error| self.cannot_write(error))?;
        let owner = (metadata.uid(), metadata.gid());
        if (now.uid(), now.gid()) != owner {
            std::os::unix::fs::fchown(file, Some(owner.0), Some(owner.1)).map_err(|error| {
                Hinted::new(format!(
                    "cannot keep the owner of `{}` (user {}, group {}); it is left as it is",
                    self.path.display(),
                    owner.0,
                    owner.1
                ))
                .caused_by(error)
                .hint("run the command as the user who owns the file")
            })?;
        }
        file.set_permissions(std::fs::Permissions::from_mode(metadata.mode() & 0o7777))
            .map_err(|error| self.cannot_write(error))
    }

    #[cfg(not(unix))]
    fn keep_owner_and_mode(&self, file: &File, metadata: &Metadata) -> Result<(), Hinted> {
        file.set_permissions(metadata.permissions())
            .map_err(|error| self.cannot_write(error))
    }

    /// Keeps the file as read in `FILE.toolsmith.bak`, unless an earlier install already
    /// kept the one from before Toolsmith's first change there. The user's own `FILE.bak`
    /// is never touched.
    fn keep_backup(&self, contents: &Contents) -> Result<PathBuf, Hinted> {
        let path = self.backup_path();
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let failed = |error: std::io::Error| {
            Hinted::new(format!("cannot keep a backup in `{}`", path.display())).caused_by(error)
        };
        let mut file = match options.open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == ErrorKind::AlreadyExists => return Ok(path),
            Err(error) => return Err(failed(error)),
        };
        let written = self
            .keep_owner_and_mode(&file, &contents.metadata)
            .and_then(|()| {
                file.write_all(contents.text.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(failed)
            });
        if written.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        written.map(|()| path)
    }

    fn backup_path(&self) -> PathBuf {
        self.sibling(".toolsmith.bak")
    }

    fn existing_backup(&self) -> Option<PathBuf> {
        Some(self.backup_path()).filter(|path| path.is_file())
    }

    fn cannot_read(&self, error: impl std::error::Error + Send + Sync + 'static) -> Hinted {
        Hinted::new(format!("cannot read `{}`", self.path.display())).caused_by(error)
    }

    fn cannot_write(&self, error: std::io::Error) -> Hinted {
        Hinted::new(format!(
            "cannot write `{}`; it is left as it is",
            self.path.display()
        ))
        .caused_by(error)
    }
}

/// `path` with its symbolic links followed, also when the last one dangles.
fn resolve(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_owned();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) => parent.join(link),
                    None => link,
                };
            }
            Err(error) if error.kind() != ErrorKind::NotFound => return Err(error),
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a row"
    )))
}

/// What a path that is not a regular file is, in words.
fn kind(metadata: &Metadata) -> &'static str {
    let file_type = metadata.file_type();
    if file_type.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
    }
    "something else"
}

/// ` (mode 0444)` on Unix.
fn mode_note(metadata: &Metadata) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        format!(" (mode {:04o})", metadata.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends `line` to the file's text.
    fn append(line: &str) -> impl FnMut(Option<&str>) -> Result<Edit<()>, Hinted> + '_ {
        move |before| {
            Ok(Edit {
                text: Some(format!("{}{line}\n", before.unwrap_or_default())),
                outcome: (),
            })
        }
    }

    #[test]
    fn a_change_made_while_editing_is_kept_and_the_edit_made_again() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("settings.txt");
        std::fs::write(&path, "first\n").unwrap();
        let file = ConfigFile::new(&path).unwrap();
        // A client saves the file between toolsmith's read and its rename: its line would
        // be lost if the edit of the stale text were renamed over it.
        let mut calls = 0;
        let mut add_ours = append("ours");
        let updated = file
            .update(|before| {
                calls += 1;
                if calls == 1 {
                    std::fs::write(&path, "first\nclient's\n").unwrap();
                }
                add_ours(before)
            })
            .unwrap();
        assert_eq!(calls, 2);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "first\nclient's\nours\n"
        );
        assert_eq!(updated.before.as_deref(), Some("first\nclient's\n"));
    }

    #[test]
    fn a_file_that_never_stops_changing_is_refused_and_left_as_it_is() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("settings.txt");
        std::fs::write(&path, "0\n").unwrap();
        let file = ConfigFile::new(&path).unwrap();
        let mut calls = 0;
        let error = file
            .update(|before| {
                calls += 1;
                std::fs::write(&path, format!("{calls}\n")).unwrap();
                append("ours")(before)
            })
            .err()
            .unwrap();
        assert!(error.to_string().contains("kept changing"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "5\n");
        assert!(!file.sibling(".toolsmith-tmp").exists());
    }

    #[test]
    fn a_dangling_link_leads_to_the_file_it_names() {
        let folder = tempfile::tempdir().unwrap();
        let link = folder.path().join("link.json");
        #[cfg(unix)]
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        #[cfg(unix)]
        assert_eq!(resolve(&link).unwrap(), folder.path().join("real.json"));
    }
}
