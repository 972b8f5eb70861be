//! The stdio transport proper: newline-delimited JSON-RPC over a byte stream as rmcp's
//! `Transport`, answering what is not a message itself and handing plain `tools/call`s to
//! the fast path ([`super::fast`]).

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::io;

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, CustomResult, ErrorCode,
    JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, ProtocolVersion, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::mpsc;

use super::fast::{FastCalls, Taken};
use crate::jsonrpc::{Parsed, duplicate_id, encode, error_message, parse};
use crate::state::ServerState;

/// The longest line (one message) accepted; longer ones are answered `-32600` and dropped.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// How many messages are held while the folder loads before reading stops until it is
/// served ([`LineTransport::held`]).
const MAX_HELD: usize = 256;

/// Newline-delimited JSON-RPC over a byte stream, as rmcp's `Transport`.
pub(super) struct LineTransport<R> {
    input: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of an over-long line, up to its newline.
    discarding: bool,
    output: mpsc::Sender<Vec<u8>>,
    /// An error reply waiting for room in the output queue: until it is queued, no more
    /// input is read (back-pressure).
    pending: Option<Vec<u8>>,
    /// Ids of the requests handed to rmcp's loop and not answered yet (their duplicates are
    /// refused; the fast path keeps its own).
    open: HashSet<RequestId>,
    /// Of those, the `tools/call`s: the end of input waits for their answers.
    open_calls: HashSet<RequestId>,
    /// The input has ended: no more lines will come.
    ended: bool,
    /// A request has come in. Before that, notifications and responses are dropped: rmcp's
    /// handshake gives up on the connection when the first message is not a request.
    started: bool,
    /// The revision the client asked for in `initialize`. With 2025-11-25 its task messages
    /// go to [`crate::tasks::experimental::rename`] first, and its `initialize` result
    /// declares `capabilities.tasks`; before 2026-07-28, results carry no `resultType`
    /// (rmcp's handler strips it; [`LineTransport::search_while_loading`] answers without
    /// the handler).
    revision: Option<ProtocolVersion>,
    fast: FastCalls,
    /// Whether the folder is served yet ([`ServerState::loading`]).
    state: ServerState,
    /// Lines read while the folder loads that wait for it, in order (all but `tool_search`
    /// calls a kept index answers: [`ServerState::kept_index`]).
    held: VecDeque<Vec<u8>>,
}

impl<R: AsyncRead + Unpin> LineTransport<R> {
    pub(super) fn new(
        input: R,
        output: mpsc::Sender<Vec<u8>>,
        fast: FastCalls,
        state: ServerState,
    ) -> Self {
        Self {
            input: BufReader::with_capacity(64 * 1024, input),
            line: Vec::new(),
            discarding: false,
            output,
            pending: None,
            open: HashSet::new(),
            open_calls: HashSet::new(),
            ended: false,
            started: false,
            revision: None,
            fast,
            state,
            held: VecDeque::new(),
        }
    }

