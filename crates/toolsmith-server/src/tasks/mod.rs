//! MCP tasks for long calls (the `io.modelcontextprotocol/tasks` extension of 2026-07-28,
//! SEP-2663; docs/tasks.md): a `tools/call` of a tool with `task = "optional"` or
//! `"required"`, from a client that negotiated the extension, may be answered at once with
//! a `CreateTaskResult` while the call goes on in the background; the client polls
//! `tasks/get`, answers the tool's requests with `tasks/update` and stops it with
//! `tasks/cancel`.
//!
//! The call starts in the request, as any other. It becomes a task when it is still
//! running after [`GRACE`], or when it stops to ask the client for something, unless what
//! it asked was marked `before_task` (that is asked by an input-required round of the
//! `tools/call` itself, SEP-2322). An optional tool that is done within [`GRACE`] answers
//! with its result; a required one always with a task. Inside the task, the tool's requests
//! are answered by replay as on any 2026-07-28 call ([`crate::mrtr`]): the task waits in
//! `input_required` for all of them, then runs the tool again with the answers.
//!
//! Tasks are kept in this process ([`store`]), or with shared state in Redis for every
//! replica ([`redis`]).

pub(crate) mod experimental;
mod redis;
mod store;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, CreateTaskResult, DetailedTask,
    ErrorCode, InputRequests, InputResponses, JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskOptions};
use rmcp::{ErrorData, RoleServer};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;
use toolsmith_model::{Caller, LogLevel, OutcomeKind, TaskSupport};

use crate::call::{self, Request};
use crate::convert::{Published, error_result};
use crate::mrtr::Replay;
use crate::replicas::SharedState;
use crate::state::ServerState;

pub use store::TaskLimits;
use store::{MemoryStore, TaskStore};

/// How long a call that may become a task runs in the request before it becomes one.
pub(crate) const GRACE: Duration = Duration::from_millis(100);

/// How long a task is kept after it was created, and again after it ended (`ttlMs`),
/// unless [`TaskSettings::ttl`] says otherwise.
pub(crate) const DEFAULT_TTL_MS: u64 = 300_000;

/// How often a client is asked to poll `tasks/get` (`pollIntervalMs`).
pub(crate) const POLL_INTERVAL_MS: u64 = 500;

/// How long MCP tasks are kept, and where (docs/tasks.md).
#[derive(Debug, Clone)]
pub struct TaskSettings {
    /// How long a task is kept from its creation, and again once it ended (`ttlMs`;
    /// `serve --task-ttl`). Five minutes by default.
    pub ttl: Duration,
    /// The state shared with other replicas (`serve --state`): tasks are kept there, so
    /// that every replica serves `tasks/*` for any of them. `None`: in this process.
    pub shared: Option<SharedState>,
    /// How many tasks are kept at once, per caller and in all (on each replica).
    pub limits: TaskLimits,
}

impl Default for TaskSettings {
    fn default() -> Self {
        Self {
            ttl: Duration::from_millis(DEFAULT_TTL_MS),
            shared: None,
            limits: TaskLimits::default(),
        }
    }
}

/// The tasks of one server: its [`TaskStore`] and their TTL. A task made for an OAuth
/// caller (docs/auth.md) is reached only with a token of the same subject.
#[derive(Clone)]
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    ttl_ms: u64,
}

