//! Running one process group to completion under a deadline: stdin fed, stdout and stderr
//! collected concurrently with `ppoll` on non-blocking pipes (no reader threads, no
//! deadlock), the whole group killed on a stop, a cap, or once its leader exits.
//!
//! The leader's exit is observed with `waitid(WNOWAIT)`, which leaves it a zombie: its pid,
//! and so the group id, cannot be reused until it is reaped, so killing the group after the
//! leader exited can never hit an unrelated process group. Whenever the group is killed, so
//! are the processes of the run that left it (`setsid`; see `leftovers.rs`).

use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::signal::{Signal, killpg};
use nix::sys::time::TimeSpec;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use toolsmith_model::{Interrupt, StopReason};

use crate::leftovers::{CALL_ID_ENV, Leftovers};

/// The first wait between checks for the leader's exit; a fast command pays about this much.
const FIRST_BACKOFF: Duration = Duration::from_micros(50);
/// The longest wait between checks, which bounds how late an interrupt is noticed.
const LAST_BACKOFF: Duration = Duration::from_millis(5);
/// How long to keep reading after the leader exited and the group was killed. Killed
/// processes close their pipes within microseconds; only a process that left the group
/// and escaped `leftovers.rs` can hold a pipe longer, and it is not waited for.
const DRAIN_GRACE: Duration = Duration::from_millis(100);
/// How much of stderr is kept (the tail) for the failure message.
pub(crate) const STDERR_KEEP: usize = 64 * 1024;
/// Bytes read from a pipe at a time.
const CHUNK: usize = 64 * 1024;
/// A stderr line starting with this is a message for the client, not part of stderr:
/// `mcp:{"progress": 3, "total": 10}`.
pub(crate) const EVENT_PREFIX: &[u8] = b"mcp:";
/// The longest event line; a longer line is ordinary stderr.
const EVENT_MAX: usize = 64 * 1024;

/// The limits one run is held to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// When the group is killed and the run reported as timed out.
    pub(crate) deadline: Instant,
    /// stdout beyond this many bytes kills the group.
    pub(crate) stdout_bytes: usize,
}

/// A run whose leader exited (normally or by a signal).
#[derive(Debug)]
pub(crate) struct Finished {
    /// How the leader ended.
    pub(crate) status: ExitStatus,
    /// Everything it wrote to stdout.
    pub(crate) stdout: Vec<u8>,
    /// The tail of what it wrote to stderr.
    pub(crate) stderr: Vec<u8>,
    /// Whether the start of stderr was dropped to keep the tail.
    pub(crate) stderr_cut: bool,
}

/// Why a run has no [`Finished`] result.
#[derive(Debug)]
pub(crate) enum RunError {
    /// The program could not be started.
    Spawn(io::Error),
    /// The deadline passed or the call was interrupted; the group was killed.
    Stopped(StopReason),
    /// stdout went past [`Limits::stdout_bytes`]; the group was killed.
    OutputLimit,
    /// Talking to the process failed (the group was killed).
    Io(io::Error),
}

/// Spawns `command` in a new process group, writes `input` to its stdin and collects its
/// output until the leader exits; the group is always killed before this returns.
///
/// Each stderr line that starts with [`EVENT_PREFIX`] is handed to `on_event` (without the
/// prefix) as soon as it is complete, and left out of the collected stderr.
pub(crate) fn run(
    command: &mut Command,
    input: &[u8],
    limits: Limits,
    interrupt: &Interrupt,
    on_event: &mut dyn FnMut(&[u8]),
) -> Result<Finished, RunError> {
    // A call cancelled (or out of time) before it started need not start at all.
    if let Some(reason) = stop_reason(limits.deadline, interrupt, Instant::now()) {
        return Err(RunError::Stopped(reason));
    }
    let Spawned {
        mut group,
        stdin,
        stdout,
        stderr,
    } = spawn(command).map_err(RunError::Spawn)?;
    let mut input = Input {
        pipe: stdin,
        data: input,
        written: 0,
    };
    let mut stdout = Output::new(stdout, usize::MAX);
    let mut stderr = Output::new(stderr, STDERR_KEEP);
    let mut events = EventLines::default();
    for fd in [input.fd(), stdout.fd(), stderr.fd()].into_iter().flatten() {
        set_nonblocking(fd).map_err(|errno| RunError::Io(errno.into()))?;
    }
    input.write_some();

    let mut buffer = vec![0; CHUNK];
    let mut backoff = FIRST_BACKOFF;
    // Set once the leader has exited and its group was killed: read what is left until then.
    let mut drain_until: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if drain_until.is_none()
            && let Some(reason) = stop_reason(limits.deadline, interrupt, now)
        {
            return Err(RunError::Stopped(reason));
        }
        if stdout.bytes.len() > limits.stdout_bytes {
            return Err(RunError::OutputLimit);
        }
        let open = stdout.is_open() || stderr.is_open();
        if drain_until.is_none() && group.leader_exited() {
            // Leftover background processes must not outlive the call or hold its pipes.
            group.kill();
            drain_until = Some(now + DRAIN_GRACE);
        }
        if let Some(until) = drain_until
            && (!open || now >= until)
        {
            break;
        }
        let wake = match drain_until {
            Some(until) => until,
            None => limits.deadline,
        };
        let timeout = backoff.min(wake.saturating_duration_since(now));
        let ready = wait_for_io(&input, &stdout, &stderr, timeout).map_err(RunError::Io)?;
        if ready.any() {
            backoff = FIRST_BACKOFF;
        } else {
            backoff = (backoff * 2).min(LAST_BACKOFF);
        }
        if ready.stdin {
            input.write_some();
        }
        if ready.stdout {
            stdout
                .read_available(&mut buffer, limits.stdout_bytes, None)
                .map_err(RunError::Io)?;
        }
        if ready.stderr {
            stderr
                .read_available(&mut buffer, usize::MAX, Some((&mut events, &mut *on_event)))
                .map_err(RunError::Io)?;
        }
    }
    events.finish(&mut stderr.bytes, on_event);
    let status = group.reap().map_err(RunError::Io)?;
    Ok(Finished {
        status,
        stdout: stdout.bytes,
        stderr: stderr.bytes,
        stderr_cut: stderr.cut,
    })
}

