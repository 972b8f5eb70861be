//! The folder `toolsmith serve` serves, and the one way it is reloaded: by the watcher
//! (`serve --watch`, `watch.rs`) when its files change, and by the `toolsmith-dev` tools
//! (`dev/`) after they write a file.
//!
//! A reload loads the folder again ([`ToolFolder::reload`], only what changed), applies the
//! folder crate's policy ([`Published::reloaded`]: a file that fails to load keeps what it
//! published), adds the server's own tools (the dev tools, when the profile is on) and
//! publishes the result with [`ServerState::replace_blocking`], which tells every client
//! what changed. Reloads are serialised, so two of them never publish out of order, and
//! each one remembers the [`Snapshot`] it loaded, so the watcher does not reload again for
//! a file the dev tools already reloaded for.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use toolsmith_folder::{FolderError, Published, Snapshot, ToolFolder};
use toolsmith_model::{Catalog, Tool};
use toolsmith_server::{Reload, ServerState};

use crate::args::{CodeModeArg, SearchArg};
use crate::folder;
use crate::printer::{Printer, plural};

/// A served tools folder: the folder as last loaded and the server it is published on.
pub(crate) struct ServedFolder {
    root: PathBuf,
    state: ServerState,
    /// `--search`, which wins over a reloaded `[search]`.
    search: SearchArg,
    /// `--code-mode`, which wins over a reloaded `[evaluator]`.
    code_mode: CodeModeArg,
    printer: Printer,
    current: Mutex<Current>,
    /// Tools every published catalog has besides the folder's; set once, before serving.
    builtins: OnceLock<Vec<Arc<dyn Tool>>>,
}

/// The folder as last loaded, and what its files were when it was.
struct Current {
    folder: Arc<ToolFolder>,
    seen: Snapshot,
}

impl ServedFolder {
    /// The folder `loaded` came from, published on `state`; `seen` is what its files were
    /// before it was loaded ([`ServedFolder::load`]), so a change made once the server
    /// answers (or while it loaded) is always seen, however late the watcher gets to run.
    pub(crate) fn new(
        (loaded, seen): (ToolFolder, Snapshot),
        (search, code_mode): (SearchArg, CodeModeArg),
        state: ServerState,
        printer: Printer,
    ) -> Arc<Self> {
        let root = loaded.root().to_owned();
        Arc::new(Self {
            root,
            state,
            search,
            code_mode,
            printer,
            current: Mutex::new(Current {
                folder: Arc::new(loaded),
                seen,
            }),
            builtins: OnceLock::new(),
        })
    }

    /// Runs `load` of the folder at `root`, and what its files are now: looked at first
    /// (a walk and a `stat` a file), then given to `seen` on a thread of its own while
    /// `load` runs. The look goes first so that `seen` can answer early (a kept search
    /// index, `commands::serve`) without the load slowing it.
    pub(crate) fn load<T: Send>(
        root: &Path,
        load: impl FnOnce() -> T,
        seen: impl FnOnce(&Snapshot) + Send,
    ) -> (T, Snapshot) {
        std::thread::scope(|scope| {
            let (taken, looked) = std::sync::mpsc::channel();
            let seen = scope.spawn(move || {
                let snapshot = Snapshot::take(root);
                let _ = taken.send(());
                seen(&snapshot);
                snapshot
            });
            let _ = looked.recv();
            let loaded = load();
            let seen = seen.join().unwrap_or_else(|_| Snapshot::take(root));
            (loaded, seen)
        })
    }

    /// The folder's path, as it was given.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The server the folder is published on.
    pub(crate) fn state(&self) -> &ServerState {
        &self.state
    }

    /// Whether the folder's files differ from `latest`'s, as last loaded.
    pub(crate) fn differs_from(&self, latest: &Snapshot) -> bool {
        self.lock().seen != *latest
    }

    /// Publishes `tools` with the folder's, now and after every reload. A folder tool of
    /// the same name wins (a `duplicate-tool-name` diagnostic says so).
    ///
    /// # Panics
    ///
    /// When called twice, or from inside an async runtime (see
    /// [`ServerState::replace_blocking`]).
    pub(crate) fn add_builtins(&self, tools: Vec<Arc<dyn Tool>>) -> std::io::Result<()> {
        assert!(
            self.builtins.set(tools).is_ok(),
            "the built-in tools are added once"
        );
        let _reloading = self.lock();
        let state = &self.state;
        let catalog = self.with_builtins(&state.catalog());
        state.replace_blocking(catalog, state.prompts(), state.resources())
    }

