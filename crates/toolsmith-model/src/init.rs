//! Lazy initialization (docs/tools.md, "Lazy initialization"): what a tool's `init` runs
//! once, before the first call of any tool that names it, and the state every such tool
//! shares ([`LazyInit`]) — not run, running (with the calls waiting for it), ready with its
//! value, or failed and retried on the next call, with a backoff after
//! [`RETRIES_BEFORE_BACKOFF`] failures in a row.
//!
//! The init runs on the thread of the call that found it not run, under its own deadline
//! (`init_timeout`, else [`DEFAULT_INIT_TIMEOUT`](crate::DEFAULT_INIT_TIMEOUT)); concurrent calls wait for that one run.
//! Callers give such a call the init's time on top of its own ([`Watchdog::with_init`]),
//! and a call waiting for an init that ran past its deadline and the watchdog's grace stops
//! waiting and records it as abandoned, so an init that never returns fails its calls but
//! does not hold them.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::definition::ToolDefinition;
use crate::outcome::ToolReturn;
use crate::tool::{CallContext, StopReason, Tool, ToolFailure};
use crate::watchdog::{HARD_WATCHDOG_GRACE, Watchdog};

/// How many failures in a row are retried on the very next call; after that, a call in the
/// backoff after a failure answers with that failure without running the init again.
pub const RETRIES_BEFORE_BACKOFF: u32 = 3;

/// The longest backoff between two runs of a failing init.
pub const MAX_INIT_BACKOFF: Duration = Duration::from_mins(1);

/// How often a call waiting for another call's init looks at its own interrupt.
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// What a tool's `init` runs: implemented by each kind of tool (a Starlark function, a
/// command).
pub trait Initializer: Send + Sync {
    /// Runs the init once for a call of `definition` (its permissions and options apply);
    /// `context.deadline` is the init's own. Returns the value later calls read
    /// (`mcp.init_value()`).
    fn run(&self, definition: &ToolDefinition, context: &CallContext)
    -> Result<Value, ToolFailure>;
}

/// Where an init stands in this process, as `toolsmith list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitStatus {
    /// No call has run it yet.
    NotRun,
    /// A call is running it; `waiting` other calls wait for it.
    Running {
        /// The calls waiting for this run.
        waiting: usize,
    },
    /// It ran and succeeded; calls go straight to their tool.
    Ready,
    /// Its last run failed; the next call runs it again (after a backoff, past
    /// [`RETRIES_BEFORE_BACKOFF`] failures in a row).
    Failed {
        /// Failures in a row.
        failures: u32,
        /// What the last one said.
        message: String,
    },
}

impl std::fmt::Display for InitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotRun => f.write_str("not run"),
            Self::Running { waiting: 0 } => f.write_str("running"),
            Self::Running { waiting } => write!(
                f,
                "running ({waiting} call{} waiting)",
                if *waiting == 1 { "" } else { "s" }
            ),
            Self::Ready => f.write_str("ready"),
            Self::Failed { failures, message } => {
                let first = message.lines().next().unwrap_or_default();
                match failures {
                    1 => write!(f, "failed once: {first}"),
                    _ => write!(f, "failed {failures} times: {first}"),
                }
            }
        }
    }
}

impl InitStatus {
    /// The `state` of `toolsmith list --json`, with what goes with it: `{"state": "not
    /// run"}`, `{"state": "running", "waiting": 2}`, `{"state": "ready"}`, `{"state":
    /// "failed", "failures": 1, "message": "..."}`.
    pub fn to_json(&self) -> crate::JsonObject {
        let mut out = crate::JsonObject::new();
        let state = match self {
            Self::NotRun => "not run",
            Self::Running { waiting } => {
                out.insert("waiting".into(), Value::from(*waiting));
                "running"
            }
            Self::Ready => "ready",
            Self::Failed { failures, message } => {
                out.insert("failures".into(), Value::from(*failures));
                out.insert("message".into(), Value::from(message.clone()));
                "failed"
            }
        };
        out.insert("state".into(), Value::from(state));
        out
    }
}

/// One init of a catalog and the tools naming it, as `toolsmith list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitSummary {
    /// What runs: `setup`, `python3 download_model.py`.
    pub label: String,
    /// `function` (Starlark) or `command`.
    pub kind: &'static str,
    /// The tools naming it, by name.
    pub tools: Vec<String>,
    /// How long it may run (the first tool's `init_timeout`).
    pub timeout: Duration,
    /// Where it stands in this process.
    pub status: InitStatus,
}

