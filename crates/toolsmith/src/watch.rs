//! `toolsmith serve --watch`: reload the tools folder when its files change.
//!
//! A thread polls the folder's files (path, modification time, size) every 100 ms; once a
//! change has been quiet for 200 ms (editors write in several steps) the folder is reloaded
//! and published ([`ServedFolder::reload`], the one reload path, which the `toolsmith-dev`
//! tools use too), which tells every connected client the lists changed. Polling rather
//! than OS events: a tools folder is a few dozen small files, it needs no extra dependency,
//! and it behaves the same on every platform and on network mounts.
//!
//! What a reload publishes is the folder crate's policy (`Published::reloaded`): a file
//! that fails to load does not take its tools away. The diagnostics are printed to stderr
//! with file and line.

use std::sync::Arc;
use std::time::Duration;

use toolsmith_folder::Snapshot;

use crate::served::ServedFolder;

/// How often the folder is looked at.
const POLL: Duration = Duration::from_millis(100);

/// How long a change must be quiet before the folder is reloaded.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// Starts watching `served` for as long as the process runs. Each reload evaluates only the
/// tool files that changed since the load before it; a change that a reload has already
/// picked up (a dev tool's write) causes none.
pub(crate) fn spawn(served: Arc<ServedFolder>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("toolsmith-watch".into())
        .spawn(move || watch(&served))
        .map(drop)
}

fn watch(served: &ServedFolder) {
    let root = served.root().to_owned();
    loop {
        std::thread::sleep(POLL);
        let mut latest = Snapshot::take(&root);
        if !served.differs_from(&latest) {
            continue;
        }
        loop {
            std::thread::sleep(DEBOUNCE);
            let again = Snapshot::take(&root);
            if again == latest {
                break;
            }
            latest = again;
        }
        // Not reloaded again when a dev tool's write has reloaded for this change already.
        // Unreadable: the reload said so, and the previous version goes on serving.
        let _ = served.fresh("watch");
    }
}
