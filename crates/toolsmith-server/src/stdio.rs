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
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, GetExtensions, GetMeta,
    JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{RequestContext, ServerInitializeError, Service, serve_server_with_ct};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleServer};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::ServeError;
use crate::handler::McpHandler;
use crate::jsonrpc::{Parsed, duplicate_id, encode, error_message, parse};
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
    let handler = McpHandler::new(state.clone(), toolsmith_model::Transport::Stdio);
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