impl InitSummary {
    /// One entry of `inits` in `toolsmith list --json`.
    pub fn to_json(&self) -> Value {
        let mut out = crate::JsonObject::new();
        out.insert("init".into(), Value::from(self.label.clone()));
        out.insert("kind".into(), Value::from(self.kind));
        out.insert("tools".into(), Value::from(self.tools.clone()));
        out.insert(
            "timeout".into(),
            Value::from(crate::duration::format(self.timeout)),
        );
        out.extend(self.status.to_json());
        Value::Object(out)
    }
}

/// One init, shared by every tool that names it (docs/tools.md, "Lazy initialization"):
/// it runs once per process, on the first call of any of them.
pub struct LazyInit {
    /// What runs, for messages: `setup`, `python3 download_model.py`.
    label: String,
    initializer: Box<dyn Initializer>,
    state: Mutex<State>,
    changed: Condvar,
}

impl std::fmt::Debug for LazyInit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyInit")
            .field("label", &self.label)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    phase: Phase,
    /// Runs started so far; a run is known by its number.
    runs: u64,
    /// Failures in a row.
    failures: u32,
    /// The last run that failed: its number, when it ended, and what it said.
    last_failure: Option<(u64, Instant, String)>,
}

#[derive(Default)]
enum Phase {
    /// Not run, or the last run failed or was cancelled.
    #[default]
    Idle,
    Running {
        run: u64,
        /// When a waiting call stops waiting and records the run as abandoned.
        abandoned_at: Instant,
        waiting: usize,
    },
    Ready(Arc<Value>),
}

/// What a call that found the init idle does, given the failures so far.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decision {
    Run,
    /// In the backoff after a failure: answer with it, for this long still.
    BackOff(Duration),
}

impl State {
    /// Whether a call arriving at `now` runs the init or waits out a backoff.
    fn decide(&self, now: Instant) -> Decision {
        let Some((_, failed_at, _)) = &self.last_failure else {
            return Decision::Run;
        };
        let Some(backoff) = backoff(self.failures) else {
            return Decision::Run;
        };
        let retry_at = *failed_at + backoff;
        if now >= retry_at {
            Decision::Run
        } else {
            Decision::BackOff(retry_at - now)
        }
    }

    fn fail(&mut self, run: u64, message: String) {
        self.failures += 1;
        self.last_failure = Some((run, Instant::now(), message));
        self.phase = Phase::Idle;
    }
}

/// The wait before another run after `failures` failures in a row: none up to
/// [`RETRIES_BEFORE_BACKOFF`], then 1 s, doubling, at most [`MAX_INIT_BACKOFF`].
fn backoff(failures: u32) -> Option<Duration> {
    let past = failures.checked_sub(RETRIES_BEFORE_BACKOFF)?;
    let seconds = 1u64.checked_shl(past).unwrap_or(u64::MAX);
    Some(Duration::from_secs(seconds).min(MAX_INIT_BACKOFF))
}

