//! The server-wide memory budget for running Starlark evaluations, and the result-size
//! limit.
//!
//! Each evaluation's heap is capped on its own ([`heap_limit`]), but many
//! concurrent calls under that cap can still exhaust the process, and Rust aborts on an
//! allocation failure. So every evaluation holds a reservation against one process-wide
//! budget: a few MiB when it starts (waiting briefly when the budget is used up, then
//! failing as "busy"), grown as its heap grows (checked with the periodic cancellation
//! check, and before each guarded operation that builds a large value). The bookkeeping is
//! one atomic counter plus a thread-local, and a set of the running evaluations' start
//! tickets, locked once when an evaluation starts and once when it ends.
//!
//! When the budget is used up, every growing evaluation waits for room, and room appears
//! only when one of them ends. So they do not all wait alike: after each [`GROWTH_WAIT`]
//! the younger half of the evaluations still running gives up and frees what it holds,
//! and the older half waits on (at most [`OLDEST_GROWTH_WAIT`], never past its deadline),
//! until what is left fits. Sixteen calls that each need a tenth of the budget then end
//! with the first several answered and the rest "busy", instead of all sixteen holding a
//! sixteenth and failing together.
//!
//! The budget defaults to half of the smallest of: the cgroup's `memory.max`, physical
//! memory, and half the address space left under `ulimit -v` (the heap's arena grows in
//! doubling chunks, so address space runs out up to twice as fast as memory is used); `TOOLSMITH_MEMORY_BUDGET` (or [`set_memory_budget`])
//! overrides it. `TOOLSMITH_MAX_RESULT_SIZE` (or [`set_result_limit`]) sets the largest
//! result a Starlark tool may return, and `TOOLSMITH_HEAP_LIMIT` (or [`set_heap_limit`]) the
//! heap of one evaluation.
//!
//! The per-evaluation limit is high (1 GiB, never more than the budget) because it counts
//! garbage: starlark 0.14 collects garbage only between a module's top-level statements,
//! never inside a call, so a loop that makes a new integer or string per iteration grows the
//! heap however little of it is live (docs/tools.md, "limits"). The budget,
//! not this limit, is what keeps many calls from exhausting the process.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::convert::megabytes;

/// The largest result (text, or JSON text) a Starlark tool may return, unless configured.
pub const DEFAULT_RESULT_LIMIT: usize = 16 << 20;

/// The environment variable that sets the memory budget (`2GiB`, `512MiB`, bytes).
pub const MEMORY_BUDGET_VAR: &str = "TOOLSMITH_MEMORY_BUDGET";

/// The environment variable that sets the result-size limit (`16MiB`, bytes).
pub const RESULT_LIMIT_VAR: &str = "TOOLSMITH_MAX_RESULT_SIZE";

/// How much memory the Starlark heap of one evaluation may use, unless configured (and
/// never more than the memory budget).
pub const DEFAULT_HEAP_LIMIT: usize = 1 << 30;

/// The environment variable that sets the per-evaluation heap limit (`1GiB`, bytes).
pub const HEAP_LIMIT_VAR: &str = "TOOLSMITH_HEAP_LIMIT";

/// The budget when no limit can be read from the system (not Linux).
const FALLBACK_BUDGET: usize = 2 << 30;

/// What an evaluation reserves when it starts.
const INITIAL_RESERVATION: usize = 4 << 20;

/// The steps a reservation grows in.
const GROWTH: usize = 8 << 20;

/// How long a call waits for budget to start, or to grow, before it is refused.
const START_WAIT: Duration = Duration::from_secs(2);
const GROWTH_WAIT: Duration = Duration::from_millis(500);

/// How long an evaluation in the older half waits to grow, at most (never past its
/// deadline).
const OLDEST_GROWTH_WAIT: Duration = Duration::from_secs(10);

static BUDGET: OnceLock<usize> = OnceLock::new();
static RESULT_LIMIT: OnceLock<usize> = OnceLock::new();
static HEAP_LIMIT: OnceLock<usize> = OnceLock::new();
static USED: AtomicUsize = AtomicUsize::new(0);

/// The start tickets of the running evaluations, oldest first.
static RUNNING: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());
static NEXT_TICKET: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// What the evaluation running on this thread has reserved; `None` when none runs.
    static HELD: Cell<Option<usize>> = const { Cell::new(None) };
    /// The start ticket of the evaluation running on this thread.
    static TICKET: Cell<u64> = const { Cell::new(0) };
    /// When the evaluation running on this thread must be over.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Sets the memory budget for all running Starlark evaluations, in bytes; false when it
/// was already set (or already read). Call it before the first tool runs.
pub fn set_memory_budget(bytes: usize) -> bool {
    BUDGET.set(bytes.max(INITIAL_RESERVATION)).is_ok()
}

