//! OpenTelemetry traces (docs/http.md, "Telemetry"): the settings of `[telemetry]`, and the
//! spans of the work a request does under the server's request span, one home for every
//! kind of tool: a command's process, an HTTP request of a script or an OpenAPI operation,
//! an upstream's call, an inner call of code mode.
//!
//! A [`WorkSpan`] is a child of the span current on this thread (the server attaches its
//! request span to the call's thread or task). Without one, which is always the case while
//! telemetry is off, starting a span is one thread-local read and nothing else: no name is
//! formatted, no attribute built, nothing allocated.

use std::collections::BTreeMap;

use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, ContextGuard, KeyValue, global};

use crate::ToolFailure;

/// The instrumentation scope of every span Toolsmith starts.
pub const TRACER_NAME: &str = "toolsmith";

/// `[telemetry]` of `toolsmith.toml`: where traces go when no `OTEL_*` variable says
/// otherwise (the variables win, so that whoever runs the server can redirect it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetrySettings {
    /// `enabled = false` keeps traces off whatever else is set.
    pub enabled: Option<bool>,
    /// `endpoint`: the collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (`/v1/traces` is appended).
    pub endpoint: Option<String>,
    /// `traces_endpoint`: the full URL, as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
    pub traces_endpoint: Option<String>,
    /// `headers`: sent with every export (values may be `${VAR}`), as
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    pub headers: BTreeMap<String, String>,
    /// `service_name`, as `OTEL_SERVICE_NAME`.
    pub service_name: Option<String>,
    /// `sampler`, as `OTEL_TRACES_SAMPLER` (`parentbased_always_on`, `traceidratio`, ...).
    pub sampler: Option<String>,
    /// `sampler_arg`, as `OTEL_TRACES_SAMPLER_ARG` (the ratio of a ratio sampler).
    pub sampler_arg: Option<f64>,
}

/// What a [`WorkSpan`] stands for, in OpenTelemetry's span kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanRole {
    /// A request to another service (an HTTP request, an upstream MCP server): `CLIENT`.
    Client,
    /// Work inside this process, or a process it runs: `INTERNAL`.
    Internal,
}

/// A span of work under the current request span, ended when dropped; inactive (and free)
/// when there is no current span.
#[must_use = "the span ends when dropped"]
pub struct WorkSpan(Option<Context>);

impl WorkSpan {
    /// Starts a span named `name()` with `attributes()` as a child of the span current on
    /// this thread. Neither closure runs when there is none.
    pub fn start(
        role: SpanRole,
        name: impl FnOnce() -> String,
        attributes: impl FnOnce() -> Vec<KeyValue>,
    ) -> Self {
        if !Context::map_current(TraceContextExt::has_active_span) {
            return Self(None);
        }
        let kind = match role {
            SpanRole::Client => SpanKind::Client,
            SpanRole::Internal => SpanKind::Internal,
        };
        let parent = Context::current();
        let tracer = global::tracer(TRACER_NAME);
        let span = tracer
            .span_builder(name())
            .with_kind(kind)
            .with_attributes(attributes())
            .start_with_context(&tracer, &parent);
        Self(Some(parent.with_span(span)))
    }

    /// Whether this span was started (a request span was current).
    pub fn is_active(&self) -> bool {
        self.0.is_some()
    }

    /// Sets an attribute, built only when the span is active.
    pub fn set(&self, attribute: impl FnOnce() -> KeyValue) {
        if let Some(context) = &self.0 {
            context.span().set_attribute(attribute());
        }
    }

    /// Marks the span failed: `error.type` (a short, low-cardinality class such as
    /// `timeout` or `500`) and an error status with `message`.
    pub fn fail(&self, error_type: impl FnOnce() -> String, message: impl FnOnce() -> String) {
        if let Some(context) = &self.0 {
            let span = context.span();
            span.set_attribute(KeyValue::new("error.type", error_type()));
            span.set_status(Status::error(message()));
        }
    }

    /// Marks the span failed with how a tool failed: `timeout`, `cancelled` or `tool_error`
    /// (the value OpenTelemetry's MCP conventions give a result with `isError`).
    pub fn fail_with(&self, failure: &ToolFailure) {
        self.fail(
            || {
                match failure {
                    ToolFailure::Failed { .. } => "tool_error",
                    ToolFailure::TimedOut { .. } => "timeout",
                    ToolFailure::Cancelled => "cancelled",
                }
                .to_owned()
            },
            || failure.to_string(),
        );
    }

    /// Makes this span the current one on this thread until the guard drops, so that the
    /// spans of work done inside (an inner tool's) become its children.
    pub fn attach(&self) -> Option<ContextGuard> {
        self.0.clone().map(Context::attach)
    }

    /// The W3C trace context (`traceparent`, and `tracestate` when not empty) that makes
    /// the receiver's spans children of this one: for an HTTP request's headers, an MCP
    /// request's `_meta`, a process's environment.
    pub fn trace_context(&self) -> Option<(String, Option<String>)> {
        let context = self.0.as_ref()?;
        let span = context.span();
        let span_context = span.span_context();
        if !span_context.is_valid() {
            return None;
        }
        let traceparent = format!(
            "00-{}-{}-{:02x}",
            span_context.trace_id(),
            span_context.span_id(),
            span_context.trace_flags().to_u8()
        );
        let tracestate = span_context.trace_state().header();
        Some((traceparent, (!tracestate.is_empty()).then_some(tracestate)))
    }
}

impl Drop for WorkSpan {
    fn drop(&mut self) {
        if let Some(context) = &self.0 {
            context.span().end();
        }
    }
}

/// An attribute: re-exported so that tool crates name no OpenTelemetry crate.
pub use opentelemetry::KeyValue as Attribute;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_current_span_nothing_is_started_or_built() {
        let span = WorkSpan::start(
            SpanRole::Client,
            || unreachable!("the name is not formatted"),
            || unreachable!("no attribute is built"),
        );
        assert!(!span.is_active());
        assert_eq!(span.trace_context(), None);
        span.set(|| unreachable!("no attribute is built"));
    }
}
