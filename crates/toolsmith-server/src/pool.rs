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
//!
//! A job the caller stops waiting for (the watchdog gave up on it, or the client cancelled)
//! is *abandoned*: its thread no longer counts against the limit, and its lease (the call's
//! slot) is released at once, so a tool that never returns cannot wedge the server
//! (docs/faults.md). Threads cannot be killed, so abandoned ones are bounded instead: past
//! `max_abandoned` of them still running, an abandoned job keeps its lease and its place
//! until it really ends, and new calls wait for slots (and get "busy") rather than pile up
//! threads.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// How long a queued call waits for a busy thread before another thread is started.
pub(crate) const STALL: Duration = Duration::from_millis(1);

/// How long an idle thread (or the monitor) lingers before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// A queued job; returns whether its caller had abandoned it by the time it ended.
type Job = Box<dyn FnOnce() -> bool + Send>;

/// A pool of threads for tool calls.
pub(crate) struct CallPool(Arc<Shared>);

struct Shared {
    state: Mutex<State>,
    /// Idle threads wait here for work.
    work: Condvar,
    /// The monitor waits here for a queue to watch.
    watch: Condvar,
    max_threads: usize,
    /// How many abandoned jobs may go on running without their lease.
    max_abandoned: usize,
}

#[derive(Default)]
struct State {
    queue: VecDeque<(Instant, Job)>,
    /// Threads counted against `max_threads`: all but those running abandoned jobs.
    threads: usize,
    idle: usize,
    /// Threads running an abandoned job that gave its lease back.
    abandoned: usize,
    /// A monitor thread exists.
    monitor: bool,
    /// The monitor is waiting for the queue to fill (not timing a stall).
    monitor_waiting: bool,
}

impl CallPool {
    /// A pool of at most `max_threads` working threads (at least one), plus at most
    /// `max_abandoned` threads still busy with abandoned jobs.
    pub(crate) fn new(max_threads: usize, max_abandoned: usize) -> Self {
        Self(Arc::new(Shared {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            watch: Condvar::new(),
            max_threads: max_threads.max(1),
            max_abandoned,
        }))
    }

