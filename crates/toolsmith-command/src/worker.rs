//! [`WorkerPool`]: the warm processes of a `worker = true` command (docs/tools.md, "Warm
//! command tools"). Instead of a process per call, up to `processes` copies of the program
//! keep running, each serving one call at a time as a JSON line on stdin answered by a JSON
//! line on stdout. Calls beyond the pool wait for a free process until their deadline; a
//! process that crashes, hangs past a call's deadline or writes something that is not an
//! answer is killed (its whole process group) and replaced, failing only that call.

use std::collections::BTreeSet;
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use toolsmith_model::{CallContext, JsonObject, StopReason, Tool, ToolFailure, ToolReturn};

use crate::output::{format_bytes, interpret_result};
use crate::process::stop_reason;
use crate::template::{ArgvTemplate, TemplateError};
use crate::tool::{
    CommandTool, clear_environment, describe_exit, resolve_file_arguments, resolve_program,
    spawn_failure, stream_details,
};
use crate::worker_process::{Broken, Exchange, Remains, WorkerProcess};

/// How often a call waiting for a free process checks its interrupt.
const WAIT_SLICE: Duration = Duration::from_millis(10);

/// A `[worker]` table: how many processes, and when one is replaced or stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorkerSettings {
    /// How many processes may run at once (`processes`, default 1).
    pub processes: NonZeroUsize,
    /// Replace a process after it answered this many calls (`max_calls`).
    pub max_calls: Option<NonZeroU64>,
    /// Stop a process that served no call for this long (`idle_timeout`).
    pub idle_timeout: Option<Duration>,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            processes: NonZeroUsize::MIN,
            max_calls: None,
            idle_timeout: None,
        }
    }
}

/// The warm processes running one worker command, shared by the tools that name it.
///
/// Processes start on demand, run in the tools folder with the cleared environment of a
/// command tool (`PATH`, `HOME`, `LANG`, the `permissions.env` names of every tool of the
/// pool, `TOOLSMITH_TOOL_DIR`, and `TOOLSMITH_WORKER=1`), and are killed with their process
/// group when they break, when `max_calls` or `idle_timeout` retires them, and when the pool
/// is dropped. A worker should also exit when its stdin closes.
pub struct WorkerPool {
    /// The command as written, for messages.
    command: Vec<String>,
    /// The program to run and its arguments, resolved against the tools folder.
    program: PathBuf,
    arguments: Vec<String>,
    base_dir: PathBuf,
    /// The files of the tools folder the command names (`greeter.py`): a process started
    /// before one of them changed is replaced.
    sources: Vec<PathBuf>,
    settings: WorkerSettings,
    /// The `permissions.env` names of the pool's tools.
    permitted: Mutex<BTreeSet<String>>,
    state: Mutex<State>,
    /// Signalled when a process is returned or a slot freed.
    freed: Condvar,
    /// Call ids, unique in the pool.
    next_id: AtomicU64,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("command", &self.command)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The processes of a pool.
#[derive(Default)]
struct State {
    /// Running and free, the most recently used last.
    idle: Vec<WorkerProcess>,
    /// Serving a call or being started.
    busy: usize,
}

impl WorkerPool {
    /// A pool running `command` from the tools folder `base_dir`.
    ///
    /// A worker takes its arguments on stdin, so the command may have no `{placeholder}`;
    /// file arguments and a relative program path are resolved as [`CommandTool::new`]
    /// resolves them.
    pub fn new(
        command: Vec<String>,
        base_dir: impl Into<PathBuf>,
        settings: WorkerSettings,
    ) -> Result<Arc<Self>, TemplateError> {
        let base_dir = base_dir.into();
        let base_dir = std::path::absolute(&base_dir).unwrap_or(base_dir);
        let resolved = resolve_file_arguments(&base_dir, &command);
        // The arguments `resolve_file_arguments` made absolute are the folder's files.
        let sources = resolved
            .iter()
            .zip(&command)
            .skip(1)
            .filter(|(resolved, written)| resolved != written)
            .map(|(resolved, _)| PathBuf::from(resolved))
            .collect();
        let mut argv = ArgvTemplate::parse(&resolved, &[])?
            .render(&JsonObject::new())
            .into_iter();
        let program = resolve_program(&base_dir, &argv.next().unwrap_or_default());
        let pool = Arc::new(Self {
            command,
            program,
            arguments: argv.collect(),
            base_dir,
            sources,
            settings,
            permitted: Mutex::default(),
            state: Mutex::default(),
            freed: Condvar::new(),
            next_id: AtomicU64::new(1),
        });
        if let Some(timeout) = settings.idle_timeout {
            let watched = Arc::downgrade(&pool);
            // Without a thread, the pool simply never stops idle processes.
            let _ = std::thread::Builder::new()
                .name("worker-idle".into())
                .spawn(move || stop_idle(&watched, timeout));
        }
        Ok(pool)
    }

