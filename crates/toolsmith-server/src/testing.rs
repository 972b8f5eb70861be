//! Hooks for this crate's own integration tests. Not an API: hidden from the docs, may
//! change at any time. A server swaps what it serves with [`ServerState::replace`].
//!
//! [`ServerState::replace`]: crate::ServerState::replace

use std::future::Future;
use std::sync::Arc;

use toolsmith_model::Catalog;

use crate::state::ServerState;

/// Swaps only the catalog, as a reload that changed tools alone would.
pub trait ReplaceCatalog {
    /// Serves `catalog` from now on and tells every connected client that the tool list
    /// changed (`notifications/tools/list_changed`). Calls already running finish on the
    /// catalog they started with.
    fn replace_catalog(&self, catalog: Arc<Catalog>) -> impl Future<Output = ()> + Send;
}

impl ReplaceCatalog for ServerState {
    fn replace_catalog(&self, catalog: Arc<Catalog>) -> impl Future<Output = ()> + Send {
        self.replace_tools(catalog)
    }
}
