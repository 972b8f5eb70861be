//! The audit log (`serve --audit-log FILE`, `[audit]`; docs/http.md, "Audit log"): one JSON
//! line per `tools/call`, `prompts/get`, `resources/read` and call a tool makes of another
//! (code mode's `tools.NAME(...)`, `execute_tool`), saying who called what, how it ended,
//! and the SHA-256 of the arguments rather than the arguments themselves.
//!
//! A line is made whole in memory and written with one `write(2)` on a file opened with
//! `O_APPEND`: after a crash it is there entirely or not at all, and lines written at once
//! by many calls do not interleave. Nothing is buffered in the process, so nothing is lost
//! with it. `SIGHUP` opens the path again (logrotate renames the file, then signals):
//! lines being written meanwhile go to the renamed file, later ones to the new one.
//!
//! Writing never fails a call: a line that cannot be written is counted and a warning
//! (at most one a minute) says how many were lost and why. The line records how the call
//! ended, so it is written after the call ran; refusing the answer then could not undo it.

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime};

use arc_swap::ArcSwap;
use axum::http::request::Parts;
use rmcp::model::{CallToolResponse, GetPromptResponse, ReadResourceResponse};
use rmcp::service::RequestContext;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::{ErrorData, RoleServer};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use toolsmith_model::{CallOutcome, Caller, InnerCall, JsonObject, OutcomeKind};

/// How often a failure to write is told on stderr, at most.
const WARNING_INTERVAL: Duration = Duration::from_mins(1);

/// Where the audit log goes and what it holds (`--audit-log`, `--audit-arguments`,
/// `[audit]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditSettings {
    /// The file the lines are appended to, or stderr.
    pub destination: AuditDestination,
    /// Write each call's argument values too (`--audit-arguments`, `[audit] arguments`).
    /// Off by default: arguments may hold secrets and personal data.
    pub arguments: bool,
}

/// Where the audit log's lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditDestination {
    /// Appended to this file, opened again on `SIGHUP`.
    File(PathBuf),
    /// Written to stderr (`--audit-log -`).
    Stderr,
}

/// An open audit log; cheap to clone, clones write to the same place.
#[derive(Clone)]
pub struct AuditLog(Arc<Log>);

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("arguments", &self.0.arguments)
            .finish_non_exhaustive()
    }
}

struct Log {
    sink: Sink,
    arguments: bool,
    /// This replica's name, once the HTTP server knows it (`--replica-name`, `[state]`).
    replica: OnceLock<String>,
    /// Lines not written since the last warning, and when that was.
    lost: AtomicU64,
    warned: Mutex<Option<Instant>>,
}

enum Sink {
    File { path: PathBuf, file: ArcSwap<File> },
    Stderr,
}

impl AuditLog {
    /// Opens the audit log `settings` name; a file is created if need be and written at
    /// its end, and opened again whenever the process gets `SIGHUP`.
    ///
    /// # Errors
    ///
    /// The file cannot be opened, or the `SIGHUP` handler cannot be installed.
    pub fn open(settings: &AuditSettings) -> io::Result<Self> {
        let sink = match &settings.destination {
            AuditDestination::Stderr => Sink::Stderr,
            AuditDestination::File(path) => Sink::File {
                path: path.clone(),
                file: ArcSwap::from_pointee(append(path)?),
            },
        };
        let log = Arc::new(Log {
            sink,
            arguments: settings.arguments,
            replica: OnceLock::new(),
            lost: AtomicU64::new(0),
            warned: Mutex::new(None),
        });
        if matches!(log.sink, Sink::File { .. }) {
            reopen_on_hangup(Arc::downgrade(&log))?;
        }
        Ok(Self(log))
    }

    /// Opens the file again at its path (what `SIGHUP` does): after a rename, a new file.
    /// On failure the old one goes on being written, and the error is returned.
    ///
    /// # Errors
    ///
    /// The path cannot be opened.
    pub fn reopen(&self) -> io::Result<()> {
        self.0.reopen()
    }

