//! The direct path of a call to an upstream program (docs/performance.md, "The gateway"):
//! a `tools/call` is written to the program's stdin by the calling thread itself and its
//! response is read off the program's stdout straight into the model's `CallOutcome`, so a
//! proxied call skips rmcp's client (its service loop, its request task, its typed result
//! and the JSON value Toolsmith made of that). Everything else the program and Toolsmith
//! say to each other (`initialize`, `tools/list`, sampling and other requests of the
//! program, their answers) goes through rmcp's client as before: the one reader of stdout
//! hands rmcp every line that is not a direct call's, and rmcp's writes share the one writer.
//!
//! A line to the program is written by whoever sends it, at once, while the pipe takes it
//! (a `tools/call` is then on its way without waking the upstreams' thread); only what the
//! pipe does not take is queued for the writer task, and while anything is queued every
//! line goes behind it, so lines are never reordered or interleaved.
//!
//! The program's progress and log notifications are routed on the reader, in the order they
//! came, before the response that follows them, so they reach the client of the call ahead of
//! its result.
//!
//! The program is not trusted, nor is anything it echoes of what a client sent it. So the ids
//! of a connection's calls start with a random part of its own (`toolsmith-<32 hex>-N`),
//! which no one can name who was not sent one: no client can forge, through text the
//! program prints, the answer of another client's call. An answer goes to the call whose
//! request carried its id, once: an answer to an id never sent, or to a call already
//! answered, is dropped with a warning.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks logging deprecated (SEP-2577); upstreams still send it"
)]

use std::collections::{BTreeSet, HashMap};
use std::io::Write as _;
use std::os::fd::AsFd as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use rmcp::model::{LoggingMessageNotificationParam, ProgressNotificationParam};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;
use toolsmith_model::{CallOutcome, JsonObject};

use crate::relay::Relay;

/// What the ids and progress tokens of direct calls start with, before their connection's
/// random part; rmcp's are numbers.
const ID_START: &str = "toolsmith-";

/// How many calls that ended unanswered (cancelled, timed out) are remembered, so that
/// their late answers are passed over quietly rather than warned about.
const ABANDONED: usize = 1024;

/// The largest line read from an upstream (as rmcp's own transport reads at most).
const MAX_LINE: usize = 16 * 1024 * 1024;

/// How a direct call ended at the upstream.
pub(crate) enum Answer {
    /// Its `CallToolResult`.
    Result(CallOutcome),
    /// A JSON-RPC error, or a result Toolsmith cannot read: the message says which.
    Failed(String),
}

/// The calls of one upstream program on the direct path, and its one writer.
pub(crate) struct Direct {
    writer: Arc<Outbox>,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Answer>>>,
    /// The newest calls that ended without an answer, at most [`ABANDONED`].
    abandoned: Mutex<BTreeSet<u64>>,
    next: AtomicU64,
    /// What this connection's ids start with: [`ID_START`], a random part, `-`.
    prefix: String,
    /// `NAME` of its `[upstream.NAME]`, for the warnings.
    upstream: String,
}

/// A direct call sent and not answered yet; dropped, its answer is no longer waited for.
pub(crate) struct Pending {
    direct: Arc<Direct>,
    number: u64,
    pub(crate) answer: oneshot::Receiver<Answer>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        let unanswered = self
            .direct
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.number)
            .is_some();
        if unanswered {
            let mut abandoned = self
                .direct
                .abandoned
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            abandoned.insert(self.number);
            if abandoned.len() > ABANDONED {
                abandoned.pop_first();
            }
        }
    }
}

#[derive(Serialize)]
struct Request<'a> {
    jsonrpc: &'static str,
    id: &'a str,
    method: &'static str,
    params: Params<'a>,
}

#[derive(Serialize)]
struct Params<'a> {
    name: &'a str,
    arguments: &'a JsonObject,
    #[serde(rename = "_meta", skip_serializing_if = "JsonObject::is_empty")]
    meta: JsonObject,
}

impl Direct {
    /// The number and id of a new call; the id is its progress token too.
    pub(crate) fn next_call(&self) -> (u64, String) {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        (number, format!("{}{number}", self.prefix))
    }

    /// Sends the call `number` (`id`): `tools/call` of `name` with `arguments`; `meta` is
    /// the request's `_meta`, to which `progressToken` is added when `progress` is asked
    /// for. `None` when the program's stdin is gone.
    pub(crate) fn send(
        self: &Arc<Self>,
        (number, id): (u64, &str),
        name: &str,
        arguments: &JsonObject,
        mut meta: JsonObject,
        progress: bool,
    ) -> Option<Pending> {
        if progress {
            meta.insert("progressToken".to_owned(), Value::String(id.to_owned()));
        }
        let request = Request {
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: Params {
                name,
                arguments,
                meta,
            },
        };
        let mut line = serde_json::to_vec(&request).ok()?;
        line.push(b'\n');
        let (sender, answer) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(number, sender);
        let pending = Pending {
            direct: Arc::clone(self),
            number,
            answer,
        };
        self.writer.put(line).then_some(pending)
    }

