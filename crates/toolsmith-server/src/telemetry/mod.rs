//! OpenTelemetry traces (docs/http.md, "Telemetry"): a `SERVER` span per MCP request, named
//! and attributed as OpenTelemetry's MCP semantic conventions say (`tools/call get_weather`,
//! `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, `error.type`, ...), a child
//! of the client's span when the request's `_meta` carries `traceparent` (W3C trace
//! context). The span is current while the request is handled, so the work under it
//! (`toolsmith_model::telemetry::WorkSpan`) becomes its children: [`current`] carries it to
//! the call's thread.
//!
//! Every request reaches the handler through [`handle`]: rmcp's loop through [`Traced`],
//! the direct `tools/call` path by calling it. With telemetry off, [`handle`] is one branch
//! on a static that is never set.

use std::borrow::Cow;
use std::sync::OnceLock;

use axum::http::request::Parts;
use opentelemetry::context::FutureExt as _;
use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracer;
use rmcp::model::{ClientRequest, ErrorData, ProtocolVersion, ServerResult};
use rmcp::service::{
    MaybeSendFuture, NotificationContext, RequestContext, RoleServer, Service, ServiceRole,
};

mod export;

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
        Some(tracer) => Box::pin(traced(tracer, service, request, context, wire)).await,
    }
}

/// The current trace context to carry to a call's thread, where the work's spans start:
/// `None` (and nothing read) while traces are off.
pub(crate) fn current() -> Option<Context> {
    TRACER.get()?;
    Some(Context::current())
}

/// A service whose requests each get a span (rmcp's loop, over stdio and HTTP).
pub(crate) struct Traced<S> {
    service: S,
    wire: Wire,
}

impl<S> Traced<S> {
    pub(crate) fn new(service: S, wire: Wire) -> Self {
        Self { service, wire }
    }
}

impl<S: Service<RoleServer>> Service<RoleServer> for Traced<S> {
    fn handle_request(
        &self,
        request: <RoleServer as ServiceRole>::PeerReq,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ServerResult, ErrorData>> + MaybeSendFuture + '_ {
        handle(&self.service, request, context, self.wire)
    }

    fn handle_notification(
        &self,
        notification: <RoleServer as ServiceRole>::PeerNot,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.service.handle_notification(notification, context)
    }

    fn get_info(&self) -> <RoleServer as ServiceRole>::Info {
        self.service.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.service.supported_protocol_versions()
    }
}

async fn traced<S: Service<RoleServer>>(
    tracer: &SdkTracer,
    service: &S,
    request: ClientRequest,
    context: RequestContext<RoleServer>,
    wire: Wire,
) -> Result<ServerResult, ErrorData> {
    let parent = parent_of(&context);
    let span = tracer
        .span_builder(span_name(&request))
        .with_kind(SpanKind::Server)
        .with_attributes(attributes(&request, &context, wire))
        .start_with_context(tracer, &parent);
    let request_context = parent.with_span(span);
    let result = service
        .handle_request(request, context)
        .with_context(request_context.clone())
        .await;
    let span = request_context.span();
    match &result {
        Ok(ServerResult::CallToolResult(result)) if result.is_error == Some(true) => {
            span.set_attribute(KeyValue::new("error.type", "tool_error"));
            let text = result
                .content
                .iter()
                .find_map(|content| content.as_text())
                .map_or("", |text| text.text.as_str());
            span.set_status(Status::error(shortened(text).to_owned()));
        }
        Ok(_) => {}
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

/// `{mcp.method.name} {target}`: the tool or the prompt when the request names one.
fn span_name(request: &ClientRequest) -> String {
    let method = request.method();
    match target(request) {
        Some(target) => format!("{method} {target}"),
        None => method.to_owned(),
    }
}

fn target(request: &ClientRequest) -> Option<&str> {
    match request {
        ClientRequest::CallToolRequest(call) => Some(&call.params.name),
        ClientRequest::GetPromptRequest(get) => Some(&get.params.name),
        _ => None,
    }
}

fn attributes(
    request: &ClientRequest,
    context: &RequestContext<RoleServer>,
    wire: Wire,
) -> Vec<KeyValue> {
    let mut attributes = Vec::with_capacity(10);
    attributes.push(KeyValue::new(
        "mcp.method.name",
        request.method().to_owned(),
    ));
    attributes.push(KeyValue::new("jsonrpc.request.id", context.id.to_string()));
    match request {
        ClientRequest::CallToolRequest(call) => {
            attributes.push(KeyValue::new(
                "gen_ai.tool.name",
                call.params.name.to_string(),
            ));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        ClientRequest::GetPromptRequest(get) => {
            attributes.push(KeyValue::new("gen_ai.prompt.name", get.params.name.clone()));
        }
        ClientRequest::ReadResourceRequest(read) => {
            attributes.push(KeyValue::new("mcp.resource.uri", read.params.uri.clone()));
        }
        ClientRequest::SubscribeRequest(subscribe) => {
            attributes.push(KeyValue::new(
                "mcp.resource.uri",
                subscribe.params.uri.clone(),
            ));
        }
        ClientRequest::UnsubscribeRequest(unsubscribe) => {
            attributes.push(KeyValue::new(
                "mcp.resource.uri",
                unsubscribe.params.uri.clone(),
            ));
        }
        _ => {}
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
