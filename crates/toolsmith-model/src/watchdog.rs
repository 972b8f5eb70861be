//! The one call policy, followed by both call paths — the server's `tools/call` and
//! `toolsmith call` / `toolsmith test`: how long a call may run, when its hard watchdog gives
//! up on a tool that does not stop, and the words of every result a call gets when its tool
//! gives none ([`CallFailure`]). The paths differ only in how they wait (a server task, a
//! channel); what they wait for, and what they answer, is written here once, with the
//! [`Interrupt`] a watchdog or a cancellation raises to ask a running call to stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crate::definition::ToolDefinition;
use crate::ending::OutcomeKind;
use crate::outcome::CallOutcome;

/// How long past its deadline a call may run before the watchdog gives up on it; also how
/// long the watchdog then waits for the tool to stop when asked.
pub const HARD_WATCHDOG_GRACE: Duration = Duration::from_millis(250);

/// A call's deadline and the hard watchdog behind it.
///
/// A tool is expected to watch its deadline and end with its own timeout result. The
/// watchdog is for the tool that cannot (stuck in one long native operation): it fires
/// [`HARD_WATCHDOG_GRACE`] past the deadline, asks the call to stop, waits as long again,
/// and then the call ends [`CallFailure::Abandoned`] while the tool's thread is left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watchdog {
    timeout: Duration,
    deadline: Instant,
    /// How long the call may first wait for its tool's init, on top of its timeout.
    init: Duration,
}

impl Watchdog {
    /// The timeout of one call of `definition`: `timeout` when the caller sets one (a
    /// `toolsmith test` case may), else the tool's own.
    pub fn timeout_of(definition: &ToolDefinition, timeout: Option<Duration>) -> Duration {
        timeout.unwrap_or_else(|| definition.effective_timeout())
    }

    /// Starts the clock on a call that may run for `timeout`: its deadline is `timeout` from
    /// now.
    pub fn start(timeout: Duration) -> Self {
        Self {
            timeout,
            deadline: Instant::now() + timeout,
            init: Duration::ZERO,
        }
    }

    /// The same watchdog for a call that may first run (or wait for) its tool's init, for
    /// up to `init_timeout`: the call's own clock starts once the init is done (docs/tools.md,
    /// "Lazy initialization"), so the watchdog fires that much later, plus one grace for
    /// the init's own watchdog. [`CatalogEntry::watchdog`](crate::CatalogEntry::watchdog)
    /// adds it while the init has not succeeded.
    #[must_use]
    pub fn with_init(mut self, init_timeout: Duration) -> Self {
        self.init = init_timeout + HARD_WATCHDOG_GRACE;
        self
    }

    /// The timeout the call runs under.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// When the call must have finished (its [`CallContext::deadline`](crate::CallContext)).
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The latest the call's tool may run to: its deadline, plus the time allowed for its
    /// init ([`Watchdog::with_init`]), by which its own clock may have started late. What
    /// the tool asks of the client is bounded by this.
    pub fn latest_deadline(&self) -> Instant {
        self.deadline + self.init
    }

    /// When the watchdog fires: [`HARD_WATCHDOG_GRACE`] past the deadline (and past the
    /// time allowed for an init, [`Watchdog::with_init`]), so a tool that watches its
    /// deadline ends with its own result first.
    pub fn fires_at(&self) -> Instant {
        self.deadline + self.init + HARD_WATCHDOG_GRACE
    }

    /// How long from now until the watchdog fires (zero once it has).
    pub fn until_fired(&self) -> Duration {
        self.fires_at().saturating_duration_since(Instant::now())
    }

    /// Fires: asks the call to stop ([`StopReason::Timeout`]) and returns how much longer
    /// to wait for it, [`HARD_WATCHDOG_GRACE`]; most tools stop as soon as they see the
    /// interrupt. A call still running after that ends [`Watchdog::abandoned`].
    pub fn fire(&self, interrupt: &Interrupt) -> Duration {
        interrupt.raise(StopReason::Timeout);
        HARD_WATCHDOG_GRACE
    }

    /// How a call ends whose tool did not stop when the watchdog asked.
    pub fn abandoned(&self) -> CallFailure {
        CallFailure::Abandoned {
            after: self.timeout,
        }
    }
}

