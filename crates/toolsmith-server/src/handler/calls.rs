//! `tools/call`: a known tool called, or run as a 2025-11-25 task, and each call counted in
//! the metrics, logged ([`CALL_LOG_TARGET`]) and audited.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorCode};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use toolsmith_model::{OutcomeKind, TaskSupport};

use super::session::session_of;
use super::{CALL_LOG_TARGET, McpHandler, caller_of};
use crate::call::{self, Request};
use crate::convert::{Published, log_level};
use crate::metrics::ToolMetrics;
use crate::mrtr::Replay;
use crate::task_run;
use crate::tasks::{self, Route};

impl McpHandler {
    /// A `tools/call`: refused past the stdio limits, an unknown tool answered as such, a
    /// known one called, counted, logged and audited.
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let _admission = self.admit_stdio().await?;
        let audit = self.state.audit().map(|log| {
            log.begin(
                "tools/call",
                &request.name,
                request.arguments.as_ref(),
                &context,
            )
        });
        let published = self.state.published();
        let Some(index) = published.index_of(&request.name) else {
            self.state.metrics().unknown_tool();
            log_call(&request.name, OutcomeKind::UnknownTool, started, &context);
            let unknown = published.catalog.lookup(&request.name).err().map_or_else(
                || format!("unknown tool `{}`", request.name),
                |unknown| unknown.to_string(),
            );
            let unknown = Err(ErrorData::invalid_params(unknown, None));
            if let Some(audit) = audit {
                audit.finish::<CallToolResponse>(OutcomeKind::UnknownTool, &unknown);
            }
            return unknown;
        };
        let mut counted = Counted {
            metrics: published.tool_metrics(index, self.state.metrics()),
            tool: &published.catalog.entries()[index].definition().name,
            started,
            context: &context,
            kind: None,
        };
        let (answer, kind) = self.call_known(&published, index, request, &context).await;
        counted.kind = Some(kind);
        if let Some(audit) = audit {
            audit.finish(kind, &answer);
        }
        answer
    }

    /// Calls the catalog entry at `index` of `published`; the answer, and how the call
    /// ended (also when the answer is not the tool's result: MCP 2026-07-28's input
    /// required, or a request refused).
    pub(super) async fn call_known(
        &self,
        published: &Arc<Published>,
        index: usize,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> (Result<CallToolResponse, ErrorData>, OutcomeKind) {
        let replay = match Replay::open(
            context,
            "tools/call",
            &request.name,
            request.arguments.as_ref(),
            request.input_responses,
            request.request_state.as_deref(),
        ) {
            Ok(replay) => replay.map(Arc::new),
            Err(refused) => return (Err(refused), OutcomeKind::InvalidRequest),
        };
        let support = published.catalog.entries()[index].definition().task;
        match tasks::route(support, context, replay.as_ref()) {
            Route::Direct => {}
            Route::Refuse(error) => return (Err(error), OutcomeKind::InvalidRequest),
            Route::Task(replay) => {
                let mut owned = context.clone();
                owned.ct = self.state.shutdown_token().child_token();
                let run = task_run::Run {
                    state: self.state.clone(),
                    published: Arc::clone(published),
                    index,
                    arguments: request.arguments.unwrap_or_default(),
                    context: owned,
                    caller: caller_of(context),
                    min_level: context
                        .meta
                        .log_level()
                        .map_or_else(|| self.session_log_level(), log_level),
                    status: Arc::default(),
                    working_dir: None,
                    progress_token: None,
                };
                return Box::pin(task_run::call(run, replay, support, &context.ct)).await;
            }
        }
        // A 2026-07-28 request has no channel back to ask for roots; it runs in the folder.
        let working_dir = if replay.is_none() {
            self.client_root(context).await
        } else {
            None
        };
        let call = Request {
            caller: caller_of(context),
            working_dir,
            replay: replay.clone(),
            progress_token: context.meta.get_progress_token(),
            min_level: context
                .meta
                .log_level()
                .map_or_else(|| self.session_log_level(), log_level),
            context,
            status: None,
        };
        let arguments = request.arguments.unwrap_or_default();
        // Boxed: rmcp moves every request's future into a task; keep that move small.
        let (outcome, kind) =
            Box::pin(call::run(&self.state, published, index, arguments, call)).await;
        if let Some(replay) = replay.as_deref() {
            // The tool needed a capability the client did not declare.
            if let Some(error) = replay.undeclared() {
                return (Err(error), OutcomeKind::InvalidRequest);
            }
            // The tool asked for something the client has not answered yet: ask for it.
            if let Some(input_required) = replay.finish() {
                return (Ok(input_required.into()), OutcomeKind::InputRequired);
            }
        }
        (Ok(outcome.into()), kind)
    }

    /// A 2025-11-25 `tools/call` with a `task` param (renamed by
    /// [`tasks::experimental::rename`]): the tool runs as a task at once, and the answer is
    /// its `CreateTaskResult`. `-32601` for a tool that never runs as a task (its
    /// `execution.taskSupport` is absent), as that revision says.
    pub(super) async fn call_as_task(
        &self,
        params: Option<serde_json::Value>,
        context: RequestContext<RoleServer>,
    ) -> Result<serde_json::Value, ErrorData> {
        let started = Instant::now();
        let (request, ttl_ms) = tasks::experimental::call_params(params)?;
        let _admission = self.admit_stdio().await?;
        let published = self.state.published();
        let Some(index) = published.index_of(&request.name) else {
            self.state.metrics().unknown_tool();
            log_call(&request.name, OutcomeKind::UnknownTool, started, &context);
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        };
        // Counted and logged as the task is made, as a 2026-07-28 call that becomes one.
        let mut counted = Counted {
            metrics: published.tool_metrics(index, self.state.metrics()),
            tool: &published.catalog.entries()[index].definition().name,
            started,
            context: &context,
            kind: Some(OutcomeKind::InvalidRequest),
        };
        if published.catalog.entries()[index].definition().task == TaskSupport::Never {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "tool `{}` does not run as a task (no `execution.taskSupport`); call it \
                     without `task`",
                    request.name
                ),
                None,
            ));
        }
        let mut owned = context.clone();
        owned.ct = self.state.shutdown_token().child_token();
        let run = task_run::Run {
            state: self.state.clone(),
            published: Arc::clone(&published),
            index,
            arguments: request.arguments.unwrap_or_default(),
            caller: caller_of(&context),
            min_level: self.session_log_level(),
            status: Arc::default(),
            working_dir: self.client_root(&context).await,
            progress_token: context.meta.get_progress_token(),
            context: owned,
        };
        let task = task_run::start(run, ttl_ms).await;
        counted.kind = Some(if task.is_ok() {
            OutcomeKind::Ok
        } else {
            OutcomeKind::Crashed
        });
        Ok(tasks::experimental::created(&task?))
    }
}

