//! Retry functions for Kotlin: conversions only.

use crate::Result;
use royaltykit::retry;
use royaltykit_host::now_or_clock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

fn random_or_os(random: Option<f64>) -> Result<f64> {
    match random {
        Some(r) => Ok(r),
        None => Ok(royaltykit_host::random_unit()?),
    }
}

/// The service's delays between webhook delivery attempts, in seconds.
#[uniffi::export]
pub fn webhook_retry_schedule() -> Vec<u64> {
    retry::webhook_retry_schedule().to_vec()
}

/// When the next delivery attempt is due, or null once all attempts are made.
#[uniffi::export]
pub fn webhook_next_attempt_at(first_attempt_at: i64, attempts_made: i64) -> Result<Option<i64>> {
    Ok(retry::webhook_next_attempt_at(
        first_attempt_at,
        attempts_made,
    )?)
}

/// The latest time at which the service gives a delivery up.
#[uniffi::export]
pub fn webhook_gives_up_at(first_attempt_at: i64) -> i64 {
    retry::webhook_gives_up_at(first_attempt_at)
}

/// A backoff policy: steps (s), an optional band (both bounds or neither), jitter
/// (`none`, `full`, `equal`) and a cap.
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
    /// `none`, `full` or `equal`.
    #[uniffi(default = "none")]
    pub jitter: String,
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
    let r = random_or_os(random)?;
    Ok(match policy {
        None => retry::backoff_delay(attempt, r)?,
        Some(p) => retry::BackoffPolicy::from_parts(
            p.steps,
            p.band_min,
            p.band_max,
            &p.jitter,
            p.cap_seconds,
        )?
        .delay(attempt, r)?,
    })
}

/// A parsed Retry-After.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RetryAfter {
    /// Seconds to wait.
    pub seconds: u64,
    /// The server asked for longer than the cap.
    pub capped: bool,
    /// `delta_seconds` or `http_date`.
    pub form: String,
}

/// Parses a Retry-After value relative to `now`; null when absent or garbage.
#[uniffi::export(default(now = None, cap_seconds = None))]
pub fn parse_retry_after(
    value: String,
    now: Option<i64>,
    cap_seconds: Option<i64>,
) -> Result<Option<RetryAfter>> {
    let cap = cap_seconds.unwrap_or(retry::DEFAULT_RETRY_AFTER_CAP_SECONDS as i64);
    Ok(
        retry::parse_retry_after_capped(&value, now_or_clock(now), cap)?.map(|r| RetryAfter {
            seconds: r.seconds,
            capped: r.capped,
            form: r.form.as_str().to_owned(),
        }),
    )
}

/// The input of `decideRetry`: a response (`status`, `headers`) or a `transport` failure.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct RetryInput {
    /// read, token_exchange, idempotent_write, safe_update, unsafe_create, submit, checkout,
    /// addon_action or upload.
    pub retry_class: String,
    /// Attempts made so far, the failed one included.
    pub attempt: i64,
    /// The response status.
    #[uniffi(default = None)]
    pub status: Option<i64>,
    /// The response headers (Retry-After is read).
    #[uniffi(default)]
    pub headers: HashMap<String, String>,
    /// timeout, connect_failed or connection_lost, when there was no response.
    #[uniffi(default = None)]
    pub transport: Option<String>,
    /// Seconds since the first attempt.
    #[uniffi(default = 0.0)]
    pub elapsed_seconds: f64,
    /// The token was already refreshed for this request.
    #[uniffi(default = false)]
    pub token_refreshed: bool,
    /// In [0, 1); the OS RNG when null.
    #[uniffi(default = None)]
    pub random: Option<f64>,
    /// Unix seconds; the system clock when null.
    #[uniffi(default = None)]
    pub now: Option<i64>,
    /// Default 5.
    #[uniffi(default = None)]
    pub max_attempts: Option<i64>,
    /// Default 300.
    #[uniffi(default = None)]
    pub max_elapsed_seconds: Option<f64>,
}

/// A retry decision.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct RetryDecision {
    /// retry, stop, reconcile or refresh_token.
    pub action: String,
    /// Seconds to wait before retrying.
    pub delay_seconds: f64,
    /// Stable id of the rule that decided.
    pub rule: String,
    /// A sentence naming the rule.
    pub reason: String,
    /// What to check first, when the action is reconcile.
    pub reconcile: Option<String>,
}

/// What to do after a failed attempt.
#[uniffi::export]
pub fn decide_retry(input: RetryInput) -> Result<RetryDecision> {
    let class = retry::RetryClass::parse(&input.retry_class)?;
    let now = now_or_clock(input.now);
    let outcome = retry::Outcome::from_parts(
        input.status,
        &input.headers,
        input.transport.as_deref(),
        now,
    )?;
    let limits = retry::RetryLimits::with_defaults(input.max_attempts, input.max_elapsed_seconds)?;
    let state = retry::RetryState {
        attempt: input.attempt,
        elapsed_seconds: input.elapsed_seconds,
        token_refreshed: input.token_refreshed,
        random: random_or_os(input.random)?,
    };
    let d = retry::decide_retry(
        class,
        outcome,
        state,
        limits,
        &retry::BackoffPolicy::default(),
    )?;
    Ok(RetryDecision {
        action: d.action.as_str().to_owned(),
        delay_seconds: d.delay_seconds,
        rule: d.rule.to_owned(),
        reason: d.reason,
        reconcile: d.reconcile.map(|r| r.as_str().to_owned()),
    })
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

/// The answer of `tryAcquire`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RateDecision {
    /// The request may be sent now (it was counted).
    pub allowed: bool,
    /// When refused: when to try again.
    pub wait_until: Option<i64>,
    /// When refused: the first exhausted limit.
    pub limit: Option<String>,
}

/// Rolling-window request budgets; thread-safe.
#[derive(uniffi::Object)]
pub struct RateBudget(Mutex<retry::RateBudget>);

#[uniffi::export]
impl RateBudget {
    /// A budget of custom windows.
    #[uniffi::constructor]
    pub fn new(windows: Vec<RateWindow>) -> Result<Arc<Self>> {
        let w: Vec<(String, i64, Option<i64>)> = windows
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
        let d = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .try_acquire(now_or_clock(now));
        RateDecision {
            allowed: d.allowed,
            wait_until: d.wait_until,
            limit: d.limit,
        }
    }
}
