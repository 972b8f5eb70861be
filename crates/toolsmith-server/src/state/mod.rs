//! What every connection of a server shares: the catalog, prompts and resources behind
//! swappable handles (hot reload replaces them whole), the server's identity, the call
//! limits, the peers that must hear `notifications/*/list_changed`, and the resources each
//! session subscribed to.
//!
//! Capabilities: `tools`, `prompts` and `resources` (with `listChanged`, and `subscribe`
//! for resources) and `completions` are always declared, even for a folder without prompts
//! or resources: their lists are then empty, and a `--watch` reload that adds the first
//! prompt can announce it (capabilities cannot change after initialization).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{Peer, RoleServer};
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;
use toolsmith_model::{Catalog, EvaluatorSettings, Prompts, Resources, SearchSettings};
use toolsmith_search::{IndexSource, KeepIndex, KeptIndex};

mod loading;

use loading::{RELOAD_QUIET, prepare_search};

use crate::content::Content;
use crate::convert::{PAGE_SIZE, Published};
use crate::metrics::{Gauges, Metrics, Reload};
use crate::pool::CallPool;

/// How many tool calls may run at once unless configured otherwise.
pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;

/// How a server presents itself and how much work it takes on.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// `serverInfo.name` (`[server] name` in `toolsmith.toml`).
    pub name: String,
    /// `serverInfo.version` (`[server] version`).
    pub version: String,
    /// Sent to clients at initialization (`[server] instructions`).
    pub instructions: Option<String>,
    /// Where command tools run (until the client's MCP roots are used).
    pub working_dir: PathBuf,
    /// Calls running at once, over all connections; more wait for a free slot. One tool
    /// gets at most three quarters of them unless its `max_concurrency` says otherwise.
    pub max_concurrent_calls: usize,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// When tools go behind `tool_search` (`[search]`, `serve --search`).
    pub search: SearchSettings,
    /// Code mode's `run_code` tool (`[evaluator]`, `serve --code-mode`; docs/code-mode.md).
    pub evaluator: EvaluatorSettings,
    /// Rate limits and quotas (`[limits]`; docs/limits.md), and where they are counted.
    pub limits: crate::limits::Limits,
    /// How long MCP tasks are kept, and where (docs/tasks.md).
    pub tasks: crate::tasks::TaskSettings,
    /// The audit log (`--audit-log`, `[audit]`; docs/http.md, "Audit log"), if any.
    pub audit: Option<crate::audit::AuditLog>,
}

impl ServerOptions {
    /// Options with every default: name `toolsmith`, this crate's version, no
    /// instructions, command tools running in `working_dir`,
    /// [`DEFAULT_MAX_CONCURRENT_CALLS`], [`PAGE_SIZE`] tools a page and the default
    /// `[search]` settings. `toolsmith serve` fills them from the folder's `toolsmith.toml`.
    pub fn new(working_dir: PathBuf) -> Self {
        Self {
            name: "toolsmith".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            working_dir,
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            page_size: PAGE_SIZE,
            search: SearchSettings::default(),
            evaluator: EvaluatorSettings::default(),
            limits: crate::limits::Limits::default(),
            tasks: crate::tasks::TaskSettings::default(),
            audit: None,
        }
    }
}

/// The state shared by every connection of one server; cheap to clone.
#[derive(Clone)]
pub struct ServerState(Arc<Shared>);

