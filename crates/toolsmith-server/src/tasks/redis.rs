//! Tasks in the state replicas share (`serve --state redis://…`; docs/tasks.md, "Replicas"):
//! a task made on one replica is read, answered, cancelled and collected through any.
//!
//! The work runs where the task was made, in that replica's [`MemoryStore`]; a [`Mirror`]
//! there writes the task as `tasks/get` shows it to `toolsmith:task:ID` whenever it changed
//! (status, status message, input requests, the result), with a Redis expiry of the task's
//! TTL. Another replica reads that key, and reaches the work through the task's inbox, a
//! Redis list (`toolsmith:task:ID:inbox`) of `tasks/cancel` and `tasks/update` messages that
//! the mirror takes every [`MIRROR_EVERY`]. A polled list and not pub/sub: a message
//! published while the replica's subscription is reconnecting would be lost, a list keeps
//! it until it is read; and one round trip per running task per tick costs little.
//!
//! When Redis is down, a call that would become a task fails with `-32603` (its work is
//! stopped: a task the other replicas cannot see would be unknown to them), a task held by
//! this replica is still served from memory, and `tasks/*` for any other id is `-32603`
//! naming the unreachable URL; running tasks go on and their state is written once Redis
//! is back.

use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{DetailedTask, InputResponses, Task};
use rmcp::task_manager::TaskOptions;
use serde::{Deserialize, Serialize};

use super::store::{MemoryStore, Owner, TaskStore, Work, unknown};
use crate::replicas::SharedState;

/// How often a running task's state is compared with what Redis holds, and its inbox read.
const MIRROR_EVERY: Duration = Duration::from_millis(100);

/// How long past its TTL a running task's record outlives a replica that went away with it.
const RUNNING_SLACK: Duration = Duration::from_secs(5);

/// The Redis key of task `id`'s record.
fn key(id: &str) -> String {
    format!("toolsmith:task:{id}")
}

/// The Redis key of task `id`'s inbox.
fn inbox(id: &str) -> String {
    format!("toolsmith:task:{id}:inbox")
}

/// The Redis key of the set of the task ids listed in `scope` (2025-11-25's `tasks/list`).
fn listed(scope: &str) -> String {
    format!("toolsmith:tasks-in:{scope}")
}

/// A task as Redis holds it: what `tasks/get` shows, and whose it is.
#[derive(Serialize, Deserialize)]
struct Record {
    #[serde(default)]
    owner: Owner,
    task: DetailedTask,
}

/// What another replica asks of a running task, through its inbox.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Message {
    /// `tasks/cancel`.
    Cancel,
    /// `tasks/update`.
    Update(InputResponses),
}

/// Tasks kept in Redis for every replica, run by the replica that made them.
pub(crate) struct RedisStore {
    local: MemoryStore,
    shared: SharedState,
}

impl RedisStore {
    pub(crate) fn new(shared: SharedState, limits: super::TaskLimits) -> Self {
        Self {
            local: MemoryStore::new(limits),
            shared,
        }
    }

    /// The record of task `id`, when Redis has one that parses and `subject` may reach.
    async fn record(&self, id: &str, subject: Option<&str>) -> Result<Record, ErrorData> {
        let mut connection = self.shared.connection();
        let stored: Option<String> = redis::cmd("GET")
            .arg(key(id))
            .query_async(&mut connection)
            .await
            .map_err(|error| unreachable(&self.shared, &error))?;
        match stored.and_then(|stored| parse(id, &stored)) {
            Some(record) if record.owner.reached_by(subject) => Ok(record),
            _ => Err(unknown(id)),
        }
    }

