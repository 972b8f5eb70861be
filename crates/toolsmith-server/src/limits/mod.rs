//! Rate limits and quotas (`[limits]`; docs/limits.md): calls per minute per caller, calls
//! at once per caller, and calls per minute per tool. [`Limits`] decides; the counting is
//! behind [`Counters`], held in this process ([`MemoryCounters`]) or, with `--state`, in
//! Redis ([`RedisCounters`]), so that replicas share one budget.
//!
//! Every rate is a fixed window of a minute that starts with the first call counted in it
//! (not at the top of the clock's minute): a burst of `calls_per_minute + 1` calls always
//! sees the last one refused, and `Retry-After` is the time left in the window. Where the
//! limits are enforced is the transports' business: the HTTP endpoint refuses a caller's
//! excess with 429 (`http/limits.rs`), stdio with a JSON-RPC error (`handler.rs`), and a
//! tool's excess is an `isError` result on every transport (`call.rs`).
//!
//! When the counters cannot be reached (Redis down) the call goes ahead: limits fail open,
//! with a warning in the log at most every few seconds, since refusing every call because
//! a counter is away would turn a Redis outage into a full one.

mod memory;
mod redis;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use toolsmith_model::LimitSettings;

pub use memory::MemoryCounters;
pub use redis::RedisCounters;

/// The JSON-RPC error code of a call refused by a caller's limit (in the body of HTTP's 429,
/// and over stdio): in the range JSON-RPC leaves to servers, its last digits those of 429.
pub const RATE_LIMITED: rmcp::model::ErrorCode = rmcp::model::ErrorCode(-32029);

/// A counter's store failed (Redis unreachable, or an answer of the wrong shape).
#[derive(Debug, thiserror::Error)]
#[error("the rate-limit counters are unreachable: {0}")]
pub struct CounterError(pub String);

/// The window a rate was counted in, as it stands after counting one more call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Calls counted in the window, this one included.
    pub count: u64,
    /// Until the window ends.
    pub resets_in: Duration,
}

/// Where limits are counted: atomically, so two replicas counting the same key at once
/// both see it.
#[async_trait::async_trait]
pub trait Counters: Send + Sync + 'static {
    /// Counts one more call under `key` in its current window of length `window` (a new
    /// window begins when none is running).
    async fn count(&self, key: &str, window: Duration) -> Result<Window, CounterError>;

    /// Takes one of `limit` slots under `key`; `false` when all are taken.
    async fn acquire(&self, key: &str, limit: u32) -> Result<bool, CounterError>;

    /// Gives back a slot [`Counters::acquire`] took.
    async fn release(&self, key: &str) -> Result<(), CounterError>;
}

/// Which limit refused a call: the `limit` label of `toolsmith_rate_limited_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// `[limits] calls_per_minute`, per caller.
    CallsPerMinute,
    /// `[limits] concurrent_calls`, per caller.
    ConcurrentCalls,
    /// `[limits.tools] NAME`, per tool.
    ToolCallsPerMinute,
}

impl LimitKind {
    /// Every kind, in the order of [`LimitKind::index`].
    pub const ALL: [Self; 3] = [
        Self::CallsPerMinute,
        Self::ConcurrentCalls,
        Self::ToolCallsPerMinute,
    ];

    /// The name used in messages, error data and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CallsPerMinute => "calls_per_minute",
            Self::ConcurrentCalls => "concurrent_calls",
            Self::ToolCallsPerMinute => "tools",
        }
    }

    /// Its position in [`LimitKind::ALL`].
    pub fn index(self) -> usize {
        match self {
            Self::CallsPerMinute => 0,
            Self::ConcurrentCalls => 1,
            Self::ToolCallsPerMinute => 2,
        }
    }
}

/// A call refused by a limit: which one, for whom, and when to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The limit.
    pub kind: LimitKind,
    /// Its value.
    pub limit: u32,
    /// The caller or the tool it counts.
    pub counted: String,
    /// When a call may succeed again (whole seconds, at least one).
    pub retry_after: Duration,
}

