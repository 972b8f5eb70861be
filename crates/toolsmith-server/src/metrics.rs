//! The server's Prometheus metrics (docs/http.md, "Metrics"): calls by tool and outcome, call
//! durations by tool, calls in flight, sessions open, tools served, reloads and load errors,
//! and HTTP requests by status, kept in the [`ServerState`](crate::ServerState) so that calls
//! over stdio count as well as calls over HTTP, and rendered by `prometheus-client` in the
//! Prometheus text format.
//!
//! The per-call cost is a few relaxed atomic additions: each tool's counters and histogram
//! are looked up once, when a catalog is published ([`Metrics::tool`], kept beside the
//! catalog in [`Published`](crate::convert::Published)), never on the call path; the
//! histogram is this module's own ([`Durations`]), since the crate's takes a lock per
//! observation; and the HTTP status counts are a fixed array indexed by status code. What is
//! a state rather than an event (calls in flight, sessions, tools, load errors) is read at
//! scrape time instead of being kept up to date.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;
use toolsmith_model::OutcomeKind;

/// The `Content-Type` of what [`Metrics::render`] writes.
pub(crate) const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The upper bounds of the call duration histogram's buckets, in seconds (`+Inf` follows).
const DURATION_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Every metric of one server.
pub(crate) struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    durations: Family<ToolLabels, Durations>,
    /// Calls of a tool the catalog does not have, under `tool=""`: clients choose the
    /// names, so each one is not a series of its own.
    unknown_tool: Counter,
    reloads: Family<ReloadLabels, Counter>,
    http: StatusCounts,
    /// By [`LimitKind::index`](crate::limits::LimitKind::index).
    limited: [Counter; crate::limits::LimitKind::ALL.len()],
    in_flight: Gauge,
    sessions: Gauge,
    tools: Gauge,
    load_errors: Gauge,
}

/// The labels of `toolsmith_tool_calls_total`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CallLabels {
    tool: String,
    outcome: &'static str,
}

/// The labels of `toolsmith_tool_call_duration_seconds`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
}

/// The labels of `toolsmith_rate_limited_total`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct LimitLabels {
    limit: &'static str,
}

/// The labels of `toolsmith_reloads_total`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReloadLabels {
    result: &'static str,
}

/// How a reload of the served folder went, for `toolsmith_reloads_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reload {
    /// The folder was loaded again and published (files that failed to load count in
    /// `toolsmith_load_errors`).
    Published,
    /// The folder could not be read at all; the previous tools go on serving.
    Failed,
}

impl Reload {
    fn label(self) -> &'static str {
        match self {
            Self::Published => "ok",
            Self::Failed => "failed",
        }
    }
}

/// What is read from the server when metrics are rendered.
pub(crate) struct Gauges {
    pub(crate) in_flight: usize,
    pub(crate) sessions: usize,
    pub(crate) tools: usize,
    pub(crate) load_errors: usize,
}

/// One tool's counters and histogram, looked up once per published catalog.
pub(crate) struct ToolMetrics {
    /// By [`OutcomeKind::index`]; the [`OutcomeKind::UnknownTool`] one is never rendered
    /// (a call of a known tool never ends that way).
    calls: [Counter; OutcomeKind::ALL.len()],
    duration: Durations,
}

