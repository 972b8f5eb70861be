//! Limits counted in this process: one replica, or no `--state` (docs/limits.md).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{CounterError, Counters, Window};

/// How many windows are kept before the ended ones are swept out.
const SWEEP_AT: usize = 10_000;

/// Fixed windows and slot counts in a map behind a lock.
#[derive(Debug, Default)]
pub struct MemoryCounters {
    windows: Mutex<HashMap<String, (u64, Instant)>>,
    slots: Mutex<HashMap<String, u32>>,
}

#[async_trait::async_trait]
impl Counters for MemoryCounters {
    async fn count(&self, key: &str, window: Duration) -> Result<Window, CounterError> {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        if windows.len() >= SWEEP_AT {
            windows.retain(|_, (_, ends)| *ends > now);
        }
        let entry = windows.entry(key.to_owned()).or_insert((0, now + window));
        if entry.1 <= now {
            *entry = (0, now + window);
        }
        entry.0 += 1;
        Ok(Window {
            count: entry.0,
            resets_in: entry.1.saturating_duration_since(now),
        })
    }

    async fn acquire(&self, key: &str, limit: u32) -> Result<bool, CounterError> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let taken = slots.entry(key.to_owned()).or_insert(0);
        if *taken >= limit {
            return Ok(false);
        }
        *taken += 1;
        Ok(true)
    }

    async fn release(&self, key: &str) -> Result<(), CounterError> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(taken) = slots.get_mut(key) {
            *taken = taken.saturating_sub(1);
            if *taken == 0 {
                slots.remove(key);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_window_starts_again_once_it_has_ended() {
        let counters = MemoryCounters::default();
        let window = Duration::from_millis(30);
        assert_eq!(counters.count("k", window).await.unwrap().count, 1);
        assert_eq!(counters.count("k", window).await.unwrap().count, 2);
        std::thread::sleep(window);
        assert_eq!(counters.count("k", window).await.unwrap().count, 1);
    }
}
