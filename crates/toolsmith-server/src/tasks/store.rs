//! Where tasks are kept: the [`TaskStore`] trait, and [`MemoryStore`], keeping each task in
//! this process until its TTL has passed (docs/tasks.md, "TTL"). With shared state the
//! store is [`super::redis::RedisStore`], which runs its tasks in a [`MemoryStore`] and
//! keeps them in Redis for the other replicas.
//!
//! A task made for an OAuth caller (docs/auth.md) belongs to the token's subject: to any
//! other caller its id is unknown (`-32602`), as an id that was never made. Every method
//! takes the caller's subject for that check. A task made by a 2025-11-25 client is also
//! listed (`tasks/list`) in a scope: its subject's, or without OAuth its session's.
//!
//! Every operation costs the same however many tasks are kept: each task runs in an rmcp
//! `TaskManager` of its own (whose expiry sweep, run on every call into it, then looks at
//! that one task), and the store visits a task again only when one of its deadlines is due
//! (a queue ordered by deadline). The tasks kept are capped per caller and per server
//! ([`TaskLimits`]): a task made past a cap is refused with `-32029`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{DetailedTask, InputResponses, Task};
use rmcp::task_manager::{TaskContext, TaskFuture, TaskManager, TaskOptions};
use serde::{Deserialize, Serialize};

use crate::limits::RATE_LIMITED;

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
    /// The caller whose share of [`TaskLimits::per_caller`] it takes: its token subject,
    /// its Streamable HTTP session, or the process (stdio). Kept by the replica that runs
    /// the task only.
    #[serde(skip)]
    pub(crate) caller: String,
}

impl Owner {
    /// Whether `subject` reaches the task.
    pub(crate) fn reached_by(&self, subject: Option<&str>) -> bool {
        self.subject.is_none() || self.subject.as_deref() == subject
    }
}

/// How many tasks a server keeps at once (running, or ended and kept for their last
/// polls): per caller and in all (docs/tasks.md, "Limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLimits {
    /// Tasks one caller (a token subject, a Streamable HTTP session, or the stdio client)
    /// may have kept at once.
    pub per_caller: usize,
    /// Tasks the server keeps at once, for all callers.
    pub total: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self {
            per_caller: 1_000,
            total: 10_000,
        }
    }
}

/// The tasks of a server, by id: created, read, answered and cancelled.
#[async_trait::async_trait]
pub(crate) trait TaskStore: Send + Sync {
    /// Starts `work` as a new task of `owner` (a token subject), kept for
    /// `options.ttl_ms`; the task can be read ([`Self::get`]) before this returns (SEP-2663:
    /// no `CreateTaskResult` before the task is durably created). `Err` when the task could
    /// not be kept where it must be (the shared state is unreachable), or a cap of
    /// [`TaskLimits`] is reached (`-32029`): the work is stopped.
    async fn create(
        &self,
        options: TaskOptions,
        owner: Owner,
        work: Work,
    ) -> Result<Task, ErrorData>;

    /// `Err` (`-32029`) when a task made now for `caller` would be over a cap of
    /// [`TaskLimits`]: asked before a call that may become a task starts, so that its
    /// work is not begun only to be stopped.
    fn admit(&self, caller: &str) -> Result<(), ErrorData>;

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
    kept: Arc<Mutex<Kept>>,
    limits: TaskLimits,
}

/// The tasks a [`MemoryStore`] keeps, and the indexes that spare every operation a walk
/// over all of them.
#[derive(Default)]
struct Kept {
    tasks: HashMap<String, Entry>,
    /// When each task is to be looked at again (its TTL passed, or its retention after it
    /// ended), by deadline; the number breaks ties.
    due: BTreeMap<(Instant, u64), String>,
    /// The ids listed in each scope, in the order they were made.
    listed: HashMap<String, BTreeMap<u64, String>>,
    /// How many tasks each caller has kept.
    per_caller: HashMap<String, usize>,
    /// The number of the next task made.
    next: u64,
    /// Tasks looked at by [`Kept::expire`], for tests that check creation looks at none.
    #[cfg(test)]
    visits: usize,
}

/// One kept task.
struct Entry {
    /// The task's own manager: its expiry sweep looks at this task alone.
    manager: TaskManager,
    owner: Owner,
    number: u64,
    created: Instant,
    ttl: Option<Duration>,
    /// When the task's work ended (or its TTL ended it); `None` while it runs.
    ended: Option<Instant>,
}

