//! State that replicas of one server share through Redis (`serve --state redis://…`), so
//! any replica behind a plain load balancer serves any request (docs/deploy.md).
//!
//! What lives there:
//! - each HTTP session's `initialize` parameters (protocol version, client capabilities
//!   and info), under `toolsmith:session:ID` with a sliding TTL of the session timeout:
//!   a replica that gets a request for a session it does not hold restores it from there
//!   (rmcp's `SessionStore`, [`sessions`]);
//! - the key that signs 2026-07-28 `requestState`, so an input-required retry may land on
//!   any replica (`toolsmith:request-state-key`, set once by the first replica, unless
//!   `--state-key` gives one);
//! - MCP tasks, as `tasks/get` shows them, and the inboxes that carry `tasks/cancel` and
//!   `tasks/update` to the replica running a task (`toolsmith:task:*`, `tasks/redis.rs`);
//! - rate-limit counters (`toolsmith:limit:*`, `limits/redis.rs`);
//! - each session's `logging/setLevel` (`toolsmith:session:ID:log-level`),
//!   `resources/subscribe` URIs (`toolsmith:session:ID:subscriptions`) and the roots its
//!   client gave (`toolsmith:session:ID:roots`), and, on the channel
//!   `toolsmith:session-messages`, what a client posted to one replica for a request
//!   another holds (answers to server→client requests, cancellations, roots changes),
//!   changes of the log level and subscriptions, and notifications for a GET stream
//!   another replica holds ([`relay`]);
//! - nothing else: each replica's name (`--replica-name`, by default `HOST:PORT`) is sent
//!   back in the `Toolsmith-Replica` header of every response, so a client (and a test)
//!   can tell which one served it.
//!
//! The connection is rmcp-independent: one multiplexed [`redis::aio::ConnectionManager`],
//! which reconnects with exponential backoff after Redis goes away. While Redis is down a
//! new session is refused with 503 (see [`SharedState::check`]); calls already running do
//! not touch Redis and finish.
//!
//! Without `--state` none of this exists, and the HTTP endpoint's path is as before.

mod relay;
mod sessions;

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use sha2::{Digest, Sha256};

pub(crate) use relay::{Message, Relayed};
pub(crate) use sessions::RedisSessions;

/// How long one Redis command may take before it counts as a failure.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long connecting to Redis may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The shortest wait before connecting to Redis again.
const MIN_DELAY: Duration = Duration::from_millis(50);

/// The longest wait before connecting to Redis again.
const MAX_DELAY: Duration = Duration::from_secs(5);

/// The Redis key of the shared `requestState` signing key.
const REQUEST_STATE_KEY: &str = "toolsmith:request-state-key";

/// Why the shared state could not be opened or reached.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The `--state` URL is not one Toolsmith can use.
    #[error(
        "`{url}` is not a Redis URL: {reason} (write `redis://HOST:PORT/DB`, e.g. `redis://127.0.0.1:6379/0`)"
    )]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Redis did not answer.
    #[error("the shared state at `{url}` is unreachable: {source}")]
    Unreachable {
        /// The URL, without a password.
        url: String,
        /// The client's error.
        #[source]
        source: redis::RedisError,
    },
}

/// A connection to the state replicas share (Redis), with this replica's name. Cheap to
/// clone.
#[derive(Clone)]
pub struct SharedState(Arc<Inner>);

struct Inner {
    /// The URL, password hidden: for messages.
    url: String,
    client: redis::Client,
    /// Made on first use: it must be made inside the tokio runtime.
    connection: OnceLock<ConnectionManager>,
    /// When each session's TTL was last extended by this replica.
    touched: Mutex<HashMap<Box<str>, Instant>>,
    /// This process among the replicas, random: it ignores what it published itself.
    instance: String,
}

impl fmt::Debug for SharedState {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("SharedState")
            .field("url", &self.0.url)
            .finish_non_exhaustive()
    }
}

impl SharedState {
    /// Opens the shared state at `url` (`redis://HOST:PORT/DB`, `rediss://` for TLS,
    /// `redis+unix:///path`). Connects lazily, on first use, from inside a tokio runtime.
    pub fn open(url: &str) -> Result<Self, StateError> {
        let bad = |reason: String| StateError::BadUrl {
            url: url.to_owned(),
            reason,
        };
        if !url.starts_with("redis") && !url.starts_with("valkey") {
            return Err(bad(
                "the scheme must be `redis`, `rediss` or `redis+unix`".into()
            ));
        }
        let client = redis::Client::open(url).map_err(|error| bad(error.to_string()))?;
        Ok(Self(Arc::new(Inner {
            url: without_password(url),
            client,
            connection: OnceLock::new(),
            touched: Mutex::new(HashMap::new()),
            instance: hex(&crate::mrtr::random_key()[..8]),
        })))
    }

