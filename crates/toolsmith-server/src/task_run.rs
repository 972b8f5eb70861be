//! A `tools/call` run as an MCP task (docs/tasks.md): started at once for a 2025-11-25
//! `task` param, or in the request and handed to a task when it is still running after
//! [`GRACE`] or stops to ask the client for input; then driven through its
//! `input_required` rounds to its end. The tasks themselves (the store, who may reach
//! which, the status message) are [`crate::tasks`]'; this module runs their calls, so it
//! sits above both the call path and the state.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, InputRequests, InputResponses, JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;
use toolsmith_model::{Caller, LogLevel, OutcomeKind, TaskSupport};

use crate::call::{self, Request};
use crate::convert::{Published, error_result};
use crate::mrtr::Replay;
use crate::state::ServerState;
use crate::tasks::{GRACE, StatusLine, Work, scope};

/// What one run of the tool came to.
enum Round {
    /// The tool's result, and how the call ended.
    Done(CallToolResult, OutcomeKind),
    /// The tool stopped for answers from the client.
    Asked(InputRequests),
    /// The call is a JSON-RPC error (a capability the client did not declare).
    Refused(ErrorData),
}

/// One call of the catalog entry `index`, owning what a run needs so that it can go on
/// after the request was answered.
pub(crate) struct Run {
    pub(crate) state: ServerState,
    pub(crate) published: Arc<Published>,
    pub(crate) index: usize,
    pub(crate) arguments: JsonObject,
    /// The request's context, with its own cancellation token: cancelled by the request's
    /// cancellation while the call runs in the request, then by `tasks/cancel`.
    pub(crate) context: RequestContext<RoleServer>,
    pub(crate) caller: Option<Arc<Caller>>,
    pub(crate) min_level: LogLevel,
    pub(crate) status: Arc<StatusLine>,
    /// The client's root the call runs in (2025-11-25; a 2026-07-28 call has no channel
    /// back to ask for roots, and runs in the tools folder).
    pub(crate) working_dir: Option<std::path::PathBuf>,
    /// Where progress goes besides the status message (2025-11-25: the request's token
    /// stays valid for the task's life).
    pub(crate) progress_token: Option<rmcp::model::ProgressToken>,
}

impl Run {
    /// Runs the tool once, with `replay` answering its requests (2026-07-28), or asking the
    /// client itself (`None`, earlier revisions).
    async fn once(self: Arc<Self>, replay: Option<Arc<Replay>>) -> Round {
        let request = Request {
            context: &self.context,
            caller: self.caller.clone(),
            working_dir: self.working_dir.clone(),
            progress_token: self.progress_token.clone(),
            min_level: self.min_level,
            replay: replay.clone(),
            status: Some(Arc::clone(&self.status)),
        };
        let (result, kind) = Box::pin(call::run(
            &self.state,
            &self.published,
            self.index,
            self.arguments.clone(),
            request,
        ))
        .await;
        let Some(replay) = replay else {
            return Round::Done(result, kind);
        };
        if let Some(error) = replay.undeclared() {
            return Round::Refused(error);
        }
        let asked = replay.asked();
        if asked.is_empty() {
            Round::Done(result, kind)
        } else {
            Round::Asked(asked)
        }
    }

    fn start(self: &Arc<Self>, replay: Option<&Arc<Replay>>) -> JoinHandle<Round> {
        tokio::spawn(Arc::clone(self).once(replay.cloned()))
    }
}

