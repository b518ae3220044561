//! Retry functions for Python: conversions only.

use crate::{headers_for, now_arg, str_arg};
use pyo3::prelude::*;
use royaltykit::retry;
use std::sync::Mutex;

fn random_arg(random: Option<f64>) -> PyResult<f64> {
    match random {
        Some(r) => Ok(r),
        None => {
            royaltykit_host::random_unit().map_err(|e| Python::attach(|py| crate::error(py, e)))
        }
    }
}

/// The service's delays between webhook delivery attempts, in seconds.
#[pyfunction]
pub fn webhook_retry_schedule() -> Vec<u64> {
    retry::webhook_retry_schedule().to_vec()
}

/// When the next delivery attempt is due, or None once all attempts are made.
#[pyfunction]
pub fn webhook_next_attempt_at(first_attempt_at: i64, attempts_made: i64) -> PyResult<Option<i64>> {
    crate::guard(|| {
        Ok(retry::webhook_next_attempt_at(
            first_attempt_at,
            attempts_made,
        )?)
    })
}

/// The latest time at which the service gives a delivery up.
#[pyfunction]
pub fn webhook_gives_up_at(first_attempt_at: i64) -> i64 {
    retry::webhook_gives_up_at(first_attempt_at)
}

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
        crate::guard(|| {
            let (lo, hi) = band.map_or((None, None), |(a, b)| (Some(a), Some(b)));
            let jitter = jitter.map(retry::Jitter::parse).transpose()?;
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
        crate::guard(|| Ok(self.0.delay(attempt, random_arg(random)?)?))
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
    crate::guard(|| {
        let r = random_arg(random)?;
        match policy {
            Some(p) => Ok(p.0.delay(attempt, r)?),
            None => Ok(retry::backoff_delay(attempt, r)?),
        }
    })
}

/// Parses a Retry-After value relative to `now`; None when absent or garbage.
#[pyfunction]
#[pyo3(signature = (value, now=None, *, cap_seconds=None))]
pub fn parse_retry_after(
    value: Option<&Bound<'_, PyAny>>,
    now: Option<&Bound<'_, PyAny>>,
    cap_seconds: Option<i64>,
) -> PyResult<Option<retry::RetryAfter>> {
    crate::guard(|| {
        let Some(value) = value.filter(|v| !v.is_none()) else {
            return Ok(None);
        };
        let value = str_arg(value, "value")?;
        let now = now_arg(now, "now")?;
        Ok(retry::parse_retry_after_capped(&value, now, cap_seconds)?)
    })
}

/// What to do after a failed attempt (see the README's retry section).
#[pyfunction]
#[pyo3(signature = (retry_class, *, attempt, status=None, headers=None, transport=None, elapsed_seconds=0.0,
                    token_refreshed=false, random=None, now=None, max_attempts=None, max_elapsed_seconds=None))]
#[allow(clippy::too_many_arguments)]
pub fn decide_retry(
    retry_class: &str,
    attempt: i64,
    status: Option<i64>,
    headers: Option<&Bound<'_, PyAny>>,
    transport: Option<&str>,
    elapsed_seconds: f64,
    token_refreshed: bool,
    random: Option<f64>,
    now: Option<&Bound<'_, PyAny>>,
    max_attempts: Option<i64>,
    max_elapsed_seconds: Option<f64>,
) -> PyResult<retry::RetryDecision> {
    crate::guard(|| {
        let class = retry::RetryClass::parse(retry_class)?;
        let now = now_arg(now, "now")?;
        let headers = match headers {
            Some(h) if !h.is_none() => headers_for(h, &retry::RESPONSE_HEADER_NAMES)?,
            _ => crate::Headers(Vec::new()),
        };
        let transport = transport.map(retry::TransportFailure::parse).transpose()?;
        let state = retry::RetryState {
            attempt,
            elapsed_seconds,
            token_refreshed,
            random: random_arg(random)?,
        };
        Ok(retry::decide_retry_parts(
            class,
            status,
            &headers,
            transport,
            state,
            now,
            max_attempts,
            max_elapsed_seconds,
        )?)
    })
}

/// Rolling-window request budgets; thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct RateBudget(Mutex<retry::RateBudget>);

#[pymethods]
impl RateBudget {
    /// `windows`: a list of `(name, limit, window_seconds)`.
    #[new]
    fn new(windows: Vec<(String, i64, Option<i64>)>) -> PyResult<Self> {
        crate::guard(|| Ok(retry::RateBudget::new(&windows)?).map(|b| Self(Mutex::new(b))))
    }

    /// A preset: enterprise, enterprise_ddex, enterprise_audio_upload, enterprise_chunk_upload.
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Self> {
        crate::guard(|| Ok(retry::RateBudget::preset(name)?).map(|b| Self(Mutex::new(b))))
    }

    /// Counts a request at `now` when every window has room.
    #[pyo3(signature = (now=None))]
    fn try_acquire(&self, now: Option<&Bound<'_, PyAny>>) -> PyResult<retry::RateDecision> {
        crate::guard(|| {
            let now = now_arg(now, "now")?;
            Ok(self
                .0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .try_acquire(now))
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(webhook_retry_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(webhook_next_attempt_at, m)?)?;
    m.add_function(wrap_pyfunction!(webhook_gives_up_at, m)?)?;
    m.add_function(wrap_pyfunction!(backoff_delay, m)?)?;
    m.add_function(wrap_pyfunction!(parse_retry_after, m)?)?;
    m.add_function(wrap_pyfunction!(decide_retry, m)?)?;
    m.add_class::<BackoffPolicy>()?;
    m.add_class::<retry::RetryAfter>()?;
    m.add_class::<retry::RetryDecision>()?;
    m.add_class::<retry::RateDecision>()?;
    m.add_class::<RateBudget>()?;
    Ok(())
}