/// The one event logged per `tools/call` (docs/http.md, "Logs"): at `info`, under the
/// target [`CALL_LOG_TARGET`], with the tool, how the call ended, how long it took since
/// `started`, the Streamable HTTP session (none over stdio) and the request id. The fields
/// are only worked out when the event is enabled.
fn log_call(tool: &str, kind: OutcomeKind, started: Instant, context: &RequestContext<RoleServer>) {
    tracing::info!(
        target: CALL_LOG_TARGET,
        tool,
        outcome = kind.as_str(),
        duration_ms = started.elapsed().as_secs_f64() * 1000.0,
        session = session_of(context),
        request_id = %context.id,
        "tool call"
    );
}

/// One `tools/call` of a known tool, counted and logged when it is dropped: once answered
/// with how it ended, or, dropped unanswered (the client went away and its request with
/// it), as [`OutcomeKind::Cancelled`].
struct Counted<'a> {
    metrics: &'a ToolMetrics,
    tool: &'a str,
    started: Instant,
    context: &'a RequestContext<RoleServer>,
    kind: Option<OutcomeKind>,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        let kind = self.kind.unwrap_or(OutcomeKind::Cancelled);
        self.metrics.record(kind, self.started.elapsed());
        log_call(self.tool, kind, self.started, self.context);
    }
}