/// The memory budget for all running Starlark evaluations, in bytes.
pub fn memory_budget() -> usize {
    *BUDGET.get_or_init(|| {
        configured(MEMORY_BUDGET_VAR).unwrap_or_else(|| {
            [address_space_room(), cgroup_limit(), physical_memory()]
                .into_iter()
                .flatten()
                .min()
                .map_or(FALLBACK_BUDGET, |limit| limit / 2)
        })
    })
}

/// Sets the largest result a Starlark tool may return, in bytes; false when it was already
/// set (or already read).
pub fn set_result_limit(bytes: usize) -> bool {
    RESULT_LIMIT.set(bytes).is_ok()
}

/// The largest result a Starlark tool may return, in bytes.
pub fn result_limit() -> usize {
    *RESULT_LIMIT.get_or_init(|| configured(RESULT_LIMIT_VAR).unwrap_or(DEFAULT_RESULT_LIMIT))
}

/// Sets how much heap one Starlark evaluation may use, in bytes; false when it was already
/// set (or already read). Call it before the first tool runs.
pub fn set_heap_limit(bytes: usize) -> bool {
    HEAP_LIMIT.set(bytes.max(INITIAL_RESERVATION)).is_ok()
}

/// How much heap one Starlark evaluation may use, in bytes: `TOOLSMITH_HEAP_LIMIT` or
/// [`DEFAULT_HEAP_LIMIT`], at most the [`memory_budget`].
pub fn heap_limit() -> usize {
    *HEAP_LIMIT.get_or_init(|| {
        configured(HEAP_LIMIT_VAR)
            .unwrap_or(DEFAULT_HEAP_LIMIT)
            .min(memory_budget())
            .max(INITIAL_RESERVATION)
    })
}

/// A size setting from the environment; a bad value is logged and ignored.
fn configured(variable: &str) -> Option<usize> {
    let text = std::env::var(variable).ok()?;
    let parsed = parse_size(&text);
    if parsed.is_none() {
        tracing::warn!(
            "ignoring `{variable}={text}`: expected a size such as `512MiB`, `2GiB` or a number of bytes"
        );
    }
    parsed
}

/// Parses `512MiB`, `2G`, `16mb`, `1048576`: a whole number with an optional binary unit.
pub fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: usize = number.parse().ok()?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return None,
    };
    number.checked_mul(1 << shift)
}

/// Half the address space left under the soft limit (`ulimit -v`): the limit from
/// `/proc/self/limits` less the process's current size from `/proc/self/status`.
fn address_space_room() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find_map(|line| line.strip_prefix("Max address space"))?;
    let limit: usize = line.split_whitespace().next()?.parse().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let size = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))
        .and_then(|size| {
            size.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<usize>()
                .ok()
        })
        .map_or(0, |kilobytes| kilobytes.saturating_mul(1024));
    Some(limit.saturating_sub(size) / 2)
}

/// The cgroup v2 memory limit of this process.
fn cgroup_limit() -> Option<usize> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?;
    let file = format!("/sys/fs/cgroup{}/memory.max", path.trim_end_matches('/'));
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Physical memory, from `/proc/meminfo`.
fn physical_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))?;
    let kilobytes: usize = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    kilobytes.checked_mul(1024)
}

/// Why an evaluation could not get memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Busy {
    /// The other running evaluations hold the rest of the budget; this one holds `held`
    /// bytes (0 when it could not start).
    Shared { held: usize },
    /// This evaluation alone needs more than the whole budget: it holds `held` bytes and
    /// asked for `needed`.
    Over { held: usize, needed: usize },
}

impl Busy {
    /// The message a refused call shows.
    pub(crate) fn message(self) -> String {
        match self {
            // Garbage counts: Starlark (0.14) frees a call's values only when it returns, so
            // a call that made much of it is told its own share, not only the others'.
            Self::Shared { held } if held > INITIAL_RESERVATION => format!(
                "the server is busy: running scripts hold its whole memory budget ({}), {} MiB \
                 of it this call's own (values a call no longer uses count until it returns: \
                 a loop that builds a new value per step holds them all); try again shortly, \
                 or raise the budget with `{MEMORY_BUDGET_VAR}`",
                megabytes(memory_budget()),
                held >> 20
            ),
            Self::Shared { .. } => format!(
                "the server is busy: running scripts hold its whole memory budget ({}); \
                 try again shortly, or raise the budget with `{MEMORY_BUDGET_VAR}`",
                megabytes(memory_budget())
            ),
            Self::Over { held, needed } => format!(
                "this call went over the memory budget: it held {} MiB and needed {} MiB, \
                 more than the {} all running scripts may hold together; hold less (values \
                 the call no longer uses count until it returns), or raise the budget with \
                 `{MEMORY_BUDGET_VAR}`",
                held >> 20,
                needed.div_ceil(1 << 20),
                megabytes(memory_budget())
            ),
        }
    }
}

