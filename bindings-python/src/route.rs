//! Routing a delivery by its event name for Python: conversions only. The handlers are the
//! host's (`royaltykit.EventRouter` in `receiver.py` keeps them by the indices given here).

use crate::args::Text;
use crate::guard;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use royaltykit::webhook::{self, Route};
use std::sync::Mutex;

/// The registrations of an ``EventRouter``, names only: ``on(name)`` gives the registration's
/// index, ``route(name)`` says which indices a delivery of that event goes to (a ``Route``).
/// ``royaltykit.EventRouter`` keeps the handlers by these indices; safe to share between
/// threads.
#[pyclass(frozen, module = "royaltykit")]
struct EventRoutes(Mutex<webhook::EventRouter>);

impl EventRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, webhook::EventRouter> {
        crate::machine::lock(&self.0)
    }
}

#[pymethods]
impl EventRoutes {
    /// No registration.
    #[new]
    fn new() -> Self {
        Self(Mutex::new(webhook::EventRouter::new()))
    }

    /// Registers a handler for the event ``name`` (as the service sends it) and returns its
    /// index. ``InvalidArgumentError`` for an empty name, one longer than 256 bytes or one with
    /// a space or control character; a name the spec does not list is accepted.
    fn on(&self, name: Text) -> PyResult<u32> {
        guard(|| Ok(self.lock().on(&name)?))
    }

    /// Registers a handler of every delivery.
    fn on_any(&self) {
        self.lock().on_any();
    }

    /// Registers the fallback: the handler of the deliveries no ``on`` handler names.
    fn otherwise(&self) {
        self.lock().otherwise();
    }

    /// Where a delivery of the event ``name`` goes.
    fn route(&self, name: Text) -> Route {
        self.lock().route(&name)
    }

    fn __repr__(&self) -> String {
        format!("{:?}", *self.lock())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::py_export!(m; class EventRoutes, Route);
    m.add(
        "KNOWN_EVENT_NAMES",
        PyTuple::new(m.py(), webhook::known_event_names())?,
    )?;
    Ok(())
}
