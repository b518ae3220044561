//! Client backoff. The default is the enterprise spec's recommendation: first retry after 2 s,
//! second after 5 s, third after 15 s, later 30 to 60 s with jitter.

use crate::ArgumentError;

string_enum! {
    /// How a step delay is randomised with the caller's random value `r` in `[0, 1)`.
    pub enum Jitter as "jitter" {
        /// The step delay as is.
        None = "none",
        /// `r × delay` ("full jitter").
        Full = "full",
        /// `delay / 2 + r × delay / 2` ("equal jitter").
        Equal = "equal",
    }
}

/// A backoff policy: explicit step delays for the first retries, then either a uniform random
/// band or the last step repeated, all capped.
#[derive(Debug, Clone, PartialEq)]
pub struct BackoffPolicy {
    steps: Vec<f64>,
    band: Option<(f64, f64)>,
    jitter: Jitter,
    cap_seconds: f64,
}

/// Most explicit steps accepted.
pub const MAX_BACKOFF_STEPS: usize = 64;

impl Default for BackoffPolicy {
    /// The spec's recommendation: 2 s, 5 s, 15 s, then uniformly 30–60 s; cap 60 s.
    fn default() -> Self {
        Self {
            steps: vec![2.0, 5.0, 15.0],
            band: Some((30.0, 60.0)),
            jitter: Jitter::None,
            cap_seconds: 60.0,
        }
    }
}

impl BackoffPolicy {
    /// A policy. `steps` are the delays (seconds) before retries 1, 2, …; after them, a
    /// uniform delay in `band` (min, max) or, without a band, the last step again. `jitter`
    /// applies to step delays. Every delay is at most `cap_seconds`. Promises
    /// `invalid_argument` for negative or non-finite values, an empty policy (no steps and no
    /// band), a band with min > max, more than 64 steps, or a cap that is not positive.
    pub fn new(
        steps: Vec<f64>,
        band: Option<(f64, f64)>,
        jitter: Jitter,
        cap_seconds: f64,
    ) -> Result<Self, ArgumentError> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        if steps.len() > MAX_BACKOFF_STEPS || !steps.iter().all(|s| ok(*s)) {
            return Err(ArgumentError::new(
                "steps",
                format!("must be at most {MAX_BACKOFF_STEPS} finite, non-negative seconds"),
            ));
        }
        if let Some((lo, hi)) = band {
            if !ok(lo) || !ok(hi) || lo > hi {
                return Err(ArgumentError::new(
                    "band",
                    "must be finite, non-negative seconds with min <= max",
                ));
            }
        }
        if steps.is_empty() && band.is_none() {
            return Err(ArgumentError::new("steps", "give steps, a band, or both"));
        }
        if !(cap_seconds.is_finite() && cap_seconds > 0.0) {
            return Err(ArgumentError::new(
                "cap_seconds",
                "must be a positive number of seconds",
            ));
        }
        Ok(Self {
            steps,
            band,
            jitter,
            cap_seconds,
        })
    }

    /// [`BackoffPolicy::new`] from a binding's parts: the band as two optional bounds (both or
    /// neither); no jitter when `jitter` is absent.
    pub fn from_parts(
        steps: Vec<f64>,
        band_min: Option<f64>,
        band_max: Option<f64>,
        jitter: Option<Jitter>,
        cap_seconds: f64,
    ) -> Result<Self, ArgumentError> {
        let band = match (band_min, band_max) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            (None, None) => None,
            _ => return Err(ArgumentError::new("band", "give both bounds or neither")),
        };
        Self::new(steps, band, jitter.unwrap_or(Jitter::None), cap_seconds)
    }

    /// The delay in seconds before retry number `attempt` (1 = the first retry), using the
    /// caller's `random` value in `[0, 1)`. Promises: within the step (or band) and never over
    /// the cap; `invalid_argument` for `attempt` < 1 or a random value outside `[0, 1)`.
    pub fn delay(&self, attempt: i64, random: f64) -> Result<f64, ArgumentError> {
        let index = usize::try_from(attempt)
            .ok()
            .and_then(|a| a.checked_sub(1))
            .ok_or_else(|| {
                ArgumentError::new("attempt", format!("must be 1 or more, got {attempt}"))
            })?;
        let r = check_random(random)?;
        let delay = match (self.steps.get(index), self.band, self.steps.last()) {
            (Some(step), _, _) => self.jittered(*step, r),
            (None, Some((lo, hi)), _) => lo + r * (hi - lo),
            (None, None, Some(last)) => self.jittered(*last, r),
            (None, None, None) => 0.0, // excluded by `new`
        };
        Ok(delay.min(self.cap_seconds))
    }

    fn jittered(&self, step: f64, r: f64) -> f64 {
        match self.jitter {
            Jitter::None => step,
            Jitter::Full => r * step,
            Jitter::Equal => step / 2.0 + r * step / 2.0,
        }
    }
}

/// The default policy's delay before retry `attempt` (see [`BackoffPolicy::delay`]).
pub fn backoff_delay(attempt: i64, random: f64) -> Result<f64, ArgumentError> {
    BackoffPolicy::default().delay(attempt, random)
}

/// A random value must be finite and in `[0, 1)`.
pub(crate) fn check_random(random: f64) -> Result<f64, ArgumentError> {
    if random.is_finite() && (0.0..1.0).contains(&random) {
        Ok(random)
    } else {
        Err(ArgumentError::new(
            "random",
            format!(
                "must be a number in [0, 1), got {}",
                crate::text::Num(random)
            ),
        ))
    }
}

pub(crate) fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}