impl ToolMetrics {
    /// Counts one call of the tool that ended `kind` after `elapsed`.
    pub(crate) fn record(&self, kind: OutcomeKind, elapsed: Duration) {
        self.calls[kind.index()].inc();
        self.duration.observe(elapsed);
    }
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let calls = Family::<CallLabels, Counter>::default();
        let durations = Family::<ToolLabels, Durations>::default();
        let reloads = Family::<ReloadLabels, Counter>::default();
        let http = StatusCounts::default();
        let (in_flight, sessions, tools, load_errors) = Default::default();
        let unknown_tool = calls
            .get_or_create(&CallLabels {
                tool: String::new(),
                outcome: OutcomeKind::UnknownTool.as_str(),
            })
            .clone();
        for reload in [Reload::Published, Reload::Failed] {
            drop(reloads.get_or_create(&ReloadLabels {
                result: reload.label(),
            }));
        }
        let mut registry = Registry::with_prefix("toolsmith");
        registry.register(
            "tool_calls",
            "Tool calls, by tool and by how they ended",
            calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "How long tool calls took, from the request to its answer, waiting for a call slot included",
            durations.clone(),
        );
        registry.register(
            "tool_calls_in_flight",
            "Tool calls running now",
            Gauge::clone(&in_flight),
        );
        registry.register(
            "sessions_open",
            "MCP sessions open: stdio connections and Streamable HTTP sessions",
            Gauge::clone(&sessions),
        );
        registry.register("tools", "Tools served", Gauge::clone(&tools));
        registry.register(
            "load_errors",
            "Errors in loading the tools folder, as last loaded (files that did not load)",
            Gauge::clone(&load_errors),
        );
        registry.register(
            "reloads",
            "Reloads of the tools folder (serve --watch), by result",
            reloads.clone(),
        );
        registry.register(
            "http_requests",
            "HTTP requests answered, by status code",
            http.clone(),
        );
        let limited_family = Family::<LimitLabels, Counter>::default();
        let limited = crate::limits::LimitKind::ALL.map(|kind| {
            limited_family
                .get_or_create(&LimitLabels {
                    limit: kind.as_str(),
                })
                .clone()
        });
        registry.register(
            "rate_limited",
            "Tool calls refused by a rate limit (docs/limits.md), by limit",
            limited_family,
        );
        Self {
            registry,
            calls,
            durations,
            unknown_tool,
            reloads,
            http,
            limited,
            in_flight,
            sessions,
            tools,
            load_errors,
        }
    }

    /// The counters and histogram of the tool called `name` (kept across reloads: a tool
    /// published again goes on counting where it was).
    pub(crate) fn tool(&self, name: &str) -> ToolMetrics {
        let calls = OutcomeKind::ALL.map(|kind| {
            if kind == OutcomeKind::UnknownTool {
                return Counter::default();
            }
            self.calls
                .get_or_create(&CallLabels {
                    tool: name.to_owned(),
                    outcome: kind.as_str(),
                })
                .clone()
        });
        let duration = self
            .durations
            .get_or_create(&ToolLabels {
                tool: name.to_owned(),
            })
            .clone();
        ToolMetrics { calls, duration }
    }

    /// Counts a call of a tool the catalog does not have.
    pub(crate) fn unknown_tool(&self) {
        self.unknown_tool.inc();
    }

    /// Counts a reload of the folder.
    pub(crate) fn reload(&self, reload: Reload) {
        self.reloads
            .get_or_create(&ReloadLabels {
                result: reload.label(),
            })
            .inc();
    }

    /// Counts a call refused by a limit of `kind`.
    pub(crate) fn limited(&self, kind: crate::limits::LimitKind) {
        self.limited[kind.index()].inc();
    }

    /// Counts an HTTP response.
    pub(crate) fn http_response(&self, status: u16) {
        self.http.count(status);
    }

    /// Every metric in the Prometheus text format, with the gauges read now.
    pub(crate) fn render(&self, gauges: &Gauges) -> String {
        let Gauges {
            in_flight,
            sessions,
            tools,
            load_errors,
        } = *gauges;
        let as_gauge = |value: usize| i64::try_from(value).unwrap_or(i64::MAX);
        self.in_flight.set(as_gauge(in_flight));
        self.sessions.set(as_gauge(sessions));
        self.tools.set(as_gauge(tools));
        self.load_errors.set(as_gauge(load_errors));
        let mut text = String::with_capacity(4096);
        prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        text
    }
}

/// A call duration histogram without a lock: one atomic count per bucket and the sum in
/// nanoseconds, read (not quite at one instant) when rendered.
#[derive(Debug, Clone, Default)]
pub(crate) struct Durations(Arc<DurationCounts>);

