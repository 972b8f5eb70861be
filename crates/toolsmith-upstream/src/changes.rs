//! Who hears that an upstream's tools changed (`notifications/tools/list_changed`, or a
//! restart that listed different tools): the program serving the folder, which loads it
//! again so that its clients get their own `tools/list_changed` (docs/gateway.md); and who
//! hears that a resource it was subscribed to changed (`notifications/resources/updated`):
//! the server, which tells the sessions subscribed to it.
//!
//! An upstream may send such notifications by the thousand, so they are coalesced: the
//! listener runs on one thread of its own, one call at a time; the changes heard while it
//! runs make one more call however many they are, and two calls start at least
//! [`RELOAD_INTERVAL`] apart.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

type Listener = Arc<dyn Fn() + Send + Sync>;

static LISTENER: Mutex<Option<Listener>> = Mutex::new(None);

/// The shortest time between the starts of two calls of the listener.
pub(crate) const RELOAD_INTERVAL: Duration = Duration::from_millis(250);

/// Calls `listener` (on a thread of its own, where it may block) after an upstream's tools,
/// prompts or resources changed: once for a burst of changes, at most once every
/// [`RELOAD_INTERVAL`]. A second call replaces the first listener.
pub fn on_tools_changed(listener: impl Fn() + Send + Sync + 'static) {
    *LISTENER.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(listener));
}

/// The changes not yet passed to the listener, and its thread.
struct Pending {
    /// A change was heard since the listener's last call started.
    changed: bool,
    /// The listener's thread runs.
    started: bool,
}

static PENDING: Mutex<Pending> = Mutex::new(Pending {
    changed: false,
    started: false,
});
static WAKE: Condvar = Condvar::new();

/// Notes a change, for the listener's thread to pass on; never blocks.
pub(crate) fn notify() {
    if LISTENER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .is_none()
    {
        return;
    }
    let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
    pending.changed = true;
    if !pending.started {
        let spawned = std::thread::Builder::new()
            .name("toolsmith-upstream-changes".to_owned())
            .spawn(pass_on);
        match spawned {
            Ok(_) => pending.started = true,
            Err(error) => tracing::warn!(
                "cannot start the thread that reloads after an upstream's changes: {error}"
            ),
        }
    }
    WAKE.notify_one();
}

/// The listener's thread: waits for a change, calls the listener, rests, and again.
fn pass_on() {
    loop {
        {
            let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
            while !pending.changed {
                pending = WAKE.wait(pending).unwrap_or_else(PoisonError::into_inner);
            }
            pending.changed = false;
        }
        let listener = LISTENER
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // A listener that panics must not stop every later reload.
        if let Some(listener) = listener
            && std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| listener())).is_err()
        {
            tracing::warn!(
                "reloading after an upstream's change panicked; the next change reloads again"
            );
        }
        std::thread::sleep(RELOAD_INTERVAL);
    }
}

type UpdateListener = Box<dyn Fn(&str) -> bool + Send + Sync>;

static UPDATE_LISTENER: Mutex<Option<UpdateListener>> = Mutex::new(None);

/// Calls `listener` with the URI (on a runtime thread, inside the upstreams' runtime; it
/// must not block) whenever an upstream reports a subscribed resource changed; it answers
/// whether any session still subscribes to it. A second call replaces the first listener.
pub fn on_resource_updated(listener: impl Fn(&str) -> bool + Send + Sync + 'static) {
    *UPDATE_LISTENER
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(Box::new(listener));
}

/// Whether a session heard that `uri` changed.
pub(crate) fn resource_updated(uri: &str) -> bool {
    UPDATE_LISTENER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .is_some_and(|listener| listener(uri))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// 5,000 `tools/list_changed` in a burst each started a thread to reload, and aborted
    /// the server: the burst makes one or two calls now.
    #[test]
    fn a_burst_of_changes_calls_the_listener_a_few_times() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let (done, finished) = std::sync::mpsc::channel();
        let done = Mutex::new(done);
        on_tools_changed(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = done.lock().unwrap_or_else(PoisonError::into_inner).send(());
        });
        for _ in 0..5000 {
            notify();
        }
        finished
            .recv_timeout(Duration::from_secs(30))
            .expect("the listener is called");
        // A call started while the burst was being noted queues one more, and no more.
        let _ = finished.recv_timeout(RELOAD_INTERVAL * 4);
        let called = calls.load(Ordering::SeqCst);
        assert!((1..=2).contains(&called), "the listener ran {called} times");
    }
}
