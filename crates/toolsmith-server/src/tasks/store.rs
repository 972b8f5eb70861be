//! Where tasks are kept: the [`TaskStore`] trait, and [`MemoryStore`], rmcp's `TaskManager`
//! keeping each task in this process until its TTL has passed (docs/tasks.md, "TTL"). With
//! shared state the store is [`super::redis::RedisStore`], which runs its tasks in a
//! [`MemoryStore`] and keeps them in Redis for the other replicas.
//!
//! A task made for an OAuth caller (docs/auth.md) belongs to the token's subject: to any
//! other caller its id is unknown (`-32602`), as an id that was never made. Every method
//! takes the caller's subject for that check. A task made by a 2025-11-25 client is also
//! listed (`tasks/list`) in a scope: its subject's, or without OAuth its session's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData;
use rmcp::model::{DetailedTask, InputResponses, Task};
use rmcp::task_manager::{TaskContext, TaskFuture, TaskManager, TaskOptions};
use serde::{Deserialize, Serialize};

/// The work of a task: given its [`TaskContext`] (input requests, status message,
/// cancellation), the future that ends with the call's result.
pub(crate) type Work = Box<dyn FnOnce(TaskContext) -> TaskFuture + Send>;

/// Whose a task is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Owner {
    /// The OAuth token subject that alone reaches it; `None` without OAuth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subject: Option<String>,
    /// Where 2025-11-25's `tasks/list` shows it; `None`: nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scope: Option<String>,
}

impl Owner {
    /// Whether `subject` reaches the task.
    pub(crate) fn reached_by(&self, subject: Option<&str>) -> bool {
        self.subject.is_none() || self.subject.as_deref() == subject
    }
}

/// The tasks of a server, by id: created, read, answered and cancelled.
#[async_trait::async_trait]
pub(crate) trait TaskStore: Send + Sync {
    /// Starts `work` as a new task of `owner` (a token subject), kept for
    /// `options.ttl_ms`; the task can be read ([`Self::get`]) before this returns (SEP-2663:
    /// no `CreateTaskResult` before the task is durably created). `Err` when the task could
    /// not be kept where it must be (the shared state is unreachable): the work is stopped.
    async fn create(
        &self,
        options: TaskOptions,
        owner: Owner,
        work: Work,
    ) -> Result<Task, ErrorData>;

    /// The task `id` as `tasks/get` shows it; `-32602` for an unknown (or expired) id, or
    /// one of another subject than `subject`.
    async fn get(&self, id: &str, subject: Option<&str>) -> Result<DetailedTask, ErrorData>;

    /// Hands `responses` to the task's outstanding input requests (`tasks/update`);
    /// unknown keys are ignored.
    async fn update(
        &self,
        id: &str,
        responses: InputResponses,
        subject: Option<&str>,
    ) -> Result<(), ErrorData>;

    /// Asks the task to stop (`tasks/cancel`); idempotent on a finished task.
    async fn cancel(&self, id: &str, subject: Option<&str>) -> Result<(), ErrorData>;

    /// The tasks listed in `scope`, oldest first.
    async fn list(&self, scope: &str) -> Result<Vec<DetailedTask>, ErrorData>;
}

/// Tasks kept in this process's memory, with the subject each belongs to. Cheap to clone;
/// clones share the tasks.
#[derive(Clone, Default)]
pub(crate) struct MemoryStore {
    manager: TaskManager,
    /// Every task's owner, by id.
    owners: Arc<Mutex<HashMap<String, Owner>>>,
}

impl MemoryStore {
    /// Whether this process holds the task `id` (made here, not yet forgotten).
    pub(crate) fn holds(&self, id: &str) -> bool {
        self.lock().contains_key(id) && self.manager.get_task(id).is_ok()
    }

    /// The task `id` as it is now, whoever owns it; `None` once it is forgotten.
    pub(crate) fn snapshot(&self, id: &str) -> Option<DetailedTask> {
        self.manager.get_task(id).ok()
    }

    /// Starts `work` as a task of `owner`.
    pub(crate) fn spawn(&self, options: TaskOptions, owner: Owner, work: Work) -> Task {
        let task = self.manager.spawn(options, work);
        let mut owners = self.lock();
        // Tasks past their TTL are gone from the manager: forget their owners too.
        owners.retain(|id, _| self.manager.get_task(id).is_ok());
        owners.insert(task.task_id.clone(), owner);
        task
    }

    /// `Err` (as for an unknown id) when the task belongs to another subject.
    fn reachable(&self, id: &str, subject: Option<&str>) -> Result<(), ErrorData> {
        match self.lock().get(id) {
            Some(owner) if !owner.reached_by(subject) => Err(unknown(id)),
            _ => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Owner>> {
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait::async_trait]
impl TaskStore for MemoryStore {
    async fn create(
        &self,
        options: TaskOptions,
        owner: Owner,
        work: Work,
    ) -> Result<Task, ErrorData> {
        Ok(self.spawn(options, owner, work))
    }

    async fn get(&self, id: &str, subject: Option<&str>) -> Result<DetailedTask, ErrorData> {
        self.reachable(id, subject)?;
        self.manager.get_task(id)
    }

    async fn update(
        &self,
        id: &str,
        responses: InputResponses,
        subject: Option<&str>,
    ) -> Result<(), ErrorData> {
        self.reachable(id, subject)?;
        self.manager.update_task(id, responses)
    }

    async fn cancel(&self, id: &str, subject: Option<&str>) -> Result<(), ErrorData> {
        self.reachable(id, subject)?;
        self.manager.cancel_task(id)
    }

    async fn list(&self, scope: &str) -> Result<Vec<DetailedTask>, ErrorData> {
        let ids: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, owner)| owner.scope.as_deref() == Some(scope))
            .map(|(id, _)| id.clone())
            .collect();
        let mut tasks: Vec<DetailedTask> = ids
            .iter()
            .filter_map(|id| self.manager.get_task(id).ok())
            .collect();
        tasks.sort_by(|a, b| a.task.created_at.cmp(&b.task.created_at));
        Ok(tasks)
    }
}

/// The error for a task id that is unknown here: never made, past its TTL, or another
/// subject's (`-32602`, as rmcp's `TaskManager` answers).
pub(crate) fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task: {id}"), None)
}
