//! The MCP server: rmcp's `ServerHandler`, delegating to the catalog. One handler per
//! connection (stdio) or per Streamable HTTP session, all sharing one [`ServerState`].
//!
//! Logging (MCP spec, server/utilities/logging): until the client sends
//! `logging/setLevel`, tools' log messages at `info` and above are sent; `debug` is held back
//! because it is noise for a model unless asked for. A 2026-07-28 request's own `logLevel`
//! wins over the session's level.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks the logging types deprecated (SEP-2577); they still work"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use axum::http::request::Parts;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::SessionRestoreMarker;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::broadcast::error::RecvError;
use toolsmith_model::{Caller, LogLevel};

use crate::content::Forwarded;
use crate::convert::log_level;
use crate::mrtr::{self, Replay};
use crate::state::{ListChanges, ServerState, Subscriptions};
use crate::tasks;
use roots::ClientRoot;

mod calls;
mod forwarded;
mod roots;
mod session;

pub(crate) use session::SessionJoin;
use session::session_of;

/// The level sent until the client chooses one.
const DEFAULT_LOG_LEVEL: LogLevel = LogLevel::Info;

/// What a handler serves on, which decides what it does once its client is initialized.
#[derive(Clone)]
pub(crate) enum Transport {
    /// A stdio connection, whose peer `stdio/` keeps as soon as the handshake is done.
    Stdio,
    /// A stateless Streamable HTTP request.
    Http,
    /// A Streamable HTTP session, which joins the direct path once initialized.
    HttpSession(Arc<dyn SessionJoin>),
}

/// The rmcp handler of one connection or session.
#[derive(Clone)]
pub(crate) struct McpHandler {
    state: ServerState,
    transport: Transport,
    /// The session's `logging/setLevel`, as a [`LogLevel`] ordinal.
    log_level: Arc<AtomicU8>,
    /// The session's `resources/subscribe` URIs.
    subscriptions: Subscriptions,
    /// The client's root that command tools run in.
    root: Arc<tokio::sync::Mutex<ClientRoot>>,
}

impl McpHandler {
    /// A handler for a new connection or session on `transport`.
    pub(crate) fn new(state: ServerState, transport: Transport) -> Self {
        Self {
            state,
            transport,
            log_level: Arc::new(AtomicU8::new(DEFAULT_LOG_LEVEL as u8)),
            subscriptions: Subscriptions::default(),
            root: Arc::default(),
        }
    }

    /// Cancelled when the server shuts down.
    pub(crate) fn shutdown_token(&self) -> &tokio_util::sync::CancellationToken {
        self.state.shutdown_token()
    }

    /// Over stdio there is one caller, and no HTTP status to refuse it with: its
    /// `[limits]` excess is a JSON-RPC error (docs/limits.md). HTTP refuses before the
    /// handler.
    async fn admit_stdio(&self) -> Result<Option<crate::limits::Admission>, ErrorData> {
        match self.transport {
            Transport::Stdio if self.state.limits().per_caller() => {
                match self.state.limits().admit("stdio").await {
                    Ok(admission) => Ok(Some(admission)),
                    Err(refusal) => {
                        self.state.metrics().limited(refusal.kind);
                        Err(refusal.error_data())
                    }
                }
            }
            _ => Ok(None),
        }
    }

    fn page_size(&self) -> usize {
        self.state.page_size()
    }

    /// Sets the session's log level here, as `logging/setLevel` does (also when another
    /// replica got it).
    pub(crate) fn set_session_log_level(&self, level: LogLevel) {
        self.log_level.store(level as u8, Ordering::Relaxed);
    }

    fn session_log_level(&self) -> LogLevel {
        LEVELS
            .get(usize::from(self.log_level.load(Ordering::Relaxed)))
            .copied()
            .unwrap_or(DEFAULT_LOG_LEVEL)
    }
}

/// Who made the request: the [`Caller`] the HTTP endpoint's OAuth check put on the
/// request (docs/auth.md); `None` over stdio and without OAuth.
pub(crate) fn caller_of(context: &RequestContext<RoleServer>) -> Option<Arc<Caller>> {
    context
        .extensions
        .get::<Parts>()
        .and_then(|parts| parts.extensions.get::<Arc<Caller>>())
        .cloned()
}

/// The `tracing` target of the event logged per `tools/call`.
pub const CALL_LOG_TARGET: &str = "toolsmith::call";

