//! Git packages in the cache folder, with the `git` program: one mirror clone per
//! repository (`<cache>/packages/<name>-<url hash>/mirror.git`) and one plain folder of files
//! per commit next to it (`…/<commit>/`, its `.git` removed), which is the package folder.
//! A pinned commit whose folder is in the cache and matches its hash needs no `git` and no
//! network; anything else fetches as little as it can.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

/// The environment variable naming Toolsmith's cache folder (packages go in `packages/`
/// under it); by default `$XDG_CACHE_HOME/toolsmith`, else `~/.cache/toolsmith`.
pub const CACHE_DIR_ENV: &str = "TOOLSMITH_CACHE_DIR";

/// Why a git package could not be fetched or checked out.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No folder to cache packages in.
    #[error(
        "no cache folder for git packages: neither `{CACHE_DIR_ENV}`, `XDG_CACHE_HOME` nor `HOME` is set"
    )]
    NoCache,
    /// `git` could not be started.
    #[error("cannot run `git`: {0}")]
    NoGit(std::io::Error),
    /// `git` failed.
    #[error("`git {command}` failed: {message}")]
    Failed {
        /// The arguments, as a command line.
        command: String,
        /// What git said last.
        message: String,
    },
    /// `rev` names no commit of the repository.
    #[error("`{rev}` is not a branch, tag or commit of `{url}`")]
    UnknownRev {
        /// The repository.
        url: String,
        /// The revision asked for.
        rev: String,
    },
    /// The cached files of a pinned commit differ from the lock's hash.
    #[error(
        "the files of `{url}` at commit {commit} do not match the hash in toolsmith.lock ({expected}, found {found})"
    )]
    HashMismatch {
        /// The repository.
        url: String,
        /// The pinned commit.
        commit: String,
        /// The lock's hash.
        expected: String,
        /// The hash of the files checked out.
        found: String,
    },
    /// `toolsmith.lock` names something that is not a commit id.
    #[error("toolsmith.lock pins `{url}` to `{commit}`, which is not a commit id")]
    BadPin {
        /// The repository.
        url: String,
        /// What the lock says.
        commit: String,
    },
    /// A cache folder could not be written or read.
    #[error("cannot use the cache folder `{}`: {source}", .path.display())]
    Cache {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl toolsmith_model::Hint for GitError {
    fn hints(&self) -> Vec<String> {
        match self {
            Self::NoCache | Self::Cache { .. } => {
                vec![format!("set `{CACHE_DIR_ENV}` to a folder Toolsmith may write")]
            }
            Self::NoGit(_) => vec!["install git (https://git-scm.com), or give the package as `path = \"...\"`".into()],
            Self::Failed { .. } => vec!["check the URL and your network; a pinned package whose files are in the cache loads without either".into()],
            Self::UnknownRev { .. } => vec!["set `rev` to a branch, a tag or a commit of the repository".into()],
            Self::HashMismatch { .. } | Self::BadPin { .. } => vec!["`toolsmith packages update NAME` pins the package again".into()],
        }
    }
}

/// A package folder checked out at a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checkout {
    pub(crate) folder: PathBuf,
    pub(crate) commit: String,
    pub(crate) hash: String,
}

/// Toolsmith's cache folder: `TOOLSMITH_CACHE_DIR`, else `$XDG_CACHE_HOME/toolsmith`, else
/// `~/.cache/toolsmith`.
pub fn cache_dir() -> Option<PathBuf> {
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    set(CACHE_DIR_ENV)
        .or_else(|| set("XDG_CACHE_HOME").map(|dir| dir.join("toolsmith")))
        .or_else(|| set("HOME").map(|home| home.join(".cache").join("toolsmith")))
}

/// The cache folder of one repository.
fn repository_dir(url: &str) -> Result<PathBuf, GitError> {
    let cache = cache_dir().ok_or(GitError::NoCache)?;
    let name: String = url
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .rsplit(['/', ':'])
        .next()
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let digest = Sha256::digest(url.as_bytes());
    Ok(cache
        .join("packages")
        .join(format!("{name}-{}", &hex(&digest)[..16])))
}

/// The commit `pin` names, from the cache when its files are there and match `hash`;
/// otherwise checked out again (fetching only when the mirror lacks the commit).
pub(crate) fn pinned(url: &str, commit: &str, hash: &str) -> Result<Checkout, GitError> {
    // The commit names a folder of the cache: nothing but a commit id may.
    if !is_commit_id(commit) {
        return Err(GitError::BadPin {
            url: url.to_owned(),
            commit: commit.to_owned(),
        });
    }
    let dir = repository_dir(url)?;
    let folder = dir.join(commit);
    if folder.is_dir() {
        let found = content_hash(&folder)?;
        if found == hash {
            return Ok(Checkout {
                folder,
                commit: commit.to_owned(),
                hash: found,
            });
        }
        remove(&folder)?;
    }
    let mirror = mirror(url, &dir)?;
    if !has_commit(&mirror, commit) {
        fetch(&mirror)?;
    }
    let checkout = checkout(&mirror, &dir, commit)?;
    if checkout.hash != hash {
        return Err(GitError::HashMismatch {
            url: url.to_owned(),
            commit: commit.to_owned(),
            expected: hash.to_owned(),
            found: checkout.hash,
        });
    }
    Ok(checkout)
}

