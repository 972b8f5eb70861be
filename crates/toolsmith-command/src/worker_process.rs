//! One warm worker process (docs/tools.md, "Warm command tools"): started in its own
//! process group, handed one JSON line per call on stdin, and read by two threads, one per
//! output pipe, that pass stdout's lines and stderr's `mcp:` events to the calling thread
//! over a channel and keep the tail of the rest of stderr for failure messages.
//!
//! A process serves one call at a time; the pool (`worker.rs`) decides which process serves
//! which call and replaces the ones that break.

use std::io::{self, BufRead, BufReader, ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use serde_json::Value;
use toolsmith_model::{CallContext, StopReason};

use crate::output::excerpt;
use crate::process::{self, EVENT_PREFIX, Group, STDERR_KEEP, Spawned};

/// How long a worker has to answer `{"cancel": id}` before it is killed.
const CANCEL_GRACE: Duration = Duration::from_secs(1);
/// How often a waiting call checks its interrupt and whether the worker is still alive.
const POLL: Duration = Duration::from_millis(10);
/// How long to wait for the rest of stderr once a broken worker was killed.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// The longest stderr line read as an `mcp:` event; a longer one is ordinary stderr.
const EVENT_MAX: usize = 64 * 1024;
/// How much of a line that is not an answer is quoted in the failure.
const GARBAGE_SHOWN: usize = 200;

/// What the reader threads hand to the calling thread.
enum Message {
    /// A line of stdout, without its line ending.
    Line(Vec<u8>),
    /// A stdout line longer than the output limit; the reader stopped.
    TooLong,
    /// An `mcp:` line of stderr, without the prefix.
    Event(Vec<u8>),
    /// stdout reached its end: the worker exited or closed it.
    StdoutClosed,
    /// stderr reached its end.
    StderrClosed,
}

/// How a call that the worker took part in ended, with the worker still usable.
#[derive(Debug)]
pub(crate) enum Exchange {
    /// `{"id": …, "result": …}` (`Ok`) or `{"id": …, "error": "…"}` (`Err`).
    Answered(Result<Value, String>),
    /// The call was cancelled and the worker answered within the grace.
    Cancelled,
}

/// Why a worker cannot serve any more calls; it must be killed.
#[derive(Debug)]
pub(crate) enum Broken {
    /// It exited (or closed stdout) during the call.
    Exited,
    /// It did not answer before the call's deadline.
    TimedOut,
    /// The call was cancelled and it did not answer within the grace.
    Cancelled,
    /// It wrote a stdout line that is not an answer to the call; the start of the line.
    Garbage(String),
    /// Its answer was longer than the output limit.
    OutputLimit,
    /// Writing to it failed.
    Io(io::Error),
}

/// What a broken worker left behind: how it ended and the tail of its stderr.
pub(crate) struct Remains {
    pub(crate) status: Option<ExitStatus>,
    /// The end of stderr and whether anything before it was cut; `None` when blank.
    pub(crate) stderr: Option<(String, bool)>,
}

/// The kept end of a worker's stderr, minus its `mcp:` events.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    cut: bool,
}

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        if self.bytes.len() > STDERR_KEEP * 2 {
            let excess = self.bytes.len() - STDERR_KEEP;
            self.bytes.drain(..excess);
            self.cut = true;
        }
    }
}

/// A running worker: its process group, its stdin, and what its readers send.
pub(crate) struct WorkerProcess {
    group: Group,
    stdin: ChildStdin,
    messages: Receiver<Message>,
    stderr: Arc<Mutex<Tail>>,
    /// Calls answered so far, for `max_calls`.
    pub(crate) calls: u64,
    /// When it last finished a call (or started), for `idle_timeout`.
    pub(crate) idle_since: Instant,
    /// When it was started, to compare with its program file's modification time.
    pub(crate) started: SystemTime,
}

