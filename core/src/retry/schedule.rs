//! The service's webhook delivery schedule (enterprise API, Limits): after the initial attempt,
//! retries follow after 30 s, 2 min, 10 min, 30 min, 1 h, 2 h and 6 h; each attempt has 10 s.

use crate::ArgumentError;

/// Delays between consecutive delivery attempts, in seconds: the delay before retry 1 is the
/// first entry, and so on. Eight attempts in all.
pub const WEBHOOK_RETRY_DELAYS_SECONDS: [u64; 7] = [30, 120, 600, 1_800, 3_600, 7_200, 21_600];
/// Default time limit of one delivery attempt, in seconds.
pub const WEBHOOK_ATTEMPT_TIMEOUT_SECONDS: u64 = 10;

/// The retry delays, in seconds (see [`WEBHOOK_RETRY_DELAYS_SECONDS`]).
pub fn webhook_retry_schedule() -> &'static [u64] {
    &WEBHOOK_RETRY_DELAYS_SECONDS
}

/// When the next delivery attempt is due, given the first attempt's time and how many attempts
/// have been made (the first included), assuming each attempt ran when it was due. Promises:
/// `Some(first)` for 0 attempts; `None` once all eight attempts are made; `invalid_argument`
/// for a negative count.
///
/// The spec lists the delays "after the initial attempt"; this reads them as the waits between
/// consecutive attempts (retry 2 is due 30 s + 2 min after the first attempt).
pub fn webhook_next_attempt_at(
    first_attempt_at: i64,
    attempts_made: i64,
) -> Result<Option<i64>, ArgumentError> {
    let made = usize::try_from(attempts_made).map_err(|_| {
        ArgumentError::new(
            "attempts_made",
            format!("must be 0 or more, got {attempts_made}"),
        )
    })?;
    if made > WEBHOOK_RETRY_DELAYS_SECONDS.len() {
        return Ok(None);
    }
    let offset: u64 = WEBHOOK_RETRY_DELAYS_SECONDS.iter().take(made).sum();
    Ok(Some(first_attempt_at.saturating_add(offset as i64)))
}

/// The latest time at which the service gives a delivery up (the final attempt's due time
/// plus its 10 s limit); on a DDEX message, `ddex.delivery.failed` follows.
pub fn webhook_gives_up_at(first_attempt_at: i64) -> i64 {
    let total: u64 = WEBHOOK_RETRY_DELAYS_SECONDS.iter().sum();
    first_attempt_at.saturating_add((total + WEBHOOK_ATTEMPT_TIMEOUT_SECONDS) as i64)
}
