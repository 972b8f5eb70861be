//! A Streamable HTTP session's handler among the replicas that share their state
//! (docs/deploy.md): what it shares of its session (log level,
//! subscriptions, roots) through [`SessionJoin`], and following a subscription made on any
//! replica.

use axum::http::request::Parts;
use rmcp::model::Extensions;
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::{ErrorData, Peer, RoleServer};
use toolsmith_model::LogLevel;

use super::{McpHandler, Transport, blocking};
use crate::content::Forwarded;
use crate::state::MAX_SUBSCRIPTIONS;

/// Where a Streamable HTTP session's handler registers once its client is initialized, so
/// that the session's plain calls skip rmcp's session worker (`http/session_calls.rs`);
/// and, with replicas, where its log level is shared.
#[async_trait::async_trait]
pub(crate) trait SessionJoin: Send + Sync {
    /// Registers `handler`'s session, whose `notifications/initialized` `context` is.
    fn join(&self, handler: &McpHandler, context: &NotificationContext<RoleServer>);

    /// Tells the other replicas (if any) that `session`'s log level is now `level`.
    async fn share_log_level(&self, session: &str, level: LogLevel);

    /// The log level a client set for `session` on another replica, when this one
    /// restores the session.
    async fn shared_log_level(&self, session: &str) -> Option<LogLevel>;

    /// Tells the other replicas (if any) that `session` now subscribes to `uri`, or no
    /// longer does.
    async fn share_subscription(&self, session: &str, uri: &str, subscribed: bool);

    /// The URIs `session` subscribed to on any replica, when this one restores it.
    async fn shared_subscriptions(&self, session: &str) -> Vec<String>;

    /// Keeps the URIs of the roots `session`'s client gave for the other replicas, or
    /// forgets them (`None`: they changed).
    async fn share_roots(&self, session: &str, roots: Option<&[String]>);

    /// The URIs of the roots `session`'s client gave another replica, if it asked since
    /// they last changed.
    async fn shared_roots(&self, session: &str) -> Option<Vec<String>>;
}

impl McpHandler {
    /// Subscribes the session to `uri` here, as `resources/subscribe` does (also when the
    /// client subscribed through another replica): reloads then send it `resources/updated`,
    /// and an upstream's resource is subscribed to at the upstream (docs/gateway.md,
    /// "Prompts and resources").
    pub(crate) async fn follow(
        &self,
        uri: String,
        peer: &Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        let served = self.state.content();
        served.check_uri(&uri)?;
        let added = self.subscriptions.add(uri.clone()).map_err(|_| {
            ErrorData::invalid_params(
                format!(
                    "this session already subscribes to {MAX_SUBSCRIPTIONS} resources, the most \
                     one session may; unsubscribe from some first"
                ),
                None,
            )
        })?;
        if added.first {
            self.state.track_subscriptions(peer, &self.subscriptions);
        }
        if added.new && served.forwards(Forwarded::Resource(&uri)) {
            let forwarded = {
                let uri = uri.clone();
                blocking(move || served.forward_subscription(&uri, true)).await
            };
            if forwarded.is_err() {
                self.subscriptions.remove(&uri);
            }
            forwarded?;
        }
        Ok(())
    }

    /// Ends the session's subscription to `uri` here, as `resources/unsubscribe` does (also
    /// when the client unsubscribed through another replica).
    pub(crate) async fn unfollow(&self, uri: &str) -> Result<(), ErrorData> {
        let content = self.state.content();
        if self.subscriptions.remove(uri)
            && content.forwards(Forwarded::Resource(uri))
            && !self.state.is_subscribed(uri)
        {
            let uri = uri.to_owned();
            blocking(move || content.forward_subscription(&uri, false)).await?;
        }
        Ok(())
    }

    /// Tells the other replicas of a `resources/subscribe` (`subscribed`) or
    /// `resources/unsubscribe` of `uri` in the session of `context`.
    pub(super) async fn share_subscription(
        &self,
        context: &RequestContext<RoleServer>,
        uri: &str,
        subscribed: bool,
    ) {
        if let Transport::HttpSession(sessions) = &self.transport
            && let Some(session) = session_of(context)
        {
            sessions.share_subscription(session, uri, subscribed).await;
        }
    }
}

/// The Streamable HTTP session (`Mcp-Session-Id`) of the request; none over stdio.
pub(super) fn session_of(context: &RequestContext<RoleServer>) -> Option<&str> {
    session_in(&context.extensions)
}

/// The Streamable HTTP session of the message whose `extensions` these are: none over stdio,
/// nor for a message relayed from another replica (it has no HTTP request).
pub(super) fn session_in(extensions: &Extensions) -> Option<&str> {
    extensions
        .get::<Parts>()
        .and_then(|parts| parts.headers.get(HEADER_SESSION_ID))
        .and_then(|id| id.to_str().ok())
}
