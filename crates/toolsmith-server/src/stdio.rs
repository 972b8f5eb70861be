//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout, run by rmcp's service loop
//! over a transport of our own.
//!
//! We own the transport (not rmcp's `AsyncRwTransport`) for three reasons:
//! - DESIGN.md §3: a line that is not JSON is answered with `-32700` (rmcp ignores it
//!   silently), well-formed JSON that is not a message with `-32600`, and the server goes on.
//! - stdout carries protocol messages only: the protocol gets its own handle on the output,
//!   and file descriptor 1 is pointed at stderr, so a stray write (a library's `println!`,
//!   a child process that inherits stdout) cannot corrupt the stream.
//! - Speed: pipes and sockets are driven by tokio's reactor without the blocking pool
//!   (rmcp's `stdio_pipes` does this for FIFOs only; Node-based clients hand their servers
//!   UNIX sockets), and responses that are ready together go out in one write.
//!
//! The transport speaks rmcp's message types. rmcp's service loop runs the handshake and
//! every request but one: `tools/call`, the hot path, is dispatched by the transport itself
//! ([`FastCalls`]) to the same handler through rmcp's own `Service::handle_request`, on a task
//! of its own, and its response goes straight to the output queue. That skips the loop's
//! per-request work (a large task per request, two channel hops, a second task per
//! response) while keeping rmcp's behaviour: the tool talks to the client through the
//! connection's `Peer` (progress, logging, sampling, elicitation, roots), and
//! `notifications/cancelled` stops the call and suppresses its response, as rmcp does.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, ErrorCode, ErrorData, GetExtensions, GetMeta, JsonRpcMessage,
    JsonRpcNotification, JsonRpcRequest, JsonRpcVersion2_0, Request, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{RequestContext, ServerInitializeError, Service, serve_server_with_ct};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleServer};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::ServeError;
use crate::handler::McpHandler;
use crate::state::ServerState;

/// The longest line (one message) accepted; longer ones are answered `-32600` and dropped.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Messages queued for stdout before senders wait for the writer.
const OUTPUT_QUEUE: usize = 1024;

/// Serves `state` on this process's stdin and stdout until the client closes stdin or the
/// process gets SIGINT/SIGTERM, then returns. Blocks; runs its own tokio runtime.
pub fn serve_stdio(state: ServerState) -> Result<(), ServeError> {
    // One thread for protocol work; tools run on call threads (`pool.rs`).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = runtime.block_on(async {
        let (input, output) = streams::protocol_streams().map_err(ServeError::Stdio)?;
        let stop = CancellationToken::new();
        tokio::spawn(stop_on_signal(stop.clone()));
        Box::pin(serve_stream(state, input, output, stop)).await
    });
    // Abandoned tool threads (see the watchdog) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

/// Serves `state` over any byte stream pair until the input ends or `stop` is cancelled.
///
/// This is the whole stdio server minus the process plumbing; tests run it over in-memory
/// pipes.
pub async fn serve_stream<R, W>(
    state: ServerState,
    input: R,
    output: W,
    stop: CancellationToken,
) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (queue, queued) = mpsc::channel(OUTPUT_QUEUE);
    let writer = tokio::spawn(write_out(output, queued));
    let handler = McpHandler::new(state.clone(), "stdio");
    let fast = FastCalls::new(handler.clone(), stop.child_token());
    let transport = LineTransport::new(input, queue, fast.clone());
    let result = match serve_server_with_ct(handler, transport, stop.clone()).await {
        Ok(running) => {
            state.remember_peer(running.peer());
            fast.serve(running.peer().clone());
            let quit = running.waiting().await;
            // As rmcp's loop does for its requests: on end of input, calls still running
            // may finish (5 s); on a stop, they are cancelled at once.
            if !stop.is_cancelled() && fast.running() > 0 {
                state.drain(Duration::from_secs(5)).await;
            }
            fast.stop.cancel();
            quit.map(drop)
                .map_err(|error| ServeError::Stdio(io::Error::other(error)))
        }
        // The client went away (or we were stopped) before initializing: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_) | ServerInitializeError::Cancelled) => {
            Ok(())
        }
        Err(error) => Err(ServeError::Handshake(error.to_string())),
    };
    // Everything answered must reach the client before we exit.
    match tokio::time::timeout(Duration::from_secs(2), writer).await {
        Ok(Ok(Ok(()))) | Err(_) => {}
        Ok(Ok(Err(error))) => tracing::debug!(%error, "stdout closed"),
        Ok(Err(error)) => tracing::error!(%error, "the stdout writer failed"),
    }
    result
}

