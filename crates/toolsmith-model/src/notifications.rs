//! How many notifications one call may send: a budget per call for progress and log
//! messages, which every kind of tool sends through its [`CallContext`]'s client (a
//! command's `mcp:` stderr lines, Starlark's `mcp.progress` and `mcp.log`). The catalog's
//! call path wraps the call's client in [`Throttled`], so no tool can flood a client with
//! notifications.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use serde_json::Value;

use crate::tool::{ClientBridge, LogLevel, Question, Withdrawal};

/// How many notifications a call sends at once before it is held to
/// [`NOTIFICATIONS_PER_SECOND`].
pub const NOTIFICATION_BURST: u32 = 100;

/// How many notifications a call sends a second once its burst is spent.
pub const NOTIFICATIONS_PER_SECOND: u32 = 20;

/// The logger name of the message that says notifications were dropped.
const LOGGER: &str = "toolsmith";

/// A call's client, passing on at most [`NOTIFICATION_BURST`] notifications at once and
/// [`NOTIFICATIONS_PER_SECOND`] after that (a token bucket), and dropping the rest.
///
/// Notifications the client does not want (progress without a progress token, logs below
/// its level) cost nothing. When notifications were dropped, the next one that passes is
/// preceded by a warning saying how many, and so is the end of the call
/// ([`Throttled::finish`]), which also sends the last dropped progress, so the client's
/// progress ends where the tool's did. Requests (sampling, elicitation, roots) pass
/// unthrottled: each blocks the tool until answered.
pub(crate) struct Throttled {
    client: Arc<dyn ClientBridge>,
    tool: String,
    budget: Mutex<Budget>,
}

struct Budget {
    tokens: f64,
    refilled: Instant,
    /// Dropped since the last warning.
    dropped: u64,
    /// The latest progress that was dropped, sent at the end if no later one passed.
    last_progress: Option<(f64, Option<f64>, Option<String>)>,
}

impl Throttled {
    /// `client`, throttled for one call of the tool `tool`.
    pub(crate) fn new(client: Arc<dyn ClientBridge>, tool: &str) -> Self {
        Self {
            client,
            tool: tool.to_owned(),
            budget: Mutex::new(Budget {
                tokens: f64::from(NOTIFICATION_BURST),
                refilled: Instant::now(),
                dropped: 0,
                last_progress: None,
            }),
        }
    }

    fn budget(&self) -> MutexGuard<'_, Budget> {
        self.budget.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a token: `Some(dropped since the last warning)` when the notification may go,
    /// `None` when it is dropped (and counted). A dropped `progress` is kept for the end.
    fn admit(&self, progress: Option<(f64, Option<f64>, Option<&str>)>) -> Option<u64> {
        let mut budget = self.budget();
        let now = Instant::now();
        let earned =
            now.duration_since(budget.refilled).as_secs_f64() * f64::from(NOTIFICATIONS_PER_SECOND);
        budget.tokens = (budget.tokens + earned).min(f64::from(NOTIFICATION_BURST));
        budget.refilled = now;
        if budget.tokens >= 1.0 {
            budget.tokens -= 1.0;
            if progress.is_some() {
                budget.last_progress = None;
            }
            Some(std::mem::take(&mut budget.dropped))
        } else {
            budget.dropped += 1;
            if let Some((progress, total, message)) = progress {
                budget.last_progress = Some((progress, total, message.map(str::to_owned)));
            }
            None
        }
    }

    /// Tells the client that `dropped` notifications never reached it.
    fn warn(&self, dropped: u64) {
        if dropped > 0 {
            let message = format!(
                "tool `{}` sent too many notifications: {dropped} were dropped (a call sends \
                 at most {NOTIFICATION_BURST} at once, then {NOTIFICATIONS_PER_SECOND} a second)",
                self.tool
            );
            self.client.log(LogLevel::Warning, LOGGER, &message);
        }
    }

    /// At the end of the call: sends the last dropped progress and says how many
    /// notifications were dropped.
    pub(crate) fn finish(&self) {
        let (progress, dropped) = {
            let mut budget = self.budget();
            let progress = budget.last_progress.take();
            if progress.is_some() {
                budget.dropped -= 1;
            }
            (progress, std::mem::take(&mut budget.dropped))
        };
        self.warn(dropped);
        if let Some((progress, total, message)) = progress {
            self.client.progress(progress, total, message.as_deref());
        }
    }
}