impl WorkerProcess {
    /// Starts `command` as a worker whose answers may be up to `output_limit` bytes long.
    pub(crate) fn spawn(command: &mut Command, output_limit: usize) -> io::Result<Self> {
        let started = SystemTime::now();
        let Spawned {
            group,
            stdin,
            stdout,
            stderr,
        } = process::spawn(command)?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(io::Error::other("the worker's pipes were not opened"));
        };
        process::set_nonblocking(stdin.as_fd()).map_err(io::Error::from)?;
        let (sender, messages) = mpsc::channel();
        let tail = Arc::new(Mutex::new(Tail::default()));
        let stdout_sender = sender.clone();
        std::thread::Builder::new()
            .name("worker-stdout".into())
            .spawn(move || read_stdout(stdout, output_limit, &stdout_sender))?;
        let stderr_tail = Arc::clone(&tail);
        std::thread::Builder::new()
            .name("worker-stderr".into())
            .spawn(move || read_stderr(stderr, &stderr_tail, &sender))?;
        Ok(Self {
            group,
            stdin,
            messages,
            stderr: tail,
            calls: 0,
            idle_since: Instant::now(),
            started,
        })
    }

    /// Whether the worker's leader has exited (while idle, say).
    pub(crate) fn exited(&self) -> bool {
        self.group.leader_exited()
    }

    /// Sends `request` (call `id`, one JSON line without its newline) and waits for the
    /// answer, handing the call's `mcp:` events to `on_event`, until the deadline; a cancel
    /// is passed on as `{"cancel": id}`.
    pub(crate) fn call(
        &mut self,
        id: u64,
        request: &[u8],
        context: &CallContext,
        on_event: &mut dyn FnMut(&[u8]),
    ) -> Result<Exchange, Broken> {
        self.write_line(request, context.deadline)?;
        // Once the cancel is sent: until when the worker may still answer.
        let mut cancelled: Option<Instant> = None;
        loop {
            let now = Instant::now();
            let until = match cancelled {
                Some(until) if now >= until => return Err(Broken::Cancelled),
                Some(until) => until,
                None => match process::stop_reason(context.deadline, &context.interrupt, now) {
                    Some(StopReason::Timeout) => return Err(Broken::TimedOut),
                    Some(StopReason::Cancelled) => {
                        let until = now + CANCEL_GRACE;
                        let cancel = serde_json::json!({ "cancel": id }).to_string();
                        self.write_line(cancel.as_bytes(), until)
                            .map_err(|_| Broken::Cancelled)?;
                        cancelled = Some(until);
                        continue;
                    }
                    None => context.deadline,
                },
            };
            match self
                .messages
                .recv_timeout(POLL.min(until.saturating_duration_since(now)))
            {
                Ok(Message::Line(line)) if line.trim_ascii().is_empty() => {}
                Ok(Message::Line(line)) => {
                    return match parse_answer(&line, id) {
                        Some(_) if cancelled.is_some() => Ok(Exchange::Cancelled),
                        Some(answer) => Ok(Exchange::Answered(answer)),
                        None => Err(Broken::Garbage(shown(&line))),
                    };
                }
                Ok(Message::Event(event)) => {
                    if cancelled.is_none() && event_is_for(&event, id) {
                        on_event(&event);
                    }
                }
                Ok(Message::TooLong) => return Err(Broken::OutputLimit),
                Ok(Message::StdoutClosed) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(Broken::Exited);
                }
                Ok(Message::StderrClosed) => {}
                Err(RecvTimeoutError::Timeout) => {
                    if self.group.leader_exited() {
                        return Err(Broken::Exited);
                    }
                }
            }
        }
    }

    /// Kills the worker's process group and returns how it ended and its stderr's tail.
    pub(crate) fn terminate(mut self) -> Remains {
        self.group.kill();
        let until = Instant::now() + DRAIN_GRACE;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(Message::StderrClosed) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let status = self.group.reap().ok();
        let tail = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        Remains {
            status,
            stderr: excerpt(&tail.bytes, tail.cut),
        }
    }

    /// Writes `line` and a newline to the worker's stdin, waiting for room until `deadline`.
    fn write_line(&mut self, line: &[u8], deadline: Instant) -> Result<(), Broken> {
        let mut data = Vec::with_capacity(line.len() + 1);
        data.extend_from_slice(line);
        data.push(b'\n');
        let mut written = 0;
        while written < data.len() {
            match self.stdin.write(&data[written..]) {
                Ok(count) => written += count,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) if error.kind() == ErrorKind::WouldBlock => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(Broken::TimedOut);
                    }
                    let wait = POLL.min(deadline - now);
                    let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX);
                    let mut fds = [PollFd::new(self.stdin.as_fd(), PollFlags::POLLOUT)];
                    // A failed poll only means trying the write again.
                    let _ = poll(&mut fds, timeout);
                }
                Err(error) if error.kind() == ErrorKind::BrokenPipe => return Err(Broken::Exited),
                Err(error) => return Err(Broken::Io(error)),
            }
        }
        Ok(())
    }
}

