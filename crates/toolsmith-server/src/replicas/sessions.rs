//! rmcp's `SessionStore` over Redis: a session's `initialize` parameters, so a replica
//! that did not open the session can restore it (rmcp replays the handshake into a fresh
//! handler there) and serve it.
//!
//! Each record is JSON under `toolsmith:session:ID`, with a TTL of the session timeout,
//! extended while the session is in use ([`super::SharedState::touch`]). A record that
//! does not parse (written by another version) is treated as absent: the client gets 404
//! and opens a new session, which the spec tells it to do.

use std::time::Duration;

use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};

use super::SharedState;

/// The Redis key of session `id`'s record.
pub(super) fn key(id: &str) -> String {
    format!("toolsmith:session:{id}")
}

/// Session records in Redis, kept for `ttl` after last use.
pub(crate) struct RedisSessions {
    shared: SharedState,
    ttl: Duration,
}

impl RedisSessions {
    pub(super) fn new(shared: SharedState, ttl: Duration) -> Self {
        Self { shared, ttl }
    }
}

#[async_trait::async_trait]
impl SessionStore for RedisSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let mut connection = self.shared.connection();
        // GETEX: read and slide the TTL in one round trip.
        let record: Option<String> = redis::cmd("GETEX")
            .arg(key(session_id))
            .arg("EX")
            .arg(self.ttl.as_secs().max(1))
            .query_async(&mut connection)
            .await?;
        Ok(record.and_then(|record| match serde_json::from_str(&record) {
            Ok(state) => Some(state),
            Err(error) => {
                tracing::warn!(%error, session = session_id, "a session record in the shared state does not parse");
                None
            }
        }))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let record = serde_json::to_string(state)?;
        let mut connection = self.shared.connection();
        redis::cmd("SET")
            .arg(key(session_id))
            .arg(record)
            .arg("EX")
            .arg(self.ttl.as_secs().max(1))
            .query_async::<()>(&mut connection)
            .await?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let mut connection = self.shared.connection();
        redis::cmd("DEL")
            .arg(key(session_id))
            .arg(&super::relay::session_keys(session_id))
            .query_async::<()>(&mut connection)
            .await?;
        Ok(())
    }
}
