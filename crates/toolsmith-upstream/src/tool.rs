//! An upstream's tool as Toolsmith publishes it (docs/gateway.md): the upstream's
//! definition under the upstream's prefix, and a call that is forwarded with its arguments,
//! whose progress and logs come back to the caller, whose cancellation or timeout cancels
//! the upstream's request, and whose result passes through as the upstream gave it.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    GetMeta as _, ServerResult, Tool as RemoteTool,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::Value;
use toolsmith_model::telemetry::{Attribute, SpanRole, WorkSpan};
use toolsmith_model::{
    Annotations, AsyncTool, CallContext, CallOutcome, Icon, JsonObject, SourceLocation, StopReason,
    Tool, ToolDefinition, ToolFailure, ToolFuture, ToolReturn,
};

use rmcp::model::{NumberOrString, ProgressToken};

use crate::connection::{Connection, Upstream, wait};
use crate::direct::{Answer, Direct};
use crate::transform::ArgumentMap;

/// The key of a forwarded call's `_meta` that carries the tool's options (docs/gateway.md,
/// "Options").
pub const OPTIONS_META_KEY: &str = "toolsmith/options";

/// How often a call waiting for its upstream looks at its interrupt and deadline.
const POLL: Duration = Duration::from_millis(10);

/// One tool of an upstream.
pub struct UpstreamTool {
    definition: ToolDefinition,
    /// Its name at the upstream.
    remote: String,
    upstream: Arc<Upstream>,
    /// How a call's arguments become the upstream's, for a tool a manifest wraps.
    arguments: Option<ArgumentMap>,
}

impl UpstreamTool {
    /// The tool `remote` of `upstream`, published as its prefix + its name, defined at
    /// `source` (the `[upstream.NAME]` table).
    pub fn new(upstream: &Arc<Upstream>, remote: &RemoteTool, source: SourceLocation) -> Self {
        let spec = upstream.spec();
        let mut definition = ToolDefinition::new(
            format!("{}{}", spec.prefix, remote.name),
            remote.description.as_deref().unwrap_or_default(),
            toolsmith_model::Schema::with_object(Arc::clone(&remote.input_schema)),
        );
        definition.title = remote
            .title
            .clone()
            .or_else(|| remote.annotations.as_ref()?.title.clone());
        definition.output_schema = remote
            .output_schema
            .clone()
            .map(toolsmith_model::Schema::with_object);
        if let Some(hints) = &remote.annotations {
            definition.annotations = Annotations {
                read_only: hints.read_only_hint,
                destructive: hints.destructive_hint,
                idempotent: hints.idempotent_hint,
                open_world: hints.open_world_hint,
            };
        }
        definition.icons = remote
            .icons
            .iter()
            .flatten()
            .map(|icon| Icon {
                src: icon.src.clone(),
                mime_type: icon.mime_type.clone(),
                sizes: icon.sizes.clone().unwrap_or_default(),
                theme: icon
                    .theme
                    .as_ref()
                    .and_then(|theme| serde_json::to_value(theme).ok())
                    .and_then(|theme| theme.as_str().map(str::to_owned)),
            })
            .collect();
        if let Some(meta) = &remote.meta {
            definition.meta.clone_from(&meta.0);
        }
        // `tag:NAME` in a profile selects an upstream's tools; search reads the upstream's
        // name like a folder's.
        definition.tags = vec![spec.name.clone()];
        definition.folder = vec![spec.name.clone()];
        definition.source = source;
        Self {
            definition,
            remote: remote.name.to_string(),
            upstream: Arc::clone(upstream),
            arguments: None,
        }
    }

    /// This tool published as `definition` instead, its calls' arguments turned into the
    /// upstream's by `arguments`: a manifest's wrapping of it (docs/gateway.md, "Wrapping
    /// an upstream tool").
    #[must_use]
    pub fn wrapped(self, definition: ToolDefinition, arguments: ArgumentMap) -> Self {
        Self {
            definition,
            arguments: (!arguments.is_identity()).then_some(arguments),
            ..self
        }
    }

