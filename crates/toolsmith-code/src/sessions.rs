//! Saved sessions (docs/code-mode.md, "Sessions"): one JSON file per session in the
//! sessions folder, written atomically (a temporary file renamed over the old one) after
//! every run that succeeds, read when a run names the session, and pruned after every save
//! by age, count and total bytes, oldest first, never the session in use.
//!
//! A file keeps a run's JSON-like globals by value and its `def` functions by source
//! ([`KeptGlobals`]). A file that cannot be read, or was written by another format version,
//! is reported in the run's result and replaced by the next save; it never fails the run.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolsmith_model::{CallContext, JsonObject};
use toolsmith_starlark::{Definition, KeptGlobals};

/// The format version written in every session file.
pub(crate) const FORMAT: u64 = 1;

/// The longest session id.
const MAX_ID_LENGTH: usize = 64;

/// Where sessions are saved and how many are kept.
#[derive(Debug, Clone)]
pub(crate) struct Sessions {
    pub(crate) dir: PathBuf,
    pub(crate) max_count: usize,
    pub(crate) max_bytes: u64,
    pub(crate) max_age: Duration,
    /// The file name prefix of the served folder's sessions ([`folder_prefix`]): every
    /// stdio server of a user saved into one folder, and a session `s1` of one tools folder
    /// was resumed by a server of another.
    pub(crate) folder: String,
}

/// The file name prefix of the sessions of the tools folder at `folder` (canonical): a
/// hash of its path, so a file name never shows where the folder is; empty without one.
pub(crate) fn folder_prefix(folder: Option<&Path>) -> String {
    let Some(folder) = folder else {
        return String::new();
    };
    let digest = Sha256::digest(folder.as_os_str().as_encoded_bytes());
    let mut prefix = String::from("dir-");
    for byte in &digest[..8] {
        let _ = write!(prefix, "{byte:02x}");
    }
    prefix.push('-');
    prefix
}

/// Whose sessions a call may use. Session ids are scoped to the caller: nobody resumes
/// another caller's session.
///
/// A call whose OAuth access token names a subject runs in [`Scope::Subject`], so nobody
/// resumes another user's session; without a subject (stdio, a shared
/// `--auth-token`) every caller is [`Scope::Shared`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// No caller identity: one scope for everyone who can reach the server.
    Shared,
    /// The token subject of the caller.
    Subject(String),
}

impl Scope {
    /// The scope of the call `context` belongs to.
    ///
    /// The caller's token subject when it has one; else one scope for all, as
    /// `--auth-token` is one token for everyone (docs/code-mode.md, "Sessions").
    pub(crate) fn of(context: &CallContext) -> Self {
        match context
            .caller
            .as_ref()
            .and_then(|caller| caller.subject.clone())
        {
            Some(subject) => Self::Subject(subject),
            None => Self::Shared,
        }
    }

    /// The file name prefix of this scope's sessions: subjects are hashed, so a file name
    /// never shows who the caller is and any subject makes a valid name.
    fn prefix(&self) -> String {
        match self {
            Self::Shared => "shared".to_owned(),
            Self::Subject(subject) => {
                let digest = Sha256::digest(subject.as_bytes());
                let mut hex = String::from("sub-");
                for byte in &digest[..12] {
                    let _ = write!(hex, "{byte:02x}");
                }
                hex
            }
        }
    }
}

/// A session id as a call gave it: 1 to 64 letters, digits, `_`, `-` or `.`, not starting
/// with `.`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionId(String);

impl SessionId {
    /// The id, or a message saying what a valid one looks like.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let valid = !text.is_empty()
            && text.len() <= MAX_ID_LENGTH
            && !text.starts_with('.')
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if valid {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "`session` must be 1 to {MAX_ID_LENGTH} letters, digits, `_`, `-` or `.` \
                 (e.g. \"analysis-1\"), got {text:?}"
            ))
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// What loading a session found.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// The globals saved, empty for a new session.
    pub(crate) globals: KeptGlobals,
    /// Why the saved file was not used, when it was there but unreadable.
    pub(crate) problem: Option<String>,
}

/// The session files in use by a running program, across every evaluator of the process.
static IN_USE: std::sync::LazyLock<Mutex<HashSet<PathBuf>>> =
    std::sync::LazyLock::new(|| Mutex::new(HashSet::new()));

/// A session held by one run: other runs naming it wait, pruning skips it. Released when
/// dropped.
pub(crate) struct Held {
    pub(crate) path: PathBuf,
}

