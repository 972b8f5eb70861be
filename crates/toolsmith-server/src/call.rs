//! One `tools/call`: the tool runs on a call thread ([`crate::pool`]), or on the request's
//! task when its calls are futures (an upstream's, [`toolsmith_model::AsyncTool`]), with
//! its deadline, options and working directory, while the request's task serves the tool's
//! client requests and watches for cancellation and the hard watchdog. Calls never block one another. The
//! deadline, the watchdog and the results of calls whose tool gives none are the model's call
//! policy ([`Watchdog`], [`CallFailure`]), which `toolsmith call` follows too.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::FutureExt as _;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ProgressToken};
use rmcp::service::RequestContext;
use toolsmith_model::{
    CallContext, CallFailure, CallOutcome, Interrupt, JsonObject, LogLevel, OutcomeKind,
    StopReason, Watchdog,
};

use crate::bridge::{self, McpBridge};
use crate::convert::{Published, call_result, error_result};
use crate::state::ServerState;

/// Everything about the request a call needs besides the tool and its arguments.
pub(crate) struct Request<'a> {
    pub(crate) context: &'a RequestContext<RoleServer>,
    /// Who made the call (docs/auth.md); `None` over stdio and without OAuth.
    pub(crate) caller: Option<Arc<toolsmith_model::Caller>>,
    /// Where command tools run: the client's root, or (`None`) the tools folder.
    pub(crate) working_dir: Option<PathBuf>,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) min_level: LogLevel,
    /// On a 2026-07-28 request, the replay that answers the tool's client requests.
    pub(crate) replay: Option<Arc<crate::mrtr::Replay>>,
    /// In a call that is (or may become) an MCP task, where its progress goes: the task's
    /// status message, instead of progress notifications (docs/tasks.md).
    pub(crate) status: Option<Arc<crate::tasks::StatusLine>>,
}

/// Runs the catalog entry at `index` and always answers with a `CallToolResult`, with how
/// the call ended: the kind comes from where each answer is made (the catalog's call path,
/// or here for a call cancelled, timed out, crashed or not started), never from its text.
pub(crate) async fn run(
    state: &ServerState,
    published: &Published,
    index: usize,
    arguments: JsonObject,
    request: Request<'_>,
) -> (CallToolResult, OutcomeKind) {
    let _running = state.call_started();
    let entry = &published.catalog.entries()[index];
    let definition = entry.definition();
    if let Some(outcome) = toolsmith_search::out_of_scope(definition, request.caller.as_deref()) {
        return (call_result(outcome), OutcomeKind::InvalidRequest);
    }
    // `[limits.tools]` (docs/limits.md): the tool's quota is the model's business to hear
    // of, so it is an `isError` result naming the limit, on every transport.
    if let Err(refusal) = state.limits().admit_tool(&definition.name).await {
        state.metrics().limited(refusal.kind);
        return (limited(&refusal), OutcomeKind::Busy);
    }
    let timeout = Watchdog::timeout_of(definition, None);
    let name = definition.name.as_str();
    let cancelled = &request.context.ct;

    // A slot of the tool's own and one of the server's, waited for no longer than the tool
    // may run.
    let tool_slots = &published.tool_slots[index];
    let slots = async {
        let own = Arc::clone(tool_slots).acquire_owned().await;
        let server = Arc::clone(state.call_slots()).acquire_owned().await;
        own.and_then(|own| server.map(|server| (own, server)))
    };
    let slots = tokio::select! {
        slots = tokio::time::timeout(timeout, slots) => slots,
        () = cancelled.cancelled() => return failed(&CallFailure::Cancelled, name),
    };
    let Ok(Ok(slots)) = slots else {
        let own_slots_full = tool_slots.available_permits() == 0;
        return failed(&CallFailure::not_started(definition, own_slots_full), name);
    };

    // With the init's time on top while the tool's init has not run (docs/tools.md).
    let watchdog = entry.watchdog(None);
    let deadline = watchdog.deadline();
    // The tool's clock starts after its init, so its requests to the client may come later.
    let client_deadline = watchdog.latest_deadline();
    let interrupt = Interrupt::new();
    let bridge = Arc::new(
        McpBridge::new(
            request.progress_token.is_some() || request.status.is_some(),
            request.min_level,
            request.replay.clone(),
        )
        .audited(state.audit().map(|log| log.scope(name, request.context))),
    );
    // Whatever way this function returns, a tool still waiting on the client is released.
    let _listening = Listening(&bridge);
    let context = CallContext {
        deadline,
        interrupt: interrupt.clone(),
        client: Arc::clone(&bridge) as Arc<dyn toolsmith_model::ClientBridge>,
        options: definition.options.clone(),
        working_dir: Some(
            request
                .working_dir
                .clone()
                .unwrap_or_else(|| state.working_dir().clone()),
        ),
        caller: request.caller.clone(),
    };
    let mut finished = start(state, published, index, arguments, context, slots);

    let fired = tokio::time::sleep_until(watchdog.fires_at().into());
    tokio::pin!(fired);
    loop {
        tokio::select! {
            biased;
            joined = &mut finished => {
                // Notifications the tool sent just before returning go out ahead of the result.
                while let Some(pending) = bridge.next() {
                    Box::pin(serve(pending, &request, client_deadline)).await;
                }
                let Ok((outcome, kind)) = joined else {
                    tracing::error!(tool = name, "tool thread panicked");
                    return failed(&CallFailure::Crashed, name);
                };
                return (call_result(outcome), kind);
            }
            () = cancelled.cancelled() => {
                // Stops Starlark scripts and kills command process groups. rmcp sends no
                // response for a cancelled request, so there is nothing to wait for.
                interrupt.raise(StopReason::Cancelled);
                return failed(&CallFailure::Cancelled, name);
            }
            () = &mut fired => {
                return match tokio::time::timeout(watchdog.fire(&interrupt), &mut finished).await {
                    Ok(Ok((outcome, kind))) => (call_result(outcome), kind),
                    _ => failed(&watchdog.abandoned(), name),
                };
            }
            () = bridge.ready() => {
                while let Some(asked) = bridge.next() {
                    let served = Box::pin(serve(asked, &request, client_deadline));
                    tokio::select! {
                        () = served => {}
                        () = cancelled.cancelled() => break,
                    }
                }
            }
        }
    }
}