    /// The command as written in the manifest.
    pub fn command(&self) -> &[String] {
        &self.command
    }

    /// The tools folder the processes run in.
    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// The pool's settings.
    pub fn settings(&self) -> WorkerSettings {
        self.settings
    }

    /// Lets the pool's processes see these environment variables (a tool's
    /// `permissions.env`); processes already running keep their environment.
    pub fn permit_env<'a>(&self, names: impl IntoIterator<Item = &'a String>) {
        let mut permitted = self
            .permitted
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        permitted.extend(names.into_iter().cloned());
    }

    /// How many processes are running (idle or serving a call).
    pub fn running(&self) -> usize {
        let state = self.lock();
        state.idle.len() + state.busy
    }

    /// Serves one call of `tool` with `arguments` (defaults filled in).
    pub(crate) fn call(
        &self,
        tool: &CommandTool,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        let mut process = self.acquire(tool, context)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request = serde_json::json!({
            "id": id,
            "tool": tool.definition().name,
            "arguments": arguments,
            "options": context.options,
        });
        let request = serde_json::to_vec(&request).expect("a JSON value always serializes");
        let mut on_event = |event: &[u8]| tool.event(event, context);
        match process.call(id, &request, context, &mut on_event) {
            Ok(exchange) => {
                process.calls += 1;
                self.release(process);
                match exchange {
                    Exchange::Answered(Ok(result)) => interpret_result(result).map_err(|error| {
                        self.failure(format_args!(
                            "answered with an object with MCP result keys that is not a valid CallToolResult: {error}"
                        ))
                    }),
                    Exchange::Answered(Err(message)) => Err(ToolFailure::failed(message)),
                    Exchange::Cancelled => Err(ToolFailure::Cancelled),
                }
            }
            Err(broken) => {
                let remains = process.terminate();
                self.discard();
                Err(self.broken_failure(tool, id, &broken, &remains))
            }
        }
    }