    /// Names this replica in every line from now on.
    pub(crate) fn set_replica(&self, name: &str) {
        let _ = self.0.replica.set(name.to_owned());
    }

    /// Starts the line of a request: `method` of `name` (a tool, a prompt, a resource's
    /// URI) with `arguments`. Written by [`Pending::finish`], or, dropped unfinished (the
    /// client went away and the request with it), as [`OutcomeKind::Cancelled`].
    pub(crate) fn begin(
        &self,
        method: &'static str,
        name: &str,
        arguments: Option<&JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> Pending {
        Pending {
            log: self.clone(),
            time: SystemTime::now(),
            started: Instant::now(),
            method,
            name: name.to_owned(),
            who: Arc::new(Who::of(context)),
            arguments: self.digest(arguments),
            ended: None,
        }
    }

    /// What the calls a tool makes of other tools are written with: the request's caller,
    /// session and id, and the calling tool.
    pub(crate) fn scope(&self, via: &str, context: &RequestContext<RoleServer>) -> Scope {
        Scope {
            log: self.clone(),
            via: via.to_owned(),
            who: Arc::new(Who::of(context)),
        }
    }

    fn digest(&self, arguments: Option<&JsonObject>) -> Arguments {
        let empty = JsonObject::new();
        let arguments = arguments.unwrap_or(&empty);
        let mut canonical = Vec::with_capacity(128);
        canonical_object(arguments, &mut canonical);
        Arguments {
            sha256: hex(&Sha256::digest(&canonical)),
            values: self.0.arguments.then(|| Value::Object(arguments.clone())),
        }
    }

    fn write(&self, line: &Line<'_>) {
        let mut bytes = Vec::with_capacity(384);
        if serde_json::to_writer(&mut bytes, line).is_err() {
            return;
        }
        bytes.push(b'\n');
        self.0.write(&bytes);
    }
}

impl Log {
    fn reopen(&self) -> io::Result<()> {
        if let Sink::File { path, file } = &self.sink {
            file.store(Arc::new(append(path)?));
        }
        Ok(())
    }

    /// One `write(2)` of the whole line. A short write (the disk filled up mid-line) is
    /// ended with a newline, so that the next line starts on a line of its own.
    fn write(&self, line: &[u8]) {
        let written = loop {
            let written = match &self.sink {
                Sink::File { file, .. } => (&**file.load()).write(line),
                Sink::Stderr => io::stderr().lock().write(line),
            };
            match written {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                written => break written,
            }
        };
        let error = match written {
            Ok(count) if count == line.len() => return,
            Ok(count) => {
                if count > 0 {
                    let _ = match &self.sink {
                        Sink::File { file, .. } => (&**file.load()).write(b"\n"),
                        Sink::Stderr => io::stderr().lock().write(b"\n"),
                    };
                }
                io::Error::new(io::ErrorKind::WriteZero, "the line was written in part")
            }
            Err(error) => error,
        };
        self.lost(&error);
    }