impl ClientBridge for Throttled {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if !self.client.wants_progress() {
            return;
        }
        if let Some(dropped) = self.admit(Some((progress, total, message))) {
            self.warn(dropped);
            self.client.progress(progress, total, message);
        }
    }

    fn log(&self, level: LogLevel, logger: &str, message: &str) {
        if !self.client.wants_log(level) {
            return;
        }
        if let Some(dropped) = self.admit(None) {
            self.warn(dropped);
            self.client.log(level, logger, message);
        }
    }

    fn sample(&self, request: Value) -> Result<Value, String> {
        self.client.sample(request)
    }

    fn elicit(&self, message: &str, schema: Value) -> Result<Value, String> {
        self.client.elicit(message, schema)
    }

    fn roots(&self) -> Result<Vec<Value>, String> {
        self.client.roots()
    }

    fn ask(&self, question: Question, withdrawal: &Withdrawal) -> Result<Value, String> {
        self.client.ask(question, withdrawal)
    }

    fn next_request(&self, key: Option<&str>, defer: bool) {
        self.client.next_request(key, defer);
    }

    fn before_task(&self) {
        self.client.before_task();
    }

    fn wants_progress(&self) -> bool {
        self.client.wants_progress()
    }

    fn wants_log(&self, level: LogLevel) -> bool {
        self.client.wants_log(level)
    }

    fn audits_inner_calls(&self) -> bool {
        self.client.audits_inner_calls()
    }

    fn inner_call(&self, call: &crate::InnerCall<'_>) {
        self.client.inner_call(call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that records what reached it, wanting progress and every level but debug.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl ClientBridge for Recorder {
        fn progress(&self, progress: f64, _: Option<f64>, _: Option<&str>) {
            self.0.lock().unwrap().push(format!("progress {progress}"));
        }
        fn log(&self, level: LogLevel, logger: &str, message: &str) {
            let entry = format!("{} {logger} {message}", level.as_str());
            self.0.lock().unwrap().push(entry);
        }
        fn sample(&self, _: Value) -> Result<Value, String> {
            Err("no".into())
        }
        fn elicit(&self, _: &str, _: Value) -> Result<Value, String> {
            Err("no".into())
        }
        fn roots(&self) -> Result<Vec<Value>, String> {
            Ok(Vec::new())
        }
        fn wants_log(&self, level: LogLevel) -> bool {
            level > LogLevel::Debug
        }
    }

    /// The numbers of dropped notifications the warnings report.
    fn reported_drops(sent: &[String]) -> u64 {
        sent.iter()
            .filter_map(|entry| {
                entry.strip_prefix("warning toolsmith tool `probe` sent too many notifications: ")
            })
            .map(|rest| rest.split(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    }

    // Regression test: a flood of notifications reached the client
    // one for one.
    #[test]
    fn a_flood_is_cut_to_the_burst_and_the_drops_are_told() {
        let recorder = Arc::new(Recorder::default());
        let throttled = Throttled::new(recorder.clone(), "probe");
        for n in 0..10_000 {
            throttled.log(LogLevel::Info, "probe", &format!("line {n}"));
        }
        for n in 0..10_000 {
            throttled.progress(f64::from(n), None, None);
        }
        throttled.finish();
        let sent = recorder.0.lock().unwrap().clone();
        let passed = sent
            .iter()
            .filter(|entry| !entry.starts_with("warning"))
            .count();
        assert!(passed < 2_000, "{passed} notifications passed");
        assert!(passed >= 100, "{passed} notifications passed");
        // Every notification either passed or was counted in a warning, and the last
        // progress was delivered at the end.
        assert_eq!(reported_drops(&sent) + passed as u64, 20_000);
        assert_eq!(sent.last().map(String::as_str), Some("progress 9999"));
    }

    #[test]
    fn unwanted_notifications_cost_nothing() {
        let recorder = Arc::new(Recorder::default());
        let throttled = Throttled::new(recorder.clone(), "probe");
        for _ in 0..10_000 {
            throttled.log(LogLevel::Debug, "probe", "noise");
        }
        throttled.log(LogLevel::Info, "probe", "signal");
        throttled.finish();
        assert_eq!(*recorder.0.lock().unwrap(), ["info probe signal"]);
    }
}
