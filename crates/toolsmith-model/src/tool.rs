//! The one trait every kind of tool implements, and what a running call can reach: its
//! deadline, a cancellation flag, the tool's options and the client (progress, logging,
//! sampling, elicitation, roots).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::caller::Caller;
use crate::deferred::Deferred;
use crate::definition::{JsonObject, ToolDefinition};
use crate::init::LazyInit;
use crate::outcome::ToolReturn;
pub use crate::watchdog::{Interrupt, StopReason};

/// A tool that can be listed and called.
///
/// Implementations run synchronously on the calling thread and must watch
/// [`CallContext::interrupt`] (and the deadline) so that a timeout or a client's
/// cancellation stops them promptly. Arguments have already been validated against the
/// definition's input schema.
pub trait Tool: Send + Sync {
    /// The tool's definition.
    fn definition(&self) -> &ToolDefinition;

    /// The tool's name: its definition's, which a [`Deferred`] tool knows without reading
    /// its file.
    fn name(&self) -> &str {
        &self.definition().name
    }

    /// Whether reading the tool's file again gives the same tool, sharing nothing with
    /// other tools (no worker pool, no init): what a folder may defer ([`Deferred`]).
    fn reloadable(&self) -> bool {
        false
    }

    /// The tool as a [`Deferred`] one, when it is: a walk over every tool reads what it
    /// needs of it there instead of its definition.
    fn deferred(&self) -> Option<&Deferred> {
        None
    }

    /// Runs the tool once.
    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure>;

    /// The init this tool shares with the others that name it, when it has one: the
    /// catalog runs it before the tool's first call (docs/tools.md, "Lazy initialization").
    fn init(&self) -> Option<&Arc<LazyInit>> {
        None
    }

    /// Does ahead what the tool's first call would otherwise do first (`tool_search`
    /// builds its index): the server calls it on a thread of its own when it publishes
    /// the tool, so the first call need not wait (docs/performance.md).
    fn prepare(&self) {}

    /// The tool's calls as futures, for a tool whose call only waits on I/O elsewhere (an
    /// upstream server's): the server runs them on its own runtime instead of a call
    /// thread, which saves two thread wake-ups a call and a thread per call in flight
    /// (docs/performance.md, "The gateway"). [`Tool::call`] must still work (the CLI calls
    /// it).
    fn as_async(&self) -> Option<&dyn AsyncTool> {
        None
    }
}

/// A call's future: what [`AsyncTool::call_async`] returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolReturn, ToolFailure>> + Send>>;

/// A tool whose calls are futures ([`Tool::as_async`]).
///
/// The future must end promptly once [`CallContext::stop_reason`] says so, as a call
/// thread must, and may be dropped at any point (the client cancelled): it then asks
/// whatever runs the call to stop.
pub trait AsyncTool: Send + Sync {
    /// Runs the tool once; `arguments` have been validated.
    fn call_async(&self, arguments: JsonObject, context: CallContext) -> ToolFuture;
}

/// Why a call produced no result of its own; always becomes an `isError` result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolFailure {
    /// The script raised an error or the program failed; the message says where.
    #[error("{message}")]
    Failed {
        /// What went wrong, with the file and line where known.
        message: String,
    },
    /// The call ran past its timeout and was stopped.
    #[error("timed out after {}", crate::duration::format(*.after))]
    TimedOut {
        /// The timeout that applied.
        after: Duration,
    },
    /// The client cancelled the call.
    #[error("cancelled by the client")]
    Cancelled,
}

impl ToolFailure {
    /// A failure with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed {
            message: message.into(),
        }
    }
}

/// Log levels of MCP `notifications/message` (RFC 5424 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Parses an MCP level name (`warn` is accepted for `warning`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "debug" => Self::Debug,
            "info" => Self::Info,
            "notice" => Self::Notice,
            "warning" | "warn" => Self::Warning,
            "error" => Self::Error,
            "critical" => Self::Critical,
            "alert" => Self::Alert,
            "emergency" => Self::Emergency,
            _ => return None,
        })
    }

    /// The MCP name of the level.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }
}

/// The client side of a call: what a tool may ask of whoever called it.
///
/// The server implements it over MCP; `toolsmith call` implements it on the terminal.
/// Requests block the calling thread until the client answers.
pub trait ClientBridge: Send + Sync {
    /// Reports progress (`notifications/progress`), when the client asked for it.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>);