    /// Counts a line not written, and says so on stderr at most once a minute.
    fn lost(&self, error: &io::Error) {
        self.lost.fetch_add(1, Ordering::Relaxed);
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        if warned.is_some_and(|at| at.elapsed() < WARNING_INTERVAL) {
            return;
        }
        *warned = Some(Instant::now());
        let lost = self.lost.swap(0, Ordering::Relaxed);
        let place = match &self.sink {
            Sink::File { path, .. } => path.display().to_string(),
            Sink::Stderr => "stderr".to_owned(),
        };
        tracing::warn!(
            lost,
            "audit log: {lost} line{} could not be written to {place}: {error}; calls go on \
             being answered",
            if lost == 1 { "" } else { "s" }
        );
    }
}

/// `path` opened for appending (`O_APPEND`), created if missing (mode 0600 on Unix: the
/// log says who called what).
fn append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Opens `log`'s file again on every `SIGHUP`, on a thread of its own (stdio and HTTP
/// alike), for as long as the log is open. The handler is installed before this returns.
#[cfg(unix)]
fn reopen_on_hangup(log: Weak<Log>) -> io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let mut hangups = {
        let _entered = runtime.enter();
        signal(SignalKind::hangup())?
    };
    std::thread::Builder::new()
        .name("toolsmith-audit".into())
        .spawn(move || {
            runtime.block_on(async move {
                while hangups.recv().await.is_some() {
                    let Some(log) = log.upgrade() else { return };
                    if let Err(error) = log.reopen() {
                        tracing::warn!("audit log: cannot open it again on SIGHUP: {error}; the old file goes on being written");
                    }
                }
            });
        })?;
    Ok(())
}

#[cfg(not(unix))]
fn reopen_on_hangup(_log: Weak<Log>) -> io::Result<()> {
    Ok(())
}

/// Who made a request, and in which session.
struct Who {
    caller: &'static str,
    subject: Option<String>,
    client_id: Option<String>,
    session: Option<String>,
    request_id: String,
}

impl Who {
    fn of(context: &RequestContext<RoleServer>) -> Self {
        let parts = context.extensions.get::<Parts>();
        let oauth = parts.and_then(|parts| parts.extensions.get::<Arc<Caller>>());
        let caller = match (oauth, parts) {
            (Some(_), _) => "oauth",
            (None, Some(parts)) if parts.extensions.get::<StaticToken>().is_some() => "token",
            _ => "anonymous",
        };
        Self {
            caller,
            subject: oauth.and_then(|caller| caller.subject.clone()),
            client_id: oauth.and_then(|caller| caller.client_id.clone()),
            session: parts
                .and_then(|parts| parts.headers.get(HEADER_SESSION_ID))
                .and_then(|id| id.to_str().ok())
                .map(str::to_owned),
            request_id: context.id.to_string(),
        }
    }
}

/// Put on an HTTP request by the `--auth-token` check once the token matched: its caller
/// is `token` in the audit log.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StaticToken;

/// The canonical arguments' digest, and the values when they are written too.
struct Arguments {
    sha256: String,
    values: Option<Value>,
}

/// One line of the audit log, in the order its fields are written.
#[derive(Serialize)]
struct Line<'a> {
    time: String,
    method: &'static str,
    name: &'a str,
    via: Option<&'a str>,
    caller: &'static str,
    subject: Option<&'a str>,
    client_id: Option<&'a str>,
    session: Option<&'a str>,
    replica: Option<&'a str>,
    request_id: &'a str,
    outcome: &'static str,
    error_code: Option<i32>,
    duration_ms: f64,
    arguments_sha256: &'a str,
    result_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a Value>,
}

/// What a line says of a call's end.
struct Ended {
    kind: OutcomeKind,
    error_code: Option<i32>,
    result_bytes: usize,
}

/// A request whose line is written once it ends ([`AuditLog::begin`]).
pub(crate) struct Pending {
    log: AuditLog,
    time: SystemTime,
    started: Instant,
    method: &'static str,
    name: String,
    who: Arc<Who>,
    arguments: Arguments,
    ended: Option<Ended>,
}

impl Pending {
    /// Writes the line of a request that ended `kind` with `answer`.
    pub(crate) fn finish<T: Answer>(mut self, kind: OutcomeKind, answer: &Result<T, ErrorData>) {
        self.ended = Some(match answer {
            Ok(answer) => Ended {
                kind: if answer.input_required() {
                    OutcomeKind::InputRequired
                } else {
                    kind
                },
                error_code: None,
                result_bytes: answer.bytes(),
            },
            Err(error) => Ended {
                kind,
                error_code: Some(error.code.0),
                result_bytes: 0,
            },
        });
    }