/// The commit `rev` names now: the mirror is fetched first, unless `rev` is a commit it
/// already has.
pub(crate) fn resolve(url: &str, rev: &str) -> Result<Checkout, GitError> {
    let dir = repository_dir(url)?;
    let existed = dir.join(MIRROR).is_dir();
    let mirror = mirror(url, &dir)?;
    if existed && !(is_commit_id(rev) && has_commit(&mirror, rev)) {
        fetch(&mirror)?;
    }
    let commit = git(
        &mirror,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| GitError::UnknownRev {
        url: url.to_owned(),
        rev: rev.to_owned(),
    })?;
    checkout(&mirror, &dir, commit.trim())
}

const MIRROR: &str = "mirror.git";

/// Whether `text` is a full commit id: 40 (SHA-1) or 64 (SHA-256) hex digits.
fn is_commit_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The repository's mirror clone in `dir`, cloned when missing.
fn mirror(url: &str, dir: &Path) -> Result<PathBuf, GitError> {
    create_dir(dir)?;
    made(&dir.join(MIRROR), |partial| {
        git(
            dir,
            &[
                "clone",
                "--quiet",
                "--mirror",
                "--",
                url,
                &partial.to_string_lossy(),
            ],
        )
        .map(drop)
    })
}

/// `folder`, made by `make` (given a scratch folder next to it) unless it exists. The
/// scratch folder is renamed into place only when complete, so a folder in the cache is
/// never half made; when another process made it meanwhile, its folder is kept.
fn made(
    folder: &Path,
    make: impl FnOnce(&Path) -> Result<(), GitError>,
) -> Result<PathBuf, GitError> {
    if folder.is_dir() {
        return Ok(folder.to_owned());
    }
    let mut partial = folder.as_os_str().to_owned();
    partial.push(format!(".{}", std::process::id()));
    let partial = PathBuf::from(partial);
    let _ = std::fs::remove_dir_all(&partial);
    if let Err(error) = make(&partial) {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(error);
    }
    if std::fs::rename(&partial, folder).is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    Ok(folder.to_owned())
}

fn fetch(mirror: &Path) -> Result<(), GitError> {
    git(mirror, &["fetch", "--quiet", "--prune", "origin"]).map(drop)
}

fn has_commit(mirror: &Path, commit: &str) -> bool {
    git(mirror, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_ok()
}

/// The files of `commit` in `dir/<commit>/`, checked out from `mirror` when not there yet.
fn checkout(mirror: &Path, dir: &Path, commit: &str) -> Result<Checkout, GitError> {
    let folder = made(&dir.join(commit), |partial| {
        let (mirror, partial_text) = (mirror.to_string_lossy(), partial.to_string_lossy());
        git(
            dir,
            &[
                "clone",
                "--quiet",
                "--no-checkout",
                "--",
                &mirror,
                &partial_text,
            ],
        )?;
        git(partial, &["checkout", "--quiet", "--detach", commit])?;
        remove(&partial.join(".git"))
    })?;
    let hash = content_hash(&folder)?;
    Ok(Checkout {
        folder,
        commit: commit.to_owned(),
        hash,
    })
}

/// `sha256:` over the files of `folder` (hidden names left out), sorted by path: each
/// file's path relative to the folder, then its bytes.
pub(crate) fn content_hash(folder: &Path) -> Result<String, GitError> {
    let cache = |source| GitError::Cache {
        path: folder.to_owned(),
        source,
    };
    let mut hasher = Sha256::new();
    for file in crate::Walk::new(folder)
        .private(true)
        .files()
        .map_err(cache)?
    {
        let relative = file.strip_prefix(folder).unwrap_or(&file);
        // A link to a FIFO or a device fails here instead of blocking the hash.
        let (mut opened, size) = crate::read::open_regular(&file).map_err(|error| match error {
            crate::read::ReadError::Io(error) => cache(error),
            other => cache(std::io::Error::other(other.to_string())),
        })?;
        hasher.update(relative.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(size.to_le_bytes());
        // Streamed: a package may hold large files. Never past the size hashed above, so
        // a file growing meanwhile still hashes as a whole of that length.
        let mut buffer = vec![0; 64 << 10];
        let mut left = size;
        while left > 0 {
            let chunk = usize::try_from(left).map_or(buffer.len(), |left| left.min(buffer.len()));
            let read = opened.read(&mut buffer[..chunk]).map_err(cache)?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
            left -= read as u64;
        }
    }
    Ok(format!("sha256:{}", hex(&hasher.finalize())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

fn create_dir(dir: &Path) -> Result<(), GitError> {
    std::fs::create_dir_all(dir).map_err(|source| GitError::Cache {
        path: dir.to_owned(),
        source,
    })
}

fn remove(dir: &Path) -> Result<(), GitError> {
    std::fs::remove_dir_all(dir).map_err(|source| GitError::Cache {
        path: dir.to_owned(),
        source,
    })
}

/// Runs `git ARGS` in `dir` without a terminal (no password prompts); its stdout.
fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(GitError::NoGit)?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let message = stderr
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("no message")
        .trim()
        .to_owned();
    Err(GitError::Failed {
        command: args.join(" "),
        message,
    })
}