/// A running call: its outcome, or `Err` when the tool panicked.
type Finished<'a> =
    Pin<Box<dyn Future<Output = Result<(CallOutcome, OutcomeKind), ()>> + Send + 'a>>;

/// Starts the call of the catalog entry at `index`. A tool whose calls are futures (an
/// upstream's) runs on the request's task; any other on a call thread. The slots are held
/// until the tool's thread ends, or until the request's task gives up on it (watchdog,
/// cancellation): then the pool takes it back, within its bound on abandoned threads
/// (`pool.rs`), so a tool that never returns does not keep them.
fn start<'a, S: Send + 'static>(
    state: &ServerState,
    published: &'a Published,
    index: usize,
    arguments: JsonObject,
    context: CallContext,
    slots: S,
) -> Finished<'a> {
    let entry = &published.catalog.entries()[index];
    match entry.call_async_with_kind(arguments, &context) {
        Ok(call) => Box::pin(async move {
            let _slots = slots;
            AssertUnwindSafe(call).catch_unwind().await.map_err(drop)
        }),
        Err(arguments) => {
            let catalog = Arc::clone(&published.catalog);
            // The request's span goes with the call, so the tool's work is its child.
            let trace = crate::telemetry::current();
            let running = state.pool().spawn(slots, move || {
                let _trace = trace.map(opentelemetry::Context::attach);
                catalog.entries()[index].call_with_kind(arguments, &context)
            });
            Box::pin(running.map(|joined| joined.map_err(drop)))
        }
    }
}

/// Carries out one request of the tool: progress of a call that is an MCP task goes to
/// the task's status, the rest to the client.
async fn serve(asked: bridge::ClientRequest, request: &Request<'_>, deadline: std::time::Instant) {
    if let (
        Some(status),
        bridge::ClientRequest::Progress {
            progress,
            total,
            message,
        },
    ) = (&request.status, &asked)
    {
        status.progress(*progress, *total, message.as_deref());
        return;
    }
    bridge::serve(
        asked,
        request.context,
        request.progress_token.as_ref(),
        deadline,
    )
    .await;
}

/// The `isError` result of a call of `tool` that ended with no result from the tool.
fn failed(failure: &CallFailure, tool: &str) -> (CallToolResult, OutcomeKind) {
    (error_result(failure.message(tool)), failure.kind())
}

/// The `isError` result of a call a tool's rate limit refused.
fn limited(refusal: &crate::limits::Refusal) -> CallToolResult {
    let mut result = error_result(refusal.to_string());
    result.structured_content = Some(refusal.to_json());
    result
}

/// Closes the bridge when the call's task stops listening.
struct Listening<'a>(&'a McpBridge);

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}
