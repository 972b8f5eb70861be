//! The client side of a call over MCP: a [`ClientBridge`] for the tool's blocking thread
//! whose every method becomes a message to the async task that handles the request, which
//! talks to the client through rmcp's `Peer`.
//!
//! Routing everything through the request's own task keeps rmcp's request association
//! (over Streamable HTTP, progress and server→client requests ride the POST's stream) and
//! keeps notifications in order, ahead of the result. Notifications are fire-and-forget for
//! the tool; requests block the tool's thread until the client answers, the call's deadline
//! passes, the call is cancelled, or whoever asked withdraws the question (an upstream that
//! cancels its request: the client is then sent `notifications/cancelled` for it).

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks sampling, roots and logging deprecated (SEP-2577); they still work"
)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rmcp::model::{
    CancelledNotificationParam, ClientResult, CreateMessageRequest, CreateMessageRequestParams,
    ElicitRequest, ElicitRequestParams, ElicitationSchema, GetMeta, JsonRpcRequest,
    ListRootsRequest, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
    ServerNotification, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{Notify, oneshot};
use toolsmith_model::{ClientBridge, LogLevel, Question, Withdrawal};

use crate::convert::logging_level;
use crate::mrtr::{Kind, Replay};

/// Where a session's notifications for its GET stream go when another replica may hold
/// that stream (docs/deploy.md): the HTTP endpoint puts one in the
/// extensions of each request of a session when replicas share their state.
pub(crate) trait StreamElsewhere: Send + Sync {
    /// Takes `notification` to relay it to the replicas holding the session's GET stream,
    /// when this one holds none; `false` when it is this replica's to send.
    fn take(&self, notification: &ServerNotification) -> bool;
}

/// The request's [`StreamElsewhere`], if any (inside the HTTP request's parts).
fn stream_elsewhere(context: &RequestContext<RoleServer>) -> Option<&Arc<dyn StreamElsewhere>> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Arc<dyn StreamElsewhere>>())
}

/// What a tool asked of the client; handled by [`serve`] on the request's task.
pub(crate) enum ClientRequest {
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        level: LogLevel,
        logger: String,
        message: String,
    },
    /// A question for the client (sampling, elicitation, roots), taken back when
    /// `withdrawal` is withdrawn.
    Ask {
        question: Question,
        withdrawal: Withdrawal,
        reply: oneshot::Sender<Result<Value, String>>,
    },
}

/// The bridge a tool's [`CallContext`](toolsmith_model::CallContext) holds, shared with
/// the request's task, which takes what the tool asks from its queue.
///
/// One allocation per call, nothing per call that asks for nothing (this is on every
/// call's path).
pub(crate) struct McpBridge {
    queue: Mutex<Queue>,
    ready: Notify,
    /// Progress goes nowhere unless the request carried a `progressToken`.
    wants_progress: bool,
    /// The lowest level the client wants (`logging/setLevel`, or the request's `logLevel`).
    min_level: LogLevel,
    /// On a 2026-07-28 request, requests are answered by replay ([`crate::mrtr`]).
    replay: Option<Arc<Replay>>,
    /// The key, `defer` and `before_task` of the tool's next request
    /// ([`ClientBridge::next_request`], [`ClientBridge::before_task`]).
    next: Mutex<(Option<String>, bool, bool)>,
    /// Where the calls the tool makes of other tools are logged, with an audit log.
    audit: Option<crate::audit::Scope>,
}

#[derive(Default)]
struct Queue {
    items: VecDeque<ClientRequest>,
    /// The request's task has stopped listening (the call ended or was abandoned).
    closed: bool,
}

impl McpBridge {
    pub(crate) fn new(
        wants_progress: bool,
        min_level: LogLevel,
        replay: Option<Arc<Replay>>,
    ) -> Self {
        Self {
            queue: Mutex::new(Queue::default()),
            ready: Notify::new(),
            wants_progress,
            min_level,
            replay,
            next: Mutex::new((None, false, false)),
            audit: None,
        }
    }