    /// Leaves `message` in the inbox of task `id`, which another replica runs.
    async fn post(
        &self,
        id: &str,
        subject: Option<&str>,
        message: &Message,
    ) -> Result<(), ErrorData> {
        let record = self.record(id, subject).await?;
        if record.task.status().is_terminal() {
            return Ok(());
        }
        let keep = record.task.task.ttl_ms.unwrap_or(super::DEFAULT_TTL_MS);
        let message = serde_json::to_string(message).expect("a message is plain JSON");
        let mut connection = self.shared.connection();
        redis::pipe()
            .cmd("RPUSH")
            .arg(inbox(id))
            .arg(message)
            .ignore()
            .cmd("PEXPIRE")
            .arg(inbox(id))
            .arg(keep)
            .ignore()
            .query_async::<()>(&mut connection)
            .await
            .map_err(|error| unreachable(&self.shared, &error))
    }
}

#[async_trait::async_trait]
impl TaskStore for RedisStore {
    async fn create(
        &self,
        options: TaskOptions,
        owner: Owner,
        work: Work,
    ) -> Result<Task, ErrorData> {
        let ttl = Duration::from_millis(options.ttl_ms.unwrap_or(super::DEFAULT_TTL_MS));
        let scope = owner.scope.clone();
        let task = self.local.spawn(options, owner.clone(), work)?;
        let mut mirror = Mirror {
            local: self.local.clone(),
            shared: self.shared.clone(),
            id: task.task_id.clone(),
            owner,
            ttl,
            created: Instant::now(),
            written: None,
        };
        // Written before the client hears of the task: any replica can then read it.
        let mut written = mirror.sync().await.map(drop);
        if let (Ok(()), Some(scope)) = (&written, scope) {
            let mut connection = self.shared.connection();
            written = redis::pipe()
                .cmd("SADD")
                .arg(listed(&scope))
                .arg(&task.task_id)
                .ignore()
                .cmd("PEXPIRE")
                .arg(listed(&scope))
                .arg(millis(ttl * 2 + RUNNING_SLACK))
                .ignore()
                .query_async::<()>(&mut connection)
                .await;
        }
        if let Err(error) = written {
            let subject = mirror.owner.subject.as_deref();
            let _ = self.local.cancel(&mirror.id, subject).await;
            return Err(unreachable(&self.shared, &error));
        }
        tokio::spawn(mirror.run());
        Ok(task)
    }

    fn admit(&self, caller: &str) -> Result<(), ErrorData> {
        // Each replica caps the tasks it runs.
        self.local.admit(caller)
    }

    async fn get(&self, id: &str, subject: Option<&str>) -> Result<DetailedTask, ErrorData> {
        if self.local.holds(id) {
            return self.local.get(id, subject).await;
        }
        Ok(self.record(id, subject).await?.task)
    }

    async fn update(
        &self,
        id: &str,
        responses: InputResponses,
        subject: Option<&str>,
    ) -> Result<(), ErrorData> {
        if self.local.holds(id) {
            return self.local.update(id, responses, subject).await;
        }
        self.post(id, subject, &Message::Update(responses)).await
    }

    async fn cancel(&self, id: &str, subject: Option<&str>) -> Result<(), ErrorData> {
        if self.local.holds(id) {
            return self.local.cancel(id, subject).await;
        }
        self.post(id, subject, &Message::Cancel).await
    }

    async fn list(&self, scope: &str) -> Result<Vec<DetailedTask>, ErrorData> {
        let mut connection = self.shared.connection();
        let failed = |error: redis::RedisError| unreachable(&self.shared, &error);
        let ids: Vec<String> = redis::cmd("SMEMBERS")
            .arg(listed(scope))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let stored: Vec<Option<String>> = redis::cmd("MGET")
            .arg(ids.iter().map(|id| key(id)).collect::<Vec<_>>())
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        let mut tasks = Vec::new();
        let mut gone = Vec::new();
        for (id, stored) in ids.iter().zip(stored) {
            match stored.and_then(|stored| parse(id, &stored)) {
                Some(record) => tasks.push(record.task),
                None => gone.push(id),
            }
        }
        if !gone.is_empty() {
            let _: Result<(), _> = redis::cmd("SREM")
                .arg(listed(scope))
                .arg(gone)
                .query_async(&mut connection)
                .await;
        }
        tasks.sort_by(|a, b| a.task.created_at.cmp(&b.task.created_at));
        Ok(tasks)
    }
}

