//! `toolsmith serve --watch`: reload the tools folder when its files change.
//!
//! A thread polls the folder's files (path, modification time, size) every 100 ms; once a
//! change has been quiet for 200 ms (editors write in several steps) the folder is loaded
//! again and swapped into the server, which tells every connected client the lists changed.
//! Polling rather than OS events: a tools folder is a few dozen small files, it needs no
//! extra dependency, and it behaves the same on every platform and on network mounts.
//!
//! What a reload publishes is the folder crate's policy ([`Published::reloaded`]): a file
//! that fails to load does not take its tools away. Here the diagnostics are printed to
//! stderr with file and line.

use std::time::Duration;

use toolsmith_folder::{Published, Snapshot, ToolFolder};
use toolsmith_server::ServerState;

use crate::args::SearchArg;
use crate::folder;
use crate::printer::Printer;

/// How often the folder is looked at.
const POLL: Duration = Duration::from_millis(100);

/// How long a change must be quiet before the folder is reloaded.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// Starts watching the folder `loaded` came from, swapping reloads into `state`, for as
/// long as the process runs. Each reload evaluates only the tool files that changed since
/// the load before it.
///
/// The folder is looked at before this returns, so a change made once the server answers
/// is always seen, however late the watching thread gets to run.
pub(crate) fn spawn(
    loaded: ToolFolder,
    search: SearchArg,
    state: ServerState,
    printer: Printer,
) -> std::io::Result<()> {
    let seen = Snapshot::take(loaded.root());
    std::thread::Builder::new()
        .name("toolsmith-watch".into())
        .spawn(move || watch(loaded, seen, &search, &state, printer))
        .map(drop)
}

fn watch(
    mut current: ToolFolder,
    mut seen: Snapshot,
    search: &SearchArg,
    state: &ServerState,
    printer: Printer,
) {
    let root = current.root().to_owned();
    let root = root.as_path();
    loop {
        std::thread::sleep(POLL);
        let mut latest = Snapshot::take(root);
        if latest == seen {
            continue;
        }
        loop {
            std::thread::sleep(DEBOUNCE);
            let again = Snapshot::take(root);
            if again == latest {
                break;
            }
            latest = again;
        }
        seen = latest;
        if let Some(loaded) = reload(&current, search, state, printer) {
            current = loaded;
        }
    }
}

/// Loads the folder again and publishes it; `None` when it cannot be read at all.
fn reload(
    current: &ToolFolder,
    search: &SearchArg,
    state: &ServerState,
    printer: Printer,
) -> Option<ToolFolder> {
    let root = current.root();
    let loaded = match current.reload() {
        Ok(loaded) => loaded,
        Err(error) => {
            printer.message(&format!(
                "watch: cannot reload: {error}; still serving the previous tools"
            ));
            return None;
        }
    };
    // An edited `[search]` applies (`--search` still wins over it).
    state.set_search(search.apply(loaded.config().search));
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
    folder::explain_search(printer, &catalog, state.search());
    let tools = catalog.entries().len();
    printer.message(&format!(
        "watch: reloaded {}: {tools} tool{}, {} prompt{}, {} resource{}",
        root.display(),
        plural(tools),
        prompts.list().len(),
        plural(prompts.list().len()),
        resources.list().len() + resources.templates().len(),
        plural(resources.list().len() + resources.templates().len()),
    ));
    if let Err(error) = state.replace_blocking(catalog, prompts, resources) {
        printer.message(&format!("watch: cannot publish the reload: {error}"));
    }
    Some(loaded)
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
