//! `tools/call` requests served by the stdio transport, not rmcp's service loop (see the
//! module documentation of `stdio`): each runs on the direct path (`direct.rs`) on a task of
//! its own, and its response goes straight to the output queue.

use std::sync::{Arc, OnceLock};

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest,
    RequestId,
};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::direct::{self, Calls};
use crate::handler::McpHandler;
use crate::jsonrpc::encode;
use crate::telemetry::Wire;

/// The connection's fast path. Cheap to clone; all clones share the calls.
#[derive(Clone)]
pub(super) struct FastCalls(Arc<Fast>);

pub(super) struct Fast {
    handler: McpHandler,
    /// The connection's peer, once the handshake is done; until then every request takes
    /// rmcp's loop.
    peer: OnceLock<Peer<RoleServer>>,
    calls: Calls,
    /// Cancels every call (the server stops).
    stop: CancellationToken,
}

impl FastCalls {
    pub(super) fn new(handler: McpHandler, stop: CancellationToken) -> Self {
        Self(Arc::new(Fast {
            handler,
            peer: OnceLock::new(),
            calls: Calls::default(),
            stop,
        }))
    }

    /// Takes over `tools/call` requests from now on.
    pub(super) fn serve(&self, peer: Peer<RoleServer>) {
        let _ = self.0.peer.set(peer);
    }

    /// How many calls are running.
    pub(super) fn running(&self) -> usize {
        self.0.calls.len()
    }

    /// Waits until no call is running here. Cancel-safe.
    pub(super) async fn idle(&self) {
        self.0.calls.idle().await;
    }

    /// Whether a call with this id is running here.
    pub(super) fn is_running(&self, id: &RequestId) -> bool {
        self.0.calls.contains(id)
    }

    /// Cancels every call.
    pub(super) fn stop(&self) {
        self.0.stop.cancel();
    }

    /// Starts `message` when it is a `tools/call` this path serves; otherwise hands it
    /// back for rmcp's loop. A `notifications/cancelled` for one of these calls cancels it
    /// here and still goes on to rmcp (which ignores an id it does not know).
    pub(super) fn take(
        &self,
        message: ClientJsonRpcMessage,
        output: &mpsc::Sender<Vec<u8>>,
    ) -> Taken {
        let Some(peer) = self.0.peer.get() else {
            return Taken::Passed(message);
        };
        match message {
            JsonRpcMessage::Request(JsonRpcRequest {
                id, mut request, ..
            }) if direct::takes(&request) => {
                let (call, context) =
                    match self
                        .0
                        .calls
                        .start(id, &mut request, peer.clone(), &self.0.stop)
                    {
                        Ok(started) => started,
                        Err(id) => return Taken::Duplicate(id),
                    };
                // The request's future in a box of its own, made here: the task then
                // stays small from the start. A task's future is allocated, moved and
                // overwritten as a whole, and the handler's future is several KB.
                let serving = self.clone();
                let handling = Box::pin(async move {
                    let handler = &serving.0.handler;
                    crate::telemetry::handle(handler, request, context, Wire::Pipe).await
                });
                let output = output.clone();
                tokio::spawn(async move {
                    let result = handling.await;
                    if let Some(message) = call.finish(result) {
                        let _ = output.send(encode(&message)).await;
                    }
                });
                Taken::Started
            }
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ClientNotification::CancelledNotification(ref cancelled),
                ..
            }) => {
                self.0.calls.cancel(&cancelled.params);
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
pub(super) enum Taken {
    /// Started a call.
    Started,
    /// A `tools/call` whose id a running call has: refused, the running one goes on.
    Duplicate(RequestId),
    /// For rmcp's loop.
    Passed(ClientJsonRpcMessage),
}