    /// Tells the program that the call `id` is cancelled.
    pub(crate) fn cancel(&self, id: &str, reason: &str) {
        let notification = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": reason},
        });
        let mut line = notification.to_string().into_bytes();
        line.push(b'\n');
        self.writer.put(line);
    }

    /// The number of the call whose id is `id`, when `id` is one of this connection's.
    fn number(&self, id: &str) -> Option<u64> {
        id.strip_prefix(self.prefix.as_str())?.parse().ok()
    }

    /// Gives `answer` to the call whose id is `id` when it waits for one; else drops it, with
    /// a warning unless it is the first answer to a call that ended unanswered (a late answer
    /// to a cancelled call).
    fn answer(&self, id: &str, answer: Answer) {
        let number = self.number(id);
        let waiting = number.and_then(|number| {
            self.waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&number)
        });
        if let Some(waiting) = waiting {
            let _ = waiting.send(answer);
            return;
        }
        let late = number.is_some_and(|number| {
            self.abandoned
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&number)
        });
        if late {
            tracing::debug!(upstream = %self.upstream, %id, "an answer after its call ended: dropped");
        } else {
            tracing::warn!(
                "upstream `{}` answered `{}`, which is no call in flight on its connection (an id never sent, or a call answered already): dropped",
                self.upstream,
                excerpt(id.as_bytes())
            );
        }
    }
}

/// What this connection's ids start with: [`ID_START`], 128 random bits, `-`.
fn random_prefix() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(format!("{ID_START}{:032x}-", u128::from_be_bytes(bytes)))
}

/// Starts the reader of the program's `stdout` and the writer of its `stdin` (on the
/// current runtime) for the upstream `name`; returns the direct path and the two ends
/// rmcp's client reads and writes for everything else; an error when the program's stdin
/// cannot be shared or no random ids can be made.
pub(crate) fn start(
    stdout: tokio::process::ChildStdout,
    stdin: tokio::process::ChildStdin,
    relay: Relay,
    name: &str,
) -> Result<(Arc<Direct>, tokio::io::DuplexStream, SharedWriter), String> {
    let prefix = random_prefix()
        .map_err(|error| format!("cannot make random ids for its calls: {error}"))?;
    let file = stdin
        .as_fd()
        .try_clone_to_owned()
        .map_err(|error| format!("cannot share its stdin: {error}"))?;
    let (queue, lines) = tokio::sync::mpsc::unbounded_channel();
    let outbox = Arc::new(Outbox {
        pipe: Mutex::new(Pipe {
            file: std::fs::File::from(file),
            backlog: false,
        }),
        queue,
    });
    tokio::spawn(write_all(lines, stdin, Arc::downgrade(&outbox)));
    let direct = Arc::new(Direct {
        writer: Arc::clone(&outbox),
        waiting: Mutex::default(),
        abandoned: Mutex::default(),
        next: AtomicU64::new(1),
        prefix,
        upstream: name.to_owned(),
    });
    let (for_rmcp, from_reader) = tokio::io::duplex(64 * 1024);
    tokio::spawn(read_all(stdout, for_rmcp, Arc::clone(&direct), relay));
    Ok((direct, from_reader, SharedWriter(outbox)))
}

/// The program's stdin, shared by every sender of a line (module docs).
pub(crate) struct Outbox {
    pipe: Mutex<Pipe>,
    /// What the pipe did not take, for the writer task.
    queue: UnboundedSender<Vec<u8>>,
}

struct Pipe {
    /// The program's stdin, non-blocking (a copy of the writer task's descriptor).
    file: std::fs::File,
    /// Lines are queued for the writer task and not written yet.
    backlog: bool,
}

impl Outbox {
    /// Writes `line` now if the pipe takes it, else queues what is left; `false` when the
    /// program's stdin is closed.
    fn put(&self, mut line: Vec<u8>) -> bool {
        let mut pipe = self.pipe.lock().unwrap_or_else(PoisonError::into_inner);
        if !pipe.backlog {
            let mut written = 0;
            while written < line.len() {
                match (&pipe.file).write(&line[written..]) {
                    Ok(0) => return false,
                    Ok(count) => written += count,
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => return false,
                }
            }
            if written == line.len() {
                return true;
            }
            line.drain(..written);
            pipe.backlog = true;
        }
        self.queue.send(line).is_ok()
    }
}

/// Writes what is queued, all that is ready at once; ends when the outbox is gone (and
/// with it the queue's sender and its copy of the descriptor, so the program sees its
/// stdin close) or the program's stdin is closed.
async fn write_all(
    mut lines: UnboundedReceiver<Vec<u8>>,
    mut stdin: tokio::process::ChildStdin,
    outbox: std::sync::Weak<Outbox>,
) {
    while let Some(mut bytes) = lines.recv().await {
        while let Ok(more) = lines.try_recv() {
            bytes.extend_from_slice(&more);
        }
        if stdin.write_all(&bytes).await.is_err() {
            break;
        }
        let Some(outbox) = outbox.upgrade() else {
            break;
        };
        // Lines are queued under the lock: none is queued now, so senders write again.
        let mut pipe = outbox.pipe.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.is_empty() {
            pipe.backlog = false;
        }
    }
}

