//! Who hears that an upstream's tools changed (`notifications/tools/list_changed`, or a
//! restart that listed different tools): the program serving the folder, which loads it
//! again so that its clients get their own `tools/list_changed` (docs/gateway.md); and who
//! hears that a resource it was subscribed to changed (`notifications/resources/updated`):
//! the server, which tells the sessions subscribed to it.

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
