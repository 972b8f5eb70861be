//! What every connection of a server shares: the catalog behind a swappable handle (hot
//! reload replaces it whole), the server's identity, the call limits, and the peers that
//! must hear `notifications/tools/list_changed`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{Peer, RoleServer};
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;
use toolsmith_folder::ToolFolder;
use toolsmith_model::Catalog;

use crate::convert::{PAGE_SIZE, Published};
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
    /// Calls running at once, over all connections; more wait for a free slot.
    pub max_concurrent_calls: usize,
    /// Tools per `tools/list` page.
    pub page_size: usize,
}

impl ServerOptions {
    /// The options a tools folder asks for in its `toolsmith.toml`, with defaults for the
    /// rest: name `toolsmith`, this crate's version, the folder as working directory.
    pub fn for_folder(folder: &ToolFolder) -> Self {
        let config = folder.config();
        Self {
            name: config
                .name
                .clone()
                .unwrap_or_else(|| "toolsmith".to_owned()),
            version: config
                .version
                .clone()
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned()),
            instructions: config.instructions.clone(),
            working_dir: folder.root().to_owned(),
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            page_size: PAGE_SIZE,
        }
    }
}

/// The state shared by every connection of one server; cheap to clone.
#[derive(Clone)]
pub struct ServerState(Arc<Shared>);

struct Shared {
    published: ArcSwap<Published>,
    info: ServerConfig,
    working_dir: PathBuf,
    page_size: usize,
    /// One permit per running call; a permit is released when the tool's thread ends,
    /// so calls abandoned by the watchdog still count until they really stop.
    calls: Arc<Semaphore>,
    pool: CallPool,
    in_flight: InFlight,
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Cancelled when the server shuts down: closes HTTP streams and sessions.
    shutdown: CancellationToken,
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
        } = options;
        #[expect(
            deprecated,
            reason = "rmcp 3.11 marks logging deprecated (SEP-2577); clients still use it"
        )]
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        let mut info =
            ServerConfig::new(capabilities).with_server_info(Implementation::new(name, version));
        if let Some(instructions) = instructions {
            info = info.with_instructions(instructions);
        }
        Self(Arc::new(Shared {
            published: ArcSwap::from_pointee(Published::new(catalog)),
            info,
            working_dir,
            page_size,
            calls: Arc::new(Semaphore::new(
                max_concurrent_calls.clamp(1, Semaphore::MAX_PERMITS),
            )),
            pool: CallPool::new(max_concurrent_calls),
            in_flight: InFlight::default(),
            peers: Mutex::new(Vec::new()),
            shutdown: CancellationToken::new(),
        }))
    }

    /// A server for a loaded tools folder, configured by its `toolsmith.toml`.
    pub fn from_folder(folder: &ToolFolder) -> Self {
        Self::new(
            Arc::clone(folder.catalog()),
            ServerOptions::for_folder(folder),
        )
    }

    /// The catalog being served.
    pub fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.0.published.load().catalog)
    }

    /// Serves `catalog` from now on and tells every connected client that the tool list
    /// changed (`notifications/tools/list_changed`). Calls already running finish on the
    /// catalog they started with.
    pub async fn replace_catalog(&self, catalog: Arc<Catalog>) {
        self.0.published.store(Arc::new(Published::new(catalog)));
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.0.peers.lock().unwrap_or_else(PoisonError::into_inner);
            peers.retain(|peer| !peer.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if let Err(error) = peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "could not send tools/list_changed");
            }
        }
    }

    /// How many tool calls are running right now.
    pub fn calls_in_flight(&self) -> usize {
        self.0.in_flight.count.load(Ordering::Acquire)
    }

    /// Waits until no call is running, or `grace` has passed; true when none is left.
    pub async fn drain(&self, grace: Duration) -> bool {
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

    /// Cancelled when the server shuts down.
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.0.shutdown
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

    /// Keeps `peer` for later `list_changed` notifications.
    pub(crate) fn remember_peer(&self, peer: &Peer<RoleServer>) {
        let mut peers = self.0.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|known| !known.is_transport_closed());
        peers.push(peer.clone());
    }
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
