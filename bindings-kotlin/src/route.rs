//! Routing a delivery by its event name for Kotlin: conversions only. The handlers are the
//! host's (`EventRouter` in RoyaltyKit.kt keeps them by the indices given here).

use crate::Result;
use royaltykit::webhook::{self, Route};
use std::sync::{Arc, Mutex};

/// The registrations of an `EventRouter`, names only: `on(name)` gives the registration's index,
/// `route(name)` says which indices a delivery of that event goes to (a `Route`). Kotlin's
/// `EventRouter` (RoyaltyKit.kt) keeps the handlers by these indices. Thread-safe.
#[derive(uniffi::Object)]
pub struct EventRoutes(Mutex<webhook::EventRouter>);

impl EventRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, webhook::EventRouter> {
        crate::machine::lock(&self.0)
    }
}

#[uniffi::export]
impl EventRoutes {
    /// No registration.
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(Self(Mutex::new(webhook::EventRouter::new())))
    }

    /// Registers a handler for the event `name` (as the service sends it) and returns its index
    /// (a signed `Long`, callable from Java). `RoyaltyKitException.InvalidArgument` for an empty
    /// name, one longer than 256 bytes or one with a space or control character; a name the spec
    /// does not list is accepted.
    pub fn on(&self, name: String) -> Result<i64> {
        Ok(self.lock().on(&name)?.into())
    }

    /// Registers a handler of every delivery.
    pub fn on_any(&self) {
        self.lock().on_any();
    }

    /// Registers the fallback: the handler of the deliveries no `on` handler names.
    pub fn otherwise(&self) {
        self.lock().otherwise();
    }

    /// Where a delivery of the event `name` goes.
    pub fn route(&self, name: String) -> Route {
        self.lock().route(&name)
    }
}

/// The event names the spec lists, as the service sends them. Kotlin's `EventNames` holds one
/// constant per name (a test keeps the two equal).
#[uniffi::export]
pub fn known_event_names() -> Vec<String> {
    webhook::known_event_names()
        .into_iter()
        .map(str::to_owned)
        .collect()
}
