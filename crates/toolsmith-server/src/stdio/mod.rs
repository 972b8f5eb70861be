//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout, run by rmcp's service loop
//! over a transport of our own.
//!
//! We own the transport (not rmcp's `AsyncRwTransport`) for three reasons:
//! - A line that is not JSON is answered with `-32700` (rmcp ignores it silently),
//!   well-formed JSON that is not a message with `-32600`, and the server goes on
//!   (docs/errors.md, "JSON-RPC errors").
//! - stdout carries protocol messages only: the protocol gets its own handle on the output,
//!   and file descriptor 1 is pointed at stderr, so a stray write (a library's `println!`,
//!   a child process that inherits stdout) cannot corrupt the stream.
//! - Speed: pipes and sockets are driven by tokio's reactor without the blocking pool
//!   (rmcp's `stdio_pipes` does this for FIFOs only; Node-based clients hand their servers
//!   UNIX sockets), and responses that are ready together go out in one write.
//!
//! The transport speaks rmcp's message types. rmcp's service loop runs the handshake and
//! every request but one: `tools/call`, the hot path, is dispatched by the transport itself
//! ([`fast`]) to the same handler on the direct path (`direct.rs`), on a task of its own,
//! and its response goes straight to the output queue. That skips the loop's
//! per-request work (a large task per request, two channel hops, a second task per
//! response) while keeping rmcp's behaviour: the tool talks to the client through the
//! connection's `Peer` (progress, logging, sampling, elicitation, roots), and
//! `notifications/cancelled` stops the call and suppresses its response, as rmcp does.

mod fast;
mod lines;
mod streams;

use std::io;
use std::time::Duration;

use rmcp::service::{ServerInitializeError, serve_server_with_ct};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::ServeError;
use crate::handler::{McpHandler, Transport};
use crate::state::ServerState;
use fast::FastCalls;
use lines::LineTransport;

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
    let handler = McpHandler::new(state.clone(), Transport::Stdio);
    let fast = FastCalls::new(handler.clone(), stop.child_token());
    let transport = LineTransport::new(input, queue, fast.clone(), state.clone());
    // rmcp's loop gets a token of its own: its `RunningService` cancels that token when it
    // is dropped (at the end of input too), which must not cancel the calls on the fast path.
    let service_stop = stop.child_token();
    let result = match serve_server_with_ct(
        crate::telemetry::Traced::new(handler, crate::telemetry::Wire::Pipe),
        transport,
        service_stop,
    )
    .await
    {
        Ok(running) => {
            state.remember_peer(running.peer());
            fast.serve(running.peer().clone());
            let quit = running.waiting().await;
            // The transport ends rmcp's loop at the end of input only once every call read
            // is answered; a call left here is one whose input failed, given 5 s as rmcp
            // gives its own. On a stop, calls are cancelled at once.
            if !stop.is_cancelled() && fast.running() > 0 {
                state.drain(Duration::from_secs(5)).await;
            }
            fast.stop();
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
    crate::signal::shutdown_signal().await;
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