impl LazyInit {
    /// An init that has not run; `label` names it in messages (`setup`, `python3
    /// download_model.py`).
    pub fn new(label: impl Into<String>, initializer: impl Initializer + 'static) -> Self {
        Self {
            label: label.into(),
            initializer: Box::new(initializer),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    /// What runs, as messages name it.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Where the init stands.
    pub fn status(&self) -> InitStatus {
        let state = self.lock();
        match &state.phase {
            Phase::Running { waiting, .. } => InitStatus::Running { waiting: *waiting },
            Phase::Ready(_) => InitStatus::Ready,
            Phase::Idle => match &state.last_failure {
                Some((_, _, message)) => InitStatus::Failed {
                    failures: state.failures,
                    message: message.clone(),
                },
                None => InitStatus::NotRun,
            },
        }
    }

    /// Whether it has succeeded: a call then needs no time for it.
    pub fn is_ready(&self) -> bool {
        matches!(self.lock().phase, Phase::Ready(_))
    }

    /// The value the init returned, once it succeeded.
    pub fn value(&self) -> Option<Arc<Value>> {
        match &self.lock().phase {
            Phase::Ready(value) => Some(Arc::clone(value)),
            _ => None,
        }
    }

    /// Makes sure the init has run before a call of `definition`: runs it on this thread
    /// when no call has (or the last run failed), waits when another call is running it.
    ///
    /// Returns how long the call spent on it, which the call's own deadline is moved by.
    /// A failure is the message the call answers with (`isError`): the init's, its
    /// timeout, its abandonment, or the backoff; `Cancelled` or `TimedOut` when the call
    /// itself was stopped while it waited.
    pub fn ensure(
        &self,
        definition: &ToolDefinition,
        context: &CallContext,
    ) -> Result<Duration, ToolFailure> {
        let started = Instant::now();
        let mut state = self.lock();
        loop {
            let running = match &mut state.phase {
                Phase::Ready(_) => return Ok(started.elapsed()),
                Phase::Running { run, waiting, .. } => {
                    *waiting += 1;
                    Some(*run)
                }
                Phase::Idle => None,
            };
            if let Some(run) = running {
                let (waited, outcome) = self.wait_for(state, run, context);
                state = waited;
                if let Phase::Running {
                    run: running,
                    waiting,
                    ..
                } = &mut state.phase
                    && *running == run
                {
                    *waiting -= 1;
                }
                if let Waited::Stopped(reason) = outcome {
                    return Err(stopped(reason, definition));
                }
                if let Some((failed, _, message)) = &state.last_failure
                    && *failed == run
                    && !matches!(state.phase, Phase::Ready(_))
                {
                    return Err(self.failed(definition, message, state.failures));
                }
                // Ready, or the run was cancelled with the call that ran it: look again.
                continue;
            }
            if let Decision::BackOff(left) = state.decide(Instant::now()) {
                let (_, _, message) = state
                    .last_failure
                    .as_ref()
                    .expect("a backoff follows a failure");
                return Err(self.backing_off(definition, message, state.failures, left));
            }
            return self.run_here(state, definition, context, started);
        }
    }

    /// Runs the init on this call's thread, under its own deadline, and records how it
    /// ended for the calls waiting for it.
    fn run_here(
        &self,
        mut state: MutexGuard<'_, State>,
        definition: &ToolDefinition,
        context: &CallContext,
        started: Instant,
    ) -> Result<Duration, ToolFailure> {
        let timeout = definition.effective_init_timeout();
        state.runs += 1;
        let run = state.runs;
        let watchdog = Watchdog::start(timeout);
        state.phase = Phase::Running {
            run,
            abandoned_at: watchdog.fires_at() + HARD_WATCHDOG_GRACE,
            waiting: 0,
        };
        drop(state);
        let init_context = CallContext {
            deadline: watchdog.deadline(),
            ..context.clone()
        };
        let result = self.initializer.run(definition, &init_context);
        let mut state = self.lock();
        let still_ours =
            matches!(state.phase, Phase::Running { run: running, .. } if running == run);
        let answer = match result {
            Ok(value) => {
                // A late success still counts, even after a waiting call gave up on this run.
                state.phase = Phase::Ready(Arc::new(value));
                state.failures = 0;
                Ok(started.elapsed())
            }
            Err(ToolFailure::Cancelled) => {
                // Not the init's fault: the next call (or a waiting one) runs it afresh.
                if still_ours {
                    state.phase = Phase::Idle;
                }
                Err(ToolFailure::Cancelled)
            }
            Err(failure) => {
                let message = match failure {
                    ToolFailure::Failed { message } => message,
                    ToolFailure::TimedOut { .. } | ToolFailure::Cancelled => format!(
                        "init `{}` timed out after {}",
                        self.label,
                        crate::duration::format(timeout)
                    ),
                };
                if still_ours {
                    state.fail(run, message.clone());
                }
                Err(self.failed(definition, &message, state.failures.max(1)))
            }
        };
        self.changed.notify_all();
        answer
    }

    /// Waits until run `run` ends, the call is stopped, or the run is overdue (then it is
    /// recorded as abandoned and counts as ended).
    fn wait_for<'a>(
        &self,
        mut state: MutexGuard<'a, State>,
        run: u64,
        context: &CallContext,
    ) -> (MutexGuard<'a, State>, Waited) {
        loop {
            let abandoned_at = match &state.phase {
                Phase::Running {
                    run: running,
                    abandoned_at,
                    ..
                } if *running == run => *abandoned_at,
                _ => return (state, Waited::Ended),
            };
            if let Some(reason) = context.interrupt.reason() {
                return (state, Waited::Stopped(reason));
            }
            let now = Instant::now();
            if now >= abandoned_at {
                let message = format!(
                    "init `{}` ran past its timeout and did not stop when asked; its work was abandoned",
                    self.label
                );
                state.fail(run, message);
                self.changed.notify_all();
                return (state, Waited::Ended);
            }
            let slice = WAIT_SLICE.min(abandoned_at - now);
            state = self
                .changed
                .wait_timeout(state, slice)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn failed(&self, definition: &ToolDefinition, message: &str, failures: u32) -> ToolFailure {
        let again = match backoff(failures) {
            Some(wait) => format!(
                "it failed {failures} times in a row; a call after {} runs it again",
                crate::duration::format(wait)
            ),
            None => "the next call runs it again".to_owned(),
        };
        ToolFailure::failed(format!(
            "tool `{}` did not run: its init `{}` failed ({again}): {message}",
            definition.name, self.label
        ))
    }

    fn backing_off(
        &self,
        definition: &ToolDefinition,
        message: &str,
        failures: u32,
        left: Duration,
    ) -> ToolFailure {
        // Whole seconds read better than "1.234s" in a message a model acts on.
        let left = Duration::from_secs(left.as_secs() + u64::from(left.subsec_nanos() > 0));
        ToolFailure::failed(format!(
            "tool `{}` did not run: its init `{}` failed {failures} times in a row and runs again on a call after {}; it said: {message}",
            definition.name,
            self.label,
            crate::duration::format(left)
        ))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent between statements; a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

enum Waited {
    Ended,
    Stopped(StopReason),
}

/// The failure of a call stopped while it waited for another call's init.
fn stopped(reason: StopReason, definition: &ToolDefinition) -> ToolFailure {
    match reason {
        StopReason::Cancelled => ToolFailure::Cancelled,
        StopReason::Timeout => ToolFailure::TimedOut {
            after: definition.effective_timeout(),
        },
    }
}

/// A tool with an init of its own kind's choosing: calls go to `tool`, and the catalog runs
/// `init` first. Manifests wrap their tool this way (a command init works for a script as
/// for a command).
pub struct InitializedTool {
    tool: Arc<dyn Tool>,
    init: Arc<LazyInit>,
}

impl InitializedTool {
    /// `tool`, with `init` run before its first call.
    pub fn new(tool: Arc<dyn Tool>, init: Arc<LazyInit>) -> Self {
        Self { tool, init }
    }
}

impl Tool for InitializedTool {
    fn definition(&self) -> &ToolDefinition {
        self.tool.definition()
    }

    fn call(
        &self,
        arguments: &crate::JsonObject,
        context: &CallContext,
    ) -> Result<crate::ToolReturn, ToolFailure> {
        self.tool.call(arguments, context)
    }

    fn init(&self) -> Option<&Arc<LazyInit>> {
        Some(&self.init)
    }
}

// Written here, not beside the rest of `ToolReturn`, so that the result contract does not
// reach up to the `Tool` trait's failures.
impl ToolReturn {
    /// What an init returned, as the value later calls read (`mcp.init_value()`): text as
    /// a string, other values as they are; an error result (`mcp.error(...)`, `isError`)
    /// fails the init with its message.
    pub fn into_init_value(self) -> Result<Value, ToolFailure> {
        match self {
            Self::Text(text) => Ok(Value::String(text)),
            Self::Value(value) => Ok(value),
            Self::Error { message, .. } => Err(ToolFailure::failed(message)),
            Self::Outcome(outcome) if outcome.is_error => {
                Err(ToolFailure::failed(outcome.joined_text()))
            }
            Self::Outcome(outcome) => {
                let text = outcome.joined_text();
                Ok(outcome.structured_content.unwrap_or(Value::String(text)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;
    use crate::JsonObject;

    /// Fails until `fail_first` runs have failed, then returns the run count.
    struct Counting {
        runs: Arc<AtomicUsize>,
        fail_first: usize,
    }

    impl Initializer for Counting {
        fn run(&self, _: &ToolDefinition, _: &CallContext) -> Result<Value, ToolFailure> {
            let run = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
            if run <= self.fail_first {
                Err(ToolFailure::failed(format!("not yet ({run})")))
            } else {
                Ok(json!({"runs": run}))
            }
        }
    }

    fn init(fail_first: usize) -> (LazyInit, Arc<AtomicUsize>) {
        let runs = Arc::new(AtomicUsize::new(0));
        let initializer = Counting {
            runs: Arc::clone(&runs),
            fail_first,
        };
        (LazyInit::new("setup", initializer), runs)
    }

    fn definition() -> ToolDefinition {
        ToolDefinition::new("embed", "Embeds.", JsonObject::new())
    }

    fn context() -> CallContext {
        CallContext::detached(Duration::from_secs(5))
    }

    #[test]
    fn a_ready_init_is_not_run_again() {
        let (init, runs) = init(0);
        assert_eq!(init.status(), InitStatus::NotRun);
        init.ensure(&definition(), &context()).unwrap();
        init.ensure(&definition(), &context()).unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(init.status(), InitStatus::Ready);
        assert_eq!(*init.value().unwrap(), json!({"runs": 1}));
    }

    // A failing init is the call's error and is retried on the next call.
    #[test]
    fn a_failing_init_fails_the_call_and_runs_again_on_the_next() {
        let (init, runs) = init(1);
        let failure = init.ensure(&definition(), &context()).unwrap_err();
        assert_eq!(
            failure.to_string(),
            "tool `embed` did not run: its init `setup` failed (the next call runs it again): not yet (1)"
        );
        assert_eq!(
            init.status().to_string(),
            "failed once: not yet (1)".to_owned()
        );
        init.ensure(&definition(), &context()).unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        assert_eq!(*init.value().unwrap(), json!({"runs": 2}));
    }

    #[test]
    fn three_failures_in_a_row_start_a_backoff() {
        let (init, runs) = init(usize::MAX);
        for _ in 0..2 {
            init.ensure(&definition(), &context()).unwrap_err();
        }
        let third = init.ensure(&definition(), &context()).unwrap_err();
        assert!(
            third
                .to_string()
                .contains("it failed 3 times in a row; a call after 1s runs it again"),
            "{third}"
        );
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        // No clock in the test: the decision is checked at chosen instants.
        let state = init.lock();
        let (_, failed_at, _) = state.last_failure.clone().unwrap();
        assert_eq!(
            state.decide(failed_at + Duration::from_millis(400)),
            Decision::BackOff(Duration::from_millis(600))
        );
        assert_eq!(
            state.decide(failed_at + Duration::from_secs(1)),
            Decision::Run
        );
    }

    #[test]
    fn the_backoff_doubles_up_to_a_minute() {
        assert_eq!(backoff(2), None);
        assert_eq!(backoff(3), Some(Duration::from_secs(1)));
        assert_eq!(backoff(5), Some(Duration::from_secs(4)));
        assert_eq!(backoff(40), Some(MAX_INIT_BACKOFF));
        assert_eq!(backoff(u32::MAX), Some(MAX_INIT_BACKOFF));
    }

    /// Blocks until released, then succeeds.
    struct Gated {
        runs: Arc<AtomicUsize>,
        open: Gate,
    }

    impl Initializer for Gated {
        fn run(&self, _: &ToolDefinition, _: &CallContext) -> Result<Value, ToolFailure> {
            self.runs.fetch_add(1, Ordering::SeqCst);
            let (open, changed) = &*self.open;
            let mut guard = open.lock().unwrap();
            while !*guard {
                guard = changed.wait(guard).unwrap();
            }
            Ok(json!("loaded"))
        }
    }

    type Gate = Arc<(Mutex<bool>, Condvar)>;

    /// An init that holds until [`release`]d, and how many times it ran.
    fn gated() -> (Arc<LazyInit>, Arc<AtomicUsize>, Gate) {
        let runs = Arc::new(AtomicUsize::new(0));
        let open = Arc::new((Mutex::new(false), Condvar::new()));
        let initializer = Gated {
            runs: Arc::clone(&runs),
            open: Arc::clone(&open),
        };
        (Arc::new(LazyInit::new("setup", initializer)), runs, open)
    }

    fn release(gate: &Gate) {
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
    }

    #[test]
    fn concurrent_first_calls_wait_for_one_run() {
        let (init, runs, open) = gated();
        let calls: Vec<_> = (0..8)
            .map(|_| {
                let init = Arc::clone(&init);
                std::thread::spawn(move || init.ensure(&definition(), &context()).is_ok())
            })
            .collect();
        while init.status() != (InitStatus::Running { waiting: 7 }) {
            std::thread::yield_now();
        }
        release(&open);
        for call in calls {
            assert!(call.join().unwrap());
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    // An init that never returns fails the calls waiting for it once its
    // deadline and the watchdog's grace have passed, instead of holding them.
    #[test]
    fn a_runaway_init_is_abandoned_by_the_calls_waiting_for_it() {
        let (init, runs, open) = gated();
        let mut definition = definition();
        definition.init_timeout = Some(Duration::from_millis(100));
        let runner = {
            let (init, definition) = (Arc::clone(&init), definition.clone());
            std::thread::spawn(move || init.ensure(&definition, &context()))
        };
        while runs.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        let waiting = init.ensure(&definition, &context()).unwrap_err();
        assert_eq!(
            waiting.to_string(),
            "tool `embed` did not run: its init `setup` failed (the next call runs it again): init `setup` ran past its timeout and did not stop when asked; its work was abandoned"
        );
        assert!(matches!(
            init.status(),
            InitStatus::Failed { failures: 1, .. }
        ));
        // The stuck run ends after all: a late success still counts.
        release(&open);
        runner.join().unwrap().unwrap();
        assert_eq!(init.status(), InitStatus::Ready);
    }
}
