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

use rmcp::model::{ClientCapabilities, DetailedTask, ErrorCode, InputResponses};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskOptions};
use rmcp::{ErrorData, RoleServer};
use toolsmith_model::{Caller, TaskSupport};

use crate::mrtr::Replay;
use crate::replicas::SharedState;

pub use store::TaskLimits;
pub(crate) use store::Work;
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
    pub(crate) fn admit(&self, quota: &str) -> Result<(), ErrorData> {
        self.store.admit(quota)
    }

    /// A new task doing `work` for `caller`, listed in `scope`, counted in `quota` (its
    /// share of [`TaskLimits::per_caller`], [`scope`]), kept for the server's TTL or the
    /// shorter `ttl_ms` a client asked for.
    pub(crate) async fn create(
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

    pub(crate) fn attach(&self, task: TaskContext) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(line) = &state.last {
            task.set_status_message(line.clone());
        }
        state.task = Some(task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_before_the_task_exists_is_kept_for_it() {
        let line = StatusLine::default();
        line.progress(1.0, Some(4.0), Some("reading"));
        let state = line.0.lock().unwrap();
        assert_eq!(state.last.as_deref(), Some("1/4: reading"));
    }
}