    /// Reads the next whole line into `self.line`.
    ///
    /// Cancel-safe (`receive` is polled in a `select!`): bytes are moved from the buffer
    /// into `self.line` with no await in between, so a dropped read resumes where it stopped.
    async fn read_line(&mut self) -> io::Result<Line> {
        if self.ended {
            return Ok(Line::Eof);
        }
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                self.ended = true;
                return Ok(Line::Eof);
            }
            let newline = available.iter().position(|&byte| byte == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let outcome = if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
                None
            } else if self.line.len() + take > MAX_LINE {
                self.line.clear();
                self.discarding = newline.is_none();
                Some(Line::TooLong)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| Line::Complete)
            };
            self.input.consume(take);
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }

    /// Whether the client initialized with 2025-11-25, whose tasks are experimental
    /// ([`LineTransport::revision`]).
    fn experimental_tasks(&self) -> bool {
        self.revision
            .as_ref()
            .is_some_and(|revision| revision.as_str() == crate::tasks::experimental::REVISION)
    }

    /// Reads the next line to handle into `self.line`; `None` when there is none to handle
    /// yet (look again). Once `initialize` is in, the rest waits for the folder
    /// (`ServerState::loading`), but for `tool_search` calls a kept index can answer: while
    /// the folder is `loading` and such an index is there, lines are read and those
    /// [`LineTransport::search_while_loading`] does not answer are held, in order, and
    /// handled first once the folder is served.
    async fn next_line(&mut self, loading: bool) -> Option<io::Result<Line>> {
        if loading {
            if self.held.len() >= MAX_HELD {
                self.state.ready().await;
                return None;
            }
            let state = self.state.clone();
            tokio::select! {
                biased;
                () = state.ready() => return None,
                () = state.searchable() => {}
            }
            return tokio::select! {
                biased;
                () = state.ready() => None,
                read = self.read_line() => Some(read),
            };
        }
        if let Some(line) = self.held.pop_front() {
            self.line = line;
            return Some(Ok(Line::Complete));
        }
        Some(self.read_line().await)
    }

    /// Waits until every `tools/call` read has been answered (or cancelled by the client),
    /// each within its own timeout. Cancel-safe: rmcp's loop drops this future to send a
    /// response ([`Transport::send`] forgets the call), then polls `receive` again.
    ///
    /// A client that closes its input has no more requests; it did not cancel the ones it
    /// sent, so the end of input answers them before rmcp's loop ends (ending it cancels the
    /// calls it still runs). Scripts pipe requests this way.
    async fn calls_answered(&mut self) {
        self.fast.idle().await;
        if !self.open_calls.is_empty() {
            std::future::pending::<()>().await;
        }
    }

    /// Keeps the revision an `initialize` asks for ([`LineTransport::revision`]).
    fn note_revision(&mut self, parsed: &Parsed) {
        if let Parsed::Message(JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::InitializeRequest(initialize),
            ..
        })) = parsed
        {
            self.revision = Some(initialize.params.protocol_version.clone());
        }
    }

    /// In a 2025-03-26 session, the only revision with JSON-RPC batches, takes the batch
    /// read apart: its messages are handled next, in order, each as if it were a line of
    /// its own (and answered so: the answers of a batch need not come as one array). True
    /// when the line was a batch.
    async fn expand_batch(&mut self) -> bool {
        if self.revision.as_ref() != Some(&ProtocolVersion::V_2025_03_26) {
            return false;
        }
        let Some(batch) = crate::jsonrpc::batch(&self.line) else {
            return false;
        };
        self.line.clear();
        match batch {
            Ok(messages) => {
                for message in messages.into_iter().rev() {
                    self.held.push_front(message);
                }
            }
            Err(reply) => self.reply(&reply).await,
        }
        true
    }

    /// Answers a line that is not a message, waiting for room in the output queue.
    async fn reply(&mut self, message: &ServerJsonRpcMessage) {
        self.pending = Some(encode(message));
        self.flush_pending().await;
    }

    /// Queues the pending reply, if any, once the output has room.
    ///
    /// Cancel-safe: the reply stays pending until a permit is in hand, and the next
    /// `receive` queues it before reading on.
    async fn flush_pending(&mut self) {
        if self.pending.is_none() {
            return;
        }
        let Ok(permit) = self.output.reserve().await else {
            // The writer is gone (stdout closed): nothing can be answered any more.
            self.pending = None;
            return;
        };
        if let Some(bytes) = self.pending.take() {
            permit.send(bytes);
        }
    }

    /// Answers the line read while the folder loads, when a kept index can
    /// ([`LineTransport::search_while_loading`]), or holds it for when the folder is served.
    async fn answer_or_hold(&mut self) {
        if let Some(answer) = self.search_while_loading() {
            self.line.clear();
            self.reply(&answer).await;
        } else {
            self.held.push_back(std::mem::take(&mut self.line));
        }
    }

    /// The answer to the line read, when it is a plain `tool_search` call a kept index
    /// answers while the folder loads: the same answer the loaded folder's `tool_search`
    /// gives (docs/search.md, "The kept index").
    fn search_while_loading(&self) -> Option<ServerJsonRpcMessage> {
        let Parsed::Message(JsonRpcMessage::Request(JsonRpcRequest {
            id,
            request: ClientRequest::CallToolRequest(call),
            ..
        })) = parse(&self.line)
        else {
            return None;
        };
        let params = &call.params;
        // A call with more to it than its arguments (a task, a retry's state, metadata
        // beyond a progress token) goes the whole way.
        let plain_meta = params
            .meta
            .as_ref()
            .is_none_or(|meta| meta.0.keys().all(|key| key == "progressToken"));
        if params.name != toolsmith_search::TOOL_SEARCH
            || params.input_responses.is_some()
            || params.request_state.is_some()
            || !plain_meta
        {
            return None;
        }
        let arguments = params.arguments.clone().unwrap_or_default();
        let outcome = self.state.search_while_loading(&arguments)?;
        let mut result = ServerResult::CallToolResult(crate::convert::call_result(outcome));
        if self
            .revision
            .as_ref()
            .is_none_or(|revision| *revision < ProtocolVersion::V_2026_07_28)
        {
            result.strip_result_type_for_legacy_peer();
        }
        Some(ServerJsonRpcMessage::response(result, id))
    }
}