async fn stop_on_signal(stop: CancellationToken) {
    crate::shutdown_signal().await;
    tracing::info!("stopping: signal received");
    stop.cancel();
}

/// Writes queued messages, coalescing those that are ready together into one write.
async fn write_out<W: AsyncWrite + Unpin>(
    mut output: W,
    mut queued: mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    let mut batch: Vec<u8> = Vec::with_capacity(64 * 1024);
    while let Some(first) = queued.recv().await {
        batch.extend_from_slice(&first);
        while batch.len() < 1024 * 1024 {
            match queued.try_recv() {
                Ok(more) => batch.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        output.write_all(&batch).await?;
        output.flush().await?;
        batch.clear();
    }
    output.flush().await
}

/// Newline-delimited JSON-RPC over a byte stream, as rmcp's `Transport`.
struct LineTransport<R> {
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
    fast: FastCalls,
}

impl<R: AsyncRead + Unpin> LineTransport<R> {
    fn new(input: R, output: mpsc::Sender<Vec<u8>>, fast: FastCalls) -> Self {
        Self {
            input: BufReader::with_capacity(64 * 1024, input),
            line: Vec::new(),
            discarding: false,
            output,
            pending: None,
            open: HashSet::new(),
            started: false,
            fast,
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
                Err(error) => {
                    tracing::error!(%error, "cannot read stdin");
                    return None;
                }
            }
            let parsed = parse(&self.line);
            self.line.clear();
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
                                if self.fast.calls().contains_key(&request.id) {
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

/// `tools/call` requests served by the transport, not rmcp's service loop (see the module
/// documentation). Cheap to clone; all clones share the calls.
#[derive(Clone)]
struct FastCalls(Arc<Fast>);

struct Fast {
    handler: McpHandler,
    /// The connection's peer, once the handshake is done; until then every request takes
    /// rmcp's loop.
    peer: OnceLock<Peer<RoleServer>>,
    /// The calls running, by request id: cancelling one removes it, so its response is
    /// dropped.
    running: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Cancels every call (the server stops).
    stop: CancellationToken,
}

impl std::ops::Deref for FastCalls {
    type Target = Fast;

    fn deref(&self) -> &Fast {
        &self.0
    }
}

impl FastCalls {
    fn new(handler: McpHandler, stop: CancellationToken) -> Self {
        Self(Arc::new(Fast {
            handler,
            peer: OnceLock::new(),
            running: Mutex::new(HashMap::new()),
            stop,
        }))
    }

    /// Takes over `tools/call` requests from now on.
    fn serve(&self, peer: Peer<RoleServer>) {
        let _ = self.peer.set(peer);
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn running(&self) -> usize {
        self.calls().len()
    }

    /// Starts `message` when it is a `tools/call` this path serves; otherwise hands it
    /// back for rmcp's loop. A `notifications/cancelled` for one of these calls cancels it
    /// here and still goes on to rmcp (which ignores an id it does not know).
    fn take(&self, message: ClientJsonRpcMessage, output: &mpsc::Sender<Vec<u8>>) -> Taken {
        let Some(peer) = self.peer.get() else {
            return Taken::Passed(message);
        };
        match message {
            JsonRpcMessage::Request(JsonRpcRequest {
                id,
                request: mut request @ ClientRequest::CallToolRequest(_),
                ..
            }) if request.get_meta().protocol_version().is_none() => {
                // rmcp's loop moves `_meta` (the progress token) and the extensions into the
                // context the same way. A request naming its own protocol version takes
                // rmcp's loop: only it can scope the handler to that version.
                let ct = self.stop.child_token();
                match self.calls().entry(id.clone()) {
                    Entry::Occupied(_) => return Taken::Duplicate(id),
                    Entry::Vacant(running) => {
                        running.insert(ct.clone());
                    }
                }
                let meta = std::mem::take(request.get_meta_mut());
                let extensions = std::mem::take(request.extensions_mut());
                let mut context = RequestContext::new(id.clone(), peer.clone());
                context.ct = ct;
                context.meta = meta;
                context.extensions = extensions;
                // The request's future in a box of its own, made here: the task then
                // stays small from the start. A task's future is allocated, moved and
                // overwritten as a whole, and the handler's future is several KB.
                let serving = self.clone();
                let call =
                    Box::pin(async move { serving.handler.handle_request(request, context).await });
                let fast = self.clone();
                let output = output.clone();
                tokio::spawn(async move {
                    let result = call.await;
                    if fast.calls().remove(&id).is_none() {
                        // Cancelled by the client: rmcp sends no response either.
                        return;
                    }
                    let message = match result {
                        Ok(result) => ServerJsonRpcMessage::response(result, id),
                        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
                    };
                    let _ = output.send(encode(&message)).await;
                });
                Taken::Started
            }
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ClientNotification::CancelledNotification(ref cancelled),
                ..
            }) => {
                if let Some(id) = &cancelled.params.request_id
                    && let Some(ct) = self.calls().remove(id)
                {
                    tracing::info!(%id, reason = cancelled.params.reason, "cancelled");
                    ct.cancel();
                }
                Taken::Passed(message)
            }
            message => Taken::Passed(message),
        }
    }
}

/// What [`FastCalls::take`] did with a message.
#[expect(
    clippy::large_enum_variant,
    reason = "returned and matched at once, as the message itself would be; a box would cost an allocation per message"
)]
enum Taken {
    /// Started a call.
    Started,
    /// A `tools/call` whose id a running call has: refused, the running one goes on.
    Duplicate(RequestId),
    /// For rmcp's loop.
    Passed(ClientJsonRpcMessage),
}

enum Parsed {
    Message(ClientJsonRpcMessage),
    Ignore,
    Reply(ServerJsonRpcMessage),
}

/// Parses one line (JSON-RPC 2.0 §5.1 error codes for what is not a message).
fn parse(line: &[u8]) -> Parsed {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Ignore;
    }
    if let Some(call) = parse_call(line) {
        return Parsed::Message(call);
    }
    let error = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        // rmcp reads a request with an id it cannot use (a float, an object, null...) as a
        // notification that ignores its `id`; such a request still gets an answer.
        Ok(JsonRpcMessage::Notification(_)) if has_id(line) => {
            return Parsed::Reply(invalid_id());
        }
        Ok(message) => return Parsed::Message(message),
        Err(error) => error,
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
        return Parsed::Reply(error_message(
            None,
            ErrorCode::PARSE_ERROR,
            format!("Parse error: {error}"),
        ));
    };
    let id = match value.get("id") {
        None => None,
        Some(id) => match serde_json::from_value::<RequestId>(id.clone()) {
            Ok(id) => Some(id),
            Err(_) => return Parsed::Reply(invalid_id()),
        },
    };
    let method = value.get("method").and_then(serde_json::Value::as_str);
    if id.is_none() && method.is_some() {
        // A notification rmcp does not model (another protocol's, or a newer MCP one):
        // notifications get no answer, so ignore it as other MCP SDKs do.
        tracing::debug!(method, "ignoring an unknown notification");
        return Parsed::Ignore;
    }
    Parsed::Reply(error_message(
        id,
        ErrorCode::INVALID_REQUEST,
        format!("Invalid request: {error}"),
    ))
}

