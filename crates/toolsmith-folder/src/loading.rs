//! Loading a folder's tool files concurrently, on a few threads that take the next file as
//! they finish one, each file under its own deadline, so one slow file (a top level that loops until its load timeout, or a native
//! step that ignores it) holds up neither start-up nor the other files.
//! A reload reuses the result of every file whose bytes on disk did not change, so an
//! edit elsewhere in the folder does not evaluate a slow file again.

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant, SystemTime};

use fnv::FnvHashMap;
use toolsmith_model::{Diagnostic, Watchdog};
use toolsmith_starlark::{LoadSettings, LoadedModule};

use crate::discover::{self, ToolFile, ToolFiles};
use crate::inits::CommandInits;
use crate::reload::Snapshot;

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
    /// `file`'s stamp: a path the walk did not list (`found`) is missing, and one it did
    /// is stamped as `seen` (the snapshot a `--watch` reload began with) has it, else asked
    /// of the file system.
    fn of(file: &ToolFile, found: &ToolFiles, seen: Option<&Snapshot>) -> Self {
        let stamp = |path: &Path| {
            seen.and_then(|seen| seen.stamp(path))
                .or_else(|| crate::reload::stamp(path))
        };
        let listed_stamp = |path: &Path| found.lists(path).then(|| stamp(path)).flatten();
        match file {
            // The tool file itself came from the listing.
            ToolFile::Starlark(path) => Self(vec![stamp(path)]),
            ToolFile::Manifest(path) => {
                // A folder without scripts has no manifest script to look up (a reload of
                // thousands of manifests spent a tenth of its time looking).
                let script = |extension| {
                    found
                        .lists_scripts()
                        .then(|| listed_stamp(&path.with_extension(extension)))
                        .flatten()
                };
                Self(vec![stamp(path), script("star"), script("py")])
            }
        }
    }
}

