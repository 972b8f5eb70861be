//! Messages for a session that one replica got and another must act on, carried by Redis
//! pub/sub on one channel every replica subscribes to ([`CHANNEL`]).
//!
//! Four kinds travel:
//! - what a client POSTs that is for a request another replica may hold: an answer to a
//!   server→client request (elicitation, sampling, `roots/list`), which rides the POST
//!   stream of the replica running the call while the answer may land anywhere;
//!   `notifications/cancelled` for a call running elsewhere; and
//!   `notifications/roots/list_changed` (every replica asks again). The replica that got it
//!   handles it as before and publishes it; every other replica that holds the session
//!   hands it to its session too, where rmcp matches it to the request waiting for it and
//!   drops it when none is (an answer or a cancellation for an unknown id is ignored, as
//!   the spec allows). rmcp numbers the server→client requests of a session per handler,
//!   from 0, and a replica that restored a session has a handler of its own: two replicas
//!   asking one session at the same moment may use the same id, and then an answer
//!   reaches both.
//! - a session's `logging/setLevel`: kept under `toolsmith:session:ID:log-level` (same TTL
//!   as the session's record), read by a replica that restores the session, and published
//!   so replicas holding it already apply it at once.
//! - a session's `resources/subscribe` and `resources/unsubscribe`: kept in the set
//!   `toolsmith:session:ID:subscriptions` (same TTL), read by a replica that restores the
//!   session, and published so every replica holding it follows it. Each replica then
//!   notices a subscribed resource's change itself (its own reload, its own upstream), and
//!   the one holding the session's GET stream sends `resources/updated` there.
//! - a notification a call made for the session's GET stream (a log message) on a replica
//!   that holds no GET stream of that session: the replicas that do send it there.
//!
//! And one is kept without travelling: the roots a session's client gave, under
//! `toolsmith:session:ID:roots` (same TTL), so a replica that serves the session next does
//! not ask again; `notifications/roots/list_changed` travels as a cancellation does, and
//! the replica that got it forgets them there.
//!
//! Pub/sub and not a polled list as for tasks (`tasks/redis.rs`): these messages are for a
//! request waiting now, and any replica may be the one; a message published while a
//! replica's subscription is reconnecting is lost (the waiting request then times out as
//! it would without an answer). The subscriber reconnects with exponential backoff, from
//! 50 ms to 5 s, and pings Redis so that a connection gone silent is noticed.

use std::time::Duration;

use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use toolsmith_model::LogLevel;

use super::{CONNECT_TIMEOUT, RESPONSE_TIMEOUT, SharedState};

/// The channel every replica subscribes to.
pub(crate) const CHANNEL: &str = "toolsmith:session-messages";

/// How often a subscriber pings Redis to learn that its connection still works.
const PING_EVERY: Duration = Duration::from_secs(10);

/// How many messages wait for the HTTP endpoint before the subscriber waits for it.
const BACKLOG: usize = 1024;

/// The Redis key of session `id`'s log level.
fn log_level_key(id: &str) -> String {
    format!("toolsmith:session:{id}:log-level")
}

/// The Redis key of the set of URIs session `id` subscribes to.
fn subscriptions_key(id: &str) -> String {
    format!("toolsmith:session:{id}:subscriptions")
}

/// The Redis key of the roots session `id`'s client gave (`roots/list`), as JSON.
fn roots_key(id: &str) -> String {
    format!("toolsmith:session:{id}:roots")
}

/// The keys besides its record that session `id` may have, which live and die with it.
pub(super) fn session_keys(id: &str) -> [String; 3] {
    [log_level_key(id), subscriptions_key(id), roots_key(id)]
}

/// What one replica tells the others about a session.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Relayed {
    /// The replica that published it (its [`SharedState::instance`]), which ignores it.
    pub from: String,
    /// The session (`Mcp-Session-Id`).
    pub session: String,
    pub message: Message,
}

