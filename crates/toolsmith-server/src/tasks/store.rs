//! Where tasks are kept: a small [`TaskStore`] trait, so that another store (Redis, for
//! replicas) can stand in later, and [`MemoryStore`], the one in use: rmcp's `TaskManager`,
//! which keeps each task in this process until its TTL has passed (docs/tasks.md, "TTL").

use rmcp::ErrorData;
use rmcp::model::{DetailedTask, InputResponses, Task};
use rmcp::task_manager::{TaskContext, TaskFuture, TaskManager, TaskOptions};

/// The work of a task: given its [`TaskContext`] (input requests, status message,
/// cancellation), the future that ends with the call's result.
pub(crate) type Work = Box<dyn FnOnce(TaskContext) -> TaskFuture + Send>;

/// The tasks of a server, by id: created, read, answered and cancelled.
pub(crate) trait TaskStore: Send + Sync {
    /// Starts `work` as a new task kept for `options.ttl_ms`; the task can be read
    /// ([`Self::get`]) before this returns (SEP-2663: no `CreateTaskResult` before the task
    /// is durably created).
    fn create(&self, options: TaskOptions, work: Work) -> Task;

    /// The task `id` as `tasks/get` shows it; `-32602` for an unknown (or expired) id.
    fn get(&self, id: &str) -> Result<DetailedTask, ErrorData>;

    /// Hands `responses` to the task's outstanding input requests (`tasks/update`);
    /// unknown keys are ignored.
    fn update(&self, id: &str, responses: InputResponses) -> Result<(), ErrorData>;

    /// Asks the task to stop (`tasks/cancel`); idempotent on a finished task.
    fn cancel(&self, id: &str) -> Result<(), ErrorData>;
}

/// Tasks kept in this process's memory.
#[derive(Clone, Default)]
pub(crate) struct MemoryStore(TaskManager);

impl TaskStore for MemoryStore {
    fn create(&self, options: TaskOptions, work: Work) -> Task {
        self.0.spawn(options, work)
    }

    fn get(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        self.0.get_task(id)
    }

    fn update(&self, id: &str, responses: InputResponses) -> Result<(), ErrorData> {
        self.0.update_task(id, responses)
    }

    fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        self.0.cancel_task(id)
    }
}