impl Drop for Held {
    fn drop(&mut self) {
        IN_USE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.path);
    }
}

impl Sessions {
    /// The file of session `id` in `scope`, among the served folder's sessions.
    pub(crate) fn path(&self, scope: &Scope, id: &SessionId) -> PathBuf {
        self.dir.join(format!(
            "{}{}--{}.json",
            self.folder,
            scope.prefix(),
            id.as_str()
        ))
    }

    /// Holds the session at `path` for one run, waiting while another run holds it; `None`
    /// when the call is stopped (deadline, cancellation) first.
    pub(crate) fn hold(path: &Path, context: &CallContext) -> Option<Held> {
        let mut pause = Duration::from_millis(2);
        loop {
            if IN_USE
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(path.to_owned())
            {
                return Some(Held {
                    path: path.to_owned(),
                });
            }
            if context.stop_reason().is_some() {
                return None;
            }
            std::thread::sleep(
                pause.min(context.deadline.saturating_duration_since(Instant::now())),
            );
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Reads the session saved at `path`; a missing file is a new session.
    pub(crate) fn load(path: &Path, id: &SessionId) -> Loaded {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Loaded::default();
            }
            Err(error) => {
                return unreadable(id, &format!("cannot read {}: {error}", path.display()));
            }
        };
        match decode(&text) {
            Ok(globals) => Loaded {
                globals,
                problem: None,
            },
            Err(why) => unreadable(id, &why),
        }
    }