    /// A free process: an idle one, a new one while the pool has room, or the first one
    /// returned before the call's deadline.
    fn acquire(
        &self,
        tool: &CommandTool,
        context: &CallContext,
    ) -> Result<WorkerProcess, ToolFailure> {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            match stop_reason(context.deadline, &context.interrupt, now) {
                Some(StopReason::Cancelled) => return Err(ToolFailure::Cancelled),
                Some(StopReason::Timeout) => {
                    return Err(self.failure(format_args!(
                        "had no free process before the call's timeout of {} ({} busy); raise `processes` in the manifest's `[worker]` table",
                        toolsmith_model::duration::format(tool.definition().effective_timeout()),
                        self.settings.processes,
                    )));
                }
                None => {}
            }
            while let Some(process) = state.idle.pop() {
                if process.exited() {
                    tracing::debug!(command = %self.display(), "a worker exited while idle");
                } else if self.changed_since(&process) {
                    tracing::info!(command = %self.display(), "restarting a worker: its program changed");
                } else {
                    state.busy += 1;
                    return Ok(process);
                }
            }
            if state.busy < self.settings.processes.get() {
                state.busy += 1;
                drop(state);
                return self.start(tool).inspect_err(|_| self.discard());
            }
            let wait = WAIT_SLICE.min(context.deadline.saturating_duration_since(now));
            state = self
                .freed
                .wait_timeout(state, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Whether one of the command's files was modified after `process` started, so that
    /// editing a worker while serving takes effect on the next call.
    fn changed_since(&self, process: &WorkerProcess) -> bool {
        self.sources.iter().any(|source| {
            std::fs::metadata(source)
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| modified > process.started)
        })
    }

    /// Starts a process.
    fn start(&self, tool: &CommandTool) -> Result<WorkerProcess, ToolFailure> {
        let mut command = Command::new(&self.program);
        command.args(&self.arguments).current_dir(&self.base_dir);
        {
            let permitted = self
                .permitted
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            clear_environment(&mut command, permitted.iter().map(String::as_str));
        }
        command
            .env("TOOLSMITH_TOOL_DIR", &self.base_dir)
            .env("TOOLSMITH_WORKER", "1");
        WorkerProcess::spawn(&mut command, tool.output_limit()).map_err(|error| {
            let written = self.command.first().map_or("", String::as_str);
            spawn_failure(written, &self.program, &error)
        })
    }

    /// Returns a process that answered; one past `max_calls` is stopped instead.
    fn release(&self, mut process: WorkerProcess) {
        let retired = self
            .settings
            .max_calls
            .is_some_and(|max| process.calls >= max.get());
        let mut state = self.lock();
        state.busy -= 1;
        if retired {
            drop(state);
            self.freed.notify_one();
            // Dropping the process kills its group; outside the lock, it delays no call.
            drop(process);
            return;
        }
        process.idle_since = Instant::now();
        state.idle.push(process);
        drop(state);
        self.freed.notify_one();
    }

    /// Frees the slot of a process that is gone.
    fn discard(&self) {
        self.lock().busy -= 1;
        self.freed.notify_one();
    }

    /// What the client reads when a worker broke during call `id`.
    fn broken_failure(
        &self,
        tool: &CommandTool,
        id: u64,
        broken: &Broken,
        remains: &Remains,
    ) -> ToolFailure {
        const REPLACED: &str = "the next call starts a new process";
        let what = match broken {
            Broken::Cancelled => return ToolFailure::Cancelled,
            Broken::Exited => {
                let ended = remains
                    .status
                    .map_or_else(|| "exited".to_owned(), describe_exit);
                format!("{ended} during the call; {REPLACED}")
            }
            Broken::TimedOut => format!(
                "did not answer within {} and was killed; {REPLACED}",
                toolsmith_model::duration::format(tool.definition().effective_timeout())
            ),
            Broken::Garbage(line) => format!(
                "wrote a line that is not an answer to call {id} and was killed ({REPLACED}): `{line}`; \
                 a worker answers with one line, {{\"id\": {id}, \"result\": ...}} or {{\"id\": {id}, \"error\": \"...\"}}, and logs to stderr"
            ),
            Broken::OutputLimit => format!(
                "was stopped: its answer exceeded {}; write large results to a file and return its path",
                format_bytes(tool.output_limit())
            ),
            Broken::Io(error) => format!("failed: {error}; {REPLACED}"),
        };
        let details = remains
            .stderr
            .clone()
            .map(|tail| stream_details("stderr", tail))
            .unwrap_or_default();
        self.failure(format_args!("{what}{details}"))
    }

    fn failure(&self, message: impl std::fmt::Display) -> ToolFailure {
        ToolFailure::failed(format!("worker `{}` {message}", self.display()))
    }

    fn display(&self) -> String {
        self.command.join(" ")
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stops the processes of `pool` that were idle for `timeout`, until the pool is dropped.
fn stop_idle(pool: &Weak<WorkerPool>, timeout: Duration) {
    let period = (timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    loop {
        std::thread::sleep(period);
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let now = Instant::now();
        let expired: Vec<WorkerProcess> = {
            let mut state = pool.lock();
            let (expired, kept) = std::mem::take(&mut state.idle)
                .into_iter()
                .partition(|process| now.duration_since(process.idle_since) >= timeout);
            state.idle = kept;
            expired
        };
        // Dropping a process kills its group.
        drop(expired);
    }
}
