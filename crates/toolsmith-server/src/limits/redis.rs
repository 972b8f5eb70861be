//! Limits counted in Redis (`--state`), so that every replica draws on one budget
//! (docs/limits.md, docs/deploy.md). Each count is one Lua script, which Redis runs
//! atomically: two replicas counting the same key at once both see it.

use std::time::Duration;

use super::{CounterError, Counters, SLOT_LEASE, Window};
use crate::replicas::SharedState;

/// The prefix of every limit's key.
const PREFIX: &str = "toolsmith:limit:";

/// `INCR`, then on a new key (or one left without a TTL) `PEXPIRE` for the window; returns
/// the count and the milliseconds left.
const COUNT: &str = r"
local count = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {count, left}
";

/// Takes a slot unless `ARGV[1]` are taken; the key lives `ARGV[2]` ms after its last
/// use, so a dead replica's slots come free.
const ACQUIRE: &str = r"
local taken = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if taken > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
return 1
";

/// Gives a slot back; the key goes when none is taken.
const RELEASE: &str = r"
local taken = redis.call('DECR', KEYS[1])
if taken <= 0 then redis.call('DEL', KEYS[1]) end
return taken
";

/// Counters in the shared state's Redis.
#[derive(Debug, Clone)]
pub struct RedisCounters {
    shared: SharedState,
}

impl RedisCounters {
    /// Counters kept in `shared`.
    pub fn new(shared: SharedState) -> Self {
        Self { shared }
    }

    async fn eval<T: redis::FromRedisValue>(
        &self,
        script: &str,
        key: &str,
        args: &[u64],
    ) -> Result<T, CounterError> {
        let mut connection = self.shared.connection();
        let mut command = redis::cmd("EVAL");
        command.arg(script).arg(1).arg(format!("{PREFIX}{key}"));
        for arg in args {
            command.arg(*arg);
        }
        command
            .query_async(&mut connection)
            .await
            .map_err(|error| CounterError(format!("{}: {error}", self.shared.url())))
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

#[async_trait::async_trait]
impl Counters for RedisCounters {
    async fn count(&self, key: &str, window: Duration) -> Result<Window, CounterError> {
        let (count, left): (u64, i64) = self.eval(COUNT, key, &[millis(window)]).await?;
        Ok(Window {
            count,
            resets_in: Duration::from_millis(u64::try_from(left).unwrap_or(0)),
        })
    }

    async fn acquire(&self, key: &str, limit: u32) -> Result<bool, CounterError> {
        let taken: i64 = self
            .eval(ACQUIRE, key, &[u64::from(limit), millis(SLOT_LEASE)])
            .await?;
        Ok(taken == 1)
    }

    async fn release(&self, key: &str) -> Result<(), CounterError> {
        self.eval::<i64>(RELEASE, key, &[]).await.map(drop)
    }
}