/// Reads the program's stdout line by line: a direct call's response goes to its waiter,
/// progress and logs to the client of their call, the rest to rmcp. At the end every call
/// still waiting learns that the program stopped (its sender is dropped).
async fn read_all(
    stdout: tokio::process::ChildStdout,
    mut for_rmcp: tokio::io::DuplexStream,
    direct: Arc<Direct>,
    relay: Relay,
) {
    let mut reader = tokio::io::BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if !route(&line, &direct, &relay) && for_rmcp.write_all(&line).await.is_err() {
            break;
        }
    }
    direct
        .waiting
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
}

#[derive(Deserialize)]
struct Response {
    id: String,
    /// Set on a request of the program's, which is no response.
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    result: Option<CallOutcome>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct WireError {
    code: i64,
    message: String,
}

#[derive(Deserialize)]
struct Id {
    id: String,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct Notification<P> {
    method: String,
    params: P,
}

/// Handles `line` here when it is a direct call's response or a notification the reader
/// routes; `false` hands it to rmcp.
///
/// A response whose id starts with [`ID_START`] is handled here whether or not the id is
/// this connection's: rmcp, whose ids are numbers, would drop it without a word, and an id
/// that is not the connection's is worth a warning (`Direct::answer`).
fn route(line: &[u8], direct: &Direct, relay: &Relay) -> bool {
    let has = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
    if has(ID_START.as_bytes()) {
        if let Ok(response) = serde_json::from_slice::<Response>(line)
            && response.method.is_none()
            && response.id.starts_with(ID_START)
        {
            let answer = match (response.result, response.error) {
                (_, Some(error)) => Answer::Failed(format!(
                    "answered with the error {}: {}",
                    error.code, error.message
                )),
                (Some(result), None) => Answer::Result(result),
                (None, None) => Answer::Failed(
                    "answered `tools/call` with something other than a result".to_owned(),
                ),
            };
            direct.answer(&response.id, answer);
            return true;
        }
        if let Ok(notification) =
            serde_json::from_slice::<Notification<ProgressNotificationParam>>(line)
            && notification.method == "notifications/progress"
        {
            relay.progress(&notification.params);
            return true;
        }
        // A response of ours Toolsmith cannot read must still end its call.
        if let Ok(Id { id, method: None }) = serde_json::from_slice::<Id>(line)
            && id.starts_with(ID_START)
        {
            let error = serde_json::from_slice::<Response>(line)
                .err()
                .map(|error| error.to_string())
                .unwrap_or_default();
            direct.answer(
                &id,
                Answer::Failed(format!("answered a result Toolsmith cannot read: {error}")),
            );
            return true;
        }
        // A line that is not JSON at all but names a call of ours is that call's answer,
        // broken: it ends the call now rather than at its timeout. rmcp,
        // which would get it next, drops what it cannot parse.
        if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(line)
            && let Some(id) = named_call(line, &direct.prefix)
        {
            direct.answer(
                &id,
                Answer::Failed(format!(
                    "answered with a line that is not JSON ({error}): {}",
                    excerpt(line)
                )),
            );
            return true;
        }
    }
    if has(b"notifications/message")
        && let Ok(notification) =
            serde_json::from_slice::<Notification<LoggingMessageNotificationParam>>(line)
        && notification.method == "notifications/message"
    {
        relay.log(notification.params);
        return true;
    }
    false
}

/// The first id of a call of this connection's (its ids start with `prefix`) that `line`
/// names, JSON or not.
fn named_call(line: &[u8], prefix: &str) -> Option<String> {
    let start = memchr::memmem::find(line, prefix.as_bytes())?;
    let digits = line[start + prefix.len()..]
        .iter()
        .take_while(|byte| byte.is_ascii_digit())
        .count();
    let id = std::str::from_utf8(&line[start..start + prefix.len() + digits]).ok()?;
    Some(id.to_owned())
}

/// The start of `line`, for a message: at most 80 characters, without its line break.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    match text.char_indices().nth(80) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The program's stdin as rmcp's client writes it: each write put whole on the one
/// outbox, so its messages and the direct calls' never interleave.
pub(crate) struct SharedWriter(Arc<Outbox>);

impl AsyncWrite for SharedWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(if self.0.put(bytes.to_vec()) {
            Ok(bytes.len())
        } else {
            Err(std::io::ErrorKind::BrokenPipe.into())
        })
    }

    fn poll_flush(self: Pin<&mut Self>, _context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: Pin<&mut Self>,
        _context: &mut Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