    /// Writes the line of a `prompts/get` or `resources/read` that answered `answer`: `ok`,
    /// `input_required`, `invalid_request` for a request refused (an unknown name,
    /// arguments missing), `is_error` when the answer could not be made (an upstream failed).
    pub(crate) fn finish_content<T: Answer>(self, answer: &Result<T, ErrorData>) {
        let kind = match answer {
            Ok(_) => OutcomeKind::Ok,
            Err(error) if error.code == rmcp::model::ErrorCode::INTERNAL_ERROR => {
                OutcomeKind::IsError
            }
            Err(_) => OutcomeKind::InvalidRequest,
        };
        self.finish(kind, answer);
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let ended = self.ended.take().unwrap_or(Ended {
            kind: OutcomeKind::Cancelled,
            error_code: None,
            result_bytes: 0,
        });
        let who = &self.who;
        self.log.write(&Line {
            time: rfc3339(self.time),
            method: self.method,
            name: &self.name,
            via: None,
            caller: who.caller,
            subject: who.subject.as_deref(),
            client_id: who.client_id.as_deref(),
            session: who.session.as_deref(),
            replica: self.log.0.replica.get().map(String::as_str),
            request_id: &who.request_id,
            outcome: ended.kind.as_str(),
            error_code: ended.error_code,
            duration_ms: millis(self.started.elapsed()),
            arguments_sha256: &self.arguments.sha256,
            result_bytes: ended.result_bytes,
            arguments: self.arguments.values.as_ref(),
        });
    }
}

/// Where the calls one tool makes of others are written ([`AuditLog::scope`]).
pub(crate) struct Scope {
    log: AuditLog,
    via: String,
    who: Arc<Who>,
}

impl Scope {
    /// Writes the line of `call`, made by the scope's tool.
    pub(crate) fn inner_call(&self, call: &InnerCall<'_>) {
        let elapsed = SystemTime::now()
            .checked_sub(call.elapsed)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let arguments = self.log.digest(Some(call.arguments));
        let who = &self.who;
        self.log.write(&Line {
            time: rfc3339(elapsed),
            method: "tools/call",
            name: call.tool,
            via: Some(&self.via),
            caller: who.caller,
            subject: who.subject.as_deref(),
            client_id: who.client_id.as_deref(),
            session: who.session.as_deref(),
            replica: self.log.0.replica.get().map(String::as_str),
            request_id: &who.request_id,
            outcome: call.kind.as_str(),
            error_code: None,
            duration_ms: millis(call.elapsed),
            arguments_sha256: &arguments.sha256,
            result_bytes: call.outcome.map_or(0, CallOutcome::bytes),
            arguments: arguments.values.as_ref(),
        });
    }
}

/// What a line needs of an answer: its size as JSON, and whether it asks for input.
pub(crate) trait Answer {
    /// The answer's JSON `result`, in bytes.
    fn bytes(&self) -> usize;
    /// Whether it is MCP 2026-07-28's input-required result.
    fn input_required(&self) -> bool {
        false
    }
}

/// The answer of a request that MCP 2026-07-28 may answer as complete or as input required
/// (and `tools/call` also as a task): the complete result counted without the revision's
/// `resultType` marker, so the size does not depend on the client's protocol version.
macro_rules! response_answer {
    ($response:ty $(, $other:ident)*) => {
        impl Answer for $response {
            fn bytes(&self) -> usize {
                match self {
                    Self::Complete(result) => {
                        json_size(result).saturating_sub(marker_size(result.result_type.as_ref()))
                    }
                    Self::InputRequired(result) => json_size(result),
                    $(Self::$other(result) => json_size(result),)*
                    _ => 0,
                }
            }
            fn input_required(&self) -> bool {
                matches!(self, Self::InputRequired(_))
            }
        }
    };
}

response_answer!(CallToolResponse, Task);
response_answer!(GetPromptResponse);
response_answer!(ReadResourceResponse);

