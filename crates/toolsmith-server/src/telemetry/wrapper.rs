//! [`Traced`] as rmcp's `ServerHandler`: every request method starts the request's span
//! and delegates; notifications and the handler's other methods only delegate. rmcp's
//! Streamable HTTP service takes a `ServerHandler` (not any `Service`), so the span is
//! made here, one method at a time, rather than around rmcp's dispatch.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks the logging and legacy subscription methods deprecated; they still work and are delegated"
)]

use std::borrow::Cow;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
    CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult,
    DiscoverResult, ErrorData, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{
    MaybeSendFuture, NotificationContext, RequestContext, RoleServer, SubscriptionContext,
};

use super::{Described, Traced, finish, start, tool_error};

/// A result that is never a tool's error.
fn never<T>(_: &T) -> Option<String> {
    None
}

impl<H: ServerHandler> ServerHandler for Traced<H> {
    fn ping(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("ping"), &context, self.wire);
        finish(started, self.inner.ping(context), never)
    }

    fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<InitializeResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("initialize"), &context, self.wire);
        finish(started, self.inner.initialize(request, context), never)
    }

    fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<DiscoverResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("server/discover"), &context, self.wire);
        finish(started, self.inner.discover(context), never)
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(
            &Described::method("completion/complete"),
            &context,
            self.wire,
        );
        finish(started, self.inner.complete(request, context), never)
    }

    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("logging/setLevel"), &context, self.wire);
        finish(started, self.inner.set_level(request, context), never)
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(
            &Described {
                prompt: Some(&request.name),
                ..Described::method("prompts/get")
            },
            &context,
            self.wire,
        );
        finish(started, self.inner.get_prompt(request, context), never)
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("prompts/list"), &context, self.wire);
        finish(started, self.inner.list_prompts(request, context), never)
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("resources/list"), &context, self.wire);
        finish(started, self.inner.list_resources(request, context), never)
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, ErrorData>> + MaybeSendFuture + '_
    {
        let started = start(
            &Described::method("resources/templates/list"),
            &context,
            self.wire,
        );
        finish(
            started,
            self.inner.list_resource_templates(request, context),
            never,
        )
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(
            &Described {
                uri: Some(&request.uri),
                ..Described::method("resources/read")
            },
            &context,
            self.wire,
        );
        finish(started, self.inner.read_resource(request, context), never)
    }

    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        let started = start(
            &Described {
                uri: Some(&request.uri),
                ..Described::method("resources/subscribe")
            },
            &context,
            self.wire,
        );
        finish(started, self.inner.subscribe(request, context), never)
    }

    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        let started = start(
            &Described {
                uri: Some(&request.uri),
                ..Described::method("resources/unsubscribe")
            },
            &context,
            self.wire,
        );
        finish(started, self.inner.unsubscribe(request, context), never)
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(
            &Described {
                tool: Some(&request.name),
                ..Described::method("tools/call")
            },
            &context,
            self.wire,
        );
        finish(
            started,
            self.inner.call_tool(request, context),
            |response| match response {
                CallToolResponse::Complete(result) => tool_error(result),
                _ => None,
            },
        )
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("tools/list"), &context, self.wire);
        finish(started, self.inner.list_tools(request, context), never)
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method(&request.method), &context, self.wire);
        finish(
            started,
            self.inner.on_custom_request(request, context),
            never,
        )
    }

    fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetTaskResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("tasks/get"), &context, self.wire);
        finish(started, self.inner.get_task(request, context), never)
    }

    fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("tasks/update"), &context, self.wire);
        finish(started, self.inner.update_task(request, context), never)
    }

    fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("tasks/cancel"), &context, self.wire);
        finish(started, self.inner.cancel_task(request, context), never)
    }

    fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListSkillsResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("skills/list"), &context, self.wire);
        finish(started, self.inner.list_skills(request, context), never)
    }

    fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetSkillResult, ErrorData>> + MaybeSendFuture + '_ {
        let started = start(&Described::method("skills/get"), &context, self.wire);
        finish(started, self.inner.get_skill(request, context), never)
    }

    fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceDirectoryResult, ErrorData>> + MaybeSendFuture + '_
    {
        let started = start(
            &Described::method("resources/directory/read"),
            &context,
            self.wire,
        );
        finish(
            started,
            self.inner.read_resource_directory(request, context),
            never,
        )
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.inner.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.inner.listen(context)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
    }

    fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_cancelled(notification, context)
    }

    fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_progress(notification, context)
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_initialized(context)
    }

    fn on_roots_list_changed(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_roots_list_changed(context)
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.inner.on_custom_notification(notification, context)
    }

    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }
}