/// Why a call ended without a result from its tool: it did not start, was cancelled, was
/// abandoned by the watchdog, or crashed. Each is an `isError` result
/// ([`CallFailure::outcome`]), never a protocol error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// `limit` calls of the tool are running: its `max_concurrency`.
    AtConcurrencyLimit {
        /// The tool's `max_concurrency`.
        limit: usize,
    },
    /// The tool's calls hold as many of the server's call slots as one tool may (three
    /// quarters) and it sets no `max_concurrency`.
    AtToolShare,
    /// The server's call slots are all taken by other calls.
    ServerBusy,
    /// No thread could be started to run the call.
    NoThread {
        /// Why, as the system said.
        reason: String,
    },
    /// The client cancelled the call.
    Cancelled,
    /// The watchdog fired and the tool did not stop when asked; its work was abandoned.
    Abandoned {
        /// The timeout the call ran under.
        after: Duration,
    },
    /// The tool's thread panicked.
    Crashed,
}

impl CallFailure {
    /// Why a call of `definition` found no free call slot in time: its own slots were all
    /// taken (`own_slots_full`), else the server's were.
    pub fn not_started(definition: &ToolDefinition, own_slots_full: bool) -> Self {
        match (own_slots_full, definition.max_concurrency) {
            (true, Some(limit)) => Self::AtConcurrencyLimit { limit },
            (true, None) => Self::AtToolShare,
            (false, _) => Self::ServerBusy,
        }
    }

    /// What the client reads about a call of `tool` that ended this way.
    pub fn message(&self, tool: &str) -> String {
        match self {
            Self::AtConcurrencyLimit { limit } => format!(
                "tool `{tool}` did not start: {limit} calls of it are running, its `max_concurrency`; try again later"
            ),
            Self::AtToolShare => format!(
                "tool `{tool}` did not start: its calls hold as many of the server's call slots as one tool may (three quarters); try again later, or set its `max_concurrency`"
            ),
            Self::ServerBusy => format!(
                "tool `{tool}` did not start: the server is busy with other calls; try again later"
            ),
            Self::NoThread { reason } => {
                format!("could not start a thread for tool `{tool}`: {reason}")
            }
            Self::Cancelled => format!("tool `{tool}` was cancelled by the client"),
            Self::Abandoned { after } => format!(
                "tool `{tool}` timed out after {} and did not stop when asked; its work was abandoned",
                crate::duration::format(*after)
            ),
            Self::Crashed => format!("tool `{tool}` crashed; see the server log"),
        }
    }

    /// How a call that ended this way ended.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Self::AtConcurrencyLimit { .. } | Self::AtToolShare | Self::ServerBusy => {
                OutcomeKind::Busy
            }
            Self::NoThread { .. } | Self::Crashed => OutcomeKind::Crashed,
            Self::Cancelled => OutcomeKind::Cancelled,
            Self::Abandoned { .. } => OutcomeKind::Timeout,
        }
    }

    /// The `isError` result of a call of `tool` that ended this way.
    pub fn outcome(&self, tool: &str) -> CallOutcome {
        CallOutcome::error(self.message(tool))
    }
}

/// Why a call was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The deadline passed.
    Timeout,
    /// The client cancelled.
    Cancelled,
}

/// A flag that asks a running call to stop, shared between the call and its watchdog.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<AtomicU8>);