/// The running evaluation's share of the budget, given back when dropped.
pub(crate) struct Reservation {
    /// False for an evaluation nested in another on the same thread, which shares its
    /// reservation.
    outer: bool,
    /// The reservation belongs to this thread's evaluation.
    _not_send: PhantomData<*const ()>,
}

/// Reserves the start of an evaluation's memory, waiting up to a couple of seconds for
/// other evaluations to finish (or until `stopped` says the call is over). The evaluation
/// must end by `deadline`: waiting to grow never goes past it.
pub(crate) fn reserve(stopped: &dyn Fn() -> bool, deadline: Instant) -> Result<Reservation, Busy> {
    if HELD.get().is_some() {
        return Ok(Reservation {
            outer: false,
            _not_send: PhantomData,
        });
    }
    if !take(INITIAL_RESERVATION, START_WAIT, stopped) {
        return Err(Busy::Shared { held: 0 });
    }
    HELD.set(Some(INITIAL_RESERVATION));
    let ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
    TICKET.set(ticket);
    DEADLINE.set(Some(deadline));
    running().insert(ticket);
    Ok(Reservation {
        outer: true,
        _not_send: PhantomData,
    })
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.outer
            && let Some(held) = HELD.take()
        {
            running().remove(&TICKET.get());
            USED.fetch_sub(held, Ordering::AcqRel);
        }
    }
}

fn running() -> std::sync::MutexGuard<'static, BTreeSet<u64>> {
    RUNNING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Grows the running evaluation's reservation to cover `bytes`; `Err` when the budget
/// stays exhausted, or `stopped` says the call is over while it waits: the younger half of
/// the running evaluations waits [`GROWTH_WAIT`], the older half on (see the module
/// documentation). Outside an evaluation there is nothing to grow.
pub(crate) fn ensure(bytes: usize, stopped: &dyn Fn() -> bool) -> Result<(), Busy> {
    let Some(held) = HELD.get() else {
        return Ok(());
    };
    if bytes <= held {
        return Ok(());
    }
    let budget = memory_budget();
    if bytes > budget {
        // No wait can make room: this evaluation alone is over the budget.
        return Err(Busy::Over {
            held,
            needed: bytes,
        });
    }
    // Whole steps, but never past the budget (which need not be a multiple of a step).
    let wanted = bytes.div_ceil(GROWTH).saturating_mul(GROWTH).min(budget);
    let more = wanted - held;
    // Rounds of GROWTH_WAIT: after each, only the older half of the evaluations still
    // running waits on (the rest give up and free what they hold), so the set shrinks
    // until what is left fits, down to the one that started first.
    let patience = DEADLINE
        .get()
        .map_or(GROWTH_WAIT, |deadline| {
            deadline.saturating_duration_since(Instant::now())
        })
        .clamp(GROWTH_WAIT, OLDEST_GROWTH_WAIT);
    let started = Instant::now();
    let granted = loop {
        if take(more, GROWTH_WAIT, stopped) {
            break true;
        }
        if stopped() || started.elapsed() >= patience || !in_older_half() {
            break false;
        }
    };
    if granted {
        HELD.set(Some(wanted));
        Ok(())
    } else {
        Err(Busy::Shared { held })
    }
}

/// Whether this thread's evaluation is in the older half of those running (the oldest,
/// rank 0, always is: its own ticket is in the set).
fn in_older_half() -> bool {
    let running = running();
    let ticket = TICKET.get();
    let rank = running.iter().take_while(|other| **other < ticket).count();
    rank * 2 < running.len()
}

/// Takes `bytes` from the budget, retrying for up to `wait`.
fn take(bytes: usize, wait: Duration, stopped: &dyn Fn() -> bool) -> bool {
    let budget = memory_budget();
    if bytes > budget {
        return false;
    }
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let taken = USED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            used.checked_add(bytes).filter(|total| *total <= budget)
        });
        if taken.is_ok() {
            return true;
        }
        if started.elapsed() >= wait || stopped() {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::{Busy, parse_size};

    #[test]
    fn a_busy_call_holding_much_of_the_budget_is_told_its_own_share() {
        // A loop that made and dropped small values beside another call was told only that
        // "running scripts hold its whole memory budget", though most of it was its own
        // garbage, which Starlark frees only when the call returns.
        let own = Busy::Shared { held: 300 << 20 }.message();
        assert!(own.contains("300 MiB of it this call's own"), "{own}");
        assert!(own.contains("count until it returns"), "{own}");
        let starting = Busy::Shared { held: 0 }.message();
        assert!(!starting.contains("this call's own"), "{starting}");
    }

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        assert_eq!(parse_size("512MiB"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("16 mb"), Some(16 << 20));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("5 parsecs"), None);
    }
}