/// Whether a JSON object has an `id` key, whatever its value.
fn has_id(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|value| value.get("id").is_some())
}

/// The answer to a request whose id is not a string or an integer that fits in 64 bits
/// (JSON-RPC 2.0 §4: such an id cannot be echoed, so the error carries `"id": null`).
fn invalid_id() -> ServerJsonRpcMessage {
    error_message(
        None,
        ErrorCode::INVALID_REQUEST,
        "Invalid request: `id` must be a string or an integer between -2^63 and 2^63-1".to_owned(),
    )
}

/// The answer to a request whose id is already used by one still running: the running
/// one keeps the id and still gets its own answer.
fn duplicate_id(id: &RequestId) -> ServerJsonRpcMessage {
    error_message(
        Some(id.clone()),
        ErrorCode::INVALID_REQUEST,
        format!(
            "Invalid request: id `{id}` is already used by a request that is still running; give each request a new id"
        ),
    )
}

/// A `tools/call` in its plain shape — the hot path — read straight into rmcp's types.
///
/// rmcp's own parse buffers the whole message, checks its shape, buffers it again for the
/// request's flattened fields and then tries every client request type in turn. This reads
/// the fields once. Anything else — another method, `_meta` (progress tokens), an extra or
/// duplicate key, an array — returns `None` and takes rmcp's parse, so both accept the same
/// messages and build the same request.
pub(crate) fn parse_call(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Call {
        #[allow(dead_code, reason = "checked by deserializing")]
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        #[allow(dead_code, reason = "checked by deserializing")]
        method: CallToolRequestMethod,
        params: ObjectOnly<CallToolRequestParams>,
    }
    if line.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    // `from_str`, not `from_slice`: serde_json skips ignored strings without checking their
    // UTF-8, so a line the general parse refuses would pass here (found by fuzzing, issue 14).
    let call: Call = serde_json::from_str(std::str::from_utf8(line).ok()?).ok()?;
    let params = call.params.0;
    if params.meta.is_some() {
        return None;
    }
    Some(JsonRpcMessage::request(
        ClientRequest::CallToolRequest(Request::new(params)),
        call.id,
    ))
}