    /// The folder as it is on disk now: as last loaded, or loaded again (and published)
    /// when its files changed since.
    pub(crate) fn fresh(&self, why: &str) -> Result<Arc<ToolFolder>, FolderError> {
        self.fresh_as(why, |_| Snapshot::take(&self.root))
    }

    /// [`ServedFolder::fresh`] after the files at `changed` changed (as the OS reported):
    /// only those are looked at again when that tells what the folder is now
    /// ([`Snapshot::updated`]), else every file is.
    pub(crate) fn fresh_after(
        &self,
        why: &str,
        changed: &[PathBuf],
    ) -> Result<Arc<ToolFolder>, FolderError> {
        self.fresh_as(why, |seen| {
            seen.updated(&self.root, changed)
                .unwrap_or_else(|| Snapshot::take(&self.root))
        })
    }

    /// Reloads when `look` (given what was last seen) says the files differ from it.
    fn fresh_as(
        &self,
        why: &str,
        look: impl FnOnce(&Snapshot) -> Snapshot,
    ) -> Result<Arc<ToolFolder>, FolderError> {
        let current = self.lock();
        let started = Instant::now();
        let now = look(&current.seen);
        if current.seen == now {
            return Ok(Arc::clone(&current.folder));
        }
        self.reload_locked(current, why, (now, started))
    }

    /// Loads the folder again and publishes it; returns what was loaded. `why` starts the
    /// messages printed to stderr (`watch: reloaded ...`).
    ///
    /// A folder that cannot be read at all is an error, and the previous version goes on
    /// serving.
    pub(crate) fn reload(&self, why: &str) -> Result<Arc<ToolFolder>, FolderError> {
        let current = self.lock();
        let started = Instant::now();
        self.reload_locked(current, why, (Snapshot::take(&self.root), started))
    }

    fn reload_locked(
        &self,
        mut current: std::sync::MutexGuard<'_, Current>,
        why: &str,
        (seen, started): (Snapshot, Instant),
    ) -> Result<Arc<ToolFolder>, FolderError> {
        let printer = self.printer;
        // What the files were when the reload began: a write during it is seen next time.
        let state = &self.state;
        let loaded = current.folder.reload_as_of(&seen);
        current.seen = seen;
        let loaded = loaded.inspect_err(|error| {
            state.count_reload(Reload::Failed);
            printer.message(&format!(
                "{why}: cannot reload: {error}; still serving the previous tools"
            ));
        })?;
        // An edited `[search]` applies (`--search` still wins over it).
        state.set_search(self.search.apply(loaded.config().search));
        state.set_evaluator(self.code_mode.apply(loaded.config().evaluator.clone()));
        // And an edited `[limits]`, counting on from the counts so far.
        state.set_limits(loaded.config().limits.clone());
        folder::report(printer, loaded.catalog().diagnostics());
        let published = Published {
            catalog: state.catalog(),
            prompts: state.prompts(),
            resources: state.resources(),
        };
        let Published {
            catalog,
            prompts,
            resources,
        } = published.reloaded(&loaded);
        let resources = crate::skills::with_generated(&loaded, &resources);
        let catalog = self.with_builtins(&catalog);
        folder::explain_search(printer, &catalog, state.search());
        let tools = catalog.entries().len();
        let resource_count = resources.list().len() + resources.templates().len();
        printer.message(&format!(
            "{why}: reloaded {}: {tools} tool{}, {} prompt{}, {resource_count} resource{} in {:.1} ms",
            self.root.display(),
            plural(tools),
            prompts.list().len(),
            plural(prompts.list().len()),
            plural(resource_count),
            started.elapsed().as_secs_f64() * 1000.0,
        ));
        match state.replace_blocking(catalog, prompts, resources) {
            Ok(()) => state.count_reload(Reload::Published),
            Err(error) => {
                state.count_reload(Reload::Failed);
                printer.message(&format!("{why}: cannot publish the reload: {error}"));
            }
        }
        current.folder = Arc::new(loaded);
        Ok(Arc::clone(&current.folder))
    }

    /// `catalog` plus the built-in tools; `catalog` itself when there are none.
    fn with_builtins(&self, catalog: &Arc<Catalog>) -> Arc<Catalog> {
        match self.builtins.get() {
            Some(builtins) if !builtins.is_empty() => {
                Arc::new(catalog.with_tools(builtins.clone()))
            }
            _ => Arc::clone(catalog),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Current> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
