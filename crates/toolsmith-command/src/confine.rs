//! [`Confinement`]: what the programs a package's tool starts may touch (docs/packages.md,
//! "Command tools of a package"). A package's tool runs its call inside [`confined`]; every
//! program started on that thread meanwhile (a command tool's process, a worker, an init)
//! is then either refused, or started from a short-lived thread that first restricts itself
//! with Landlock, so that the program inherits the restriction and the server itself keeps
//! its own access (it still reads `/proc` for the call's leftovers, for instance).
//!
//! Confined, a program may read and execute the package folder, the system folders a
//! program needs to start (`/usr`, `/bin`, `/lib*`, `/etc`, `/opt`, the folders on `PATH`)
//! and what the tool's `fs.read` grants name; write what its `fs.write` grants name and
//! `/dev/null`; nothing else: not `/proc` (so not the server's environment through
//! `/proc/PID/environ`), not `/tmp`, not the user's home. Where the kernel supports it, it
//! also cannot open TCP connections unless the tool holds a `net` grant, nor signal the
//! server. Where Landlock is missing (not Linux, or a kernel before 5.13), a confined
//! program is refused rather than run with more than the package was allowed.

use std::cell::RefCell;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;

/// What the programs a package's tool starts may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Why no program may start at all; `None` when they may, confined.
    refusal: Option<String>,
    /// Folders and files readable (and executable).
    read: Vec<PathBuf>,
    /// Folders and files writable (and readable).
    write: Vec<PathBuf>,
    /// Whether TCP connections are allowed.
    network: bool,
}

impl Confinement {
    /// Programs confined to read `folder` (the package folder) and the system folders,
    /// writing nothing but `/dev/null`, without network.
    pub fn new(folder: impl Into<PathBuf>) -> Self {
        Self {
            refusal: None,
            read: vec![folder.into()],
            write: Vec::new(),
            network: false,
        }
    }

    /// No program may start; `reason` says why and what to change (it ends the message
    /// "program `X` could not be started: ").
    pub fn refuse(reason: impl Into<String>) -> Self {
        Self {
            refusal: Some(reason.into()),
            read: Vec::new(),
            write: Vec::new(),
            network: false,
        }
    }

    /// Also lets programs read (and execute) `path`, a folder or a file.
    #[must_use]
    pub fn read(mut self, path: impl Into<PathBuf>) -> Self {
        self.read.push(path.into());
        self
    }

    /// Also lets programs write (create, remove, read) under `path`, a folder or a file.
    #[must_use]
    pub fn write(mut self, path: impl Into<PathBuf>) -> Self {
        self.write.push(path.into());
        self
    }

    /// Lets programs open TCP connections (and listen), or not.
    #[must_use]
    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// Why no program may start, when none may.
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// Starts `command` confined.
    fn spawn(&self, command: &mut Command) -> io::Result<Child> {
        if let Some(reason) = &self.refusal {
            return Err(io::Error::other(reason.clone()));
        }
        let rules = self.rules();
        std::thread::scope(|scope| {
            let spawner = std::thread::Builder::new()
                .name("confined-spawn".into())
                .spawn_scoped(scope, || {
                    // The restriction is the thread's: it ends with it, and only the
                    // program started here inherits it.
                    landlock::restrict_thread(&rules, self.network)?;
                    command.spawn().map_err(|error| {
                        if error.kind() == io::ErrorKind::PermissionDenied {
                            io::Error::other(format!(
                                "{error}; a package's program must be in the package folder, a system folder or a folder on `PATH`"
                            ))
                        } else {
                            error
                        }
                    })
                })?;
            spawner
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the confined start panicked")))
        })
    }

    /// The paths programs may reach, with what they may do there.
    fn rules(&self) -> Vec<(PathBuf, Access)> {
        let mut rules: Vec<(PathBuf, Access)> = SYSTEM_READ
            .iter()
            .map(|path| (PathBuf::from(path), Access::Read))
            .collect();
        // `/etc/resolv.conf` is often a link into `/run`, which is not readable as a whole.
        if let Ok(resolver) = std::fs::canonicalize("/etc/resolv.conf") {
            rules.push((resolver, Access::Read));
        }
        rules.extend(path_folders().into_iter().map(|path| (path, Access::Read)));
        rules.extend(
            DEVICES
                .iter()
                .map(|path| (PathBuf::from(path), Access::Write)),
        );
        rules.extend(self.read.iter().map(|path| (path.clone(), Access::Read)));
        rules.extend(self.write.iter().map(|path| (path.clone(), Access::Write)));
        rules
    }
}

/// System folders a program needs to start and run: itself, its libraries, its settings.
const SYSTEM_READ: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Devices a program may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The absolute folders on this process's `PATH` (which programs inherit), but not `/` nor
/// the home folder, which would open everything under them.
fn path_folders() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|folder| {
            folder.is_absolute()
                && folder != Path::new("/")
                && home.as_deref().is_none_or(|home| folder != home)
        })
        .collect()
}

/// What a rule lets a program do under a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Read files, list folders, execute.
    Read,
    /// Everything: read, write, create, remove.
    Write,
}

