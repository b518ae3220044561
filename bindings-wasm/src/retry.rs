//! Retry exports: conversions only.

use crate::{argument_error, now_arg, set, FlatHeaders};
use js_sys::{Array, Object};
use royaltykit::{integer_from_f64, retry, ArgumentError};
use wasm_bindgen::prelude::*;

fn int(name: &'static str, v: f64) -> Result<i64, JsValue> {
    integer_from_f64(name, v).map_err(|e| argument_error(&e))
}

fn arg<T>(r: Result<T, ArgumentError>) -> Result<T, JsValue> {
    r.map_err(|e| argument_error(&e))
}

/// `[maxAttempts, maxElapsedSeconds, retryAfterCapSeconds]` defaults.
#[wasm_bindgen(js_name = retryDefaults)]
pub fn retry_defaults() -> Array {
    [
        retry::DEFAULT_MAX_ATTEMPTS as f64,
        retry::DEFAULT_MAX_ELAPSED_SECONDS,
        retry::DEFAULT_RETRY_AFTER_CAP_SECONDS as f64,
    ]
    .iter()
    .map(|n| JsValue::from_f64(*n))
    .collect()
}

/// `retry::webhook_retry_schedule`.
#[wasm_bindgen(js_name = webhookRetrySchedule)]
pub fn webhook_retry_schedule() -> Array {
    retry::webhook_retry_schedule()
        .iter()
        .map(|d| JsValue::from_f64(*d as f64))
        .collect()
}

/// `retry::webhook_next_attempt_at`.
#[wasm_bindgen(js_name = webhookNextAttemptAt)]
pub fn webhook_next_attempt_at(
    first_attempt_at: f64,
    attempts_made: f64,
) -> Result<Option<f64>, JsValue> {
    let first = int("first_attempt_at", first_attempt_at)?;
    let made = int("attempts_made", attempts_made)?;
    Ok(arg(retry::webhook_next_attempt_at(first, made))?.map(|t| t as f64))
}

/// `retry::webhook_gives_up_at`.
#[wasm_bindgen(js_name = webhookGivesUpAt)]
pub fn webhook_gives_up_at(first_attempt_at: f64) -> Result<f64, JsValue> {
    Ok(retry::webhook_gives_up_at(int("first_attempt_at", first_attempt_at)?) as f64)
}

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
) -> Result<f64, JsValue> {
    let attempt = int("attempt", attempt)?;
    match steps {
        None => arg(retry::backoff_delay(attempt, random)),
        Some(steps) => {
            let policy = arg(retry::BackoffPolicy::from_parts(
                steps,
                band_min,
                band_max,
                arg(jitter.as_deref().map(retry::Jitter::parse).transpose())?,
                cap_seconds.unwrap_or(f64::NAN),
            ))?;
            arg(policy.delay(attempt, random))
        }
    }
}

fn retry_after_obj(r: retry::RetryAfter) -> JsValue {
    let o = Object::new();
    set(&o, "seconds", JsValue::from_f64(r.seconds as f64));
    set(&o, "capped", r.capped.into());
    set(&o, "form", r.form.as_str().into());
    o.into()
}

/// `retry::parse_retry_after_capped`; `null` when absent or garbage.
#[wasm_bindgen(js_name = parseRetryAfter)]
pub fn parse_retry_after(
    value: &str,
    now: f64,
    cap_seconds: Option<f64>,
) -> Result<JsValue, JsValue> {
    let now = now_arg(now)?;
    let cap = cap_seconds.map(|c| int("cap_seconds", c)).transpose()?;
    Ok(arg(retry::parse_retry_after_capped(value, now, cap))?
        .map_or(JsValue::NULL, retry_after_obj))
}

/// `retry::decide_retry` with the default backoff policy.
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
    random: f64,
    now: f64,
    max_attempts: Option<f64>,
    max_elapsed_seconds: Option<f64>,
) -> Result<JsValue, JsValue> {
    let class = arg(retry::RetryClass::parse(retry_class))?;
    let now = now_arg(now)?;
    let status = status.map(|s| int("status", s)).transpose()?;
    let outcome = arg(retry::Outcome::from_parts(
        status,
        &FlatHeaders(headers),
        arg(transport
            .as_deref()
            .map(retry::TransportFailure::parse)
            .transpose())?,
        now,
    ))?;
    let max_attempts = max_attempts.map(|m| int("max_attempts", m)).transpose()?;
    let limits = arg(retry::RetryLimits::with_defaults(
        max_attempts,
        max_elapsed_seconds,
    ))?;
    let state = retry::RetryState {
        attempt: int("attempt", attempt)?,
        elapsed_seconds,
        token_refreshed,
        random,
    };
    let d = arg(retry::decide_retry(
        class,
        outcome,
        state,
        limits,
        &retry::BackoffPolicy::default(),
    ))?;
    let o = Object::new();
    set(&o, "action", d.action.as_str().into());
    set(&o, "delaySeconds", JsValue::from_f64(d.delay_seconds));
    set(&o, "rule", d.rule.into());
    set(&o, "reason", d.reason.into());
    set(
        &o,
        "reconcile",
        d.reconcile.map_or(JsValue::NULL, |r| r.as_str().into()),
    );
    Ok(o.into())
}

/// `retry::RateBudget`.
#[wasm_bindgen]
pub struct RateBudget(retry::RateBudget);

#[wasm_bindgen]
impl RateBudget {
    /// Windows as parallel arrays of names, limits and window lengths (seconds).
    #[wasm_bindgen(constructor)]
    pub fn new(
        names: Vec<String>,
        limits: Vec<f64>,
        seconds: Vec<f64>,
    ) -> Result<RateBudget, JsValue> {
        if names.len() != limits.len() || names.len() != seconds.len() {
            return Err(argument_error(&ArgumentError::new(
                "windows",
                "each window needs a name, a limit and a length",
            )));
        }
        let mut windows = Vec::with_capacity(names.len());
        for ((n, l), s) in names.into_iter().zip(limits).zip(seconds) {
            windows.push((n, int("limit", l)?, Some(int("window_seconds", s)?)));
        }
        arg(retry::RateBudget::new(&windows)).map(RateBudget)
    }

    /// `retry::RateBudget::preset`.
    pub fn preset(name: &str) -> Result<RateBudget, JsValue> {
        arg(retry::RateBudget::preset(name)).map(RateBudget)
    }

    /// `retry::RateBudget::try_acquire`.
    #[wasm_bindgen(js_name = tryAcquire)]
    pub fn try_acquire(&mut self, now: f64) -> Result<JsValue, JsValue> {
        let d = self.0.try_acquire(now_arg(now)?);
        let o = Object::new();
        set(&o, "allowed", d.allowed.into());
        set(
            &o,
            "waitUntil",
            d.wait_until
                .map_or(JsValue::NULL, |t| JsValue::from_f64(t as f64)),
        );
        set(&o, "limit", d.limit.map_or(JsValue::NULL, JsValue::from));
        Ok(o.into())
    }
}