#[derive(Debug, Default)]
struct DurationCounts {
    /// Per bucket of [`DURATION_BUCKETS`], not cumulative; the last is `+Inf`.
    buckets: [AtomicU64; DURATION_BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
}

impl Durations {
    fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = DURATION_BUCKETS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(DURATION_BUCKETS.len());
        self.0.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.0.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

impl TypedMetric for Durations {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Durations {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let bounds = DURATION_BUCKETS.iter().copied().chain([f64::INFINITY]);
        let buckets: Vec<(f64, u64)> = bounds
            .zip(&self.0.buckets)
            .map(|(bound, count)| (bound, count.load(Ordering::Relaxed)))
            .collect();
        let count = buckets.iter().map(|(_, count)| count).sum();
        #[expect(
            clippy::cast_precision_loss,
            reason = "a sum of durations in nanoseconds, shown in seconds"
        )]
        let sum = self.0.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// The first status code [`StatusCounts`] counts, and one past the last.
const STATUS_CODES: std::ops::Range<u16> = 100..600;

/// HTTP responses by status code: one atomic count per code, so counting a response takes
/// no lock and no lookup. Cheap to clone; clones share the counts.
#[derive(Debug, Clone)]
struct StatusCounts(Arc<[AtomicU64; STATUS_CODES.end as usize - STATUS_CODES.start as usize]>);

impl Default for StatusCounts {
    fn default() -> Self {
        Self(Arc::new(std::array::from_fn(|_| AtomicU64::new(0))))
    }
}

impl StatusCounts {
    fn count(&self, status: u16) {
        if let Some(count) = status
            .checked_sub(STATUS_CODES.start)
            .and_then(|index| self.0.get(usize::from(index)))
        {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl EncodeMetric for StatusCounts {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (status, count) in STATUS_CODES.zip(self.0.iter()) {
            let count = count.load(Ordering::Relaxed);
            if count > 0 {
                encoder
                    .encode_family(&[("status", status)])?
                    .encode_counter::<NoLabelSet, _, u64>(&count, None)?;
            }
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gauges() -> Gauges {
        Gauges {
            in_flight: 2,
            sessions: 1,
            tools: 3,
            load_errors: 0,
        }
    }

    #[test]
    fn a_tools_calls_are_counted_by_outcome_with_every_outcome_shown() {
        let metrics = Metrics::new();
        let echo = metrics.tool("echo");
        echo.record(OutcomeKind::Ok, Duration::from_millis(3));
        echo.record(OutcomeKind::Ok, Duration::from_secs(40));
        echo.record(OutcomeKind::Timeout, Duration::from_millis(20));
        metrics.unknown_tool();
        // A reload looks the tool up again and goes on counting.
        metrics
            .tool("echo")
            .record(OutcomeKind::IsError, Duration::ZERO);
        let text = metrics.render(&gauges());
        for line in [
            r#"toolsmith_tool_calls_total{tool="echo",outcome="ok"} 2"#,
            r#"toolsmith_tool_calls_total{tool="echo",outcome="timeout"} 1"#,
            r#"toolsmith_tool_calls_total{tool="echo",outcome="is_error"} 1"#,
            r#"toolsmith_tool_calls_total{tool="echo",outcome="cancelled"} 0"#,
            r#"toolsmith_tool_calls_total{tool="",outcome="unknown_tool"} 1"#,
            r#"toolsmith_tool_call_duration_seconds_bucket{tool="echo",le="0.005"} 2"#,
            r#"toolsmith_tool_call_duration_seconds_bucket{tool="echo",le="30"} 3"#,
            r#"toolsmith_tool_call_duration_seconds_bucket{tool="echo",le="+Inf"} 4"#,
            r#"toolsmith_tool_call_duration_seconds_count{tool="echo"} 4"#,
            "toolsmith_tool_calls_in_flight 2",
            "toolsmith_sessions_open 1",
            "toolsmith_tools 3",
            r#"toolsmith_reloads_total{result="failed"} 0"#,
        ] {
            assert!(text.lines().any(|got| got == line), "{line}\nin\n{text}");
        }
        assert!(
            !text.contains(r#"tool="echo",outcome="unknown_tool""#),
            "{text}"
        );
    }

    #[test]
    fn http_responses_are_counted_by_status_and_odd_codes_ignored() {
        let metrics = Metrics::new();
        metrics.http_response(200);
        metrics.http_response(200);
        metrics.http_response(401);
        metrics.http_response(99);
        metrics.http_response(600);
        let text = metrics.render(&gauges());
        assert!(text.contains("toolsmith_http_requests_total{status=\"200\"} 2\n"));
        assert!(text.contains("toolsmith_http_requests_total{status=\"401\"} 1\n"));
        assert_eq!(text.matches("toolsmith_http_requests_total{").count(), 2);
    }
}