thread_local! {
    /// The confinement of the package call running on this thread, if any.
    static CURRENT: RefCell<Option<Arc<Confinement>>> = const { RefCell::new(None) };
}

/// Runs `call` with every program it starts on this thread confined by `confinement`.
pub fn confined<R>(confinement: &Arc<Confinement>, call: impl FnOnce() -> R) -> R {
    /// Puts back the confinement in force before, even when `call` panics.
    struct Restore(Option<Arc<Confinement>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|current| *current.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|current| current.replace(Some(Arc::clone(confinement))));
    let _restore = Restore(previous);
    call()
}

/// Starts `command`, confined when this thread runs inside [`confined`].
pub(crate) fn spawn(command: &mut Command) -> io::Result<Child> {
    match CURRENT.with(|current| current.borrow().clone()) {
        Some(confinement) => confinement.spawn(command),
        None => command.spawn(),
    }
}

/// Whether programs can be confined here: the kernel's Landlock ABI version, or why not.
pub fn confinement_support() -> Result<u32, String> {
    landlock::abi()
}

#[cfg(target_os = "linux")]
mod landlock {
    //! The Landlock system calls (kernel documentation, "Landlock: unprivileged access
    //! control"), made directly: three calls and two structures, for the calling thread.
    #![allow(unsafe_code)]

    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::PathBuf;

    use nix::libc;

    use super::Access;

    const CREATE_RULESET_VERSION: u32 = 1;
    const RULE_PATH_BENEATH: libc::c_int = 1;

    const EXECUTE: u64 = 1 << 0;
    const WRITE_FILE: u64 = 1 << 1;
    const READ_FILE: u64 = 1 << 2;
    const READ_DIR: u64 = 1 << 3;
    /// Every right of ABI 1: executing, reading and writing files, listing folders,
    /// removing and making entries of every kind.
    const ABI1: u64 = (1 << 13) - 1;
    const REFER: u64 = 1 << 13;
    const TRUNCATE: u64 = 1 << 14;
    const IOCTL_DEV: u64 = 1 << 15;
    /// The rights that apply to a file (the others apply to folders only).
    const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;