    /// Sends a log message (`notifications/message`) from the tool.
    fn log(&self, level: LogLevel, logger: &str, message: &str);

    /// Asks the client's model for a completion (`sampling/createMessage`).
    fn sample(&self, request: Value) -> Result<Value, String>;

    /// Asks the user for input (`elicitation/create`).
    fn elicit(&self, message: &str, schema: Value) -> Result<Value, String>;

    /// The client's roots (`roots/list`).
    fn roots(&self) -> Result<Vec<Value>, String>;

    /// Shapes the next [`sample`](Self::sample), [`elicit`](Self::elicit) or
    /// [`roots`](Self::roots) call: `key` names the request (the key of its entry in a
    /// 2026-07-28 `InputRequiredResult`; by default one is assigned in call order), and
    /// `defer` lets the tool go on without the answer: that call then answers `null` (no
    /// roots) instead of failing when the answer is not to be had now: the client cannot
    /// give it, or, on a 2026-07-28 request, it is asked for together with the tool's other
    /// requests when the tool finishes. Bridges that do neither ignore it.
    fn next_request(&self, key: Option<&str>, defer: bool) {
        let _ = (key, defer);
    }

    /// Marks the next [`sample`](Self::sample), [`elicit`](Self::elicit) or
    /// [`roots`](Self::roots) call as asked before the call becomes an MCP task: on a
    /// call that may become one, its answer is gathered by input-required rounds of the
    /// `tools/call` itself, and the task is created after (docs/tasks.md). Bridges that
    /// make no tasks ignore it.
    fn before_task(&self) {}

    /// Whether [`progress`](Self::progress) reaches the client (it asked for progress);
    /// unwanted progress is not counted against the call's notification budget.
    fn wants_progress(&self) -> bool {
        true
    }

    /// Whether a [`log`](Self::log) message at `level` reaches the client (its level is
    /// at least the client's); unwanted logs are not counted against the call's budget.
    fn wants_log(&self, level: LogLevel) -> bool {
        let _ = level;
        true
    }

    /// Asks `question` of the client, as [`sample`](Self::sample),
    /// [`elicit`](Self::elicit) or [`roots`](Self::roots) do, and takes it back when
    /// `withdrawal` is withdrawn before the client has answered: the client is then told
    /// the request is cancelled (MCP `notifications/cancelled`) and this returns an error.
    /// For an upstream server that cancels what it asked (docs/gateway.md).
    ///
    /// The answer is the client's result: a `CreateMessageResult`, an `ElicitResult`, or
    /// `{"roots": [...]}`. By default the question is asked and never taken back.
    ///
    /// # Errors
    ///
    /// What the method asked says, or that the question was withdrawn.
    fn ask(&self, question: Question, withdrawal: &Withdrawal) -> Result<Value, String> {
        let _ = withdrawal;
        match question {
            Question::Sample(request) => self.sample(request),
            Question::Elicit { message, schema } => self.elicit(&message, schema),
            Question::Roots => self
                .roots()
                .map(|roots| serde_json::json!({ "roots": roots })),
        }
    }

    /// Whether [`inner_call`](Self::inner_call) wants to hear of the calls this call makes
    /// of other tools (the server's audit log wants them); when not, they are neither timed
    /// nor copied for it. By default not.
    fn audits_inner_calls(&self) -> bool {
        false
    }

    /// Told of a call this call made of another tool of the catalog, once it ended: code
    /// mode's `tools.NAME(...)`, `execute_tool`. By default nothing is done with it.
    fn inner_call(&self, call: &InnerCall<'_>) {
        let _ = call;
    }
}

/// A call one tool made of another through the catalog, as [`ClientBridge::inner_call`]
/// hears of it.
#[derive(Debug, Clone, Copy)]
pub struct InnerCall<'a> {
    /// The tool called, as the calling tool named it.
    pub tool: &'a str,
    /// The arguments as the calling tool gave them.
    pub arguments: &'a JsonObject,
    /// What the call answered; `None` when there is no tool of that name.
    pub outcome: Option<&'a crate::CallOutcome>,
    /// How it ended.
    pub kind: crate::OutcomeKind,
    /// How long it took.
    pub elapsed: Duration,
}

