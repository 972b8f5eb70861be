//! Loading a folder's tool files concurrently, each on its own thread under its own
//! deadline, so one slow file (a top level that loops until its load timeout, or a native
//! step that ignores it) holds up neither start-up nor the other files (issue 14, item 6).
//! A reload reuses the result of every file whose bytes on disk did not change, so an
//! edit elsewhere in the folder does not evaluate a slow file again.

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant, SystemTime};

use toolsmith_model::{Diagnostic, Watchdog};
use toolsmith_starlark::{LoadSettings, LoadedModule};

use crate::discover::{self, ToolFile};
use crate::inits::CommandInits;

/// At most this many files load at once (never fewer than two, so one slow file cannot
/// hold the others up on a one-core machine).
const MAX_WORKERS: usize = 8;

/// The stack of a loading thread: the interpreter recurses on nested source.
const LOADER_STACK: usize = 8 << 20;

/// What one tool file defined, with what it was loaded from.
#[derive(Debug, Clone)]
pub(crate) struct LoadedFile {
    pub(crate) file: ToolFile,
    stamp: Stamp,
    load_timeout: Duration,
    /// The id of the restriction it was loaded under (`LoadSettings::restrict`).
    restrict: Option<String>,
    /// The tools and diagnostics of the file.
    pub(crate) module: Arc<LoadedModule>,
}

/// The modification time and size of every file a tool file's load reads (a manifest's
/// script too): equal stamps mean the load would give the same result.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp(Vec<Option<(Option<SystemTime>, u64)>>);

impl Stamp {
    fn of(file: &ToolFile) -> Self {
        let paths: Vec<PathBuf> = match file {
            ToolFile::Starlark(path) => vec![path.clone()],
            ToolFile::Manifest(path) => vec![
                path.clone(),
                path.with_extension("star"),
                path.with_extension("py"),
            ],
        };
        Self(paths.iter().map(|path| metadata(path)).collect())
    }
}

fn metadata(path: &Path) -> Option<(Option<SystemTime>, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok(), metadata.len()))
}

/// Loads `files` (in their order), reusing from `previous` the result of each file that
/// has not changed since. Every other file loads on a thread of its own, a few at a time;
/// one that has not finished `settings.load_timeout` plus a grace after it started is
/// reported as a `load-timeout` diagnostic and its thread left behind.
pub(crate) fn load_files(
    files: Vec<ToolFile>,
    settings: &LoadSettings,
    previous: &[LoadedFile],
) -> Vec<LoadedFile> {
    let restrict = settings
        .restrict
        .as_ref()
        .map(|restrict| restrict.id.clone());
    let mut done: Vec<Option<LoadedFile>> = Vec::with_capacity(files.len());
    let mut queue = VecDeque::new();
    // By file, so a reload of a folder of thousands of files is not quadratic (issue 21).
    let previous: HashMap<&ToolFile, &LoadedFile> = previous
        .iter()
        .map(|loaded| (&loaded.file, loaded))
        .collect();
    for (index, file) in files.into_iter().enumerate() {
        let stamp = Stamp::of(&file);
        let unchanged = previous.get(&file).copied().filter(|loaded| {
            loaded.stamp == stamp
                && loaded.load_timeout == settings.load_timeout
                && loaded.restrict == restrict
        });
        done.push(unchanged.cloned());
        if unchanged.is_none() {
            queue.push_back((index, file, stamp));
        }
    }
    let inits = CommandInits::kept(
        done.iter()
            .flatten()
            .flat_map(|loaded| loaded.module.tools.iter()),
    );
    let workers = std::thread::available_parallelism()
        .map_or(2, NonZeroUsize::get)
        .clamp(2, MAX_WORKERS);
    let (sender, receiver) = mpsc::channel::<(usize, LoadedModule)>();
    // Files being loaded: their deadline, what they are and what they were loaded from.
    let mut running: HashMap<usize, (Instant, ToolFile, Stamp)> = HashMap::new();
    let finish = |done: &mut Vec<Option<LoadedFile>>, index, file, stamp, module| {
        done[index] = Some(LoadedFile {
            file,
            stamp,
            load_timeout: settings.load_timeout,
            restrict: restrict.clone(),
            module: Arc::new(module),
        });
    };
    loop {
        while running.len() < workers
            && let Some((index, file, stamp)) = queue.pop_front()
        {
            let sender = sender.clone();
            let (thread_file, thread_settings) = (file.clone(), settings.clone());
            let thread_inits = inits.clone();
            let spawned = std::thread::Builder::new()
                .name("toolsmith-load".into())
                .stack_size(LOADER_STACK)
                .spawn(move || {
                    let module = discover::load_file(&thread_file, &thread_settings, &thread_inits);
                    // The folder may have stopped waiting for this file; nothing to do then.
                    let _ = sender.send((index, module));
                });
            if spawned.is_ok() {
                // A load is watched like a call: given up on one grace past its timeout.
                let given_up = Watchdog::start(settings.load_timeout).fires_at();
                running.insert(index, (given_up, file, stamp));
            } else {
                let module = discover::load_file(&file, settings, &inits);
                finish(&mut done, index, file, stamp, module);
            }
        }
        let Some(first_deadline) = running.values().map(|(deadline, ..)| *deadline).min() else {
            break;
        };
        let wait = first_deadline.saturating_duration_since(Instant::now());
        if let Ok((index, module)) = receiver.recv_timeout(wait) {
            if let Some((_, file, stamp)) = running.remove(&index) {
                finish(&mut done, index, file, stamp, module);
            }
            continue;
        }
        let now = Instant::now();
        let overdue: Vec<usize> = running
            .iter()
            .filter(|(_, (deadline, ..))| *deadline <= now)
            .map(|(index, _)| *index)
            .collect();
        for index in overdue {
            if let Some((_, file, stamp)) = running.remove(&index) {
                let module = abandoned(&file, settings.load_timeout);
                finish(&mut done, index, file, stamp, module);
            }
        }
    }
    done.into_iter().flatten().collect()
}

/// The result of a file whose load did not stop at its deadline.
fn abandoned(file: &ToolFile, load_timeout: Duration) -> LoadedModule {
    let path = match file {
        ToolFile::Starlark(path) | ToolFile::Manifest(path) => path,
    };
    LoadedModule {
        diagnostics: vec![
            Diagnostic::error(
                "load-timeout",
                crate::file_location(path),
                format!(
                    "loading the file took longer than {} and did not stop; it was abandoned",
                    toolsmith_model::duration::format(load_timeout)
                ),
            )
            .with_help("the top level runs once at load; move long work into the tool functions"),
        ],
        ..LoadedModule::default()
    }
}