struct Shared {
    published: ArcSwap<Published>,
    content: ArcSwap<Content>,
    info: ServerConfig,
    working_dir: PathBuf,
    page_size: usize,
    /// `[search]` as last loaded (a reload may change it).
    search: Mutex<SearchSettings>,
    /// `[evaluator]` as last loaded (a reload may change it).
    evaluator: Mutex<EvaluatorSettings>,
    /// One permit per running call; a permit is released when the tool's thread ends or
    /// the call is abandoned (watchdog, cancellation) while the pool has room for one more
    /// abandoned thread.
    calls: Arc<Semaphore>,
    /// `calls`' size, for each tool's own share of it ([`crate::convert::Published`]).
    max_calls: usize,
    pool: CallPool,
    limits: crate::limits::Limits,
    in_flight: InFlight,
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Sessions that subscribed to resources, with their subscribed URIs.
    subscribers: Mutex<Vec<(Peer<RoleServer>, Subscriptions)>>,
    /// Cancelled when the server shuts down: closes HTTP streams and sessions.
    shutdown: CancellationToken,
    /// Set when shutting down begins ([`ServerState::drain`]): `/readyz` says so at once.
    draining: AtomicBool,
    /// What a reload changed, for 2026-07-28 `subscriptions/listen` streams.
    changes: tokio::sync::broadcast::Sender<ListChanges>,
    metrics: Metrics,
    /// The MCP tasks of calls that became tasks (docs/tasks.md).
    tasks: crate::tasks::Tasks,
    /// Whether the folder is served: false from [`ServerState::loading`] until
    /// [`ServerState::loaded`]. Over stdio, nothing after `initialize` is read before then.
    ready: tokio::sync::watch::Sender<bool>,
    /// A search index kept from an earlier run of the folder being loaded: until the
    /// folder is served, `tool_search` is answered from it over stdio (docs/search.md,
    /// "The kept index"), and the first catalog published takes its index.
    early: tokio::sync::watch::Sender<Option<Arc<KeptIndex>>>,
    /// Handed the index the first published catalog's `tool_search` builds, to keep it.
    keep_built: Mutex<Option<KeepIndex>>,
    audit: Option<crate::audit::AuditLog>,
}

impl std::fmt::Debug for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerState")
            .field("catalog", &self.0.published.load().catalog)
            .field("working_dir", &self.0.working_dir)
            .finish_non_exhaustive()
    }
}

