//! Retry schedules, backoff, `Retry-After`, retry decisions and request-rate budgets.
//!
//! - [`webhook_retry_schedule`], [`webhook_next_attempt_at`], [`webhook_gives_up_at`]: the
//!   service's own delivery schedule, for receivers reasoning about redeliveries.
//! - [`backoff_delay`] and [`BackoffPolicy`]: client backoff; jitter from a caller-supplied
//!   random value in `[0, 1)`, so results are reproducible.
//! - [`parse_retry_after`]: delta-seconds and the three HTTP-date forms, relative to `now`.
//! - [`decide_retry`]: retry, stop, reconcile or refresh the token, from the operation's
//!   [`RetryClass`] and the [`Outcome`]; the 429 rule and the others live in `decision.rs`.
//! - [`RateBudget`]: rolling one-minute windows with the enterprise presets.

pub use crate::headers::RESPONSE_HEADER_NAMES;

mod backoff;
mod decision;
mod rate;
mod retry_after;
mod schedule;

pub use backoff::{backoff_delay, BackoffPolicy, Jitter, MAX_BACKOFF_STEPS};
pub use decision::{
    decide_retry, Outcome, Reconcile, RetryAction, RetryClass, RetryDecision, RetryInput,
    RetryLimits, RetryState, TransportFailure, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_ELAPSED_SECONDS,
};
pub use rate::{
    RateBudget, RateDecision, WindowUsage, DEFAULT_WINDOW_SECONDS, MAX_LIMIT, MAX_WINDOWS,
    RATE_MARGIN_SECONDS,
};
pub use retry_after::{
    parse_retry_after, retry_after_from_headers, RetryAfter, RetryAfterForm, MAX_DATE_SKEW_SECONDS,
};
pub use schedule::{
    webhook_gives_up_at, webhook_next_attempt_at, webhook_retry_schedule,
    WEBHOOK_ATTEMPT_TIMEOUT_SECONDS, WEBHOOK_RETRY_DELAYS_SECONDS,
};

#[cfg(test)]
mod tests;
