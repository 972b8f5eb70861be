//! What replicas sharing their state tell each other about the sessions they serve
//! (docs/deploy.md): the client's messages another replica may be
//! waiting for go out, and what other replicas relay comes in (`SessionCalls::relayed`).

use std::sync::Arc;

use axum::body::Bytes;

use super::Endpoint;
use super::peek::for_any_replica;
use crate::replicas::SharedState;

/// With a shared state, hands what other replicas relay to `endpoint`'s sessions
/// (`SessionCalls::relayed`), until the server shuts down or the endpoint is dropped.
/// Outside a tokio runtime (a router built for a test without one) nothing is relayed.
pub(super) fn relay_to(endpoint: &Arc<Endpoint>) {
    let Some(shared) = &endpoint.shared else {
        return;
    };
    if tokio::runtime::Handle::try_current().is_err() {
        tracing::warn!("no runtime: messages from other replicas are not received");
        return;
    }
    let mut inbox = shared.listen();
    let shutdown = endpoint.state.shutdown_token().clone();
    let endpoint = Arc::downgrade(endpoint);
    tokio::spawn(async move {
        loop {
            let relayed = tokio::select! {
                () = shutdown.cancelled() => return,
                relayed = inbox.recv() => relayed,
            };
            let (Some(relayed), Some(endpoint)) = (relayed, endpoint.upgrade()) else {
                return;
            };
            endpoint.calls.relayed(relayed).await;
        }
    });
}

impl Endpoint {
    /// Publishes a client's message that another replica may be waiting for (an answer to
    /// its request, a cancellation of its call: [`peek::for_any_replica`]) to the other
    /// replicas, before this one handles it too (docs/deploy.md).
    pub(super) async fn relay(&self, shared: &SharedState, session: &str, bytes: &Bytes) {
        if !for_any_replica(bytes) {
            return;
        }
        let Ok(message) = serde_json::from_slice(bytes) else {
            return;
        };
        if let Err(error) = shared
            .relay(session, crate::replicas::Message::FromClient(message))
            .await
        {
            tracing::warn!(%error, session, "could not relay a message to the other replicas");
        }
    }
}