/// `T` read from a JSON object only: serde would also read a struct from an array.
struct ObjectOnly<T>(T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = T;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Visit(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

fn error_message(id: Option<RequestId>, code: ErrorCode, message: String) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(ErrorData::new(code, message, None), id)
}

fn encode(message: &ServerJsonRpcMessage) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(256);
    let written = match message {
        // rmcp leaves the id out when there is none (as the 2026-07-28 draft allows);
        // JSON-RPC 2.0 §5, which every client reads, requires `"id": null`.
        JsonRpcMessage::Error(rmcp::model::JsonRpcError {
            id: None, error, ..
        }) => serde_json::to_writer(
            &mut bytes,
            &serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error}),
        ),
        message => serde_json::to_writer(&mut bytes, message),
    };
    if let Err(error) = written {
        // rmcp's message types only hold JSON values and strings.
        tracing::error!(%error, "cannot serialize a message");
        bytes.clear();
        return bytes;
    }
    bytes.push(b'\n');
    bytes
}

/// The process's standard streams, taken over for the protocol.
mod streams {
    use super::{AsyncRead, AsyncWrite, Context, Pin, Poll, ReadBuf, io};

    /// The protocol's input: a pipe or socket on the reactor, else tokio's stdin.
    pub(super) enum Input {
        #[cfg(target_os = "linux")]
        Pipe(tokio::net::unix::pipe::Receiver),
        #[cfg(unix)]
        Socket(tokio::net::UnixStream),
        Stdin(tokio::io::Stdin),
    }

    /// The protocol's output: a pipe or socket on the reactor, else a file handle.
    pub(super) enum Output {
        #[cfg(target_os = "linux")]
        Pipe(tokio::net::unix::pipe::Sender),
        #[cfg(unix)]
        Socket(tokio::net::UnixStream),
        File(tokio::fs::File),
        #[cfg(not(unix))]
        Stdout(tokio::io::Stdout),
    }

    /// Takes stdin and stdout for the protocol, then points file descriptor 1 at stderr so
    /// nothing else can write to the protocol stream.
    pub(super) fn protocol_streams() -> io::Result<(Input, Output)> {
        #[cfg(unix)]
        {
            let input = unix::input();
            let output = unix::output()?;
            unix::guard_standard_streams(&input);
            Ok((input, output))
        }
        #[cfg(not(unix))]
        {
            Ok((
                Input::Stdin(tokio::io::stdin()),
                Output::Stdout(tokio::io::stdout()),
            ))
        }
    }

    #[cfg(unix)]
    mod unix {
        use std::fs::OpenOptions;
        use std::os::fd::{AsFd, OwnedFd};
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

        use super::{Input, Output, io};

        enum Kind {
            Fifo,
            Socket,
            Other,
        }

        fn kind(fd: impl AsFd) -> Kind {
            let Ok(owned) = fd.as_fd().try_clone_to_owned() else {
                return Kind::Other;
            };
            match std::fs::File::from(owned).metadata().map(|m| m.file_type()) {
                Ok(kind) if kind.is_fifo() => Kind::Fifo,
                Ok(kind) if kind.is_socket() => Kind::Socket,
                _ => Kind::Other,
            }
        }

        /// A FIFO reopened through `/proc/self/fd` with `O_NONBLOCK`: its own open file
        /// description, so the flag does not leak to the process's standard streams.
        #[cfg(target_os = "linux")]
        fn reopen(fd: i32, write: bool) -> io::Result<OwnedFd> {
            let mut options = OpenOptions::new();
            options
                .read(!write)
                .write(write)
                .custom_flags(libc::O_NONBLOCK);
            Ok(options.open(format!("/proc/self/fd/{fd}"))?.into())
        }