    /// Runs `job` on a pool thread, holding `lease` until it ends or is abandoned.
    ///
    /// The returned [`Running`] resolves to the job's result, or an error if it panicked;
    /// dropping it before then abandons the job.
    pub(crate) fn spawn<T: Send + 'static, L: Send + 'static>(
        &self,
        lease: L,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Running<T, L> {
        let (sender, receiver) = oneshot::channel();
        let claim = Arc::new(Mutex::new(Claim {
            lease: Some(lease),
            phase: Phase::Queued,
        }));
        let held = Arc::clone(&claim);
        let job: Job = Box::new(move || {
            {
                let mut claim = lock(&held);
                if claim.phase == Phase::Abandoned {
                    // Given up on before it started: it never runs.
                    return false;
                }
                claim.phase = Phase::Running;
            }
            // A panicking tool drops its result sender; the caller reports the crash.
            let result = catch_unwind(AssertUnwindSafe(job));
            let (phase, lease) = {
                let mut claim = lock(&held);
                (
                    std::mem::replace(&mut claim.phase, Phase::Ended),
                    claim.lease.take(),
                )
            };
            // The lease goes before the result: a caller that sees the result finds the
            // slot free again.
            drop(lease);
            if let Ok(result) = result {
                let _ = sender.send(result);
            }
            phase == Phase::Abandoned
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
        Running {
            result: receiver,
            claim,
            pool: Arc::clone(&self.0),
        }
    }
}

/// A job's lease and how far it got, shared by its thread and its [`Running`] handle.
struct Claim<L> {
    /// Held until the job ends, or is abandoned within the budget.
    lease: Option<L>,
    phase: Phase,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Queued,
    Running,
    Ended,
    /// The caller gave up on the job: before it started (it never runs), or while it ran
    /// (its thread no longer counts against the limit).
    Abandoned,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A job running on the pool: a future of its result. Dropped before the job ends, the job
/// is abandoned (see the module documentation).
pub(crate) struct Running<T, L> {
    result: oneshot::Receiver<T>,
    claim: Arc<Mutex<Claim<L>>>,
    pool: Arc<Shared>,
}

impl<T, L> Future for Running<T, L> {
    type Output = Result<T, oneshot::error::RecvError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.result).poll(cx)
    }
}

impl<T, L> Drop for Running<T, L> {
    fn drop(&mut self) {
        let mut claim = lock(&self.claim);
        match claim.phase {
            Phase::Ended | Phase::Abandoned => return,
            Phase::Queued => {
                claim.phase = Phase::Abandoned;
                let lease = claim.lease.take();
                drop(claim);
                drop(lease);
                return;
            }
            Phase::Running => {}
        }
        // Lock order: a claim, then the pool (a job's thread never holds both).
        let mut state = self.pool.lock();
        if state.abandoned >= self.pool.max_abandoned {
            tracing::warn!(
                abandoned = state.abandoned,
                "too many abandoned tool calls are still running; this one keeps its slot until it ends"
            );
            return;
        }
        claim.phase = Phase::Abandoned;
        let lease = claim.lease.take();
        drop(claim);
        state.threads -= 1;
        state.abandoned += 1;
        // Calls queued behind the abandoned one get a thread in its place.
        if !state.queue.is_empty() && state.idle == 0 {
            start_worker(&self.pool, &mut state);
        }
        drop(state);
        drop(lease);
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
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
            let abandoned = job();
            state = shared.lock();
            if abandoned {
                // Another thread took this one's place when its job was abandoned.
                state.abandoned -= 1;
                if state.threads >= shared.max_threads {
                    return;
                }
                state.threads += 1;
            }
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

    fn wait<T, L>(running: Running<T, L>) -> Result<T, oneshot::error::RecvError> {
        block_on(running)
    }

    /// Polls a future to completion on this thread (the pool's threads do the work).
    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn runs_jobs_and_reports_panics() {
        let pool = CallPool::new(4, 4);
        assert_eq!(wait(pool.spawn((), || 2 + 2)).unwrap(), 4);
        let crashed = pool.spawn((), || -> u8 { panic!("tool bug") });
        assert!(wait(crashed).is_err());
        assert_eq!(
            wait(pool.spawn((), || "still serving")).unwrap(),
            "still serving"
        );
    }

    #[test]
    fn a_stuck_job_does_not_hold_up_the_next() {
        let pool = CallPool::new(4, 4);
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let blocked = pool.spawn((), move || stuck.recv().ok());
        // Runs on a second thread once the monitor sees it stall.
        assert_eq!(wait(pool.spawn((), || 7)).unwrap(), 7);
        release.send(()).unwrap();
        assert_eq!(wait(blocked).unwrap(), Some(()));
    }

    // Regression test: a job that never returns kept its thread's
    // place (and its call's slot) for good, so enough of them wedged the pool.
    #[test]
    fn abandoned_jobs_give_back_their_lease_and_their_thread_s_place() {
        let pool = CallPool::new(1, 2);
        let slots = Arc::new(tokio::sync::Semaphore::new(1));
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let stuck = Arc::new(Mutex::new(stuck));
        // A job that blocks until released, abandoned once it has started.
        let abandon_stuck_job = || {
            let slot = Arc::clone(&slots).try_acquire_owned().expect("a free slot");
            let (started, running) = std::sync::mpsc::channel();
            let stuck = Arc::clone(&stuck);
            let job = pool.spawn(slot, move || {
                started.send(()).unwrap();
                lock(&stuck).recv().ok()
            });
            running.recv().unwrap();
            drop(job);
        };
        abandon_stuck_job();
        abandon_stuck_job();
        // Both abandoned within the budget: the slot is free, and a job still runs
        // although the one working thread allowed is stuck.
        let slot = Arc::clone(&slots)
            .try_acquire_owned()
            .expect("the slot came back");
        assert_eq!(wait(pool.spawn(slot, || 7)).unwrap(), 7);

        // Past the budget, an abandoned job keeps its slot until it really ends.
        abandon_stuck_job();
        assert!(Arc::clone(&slots).try_acquire_owned().is_err());
        for _ in 0..3 {
            release.send(()).unwrap();
        }
        let slot = block_on(Arc::clone(&slots).acquire_owned()).unwrap();
        assert_eq!(wait(pool.spawn(slot, || 8)).unwrap(), 8);
    }

    #[test]
    fn a_job_abandoned_before_it_starts_never_runs() {
        let pool = CallPool::new(1, 1);
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let (started, running) = std::sync::mpsc::channel();
        let busy = pool.spawn((), move || {
            started.send(()).unwrap();
            stuck.recv().ok()
        });
        running.recv().unwrap();
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        let queued = pool.spawn((), move || {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        drop(queued);
        release.send(()).unwrap();
        assert_eq!(wait(busy).unwrap(), Some(()));
        assert_eq!(wait(pool.spawn((), || 9)).unwrap(), 9);
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    }
}