/// Every level, indexed by its ordinal.
const LEVELS: [LogLevel; 8] = [
    LogLevel::Debug,
    LogLevel::Info,
    LogLevel::Notice,
    LogLevel::Warning,
    LogLevel::Error,
    LogLevel::Critical,
    LogLevel::Alert,
    LogLevel::Emergency,
];

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        self.state.info().clone()
    }

    /// As rmcp's own, and a session restored from the shared state takes the log level and
    /// the subscriptions a client set on another replica.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        if let Transport::HttpSession(sessions) = &self.transport
            && let Some(restored) = context.extensions.get::<SessionRestoreMarker>()
        {
            if let Some(level) = sessions.shared_log_level(&restored.id).await {
                self.set_session_log_level(level);
            }
            for uri in sessions.shared_subscriptions(&restored.id).await {
                if let Err(error) = self.follow(uri.clone(), &context.peer).await {
                    tracing::debug!(uri, %error.message, "a subscription of a restored session no longer holds");
                }
            }
        }
        self.negotiate_initialize(&request)
    }

    /// Forgets the client's root, here and, when the client posted this here (not relayed
    /// from another replica, which forgot them already), in the shared state.
    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        *self.root.lock().await = ClientRoot::Unasked;
        if let Transport::HttpSession(sessions) = &self.transport
            && let Some(session) = session::session_in(&context.extensions)
        {
            sessions.share_roots(session, None).await;
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        match &self.transport {
            // The connection's peer is kept as soon as the handshake is done (`stdio/`);
            // keeping it here too would notify that client twice.
            Transport::Stdio => {}
            Transport::Http => self.state.remember_peer(&context.peer),
            Transport::HttpSession(sessions) => {
                self.state.remember_peer(&context.peer);
                sessions.join(self, &context);
            }
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        let caller = caller_of(&context);
        let (tools, next_cursor) =
            self.state
                .published()
                .page(cursor, self.state.page_size(), caller.as_deref())?;
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.state.published().tool(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = log_level(request.level);
        self.set_session_log_level(level);
        if let Transport::HttpSession(sessions) = &self.transport
            && let Some(session) = session_of(&context)
        {
            sessions.share_log_level(session, level).await;
        }
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.state
            .content()
            .list_prompts(cursor(request.as_ref()), self.page_size())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let audit = self.state.audit().map(|log| {
            log.begin(
                "prompts/get",
                &request.name,
                request.arguments.as_ref(),
                &context,
            )
        });
        let answer = async {
            let replay = Replay::open(
                &context,
                "prompts/get",
                &request.name,
                request.arguments.as_ref(),
                request.input_responses,
                request.request_state.as_deref(),
            )?
            .map(Arc::new);
            let mut arguments = request.arguments.unwrap_or_default();
            let served = self.state.content();
            if let Some(replay) = replay.as_deref()
                && let Ok(prompt) = served.prompts.get(&request.name)
                && let Some(input_required) = mrtr::prompt_arguments(replay, prompt, &mut arguments)
            {
                return Ok(input_required.into());
            }
            if served.forwards(Forwarded::Prompt(&request.name)) {
                return self
                    .forward_prompt(request.name, arguments, replay, &context)
                    .await;
            }
            Ok(served.get_prompt(&request.name, &arguments, None)?.into())
        }
        .await;
        if let Some(audit) = audit {
            audit.finish_content(&answer);
        }
        answer
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.state
            .content()
            .list_resources(cursor(request.as_ref()), self.page_size())
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.state
            .content()
            .list_skills(cursor(request.as_ref()), self.page_size())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.state.content().get_skill(&request.uri)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.state
            .content()
            .list_resource_templates(cursor(request.as_ref()), self.page_size())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let audit = self
            .state
            .audit()
            .map(|log| log.begin("resources/read", &request.uri, None, &context));
        let answer = async {
            let served = self.state.content();
            if served.forwards(Forwarded::Resource(&request.uri)) {
                let replay = Replay::open(
                    &context,
                    "resources/read",
                    &request.uri,
                    None,
                    request.input_responses,
                    request.request_state.as_deref(),
                )?
                .map(Arc::new);
                return self.forward_read(request.uri, replay, &context).await;
            }
            Ok(served.read_resource(&request.uri, None)?.into())
        }
        .await;
        if let Some(audit) = audit {
            audit.finish_content(&answer);
        }
        answer
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.follow(request.uri.clone(), &context.peer).await?;
        self.share_subscription(&context, &request.uri, true).await;
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unfollow(&request.uri).await?;
        self.share_subscription(&context, &request.uri, false).await;
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // List changes are delivered; `resources/updated` only to 2025-11-25 sessions.
        let mut accepted = requested.clone();
        accepted.resource_subscriptions = None;
        Some(accepted)
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.state.list_changes();
        let shutdown = self.state.shutdown_token().clone();
        loop {
            let change = tokio::select! {
                () = subscription.cancelled() => return Ok(()),
                () = shutdown.cancelled() => return Ok(()),
                change = changes.recv() => match change {
                    Ok(change) => change,
                    Err(RecvError::Lagged(_)) => ListChanges { tools: true, prompts: true, resources: true },
                    Err(RecvError::Closed) => return Ok(()),
                },
            };
            // The sink drops what the subscription did not ask for.
            let sink = subscription.sink();
            let accepted = sink.accepted();
            if change.tools && accepted.tools_list_changed == Some(true) {
                let _ = sink.notify_tool_list_changed().await;
            }
            if change.prompts && accepted.prompts_list_changed == Some(true) {
                let _ = sink.notify_prompt_list_changed().await;
            }
            if change.resources && accepted.resources_list_changed == Some(true) {
                let _ = sink.notify_resource_list_changed().await;
            }
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let content = self.state.content();
        if content.forwards(Forwarded::Completion(&request.r#ref)) {
            return blocking(move || content.complete(&request)).await;
        }
        content.complete(&request)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = caller_of(&context);
        let task = self
            .state
            .tasks()
            .get(&request.task_id, caller.as_deref())
            .await?;
        Ok(GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.state
            .tasks()
            .update(
                &request.task_id,
                request.input_responses,
                caller_of(&context).as_deref(),
            )
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.state
            .tasks()
            .cancel(&request.task_id, caller_of(&context).as_deref())
            .await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // A 2025-11-25 task request, renamed by the transport (docs/tasks.md).
        let Some(method) = request
            .method
            .strip_prefix(tasks::experimental::PREFIX)
            .map(str::to_owned)
        else {
            return Err(unreadable_request(request));
        };
        let params = request.params;
        let answer = match method.as_str() {
            "tools/call" => {
                // Logged when the task is made, with what the client was answered.
                let audit = self.state.audit().map(|log| {
                    let name = params.as_ref().and_then(|params| params.get("name"));
                    let arguments = params.as_ref().and_then(|params| params.get("arguments"));
                    log.begin(
                        "tools/call",
                        name.and_then(serde_json::Value::as_str).unwrap_or_default(),
                        arguments.and_then(serde_json::Value::as_object),
                        &context,
                    )
                });
                let answer = self.call_as_task(params, context).await;
                if let Some(audit) = audit {
                    audit.finish_content(&answer);
                }
                answer?
            }
            "tools/list" => {
                let params = tasks::experimental::list_params(params)?;
                let list = self.list_tools(params, context).await?;
                tasks::experimental::with_execution(&list, &self.state.published())
            }
            method => {
                let caller = caller_of(&context);
                let scope = tasks::scope(caller.as_deref(), &context);
                tasks::experimental::serve(
                    self.state.tasks(),
                    method,
                    params,
                    caller.as_deref(),
                    &scope,
                    &context.ct,
                )
                .await?
            }
        };
        Ok(CustomResult(answer))
    }
}

/// Runs `answer`, which waits for an upstream (docs/gateway.md), on a blocking thread.
async fn blocking<T: Send + 'static>(
    answer: impl FnOnce() -> Result<T, ErrorData> + Send + 'static,
) -> Result<T, ErrorData> {
    tokio::task::spawn_blocking(answer)
        .await
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?
}

/// The answer to a request rmcp read as no MCP request it knows: `-32602` when the method
/// is one this server serves, so its params are what is wrong, else
/// `-32601` as rmcp answers. `logging/setLevel` and `resources/(un)subscribe` stay
/// `-32601`: 2026-07-28 removed them, and rmcp hands them here in that era whatever their
/// params (SEP-2575: "method not found", which the HTTP layer answers with 404).
fn unreadable_request(request: CustomRequest) -> ErrorData {
    fn invalid<T: serde::de::DeserializeOwned>(params: serde_json::Value) -> Option<String> {
        serde_json::from_value::<T>(params)
            .err()
            .map(|error| error.to_string())
    }
    let CustomRequest { method, params, .. } = request;
    let params = params.unwrap_or(serde_json::Value::Null);
    let problem = match method.as_str() {
        // Said in the words of the method, not serde's "expected a map".
        "tools/call"
            if params
                .get("arguments")
                .is_some_and(|arguments| !arguments.is_object() && !arguments.is_null()) =>
        {
            Some(format!(
                "`arguments` must be an object of parameter names to values, e.g. \
                 {{\"city\": \"Oslo\"}}, not {}",
                json_kind(&params["arguments"])
            ))
        }
        "tools/call" => invalid::<CallToolRequestParams>(params),
        "prompts/get" => invalid::<GetPromptRequestParams>(params),
        "resources/read" => invalid::<ReadResourceRequestParams>(params),
        "completion/complete" => invalid::<CompleteRequestParams>(params),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            invalid::<Option<PaginatedRequestParams>>(params)
        }
        _ => {
            return ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: `{method}`"),
                None,
            );
        }
    };
    let problem = problem.unwrap_or_else(|| "not the shape the method takes".to_owned());
    ErrorData::invalid_params(format!("invalid params for `{method}`: {problem}"), None)
}

/// What kind of JSON value `value` is, with its article: "an array", "a string".
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn cursor(request: Option<&PaginatedRequestParams>) -> Option<&str> {
    request.and_then(|params| params.cursor.as_deref())
}
