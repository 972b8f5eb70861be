//! Shared helpers for Toolsmith's benchmarks: timing loops that report medians, so that
//! numbers from a noisy, shared machine are comparable within one run.

use std::time::{Duration, Instant};

pub mod baselines;
pub mod code_mode;
pub mod discovery;

/// The median time per iteration of `batches` runs of `iterations` calls each.
pub fn median_per_call(batches: usize, iterations: u32, mut call: impl FnMut()) -> Duration {
    let mut samples: Vec<Duration> = (0..batches)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..iterations {
                call();
            }
            started.elapsed() / iterations
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// The split of a query of `discovery/queries.jsonl`: train (40 %), dev (20 %) or test
/// (40 %), by an FNV-1a hash of its text, so it never changes between runs or machines.
#[must_use]
pub fn split_of(text: &str) -> &'static str {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.trim().to_lowercase().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    match hash % 10 {
        0..=3 => "train",
        4 | 5 => "dev",
        _ => "test",
    }
}

/// Formats a duration in microseconds with two decimals.
pub fn micros(duration: Duration) -> String {
    format!("{:.2} µs", duration.as_secs_f64() * 1e6)
}
