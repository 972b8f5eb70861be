//! OpenTelemetry traces (docs/http.md, "Telemetry"): a `SERVER` span per MCP request, named
//! and attributed as OpenTelemetry's MCP semantic conventions say (`tools/call get_weather`,
//! `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, `error.type`, ...), a child
//! of the client's span when the request's `_meta` carries `traceparent` (W3C trace
//! context). The span is current while the request is handled, so the work under it
//! (`toolsmith_model::telemetry::WorkSpan`) becomes its children: `current` carries it to
//! the call's thread.
//!
//! The direct `tools/call` path calls the handler through `handle`; rmcp's loop (stdio)
//! and its Streamable HTTP service are given `Traced`, a handler that starts the span in
//! each request method (`wrapper.rs`). With telemetry off, both check a static that is never
//! set and go on.

use std::sync::OnceLock;

use axum::http::request::Parts;
use opentelemetry::context::FutureExt as _;
use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracer;
use rmcp::model::{CallToolResult, ClientRequest, ErrorData, ServerResult};
use rmcp::service::{RequestContext, RoleServer, Service};

mod export;
mod wrapper;

pub use export::{Telemetry, TelemetryError};

/// The tracer of the request spans; set once when [`Telemetry::start`] turns traces on.
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

fn install(tracer: SdkTracer) {
    let _ = TRACER.set(tracer);
}

/// Whether traces are being exported.
pub fn enabled() -> bool {
    TRACER.get().is_some()
}

/// What carries the requests, for `network.transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// stdio: `pipe`.
    Pipe,
    /// Streamable HTTP: `tcp`.
    Tcp,
}

/// Handles `request` with `service` inside the request's span when traces are on.
pub(crate) async fn handle<S: Service<RoleServer>>(
    service: &S,
    request: ClientRequest,
    context: RequestContext<RoleServer>,
    wire: Wire,
) -> Result<ServerResult, ErrorData> {
    match TRACER.get() {
        None => service.handle_request(request, context).await,
        // Boxed: the traced future stays out of every untraced request's future.
        Some(_) => Box::pin(traced(service, request, context, wire)).await,
    }
}

/// The current trace context to carry to a call's thread, where the work's spans start:
/// `None` (and nothing read) while traces are off.
pub(crate) fn current() -> Option<Context> {
    TRACER.get()?;
    Some(Context::current())
}

/// rmcp's handler with a span around each request it handles (rmcp's loop over stdio, its
/// Streamable HTTP service): `wrapper.rs`.
pub(crate) struct Traced<S> {
    inner: S,
    wire: Wire,
}

impl<S> Traced<S> {
    pub(crate) fn new(inner: S, wire: Wire) -> Self {
        Self { inner, wire }
    }
}

async fn traced<S: Service<RoleServer>>(
    service: &S,
    request: ClientRequest,
    context: RequestContext<RoleServer>,
    wire: Wire,
) -> Result<ServerResult, ErrorData> {
    let started = start(&Described::of(&request), &context, wire);
    finish(
        started,
        service.handle_request(request, context),
        |result| match result {
            ServerResult::CallToolResult(result) => tool_error(result),
            _ => None,
        },
    )
    .await
}

/// What a request is about, for its span's name and attributes.
#[derive(Default)]
struct Described<'a> {
    method: &'a str,
    tool: Option<&'a str>,
    prompt: Option<&'a str>,
    uri: Option<&'a str>,
}

impl<'a> Described<'a> {
    fn method(method: &'a str) -> Self {
        Self {
            method,
            ..Self::default()
        }
    }

    fn of(request: &'a ClientRequest) -> Self {
        let mut described = Self::method(request.method());
        match request {
            ClientRequest::CallToolRequest(call) => described.tool = Some(&call.params.name),
            ClientRequest::GetPromptRequest(get) => described.prompt = Some(&get.params.name),
            ClientRequest::ReadResourceRequest(read) => described.uri = Some(&read.params.uri),
            ClientRequest::SubscribeRequest(subscribe) => {
                described.uri = Some(&subscribe.params.uri);
            }
            ClientRequest::UnsubscribeRequest(unsubscribe) => {
                described.uri = Some(&unsubscribe.params.uri);
            }
            _ => {}
        }
        described
    }

    /// `{mcp.method.name} {target}`: the tool or the prompt when the request names one.
    fn span_name(&self) -> String {
        match self.tool.or(self.prompt) {
            Some(target) => format!("{} {target}", self.method),
            None => self.method.to_owned(),
        }
    }
}

