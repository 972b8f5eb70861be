//! A server that answers before its folder is loaded (docs/performance.md): it
//! answers `initialize` from its options, `tool_search` from a search index kept from an
//! earlier run (docs/search.md, "The kept index"), and the rest once the folder is served;
//! and the search index built ahead of the first search.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use toolsmith_model::{
    CallOutcome, Catalog, EvaluatorSettings, JsonObject, Prompts, Resources, SearchSettings,
};
use toolsmith_search::{IndexSource, KeepIndex, KeptIndex};

use super::{ServerOptions, ServerState};
use crate::content::Content;

impl ServerState {
    /// A server of `options` whose folder is still loading: it answers `initialize` (which
    /// needs only `options`) at once, and reads nothing else over stdio until
    /// [`ServerState::loaded`] serves the folder (a folder of thousands of tools
    /// no longer delays the handshake; docs/performance.md).
    pub fn loading(options: ServerOptions) -> Self {
        let state = Self::new(Arc::new(Catalog::new(Vec::new(), Vec::new())), options);
        state.0.ready.send_replace(false);
        state
    }

    /// Serves the folder a [`ServerState::loading`] server was waiting for, with the
    /// `[search]` and `[evaluator]` settings it loaded with. Nothing is announced: no
    /// client has seen a list yet.
    pub fn loaded(
        &self,
        catalog: Arc<Catalog>,
        (prompts, resources): (Arc<Prompts>, Arc<Resources>),
        (search, evaluator): (SearchSettings, EvaluatorSettings),
    ) {
        self.set_search(search);
        self.set_evaluator(evaluator);
        self.0
            .content
            .store(Arc::new(Content::new(prompts, resources)));
        let source = IndexSource {
            offered: self
                .0
                .early
                .send_replace(None)
                .map(|kept| Arc::clone(kept.index())),
            built: self
                .0
                .keep_built
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        };
        self.0
            .published
            .store(Arc::new(self.to_publish(catalog, source)));
        prepare_search(&self.0.published.load().catalog, Duration::ZERO);
        self.0.ready.send_replace(true);
    }

    /// While a [`ServerState::loading`] server loads its folder, answers `tool_search` from
    /// `kept`, an index of the same folder kept from an earlier run, and serves the folder
    /// with its index instead of building one, when it indexes the very same tools
    /// (docs/search.md, "The kept index").
    pub fn kept_index(&self, kept: KeptIndex) {
        if !self.is_ready() {
            self.0.early.send_replace(Some(Arc::new(kept)));
        }
    }

    /// Hands `keep` the index the `tool_search` of the folder a [`ServerState::loading`]
    /// server loads builds, if it builds one, to keep it for the next run.
    pub fn keep_search_index(&self, keep: KeepIndex) {
        *self
            .0
            .keep_built
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(keep);
    }

    /// `tool_search`'s answer to `arguments` from a kept index while the folder loads
    /// ([`ServerState::kept_index`]): `None` without one, once the folder is served, or
    /// for arguments only validation may answer.
    pub(crate) fn search_while_loading(&self, arguments: &JsonObject) -> Option<CallOutcome> {
        self.0.early.borrow().as_ref()?.search(arguments)
    }

    /// Waits until `tool_search` can be answered while the folder loads, or the folder is
    /// served. Cancel-safe.
    pub(crate) async fn searchable(&self) {
        let mut early = self.0.early.subscribe();
        tokio::select! {
            _ = early.wait_for(Option::is_some) => {}
            () = self.ready() => {}
        }
    }

    /// Waits until the served catalog's `tool_search` has its index (built, or taken from
    /// a kept one), when it has `tool_search`.
    pub fn wait_for_search_index(&self) {
        let catalog = Arc::clone(&self.0.published.load().catalog);
        if let Some(entry) = catalog.get(toolsmith_search::TOOL_SEARCH) {
            entry.tool().prepare();
        }
    }

    /// Waits until the folder is served ([`ServerState::loading`]); at once for a server
    /// built with its folder. Cancel-safe.
    pub(crate) async fn ready(&self) {
        let mut ready = self.0.ready.subscribe();
        // Only an error when the sender is gone, which `self` holds.
        let _ = ready.wait_for(|ready| *ready).await;
    }

    /// Whether the folder is served ([`ServerState::loading`]).
    pub(crate) fn is_ready(&self) -> bool {
        *self.0.ready.borrow()
    }
}

/// How long a reloaded catalog must stay served before its `tool_search` index is built
/// ahead of the first search: edits in a row build it once, not once each.
pub(super) const RELOAD_QUIET: Duration = Duration::from_secs(1);

/// Builds the index of `catalog`'s `tool_search`, if it has one, on a thread of its own
/// once `quiet` has passed with `catalog` still served: a folder of thousands of tools is
/// indexed while its client lists it, not in its first search.
pub(super) fn prepare_search(catalog: &Arc<Catalog>, quiet: Duration) {
    if catalog.get(toolsmith_search::TOOL_SEARCH).is_none() {
        return;
    }
    let catalog = Arc::downgrade(catalog);
    let spawned = std::thread::Builder::new()
        .name("toolsmith-index".into())
        .spawn(move || {
            std::thread::sleep(quiet);
            // A catalog no longer served (a reload replaced it) is dropped: no index for it.
            if let Some(catalog) = catalog.upgrade()
                && let Some(entry) = catalog.get(toolsmith_search::TOOL_SEARCH)
            {
                entry.tool().prepare();
            }
        });
    if let Err(error) = spawned {
        tracing::debug!(%error, "the search index is built by the first search");
    }
}