/// A program started in its own process group, with its three pipes.
pub(crate) struct Spawned {
    pub(crate) group: Group,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
}

/// Starts `command` as the leader of a new process group, its stdin, stdout and stderr
/// piped and its processes marked for [`Leftovers`]; confined as [`crate::confine`] says
/// when this thread runs a package's call.
pub(crate) fn spawn(command: &mut Command) -> io::Result<Spawned> {
    let leftovers = Leftovers::new();
    command
        .env(CALL_ID_ENV, leftovers.id())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // Inside a package's call, the program starts confined, or not at all.
    let mut child = crate::confine::spawn(command)?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    Ok(Spawned {
        group: Group::new(child, leftovers),
        stdin,
        stdout,
        stderr,
    })
}

/// Why the run must stop now, if it must.
pub(crate) fn stop_reason(
    deadline: Instant,
    interrupt: &Interrupt,
    now: Instant,
) -> Option<StopReason> {
    interrupt
        .reason()
        .or_else(|| (now >= deadline).then_some(StopReason::Timeout))
}

pub(crate) fn set_nonblocking(fd: BorrowedFd<'_>) -> nix::Result<()> {
    let flags = OFlag::from_bits_retain(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// Which pipes have something to do.
#[derive(Debug, Default, Clone, Copy)]
struct Ready {
    stdin: bool,
    stdout: bool,
    stderr: bool,
}

impl Ready {
    fn any(self) -> bool {
        self.stdin || self.stdout || self.stderr
    }
}

/// Waits until a pipe is ready (readable, writable, closed or in error) or `timeout` passes.
fn wait_for_io<R: Read + AsFd, E: Read + AsFd>(
    input: &Input<'_>,
    stdout: &Output<R>,
    stderr: &Output<E>,
    timeout: Duration,
) -> io::Result<Ready> {
    let slots = [
        (input.fd(), PollFlags::POLLOUT),
        (stdout.fd(), PollFlags::POLLIN),
        (stderr.fd(), PollFlags::POLLIN),
    ];
    let mut fds = Vec::with_capacity(slots.len());
    let mut owners = Vec::with_capacity(slots.len());
    for (index, (fd, events)) in slots.into_iter().enumerate() {
        if let Some(fd) = fd {
            fds.push(PollFd::new(fd, events));
            owners.push(index);
        }
    }
    match ppoll(&mut fds, Some(TimeSpec::from(timeout)), None) {
        Ok(_) => {}
        Err(Errno::EINTR) => return Ok(Ready::default()),
        Err(errno) => return Err(errno.into()),
    }
    let mut ready = Ready::default();
    for (fd, owner) in fds.iter().zip(owners) {
        if fd.revents().is_some_and(|events| !events.is_empty()) {
            match owner {
                0 => ready.stdin = true,
                1 => ready.stdout = true,
                _ => ready.stderr = true,
            }
        }
    }
    Ok(ready)
}

/// The call's arguments on their way into the child's stdin.
struct Input<'a> {
    pipe: Option<ChildStdin>,
    data: &'a [u8],
    written: usize,
}

impl Input<'_> {
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.pipe.as_ref().map(AsFd::as_fd)
    }

    /// Writes what the pipe takes without blocking; closes stdin once everything is written,
    /// or when the program stopped reading (`EPIPE`), which is its right.
    fn write_some(&mut self) {
        while let Some(pipe) = &mut self.pipe {
            let rest = &self.data[self.written..];
            if rest.is_empty() {
                self.pipe = None;
                return;
            }
            match pipe.write(rest) {
                Ok(written) => self.written += written,
                Err(error) if error.kind() == ErrorKind::WouldBlock => return,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(_) => self.pipe = None,
            }
        }
    }
}