impl ServerState {
    /// A server for `catalog`.
    pub fn new(catalog: Arc<Catalog>, options: ServerOptions) -> Self {
        let ServerOptions {
            name,
            version,
            instructions,
            working_dir,
            max_concurrent_calls,
            page_size,
            search,
            evaluator,
            limits,
            tasks,
            audit,
        } = options;
        #[expect(
            deprecated,
            reason = "rmcp 3.11 marks logging deprecated (SEP-2577); clients still use it"
        )]
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_completions()
            .enable_tasks()
            .enable_skills()
            .build();
        let mut info =
            ServerConfig::new(capabilities).with_server_info(Implementation::new(name, version));
        if let Some(instructions) = instructions {
            info = info.with_instructions(instructions);
        }
        let metrics = Metrics::new();
        let state = Self(Arc::new(Shared {
            published: ArcSwap::from_pointee(Published::new(
                catalog,
                search,
                &evaluator,
                max_concurrent_calls,
                IndexSource::default(),
            )),
            metrics,
            max_calls: max_concurrent_calls,
            search: Mutex::new(search),
            evaluator: Mutex::new(evaluator),
            content: ArcSwap::from_pointee(Content::empty()),
            info,
            working_dir,
            page_size,
            calls: Arc::new(Semaphore::new(
                max_concurrent_calls.clamp(1, Semaphore::MAX_PERMITS),
            )),
            // As many threads again may be stuck in abandoned calls; past that, abandoned
            // calls keep their slots and new calls get "busy".
            pool: CallPool::new(max_concurrent_calls, max_concurrent_calls),
            limits,
            in_flight: InFlight::default(),
            peers: Mutex::new(Vec::new()),
            subscribers: Mutex::new(Vec::new()),
            shutdown: CancellationToken::new(),
            draining: AtomicBool::new(false),
            changes: tokio::sync::broadcast::channel(16).0,
            tasks: crate::tasks::Tasks::new(&tasks),
            ready: tokio::sync::watch::Sender::new(true),
            early: tokio::sync::watch::Sender::new(None),
            keep_built: Mutex::new(None),
            audit,
        }));
        prepare_search(&state.0.published.load().catalog, Duration::ZERO);
        state
    }

    /// A server for `catalog`, `prompts` and `resources` (a tools folder's), with
    /// `options`.
    pub fn with_content(
        catalog: Arc<Catalog>,
        prompts: Arc<Prompts>,
        resources: Arc<Resources>,
        options: ServerOptions,
    ) -> Self {
        let state = Self::new(catalog, options);
        state
            .0
            .content
            .store(Arc::new(Content::new(prompts, resources)));
        state
    }

    /// The prompts being served.
    pub fn prompts(&self) -> Arc<Prompts> {
        Arc::clone(&self.0.content.load().prompts)
    }

    /// The resources being served.
    pub fn resources(&self) -> Arc<Resources> {
        Arc::clone(&self.0.content.load().resources)
    }

    /// Serves a reloaded folder from now on: `catalog`, `prompts` and `resources` replace
    /// the current ones, and every connected client hears
    /// `notifications/tools/list_changed`, `prompts/list_changed` or
    /// `resources/list_changed` for each list that changed, and `resources/updated` for each
    /// subscribed resource whose contents changed. Requests already running finish on what
    /// they started with.
    pub async fn replace(
        &self,
        catalog: Arc<Catalog>,
        prompts: Arc<Prompts>,
        resources: Arc<Resources>,
    ) {
        let old = self.0.content.swap(Arc::new(Content::new(
            Arc::clone(&prompts),
            Arc::clone(&resources),
        )));
        let changes = ListChanges {
            tools: true,
            prompts: *old.prompts != *prompts,
            resources: *old.resources != *resources,
        };
        self.publish(catalog, changes).await;
        if changes.resources {
            self.notify_updated(&old.resources, &resources).await;
        }
    }

    /// Serves `catalog` (as the `[search]` settings publish it) and tells every client and
    /// `subscriptions/listen` stream which lists changed. The tool list counts as changed
    /// only when the tools a client can list or call differ: a reload
    /// that kept a broken file's old tools, or touched only a resource, sends no
    /// `tools/list_changed`.
    async fn publish(&self, catalog: Arc<Catalog>, mut changes: ListChanges) {
        let published = Arc::new(self.to_publish(catalog, IndexSource::default()));
        prepare_search(&published.catalog, RELOAD_QUIET);
        let old = self.0.published.swap(Arc::clone(&published));
        changes.tools = changes.tools && !old.same_tools(&published);
        if !(changes.tools || changes.prompts || changes.resources) {
            return;
        }
        let _ = self.0.changes.send(changes);
        for peer in self.live_peers() {
            if changes.tools
                && let Err(error) = peer.notify_tool_list_changed().await
            {
                tracing::debug!(%error, "could not send tools/list_changed");
            }
            if changes.prompts
                && let Err(error) = peer.notify_prompt_list_changed().await
            {
                tracing::debug!(%error, "could not send prompts/list_changed");
            }
            if changes.resources
                && let Err(error) = peer.notify_resource_list_changed().await
            {
                tracing::debug!(%error, "could not send resources/list_changed");
            }
        }
    }

    /// [`ServerState::replace`] for a thread outside any async runtime (a folder watcher):
    /// runs it to completion on a small runtime of its own.
    ///
    /// # Panics
    ///
    /// When called from inside an async runtime.
    pub fn replace_blocking(
        &self,
        catalog: Arc<Catalog>,
        prompts: Arc<Prompts>,
        resources: Arc<Resources>,
    ) -> std::io::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(self.replace(catalog, prompts, resources));
        Ok(())
    }

    /// Sends `resources/updated` for every subscribed URI whose contents differ.
    async fn notify_updated(&self, old: &Resources, new: &Resources) {
        let subscribers: Vec<(Peer<RoleServer>, Vec<String>)> = self
            .open_subscribers()
            .into_iter()
            .map(|(peer, uris)| (peer, uris.snapshot()))
            .collect();
        for (peer, uris) in subscribers {
            // An upstream's resources are its own to report (`resources/updated`); reading
            // them here would ask it twice per reload.
            for uri in uris.into_iter().filter(|uri| !new.is_forwarded(uri)) {
                if old.read(&uri).ok() != new.read(&uri).ok() {
                    let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                    if let Err(error) = peer.notify_resource_updated(param).await {
                        tracing::debug!(%error, "could not send resources/updated");
                    }
                }
            }
        }
    }

    /// The `[search]` settings in force.
    pub fn search(&self) -> SearchSettings {
        *self.0.search.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Uses `settings` from the next [`ServerState::replace`] on (a reloaded
    /// `toolsmith.toml`).
    pub fn set_search(&self, settings: SearchSettings) {
        *self.0.search.lock().unwrap_or_else(PoisonError::into_inner) = settings;
    }

    /// The `[evaluator]` settings in force.
    pub fn evaluator(&self) -> EvaluatorSettings {
        self.0
            .evaluator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Uses `settings` from the next [`ServerState::replace`] on (a reloaded
    /// `toolsmith.toml`).
    pub fn set_evaluator(&self, settings: EvaluatorSettings) {
        *self
            .0
            .evaluator
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = settings;
    }

    /// `catalog` as the `[search]` and `[evaluator]` settings in force publish it, its
    /// `tool_search` taking its index from `source`.
    fn to_publish(&self, catalog: Arc<Catalog>, source: IndexSource) -> Published {
        Published::new(
            catalog,
            self.search(),
            &self.evaluator(),
            self.0.max_calls,
            source,
        )
    }

    /// The catalog being served, as it was given: before the `[search]` settings put
    /// tools behind search, so each tool's `discoverable` is what its file says.
    pub fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.0.published.load().loaded)
    }

    /// Serves `catalog` from now on, prompts and resources unchanged (the tests' hook,
    /// `testing::ReplaceCatalog`).
    pub(crate) async fn replace_tools(&self, catalog: Arc<Catalog>) {
        let changes = ListChanges {
            tools: true,
            prompts: false,
            resources: false,
        };
        self.publish(catalog, changes).await;
    }

    /// How many tool calls are running right now.
    pub fn calls_in_flight(&self) -> usize {
        self.0.in_flight.count.load(Ordering::Acquire)
    }

    /// Waits until no call is running, or `grace` has passed; true when none is left.
    /// From its start the server counts as shutting down ([`ServerState::is_draining`]).
    pub async fn drain(&self, grace: Duration) -> bool {
        self.0.draining.store(true, Ordering::Release);
        let wait = async {
            loop {
                let idle = self.0.in_flight.idle.notified();
                if self.calls_in_flight() == 0 {
                    return;
                }
                idle.await;
            }
        };
        tokio::time::timeout(grace, wait).await.is_ok()
    }

    /// Counts a reload of the served folder in the metrics (`toolsmith_reloads_total`;
    /// docs/http.md, "Metrics").
    pub fn count_reload(&self, reload: Reload) {
        self.0.metrics.reload(reload);
    }

    /// How many errors loading the served catalog's files left (a file that did not load).
    pub fn load_errors(&self) -> usize {
        self.catalog()
            .diagnostics()
            .iter()
            .filter(|diagnostic| diagnostic.severity == toolsmith_model::Severity::Error)
            .count()
    }

    /// Every metric, in the Prometheus text format (`GET /metrics`).
    pub(crate) fn render_metrics(&self) -> String {
        let sessions = {
            let mut peers = self.0.peers.lock().unwrap_or_else(PoisonError::into_inner);
            peers.retain(|peer| !peer.is_transport_closed());
            peers.len()
        };
        self.0.metrics.render(&Gauges {
            in_flight: self.calls_in_flight(),
            sessions,
            tools: self.catalog().entries().len(),
            load_errors: self.load_errors(),
        })
    }

    /// Puts `settings` in force from the next call on: a reloaded `[limits]`
    /// (docs/limits.md).
    pub fn set_limits(&self, settings: toolsmith_model::LimitSettings) {
        self.0.limits.set_settings(settings);
    }

    /// The rate limits (docs/limits.md).
    pub(crate) fn limits(&self) -> &crate::limits::Limits {
        &self.0.limits
    }

    /// The audit log, when there is one.
    pub(crate) fn audit(&self) -> Option<&crate::audit::AuditLog> {
        self.0.audit.as_ref()
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    /// The MCP tasks of this server's calls (docs/tasks.md).
    pub(crate) fn tasks(&self) -> &crate::tasks::Tasks {
        &self.0.tasks
    }

    /// Whether the server has begun to shut down (it drains running calls).
    pub fn is_draining(&self) -> bool {
        self.0.draining.load(Ordering::Acquire)
    }

    /// Cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.0.shutdown
    }

    fn live_peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = self.0.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|peer| !peer.is_transport_closed());
        peers.clone()
    }

    pub(crate) fn content(&self) -> Arc<Content> {
        self.0.content.load_full()
    }

    /// The open sessions that subscribed to something, with their subscriptions; the
    /// closed ones are forgotten.
    fn open_subscribers(&self) -> Vec<(Peer<RoleServer>, Subscriptions)> {
        let mut subscribers = self
            .0
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscribers.retain(|(peer, _)| !peer.is_transport_closed());
        subscribers.clone()
    }

    /// The open sessions subscribed to `uri`.
    fn subscribers_of(&self, uri: &str) -> Vec<Peer<RoleServer>> {
        self.open_subscribers()
            .into_iter()
            .filter(|(_, uris)| uris.contains(uri))
            .map(|(peer, _)| peer)
            .collect()
    }

    /// Whether an open session subscribes to `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        !self.subscribers_of(uri).is_empty()
    }

    /// Sends `resources/updated` for `uri` to the sessions subscribed to it, for an
    /// upstream that reported it changed (docs/gateway.md); `false` when none is, so the
    /// upstream may stop reporting it. Must be called inside a Tokio runtime.
    pub fn resource_updated(&self, uri: &str) -> bool {
        let subscribers = self.subscribers_of(uri);
        if subscribers.is_empty() {
            return false;
        }
        let uri = uri.to_owned();
        tokio::spawn(async move {
            for peer in subscribers {
                let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri.clone());
                if let Err(error) = peer.notify_resource_updated(param).await {
                    tracing::debug!(%error, "could not send resources/updated");
                }
            }
        });
        true
    }

    /// Keeps a session's subscriptions so a reload can send it `resources/updated`.
    pub(crate) fn track_subscriptions(&self, peer: &Peer<RoleServer>, uris: &Subscriptions) {
        let mut subscribers = self
            .0
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscribers.retain(|(known, _)| !known.is_transport_closed());
        subscribers.push((peer.clone(), uris.clone()));
    }

    pub(crate) fn published(&self) -> Arc<Published> {
        self.0.published.load_full()
    }

    pub(crate) fn info(&self) -> &ServerConfig {
        &self.0.info
    }

    pub(crate) fn working_dir(&self) -> &PathBuf {
        &self.0.working_dir
    }

    pub(crate) fn page_size(&self) -> usize {
        self.0.page_size
    }

    pub(crate) fn call_slots(&self) -> &Arc<Semaphore> {
        &self.0.calls
    }

    pub(crate) fn pool(&self) -> &CallPool {
        &self.0.pool
    }

    /// Counts a call as running until the guard drops.
    pub(crate) fn call_started(&self) -> CallGuard {
        self.0.in_flight.count.fetch_add(1, Ordering::AcqRel);
        CallGuard(Arc::clone(&self.0))
    }

    /// What reloads change from now on.
    pub(crate) fn list_changes(&self) -> tokio::sync::broadcast::Receiver<ListChanges> {
        self.0.changes.subscribe()
    }

    /// Keeps `peer` for later `list_changed` notifications.
    pub(crate) fn remember_peer(&self, peer: &Peer<RoleServer>) {
        let mut peers = self.0.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|known| !known.is_transport_closed());
        peers.push(peer.clone());
    }
}

