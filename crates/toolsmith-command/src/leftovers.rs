//! What a run leaves behind outside its process group: a program that calls `setsid` or
//! `setpgid` (a daemon, `nohup`, a double fork) leaves the group that is killed at the end
//! of the call, and would outlive it.
//!
//! Every process a run starts inherits [`CALL_ID_ENV`] in its environment, with an id
//! unique to the run. When the run ends, the processes started since it began (the pids
//! allocated meanwhile, from `/proc/sys/kernel/ns_last_pid`) whose environment holds that id
//! are killed, in rounds until none is left. No process-wide state changes (no subreaper),
//! and an unrelated process is never killed: it would need the run's id in its environment.
//!
//! What remains possible: a process that replaces its environment before it detaches
//! (`setsid env -i daemon`) or overwrites it in memory (some daemons do, to set their
//! process title) is not recognised, and nothing is done where `/proc` is not mounted.

use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The environment variable that marks the processes of one run.
pub(crate) const CALL_ID_ENV: &str = "TOOLSMITH_CALL_ID";

/// How many times the new processes are looked through: each round catches the children
/// that processes killed in the round before had started.
const ROUNDS: usize = 8;

/// A window of more pids than this is looked through by listing `/proc` instead.
const WINDOW_BY_PID: u32 = 4096;

/// Runs started by this process so far, for unique ids.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// One run's mark, and where its processes' pids begin.
#[derive(Debug)]
pub(crate) struct Leftovers {
    /// `TOOLSMITH_CALL_ID=<id>`, as it appears in `/proc/PID/environ`.
    entry: Vec<u8>,
    /// The last pid allocated before the run began; `None` where that cannot be read.
    before: Option<u32>,
}

impl Leftovers {
    /// A mark for a run about to start.
    pub(crate) fn new() -> Self {
        let id = format!(
            "{}-{}",
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            entry: format!("{CALL_ID_ENV}={id}").into_bytes(),
            before: last_pid(),
        }
    }

    /// The value of [`CALL_ID_ENV`] for the run's processes.
    pub(crate) fn id(&self) -> &str {
        let entry = std::str::from_utf8(&self.entry).expect("the entry was made from a string");
        &entry[CALL_ID_ENV.len() + 1..]
    }

    /// Kills every process started since the run began that carries its mark.
    pub(crate) fn kill(&self) {
        let Some(before) = self.before else {
            return;
        };
        for _ in 0..ROUNDS {
            let Some(last) = last_pid() else {
                return;
            };
            let mut killed = false;
            for pid in started_between(before, last) {
                if self.marks(pid) && !is_own_thread(pid) {
                    let pid = Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
                    // ESRCH: it ended meanwhile, which is the point.
                    let _ = kill(pid, Signal::SIGKILL);
                    killed = true;
                }
            }
            if !killed {
                return;
            }
        }
    }

    /// Whether `pid`'s environment holds this run's mark.
    fn marks(&self, pid: u32) -> bool {
        std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
            environ
                .split(|&byte| byte == 0)
                .any(|entry| entry == self.entry)
        })
    }
}

/// The last pid the kernel handed out in this pid namespace.
fn last_pid() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether `pid` is a thread of this process (whose environment may carry another
/// server's mark, when this server was itself started by a command tool).
fn is_own_thread(pid: u32) -> bool {
    pid == std::process::id() || std::path::Path::new(&format!("/proc/self/task/{pid}")).exists()
}

/// The pids handed out after `before` up to `last`, allowing for the counter wrapping
/// around at `pid_max`.
fn started_between(before: u32, last: u32) -> Vec<u32> {
    let in_window = |pid: u32| {
        if before <= last {
            pid > before && pid <= last
        } else {
            pid > before || pid <= last
        }
    };
    let span = last.wrapping_sub(before);
    if before <= last && span <= WINDOW_BY_PID {
        return (before + 1..=last).collect();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| in_window(pid))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_per_run() {
        let (first, second) = (Leftovers::new(), Leftovers::new());
        assert_ne!(first.id(), second.id());
        assert!(first.id().starts_with(&format!("{}-", std::process::id())));
    }

    #[test]
    fn the_window_allows_for_wrapping() {
        assert_eq!(started_between(10, 13), [11, 12, 13]);
        assert!(started_between(13, 13).is_empty());
        // Wrapped: only what /proc lists in the window; this process is older than both.
        let own = std::process::id();
        assert!(!started_between(own, own.saturating_sub(1)).contains(&own));
    }
}