    /// This tool marked as not callable now, for `why` (docs/gateway.md, "Faults"): listed
    /// from what its upstream listed last, while the upstream does not start. A call still
    /// goes to the upstream, which it tries to start (with backoff), and answers why not.
    #[must_use]
    pub fn unavailable(mut self, why: &str) -> Self {
        self.definition.unavailable = Some(why.to_owned());
        self
    }

    /// Every tool `upstream` lists, as published.
    pub fn all(
        upstream: &Arc<Upstream>,
        tools: &[RemoteTool],
        source: &SourceLocation,
    ) -> Vec<Self> {
        tools
            .iter()
            .map(|tool| Self::new(upstream, tool, source.clone()))
            .collect()
    }
}

impl Tool for UpstreamTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        wait(self.call_async(arguments.clone(), context.clone()))
    }

    fn as_async(&self) -> Option<&dyn AsyncTool> {
        Some(self)
    }
}

impl AsyncTool for UpstreamTool {
    fn call_async(&self, arguments: JsonObject, context: CallContext) -> ToolFuture {
        let arguments = match &self.arguments {
            Some(map) => map.apply(&arguments),
            None => arguments,
        };
        // A `CLIENT` span under the request's, as OpenTelemetry's MCP conventions describe
        // a client's call (docs/http.md, "Telemetry"); free without a request span.
        let span = WorkSpan::start(
            SpanRole::Client,
            || format!("tools/call {}", self.remote),
            || {
                let transport = match self.upstream.spec().transport {
                    crate::UpstreamTransport::Stdio { .. } => "pipe",
                    crate::UpstreamTransport::Http { .. } => "tcp",
                };
                vec![
                    Attribute::new("mcp.method.name", "tools/call"),
                    Attribute::new("gen_ai.tool.name", self.remote.clone()),
                    Attribute::new("gen_ai.operation.name", "execute_tool"),
                    Attribute::new("network.transport", transport),
                ]
            },
        );
        let call = Forwarded {
            upstream: Arc::clone(&self.upstream),
            remote: self.remote.clone(),
            arguments,
            context,
            timeout: self
                .definition
                .timeout
                .unwrap_or(toolsmith_model::DEFAULT_TIMEOUT),
            span,
        };
        Box::pin(async move {
            let result = call.run().await;
            if let Err(failure) = &result {
                call.span.fail_with(failure);
            } else if let Ok(ToolReturn::Outcome(outcome)) = &result
                && outcome.is_error
            {
                call.span
                    .fail(|| "tool_error".to_owned(), || outcome.joined_text());
            }
            result
        })
    }
}

/// One call of an upstream's tool, as the upstream names it and with its arguments.
struct Forwarded {
    upstream: Arc<Upstream>,
    remote: String,
    arguments: JsonObject,
    context: CallContext,
    timeout: Duration,
    /// The call's span, whose trace context goes in the request's `_meta`.
    span: WorkSpan,
}

impl Forwarded {
    async fn run(&self) -> Result<ToolReturn, ToolFailure> {
        // The caller's token, only for an upstream that opted in (`oauth/client.rs`).
        let lent = crate::oauth::LentToken::lend(self.upstream.spec(), &self.context);
        // A connection whose program died between two calls may not know it yet: the
        // request cannot be sent, and one new connection is tried.
        for attempt in 0..2 {
            let connection = self.connection().await?;
            let ended = match &connection.direct {
                Some(direct) => call_direct(direct, &connection, self).await,
                None => {
                    forward(
                        Arc::clone(&connection),
                        self.remote.clone(),
                        self.arguments.clone(),
                        self.context.clone(),
                        self.timeout,
                        lent.as_ref().map(crate::oauth::LentToken::handle),
                        &self.span,
                    )
                    .await
                }
            };
            match ended {
                Ok(outcome) => return Ok(ToolReturn::Outcome(outcome)),
                Err(Ended::Stopped(failure)) => return Err(failure),
                Err(Ended::Unsent(_)) if attempt == 0 => self.upstream.discard(&connection),
                Err(Ended::Unsent(message) | Ended::Failed(message)) => {
                    if connection.service.is_closed() || message.starts_with("stopped") {
                        self.upstream.discard(&connection);
                    }
                    return Err(ToolFailure::failed(
                        self.upstream.error(message).to_string(),
                    ));
                }
            }
        }
        unreachable!("the second attempt returns")
    }

