//! `toolsmith serve --watch`: reload the tools folder when its files change.
//!
//! The OS tells the watcher that something under the folder changed (inotify, `FSEvents`,
//! `ReadDirectoryChangesW`, through the `notify` crate), so a folder of thousands of files
//! costs no CPU while nothing changes. Once a change has been quiet for
//! [`DEBOUNCE`] (editors write in several steps) the folder is reloaded, looking again
//! only at the paths the OS named (`Snapshot::updated`; every file when that cannot tell,
//! docs/performance.md), and published
//! ([`ServedFolder::fresh`], the one reload path, which the `toolsmith-dev` tools use too),
//! which tells every connected client the lists changed. Where notifications cannot be had
//! (the OS refused a watch: too many watches, a network mount) the watcher falls back to
//! looking at the folder's files (path, modification time, size) every [`POLL`].
//!
//! What a reload publishes is the folder crate's policy (`Published::reloaded`): a file
//! that fails to load does not take its tools away. The diagnostics are printed to stderr
//! with file and line. docs/serve.md, "Watching a folder", says what users see.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use toolsmith_folder::Snapshot;

use crate::served::ServedFolder;

/// How often the folder is looked at when the OS gives no notifications.
const POLL: Duration = Duration::from_millis(100);

/// How long a change must be quiet before the folder is reloaded.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// How long a change must be quiet before the folder is reloaded, when polling.
const POLL_DEBOUNCE: Duration = Duration::from_millis(200);

/// Starts watching `served` for as long as the process runs. Each reload evaluates only the
/// tool files that changed since the load before it; a change that a reload has already
/// picked up (a dev tool's write) causes none.
pub(crate) fn spawn(served: Arc<ServedFolder>) -> std::io::Result<()> {
    let root = served.root().to_owned();
    let notified = notifications(&root);
    std::thread::Builder::new()
        .name("toolsmith-watch".into())
        .spawn(move || match notified {
            Ok((watcher, events)) => {
                watch_notified(&served, &events);
                drop(watcher);
            }
            Err(error) => {
                tracing::info!("watch: no file notifications ({error}); polling the folder");
                watch_polling(&served);
            }
        })
        .map(drop)
}

/// What changed under the folder, as the OS reports it: these paths, or `None` when only a
/// look at the whole folder can tell (an event was lost, or named no path).
type Changed = Option<Vec<PathBuf>>;

/// A watcher of everything under `root` and the channel it reports changes on (reads,
/// which reloading itself causes, are not changes).
fn notifications(root: &Path) -> notify::Result<(notify::RecommendedWatcher, Receiver<Changed>)> {
    let (sender, events) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let changed = match event {
            Ok(event) if matches!(event.kind, EventKind::Access(_)) => return,
            Ok(event) if !event.paths.is_empty() && !event.need_rescan() => Some(event.paths),
            // A lost event (an overflowed queue): look at the folder to be sure.
            Ok(_) | Err(_) => None,
        };
        let _ = sender.send(changed);
    })?;
    watcher.watch(root, RecursiveMode::Recursive)?;
    Ok((watcher, events))
}

fn watch_notified(served: &ServedFolder, events: &Receiver<Changed>) {
    // A change made after the folder was loaded but before the OS watch was set up.
    let _ = served.fresh("watch");
    while let Ok(first) = events.recv() {
        let mut changed = first;
        while let Ok(more) = events.recv_timeout(DEBOUNCE) {
            changed = changed.zip(more).map(|(mut paths, more)| {
                paths.extend(more);
                paths
            });
        }
        // The files are compared with what was last loaded: nothing is reloaded for a
        // change a dev tool's write has reloaded for already. Only the reported paths are
        // looked at again when they say enough. Unreadable: the reload said so,
        // and the previous version goes on serving.
        let _ = match changed {
            Some(mut paths) => {
                paths.sort();
                paths.dedup();
                served.fresh_after("watch", &paths)
            }
            None => served.fresh("watch"),
        };
    }
}

fn watch_polling(served: &ServedFolder) {
    let root = served.root().to_owned();
    loop {
        std::thread::sleep(POLL);
        let mut latest = Snapshot::take(&root);
        if !served.differs_from(&latest) {
            continue;
        }
        loop {
            std::thread::sleep(POLL_DEBOUNCE);
            let again = Snapshot::take(&root);
            if again == latest {
                break;
            }
            latest = again;
        }
        let _ = served.fresh("watch");
    }
}