/// A stored record; `None` (with a warning) when it does not parse (another version's).
fn parse(id: &str, stored: &str) -> Option<Record> {
    serde_json::from_str(stored)
        .inspect_err(|error| {
            tracing::warn!(%error, task = id, "a task record in the shared state does not parse");
        })
        .ok()
}

/// Keeps one running task's record in Redis up to date and hands it its inbox, from its
/// creation until its end is written (or it is forgotten here).
struct Mirror {
    local: MemoryStore,
    shared: SharedState,
    id: String,
    owner: Owner,
    ttl: Duration,
    created: Instant,
    /// The record last written.
    written: Option<String>,
}

impl Mirror {
    async fn run(mut self) {
        let mut tick = tokio::time::interval(MIRROR_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is at once; the record was just written.
        tick.tick().await;
        loop {
            tick.tick().await;
            match self.take_inbox().await {
                Ok(messages) => {
                    for message in messages {
                        self.deliver(message).await;
                    }
                }
                Err(error) => {
                    tracing::debug!(%error, task = self.id, "could not read a task's inbox");
                }
            }
            match self.sync().await {
                Ok(true) => return,
                Ok(false) => {}
                Err(error) => {
                    tracing::debug!(%error, task = self.id, "could not write a task to the shared state");
                }
            }
        }
    }

    /// Writes the task's record when it changed since last written: while it runs, to
    /// expire a little after its TTL (when this replica ends it `failed`); once it ended,
    /// to expire one TTL later, as this replica forgets it. `Ok(true)` once its end is
    /// written, or it is forgotten here.
    async fn sync(&mut self) -> Result<bool, redis::RedisError> {
        let Some(task) = self.local.snapshot(&self.id) else {
            return Ok(true);
        };
        let ended = task.status().is_terminal();
        let record = Record {
            owner: self.owner.clone(),
            task,
        };
        let record = serde_json::to_string(&record).expect("a task is plain JSON");
        if self.written.as_ref() == Some(&record) {
            return Ok(ended);
        }
        let expiry = if ended {
            self.ttl
        } else {
            (self.created + self.ttl + RUNNING_SLACK).saturating_duration_since(Instant::now())
        };
        let mut connection = self.shared.connection();
        redis::cmd("SET")
            .arg(key(&self.id))
            .arg(&record)
            .arg("PX")
            .arg(millis(expiry))
            .query_async::<()>(&mut connection)
            .await?;
        self.written = Some(record);
        Ok(ended)
    }

    /// The messages other replicas left for the task, removed from its inbox.
    async fn take_inbox(&self) -> Result<Vec<Message>, redis::RedisError> {
        let mut connection = self.shared.connection();
        let (messages,): (Vec<String>,) = redis::pipe()
            .atomic()
            .cmd("LRANGE")
            .arg(inbox(&self.id))
            .arg(0)
            .arg(-1)
            .cmd("DEL")
            .arg(inbox(&self.id))
            .ignore()
            .query_async(&mut connection)
            .await?;
        Ok(messages
            .iter()
            .filter_map(|message| serde_json::from_str(message).ok())
            .collect())
    }

    async fn deliver(&self, message: Message) {
        let owner = self.owner.subject.as_deref();
        let delivered = match message {
            Message::Cancel => self.local.cancel(&self.id, owner).await,
            Message::Update(responses) => self.local.update(&self.id, responses, owner).await,
        };
        if let Err(error) = delivered {
            tracing::debug!(%error, task = self.id, "a message for a task that is gone");
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// `-32603` naming the shared state that did not answer.
fn unreachable(shared: &SharedState, error: &redis::RedisError) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "the shared state at `{}` is unreachable: {error}",
            shared.url()
        ),
        None,
    )
}