    /// The upstream's running connection; starting it (which blocks) happens on a thread
    /// of the upstreams' runtime's own, not on the runtime that polls the call.
    async fn connection(&self) -> Result<Arc<Connection>, ToolFailure> {
        if let Some(connection) = self.upstream.running() {
            return Ok(connection);
        }
        let upstream = Arc::clone(&self.upstream);
        let connection = crate::connection::unblocked(move || upstream.connection()).await;
        connection.map_err(|error| ToolFailure::failed(error.to_string()))
    }
}

/// Sends the call on the direct path of an upstream program (`direct.rs`) and waits for
/// its answer, the caller's cancellation or the deadline. Dropped before it ends (the
/// client cancelled), it tells the program the call is cancelled.
async fn call_direct(
    direct: &Arc<Direct>,
    connection: &Connection,
    call: &Forwarded,
) -> Result<CallOutcome, Ended> {
    let context = &call.context;
    let mut meta = JsonObject::new();
    if !context.options.is_empty() {
        meta.insert(
            OPTIONS_META_KEY.to_owned(),
            Value::Object(context.options.clone()),
        );
    }
    trace_meta(&call.span, &mut meta);
    let (number, id) = direct.next_call();
    // Registered before it is sent: the upstream may ask the client something at once.
    let _registration = connection.relay.register(
        Arc::clone(&context.client),
        ProgressToken(NumberOrString::String(id.as_str().into())),
    );
    let progress = context.client.wants_progress();
    let mut pending = direct
        .send((number, &id), &call.remote, &call.arguments, meta, progress)
        .ok_or_else(|| Ended::Unsent("cannot be reached: its stdin is closed".to_owned()))?;
    let mut unanswered = Unanswered {
        direct,
        id: Some(&id),
        context,
    };
    loop {
        tokio::select! {
            answer = &mut pending.answer => {
                unanswered.id = None;
                return match answer {
                    Ok(Answer::Result(outcome)) => Ok(outcome),
                    Ok(Answer::Failed(message)) => Err(Ended::Failed(message)),
                    Err(_) => Err(Ended::Failed("stopped during the call".to_owned())),
                };
            }
            () = tokio::time::sleep(POLL) => {
                if let Some(reason) = context.stop_reason() {
                    unanswered.id = None;
                    direct.cancel(&id, stop_text(reason));
                    return Err(Ended::Stopped(stopped(reason, call.timeout)));
                }
            }
        }
    }
}

/// A direct call sent and not answered: when its future is dropped (the client
/// cancelled, or the watchdog gave up on it), the program hears that the call is cancelled.
struct Unanswered<'a> {
    direct: &'a Direct,
    id: Option<&'a str>,
    context: &'a CallContext,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let reason = self.context.stop_reason().unwrap_or(StopReason::Cancelled);
            self.direct.cancel(id, stop_text(reason));
        }
    }
}

fn stop_text(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Timeout => "timed out",
        StopReason::Cancelled => "cancelled by the client",
    }
}

/// The failure of a call stopped for `reason`, whose timeout is `timeout`.
fn stopped(reason: StopReason, timeout: Duration) -> ToolFailure {
    match reason {
        StopReason::Timeout => ToolFailure::TimedOut { after: timeout },
        StopReason::Cancelled => ToolFailure::Cancelled,
    }
}

