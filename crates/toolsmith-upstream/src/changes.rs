//! Who hears that an upstream's tools changed (`notifications/tools/list_changed`, or a
//! restart that listed different tools): the program serving the folder, which loads it
//! again so that its clients get their own `tools/list_changed` (docs/gateway.md).

use std::sync::{Mutex, PoisonError};

type Listener = Box<dyn Fn() + Send + Sync>;

static LISTENER: Mutex<Option<Listener>> = Mutex::new(None);

/// Calls `listener` (on a runtime thread; it must not block for long) whenever an
/// upstream's tools change. A second call replaces the first listener.
pub fn on_tools_changed(listener: impl Fn() + Send + Sync + 'static) {
    *LISTENER.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(listener));
}

pub(crate) fn notify() {
    if let Some(listener) = LISTENER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
    {
        listener();
    }
}