/// The span of a request about to be handled, as the current context to handle it in;
/// `None` while traces are off.
fn start(
    described: &Described<'_>,
    context: &RequestContext<RoleServer>,
    wire: Wire,
) -> Option<Context> {
    let tracer = TRACER.get()?;
    let parent = parent_of(context);
    let span = tracer
        .span_builder(described.span_name())
        .with_kind(SpanKind::Server)
        .with_attributes(attributes(described, context, wire))
        .start_with_context(tracer, &parent);
    Some(parent.with_span(span))
}

/// Runs `work` in the request's span (when one was started) and ends the span with how it
/// went: a JSON-RPC error's code, or the `tool_error` a result says it is.
async fn finish<T>(
    started: Option<Context>,
    work: impl Future<Output = Result<T, ErrorData>>,
    tool_error: impl FnOnce(&T) -> Option<String>,
) -> Result<T, ErrorData> {
    let Some(request_context) = started else {
        return work.await;
    };
    let result = work.with_context(request_context.clone()).await;
    let span = request_context.span();
    match &result {
        Ok(answer) => {
            if let Some(message) = tool_error(answer) {
                span.set_attribute(KeyValue::new("error.type", "tool_error"));
                span.set_status(Status::error(message));
            }
        }
        Err(error) => {
            let code = error.code.0.to_string();
            span.set_attribute(KeyValue::new("error.type", code.clone()));
            span.set_attribute(KeyValue::new("rpc.response.status_code", code));
            span.set_status(Status::error(error.message.to_string()));
        }
    }
    span.end();
    result
}

/// The first text of a result with `isError` (at most 256 bytes), which its span's status
/// says; `None` for a result without it.
fn tool_error(result: &CallToolResult) -> Option<String> {
    if result.is_error != Some(true) {
        return None;
    }
    let text = result
        .content
        .iter()
        .find_map(|content| content.as_text())
        .map_or("", |text| text.text.as_str());
    Some(shortened(text).to_owned())
}

fn attributes(
    described: &Described<'_>,
    context: &RequestContext<RoleServer>,
    wire: Wire,
) -> Vec<KeyValue> {
    let mut attributes = Vec::with_capacity(10);
    attributes.push(KeyValue::new(
        "mcp.method.name",
        described.method.to_owned(),
    ));
    attributes.push(KeyValue::new("jsonrpc.request.id", context.id.to_string()));
    if let Some(tool) = described.tool {
        attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
        attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
    }
    if let Some(prompt) = described.prompt {
        attributes.push(KeyValue::new("gen_ai.prompt.name", prompt.to_owned()));
    }
    if let Some(uri) = described.uri {
        attributes.push(KeyValue::new("mcp.resource.uri", uri.to_owned()));
    }
    if let Some(version) = context.protocol_version() {
        attributes.push(KeyValue::new("mcp.protocol.version", version.to_string()));
    }
    if let Some(session) = http_parts(context)
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|id| id.to_str().ok())
    {
        attributes.push(KeyValue::new("mcp.session.id", session.to_owned()));
    }
    match wire {
        Wire::Pipe => attributes.push(KeyValue::new("network.transport", "pipe")),
        Wire::Tcp => {
            attributes.push(KeyValue::new("network.transport", "tcp"));
            attributes.push(KeyValue::new("network.protocol.name", "http"));
        }
    }
    attributes
}

/// The client's span: `_meta.traceparent` (and `tracestate`), as OpenTelemetry's MCP
/// conventions propagate it; else, over HTTP, the request's `traceparent` header; else none
/// (a new trace).
fn parent_of(context: &RequestContext<RoleServer>) -> Context {
    let propagator = TraceContextPropagator::new();
    let meta = &context.meta.0;
    if let Some(traceparent) = meta.get_traceparent() {
        let carrier = Carrier {
            traceparent,
            tracestate: meta.get_tracestate(),
        };
        return propagator.extract(&carrier);
    }
    if let Some(headers) = http_parts(context).map(|parts| &parts.headers)
        && let Some(traceparent) = headers.get("traceparent").and_then(|v| v.to_str().ok())
    {
        let carrier = Carrier {
            traceparent,
            tracestate: headers.get("tracestate").and_then(|v| v.to_str().ok()),
        };
        return propagator.extract(&carrier);
    }
    Context::new()
}

fn http_parts(context: &RequestContext<RoleServer>) -> Option<&Parts> {
    context.extensions.get::<Parts>()
}

/// The W3C trace context of a request, for the propagator to read.
struct Carrier<'a> {
    traceparent: &'a str,
    tracestate: Option<&'a str>,
}

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => Some(self.traceparent),
            "tracestate" => self.tracestate,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// At most 256 bytes of `text`, cut at a character boundary.
fn shortened(text: &str) -> &str {
    let mut end = text.len().min(256);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