        fn socket(fd: impl AsFd) -> io::Result<tokio::net::UnixStream> {
            let stream = std::os::unix::net::UnixStream::from(fd.as_fd().try_clone_to_owned()?);
            stream.set_nonblocking(true)?;
            tokio::net::UnixStream::from_std(stream)
        }

        pub(super) fn input() -> Input {
            let stdin = std::io::stdin();
            match kind(&stdin) {
                #[cfg(target_os = "linux")]
                Kind::Fifo => match reopen(0, false)
                    .and_then(tokio::net::unix::pipe::Receiver::from_owned_fd)
                {
                    Ok(pipe) => Input::Pipe(pipe),
                    Err(_) => Input::Stdin(tokio::io::stdin()),
                },
                Kind::Socket => {
                    socket(&stdin).map_or_else(|_| Input::Stdin(tokio::io::stdin()), Input::Socket)
                }
                _ => Input::Stdin(tokio::io::stdin()),
            }
        }

        pub(super) fn output() -> io::Result<Output> {
            let stdout = std::io::stdout();
            let fallback = || -> io::Result<Output> {
                let file = std::fs::File::from(stdout.as_fd().try_clone_to_owned()?);
                Ok(Output::File(tokio::fs::File::from_std(file)))
            };
            match kind(&stdout) {
                #[cfg(target_os = "linux")]
                Kind::Fifo => {
                    match reopen(1, true).and_then(tokio::net::unix::pipe::Sender::from_owned_fd) {
                        Ok(pipe) => Ok(Output::Pipe(pipe)),
                        Err(_) => fallback(),
                    }
                }
                Kind::Socket => socket(&stdout).map(Output::Socket).or_else(|_| fallback()),
                _ => fallback(),
            }
        }

        /// Points fd 1 at stderr, and fd 0 at `/dev/null` when the protocol has its own
        /// handle on the input, so no library or child process touches the protocol streams.
        pub(super) fn guard_standard_streams(input: &Input) {
            if let Err(error) = nix::unistd::dup2_stdout(std::io::stderr()) {
                tracing::warn!(%error, "could not redirect stdout to stderr");
            }
            if !matches!(input, Input::Stdin(_))
                && let Ok(null) = std::fs::File::open("/dev/null")
                && let Err(error) = nix::unistd::dup2_stdin(&null)
            {
                tracing::warn!(%error, "could not detach stdin");
            }
        }
    }

