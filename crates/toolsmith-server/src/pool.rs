//! The threads tools run on: few threads while calls are quick, more as soon as calls
//! stall behind slow ones.
//!
//! Why not tokio's blocking pool: it starts a thread whenever none is idle, so pipelined
//! quick calls spread over dozens of threads and every call pays a wake-up and a context
//! switch. Measured with `mcpload` (echo tool, 32 calls in flight, this 2-core box) that was
//! ~31 µs of server CPU per call, against ~18 µs with a single thread. Here a queued call
//! waits for a busy thread to come free, unless it has waited [`STALL`] already: then a
//! monitor starts another thread (up to the limit). A slow tool therefore delays the calls
//! queued behind it by about [`STALL`], never by its own run time.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// How long a queued call waits for a busy thread before another thread is started.
pub(crate) const STALL: Duration = Duration::from_millis(1);

/// How long an idle thread (or the monitor) lingers before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

type Job = Box<dyn FnOnce() + Send>;

/// A pool of threads for tool calls.
pub(crate) struct CallPool(Arc<Shared>);

struct Shared {
    state: Mutex<State>,
    /// Idle threads wait here for work.
    work: Condvar,
    /// The monitor waits here for a queue to watch.
    watch: Condvar,
    max_threads: usize,
}

#[derive(Default)]
struct State {
    queue: VecDeque<(Instant, Job)>,
    threads: usize,
    idle: usize,
    /// A monitor thread exists.
    monitor: bool,
    /// The monitor is waiting for the queue to fill (not timing a stall).
    monitor_waiting: bool,
}

impl CallPool {
    /// A pool of at most `max_threads` threads (at least one).
    pub(crate) fn new(max_threads: usize) -> Self {
        Self(Arc::new(Shared {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            watch: Condvar::new(),
            max_threads: max_threads.max(1),
        }))
    }

    /// Runs `job` on a pool thread; the receiver gets its result, or an error if it panicked.
    pub(crate) fn spawn<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> oneshot::Receiver<T> {
        let (sender, receiver) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = sender.send(job());
        });
        let mut state = self.0.lock();
        state.queue.push_back((Instant::now(), job));
        if state.idle > 0 {
            drop(state);
            self.0.work.notify_one();
        } else if state.threads == 0 {
            start_worker(&self.0, &mut state);
        } else if !state.monitor {
            state.monitor = true;
            let shared = Arc::clone(&self.0);
            if let Err(error) = std::thread::Builder::new()
                .name("toolsmith-calls-monitor".into())
                .spawn(move || monitor(&shared))
            {
                state.monitor = false;
                tracing::error!(%error, "cannot start the call pool monitor");
            }
        } else if state.monitor_waiting {
            state.monitor_waiting = false;
            drop(state);
            self.0.watch.notify_one();
        }
        receiver
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn start_worker(shared: &Arc<Shared>, state: &mut State) {
    let worker = Arc::clone(shared);
    match std::thread::Builder::new()
        .name("toolsmith-call".into())
        .spawn(move || work(&worker))
    {
        Ok(_) => state.threads += 1,
        Err(error) => tracing::error!(%error, "cannot start a thread for tool calls"),
    }
}

fn work(shared: &Arc<Shared>) {
    let mut state = shared.lock();
    loop {
        if let Some((_, job)) = state.queue.pop_front() {
            drop(state);
            // A panicking tool drops its result sender; the caller reports the crash.
            let _ = catch_unwind(AssertUnwindSafe(job));
            state = shared.lock();
            continue;
        }
        state.idle += 1;
        let (woken, wait) = shared
            .work
            .wait_timeout(state, KEEP_ALIVE)
            .unwrap_or_else(PoisonError::into_inner);
        state = woken;
        state.idle -= 1;
        if wait.timed_out() && state.queue.is_empty() {
            state.threads -= 1;
            return;
        }
    }
}

/// Starts a thread whenever the oldest queued call has waited [`STALL`] with no idle thread.
fn monitor(shared: &Arc<Shared>) {
    let mut state = shared.lock();
    loop {
        let wait = match state.queue.front() {
            None => {
                state.monitor_waiting = true;
                let (woken, wait) = shared
                    .watch
                    .wait_timeout(state, KEEP_ALIVE)
                    .unwrap_or_else(PoisonError::into_inner);
                state = woken;
                state.monitor_waiting = false;
                if wait.timed_out() && state.queue.is_empty() {
                    state.monitor = false;
                    return;
                }
                continue;
            }
            Some((queued, _)) => {
                let waited = queued.elapsed();
                if waited >= STALL && state.idle == 0 && state.threads < shared.max_threads {
                    start_worker(shared, &mut state);
                }
                STALL.saturating_sub(waited).max(STALL / 2)
            }
        };
        state = shared
            .watch
            .wait_timeout(state, wait)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_jobs_and_reports_panics() {
        let pool = CallPool::new(4);
        assert_eq!(pool.spawn(|| 2 + 2).blocking_recv().unwrap(), 4);
        let crashed = pool.spawn(|| -> u8 { panic!("tool bug") });
        assert!(crashed.blocking_recv().is_err());
        assert_eq!(
            pool.spawn(|| "still serving").blocking_recv().unwrap(),
            "still serving"
        );
    }

    #[test]
    fn a_stuck_job_does_not_hold_up_the_next() {
        let pool = CallPool::new(4);
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let blocked = pool.spawn(move || stuck.recv().ok());
        // Runs on a second thread once the monitor sees it stall.
        assert_eq!(pool.spawn(|| 7).blocking_recv().unwrap(), 7);
        release.send(()).unwrap();
        assert_eq!(blocked.blocking_recv().unwrap(), Some(()));
    }
}
