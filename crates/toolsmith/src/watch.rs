//! `toolsmith serve --watch`: reload the tools folder when its files change.
//!
//! A thread polls the folder's files (path, modification time, size) every 100 ms; once a
//! change has been quiet for 200 ms (editors write in several steps) the folder is loaded
//! again and swapped into the server, which tells every connected client the lists changed.
//! Polling rather than OS events: a tools folder is a few dozen small files, it needs no
//! extra dependency, and it behaves the same on every platform and on network mounts.
//!
//! A file that fails to load does not take its tools away: for each file with a load error,
//! the previous tools, prompts and resources that came from it (by source path) are kept,
//! and the diagnostics are printed to stderr with file and line.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use toolsmith_folder::ToolFolder;
use toolsmith_model::{
    CallContext, Catalog, CatalogEntry, JsonObject, Prompts, Resources, Severity, Tool,
    ToolDefinition, ToolFailure, ToolReturn,
};
use toolsmith_server::ServerState;

use crate::args::SearchArg;
use crate::folder;
use crate::printer::Printer;

/// How often the folder is looked at.
const POLL: Duration = Duration::from_millis(100);

/// How long a change must be quiet before the folder is reloaded.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// Folders this deep below the root are not looked into.
const MAX_DEPTH: usize = 16;

/// Every file under the root: modification time and size.
type Snapshot = BTreeMap<PathBuf, (Option<SystemTime>, u64)>;

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
    let seen = snapshot(loaded.root());
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
        let mut latest = snapshot(root);
        if latest == seen {
            continue;
        }
        loop {
            std::thread::sleep(DEBOUNCE);
            let again = snapshot(root);
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
    let (catalog, prompts, resources) = merge(
        &loaded,
        &state.catalog(),
        &state.prompts(),
        &state.resources(),
    );
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

/// The reloaded folder, with what its broken files defined before kept: for each file
/// with an error diagnostic, the previous tools, prompts and resources from that file that
/// the reload no longer has.
pub(crate) fn merge(
    loaded: &ToolFolder,
    old_catalog: &Catalog,
    old_prompts: &Prompts,
    old_resources: &Resources,
) -> (Arc<Catalog>, Arc<Prompts>, Arc<Resources>) {
    let catalog = loaded.catalog();
    let broken: HashSet<&Path> = catalog
        .diagnostics()
        .iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|diagnostic| diagnostic.location.path.as_path())
        .collect();
    let from_broken = |path: &Path| broken.contains(path);

    let kept_tools: Vec<&CatalogEntry> = old_catalog
        .entries()
        .iter()
        .filter(|entry| {
            let definition = entry.definition();
            from_broken(&definition.source.path) && catalog.get(&definition.name).is_none()
        })
        .collect();
    let catalog = if kept_tools.is_empty() {
        Arc::clone(catalog)
    } else {
        let tools = catalog
            .entries()
            .iter()
            .chain(kept_tools)
            .map(|entry| {
                Arc::new(Prepared {
                    definition: entry.definition().clone(),
                    tool: Arc::clone(entry.tool()),
                }) as Arc<dyn Tool>
            })
            .collect();
        Arc::new(Catalog::new(tools, catalog.diagnostics().to_vec()))
    };

    let prompts = loaded.prompts();
    let kept_prompts: Vec<_> = old_prompts
        .list()
        .iter()
        .filter(|prompt| from_broken(&prompt.source.path) && prompts.get(&prompt.name).is_err())
        .cloned()
        .collect();
    let prompts = if kept_prompts.is_empty() {
        Arc::clone(prompts)
    } else {
        let mut all = prompts.list().to_vec();
        all.extend(kept_prompts);
        Arc::new(Prompts::new(all))
    };

    let resources = loaded.resources();
    let kept_resources: Vec<_> = old_resources
        .list()
        .iter()
        .filter(|resource| {
            from_broken(&resource.info.source.path) && resources.get(&resource.uri).is_none()
        })
        .cloned()
        .collect();
    let kept_templates: Vec<_> = old_resources
        .templates()
        .iter()
        .filter(|template| {
            from_broken(&template.info.source.path)
                && resources.template(template.uri_template.as_str()).is_none()
        })
        .cloned()
        .collect();
    let resources = if kept_resources.is_empty() && kept_templates.is_empty() {
        Arc::clone(resources)
    } else {
        let mut all = resources.list().to_vec();
        all.extend(kept_resources);
        let mut templates = resources.templates().to_vec();
        templates.extend(kept_templates);
        Arc::new(Resources::new(all, templates))
    };
    (catalog, prompts, resources)
}

/// A tool carried over into a new catalog with the definition it was published with
/// (icons resolved, folder defaults applied).
struct Prepared {
    definition: ToolDefinition,
    tool: Arc<dyn Tool>,
}

impl Tool for Prepared {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        self.tool.call(arguments, context)
    }
}

/// Every file under `root` (hidden names skipped), with its modification time and size.
fn snapshot(root: &Path) -> Snapshot {
    let mut files = Snapshot::new();
    let mut pending = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            if metadata.is_dir() {
                if depth < MAX_DEPTH {
                    pending.push((entry.path(), depth + 1));
                }
            } else {
                files.insert(entry.path(), (metadata.modified().ok(), metadata.len()));
            }
        }
    }
    files
}