/// The answer in `line` to call `id`, or `None` when the line is not one.
fn parse_answer(line: &[u8], id: u64) -> Option<Result<Value, String>> {
    let Ok(Value::Object(mut answer)) = serde_json::from_slice::<Value>(line) else {
        return None;
    };
    if answer.get("id").and_then(Value::as_u64) != Some(id) {
        return None;
    }
    if let Some(error) = answer.remove("error") {
        return Some(Err(match error {
            Value::String(message) => message,
            other => other.to_string(),
        }));
    }
    answer.remove("result").map(Ok)
}

/// Whether an event belongs to call `id`: it names that id, or none.
fn event_is_for(event: &[u8], id: u64) -> bool {
    serde_json::from_slice::<Value>(event)
        .ok()
        .and_then(|event| event.get("id").cloned())
        .is_none_or(|named| named.as_u64() == Some(id))
}

/// The start of a line for a message.
fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(GARBAGE_SHOWN) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.into_owned(),
    }
}

/// Reads stdout line by line until it ends, a line passes `limit`, or nobody listens.
fn read_stdout(stdout: ChildStdout, limit: usize, sender: &Sender<Message>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    loop {
        let mut line = Vec::new();
        match (&mut reader).take(cap).read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                let complete = line.last() == Some(&b'\n');
                if !complete && line.len() > limit {
                    let _ = sender.send(Message::TooLong);
                    return;
                }
                if complete {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                if sender.send(Message::Line(line)).is_err() {
                    return;
                }
            }
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = sender.send(Message::StdoutClosed);
}

/// Reads stderr until it ends: `mcp:` lines are sent as events, the rest kept in `tail`.
fn read_stderr(stderr: ChildStderr, tail: &Mutex<Tail>, sender: &Sender<Message>) {
    let mut reader = BufReader::new(stderr);
    let cap = u64::try_from(EVENT_MAX).unwrap_or(u64::MAX);
    loop {
        let mut line = Vec::new();
        match (&mut reader).take(cap).read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                let event = line
                    .strip_prefix(EVENT_PREFIX)
                    .and_then(|event| event.strip_suffix(b"\n"));
                match event {
                    // A closed channel means the call is over; the events have nobody to go to.
                    Some(event) => {
                        let _ = sender.send(Message::Event(event.to_vec()));
                    }
                    None => tail
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(&line),
                }
            }
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = sender.send(Message::StderrClosed);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_are_read_for_their_call_only() {
        assert_eq!(
            parse_answer(br#"{"id": 3, "result": {"a": 1}}"#, 3),
            Some(Ok(json!({"a": 1})))
        );
        assert_eq!(
            parse_answer(br#"{"id": 3, "error": "no such city"}"#, 3),
            Some(Err("no such city".into()))
        );
        assert_eq!(parse_answer(br#"{"id": 2, "result": 1}"#, 3), None);
        assert_eq!(parse_answer(br#"{"id": 3}"#, 3), None);
        assert_eq!(parse_answer(b"hello", 3), None);
    }

    #[test]
    fn events_without_an_id_belong_to_the_call() {
        assert!(event_is_for(br#"{"progress": 1}"#, 4));
        assert!(event_is_for(br#"{"id": 4, "progress": 1}"#, 4));
        assert!(!event_is_for(br#"{"id": 5, "progress": 1}"#, 4));
    }
}
