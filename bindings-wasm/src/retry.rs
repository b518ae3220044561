//! Retry exports: conversions only.

use crate::{err, int, json, now_arg, opt_int, parse, FlatHeaders, R};
use royaltykit::retry;
use wasm_bindgen::prelude::*;

/// `retry::backoff_delay`, or `BackoffPolicy::delay` when `steps` is given.
#[wasm_bindgen(js_name = backoffDelay)]
pub fn backoff_delay(
    attempt: f64,
    random: f64,
    steps: Option<Vec<f64>>,
    band_min: Option<f64>,
    band_max: Option<f64>,
    jitter: Option<String>,
    cap_seconds: Option<f64>,
) -> R<f64> {
    let attempt = int("attempt", attempt)?;
    let Some(steps) = steps else {
        return retry::backoff_delay(attempt, random).map_err(err);
    };
    let jitter = jitter
        .map(|j| parse(retry::Jitter::parse, &j))
        .transpose()?;
    // An absent cap is refused by the core with `invalid_argument` naming it.
    let cap = cap_seconds.unwrap_or(f64::NAN);
    let policy =
        retry::BackoffPolicy::from_parts(steps, band_min, band_max, jitter, cap).map_err(err)?;
    policy.delay(attempt, random).map_err(err)
}

/// `retry::RetryInput::decide`, as JSON.
#[wasm_bindgen(js_name = decideRetry)]
#[allow(clippy::too_many_arguments)]
pub fn decide_retry(
    retry_class: &str,
    status: Option<f64>,
    headers: Vec<String>,
    transport: Option<String>,
    attempt: f64,
    elapsed_seconds: f64,
    token_refreshed: bool,
    idempotency_key_sent: bool,
    random: f64,
    now: f64,
    max_attempts: Option<f64>,
    max_elapsed_seconds: Option<f64>,
) -> R<String> {
    let class = parse(retry::RetryClass::parse, retry_class)?;
    let transport = transport
        .map(|t| parse(retry::TransportFailure::parse, &t))
        .transpose()?;
    let attempt = int("attempt", attempt)?;
    let input = retry::RetryInput {
        status: opt_int("status", status)?,
        transport,
        elapsed_seconds,
        token_refreshed,
        idempotency_key_sent,
        max_attempts: opt_int("max_attempts", max_attempts)?,
        max_elapsed_seconds,
        ..retry::RetryInput::new(class, attempt)
    };
    let d = input.decide(&FlatHeaders(headers), random, now_arg(now)?);
    d.map(|d| json(&d)).map_err(err)
}

/// `retry::RateBudget`.
#[wasm_bindgen]
pub struct RateBudget(pub(crate) retry::RateBudget);

#[wasm_bindgen]
impl RateBudget {
    /// Windows as parallel arrays of names, limits and window lengths (seconds; NaN for the
    /// core's default).
    #[wasm_bindgen(constructor)]
    pub fn new(names: Vec<String>, limits: Vec<f64>, seconds: Vec<f64>) -> R<RateBudget> {
        let mut windows = Vec::with_capacity(names.len());
        for ((name, limit), secs) in names.into_iter().zip(limits).zip(seconds) {
            let secs = opt_int("window_seconds", Some(secs).filter(|s| !s.is_nan()))?;
            windows.push((name, int("limit", limit)?, secs));
        }
        retry::RateBudget::new(&windows)
            .map(RateBudget)
            .map_err(err)
    }

    /// `retry::RateBudget::preset`.
    pub fn preset(name: &str) -> R<RateBudget> {
        retry::RateBudget::preset(name).map(RateBudget).map_err(err)
    }

    /// `retry::RateBudget::try_acquire`, as JSON.
    #[wasm_bindgen(js_name = tryAcquire)]
    pub fn try_acquire(&mut self, now: f64) -> R<String> {
        Ok(json(&self.0.try_acquire(now_arg(now)?)))
    }
}
