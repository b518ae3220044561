//! Retry functions for Python: conversions only.

use crate::args::{headers_or_none, Headers, Seconds};
use crate::guard;
use pyo3::prelude::*;
use royaltykit::retry;
use std::sync::Mutex;

/// A backoff policy (steps, optional band, jitter, cap).
#[pyclass(frozen, module = "royaltykit")]
pub struct BackoffPolicy(retry::BackoffPolicy);

#[pymethods]
impl BackoffPolicy {
    #[new]
    #[pyo3(signature = (steps, *, band=None, jitter=None, cap_seconds))]
    fn new(
        steps: Vec<f64>,
        band: Option<(f64, f64)>,
        jitter: Option<&str>,
        cap_seconds: f64,
    ) -> PyResult<Self> {
        guard(|| {
            let jitter = jitter.map(retry::Jitter::parse).transpose()?;
            let (lo, hi) = (band.map(|b| b.0), band.map(|b| b.1));
            Ok(Self(retry::BackoffPolicy::from_parts(
                steps,
                lo,
                hi,
                jitter,
                cap_seconds,
            )?))
        })
    }

    /// Seconds before retry `attempt`; `random` in [0, 1) defaults to the OS RNG.
    #[pyo3(signature = (attempt, *, random=None))]
    fn delay(&self, attempt: i64, random: Option<f64>) -> PyResult<f64> {
        guard(|| {
            Ok(self
                .0
                .delay(attempt, royaltykit_host::random_or_os(random)?)?)
        })
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// Seconds before retry `attempt` (1 = first) under the spec's default policy or `policy`.
#[pyfunction]
#[pyo3(signature = (attempt, *, random=None, policy=None))]
pub fn backoff_delay(
    attempt: i64,
    random: Option<f64>,
    policy: Option<&BackoffPolicy>,
) -> PyResult<f64> {
    guard(|| {
        let r = royaltykit_host::random_or_os(random)?;
        Ok(policy.map_or_else(
            || retry::backoff_delay(attempt, r),
            |p| p.0.delay(attempt, r),
        )?)
    })
}

/// What to do after a failed attempt (see docs/clients.md, "Retry").
#[pyfunction]
#[pyo3(signature = (retry_class, *, attempt, status=None, headers=None, transport=None, elapsed_seconds=0.0,
                    token_refreshed=false, idempotency_key_sent=false, random=None, now=None, max_attempts=None,
                    max_elapsed_seconds=None))]
#[allow(clippy::too_many_arguments)]
pub fn decide_retry(
    retry_class: &str,
    attempt: i64,
    status: Option<i64>,
    headers: Option<Headers>,
    transport: Option<&str>,
    elapsed_seconds: f64,
    token_refreshed: bool,
    idempotency_key_sent: bool,
    random: Option<f64>,
    now: Option<Seconds>,
    max_attempts: Option<i64>,
    max_elapsed_seconds: Option<f64>,
) -> PyResult<retry::RetryDecision> {
    guard(|| {
        let class = retry::RetryClass::parse(retry_class)?;
        let input = retry::RetryInput {
            status,
            transport: transport.map(retry::TransportFailure::parse).transpose()?,
            elapsed_seconds,
            token_refreshed,
            idempotency_key_sent,
            max_attempts,
            max_elapsed_seconds,
            ..retry::RetryInput::new(class, attempt)
        };
        let random = royaltykit_host::random_or_os(random)?;
        Ok(input.decide(&headers_or_none(headers), random, crate::args::now(now))?)
    })
}

/// Rolling-window request budgets; thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct RateBudget(pub(crate) Mutex<retry::RateBudget>);

#[pymethods]
impl RateBudget {
    /// `windows`: a list of `(name, limit, window_seconds)`; a window of None seconds is the
    /// core's default (one minute).
    #[new]
    fn new(windows: Vec<(String, i64, Option<i64>)>) -> PyResult<Self> {
        guard(|| Ok(Self(Mutex::new(retry::RateBudget::new(&windows)?))))
    }

    /// A preset: enterprise, enterprise_ddex, enterprise_audio_upload, enterprise_chunk_upload.
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Self> {
        guard(|| Ok(Self(Mutex::new(retry::RateBudget::preset(name)?))))
    }

    /// Counts a request at `now` when every window has room.
    #[pyo3(signature = (now=None))]
    fn try_acquire(&self, now: Option<Seconds>) -> retry::RateDecision {
        let now = crate::args::now(now);
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .try_acquire(now)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::py_export!(m;
        fn backoff_delay, decide_retry;
        class BackoffPolicy, retry::RetryAfter, retry::RetryDecision, retry::RateDecision,
            RateBudget
    );
    Ok(())
}