/// One output pipe and what was read from it.
struct Output<R> {
    pipe: Option<R>,
    bytes: Vec<u8>,
    /// Keep only the last this many bytes (roughly: trimmed when twice as much piled up).
    keep: usize,
    /// Whether earlier bytes were dropped.
    cut: bool,
}

impl<R: Read + AsFd> Output<R> {
    fn new(pipe: Option<R>, keep: usize) -> Self {
        Self {
            pipe,
            bytes: Vec::new(),
            keep,
            cut: false,
        }
    }

    fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.pipe.as_ref().map(AsFd::as_fd)
    }

    fn is_open(&self) -> bool {
        self.pipe.is_some()
    }

    /// Reads until the pipe would block, closes, or more than `stop_after` bytes were kept;
    /// with `events`, event lines are handed over and left out as they complete.
    fn read_available(
        &mut self,
        buffer: &mut [u8],
        stop_after: usize,
        mut events: Option<Events<'_>>,
    ) -> io::Result<()> {
        while let Some(pipe) = &mut self.pipe {
            match pipe.read(buffer) {
                Ok(0) => self.pipe = None,
                Ok(read) => {
                    let from = self.bytes.len();
                    self.bytes.extend_from_slice(&buffer[..read]);
                    if let Some((lines, on_event)) = &mut events {
                        lines.take(&mut self.bytes, from, *on_event);
                    }
                    if self.bytes.len() > self.keep.saturating_mul(2) {
                        let excess = self.bytes.len() - self.keep;
                        self.bytes.drain(..excess);
                        self.cut = true;
                        if let Some((lines, _)) = &mut events {
                            lines.line_start = lines.line_start.saturating_sub(excess);
                        }
                    }
                    if self.bytes.len() > stop_after {
                        return Ok(());
                    }
                }
                Err(error) if error.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// Where a pipe's event lines go: the line splitter and the callback.
type Events<'a> = (&'a mut EventLines, &'a mut dyn FnMut(&[u8]));

/// Picks event lines out of stderr as it arrives.
#[derive(Default)]
struct EventLines {
    /// Where the current (incomplete) line starts in the collected stderr.
    line_start: usize,
}

impl EventLines {
    /// Hands every complete event line at or after `from` (new bytes) to `on_event` and
    /// removes it from `stderr`.
    fn take(&mut self, stderr: &mut Vec<u8>, from: usize, on_event: &mut dyn FnMut(&[u8])) {
        let mut search = from.max(self.line_start);
        while let Some(offset) = stderr[search..].iter().position(|&b| b == b'\n') {
            let end = search + offset + 1;
            let line = &stderr[self.line_start..end];
            if let Some(event) = line.strip_prefix(EVENT_PREFIX) {
                on_event(event.strip_suffix(b"\n").unwrap_or(event));
                stderr.drain(self.line_start..end);
                search = self.line_start;
            } else {
                self.line_start = end;
                search = end;
            }
        }
        if stderr.len() - self.line_start > EVENT_MAX {
            // Too long for an event: ordinary stderr, wherever it ends.
            self.line_start = stderr.len();
        }
    }

    /// At the end of output: a last event line without a newline still counts.
    fn finish(&mut self, stderr: &mut Vec<u8>, on_event: &mut dyn FnMut(&[u8])) {
        let start = self.line_start.min(stderr.len());
        if let Some(event) = stderr[start..].strip_prefix(EVENT_PREFIX) {
            on_event(event);
            stderr.truncate(start);
        }
    }
}

/// A spawned process group, led by the child; killed and reaped on drop unless reaped.
pub(crate) struct Group {
    child: Child,
    id: Pid,
    /// The run's processes that may have left the group.
    leftovers: Leftovers,
    reaped: bool,
}

impl Group {
    fn new(child: Child, leftovers: Leftovers) -> Self {
        let id =
            Pid::from_raw(i32::try_from(child.id()).expect("a process id always fits in `pid_t`"));
        Self {
            child,
            id,
            leftovers,
            reaped: false,
        }
    }

    /// Sends SIGKILL to every process in the group, and to the run's processes that left it.
    pub(crate) fn kill(&self) {
        // ESRCH (the group is already empty) is the outcome we want anyway.
        let _ = killpg(self.id, Signal::SIGKILL);
        self.leftovers.kill();
    }

    /// Whether the leader has exited, without reaping it (so the group id stays reserved).
    pub(crate) fn leader_exited(&self) -> bool {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        // An error (ECHILD: someone else reaped it, e.g. SIGCHLD ignored) means it is gone.
        !matches!(waitid(Id::Pid(self.id), flags), Ok(WaitStatus::StillAlive))
    }

    /// Kills what is left of the group and reaps the leader.
    pub(crate) fn reap(&mut self) -> io::Result<ExitStatus> {
        self.kill();
        self.reaped = true;
        self.child.wait()
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
            let _ = self.child.wait();
        }
    }
}