/// Starts `run` as a task at once: a 2025-11-25 `tools/call` with a `task` param, asking
/// for one kept `ttl_ms` (at most the server's TTL). The tool asks the client for input
/// itself, as on any 2025-11-25 call.
pub(crate) async fn start(run: Run, ttl_ms: Option<u64>) -> Result<rmcp::model::Task, ErrorData> {
    let scope = scope(run.caller.as_deref(), &run.context);
    let run = Arc::new(run);
    let tasks = run.state.tasks().clone();
    let caller = run.caller.clone();
    let work: Work = Box::new(move |context| {
        Box::pin(async move {
            let _stop = run.context.ct.clone().drop_guard();
            run.status.attach(context.clone());
            let running = run.start(None);
            match watch(&run, &context, running).await? {
                Round::Done(result, kind) => settle(result, kind),
                Round::Refused(error) => Err(TaskExit::Error(error)),
                // A call without a replay asks the client itself: never here.
                Round::Asked(_) => Err(TaskExit::Error(ErrorData::internal_error(
                    "the call asked for input without a way to get it",
                    None,
                ))),
            }
        })
    });
    tasks
        .create(work, caller.as_deref(), scope.clone(), Some(scope), ttl_ms)
        .await
}

/// Answers a `tools/call` that may become a task ([`Route::Task`](crate::tasks::Route::Task)): with the tool's result,
/// an input-required round, or a `CreateTaskResult` while the call goes on as a task.
pub(crate) async fn call(
    run: Run,
    replay: Arc<Replay>,
    support: TaskSupport,
    cancelled: &CancellationToken,
) -> (Result<CallToolResponse, ErrorData>, OutcomeKind) {
    // Past a cap of the tasks kept, the call is refused before it starts, rather than
    // stopped when it would become a task.
    let quota = scope(run.caller.as_deref(), &run.context);
    if let Err(refusal) = run.state.tasks().admit(&quota) {
        return (Err(refusal), OutcomeKind::Busy);
    }
    let run = Arc::new(run);
    // Dropped before it hands the call to a task (the client went away), the call stops.
    let stop = run.context.ct.clone().drop_guard();
    let mut first = run.start(Some(&replay));
    let round = tokio::select! {
        joined = &mut first => Some(joined.unwrap_or_else(|_| crashed())),
        () = tokio::time::sleep(GRACE) => None,
        () = cancelled.cancelled() => {
            // The client cancelled the request: the call stops, and gets no answer.
            run.context.ct.cancel();
            let _ = first.await;
            return (Ok(error_result("cancelled".to_owned()).into()), OutcomeKind::Cancelled);
        }
    };
    let first = match round {
        Some(Round::Done(result, kind)) if support == TaskSupport::Optional => {
            return (Ok(result.into()), kind);
        }
        Some(Round::Refused(error)) => return (Err(error), OutcomeKind::InvalidRequest),
        Some(Round::Asked(requests)) => {
            // Asked before the task: an input-required round of the `tools/call` itself.
            if replay.asked_before_task()
                && let Some(input_required) = replay.finish()
            {
                return (Ok(input_required.into()), OutcomeKind::InputRequired);
            }
            First::Ready(Round::Asked(requests))
        }
        Some(round) => First::Ready(round),
        None => First::Running(first),
    };
    stop.disarm();
    let tasks = run.state.tasks().clone();
    let caller = run.caller.clone();
    let created = tasks
        .create(
            Box::new(move |context| Box::pin(drive(run, replay, first, context))),
            caller.as_deref(),
            quota,
            None,
            None,
        )
        .await;
    match created {
        Ok(task) => (
            Ok(CallToolResponse::Task(CreateTaskResult::new(task))),
            OutcomeKind::Ok,
        ),
        // The task could not be kept (the shared state is down): its work was stopped.
        Err(error) => (Err(error), OutcomeKind::Crashed),
    }
}

/// The first run of a task's call: still running, or already come to something.
enum First {
    Running(JoinHandle<Round>),
    Ready(Round),
}