/// The answer to a line longer than [`MAX_LINE`].
fn too_long() -> ServerJsonRpcMessage {
    error_message(
        None,
        ErrorCode::INVALID_REQUEST,
        format!("message longer than {MAX_LINE} bytes"),
    )
}

enum Line {
    Complete,
    TooLong,
    Eof,
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        mut item: ServerJsonRpcMessage,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        match &mut item {
            JsonRpcMessage::Request(request) => crate::bridge::drop_progress_token(request),
            JsonRpcMessage::Response(response) => {
                self.open.remove(&response.id);
                self.open_calls.remove(&response.id);
                if self.experimental_tasks()
                    && let ServerResult::InitializeResult(result) = &response.result
                    && let Ok(mut result) = serde_json::to_value(result)
                {
                    crate::tasks::experimental::advertise(&mut result);
                    response.result = ServerResult::CustomResult(CustomResult(result));
                }
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.open.remove(id);
                    self.open_calls.remove(id);
                }
            }
            JsonRpcMessage::Notification(_) => {}
        }
        let bytes = encode(&item);
        let output = self.output.clone();
        async move {
            output
                .send(bytes)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            self.flush_pending().await;
            let loading = self.started && !self.state.is_ready();
            let Some(read) = self.next_line(loading).await else {
                continue;
            };
            match read {
                Ok(Line::Complete) => {}
                Ok(Line::TooLong) => {
                    self.reply(&too_long()).await;
                    continue;
                }
                Ok(Line::Eof) if !self.held.is_empty() => {
                    // What was held is still answered: the folder is served first.
                    self.state.ready().await;
                    continue;
                }
                Ok(Line::Eof) => {
                    self.calls_answered().await;
                    return None;
                }
                // A terminal that hangs up (its window closed) reads as EIO: the end of input.
                Err(error) if error.raw_os_error() == Some(libc::EIO) => {
                    tracing::debug!("stdin's terminal hung up");
                    return None;
                }
                Err(error) => {
                    tracing::error!(%error, "cannot read stdin");
                    return None;
                }
            }
            if self.experimental_tasks()
                && let Some(renamed) = crate::tasks::experimental::rename(&self.line)
            {
                self.line = renamed;
            }
            if loading {
                self.answer_or_hold().await;
                continue;
            }
            if self.expand_batch().await {
                continue;
            }
            let parsed = parse(&self.line);
            self.line.clear();
            self.note_revision(&parsed);
            match parsed {
                Parsed::Message(message) => {
                    match &message {
                        JsonRpcMessage::Request(request) => {
                            self.started = true;
                            // The fast path checks its own calls as it takes one.
                            if self.open.contains(&request.id) {
                                self.reply(&duplicate_id(&request.id)).await;
                                continue;
                            }
                        }
                        _ if !self.started => {
                            tracing::debug!(
                                "ignoring a message that arrived before the first request"
                            );
                            continue;
                        }
                        JsonRpcMessage::Notification(JsonRpcNotification {
                            notification: ClientNotification::CancelledNotification(cancelled),
                            ..
                        }) => {
                            // rmcp sends nothing for a request it cancels.
                            if let Some(id) = &cancelled.params.request_id {
                                self.open.remove(id);
                                self.open_calls.remove(id);
                            }
                        }
                        _ => {}
                    }
                    match self.fast.take(message, &self.output) {
                        Taken::Started => {}
                        Taken::Duplicate(id) => self.reply(&duplicate_id(&id)).await,
                        Taken::Passed(message) => {
                            if let JsonRpcMessage::Request(request) = &message {
                                if self.fast.is_running(&request.id) {
                                    self.reply(&duplicate_id(&request.id)).await;
                                    continue;
                                }
                                self.open.insert(request.id.clone());
                                if matches!(request.request, ClientRequest::CallToolRequest(_)) {
                                    self.open_calls.insert(request.id.clone());
                                }
                            }
                            return Some(message);
                        }
                    }
                }
                Parsed::Ignore => {}
                Parsed::Reply(reply) => self.reply(&reply).await,
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
}
