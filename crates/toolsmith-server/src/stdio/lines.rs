//! The stdio transport proper: newline-delimited JSON-RPC over a byte stream as rmcp's
//! `Transport`, answering what is not a message itself and handing plain `tools/call`s to
//! the fast path ([`super::fast`]).

use std::collections::HashSet;
use std::future::Future;
use std::io;

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, CustomResult, ErrorCode,
    JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::mpsc;

use super::fast::{FastCalls, Taken};
use crate::jsonrpc::{Parsed, duplicate_id, encode, error_message, parse};
use crate::state::ServerState;

/// The longest line (one message) accepted; longer ones are answered `-32600` and dropped.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Newline-delimited JSON-RPC over a byte stream, as rmcp's `Transport`.
pub(super) struct LineTransport<R> {
    input: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of an over-long line, up to its newline.
    discarding: bool,
    output: mpsc::Sender<Vec<u8>>,
    /// An error reply waiting for room in the output queue: until it is queued, no more
    /// input is read (back-pressure; issue 14, item 5).
    pending: Option<Vec<u8>>,
    /// Ids of the requests handed to rmcp's loop and not answered yet (their duplicates are
    /// refused; the fast path keeps its own).
    open: HashSet<RequestId>,
    /// A request has come in. Before that, notifications and responses are dropped: rmcp's
    /// handshake gives up on the connection when the first message is not a request.
    started: bool,
    /// The client initialized with 2025-11-25: its task messages go to
    /// [`crate::tasks::experimental::rename`] first, and its `initialize` result declares
    /// `capabilities.tasks`.
    experimental_tasks: bool,
    fast: FastCalls,
    /// Whether the folder is served yet ([`ServerState::loading`]).
    state: ServerState,
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
            started: false,
            experimental_tasks: false,
            fast,
            state,
        }
    }

    /// Reads the next whole line into `self.line`.
    ///
    /// Cancel-safe (`receive` is polled in a `select!`): bytes are moved from the buffer
    /// into `self.line` with no await in between, so a dropped read resumes where it stopped.
    async fn read_line(&mut self) -> io::Result<Line> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
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
                if self.experimental_tasks
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
            // Once `initialize` is in, the rest waits for the folder (`ServerState::loading`).
            if self.started && !self.state.is_ready() {
                self.state.ready().await;
            }
            match self.read_line().await {
                Ok(Line::Complete) => {}
                Ok(Line::TooLong) => {
                    self.reply(&error_message(
                        None,
                        ErrorCode::INVALID_REQUEST,
                        format!("message longer than {MAX_LINE} bytes"),
                    ))
                    .await;
                    continue;
                }
                Ok(Line::Eof) => return None,
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
            if self.experimental_tasks
                && let Some(renamed) = crate::tasks::experimental::rename(&self.line)
            {
                self.line = renamed;
            }
            let parsed = parse(&self.line);
            self.line.clear();
            if let Parsed::Message(JsonRpcMessage::Request(JsonRpcRequest {
                request: ClientRequest::InitializeRequest(initialize),
                ..
            })) = &parsed
            {
                self.experimental_tasks = initialize.params.protocol_version.as_str()
                    == crate::tasks::experimental::REVISION;
            }
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