    impl AsyncRead for Input {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            match self.get_mut() {
                #[cfg(target_os = "linux")]
                Self::Pipe(pipe) => Pin::new(pipe).poll_read(cx, buf),
                #[cfg(unix)]
                Self::Socket(socket) => Pin::new(socket).poll_read(cx, buf),
                Self::Stdin(stdin) => Pin::new(stdin).poll_read(cx, buf),
            }
        }
    }

    impl AsyncWrite for Output {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            match self.get_mut() {
                #[cfg(target_os = "linux")]
                Self::Pipe(pipe) => Pin::new(pipe).poll_write(cx, buf),
                #[cfg(unix)]
                Self::Socket(socket) => Pin::new(socket).poll_write(cx, buf),
                Self::File(file) => Pin::new(file).poll_write(cx, buf),
                #[cfg(not(unix))]
                Self::Stdout(stdout) => Pin::new(stdout).poll_write(cx, buf),
            }
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            match self.get_mut() {
                #[cfg(target_os = "linux")]
                Self::Pipe(pipe) => Pin::new(pipe).poll_flush(cx),
                #[cfg(unix)]
                Self::Socket(socket) => Pin::new(socket).poll_flush(cx),
                Self::File(file) => Pin::new(file).poll_flush(cx),
                #[cfg(not(unix))]
                Self::Stdout(stdout) => Pin::new(stdout).poll_flush(cx),
            }
        }

        fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            match self.get_mut() {
                #[cfg(target_os = "linux")]
                Self::Pipe(pipe) => Pin::new(pipe).poll_shutdown(cx),
                #[cfg(unix)]
                Self::Socket(socket) => Pin::new(socket).poll_shutdown(cx),
                Self::File(file) => Pin::new(file).poll_shutdown(cx),
                #[cfg(not(unix))]
                Self::Stdout(stdout) => Pin::new(stdout).poll_shutdown(cx),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reply to `line`, as it is written out.
    fn reply(line: &str) -> serde_json::Value {
        match parse(line.as_bytes()) {
            Parsed::Reply(message) => serde_json::from_slice(&encode(&message)).unwrap(),
            Parsed::Message(_) => panic!("`{line}` parsed as a message"),
            Parsed::Ignore => panic!("`{line}` was ignored"),
        }
    }

    #[test]
    fn malformed_json_is_a_parse_error() {
        let error = reply("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
        assert_eq!(error["error"]["code"], -32700);
        // Regression test for issue 14, item 15: JSON-RPC 2.0 requires `"id": null`.
        assert_eq!(error.get("id"), Some(&serde_json::Value::Null), "{error}");
    }

    // Regression test for issue 14 (fuzzing, target `jsonrpc_parse`): the fast path took a
    // call whose ignored `task` object had a key that is not UTF-8, a line the general parse
    // refuses.
    #[test]
    fn the_fast_path_leaves_a_line_that_is_not_utf8_to_the_general_parse() {
        let mut line = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"task":{"t"#.to_vec();
        line.push(0xd9);
        line.extend_from_slice(br#"tl":1000}}}"#);
        assert!(parse_call(&line).is_none());
        assert!(serde_json::from_slice::<ClientJsonRpcMessage>(&line).is_err());
    }

    // Regression test for issue 14, item 15: a request whose id cannot be echoed was
    // taken for a notification and got no answer.
    #[test]
    fn requests_with_unusable_ids_are_invalid_requests_with_a_null_id() {
        let ids = [
            "{}",
            "[1]",
            "1.5",
            "true",
            "null",
            "18446744073709551616",
            "-9223372036854775809",
        ];
        for id in ids {
            for method in ["ping", "tools/call", "tools/list", "no/such/method"] {
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"x"}}}}"#
                );
                let error = reply(&line);
                assert_eq!(error["error"]["code"], -32600, "{line}: {error}");
                assert_eq!(
                    error.get("id"),
                    Some(&serde_json::Value::Null),
                    "{line}: {error}"
                );
            }
        }
        // Integers (also in float form, as rmcp reads them) and strings are ids.
        for id in ["1", "\"a\"", "-5", "9223372036854775807"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert!(
                matches!(
                    parse(line.as_bytes()),
                    Parsed::Message(JsonRpcMessage::Request(_))
                ),
                "{line}"
            );
        }
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request() {
        assert_eq!(reply("{\"foo\": 1}")["error"]["code"], -32600);
        assert_eq!(reply("[1, 2]")["error"]["code"], -32600);
    }

    #[test]
    fn blank_lines_and_unknown_notifications_get_no_answer() {
        assert!(matches!(parse(b"\r\n"), Parsed::Ignore));
        let unknown = br#"{"jsonrpc":"2.0","method":"$/lsp/thing","params":{}}"#;
        assert!(!matches!(parse(unknown), Parsed::Reply(_)));
    }

    #[test]
    fn a_request_parses_with_bom_and_crlf() {
        let line = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n";
        assert!(matches!(
            parse(line),
            Parsed::Message(JsonRpcMessage::Request(_))
        ));
    }

    #[test]
    fn plain_tool_calls_parse_as_rmcp_parses_them() {
        let lines: [&[u8]; 4] = [
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","n":[1,{"a":null}]}}}"#,
            br#"{"method":"tools/call","params":{"name":"x"},"id":"abc","jsonrpc":"2.0"}"#,
            br#" {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null,"extra":1}}"#,
            br#"{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"x","requestState":"s"}}"#,
        ];
        for line in lines {
            let fast = parse_call(line).expect("the fast path takes a plain call");
            let general = serde_json::from_slice::<ClientJsonRpcMessage>(line).unwrap();
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&general).unwrap()
            );
            assert!(matches!(
                parse(line),
                Parsed::Message(JsonRpcMessage::Request(_))
            ));
        }
    }

    #[test]
    fn unusual_tool_calls_take_the_general_parse() {
        let lines: [&[u8]; 7] = [
            // a progress token lives in `_meta`, which rmcp moves into the request's extensions
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x"}}"#,
            br#"["2.0",1,"tools/call",{"name":"x"}]"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[null,"x"]}"#,
            br#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
        ];
        for line in lines {
            assert!(
                parse_call(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        assert_eq!(
            reply(r#"["2.0",1,"tools/call",{"name":"x"}]"#)["error"]["code"],
            -32600
        );
    }
}
