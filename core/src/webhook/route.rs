//! [`EventRouter`]: which handlers a delivery goes to, by its event name, the same in every
//! language. Handlers registered for the delivery's name run first, in the order they were
//! registered; then every `on_any` handler; when no handler names the event (a name the spec
//! does not list, or one nobody registered), the fallback, if there is one. A delivery no
//! handler takes is acknowledged: the service does not send it again.

use crate::ArgumentError;

/// The longest event name a route takes, in bytes.
pub const MAX_EVENT_NAME_BYTES: usize = 256;

record! {
/// Where one delivery goes ([`EventRouter::route`]): run the handlers registered at the
/// indices `named`, in order, then the `on_any` handlers when `any`, then the fallback when
/// `fallback`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Indices of the matching registrations ([`EventRouter::on`]), in registration order.
    pub named: Vec<u32>,
    /// Whether the `on_any` handlers run (whenever any is registered).
    pub any: bool,
    /// Whether the fallback runs: no handler named the event and a fallback is registered.
    pub fallback: bool,
}
}

/// The registrations of a router: names only; the host keeps the handlers by index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventRouter {
    names: Vec<String>,
    any: u32,
    fallback: bool,
}

impl EventRouter {
    /// An empty router.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a handler for the event `name` and returns its index. Promises
    /// `invalid_argument` for an empty name, one longer than [`MAX_EVENT_NAME_BYTES`] or one
    /// with a space or control character. A name the spec does not list is accepted (the
    /// service may send new names before this library knows them).
    pub fn on(&mut self, name: &str) -> Result<u32, ArgumentError> {
        if name.is_empty()
            || name.len() > MAX_EVENT_NAME_BYTES
            || name.chars().any(|c| c.is_control() || c.is_whitespace())
        {
            return Err(ArgumentError::new(
                "event",
                format!(
                    "{} is not an event name: give the name as the service sends it (for example ddex.delivery.failed), 1 to {MAX_EVENT_NAME_BYTES} bytes, no space",
                    crate::text::quote(name)
                ),
            ));
        }
        self.names.push(name.to_owned());
        u32::try_from(self.names.len() - 1)
            .map_err(|_| ArgumentError::new("event", "too many handlers"))
    }

    /// Registers an `on_any` handler (it sees every delivery).
    pub fn on_any(&mut self) {
        self.any = self.any.saturating_add(1);
    }

    /// Registers the fallback: the handler of deliveries no `on` handler names.
    pub fn otherwise(&mut self) {
        self.fallback = true;
    }

    /// Where a delivery of the event `name` goes.
    pub fn route(&self, name: &str) -> Route {
        let named: Vec<u32> = (0u32..)
            .zip(&self.names)
            .filter(|(_, n)| *n == name)
            .map(|(i, _)| i)
            .collect();
        Route {
            fallback: named.is_empty() && self.fallback,
            named,
            any: self.any > 0,
        }
    }
}

/// The event names the spec lists, as the service sends them.
pub fn known_event_names() -> Vec<&'static str> {
    super::event::KNOWN.iter().map(|(n, _)| *n).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn named_handlers_then_any_then_the_fallback_only_when_none_named() {
        let mut r = EventRouter::new();
        assert_eq!(r.on("ddex.delivery.failed").unwrap(), 0);
        assert_eq!(r.on("ddex.import.failed").unwrap(), 1);
        assert_eq!(r.on("ddex.delivery.failed").unwrap(), 2);
        r.otherwise();
        let failed = r.route("ddex.delivery.failed");
        assert_eq!(
            (failed.named, failed.any, failed.fallback),
            (vec![0, 2], false, false)
        );
        let unknown = r.route("ddex.new.event");
        assert_eq!((unknown.named.len(), unknown.fallback), (0, true));
        r.on_any();
        assert!(r.route("x.y").any);
        assert!(r.on("").is_err() && r.on("a b").is_err() && r.on(&"a".repeat(257)).is_err());
        assert!(known_event_names().contains(&"enterprise.webhook.test"));
    }
}