enum Ended {
    /// Cancelled or timed out here.
    Stopped(ToolFailure),
    /// The upstream failed the request or went away.
    Failed(String),
    /// The request could not be sent: the connection is gone.
    Unsent(String),
}

/// Sends the call and waits for its result, the caller's cancellation or the deadline.
async fn forward(
    connection: Arc<Connection>,
    name: String,
    arguments: JsonObject,
    context: CallContext,
    timeout: Duration,
    caller_token: Option<&str>,
    span: &WorkSpan,
) -> Result<CallOutcome, Ended> {
    let peer = connection.service.peer().clone();
    let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new(name).with_arguments(arguments),
    ));
    trace_meta(span, request.get_meta_mut());
    if !context.options.is_empty() {
        request.get_meta_mut().insert(
            OPTIONS_META_KEY.to_owned(),
            Value::Object(context.options.clone()),
        );
    }
    if let Some(handle) = caller_token {
        request
            .get_meta_mut()
            .insert(crate::oauth::CALLER_META_KEY.to_owned(), handle.into());
    }
    let (handle, _registration) = connection
        .relay
        .send(
            Arc::clone(&context.client),
            peer.send_request_with_option(request, PeerRequestOptions::no_options()),
            |handle| handle.progress_token.clone(),
        )
        .await
        .map_err(|error| Ended::Unsent(format!("cannot be reached: {error}")))?;
    let id = handle.id.clone();
    let mut answer = handle.rx;
    let answer = loop {
        tokio::select! {
            answer = &mut answer => {
                // rmcp hands each notification to a task of its own but a response straight
                // to its waiter, so the progress the upstream sent just before its result
                // may not have been routed yet: let those tasks run while this call is still
                // registered.
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                break answer;
            }
            () = tokio::time::sleep(POLL) => {
                if let Some(reason) = context.stop_reason() {
                    let _ = peer
                        .notify_cancelled(CancelledNotificationParam::new(
                            Some(id),
                            Some(stop_text(reason).to_owned()),
                        ))
                        .await;
                    return Err(Ended::Stopped(stopped(reason, timeout)));
                }
            }
        }
    };
    match answer {
        Ok(Ok(ServerResult::CallToolResult(result))) => {
            let json = serde_json::to_value(result).map_err(|error| {
                Ended::Failed(format!("answered a result Toolsmith cannot read: {error}"))
            })?;
            outcome(json).map_err(|error| {
                Ended::Failed(format!("answered a result Toolsmith cannot read: {error}"))
            })
        }
        Ok(Ok(_)) => Err(Ended::Failed(
            "answered `tools/call` with something other than a result".to_owned(),
        )),
        Ok(Err(ServiceError::McpError(error))) => Err(Ended::Failed(format!(
            "answered with the error {}: {}",
            error.code.0, error.message
        ))),
        Ok(Err(error)) => Err(Ended::Failed(format!("stopped during the call: {error}"))),
        Err(_) => Err(Ended::Failed("stopped during the call".to_owned())),
    }
}

/// A `CallToolResult` as the model's outcome: the same content, structured content and
/// `isError`.
fn outcome(mut json: Value) -> Result<CallOutcome, serde_json::Error> {
    if let Some(object) = json.as_object_mut() {
        object.remove("resultType");
    }
    serde_json::from_value(json)
}

/// Puts the trace context of the call's span in the request's `_meta` (`traceparent`,
/// `tracestate`), where OpenTelemetry's MCP conventions carry it, so the upstream's spans
/// join the caller's trace.
fn trace_meta(span: &WorkSpan, meta: &mut JsonObject) {
    if let Some((traceparent, tracestate)) = span.trace_context() {
        meta.insert("traceparent".to_owned(), Value::String(traceparent));
        if let Some(tracestate) = tracestate {
            meta.insert("tracestate".to_owned(), Value::String(tracestate));
        }
    }
}
