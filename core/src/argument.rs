//! Arguments from the host: the error every capability reports for a value it cannot use, and
//! the conversions of host numbers (JS and Python floats) to whole seconds and integers.

/// A caller passed a value the library cannot use (an option out of range, an empty
/// namespace, a non-finite time). Stable code: `invalid_argument`.
///
/// This is a programming or configuration error in the host, not a property of an incoming
/// request: a webhook handler should let it surface rather than answer 4xx.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid argument `{name}`: {reason}")]
pub struct ArgumentError {
    /// The argument's name as the Rust API spells it (bindings document their own spelling).
    pub name: &'static str,
    /// What is wrong and what is accepted.
    pub reason: String,
}

impl ArgumentError {
    /// Builds an error for argument `name`.
    pub fn new(name: &'static str, reason: impl Into<String>) -> Self {
        Self {
            name,
            reason: reason.into(),
        }
    }

    /// The stable error code: always `invalid_argument`.
    pub fn code(&self) -> &'static str {
        "invalid_argument"
    }
}

/// Converts a host's floating-point Unix time (JS `Date.now() / 1000`, Python `time.time()`)
/// to whole seconds, rounding down. Promises: finite values within ±2^53 are accepted;
/// NaN, infinities and values beyond that give `invalid_argument` naming `name`.
pub fn seconds_from_f64(name: &'static str, value: f64) -> Result<i64, ArgumentError> {
    const LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53: exact in f64, JS safe-integer range
    if !value.is_finite() {
        return Err(ArgumentError::new(
            name,
            "must be a finite number of seconds",
        ));
    }
    let floored = value.floor();
    if !(-LIMIT..=LIMIT).contains(&floored) {
        return Err(ArgumentError::new(
            name,
            "must be within ±2^53 seconds (is it in milliseconds?)",
        ));
    }
    // In range and integral, so the conversion is exact.
    #[allow(clippy::cast_possible_truncation)]
    Ok(floored as i64)
}

/// Converts a host number that must be a whole number (a capacity, a tolerance, a byte limit)
/// to `i64`. Promises: NaN, infinities, fractions and values beyond ±2^53 give
/// `invalid_argument` naming `name`; range checks are left to the function that uses it.
pub fn integer_from_f64(name: &'static str, value: f64) -> Result<i64, ArgumentError> {
    if value.fract() != 0.0 {
        return Err(ArgumentError::new(name, "must be a whole number"));
    }
    seconds_from_f64(name, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_from_f64_floors_and_rejects_non_finite() {
        assert_eq!(seconds_from_f64("now", 1.9), Ok(1));
        assert_eq!(seconds_from_f64("now", -0.5), Ok(-1));
        assert_eq!(seconds_from_f64("now", f64::NAN).unwrap_err().name, "now");
        assert!(seconds_from_f64("now", f64::INFINITY).is_err());
        assert!(seconds_from_f64("now", 1e300).is_err());
        assert_eq!(integer_from_f64("capacity", 3.0), Ok(3));
        assert!(integer_from_f64("capacity", 3.5).is_err());
        assert!(integer_from_f64("capacity", f64::NAN).is_err());
    }
}