impl fmt::Display for Refusal {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            kind,
            limit,
            counted,
            retry_after,
        } = self;
        let seconds = retry_after.as_secs();
        match kind {
            LimitKind::CallsPerMinute => write!(
                formatter,
                "rate limit exceeded: `[limits] calls_per_minute` allows {limit} tool calls a minute for {counted}; retry in {seconds} s"
            ),
            LimitKind::ConcurrentCalls => write!(
                formatter,
                "rate limit exceeded: `[limits] concurrent_calls` allows {limit} tool calls at once for {counted}; retry in {seconds} s, once one has finished"
            ),
            LimitKind::ToolCallsPerMinute => write!(
                formatter,
                "rate limit exceeded: `[limits.tools] {counted}` allows {limit} calls of `{counted}` a minute; retry in {seconds} s"
            ),
        }
    }
}

impl Refusal {
    /// The JSON-RPC error of a caller refused (data: [`Refusal::to_json`]).
    pub(crate) fn error_data(&self) -> rmcp::ErrorData {
        rmcp::ErrorData::new(RATE_LIMITED, self.to_string(), Some(self.to_json()))
    }

    /// The `data` of the JSON-RPC error and the `structuredContent` of the `isError`
    /// result: `{"limit": ..., "max": ..., "retryAfter": seconds}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "limit": self.kind.as_str(),
            "max": self.limit,
            "retryAfter": self.retry_after.as_secs(),
        })
    }
}

/// The limits of one server and where they are counted; cheap to clone.
#[derive(Clone)]
pub struct Limits(Arc<Inner>);

struct Inner {
    /// Replaced when the folder is loaded again (`--watch`).
    settings: ArcSwap<LimitSettings>,
    counters: Arc<dyn Counters>,
    /// Seconds since the epoch of the last "counters unreachable" warning.
    warned_at: AtomicU64,
}

impl fmt::Debug for Limits {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Limits")
            .field("settings", &self.0.settings.load())
            .finish_non_exhaustive()
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::in_memory(LimitSettings::default())
    }
}

/// How often a failing counter store is warned about.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// How long a slot of `concurrent_calls` is held in a shared store at most, so that the
/// slots of a replica that died holding them come free.
pub(crate) const SLOT_LEASE: Duration = Duration::from_mins(10);

impl Limits {
    /// `settings`, counted in `counters`.
    pub fn new(settings: LimitSettings, counters: Arc<dyn Counters>) -> Self {
        Self(Arc::new(Inner {
            settings: ArcSwap::from_pointee(settings),
            counters,
            warned_at: AtomicU64::new(0),
        }))
    }

    /// `settings`, counted in this process.
    pub fn in_memory(settings: LimitSettings) -> Self {
        Self::new(settings, Arc::new(MemoryCounters::default()))
    }

    /// Puts `settings` in force from the next call on (a reloaded `[limits]`); the counts
    /// so far, and the calls running, are kept.
    pub fn set_settings(&self, settings: LimitSettings) {
        self.0.settings.store(Arc::new(settings));
    }

    /// Whether any limit applies to a caller (so the transports need not look at them).
    pub(crate) fn per_caller(&self) -> bool {
        let settings = self.0.settings.load();
        settings.calls_per_minute.is_some() || settings.concurrent_calls.is_some()
    }

    /// Admits one tool call of `caller` (`sub:SUBJECT`, `addr:IP`, `stdio`; the text after
    /// the colon is what messages show), or says which limit refuses it. The admission holds
    /// the caller's `concurrent_calls` slot until dropped.
    pub(crate) async fn admit(&self, caller: &str) -> Result<Admission, Refusal> {
        let settings = self.0.settings.load_full();
        let shown = || {
            caller.split_once(':').map_or_else(
                || caller.to_owned(),
                |(kind, who)| match kind {
                    "sub" => format!("the subject `{who}`"),
                    _ => format!("the client `{who}`"),
                },
            )
        };
        if let Some(limit) = settings.calls_per_minute {
            let key = format!("rate:{caller}");
            if let Some(window) = self.counted(&key).await
                && window.count > u64::from(limit)
            {
                return Err(Refusal {
                    kind: LimitKind::CallsPerMinute,
                    limit,
                    counted: shown(),
                    retry_after: whole_seconds(window.resets_in),
                });
            }
        }
        let Some(limit) = settings.concurrent_calls else {
            return Ok(Admission(None));
        };
        let key = format!("running:{caller}");
        match self.0.counters.acquire(&key, limit).await {
            Ok(true) => Ok(Admission(Some((Arc::clone(&self.0.counters), key)))),
            Ok(false) => Err(Refusal {
                kind: LimitKind::ConcurrentCalls,
                limit,
                counted: shown(),
                retry_after: Duration::from_secs(1),
            }),
            Err(error) => {
                self.warn(&error);
                Ok(Admission(None))
            }
        }
    }