/// What [`ClientBridge::ask`] asks of the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// `sampling/createMessage` with these params.
    Sample(Value),
    /// `elicitation/create` in form mode.
    Elicit {
        /// What the user is asked.
        message: String,
        /// The form's JSON Schema.
        schema: Value,
    },
    /// `roots/list`.
    Roots,
}

/// Takes back a [`Question`] asked of the client, from any thread: whoever asked it calls
/// [`withdraw`](Self::withdraw), and the bridge that asked the client has registered what
/// to do then with [`on_withdraw`](Self::on_withdraw).
#[derive(Clone, Default)]
pub struct Withdrawal(Arc<Mutex<Withdrawn>>);

/// Whether a [`Withdrawal`] happened, and what waits for it.
#[derive(Default)]
struct Withdrawn {
    done: bool,
    actions: Vec<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Withdrawal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Withdrawal")
            .field(&self.is_withdrawn())
            .finish()
    }
}

impl Withdrawal {
    /// A question not withdrawn yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the question back: runs every action [`on_withdraw`](Self::on_withdraw)
    /// registered, once.
    pub fn withdraw(&self) {
        let actions = {
            let mut state = self.lock();
            state.done = true;
            std::mem::take(&mut state.actions)
        };
        for action in actions {
            action();
        }
    }

    /// Runs `action` when the question is withdrawn: at once if it already was.
    pub fn on_withdraw(&self, action: impl FnOnce() + Send + 'static) {
        let mut state = self.lock();
        if state.done {
            drop(state);
            action();
        } else {
            state.actions.push(Box::new(action));
        }
    }

    /// Whether the question was withdrawn.
    pub fn is_withdrawn(&self) -> bool {
        self.lock().done
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Withdrawn> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A client that supports nothing: progress and logs go nowhere, requests fail.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoClient;

impl ClientBridge for NoClient {
    fn progress(&self, _: f64, _: Option<f64>, _: Option<&str>) {}
    fn log(&self, _: LogLevel, _: &str, _: &str) {}
    fn sample(&self, _: Value) -> Result<Value, String> {
        Err("this client does not support sampling".into())
    }
    fn elicit(&self, _: &str, _: Value) -> Result<Value, String> {
        Err("this client does not support elicitation".into())
    }
    fn roots(&self) -> Result<Vec<Value>, String> {
        Ok(Vec::new())
    }
}

/// Everything a running call can reach besides its arguments.
#[derive(Clone)]
pub struct CallContext {
    /// When the call must have finished.
    pub deadline: Instant,
    /// Raised to ask the call to stop.
    pub interrupt: Interrupt,
    /// The client that made the call.
    pub client: Arc<dyn ClientBridge>,
    /// Resolved tool options (`mcp.option(name)`).
    pub options: JsonObject,
    /// Where command tools run: the client's root or the tools folder.
    pub working_dir: Option<PathBuf>,
    /// Who made the call, when the transport knows (an OAuth access token over HTTP);
    /// `None` over stdio and without OAuth.
    pub caller: Option<Arc<Caller>>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("deadline", &self.deadline)
            .field("interrupt", &self.interrupt)
            .field("working_dir", &self.working_dir)
            .finish_non_exhaustive()
    }
}

impl CallContext {
    /// A context with no client, the given timeout and no options.
    pub fn detached(timeout: Duration) -> Self {
        Self {
            deadline: Instant::now() + timeout,
            interrupt: Interrupt::new(),
            client: Arc::new(NoClient),
            options: JsonObject::new(),
            working_dir: None,
            caller: None,
        }
    }

    /// Why the call should stop now, if it should: an interrupt, or the deadline passed.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.interrupt
            .reason()
            .or_else(|| (Instant::now() >= self.deadline).then_some(StopReason::Timeout))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_withdrawal_runs_its_actions_once_and_late_ones_at_once() {
        let ran = Arc::new(AtomicUsize::new(0));
        let withdrawal = Withdrawal::new();
        let counter = Arc::clone(&ran);
        withdrawal.on_withdraw(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert!(!withdrawal.is_withdrawn());
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        withdrawal.withdraw();
        withdrawal.withdraw();
        assert_eq!(
            ran.load(Ordering::SeqCst),
            1,
            "once, however often withdrawn"
        );
        let counter = Arc::clone(&ran);
        withdrawal.clone().on_withdraw(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(
            ran.load(Ordering::SeqCst),
            2,
            "registered after, run at once"
        );
        assert!(withdrawal.is_withdrawn());
    }
}