/// Loads `files` (in their order), reusing from `previous` the result of each file that
/// has not changed since. The other files load on a few threads that each take the next
/// file when done with one (a thread per file cost a folder of thousands of manifests more
/// than their parsing). A file that has not finished `settings.load_timeout`
/// plus a grace after it started is reported as a `load-timeout` diagnostic and its thread
/// left behind; another thread takes its place.
pub(crate) fn load_files(
    found: ToolFiles,
    settings: &LoadSettings,
    previous: &[LoadedFile],
    seen: Option<&Snapshot>,
) -> Vec<LoadedFile> {
    let restrict = settings
        .restrict
        .as_ref()
        .map(|restrict| restrict.id.clone());
    let mut done: Vec<Option<LoadedFile>> = Vec::with_capacity(found.files.len());
    let mut queue = VecDeque::new();
    // By file, so a reload of a folder of thousands of files is not quadratic.
    let previous: FnvHashMap<&ToolFile, &LoadedFile> = previous
        .iter()
        .map(|loaded| (&loaded.file, loaded))
        .collect();
    let stamps: Vec<Stamp> = found
        .files
        .iter()
        .map(|file| Stamp::of(file, &found, seen))
        .collect();
    for (index, (file, stamp)) in found.files.into_iter().zip(stamps).enumerate() {
        let unchanged = previous.get(&file).copied().filter(|loaded| {
            loaded.stamp == stamp
                && loaded.load_timeout == settings.load_timeout
                && loaded.restrict == restrict
        });
        done.push(unchanged.cloned());
        if unchanged.is_none() {
            queue.push_back(Job { index, file, stamp });
        }
    }
    let inits = CommandInits::kept(
        done.iter()
            .flatten()
            .flat_map(|loaded| loaded.module.tools.iter()),
    );
    let workers = std::thread::available_parallelism()
        .map_or(2, NonZeroUsize::get)
        .clamp(2, MAX_WORKERS)
        .min(queue.len());
    let mut pending = queue.len();
    let queue = Arc::new(Mutex::new(queue));
    let (sender, receiver) = mpsc::channel::<Event>();
    let pool = Pool {
        queue: &queue,
        sender: &sender,
        settings,
        inits: &inits,
    };
    // Threads loading files and not stuck in one given up on.
    let mut working = (0..workers).filter(|_| pool.spawn()).count();
    // Files being loaded: when each is given up on, and what it is.
    let mut running: HashMap<usize, (Instant, Job)> = HashMap::new();
    let finish = |done: &mut Vec<Option<LoadedFile>>, job: Job, module| {
        done[job.index] = Some(LoadedFile {
            file: job.file,
            stamp: job.stamp,
            load_timeout: settings.load_timeout,
            restrict: restrict.clone(),
            module: Arc::new(module),
        });
    };
    while pending > 0 {
        if working == 0 {
            // No thread could be started (or every one is stuck): load what is left here.
            while let Some(job) = pool.next() {
                let module = discover::load_file(&job.file, settings, &inits);
                finish(&mut done, job, module);
            }
            break;
        }
        let event = match running.values().map(|(deadline, _)| *deadline).min() {
            Some(deadline) => {
                receiver.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            }
            None => receiver.recv_timeout(Duration::from_secs(1)),
        };
        match event {
            Ok(Event::Started(job)) => {
                // A load is watched like a call: given up on one grace past its timeout.
                let given_up = Watchdog::start(settings.load_timeout).fires_at();
                running.insert(job.index, (given_up, job));
            }
            Ok(Event::Loaded(index, module)) => {
                if let Some((_, job)) = running.remove(&index) {
                    finish(&mut done, job, module);
                    pending -= 1;
                }
            }
            // Only a timeout: this function holds a sender itself.
            Err(_) => {
                let now = Instant::now();
                let overdue: Vec<usize> = running
                    .iter()
                    .filter(|(_, (deadline, _))| *deadline <= now)
                    .map(|(index, _)| *index)
                    .collect();
                for index in overdue {
                    if let Some((_, job)) = running.remove(&index) {
                        let module = abandoned(&job.file, settings.load_timeout);
                        finish(&mut done, job, module);
                        pending -= 1;
                        // Its thread is stuck: another takes the rest of the queue.
                        working = working.saturating_sub(1) + usize::from(pool.spawn());
                    }
                }
            }
        }
    }
    done.into_iter().flatten().collect()
}

/// One file to load, at its place in the folder's order.
struct Job {
    index: usize,
    file: ToolFile,
    stamp: Stamp,
}

/// What a loading thread reports.
enum Event {
    /// It took `Job` off the queue and started loading it.
    Started(Job),
    /// The file at this index loaded.
    Loaded(usize, LoadedModule),
}

/// The threads of one [`load_files`]: each takes files off `queue` until it is empty.
struct Pool<'a> {
    queue: &'a Arc<Mutex<VecDeque<Job>>>,
    sender: &'a mpsc::Sender<Event>,
    settings: &'a LoadSettings,
    inits: &'a CommandInits,
}

impl Pool<'_> {
    /// The next file to load, if any is left.
    fn next(&self) -> Option<Job> {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }

    /// Starts one more loading thread; `false` when none could be started.
    fn spawn(&self) -> bool {
        let queue = Arc::clone(self.queue);
        let sender = self.sender.clone();
        let (settings, inits) = (self.settings.clone(), self.inits.clone());
        std::thread::Builder::new()
            .name("toolsmith-load".into())
            .stack_size(LOADER_STACK)
            .spawn(move || {
                loop {
                    let Some(job) = queue
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .pop_front()
                    else {
                        return;
                    };
                    let (index, file) = (job.index, job.file.clone());
                    // The folder stops listening once every file is in; nothing to do then.
                    if sender.send(Event::Started(job)).is_err() {
                        return;
                    }
                    let module = discover::load_file(&file, &settings, &inits);
                    if sender.send(Event::Loaded(index, module)).is_err() {
                        return;
                    }
                }
            })
            .is_ok()
    }
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
