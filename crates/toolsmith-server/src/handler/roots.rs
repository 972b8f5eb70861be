//! The client's root (docs/tools.md, "Command tools"): command tools run in the client's
//! first `file://` root that is a directory here, asked for with `roots/list` once per
//! session and again after `notifications/roots/list_changed`. Replicas that share their
//! state keep the answer there, so the next replica to serve the session does not ask
//! again (docs/deploy.md).

use std::path::PathBuf;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::{McpHandler, Transport, session_of};

/// What the session knows of the client's root.
#[derive(Debug, Clone, Default)]
pub(super) enum ClientRoot {
    /// Not asked yet (or the client said its roots changed).
    #[default]
    Unasked,
    /// The answer: a local directory, or none usable.
    Known(Option<PathBuf>),
}

/// How long a call waits for the client's `roots/list` before running in the tools folder.
const ROOTS_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

impl McpHandler {
    /// Whether the client's root is known, so a call needs no `roots/list` first.
    pub(crate) fn knows_client_root(&self) -> bool {
        self.root
            .try_lock()
            .is_ok_and(|root| matches!(*root, ClientRoot::Known(_)))
    }

    /// The client's first `file://` root that is a directory here (command tools run in the
    /// client's root: docs/tools.md, "Command tools"), asked for once per session and again
    /// after `notifications/roots/list_changed`; `None` when the client has no roots capability
    /// or no such root, and the tools folder is used.
    pub(super) async fn client_root(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<PathBuf> {
        let declared = context
            .client_capabilities()
            .as_ref()
            .is_some_and(|capabilities| capabilities.roots.is_some());
        if !declared {
            return None;
        }
        let mut cached = self.root.lock().await;
        if let ClientRoot::Known(known) = &*cached {
            return known.clone();
        }
        let shared = match &self.transport {
            Transport::HttpSession(sessions) => session_of(context).map(|id| (sessions, id)),
            _ => None,
        };
        if let Some((sessions, id)) = shared
            && let Some(uris) = sessions.shared_roots(id).await
        {
            let found = uris.iter().find_map(|uri| directory_of(uri));
            *cached = ClientRoot::Known(found.clone());
            return found;
        }
        let found = match tokio::time::timeout(ROOTS_PATIENCE, context.peer.list_roots()).await {
            Ok(Ok(result)) => {
                if let Some((sessions, id)) = shared {
                    let uris: Vec<String> =
                        result.roots.iter().map(|root| root.uri.clone()).collect();
                    sessions.share_roots(id, Some(&uris)).await;
                }
                result.roots.iter().find_map(|root| directory_of(&root.uri))
            }
            Ok(Err(error)) => {
                tracing::debug!(%error, "roots/list failed; tools run in the tools folder");
                None
            }
            Err(_) => {
                tracing::debug!("no answer to roots/list; tools run in the tools folder");
                None
            }
        };
        *cached = ClientRoot::Known(found.clone());
        found
    }
}

/// The local directory a `file://` URI names, when it is one.
fn directory_of(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let path = PathBuf::from(percent_decode(path)?);
    path.is_dir().then_some(path)
}

/// `%20` → a space; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}