    /// Saves `globals` as the session at `path`, atomically, then prunes the folder (never
    /// `path`, nor a session another run holds). Returns the ids of the sessions pruned.
    pub(crate) fn save(&self, path: &Path, globals: &KeptGlobals) -> std::io::Result<Vec<String>> {
        std::fs::create_dir_all(&self.dir)?;
        let text = encode(globals);
        let file_name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temporary = self
            .dir
            .join(format!(".{file_name}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut file = std::fs::File::create(&temporary)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temporary, path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written?;
        Ok(self.prune(path))
    }

    /// Removes sessions older than the age limit, then the oldest while there are more
    /// than the count limit or more bytes than the byte limit; never `current` nor a
    /// session in use.
    fn prune(&self, current: &Path) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut saved: Vec<(PathBuf, u64, SystemTime)> = entries
            .filter_map(Result::ok)
            .filter(|entry| {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                name.ends_with(".json") && !name.starts_with('.')
            })
            .filter_map(|entry| {
                let metadata = entry.metadata().ok()?;
                metadata.is_file().then(|| {
                    (
                        entry.path(),
                        metadata.len(),
                        metadata.modified().unwrap_or(UNIX_EPOCH),
                    )
                })
            })
            .collect();
        saved.sort_by_key(|(path, _, modified)| (*modified, path.clone()));
        let in_use = IN_USE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let protected = |path: &Path| path == current || in_use.contains(path);
        let now = SystemTime::now();
        let mut pruned = Vec::new();
        let remove = |path: &Path, pruned: &mut Vec<String>| {
            if std::fs::remove_file(path).is_ok() {
                let name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                pruned.push(name.unwrap_or_default());
                true
            } else {
                false
            }
        };
        saved.retain(|(path, _, modified)| {
            let old = now.duration_since(*modified).unwrap_or_default() > self.max_age;
            !(old && !protected(path) && remove(path, &mut pruned))
        });
        let mut count = saved.len();
        let mut bytes: u64 = saved.iter().map(|(_, size, _)| size).sum();
        for (path, size, _) in &saved {
            if count <= self.max_count && bytes <= self.max_bytes {
                break;
            }
            if !protected(path) && remove(path, &mut pruned) {
                count -= 1;
                bytes = bytes.saturating_sub(*size);
            }
        }
        if !pruned.is_empty() {
            tracing::info!(pruned = ?pruned, "pruned saved code-mode sessions");
        }
        pruned
    }
}

fn unreadable(id: &SessionId, why: &str) -> Loaded {
    tracing::warn!(session = id.as_str(), "saved session not used: {why}");
    Loaded {
        globals: KeptGlobals::default(),
        problem: Some(format!(
            "the saved session `{}` could not be used ({why}); it starts fresh and is replaced when this run succeeds",
            id.as_str()
        )),
    }
}

/// The session file's JSON text.
pub(crate) fn encode(globals: &KeptGlobals) -> String {
    let saved = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let definitions: Vec<Value> = globals
        .definitions
        .iter()
        .map(|definition| json!({"name": definition.name, "source": definition.source}))
        .collect();
    json!({
        "format": FORMAT,
        "saved": saved,
        "values": Value::Object(globals.values.clone()),
        "definitions": definitions,
    })
    .to_string()
}

/// The globals of a session file, or why it cannot be used.
fn decode(text: &str) -> Result<KeptGlobals, String> {
    let document: Value =
        serde_json::from_str(text).map_err(|error| format!("not valid JSON: {error}"))?;
    let format = document.get("format").and_then(Value::as_u64);
    if format != Some(FORMAT) {
        return Err(match format {
            Some(other) => {
                format!("written in session format {other}; this Toolsmith reads format {FORMAT}")
            }
            None => "not a Toolsmith session file".to_owned(),
        });
    }
    let values: JsonObject = match document.get("values") {
        Some(Value::Object(values)) => values.clone(),
        _ => return Err("`values` is missing".to_owned()),
    };
    let definitions = match document.get("definitions") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let name = item.get("name").and_then(Value::as_str);
                let source = item.get("source").and_then(Value::as_str);
                match (name, source) {
                    (Some(name), Some(source)) => Ok(Definition {
                        name: name.to_owned(),
                        source: source.to_owned(),
                    }),
                    _ => Err("a definition has no `name` or `source`".to_owned()),
                }
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err("`definitions` is missing".to_owned()),
    };
    Ok(KeptGlobals {
        values,
        definitions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions(dir: &Path) -> Sessions {
        Sessions {
            dir: dir.to_owned(),
            max_count: 3,
            max_bytes: 1 << 20,
            max_age: Duration::from_hours(1),
            folder: String::new(),
        }
    }

    fn globals(n: i64) -> KeptGlobals {
        let mut values = JsonObject::new();
        values.insert("n".into(), json!(n));
        KeptGlobals {
            values,
            definitions: vec![Definition {
                name: "f".into(),
                source: "def f():\n    return n".into(),
            }],
        }
    }

    #[test]
    fn saved_globals_load_back() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = sessions(dir.path());
        let id = SessionId::parse("abc").unwrap();
        let path = sessions.path(&Scope::Shared, &id);
        sessions.save(&path, &globals(7)).unwrap();
        let loaded = Sessions::load(&path, &id);
        assert_eq!(loaded.globals, globals(7));
        assert_eq!(loaded.problem, None);
    }

    #[test]
    fn scopes_never_share_a_file() {
        let sessions = sessions(Path::new("/s"));
        let id = SessionId::parse("abc").unwrap();
        let alice = sessions.path(&Scope::Subject("alice".into()), &id);
        let bob = sessions.path(&Scope::Subject("bob".into()), &id);
        assert_ne!(alice, bob);
        assert_ne!(alice, sessions.path(&Scope::Shared, &id));
        assert!(!alice.to_string_lossy().contains("alice"));
    }

    /// Every stdio server of a user shared one scope, so a session `s1` of one tools folder
    /// was resumed by the server of another folder: each folder names its own files.
    #[test]
    fn folders_never_share_a_file() {
        let id = SessionId::parse("s1").unwrap();
        let of = |folder: &str| {
            let sessions = Sessions {
                folder: folder_prefix(Some(Path::new(folder))),
                ..sessions(Path::new("/s"))
            };
            sessions.path(&Scope::Shared, &id)
        };
        assert_ne!(of("/work/a"), of("/work/b"));
        assert_eq!(of("/work/a"), of("/work/a"));
        assert!(!of("/work/a").to_string_lossy().contains("work"));
        assert_eq!(folder_prefix(None), "");
    }

    #[test]
    fn bad_ids_say_what_is_valid() {
        for bad in ["", "../x", ".hidden", "a/b", &"x".repeat(65)] {
            let message = SessionId::parse(bad).unwrap_err();
            assert!(message.contains("letters, digits"), "{message}");
        }
    }

    #[test]
    fn an_older_format_is_reported_and_starts_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let id = SessionId::parse("old").unwrap();
        let path = dir.path().join("old.json");
        std::fs::write(&path, r#"{"format": 0, "values": {}}"#).unwrap();
        let loaded = Sessions::load(&path, &id);
        assert_eq!(loaded.globals, KeptGlobals::default());
        let problem = loaded.problem.unwrap();
        assert!(problem.contains("session format 0"), "{problem}");
    }
}