impl Entry {
    /// When the task is next to be looked at: at the end of its TTL while it runs (and
    /// soon after `now`, should its manager not have ended it yet), one TTL after it ended
    /// once it ended; `None`: never (no TTL).
    fn deadline(&self, now: Instant) -> Option<Instant> {
        let ttl = self.ttl?;
        if let Some(ended) = self.ended {
            return ended.checked_add(ttl);
        }
        let soon = now.checked_add(Duration::from_millis(1))?;
        self.created.checked_add(ttl).map(|end| end.max(soon))
    }
}

impl Kept {
    /// Looks at the tasks whose deadline has passed: a running one is ended `failed` (its
    /// manager's sweep does it, aborting the work), an ended one past its retention is
    /// forgotten. Each task is looked at a bounded number of times in its life.
    fn expire(&mut self, now: Instant) {
        while let Some(entry) = self.due.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let id = entry.remove();
            #[cfg(test)]
            {
                self.visits += 1;
            }
            let Some(task) = self.tasks.get_mut(&id) else {
                continue;
            };
            // The count sweeps the manager's one task (failing it once its TTL passed)
            // without copying its result.
            let ended = task.manager.running_task_count() == 0;
            if ended && task.ended.is_none() {
                // Ended by its TTL just now (the sweep aborted the work).
                task.ended = Some(now);
            }
            match task.deadline(now) {
                Some(deadline) if deadline > now => {
                    let number = task.number;
                    self.due.insert((deadline, number), id);
                }
                Some(_) => self.forget(&id),
                None => {}
            }
        }
    }

    fn forget(&mut self, id: &str) {
        let Some(entry) = self.tasks.remove(id) else {
            return;
        };
        // An ended task's manager holds no running work; a running one's is aborted.
        entry.manager.shutdown();
        if let Some(scope) = &entry.owner.scope
            && let Some(listed) = self.listed.get_mut(scope)
        {
            listed.remove(&entry.number);
            if listed.is_empty() {
                self.listed.remove(scope);
            }
        }
        if let Some(count) = self.per_caller.get_mut(&entry.owner.caller) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_caller.remove(&entry.owner.caller);
            }
        }
    }

    /// `Err` (`-32029`) when one more task for `caller` would pass a cap of `limits`.
    fn admit(&self, caller: &str, limits: TaskLimits) -> Result<(), ErrorData> {
        if self.tasks.len() >= limits.total {
            return Err(over_cap(
                "tasks",
                limits.total,
                format!(
                    "too many tasks: the server keeps at most {} at once; wait for some to \
                     end and be forgotten (one TTL after they ended), or call without a task",
                    limits.total
                ),
            ));
        }
        if self.per_caller.get(caller).copied().unwrap_or(0) >= limits.per_caller {
            return Err(over_cap(
                "tasks_per_caller",
                limits.per_caller,
                format!(
                    "too many tasks: one caller may keep at most {} at once; wait for some \
                     to end and be forgotten (one TTL after they ended), or ask for a \
                     shorter `ttl`",
                    limits.per_caller
                ),
            ));
        }
        Ok(())
    }

    /// The manager of task `id` when `subject` may reach it; `-32602` otherwise.
    fn manager(&self, id: &str, subject: Option<&str>) -> Result<TaskManager, ErrorData> {
        match self.tasks.get(id) {
            Some(entry) if entry.owner.reached_by(subject) => Ok(entry.manager.clone()),
            _ => Err(unknown(id)),
        }
    }
}

impl MemoryStore {
    /// An empty store that keeps no more tasks than `limits` allow.
    pub(crate) fn new(limits: TaskLimits) -> Self {
        Self {
            kept: Arc::default(),
            limits,
        }
    }

    /// Whether this process holds the task `id` (made here, not yet forgotten).
    pub(crate) fn holds(&self, id: &str) -> bool {
        self.any_manager(id).is_some()
    }

    /// The task `id` as it is now, whoever owns it; `None` once it is forgotten.
    pub(crate) fn snapshot(&self, id: &str) -> Option<DetailedTask> {
        self.any_manager(id)?.get_task(id).ok()
    }

    /// The manager of task `id`, whoever owns it.
    fn any_manager(&self, id: &str) -> Option<TaskManager> {
        let mut kept = self.lock();
        kept.expire(Instant::now());
        kept.tasks.get(id).map(|entry| entry.manager.clone())
    }