/// Which lists a reload changed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListChanges {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

#[derive(Default)]
struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

/// A running call, counted for graceful shutdown.
pub(crate) struct CallGuard(Arc<Shared>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        if self.0.in_flight.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.in_flight.idle.notify_waiters();
        }
    }
}

/// The resource URIs one session subscribed to (`resources/subscribe`); cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Subscriptions(Arc<Mutex<SubscribedUris>>);

#[derive(Default)]
struct SubscribedUris {
    uris: BTreeSet<String>,
    /// Whether the state already tracks this session.
    tracked: bool,
}

/// The most resources one session may subscribe to: a template resource matches endless
/// URIs, and each subscription is kept for the session's life.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1000;

/// A session already subscribes to [`MAX_SUBSCRIPTIONS`] resources.
#[derive(Debug)]
pub(crate) struct TooManySubscriptions;

/// What [`Subscriptions::add`] changed.
pub(crate) struct Added {
    /// The session had not subscribed to this URI.
    pub(crate) new: bool,
    /// It is the session's first subscription: the session must be tracked.
    pub(crate) first: bool,
}

impl Subscriptions {
    /// Adds `uri`.
    pub(crate) fn add(&self, uri: String) -> Result<Added, TooManySubscriptions> {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.uris.len() >= MAX_SUBSCRIPTIONS && !inner.uris.contains(&uri) {
            return Err(TooManySubscriptions);
        }
        let new = inner.uris.insert(uri);
        let first = !std::mem::replace(&mut inner.tracked, true);
        Ok(Added { new, first })
    }

    /// Removes `uri`: `true` when the session had subscribed to it.
    pub(crate) fn remove(&self, uri: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .uris
            .remove(uri)
    }

    fn contains(&self, uri: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .uris
            .contains(uri)
    }

    fn snapshot(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .uris
            .iter()
            .cloned()
            .collect()
    }
}
