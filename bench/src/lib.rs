//! Shared helpers for Toolsmith's benchmarks: timing loops that report medians, so that
//! numbers from a noisy, shared machine are comparable within one run.

use std::time::{Duration, Instant};

pub mod baselines;

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

/// Formats a duration in microseconds with two decimals.
pub fn micros(duration: Duration) -> String {
    format!("{:.2} µs", duration.as_secs_f64() * 1e6)
}