    /// The bridge, writing the calls the tool makes of other tools to `audit`.
    pub(crate) fn audited(mut self, audit: Option<crate::audit::Scope>) -> Self {
        self.audit = audit;
        self
    }

    /// The key, `defer` and `before_task` the tool gave for this request, if any.
    fn take_next(&self) -> (Option<String>, bool, bool) {
        std::mem::take(&mut *self.next.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// A request answered by replay, or asked of the client live; a deferred one answers
    /// `None` instead of failing.
    fn request(
        &self,
        kind: Kind,
        params: impl FnOnce() -> Value,
        live: impl FnOnce() -> Result<Value, String>,
    ) -> Result<Option<Value>, String> {
        let (key, defer, before_task) = self.take_next();
        if let Some(replay) = &self.replay {
            return replay.ask(kind, key, defer, before_task, params());
        }
        match live() {
            Ok(answer) => Ok(Some(answer)),
            Err(_) if defer => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Resolves when the tool has queued something (or already had).
    pub(crate) async fn ready(&self) {
        self.ready.notified().await;
    }

    /// The next thing the tool asked for.
    pub(crate) fn next(&self) -> Option<ClientRequest> {
        self.lock().items.pop_front()
    }

    /// Stops taking requests: what is queued is dropped, so a tool waiting for an answer
    /// gets an error instead of waiting forever.
    pub(crate) fn close(&self) {
        let dropped = {
            let mut queue = self.lock();
            queue.closed = true;
            std::mem::take(&mut queue.items)
        };
        drop(dropped);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a request for the request's task; false once the call has ended.
    fn send(&self, request: ClientRequest) -> bool {
        {
            let mut queue = self.lock();
            if queue.closed {
                return false;
            }
            queue.items.push_back(request);
        }
        self.ready.notify_one();
        true
    }

    fn ask_live<T>(
        &self,
        build: impl FnOnce(oneshot::Sender<Result<T, String>>) -> ClientRequest,
    ) -> Result<T, String> {
        let (reply, answer) = oneshot::channel();
        if !self.send(build(reply)) {
            return Err(CALL_ENDED.to_owned());
        }
        answer
            .blocking_recv()
            .unwrap_or_else(|_| Err(CALL_ENDED.to_owned()))
    }
}

const CALL_ENDED: &str = "the call has ended (timed out or cancelled)";

impl ClientBridge for McpBridge {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if self.wants_progress() {
            let message = message.map(str::to_owned);
            self.send(ClientRequest::Progress {
                progress,
                total,
                message,
            });
        }
    }

    fn log(&self, level: LogLevel, logger: &str, message: &str) {
        if self.wants_log(level) {
            let (logger, message) = (logger.to_owned(), message.to_owned());
            self.send(ClientRequest::Log {
                level,
                logger,
                message,
            });
        }
    }

    fn wants_progress(&self) -> bool {
        self.wants_progress
    }

    fn audits_inner_calls(&self) -> bool {
        self.audit.is_some()
    }

    fn inner_call(&self, call: &toolsmith_model::InnerCall<'_>) {
        if let Some(audit) = &self.audit {
            audit.inner_call(call);
        }
    }

    fn wants_log(&self, level: LogLevel) -> bool {
        let wanted = self
            .replay
            .as_ref()
            .is_none_or(|replay| replay.wants_logs());
        wanted && level >= self.min_level
    }

    fn sample(&self, request: Value) -> Result<Value, String> {
        self.ask(Question::Sample(request), &Withdrawal::new())
    }

    fn elicit(&self, message: &str, schema: Value) -> Result<Value, String> {
        let message = message.to_owned();
        self.ask(Question::Elicit { message, schema }, &Withdrawal::new())
    }

    fn roots(&self) -> Result<Vec<Value>, String> {
        let answer = self.ask(Question::Roots, &Withdrawal::new())?;
        Ok(match answer {
            Value::Object(mut answer) => match answer.remove("roots") {
                Some(Value::Array(roots)) => roots,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        })
    }

    /// Answered by replay on a 2026-07-28 request (nothing is asked then, so nothing is
    /// withdrawn), else asked of the client live. A deferred question answers `null`.
    fn ask(&self, question: Question, withdrawal: &Withdrawal) -> Result<Value, String> {
        // A deferred question's answer: no roots are an answer too.
        let unanswered = match question {
            Question::Roots => serde_json::json!({"roots": []}),
            Question::Sample(_) | Question::Elicit { .. } => Value::Null,
        };
        let (kind, params) = match &question {
            Question::Sample(request) => (Kind::Sample, request.clone()),
            Question::Elicit { message, schema } => (
                Kind::Elicit,
                serde_json::json!({"mode": "form", "message": message, "requestedSchema": schema}),
            ),
            Question::Roots => (Kind::Roots, serde_json::json!({})),
        };
        let live = || {
            let withdrawal = withdrawal.clone();
            self.ask_live(|reply| ClientRequest::Ask {
                question,
                withdrawal,
                reply,
            })
        };
        Ok(self.request(kind, || params, live)?.unwrap_or(unanswered))
    }

    fn next_request(&self, key: Option<&str>, defer: bool) {
        *self.next.lock().unwrap_or_else(PoisonError::into_inner) =
            (key.map(str::to_owned), defer, false);
    }

    fn before_task(&self) {
        self.next.lock().unwrap_or_else(PoisonError::into_inner).2 = true;
    }
}

/// Takes out the `_meta.progressToken` rmcp's `Peer` puts on every request the server
/// sends the client (`roots/list`, `sampling/createMessage`, `elicitation/create`).
///
/// rmcp adds it for its own timeout resets, which the server never asks for; sent, it
/// invites the client to report progress on a request that wants none.
pub(crate) fn drop_progress_token(request: &mut JsonRpcRequest<ServerRequest>) {
    request.request.get_meta_mut().remove("progressToken");
}

/// Carries out one request of a tool against the client, bounded by the call's deadline.
pub(crate) async fn serve(
    request: ClientRequest,
    context: &RequestContext<RoleServer>,
    progress_token: Option<&ProgressToken>,
    deadline: Instant,
) {
    let peer = &context.peer;
    match request {
        ClientRequest::Progress {
            progress,
            total,
            message,
        } => {
            let Some(token) = progress_token else { return };
            let mut params = ProgressNotificationParam::new(token.clone(), progress);
            params.total = total;
            params.message = message;
            if let Err(error) = peer.notify_progress(params).await {
                tracing::debug!(%error, "could not send a progress notification");
            }
        }
        ClientRequest::Log {
            level,
            logger,
            message,
        } => {
            let mut params =
                LoggingMessageNotificationParam::new(logging_level(level), Value::String(message));
            params.logger = Some(logger);
            let notification = ServerNotification::LoggingMessageNotification(
                rmcp::model::Notification::new(params),
            );
            if let Some(elsewhere) = stream_elsewhere(context)
                && elsewhere.take(&notification)
            {
                return;
            }
            if let Err(error) = peer.send_notification(notification).await {
                tracing::debug!(%error, "could not send a log notification");
            }
        }
        ClientRequest::Ask {
            question,
            withdrawal,
            reply,
        } => {
            let answer = match unsupported(context, &question) {
                Some(answer) => answer,
                None => bounded(deadline, ask(peer, question, &withdrawal)).await,
            };
            let _ = reply.send(answer);
        }
    }
}

/// The answer to `question` when the client declared no capability for it: an error, or
/// no roots (a client without `roots` has none to offer, which is not an error).
fn unsupported(
    context: &RequestContext<RoleServer>,
    question: &Question,
) -> Option<Result<Value, String>> {
    match question {
        Question::Sample(_) if !supports(context, |caps| caps.sampling.is_some()) => Some(Err(
            "the client does not support sampling (it declared no `sampling` capability)"
                .to_owned(),
        )),
        Question::Elicit { .. } if !supports(context, |caps| caps.elicitation.is_some()) => {
            Some(Err(
                "the client does not support elicitation (it declared no `elicitation` capability)"
                    .to_owned(),
            ))
        }
        Question::Roots if !supports(context, |caps| caps.roots.is_some()) => {
            Some(Ok(serde_json::json!({"roots": []})))
        }
        _ => None,
    }
}

fn supports(
    context: &RequestContext<RoleServer>,
    check: impl Fn(&rmcp::model::ClientCapabilities) -> bool,
) -> bool {
    context.client_capabilities().as_ref().is_some_and(check)
}

async fn bounded<T>(
    deadline: Instant,
    request: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout_at(deadline.into(), request)
        .await
        .unwrap_or_else(|_| Err("the client did not answer before the call's deadline".to_owned()))
}

/// Asks `question` of the client at `peer` and waits for its answer; when `withdrawal` is
/// withdrawn first, the client is sent `notifications/cancelled` for the request and the
/// answer is an error (docs/gateway.md, "A faithful proxy").
async fn ask(
    peer: &Peer<RoleServer>,
    question: Question,
    withdrawal: &Withdrawal,
) -> Result<Value, String> {
    let what = match &question {
        Question::Sample(_) => "sampling",
        Question::Elicit { .. } => "elicitation",
        Question::Roots => "roots/list",
    };
    if withdrawal.is_withdrawn() {
        return Err(format!("{what} was withdrawn before it was asked"));
    }
    let request = server_request(peer, question)?;
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(|error| format!("{what} failed: {error}"))?;
    let id = handle.id.clone();
    let (withdraw, withdrawn) = oneshot::channel();
    withdrawal.on_withdraw(move || {
        let _ = withdraw.send(());
    });
    let answer = tokio::select! {
        answer = handle.await_response() => answer.map_err(|error| format!("{what} failed: {error}"))?,
        Ok(()) = withdrawn => {
            let reason = "withdrawn by the upstream server that asked".to_owned();
            if let Err(error) = peer
                .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason)))
                .await
            {
                tracing::debug!(%error, "could not send notifications/cancelled");
            }
            return Err(format!("{what} was withdrawn by the upstream server that asked"));
        }
    };
    match answer {
        ClientResult::CreateMessageResult(result) => serde_json::to_value(result),
        ClientResult::ElicitResult(result) => serde_json::to_value(result),
        ClientResult::ListRootsResult(result) => serde_json::to_value(result),
        _ => return Err(format!("the client answered {what} with something else")),
    }
    .map_err(|error| error.to_string())
}

/// The request that asks `question`; sampling checked as rmcp's `Peer::create_message`
/// checks it.
fn server_request(peer: &Peer<RoleServer>, question: Question) -> Result<ServerRequest, String> {
    Ok(match question {
        Question::Sample(request) => {
            let params: CreateMessageRequestParams = serde_json::from_value(request)
                .map_err(|error| format!("invalid sampling request: {error}"))?;
            if (params.tools.is_some() || params.tool_choice.is_some())
                && !peer.supports_sampling_tools()
            {
                return Err("sampling failed: tools or toolChoice provided but the client does not support sampling tools".to_owned());
            }
            params
                .validate()
                .map_err(|error| format!("invalid sampling request: {error}"))?;
            ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params))
        }
        Question::Elicit { message, schema } => {
            let requested_schema: ElicitationSchema = serde_json::from_value(schema)
                .map_err(|error| format!("invalid elicitation schema: {error}"))?;
            ServerRequest::ElicitRequest(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message,
                    requested_schema,
                },
            ))
        }
        Question::Roots => ServerRequest::ListRootsRequest(ListRootsRequest::default()),
    })
}