impl Interrupt {
    /// A flag that is not raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the call to stop; the first reason given wins.
    pub fn raise(&self, reason: StopReason) {
        let code = match reason {
            StopReason::Timeout => 1,
            StopReason::Cancelled => 2,
        };
        let _ = self
            .0
            .compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Why the call was asked to stop, if it was.
    pub fn reason(&self) -> Option<StopReason> {
        match self.0.load(Ordering::Acquire) {
            1 => Some(StopReason::Timeout),
            2 => Some(StopReason::Cancelled),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::JsonObject;

    fn definition(timeout: Option<Duration>, max_concurrency: Option<usize>) -> ToolDefinition {
        let mut definition = ToolDefinition::new("spin", "Spins.", JsonObject::new());
        definition.timeout = timeout;
        definition.max_concurrency = max_concurrency;
        definition
    }

    #[test]
    fn a_callers_timeout_replaces_the_tools_own() {
        let tool = definition(Some(Duration::from_secs(5)), None);
        assert_eq!(Watchdog::timeout_of(&tool, None), Duration::from_secs(5));
        let case = Some(Duration::from_millis(300));
        assert_eq!(
            Watchdog::timeout_of(&tool, case),
            Duration::from_millis(300)
        );
        let untimed = definition(None, None);
        assert_eq!(Watchdog::timeout_of(&untimed, None), crate::DEFAULT_TIMEOUT);
    }

    #[test]
    fn the_watchdog_fires_one_grace_past_the_deadline() {
        let before = Instant::now();
        let watchdog = Watchdog::start(Duration::from_secs(2));
        assert!(watchdog.deadline() >= before + Duration::from_secs(2));
        assert!(watchdog.deadline() <= Instant::now() + Duration::from_secs(2));
        assert_eq!(
            watchdog.fires_at(),
            watchdog.deadline() + HARD_WATCHDOG_GRACE
        );
        assert!(watchdog.until_fired() > Duration::from_secs(1));
        assert!(watchdog.until_fired() <= Duration::from_secs(2) + HARD_WATCHDOG_GRACE);
    }

    #[test]
    fn a_call_that_may_run_an_init_gets_its_time_on_top() {
        let watchdog = Watchdog::start(Duration::from_secs(2));
        let waiting = watchdog.with_init(Duration::from_mins(1));
        assert_eq!(waiting.deadline(), watchdog.deadline());
        assert_eq!(watchdog.latest_deadline(), watchdog.deadline());
        assert_eq!(
            waiting.latest_deadline(),
            watchdog.deadline() + Duration::from_mins(1) + HARD_WATCHDOG_GRACE
        );
        assert_eq!(
            waiting.fires_at(),
            watchdog.fires_at() + Duration::from_mins(1) + HARD_WATCHDOG_GRACE
        );
    }

    #[test]
    fn firing_asks_the_call_to_stop_for_a_timeout_and_waits_one_grace() {
        let watchdog = Watchdog::start(Duration::from_millis(300));
        let interrupt = Interrupt::new();
        assert_eq!(watchdog.fire(&interrupt), HARD_WATCHDOG_GRACE);
        assert_eq!(interrupt.reason(), Some(StopReason::Timeout));
        assert_eq!(
            watchdog.abandoned(),
            CallFailure::Abandoned {
                after: Duration::from_millis(300)
            }
        );
    }

    #[test]
    fn a_call_without_a_slot_says_whose_slots_are_taken() {
        let limited = definition(None, Some(2));
        let unlimited = definition(None, None);
        assert_eq!(
            CallFailure::not_started(&limited, true),
            CallFailure::AtConcurrencyLimit { limit: 2 }
        );
        assert_eq!(
            CallFailure::not_started(&unlimited, true),
            CallFailure::AtToolShare
        );
        assert_eq!(
            CallFailure::not_started(&limited, false),
            CallFailure::ServerBusy
        );
    }

    // Both call paths answer with these words: the server's `tools/call`
    // and `toolsmith call` / `toolsmith test`.
    #[test]
    fn every_failure_names_the_tool_and_what_to_do() {
        let cases = [
            (
                CallFailure::AtConcurrencyLimit { limit: 2 },
                "tool `spin` did not start: 2 calls of it are running, its `max_concurrency`; try again later",
            ),
            (
                CallFailure::AtToolShare,
                "tool `spin` did not start: its calls hold as many of the server's call slots as one tool may (three quarters); try again later, or set its `max_concurrency`",
            ),
            (
                CallFailure::ServerBusy,
                "tool `spin` did not start: the server is busy with other calls; try again later",
            ),
            (
                CallFailure::NoThread {
                    reason: "out of threads".into(),
                },
                "could not start a thread for tool `spin`: out of threads",
            ),
            (
                CallFailure::Cancelled,
                "tool `spin` was cancelled by the client",
            ),
            (
                Watchdog::start(Duration::from_millis(300)).abandoned(),
                "tool `spin` timed out after 300ms and did not stop when asked; its work was abandoned",
            ),
            (
                CallFailure::Crashed,
                "tool `spin` crashed; see the server log",
            ),
        ];
        let kinds = [
            OutcomeKind::Busy,
            OutcomeKind::Busy,
            OutcomeKind::Busy,
            OutcomeKind::Crashed,
            OutcomeKind::Cancelled,
            OutcomeKind::Timeout,
            OutcomeKind::Crashed,
        ];
        for ((failure, message), kind) in cases.into_iter().zip(kinds) {
            assert_eq!(failure.kind(), kind, "{message}");
            assert_eq!(failure.message("spin"), message);
            assert_eq!(failure.outcome("spin"), CallOutcome::error(message));
        }
    }
}
