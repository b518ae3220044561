//! Retry functions for Kotlin: conversions only.

use crate::Result;
use royaltykit::retry::{self, Jitter, RateDecision, RetryDecision};
use royaltykit_host::now_or_clock;
use std::sync::{Arc, Mutex};

/// A backoff policy: steps (s), an optional band (both bounds or neither), jitter and a cap.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct BackoffPolicy {
    /// Delays before retries 1, 2, ….
    pub steps: Vec<f64>,
    /// Lower bound of the band after the steps.
    #[uniffi(default = None)]
    pub band_min: Option<f64>,
    /// Upper bound of the band after the steps.
    #[uniffi(default = None)]
    pub band_max: Option<f64>,
    /// No jitter when null.
    #[uniffi(default = None)]
    pub jitter: Option<Jitter>,
    /// The largest delay.
    pub cap_seconds: f64,
}

/// Seconds before retry `attempt` (1 = first) under the spec's default policy or `policy`;
/// `random` in [0, 1) defaults to the OS RNG.
#[uniffi::export(default(random = None, policy = None))]
pub fn backoff_delay(
    attempt: i64,
    random: Option<f64>,
    policy: Option<BackoffPolicy>,
) -> Result<f64> {
    let r = royaltykit_host::random_or_os(random)?;
    Ok(match policy {
        None => retry::backoff_delay(attempt, r)?,
        Some(p) => retry::BackoffPolicy::from_parts(
            p.steps,
            p.band_min,
            p.band_max,
            p.jitter,
            p.cap_seconds,
        )?
        .delay(attempt, r)?,
    })
}

/// What to do after a failed attempt.
#[uniffi::export]
pub fn decide_retry(input: retry::RetryInput) -> Result<RetryDecision> {
    let random = royaltykit_host::random_or_os(input.random)?;
    Ok(input.decide(&input.headers, random, now_or_clock(input.now))?)
}

/// One rolling window of a custom budget.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RateWindow {
    /// The limit's name, reported when it stops a request.
    pub name: String,
    /// Requests allowed per window.
    pub limit: i64,
    /// The window's length in seconds; null for the core's default (one minute).
    #[uniffi(default = None)]
    pub window_seconds: Option<i64>,
}

/// Rolling-window request budgets; thread-safe.
#[derive(uniffi::Object)]
pub struct RateBudget(pub(crate) Mutex<retry::RateBudget>);

#[uniffi::export]
impl RateBudget {
    /// A budget of custom windows.
    #[uniffi::constructor]
    pub fn new(windows: Vec<RateWindow>) -> Result<Arc<Self>> {
        let w: Vec<_> = windows
            .into_iter()
            .map(|w| (w.name, w.limit, w.window_seconds))
            .collect();
        Ok(Arc::new(Self(Mutex::new(retry::RateBudget::new(&w)?))))
    }

    /// A preset: enterprise, enterprise_ddex, enterprise_audio_upload, enterprise_chunk_upload.
    #[uniffi::constructor]
    pub fn preset(name: String) -> Result<Arc<Self>> {
        Ok(Arc::new(Self(Mutex::new(retry::RateBudget::preset(
            &name,
        )?))))
    }

    /// Counts a request at `now` (default: the system clock) when every window has room.
    #[uniffi::method(default(now = None))]
    pub fn try_acquire(&self, now: Option<i64>) -> RateDecision {
        let mut budget = self.0.lock().unwrap_or_else(|p| p.into_inner());
        budget.try_acquire(now_or_clock(now))
    }
}
