//! `prompts/get` and `resources/read` of an upstream's prompt or resource (docs/gateway.md,
//! "Prompts and resources"): the request is forwarded on a blocking thread, and what the
//! upstream asks meanwhile (sampling, elicitation, roots) is asked of this request's client
//! through a bridge, as for a tool call: live for a 2025-era session, by replay for a
//! 2026-07-28 request, whose answer is then `input_required` until the client has answered
//! everything the upstream asked (docs/serve.md, "2026-07-28: input required").

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{GetPromptResponse, InputRequiredResult, ReadResourceResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use toolsmith_model::{ClientBridge, JsonObject};

use super::McpHandler;
use crate::bridge::{self, McpBridge};
use crate::convert::log_level;
use crate::mrtr::Replay;

impl McpHandler {
    /// `prompts/get` of an upstream's prompt.
    pub(super) async fn forward_prompt(
        &self,
        name: String,
        arguments: JsonObject,
        replay: Option<Arc<Replay>>,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let served = self.state.content();
        self.asking_client(context, replay, move |client| {
            served.get_prompt(&name, &arguments, Some(&client))
        })
        .await
    }

    /// `resources/read` of an upstream's resource.
    pub(super) async fn forward_read(
        &self,
        uri: String,
        replay: Option<Arc<Replay>>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let served = self.state.content();
        self.asking_client(context, replay, move |client| {
            served.read_resource(&uri, Some(&client))
        })
        .await
    }

    /// Runs `forward` on a blocking thread with a bridge to this request's client, carrying
    /// out what it asks of the client until it returns; its result is the answer, unless a
    /// 2026-07-28 request must answer `input_required` (see [`answered`]).
    async fn asking_client<T: Send + 'static, R: From<T> + From<InputRequiredResult>>(
        &self,
        context: &RequestContext<RoleServer>,
        replay: Option<Arc<Replay>>,
        forward: impl FnOnce(Arc<dyn ClientBridge>) -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<R, ErrorData> {
        let min_level = context
            .meta
            .log_level()
            .map_or_else(|| self.session_log_level(), log_level);
        let bridge = Arc::new(McpBridge::new(false, min_level, replay.clone()));
        let client = Arc::clone(&bridge) as Arc<dyn ClientBridge>;
        let mut finished = tokio::task::spawn_blocking(move || forward(client));
        // The upstream's own answer is bounded by the same timeout (content.rs of the
        // upstream crate); the client's answers to it are too.
        let deadline = Instant::now() + toolsmith_model::DEFAULT_TIMEOUT;
        let answer = loop {
            tokio::select! {
                biased;
                joined = &mut finished => {
                    while let Some(asked) = bridge.next() {
                        bridge::serve(asked, context, None, deadline).await;
                    }
                    break joined.map_err(|error| ErrorData::internal_error(error.to_string(), None));
                }
                () = context.ct.cancelled() => {
                    break Err(ErrorData::internal_error("cancelled by the client", None));
                }
                () = bridge.ready() => {
                    while let Some(asked) = bridge.next() {
                        bridge::serve(asked, context, None, deadline).await;
                    }
                }
            }
        };
        // A request of the upstream still waiting on the client gets an error now.
        bridge.close();
        answered(replay.as_deref(), answer.and_then(|answer| answer))
    }
}

/// The answer to a forwarded request: on a 2026-07-28 request, what the upstream asked and
/// the client has not answered yet comes first (the upstream's answer to the refusal it got
/// meanwhile does not count), then a capability the client lacks.
fn answered<T, R: From<T> + From<InputRequiredResult>>(
    replay: Option<&Replay>,
    answer: Result<T, ErrorData>,
) -> Result<R, ErrorData> {
    if let Some(replay) = replay {
        if let Some(error) = replay.undeclared() {
            return Err(error);
        }
        if let Some(input_required) = replay.finish() {
            return Ok(input_required.into());
        }
    }
    answer.map(R::from)
}

#[cfg(test)]
mod tests {
    use rmcp::model::ReadResourceResult;

    use super::*;

    #[test]
    fn without_a_replay_the_answer_is_the_upstreams() {
        let result = ReadResourceResult::new(Vec::new());
        let answer: Result<ReadResourceResponse, ErrorData> = answered(None, Ok(result));
        assert!(matches!(answer, Ok(ReadResourceResponse::Complete(_))));
        let refused: Result<ReadResourceResult, ErrorData> =
            Err(ErrorData::internal_error("no", None));
        assert!(answered::<_, ReadResourceResponse>(None, refused).is_err());
    }
}