/// What is relayed.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Message {
    /// A message the client posted (a JSON-RPC response or error, or
    /// `notifications/cancelled`), as it was posted.
    FromClient(serde_json::Value),
    /// The session's new `logging/setLevel`: the level's MCP name.
    LogLevel(String),
    /// The session subscribed to `uri` (`resources/subscribe`), or no longer does.
    #[serde(rename_all = "camelCase")]
    Subscription { uri: String, subscribed: bool },
    /// A notification for the session's GET stream (`method` and `params`), from a
    /// replica that holds none of its GET streams.
    ToClient(serde_json::Value),
}

impl SharedState {
    /// Publishes `message` about `session` to the other replicas.
    pub(crate) async fn relay(
        &self,
        session: &str,
        message: Message,
    ) -> Result<(), redis::RedisError> {
        let relayed = Relayed {
            from: self.0.instance.clone(),
            session: session.to_owned(),
            message,
        };
        let payload = serde_json::to_string(&relayed).expect("a relayed message is plain JSON");
        let mut connection = self.connection();
        redis::cmd("PUBLISH")
            .arg(CHANNEL)
            .arg(payload)
            .query_async::<()>(&mut connection)
            .await
    }

    /// Keeps `level` as `session`'s log level for `ttl` and tells the other replicas.
    pub(crate) async fn set_log_level(
        &self,
        session: &str,
        level: LogLevel,
        ttl: Duration,
    ) -> Result<(), redis::RedisError> {
        let mut connection = self.connection();
        redis::cmd("SET")
            .arg(log_level_key(session))
            .arg(level.as_str())
            .arg("EX")
            .arg(ttl.as_secs().max(1))
            .query_async::<()>(&mut connection)
            .await?;
        self.relay(session, Message::LogLevel(level.as_str().to_owned()))
            .await
    }

    /// `session`'s log level, when a client set one (on any replica).
    pub(crate) async fn log_level(
        &self,
        session: &str,
    ) -> Result<Option<LogLevel>, redis::RedisError> {
        let mut connection = self.connection();
        let stored: Option<String> = redis::cmd("GET")
            .arg(log_level_key(session))
            .query_async(&mut connection)
            .await?;
        Ok(stored.as_deref().and_then(LogLevel::parse))
    }

    /// Keeps whether `session` subscribes to `uri` for `ttl` and tells the other replicas.
    pub(crate) async fn set_subscription(
        &self,
        session: &str,
        uri: &str,
        subscribed: bool,
        ttl: Duration,
    ) -> Result<(), redis::RedisError> {
        let key = subscriptions_key(session);
        let mut connection = self.connection();
        let mut change = redis::pipe();
        change
            .cmd(if subscribed { "SADD" } else { "SREM" })
            .arg(&key)
            .arg(uri)
            .ignore()
            .cmd("EXPIRE")
            .arg(&key)
            .arg(ttl.as_secs().max(1))
            .ignore();
        change.query_async::<()>(&mut connection).await?;
        let message = Message::Subscription {
            uri: uri.to_owned(),
            subscribed,
        };
        self.relay(session, message).await
    }

    /// The URIs `session` subscribes to (on any replica).
    pub(crate) async fn subscriptions(
        &self,
        session: &str,
    ) -> Result<Vec<String>, redis::RedisError> {
        let mut connection = self.connection();
        redis::cmd("SMEMBERS")
            .arg(subscriptions_key(session))
            .query_async(&mut connection)
            .await
    }

    /// Keeps the URIs of the roots `session`'s client gave for `ttl`, or forgets them
    /// (`None`: the client said they changed), for the replicas that serve the session next.
    pub(crate) async fn set_roots(
        &self,
        session: &str,
        roots: Option<&[String]>,
        ttl: Duration,
    ) -> Result<(), redis::RedisError> {
        let mut connection = self.connection();
        let key = roots_key(session);
        match roots {
            Some(roots) => {
                let roots = serde_json::to_string(roots).expect("URIs are plain JSON");
                redis::cmd("SET")
                    .arg(key)
                    .arg(roots)
                    .arg("EX")
                    .arg(ttl.as_secs().max(1))
                    .query_async(&mut connection)
                    .await
            }
            None => {
                redis::cmd("DEL")
                    .arg(key)
                    .query_async(&mut connection)
                    .await
            }
        }
    }

