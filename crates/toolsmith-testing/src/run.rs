//! Running cases: each through [`Caller::call_with_timeout`], the path the server uses
//! (validation, watchdog, result contract), on a small pool of threads.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use toolsmith_folder::Caller;
use toolsmith_model::CallOutcome;

use crate::case::TestCase;
use crate::failure::Failure;

/// The most threads a run uses, whatever the machine: tool calls are mostly short, and
/// command tools start processes of their own.
pub const MAX_WORKERS: usize = 8;

/// How a case ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Every expectation held.
    Passed,
    /// At least one did not (or the case could not run).
    Failed(Vec<Failure>),
    /// Not run: `skip`, or its tool is hidden by `requires`.
    Skipped(String),
}

/// A case and how it went.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case.
    pub case: TestCase,
    /// How it ended.
    pub status: Status,
    /// How long the call took (zero when it did not run).
    pub duration: Duration,
    /// What the call returned, when it ran.
    pub outcome: Option<CallOutcome>,
}

/// The number of threads to use: one per core, at most [`MAX_WORKERS`].
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_WORKERS)
}

/// Runs `cases` on `workers` threads and returns the results in the order of `cases`.
///
/// `finished` is called (from the worker threads) after each case, for progress.
pub fn run_cases(
    caller: &Caller,
    cases: Vec<TestCase>,
    workers: usize,
    finished: &(dyn Fn(&CaseResult) + Sync),
) -> Vec<CaseResult> {
    let count = cases.len();
    let next = AtomicUsize::new(0);
    // Each slot holds a case until a worker takes it, then that case's result.
    let slots: Vec<Mutex<Slot>> = cases
        .into_iter()
        .map(|case| Mutex::new(Slot::Waiting(Box::new(case))))
        .collect();
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, count.max(1)) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(slot) = slots.get(index) else { break };
                    let taken = std::mem::replace(&mut *lock(slot), Slot::Running);
                    let Slot::Waiting(case) = taken else {
                        unreachable!("each index is handed out once")
                    };
                    let result = run_case(caller, *case);
                    finished(&result);
                    *lock(slot) = Slot::Done(Box::new(result));
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            match slot
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
            {
                Slot::Done(result) => *result,
                Slot::Waiting(_) | Slot::Running => {
                    unreachable!("the workers run every case before the scope ends")
                }
            }
        })
        .collect()
}

/// One case's place in a run.
enum Slot {
    Waiting(Box<TestCase>),
    Running,
    Done(Box<CaseResult>),
}

fn lock(slot: &Mutex<Slot>) -> std::sync::MutexGuard<'_, Slot> {
    // A worker that panicked leaves its slot as it was; the scope re-raises the panic.
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs one case.
pub fn run_case(caller: &Caller, case: TestCase) -> CaseResult {
    let body = match &case.body {
        Err(message) => {
            let status = Status::Failed(vec![Failure::Invalid {
                message: message.clone(),
            }]);
            return CaseResult {
                case,
                status,
                duration: Duration::ZERO,
                outcome: None,
            };
        }
        Ok(body) => body,
    };
    if let Some(reason) = &body.skip {
        let status = Status::Skipped(reason.clone());
        return CaseResult {
            case,
            status,
            duration: Duration::ZERO,
            outcome: None,
        };
    }
    let started = Instant::now();
    let outcome = caller.call_with_timeout(&case.tool, body.args.clone(), body.timeout);
    let duration = started.elapsed();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(unknown) => {
            let status = Status::Failed(vec![Failure::Invalid {
                message: unknown.to_string(),
            }]);
            return CaseResult {
                case,
                status,
                duration,
                outcome: None,
            };
        }
    };
    let mut failures = body.expect.check(&outcome);
    if let (Some(after), [Failure::UnexpectedError { text }]) = (body.timeout, failures.as_slice())
        && duration >= after
    {
        // The tool's own message names the tool's timeout; say which one applied.
        failures = vec![Failure::TimedOut {
            after,
            text: text.clone(),
        }];
    }
    let status = if failures.is_empty() {
        Status::Passed
    } else {
        Status::Failed(failures)
    };
    CaseResult {
        case,
        status,
        duration,
        outcome: Some(outcome),
    }
}