    /// Starts `work` as a task of `owner`; `-32029` past a cap of the store's limits.
    pub(crate) fn spawn(
        &self,
        options: TaskOptions,
        owner: Owner,
        work: Work,
    ) -> Result<Task, ErrorData> {
        let now = Instant::now();
        let mut kept = self.lock();
        kept.expire(now);
        kept.admit(&owner.caller, self.limits)?;
        let ttl = options.ttl_ms.map(Duration::from_millis);
        let number = kept.next;
        kept.next += 1;
        // The work tells the store when it ended, so that the task is forgotten one TTL
        // later without a walk over the others.
        let store = Arc::downgrade(&self.kept);
        let work: Work = Box::new(move |context: TaskContext| {
            let id = context.task_id().to_owned();
            let running = work(context);
            Box::pin(async move {
                let result = running.await;
                if let Some(store) = store.upgrade() {
                    let mut kept = store.lock().unwrap_or_else(PoisonError::into_inner);
                    let now = Instant::now();
                    if let Some(entry) = kept.tasks.get_mut(&id)
                        && entry.ended.is_none()
                    {
                        entry.ended = Some(now);
                        if let Some(deadline) = entry.deadline(now) {
                            let number = entry.number;
                            kept.due.insert((deadline, number), id);
                        }
                    }
                }
                result
            })
        });
        let manager = TaskManager::new();
        let task = manager.spawn(options, work);
        let entry = Entry {
            manager,
            owner,
            number,
            // Read after the manager's own clock started: by this TTL's end, the manager
            // sees its task as expired too.
            created: Instant::now(),
            ttl,
            ended: None,
        };
        if let Some(deadline) = entry.deadline(now) {
            kept.due.insert((deadline, number), task.task_id.clone());
        }
        if let Some(scope) = &entry.owner.scope {
            kept.listed
                .entry(scope.clone())
                .or_default()
                .insert(number, task.task_id.clone());
        }
        *kept
            .per_caller
            .entry(entry.owner.caller.clone())
            .or_default() += 1;
        kept.tasks.insert(task.task_id.clone(), entry);
        Ok(task)
    }

    /// The manager of task `id` (after expiring what is due), when `subject` reaches it.
    fn manager(&self, id: &str, subject: Option<&str>) -> Result<TaskManager, ErrorData> {
        let mut kept = self.lock();
        kept.expire(Instant::now());
        kept.manager(id, subject)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
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
        self.spawn(options, owner, work)
    }

    fn admit(&self, caller: &str) -> Result<(), ErrorData> {
        let mut kept = self.lock();
        kept.expire(Instant::now());
        kept.admit(caller, self.limits)
    }

    async fn get(&self, id: &str, subject: Option<&str>) -> Result<DetailedTask, ErrorData> {
        // The task is read outside the store's lock: its result may be large.
        self.manager(id, subject)?.get_task(id)
    }

    async fn update(
        &self,
        id: &str,
        responses: InputResponses,
        subject: Option<&str>,
    ) -> Result<(), ErrorData> {
        self.manager(id, subject)?.update_task(id, responses)
    }

    async fn cancel(&self, id: &str, subject: Option<&str>) -> Result<(), ErrorData> {
        self.manager(id, subject)?.cancel_task(id)
    }

    async fn list(&self, scope: &str) -> Result<Vec<DetailedTask>, ErrorData> {
        let managers: Vec<(String, TaskManager)> = {
            let mut kept = self.lock();
            kept.expire(Instant::now());
            let Some(listed) = kept.listed.get(scope) else {
                return Ok(Vec::new());
            };
            listed
                .values()
                .filter_map(|id| Some((id.clone(), kept.tasks.get(id)?.manager.clone())))
                .collect()
        };
        Ok(managers
            .iter()
            .filter_map(|(id, manager)| manager.get_task(id).ok())
            .collect())
    }
}

/// The error for a task id that is unknown here: never made, past its TTL, or another
/// subject's (`-32602`, as rmcp's `TaskManager` answers).
pub(crate) fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task: {id}"), None)
}

/// The error for a task refused by the cap `limit` of `max` tasks (`-32029`, as a call
/// past a caller's rate limit).
fn over_cap(limit: &str, max: usize, message: String) -> ErrorData {
    ErrorData::new(
        RATE_LIMITED,
        message,
        Some(serde_json::json!({ "limit": limit, "max": max })),
    )
}

