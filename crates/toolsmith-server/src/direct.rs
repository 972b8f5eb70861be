//! The direct path for `tools/call`: a plain call is handed to the connection's handler
//! through rmcp's own `Service::handle_request` instead of going through rmcp's service loop
//! (stdio) or session worker (Streamable HTTP), which cost more than the call on this hot
//! path. Both transports take a call off the wire themselves; this module is what they share
//! once they have: the calls running, the request context rmcp would build, cancellation,
//! and the response (none for a cancelled call, as rmcp sends none).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{
    CancelledNotificationParam, ClientRequest, ErrorData, GetExtensions, GetMeta, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Whether the direct path may serve `request`: a `tools/call` that does not name its own
/// protocol version (only rmcp's loop can scope the handler to that version).
pub(crate) fn takes(request: &ClientRequest) -> bool {
    matches!(request, ClientRequest::CallToolRequest(_))
        && request.get_meta().protocol_version().is_none()
}

/// The calls running on the direct path of one connection or session, by request id.
/// Cancelling one removes it, so its response is dropped. Cheap to clone; clones share the
/// calls.
#[derive(Clone, Default)]
pub(crate) struct Calls(Arc<Running>);

#[derive(Default)]
struct Running {
    calls: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Told whenever a call leaves, for [`Calls::idle`].
    left: Notify,
}

/// A call on the direct path, from [`Calls::start`] until [`Call::finish`]; dropped
/// unfinished (the client hung up), it leaves the running calls all the same.
pub(crate) struct Call {
    calls: Calls,
    /// `None` once finished.
    id: Option<RequestId>,
}

impl Calls {
    fn lock(&self) -> MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.0.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes the call `id`; its token when it was running.
    fn remove(&self, id: &RequestId) -> Option<CancellationToken> {
        let removed = self.lock().remove(id);
        if removed.is_some() {
            self.0.left.notify_waiters();
        }
        removed
    }

    /// Waits until no call is running. Cancel-safe.
    pub(crate) async fn idle(&self) {
        loop {
            let left = self.0.left.notified();
            if self.len() == 0 {
                return;
            }
            left.await;
        }
    }

    /// How many calls are running.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether a call with this id is running.
    pub(crate) fn contains(&self, id: &RequestId) -> bool {
        self.lock().contains_key(id)
    }

    /// Starts the call `id` of `request`, cancelled with `stop`, and builds its request
    /// context as rmcp's service loop does: `_meta` (the progress token) and the extensions
    /// move from the request into it. `Err` with the id when a call with that id is
    /// running: the running one goes on.
    pub(crate) fn start(
        &self,
        id: RequestId,
        request: &mut ClientRequest,
        peer: Peer<RoleServer>,
        stop: &CancellationToken,
    ) -> Result<(Call, RequestContext<RoleServer>), RequestId> {
        let ct = stop.child_token();
        match self.lock().entry(id.clone()) {
            Entry::Occupied(_) => return Err(id),
            Entry::Vacant(running) => {
                running.insert(ct.clone());
            }
        }
        let mut context = RequestContext::new(id.clone(), peer);
        context.ct = ct;
        context.meta = std::mem::take(request.get_meta_mut());
        context.extensions = std::mem::take(request.extensions_mut());
        let call = Call {
            calls: self.clone(),
            id: Some(id),
        };
        Ok((call, context))
    }

    /// Cancels the call a `notifications/cancelled` names, if it runs here.
    pub(crate) fn cancel(&self, cancelled: &CancelledNotificationParam) {
        if let Some(id) = &cancelled.request_id
            && let Some(ct) = self.remove(id)
        {
            tracing::info!(%id, reason = cancelled.reason, "cancelled");
            ct.cancel();
        }
    }
}

impl Call {
    /// The call's response to `result`; `None` when the client cancelled the call, which
    /// then gets no response (as rmcp sends none).
    pub(crate) fn finish(
        mut self,
        result: Result<ServerResult, ErrorData>,
    ) -> Option<ServerJsonRpcMessage> {
        let id = self.id.take()?;
        let running = self.calls.remove(&id).is_some();
        running.then(|| match result {
            Ok(result) => ServerJsonRpcMessage::response(result, id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        })
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            self.calls.remove(id);
        }
    }
}