    /// Counts one call of `tool` against its `[limits.tools]` entry, if it has one.
    pub(crate) async fn admit_tool(&self, tool: &str) -> Result<(), Refusal> {
        let Some(limit) = self.0.settings.load().tools.get(tool).copied() else {
            return Ok(());
        };
        match self.counted(&format!("tool:{tool}")).await {
            Some(window) if window.count > u64::from(limit) => Err(Refusal {
                kind: LimitKind::ToolCallsPerMinute,
                limit,
                counted: tool.to_owned(),
                retry_after: whole_seconds(window.resets_in),
            }),
            _ => Ok(()),
        }
    }

    /// One more call under `key` in its window; `None` when the counters are away.
    async fn counted(&self, key: &str) -> Option<Window> {
        match self.0.counters.count(key, LimitSettings::WINDOW).await {
            Ok(window) => Some(window),
            Err(error) => {
                self.warn(&error);
                None
            }
        }
    }

    fn warn(&self, error: &CounterError) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let last = self.0.warned_at.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= WARN_EVERY.as_secs()
            && self
                .0
                .warned_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(%error, "rate limits not enforced: calls go ahead uncounted");
        }
    }
}

/// Rounded up to whole seconds, at least one: what `Retry-After` can say.
fn whole_seconds(duration: Duration) -> Duration {
    let seconds = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
    Duration::from_secs(seconds.max(1))
}

/// An admitted call: holds its caller's `concurrent_calls` slot, given back when dropped.
#[must_use = "the slot is given back when the admission is dropped"]
pub(crate) struct Admission(Option<(Arc<dyn Counters>, String)>);

impl Drop for Admission {
    fn drop(&mut self) {
        let Some((counters, key)) = self.0.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            if let Err(error) = counters.release(&key).await {
                tracing::debug!(%error, "could not give back a concurrent-call slot");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn limits(per_minute: Option<u32>, at_once: Option<u32>, tool: Option<u32>) -> Limits {
        Limits::in_memory(LimitSettings {
            calls_per_minute: per_minute,
            concurrent_calls: at_once,
            tools: tool
                .map(|limit| BTreeMap::from([("search".to_owned(), limit)]))
                .unwrap_or_default(),
        })
    }

    #[tokio::test]
    async fn the_call_past_the_rate_is_refused_until_the_window_ends() {
        let limits = limits(Some(2), None, None);
        assert!(limits.admit("sub:alice").await.is_ok());
        assert!(limits.admit("sub:alice").await.is_ok());
        let refusal = limits.admit("sub:alice").await.err().unwrap();
        assert_eq!(refusal.kind, LimitKind::CallsPerMinute);
        assert!(refusal.retry_after <= Duration::from_mins(1));
        assert!(refusal.retry_after >= Duration::from_secs(1));
        assert!(
            refusal.to_string().contains("the subject `alice`"),
            "{refusal}"
        );
        // Another caller has a budget of its own.
        assert!(limits.admit("sub:bob").await.is_ok());
    }

    #[tokio::test]
    async fn a_slot_comes_back_when_the_call_ends() {
        let limits = limits(None, Some(1), None);
        let first = limits.admit("addr:127.0.0.1").await.unwrap();
        let refusal = limits.admit("addr:127.0.0.1").await.err().unwrap();
        assert_eq!(refusal.kind, LimitKind::ConcurrentCalls);
        assert!(refusal.to_string().contains("the client `127.0.0.1`"));
        drop(first);
        // The slot is given back on a task.
        for _ in 0..100 {
            if limits.admit("addr:127.0.0.1").await.is_ok() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the slot did not come back");
    }

    #[tokio::test]
    async fn a_tool_limit_counts_only_its_tool() {
        let limits = limits(None, None, Some(1));
        assert!(limits.admit_tool("search").await.is_ok());
        assert!(limits.admit_tool("other").await.is_ok());
        let refusal = limits.admit_tool("search").await.unwrap_err();
        assert_eq!(refusal.to_json()["limit"], "tools");
        assert!(refusal.to_string().contains("`[limits.tools] search`"));
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(
            whole_seconds(Duration::from_millis(1)),
            Duration::from_secs(1)
        );
        assert_eq!(
            whole_seconds(Duration::from_millis(2001)),
            Duration::from_secs(3)
        );
        assert_eq!(whole_seconds(Duration::ZERO), Duration::from_secs(1));
    }
}