impl Answer for CallOutcome {
    fn bytes(&self) -> usize {
        json_size(self)
    }
}

impl Answer for Value {
    fn bytes(&self) -> usize {
        json_size(self)
    }
}

/// The bytes a complete result's `"resultType":"complete",` takes: the transport writes it
/// for 2026-07-28 clients only, so the size a line gives leaves it out, and is the same in
/// every protocol revision. The marker is the result's first field.
fn marker_size(marker: Option<&rmcp::model::ResultType>) -> usize {
    marker.map_or(0, |marker| "\"resultType\":".len() + json_size(marker) + 1)
}

/// `value`'s size as compact JSON, counted without keeping the text.
fn json_size(value: &impl Serialize) -> usize {
    struct Counter(usize);
    impl io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => 0,
    }
}

/// Canonical JSON of an object: keys sorted (by their UTF-8 bytes, which is Unicode code
/// point order), at every depth, no whitespace; strings and numbers as `serde_json` writes
/// them.
fn canonical_object(object: &JsonObject, out: &mut Vec<u8>) {
    let mut keys: Vec<&String> = object.keys().collect();
    keys.sort_unstable();
    out.push(b'{');
    for (index, key) in keys.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut *out, key);
        out.push(b':');
        canonical(&object[key.as_str()], out);
    }
    out.push(b'}');
}

fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(object) => canonical_object(object, out),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    text
}

/// `time` in RFC 3339, UTC, to the millisecond: `2026-12-07T22:41:58.123Z`.
fn rfc3339(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp(seconds, since.subsec_nanos()).map_or_else(
        || format!("{seconds}"),
        |time| time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    )
}

/// `elapsed` in milliseconds, to the microsecond.
fn millis(elapsed: Duration) -> f64 {
    let micros = u32::try_from(elapsed.as_micros()).map_or(f64::from(u32::MAX), f64::from);
    micros / 1000.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn canonical_text(value: &Value) -> String {
        let mut out = Vec::new();
        canonical(value, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn canonical_arguments_sort_keys_at_every_depth_without_whitespace() {
        let value = json!({"b": [1, {"z": "é\n", "a": null}], "a": {"y": 2.5, "x": true}});
        assert_eq!(
            canonical_text(&value),
            r#"{"a":{"x":true,"y":2.5},"b":[1,{"a":null,"z":"é\n"}]}"#
        );
        let log = AuditLog::open(&AuditSettings {
            destination: AuditDestination::Stderr,
            arguments: false,
        })
        .unwrap();
        let reordered = json!({"a": {"x": true, "y": 2.5}, "b": [1, {"a": null, "z": "é\n"}]});
        let digest = |value: &Value| log.digest(value.as_object()).sha256;
        assert_eq!(digest(&value), digest(&reordered));
        // The SHA-256 of `{}`, which no arguments are taken as too.
        let empty = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
        assert_eq!(digest(&json!({})), empty);
        assert_eq!(log.digest(None).sha256, empty);
        assert!(log.digest(None).values.is_none());
    }

    #[test]
    fn times_are_utc_to_the_millisecond() {
        let time = SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_683_318_123);
        assert_eq!(rfc3339(time), "2026-12-07T22:41:58.123Z");
        assert!((millis(Duration::from_micros(1_234)) - 1.234).abs() < 1e-9);
    }

    #[test]
    fn a_renamed_file_is_followed_by_a_new_one_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&AuditSettings {
            destination: AuditDestination::File(path.clone()),
            arguments: false,
        })
        .unwrap();
        log.0.write(b"one\n");
        std::fs::rename(&path, dir.path().join("audit.jsonl.1")).unwrap();
        log.0.write(b"two\n");
        log.reopen().unwrap();
        log.0.write(b"three\n");
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(read("audit.jsonl.1"), "one\ntwo\n");
        assert_eq!(read("audit.jsonl"), "three\n");
    }
}