    /// The URIs of the roots `session`'s client gave, when a replica asked for them since
    /// they last changed.
    pub(crate) async fn roots(
        &self,
        session: &str,
    ) -> Result<Option<Vec<String>>, redis::RedisError> {
        let mut connection = self.connection();
        let stored: Option<String> = redis::cmd("GET")
            .arg(roots_key(session))
            .query_async(&mut connection)
            .await?;
        Ok(stored.and_then(|roots| serde_json::from_str(&roots).ok()))
    }

    /// The messages other replicas publish, as they come, until the receiver is dropped.
    /// Spawns the subscriber (call inside the runtime).
    pub(crate) fn listen(&self) -> mpsc::Receiver<Relayed> {
        let (sender, receiver) = mpsc::channel(BACKLOG);
        tokio::spawn(self.clone().subscribe(sender));
        receiver
    }

    /// Subscribes to [`CHANNEL`] and forwards what others publish to `sender`, again and
    /// again, with backoff between attempts, until `sender` is closed.
    async fn subscribe(self, sender: mpsc::Sender<Relayed>) {
        let mut delay = super::MIN_DELAY;
        loop {
            match self.subscription().await {
                Ok(subscription) => {
                    delay = super::MIN_DELAY;
                    if self.forward(subscription, &sender).await.is_err() {
                        return;
                    }
                    tracing::warn!(
                        url = self.url(),
                        "lost the subscription to the shared state; subscribing again"
                    );
                }
                Err(error) => {
                    tracing::warn!(url = self.url(), %error, "could not subscribe to the shared state; trying again in {delay:?}");
                }
            }
            tokio::select! {
                () = sender.closed() => return,
                () = tokio::time::sleep(delay) => {}
            }
            delay = (delay * 2).min(super::MAX_DELAY);
        }
    }

    async fn subscription(&self) -> Result<redis::aio::PubSub, redis::RedisError> {
        let mut pubsub = tokio::time::timeout(CONNECT_TIMEOUT, self.0.client.get_async_pubsub())
            .await
            .map_err(|_| timed_out("connecting"))??;
        tokio::time::timeout(RESPONSE_TIMEOUT, pubsub.subscribe(CHANNEL))
            .await
            .map_err(|_| timed_out("subscribing"))??;
        Ok(pubsub)
    }

    /// Forwards the messages of `subscription` until it breaks (`Ok`) or `sender` is closed
    /// (`Err`).
    async fn forward(
        &self,
        subscription: redis::aio::PubSub,
        sender: &mpsc::Sender<Relayed>,
    ) -> Result<(), ()> {
        let (mut sink, mut messages) = subscription.split();
        let mut every = tokio::time::interval(PING_EVERY);
        every.tick().await;
        loop {
            tokio::select! {
                () = sender.closed() => return Err(()),
                _ = every.tick() => {
                    let pong = tokio::time::timeout(RESPONSE_TIMEOUT, sink.ping::<redis::Value>()).await;
                    if !matches!(pong, Ok(Ok(_))) {
                        return Ok(());
                    }
                }
                message = messages.next() => {
                    let Some(message) = message else {
                        return Ok(());
                    };
                    let relayed = match serde_json::from_slice::<Relayed>(message.get_payload_bytes()) {
                        Ok(relayed) => relayed,
                        Err(error) => {
                            tracing::debug!(%error, "a relayed message that does not parse (another version's?)");
                            continue;
                        }
                    };
                    if relayed.from != self.0.instance && sender.send(relayed).await.is_err() {
                        return Err(());
                    }
                }
            }
        }
    }
}

fn timed_out(what: &'static str) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} timed out"),
    ))
}