/// The task's life: waits for the running call, parks in `input_required` while the tool
/// waits for answers, runs it again with them, and settles.
async fn drive(
    run: Arc<Run>,
    mut replay: Arc<Replay>,
    first: First,
    task: TaskContext,
) -> Result<CallToolResult, TaskExit> {
    // However the task ends (also aborted when its TTL passes), its call stops.
    let _stop = run.context.ct.clone().drop_guard();
    run.status.attach(task.clone());
    let mut round = match first {
        First::Ready(round) => round,
        First::Running(running) => watch(&run, &task, running).await?,
    };
    loop {
        match round {
            Round::Done(result, kind) => return settle(result, kind),
            Round::Refused(error) => return Err(TaskExit::Error(error)),
            Round::Asked(requests) => {
                let answers = answers(&task, requests).await?;
                replay = Arc::new(replay.resume(answers));
                let running = run.start(Some(&replay));
                round = watch(&run, &task, running).await?;
            }
        }
    }
}

/// The run's round, or [`TaskExit::Cancelled`] once `tasks/cancel` came and the call
/// stopped.
async fn watch(
    run: &Run,
    task: &TaskContext,
    mut running: JoinHandle<Round>,
) -> Result<Round, TaskExit> {
    tokio::select! {
        joined = &mut running => Ok(joined.unwrap_or_else(|_| crashed())),
        () = task.cancelled() => {
            // The existing cancellation path: Starlark stops, command process groups die.
            run.context.ct.cancel();
            let _ = running.await;
            Err(TaskExit::Cancelled)
        }
    }
}

/// Waits for the client's answers to all of `requests` (`tasks/update`, one key at a
/// time or all at once); `tasks/cancel` ends the wait.
async fn answers(task: &TaskContext, requests: InputRequests) -> Result<InputResponses, TaskExit> {
    let mut waiting = JoinSet::new();
    for (key, request) in requests {
        let task = task.clone();
        waiting.spawn(async move {
            let answer = task.request_input(key.clone(), request).await;
            answer.map(|answer| (key, answer))
        });
    }
    let mut answers = InputResponses::new();
    while let Some(joined) = waiting.join_next().await {
        match joined {
            Ok(Ok((key, answer))) => {
                answers.insert(key, answer);
            }
            Ok(Err(exit)) => return Err(exit),
            Err(_) => return Err(TaskExit::Cancelled),
        }
    }
    Ok(answers)
}

/// The task's end for a call that ended `kind`: the tool's result (`completed`, also when
/// `isError`), `cancelled`, or `failed` when the call ended without a result of the tool's
/// (it ran past its timeout, its thread crashed, it never got a slot), SEP-2663's
/// protocol-level failure.
fn settle(result: CallToolResult, kind: OutcomeKind) -> Result<CallToolResult, TaskExit> {
    match kind {
        OutcomeKind::Cancelled => Err(TaskExit::Cancelled),
        OutcomeKind::Timeout | OutcomeKind::Crashed | OutcomeKind::Busy => {
            let message = result
                .content
                .iter()
                .find_map(|block| block.as_text().map(|text| text.text.clone()))
                .unwrap_or_else(|| "the call ended without a result".to_owned());
            Err(TaskExit::Error(ErrorData::internal_error(
                message,
                Some(serde_json::json!({ "outcome": kind.as_str() })),
            )))
        }
        _ => Ok(result),
    }
}

fn crashed() -> Round {
    Round::Done(
        error_result("the call's task ended abruptly".to_owned()),
        OutcomeKind::Crashed,
    )
}

#[cfg(test)]
mod tests {
    use rmcp::model::ErrorCode;

    use super::*;

    #[test]
    fn a_tool_error_completes_and_a_call_without_a_result_fails() {
        // SEP-2663 error semantics: `isError` is `completed`; no result of the tool's is
        // `failed` with a JSON-RPC error.
        let failed = error_result("boom");
        assert!(matches!(
            settle(failed.clone(), OutcomeKind::IsError),
            Ok(result) if result.is_error == Some(true)
        ));
        let Err(TaskExit::Error(error)) = settle(failed.clone(), OutcomeKind::Timeout) else {
            panic!("a timeout fails the task")
        };
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert_eq!(error.message, "boom");
        assert!(matches!(
            settle(failed, OutcomeKind::Cancelled),
            Err(TaskExit::Cancelled)
        ));
    }
}