    /// The URL, without its password.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.0.url
    }

    /// Whether Redis answers now: a new session is only opened when it does, since a
    /// session Redis does not hold would be "not found" on every other replica.
    pub async fn check(&self) -> Result<(), StateError> {
        let mut connection = self.connection();
        redis::cmd("PING")
            .query_async::<()>(&mut connection)
            .await
            .map_err(|source| self.unreachable(source))
    }

    /// The key that signs `requestState`: `secret` hashed when given (`--state-key`),
    /// else the one the first replica stored in Redis (this one, when it is the first).
    pub async fn request_state_key(&self, secret: Option<&str>) -> Result<[u8; 32], StateError> {
        if let Some(secret) = secret {
            return Ok(key_from_secret(secret));
        }
        let mut connection = self.connection();
        let hex = hex(&crate::mrtr::random_key());
        // SET NX then GET: whichever replica came first, all read the same key.
        redis::cmd("SET")
            .arg(REQUEST_STATE_KEY)
            .arg(&hex)
            .arg("NX")
            .query_async::<()>(&mut connection)
            .await
            .map_err(|source| self.unreachable(source))?;
        let stored: String = redis::cmd("GET")
            .arg(REQUEST_STATE_KEY)
            .query_async(&mut connection)
            .await
            .map_err(|source| self.unreachable(source))?;
        Ok(key_from_secret(&stored))
    }

    /// Extends the TTL of `session`'s record to `ttl`, at most once per fifth of it per
    /// replica, without waiting for Redis (the sliding TTL of a session in use).
    pub(crate) fn touch(&self, session: &str, ttl: Duration) {
        let now = Instant::now();
        {
            let mut touched = self
                .0
                .touched
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if touched
                .get(session)
                .is_some_and(|last| now.duration_since(*last) < ttl / 5)
            {
                return;
            }
            if touched.len() > 100_000 {
                touched.retain(|_, last| now.duration_since(*last) < ttl);
            }
            touched.insert(session.into(), now);
        }
        let mut connection = self.connection();
        let seconds = ttl.as_secs().max(1);
        let mut expire = redis::pipe();
        expire
            .cmd("EXPIRE")
            .arg(sessions::key(session))
            .arg(seconds)
            .ignore();
        for key in relay::session_keys(session) {
            expire.cmd("EXPIRE").arg(key).arg(seconds).ignore();
        }
        tokio::spawn(async move {
            if let Err(error) = expire.query_async::<()>(&mut connection).await {
                tracing::debug!(%error, "could not extend a session's TTL in the shared state");
            }
        });
    }

    /// The session store rmcp restores sessions from, with records kept for `ttl`.
    pub(crate) fn sessions(&self, ttl: Duration) -> RedisSessions {
        RedisSessions::new(self.clone(), ttl)
    }

    /// The connection (made lazily, connecting on first use; call inside the runtime).
    pub(crate) fn connection(&self) -> ConnectionManager {
        self.0
            .connection
            .get_or_init(|| {
                let config = ConnectionManagerConfig::new()
                    .set_response_timeout(Some(RESPONSE_TIMEOUT))
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_min_delay(MIN_DELAY)
                    .set_max_delay(MAX_DELAY);
                ConnectionManager::new_lazy_with_config(self.0.client.clone(), config)
                    .expect("a lazy manager fails only for resubscription without a push sender, which this config does not ask for")
            })
            .clone()
    }

    fn unreachable(&self, source: redis::RedisError) -> StateError {
        StateError::Unreachable {
            url: self.0.url.clone(),
            source,
        }
    }
}

/// `bytes` in lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    })
}

/// The `requestState` signing key made from a secret every replica is given.
pub(crate) fn key_from_secret(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// This machine's host name, for a replica's default name (`HOST:PORT`).
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// `url` with the password (between `:` and `@` after the scheme) replaced by `***`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => format!("{scheme}://***@{host}"),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_that_is_not_redis_says_what_to_write() {
        let error = SharedState::open("http://127.0.0.1:6379").unwrap_err();
        assert!(
            error.to_string().contains("redis://HOST:PORT/DB"),
            "{error}"
        );
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(
            without_password("redis://user:secret@host:6379/0"),
            "redis://user:***@host:6379/0"
        );
        assert_eq!(
            without_password("redis://host:6379/0"),
            "redis://host:6379/0"
        );
    }
}