impl Tasks {
    /// The tasks `settings` describe: in Redis with shared state, else in memory.
    pub(crate) fn new(settings: &TaskSettings) -> Self {
        let store: Arc<dyn TaskStore> = match &settings.shared {
            Some(shared) => Arc::new(redis::RedisStore::new(shared.clone(), settings.limits)),
            None => Arc::new(MemoryStore::new(settings.limits)),
        };
        Self {
            store,
            ttl_ms: u64::try_from(settings.ttl.as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
        }
    }

    /// `tasks/get`.
    pub(crate) async fn get(
        &self,
        id: &str,
        caller: Option<&Caller>,
    ) -> Result<DetailedTask, ErrorData> {
        self.store.get(id, subject(caller)).await
    }

    /// `tasks/update`.
    pub(crate) async fn update(
        &self,
        id: &str,
        responses: InputResponses,
        caller: Option<&Caller>,
    ) -> Result<(), ErrorData> {
        self.store.update(id, responses, subject(caller)).await
    }

    /// `tasks/cancel`.
    pub(crate) async fn cancel(&self, id: &str, caller: Option<&Caller>) -> Result<(), ErrorData> {
        self.store.cancel(id, subject(caller)).await
    }

    /// The tasks 2025-11-25's `tasks/list` shows in `scope` ([`Run::scope`]), oldest first.
    pub(crate) async fn list(&self, scope: &str) -> Result<Vec<DetailedTask>, ErrorData> {
        self.store.list(scope).await
    }

    /// `Err` (`-32029`) when a task made now for `caller`, whose share of the caps is
    /// `quota` ([`scope`]), would be over a cap of [`TaskLimits`].
    fn admit(&self, quota: &str) -> Result<(), ErrorData> {
        self.store.admit(quota)
    }

    /// A new task doing `work` for `caller`, listed in `scope`, counted in `quota` (its
    /// share of [`TaskLimits::per_caller`], [`scope`]), kept for the server's TTL or the
    /// shorter `ttl_ms` a client asked for.
    async fn create(
        &self,
        work: store::Work,
        caller: Option<&Caller>,
        quota: String,
        scope: Option<String>,
        ttl_ms: Option<u64>,
    ) -> Result<rmcp::model::Task, ErrorData> {
        let ttl_ms = ttl_ms.map_or(self.ttl_ms, |asked| asked.clamp(1, self.ttl_ms));
        let options = TaskOptions::new()
            .with_ttl_ms(ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        let owner = store::Owner {
            subject: subject(caller).map(str::to_owned),
            scope,
            caller: quota,
        };
        self.store.create(options, owner, work).await
    }
}

/// Where 2025-11-25's `tasks/list` shows the tasks `caller` makes in the request of
/// `context`, and lists them from: with its token's subject, else in its Streamable HTTP
/// session, else (stdio, one client) in the process.
pub(crate) fn scope(caller: Option<&Caller>, context: &RequestContext<RoleServer>) -> String {
    if let Some(subject) = subject(caller) {
        return format!("subject:{subject}");
    }
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|id| id.to_str().ok())
        .map_or_else(|| "stdio".to_owned(), |id| format!("session:{id}"))
}

/// The token subject of `caller`, whom the tasks it makes belong to.
fn subject(caller: Option<&Caller>) -> Option<&str> {
    caller.and_then(|caller| caller.subject.as_deref())
}

/// How a `tools/call` of a tool is answered, given its `task` property and the client.
pub(crate) enum Route {
    /// In the request, as always.
    Direct,
    /// Maybe as a task ([`call`]).
    Task(Arc<Replay>),
    /// Refused: the tool must run as a task and the client cannot take one.
    Refuse(ErrorData),
}

/// The route of a call of a tool with `support`, from the client of `context`, whose
/// 2026-07-28 replay is `replay` (`None` on earlier revisions, which get no tasks).
pub(crate) fn route(
    support: TaskSupport,
    context: &RequestContext<RoleServer>,
    replay: Option<&Arc<Replay>>,
) -> Route {
    if support == TaskSupport::Never {
        return Route::Direct;
    }
    let negotiated = context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks());
    match (replay, negotiated, support) {
        (Some(replay), true, _) => Route::Task(Arc::clone(replay)),
        (_, _, TaskSupport::Optional | TaskSupport::Never) => Route::Direct,
        // SEP-2663, "Required capabilities": -32021 naming the extension.
        (Some(_), false, TaskSupport::Required) => {
            Route::Refuse(ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            ))
        }
        // Earlier revisions: the tool cannot be called without a task (2025-11-25,
        // `taskSupport: "required"`: -32601).
        (None, _, TaskSupport::Required) => Route::Refuse(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "this tool runs only as an MCP task (`task = \"required\"`): on protocol \
             version 2025-11-25 call it with a `task` param, on 2026-07-28 with the \
             `io.modelcontextprotocol/tasks` extension declared",
            None,
        )),
    }
}

/// Where the progress of a call that is (or may become) a task goes: the task's status
/// message (`statusMessage` on `tasks/get`), once the task exists.
#[derive(Default)]
pub(crate) struct StatusLine(Mutex<StatusState>);

#[derive(Default)]
struct StatusState {
    task: Option<TaskContext>,
    /// The last progress, shown once the task exists.
    last: Option<String>,
}

impl StatusLine {
    /// The tool reported progress.
    pub(crate) fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let mut line = match total {
            Some(total) => format!("{progress}/{total}"),
            None => format!("{progress}"),
        };
        if let Some(message) = message {
            line = format!("{line}: {message}");
        }
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = &state.task {
            task.set_status_message(line.clone());
        }
        state.last = Some(line);
    }

    fn attach(&self, task: TaskContext) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(line) = &state.last {
            task.set_status_message(line.clone());
        }
        state.task = Some(task);
    }
}

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
    let work: store::Work = Box::new(move |context| {
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

/// Answers a `tools/call` that may become a task ([`Route::Task`]): with the tool's result,
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

    #[test]
    fn progress_before_the_task_exists_is_kept_for_it() {
        let line = StatusLine::default();
        line.progress(1.0, Some(4.0), Some("reading"));
        let state = line.0.lock().unwrap();
        assert_eq!(state.last.as_deref(), Some("1/4: reading"));
    }
}