#[cfg(test)]
mod tests {
    use rmcp::model::CallToolResult;

    use super::*;

    /// Work that ends at once.
    fn quick() -> Work {
        Box::new(|_| Box::pin(async { Ok(CallToolResult::success(Vec::new())) }))
    }

    /// Work that runs until its TTL or a cancellation stops it.
    fn endless() -> Work {
        Box::new(|_| Box::pin(std::future::pending()))
    }

    fn owner(caller: &str) -> Owner {
        Owner {
            caller: caller.to_owned(),
            ..Owner::default()
        }
    }

    fn options(ttl_ms: u64) -> TaskOptions {
        TaskOptions::new().with_ttl_ms(ttl_ms)
    }

    #[tokio::test]
    async fn making_a_task_looks_at_no_other_task() {
        // 5,000 tasks took 279 s to make with a core pegged: each creation swept every task
        // kept (twice over), so a plain call queued behind 500 creations waited 122 s.
        let store = MemoryStore::new(TaskLimits {
            per_caller: 10_000,
            total: 10_000,
        });
        for _ in 0..3_000 {
            store.spawn(options(60_000), owner("a"), endless()).unwrap();
        }
        assert_eq!(store.lock().visits, 0);
        // Tasks whose TTL passes are each looked at a bounded number of times, however
        // many others are kept.
        for _ in 0..3_000 {
            store.spawn(options(1), owner("b"), endless()).unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
        store.admit("b").unwrap();
        let visits = store.lock().visits;
        assert!(visits <= 3 * 3_000, "{visits} visits");
        let ids: Vec<String> = store.lock().tasks.keys().cloned().collect();
        let first = &ids[0];
        assert!(store.get(first, None).await.is_ok());
    }

    #[tokio::test]
    async fn a_task_past_a_cap_is_refused_naming_the_cap() {
        let store = MemoryStore::new(TaskLimits {
            per_caller: 3,
            total: 5,
        });
        for _ in 0..3 {
            store.spawn(options(60_000), owner("a"), endless()).unwrap();
        }
        let refused = store
            .spawn(options(60_000), owner("a"), endless())
            .unwrap_err();
        assert_eq!(refused.code, RATE_LIMITED);
        assert!(
            refused.message.contains("one caller may keep at most 3"),
            "{}",
            refused.message
        );
        assert_eq!(
            refused.data,
            Some(serde_json::json!({"limit": "tasks_per_caller", "max": 3}))
        );
        assert!(store.admit("a").is_err());
        // Another caller has its own share, up to the server's cap.
        for _ in 0..2 {
            store.spawn(options(60_000), owner("b"), endless()).unwrap();
        }
        let refused = store.admit("c").unwrap_err();
        assert_eq!(
            refused.data,
            Some(serde_json::json!({"limit": "tasks", "max": 5}))
        );
    }

    #[tokio::test]
    async fn an_ended_task_frees_its_share_once_forgotten() {
        let store = MemoryStore::new(TaskLimits {
            per_caller: 1,
            total: 10,
        });
        let task = store.spawn(options(20), owner("a"), quick()).unwrap();
        assert!(store.admit("a").is_err());
        // Ended, it is kept one TTL for its last polls, then forgotten.
        for _ in 0..500 {
            if store.admit("a").is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        store.admit("a").unwrap();
        let forgotten = store.get(&task.task_id, None).await.unwrap_err();
        assert_eq!(forgotten.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(store.lock().tasks.is_empty());
        assert!(store.lock().due.is_empty());
    }

    #[tokio::test]
    async fn listing_shows_a_scope_oldest_first() {
        let store = MemoryStore::new(TaskLimits::default());
        let listed = |caller: &str| Owner {
            scope: Some("session:1".to_owned()),
            ..owner(caller)
        };
        let first = store
            .spawn(options(60_000), listed("a"), endless())
            .unwrap();
        store.spawn(options(60_000), owner("a"), endless()).unwrap();
        let second = store
            .spawn(options(60_000), listed("a"), endless())
            .unwrap();
        let ids: Vec<String> = store
            .list("session:1")
            .await
            .unwrap()
            .into_iter()
            .map(|task| task.task.task_id)
            .collect();
        assert_eq!(ids, [first.task_id, second.task_id]);
    }
}