    const NET_BIND_TCP: u64 = 1 << 0;
    const NET_CONNECT_TCP: u64 = 1 << 1;
    const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
    const SCOPE_SIGNAL: u64 = 1 << 1;

    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
        handled_access_net: u64,
        scoped: u64,
    }

    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }

    /// The Landlock ABI version of the running kernel, or why there is none.
    pub(super) fn abi() -> Result<u32, String> {
        // SAFETY: with a null attribute, a size of 0 and the version flag, the call reads
        // and writes no memory; it returns the version or -1.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<RulesetAttr>(),
                0usize,
                CREATE_RULESET_VERSION,
            )
        };
        if version < 1 {
            let error = io::Error::last_os_error();
            return Err(format!(
                "this kernel has no Landlock ({error}); it needs Linux 5.13 or later with Landlock enabled"
            ));
        }
        u32::try_from(version).map_err(|_| format!("unexpected Landlock version {version}"))
    }

    /// Restricts the calling thread (and what it starts from now on) to `rules`.
    pub(super) fn restrict_thread(rules: &[(PathBuf, Access)], network: bool) -> io::Result<()> {
        let abi = abi().map_err(|reason| {
            io::Error::other(format!(
                "a package's programs run only confined, and {reason}"
            ))
        })?;
        let mut handled_fs = ABI1;
        if abi >= 2 {
            handled_fs |= REFER;
        }
        if abi >= 3 {
            handled_fs |= TRUNCATE;
        }
        if abi >= 5 {
            handled_fs |= IOCTL_DEV;
        }
        let attr = RulesetAttr {
            handled_access_fs: handled_fs,
            handled_access_net: if network {
                0
            } else {
                NET_BIND_TCP | NET_CONNECT_TCP
            },
            scoped: SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL,
        };
        // The structure grew with the ABI; a kernel reads only the part it knows.
        let size = match abi {
            1..=3 => std::mem::size_of::<u64>(),
            4 | 5 => 2 * std::mem::size_of::<u64>(),
            _ => std::mem::size_of::<RulesetAttr>(),
        };
        // SAFETY: `attr` is a live `RulesetAttr` of at least `size` bytes, which the
        // kernel only reads.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &raw const attr,
                size,
                0u32,
            )
        };
        let fd = i32::try_from(fd).map_err(|_| io::Error::other("bad Landlock ruleset"))?;
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned this descriptor, owned by nobody else.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd) };
        for (path, access) in rules {
            add_rule(&ruleset, path, *access, handled_fs)?;
        }
        nix::sys::prctl::set_no_new_privs().map_err(io::Error::from)?;
        // SAFETY: `ruleset` is an open Landlock ruleset; flags 0 restricts this thread.
        let restricted =
            unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) };
        if restricted != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Lets `path` (skipped when it does not exist) be reached with `access`.
    fn add_rule(
        ruleset: &OwnedFd,
        path: &std::path::Path,
        access: Access,
        handled: u64,
    ) -> io::Result<()> {
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
            .open(path)
        else {
            return Ok(());
        };
        let is_dir = file.metadata().is_ok_and(|metadata| metadata.is_dir());
        let mut allowed = match access {
            Access::Read => EXECUTE | READ_FILE | READ_DIR,
            Access::Write => handled,
        } & handled;
        if !is_dir {
            allowed &= FILE_RIGHTS;
        }
        let attr = PathBeneathAttr {
            allowed_access: allowed,
            parent_fd: file.as_raw_fd(),
        };
        // SAFETY: `attr` is a live `PathBeneathAttr`, which the kernel only reads; both
        // descriptors are open.
        let added = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_PATH_BENEATH,
                &raw const attr,
                0u32,
            )
        };
        if added != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod landlock {
    //! No Landlock: confined programs are refused.

    use std::io;
    use std::path::PathBuf;

    use super::Access;

    pub(super) fn abi() -> Result<u32, String> {
        Err("this system has no Landlock (it is Linux-only)".to_owned())
    }

    pub(super) fn restrict_thread(_: &[(PathBuf, Access)], _: bool) -> io::Result<()> {
        let reason = abi().err().unwrap_or_default();
        Err(io::Error::other(format!(
            "a package's programs run only confined, and {reason}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use toolsmith_model::{CallContext, Tool, ToolDefinition, ToolFailure, ToolReturn};

    use super::*;
    use crate::CommandTool;

    /// Runs `script` with `sh -c` from `folder`, inside `confinement` when given.
    fn run(
        folder: &Path,
        script: &str,
        confinement: Option<Confinement>,
    ) -> Result<ToolReturn, ToolFailure> {
        let definition = ToolDefinition::new("probe", "Probe.", toolsmith_model::JsonObject::new());
        let command = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        let tool = CommandTool::new(definition, command, folder).expect("no placeholders");
        let arguments = json!({}).as_object().cloned().unwrap_or_default();
        let context = CallContext::detached(Duration::from_secs(10));
        match confinement {
            Some(confinement) => {
                confined(&Arc::new(confinement), || tool.call(&arguments, &context))
            }
            None => tool.call(&arguments, &context),
        }
    }

    fn text(returned: &Result<ToolReturn, ToolFailure>) -> String {
        match returned {
            Ok(ToolReturn::Text(text)) => text.clone(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn a_refused_confinement_starts_nothing() {
        let folder = tempfile::tempdir().unwrap();
        let marker = folder.path().join("ran");
        let script = format!("touch {}", marker.display());
        let returned = run(
            folder.path(),
            &script,
            Some(Confinement::refuse("package `p` may not run programs")),
        );
        let Err(ToolFailure::Failed { message, .. }) = &returned else {
            panic!("{returned:?}");
        };
        assert!(
            message.contains("package `p` may not run programs"),
            "{message}"
        );
        assert!(!marker.exists());
    }

    #[test]
    fn a_confined_program_reads_its_folder_but_not_the_servers_environment_or_other_files() {
        if confinement_support().is_err() {
            return;
        }
        let folder = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("mine.txt"), "mine").unwrap();
        std::fs::write(outside.path().join("host.txt"), "host secret").unwrap();
        // Before confinement, a command tool read any file of the user and every variable
        // of the server through `/proc/$PPID/environ`.
        let script = format!(
            "cat mine.txt; echo; cat {} 2>/dev/null; echo \"environ: $(tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -c .)\"",
            outside.path().join("host.txt").display()
        );
        let free = text(&run(folder.path(), &script, None));
        assert!(free.contains("host secret"), "{free}");
        assert!(!free.contains("environ: 0"), "{free}");
        let confined = text(&run(
            folder.path(),
            &script,
            Some(Confinement::new(folder.path())),
        ));
        assert_eq!(confined, "mine\nenviron: 0");
        // The restriction was the spawning thread's alone: this thread is as free as before.
        let after = text(&run(folder.path(), &script, None));
        assert!(after.contains("host secret"), "{after}");
    }

    #[test]
    fn a_confined_program_connects_only_with_a_net_grant() {
        // Landlock confines TCP from ABI 4 (Linux 6.7) on.
        if !confinement_support().is_ok_and(|abi| abi >= 4) || !Path::new("/bin/bash").exists() {
            return;
        }
        let folder = tempfile::tempdir().unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let script = format!(
            "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo connected || echo refused"
        );
        let without = Confinement::new(folder.path());
        assert_eq!(text(&run(folder.path(), &script, Some(without))), "refused");
        let with = Confinement::new(folder.path()).network(true);
        assert_eq!(text(&run(folder.path(), &script, Some(with))), "connected");
    }

    #[test]
    fn a_confined_program_writes_only_where_granted() {
        if confinement_support().is_err() {
            return;
        }
        let folder = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let script = format!(
            "echo a > {}/granted.txt; echo b > own.txt; echo written",
            data.path().display()
        );
        let confinement = Confinement::new(folder.path()).write(data.path());
        let returned = text(&run(folder.path(), &script, Some(confinement)));
        assert!(returned.contains("written"), "{returned}");
        assert!(data.path().join("granted.txt").exists());
        assert!(!folder.path().join("own.txt").exists());
    }
}
