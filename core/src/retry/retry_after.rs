//! `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date in any of its three forms
//! (IMF-fixdate, obsolete RFC 850, asctime), relative to the caller's `now`.

use crate::{headers::first_value, ArgumentError, HeaderMap};
use std::time::UNIX_EPOCH;

/// Default cap on a `Retry-After` wait: one hour.
pub const DEFAULT_RETRY_AFTER_CAP_SECONDS: u64 = 3_600;
/// Longest value considered; anything longer is garbage.
const MAX_LEN: usize = 64;

string_enum! {
    /// Which form the value had.
    pub enum RetryAfterForm as "form" {
        /// A number of seconds.
        DeltaSeconds = "delta_seconds",
        /// An HTTP-date.
        HttpDate = "http_date",
    }
}

record! {
/// A parsed `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter {
    /// Seconds to wait from `now` (0 for a date in the past), at most the cap.
    pub seconds: u64,
    /// True when the server asked for longer than the cap (the wait was shortened to it).
    pub capped: bool,
    /// The form of the value.
    pub form: RetryAfterForm,
}
}

/// Parses a `Retry-After` value with the default one-hour cap. Promises: garbage (empty,
/// negative, fractional, unparsable dates, over 64 characters) gives `None`, never an error.
pub fn parse_retry_after(value: &str, now: i64) -> Option<RetryAfter> {
    parse(value, now, DEFAULT_RETRY_AFTER_CAP_SECONDS)
}

/// [`parse_retry_after`] with a cap in seconds (absent: [`DEFAULT_RETRY_AFTER_CAP_SECONDS`]).
/// Promises `invalid_argument` for a negative cap.
pub fn parse_retry_after_capped(
    value: &str,
    now: i64,
    cap_seconds: Option<i64>,
) -> Result<Option<RetryAfter>, ArgumentError> {
    let cap_seconds = cap_seconds.unwrap_or(DEFAULT_RETRY_AFTER_CAP_SECONDS as i64);
    let cap = u64::try_from(cap_seconds).map_err(|_| {
        ArgumentError::new(
            "cap_seconds",
            format!("must be 0 or more, got {cap_seconds}"),
        )
    })?;
    Ok(parse(value, now, cap))
}

/// The `Retry-After` of a response, from its headers (first non-empty value).
pub fn retry_after_from_headers<H: HeaderMap + ?Sized>(
    headers: &H,
    now: i64,
    cap_seconds: u64,
) -> Option<RetryAfter> {
    first_value(headers, "Retry-After").and_then(|v| parse(v, now, cap_seconds))
}

fn parse(value: &str, now: i64, cap: u64) -> Option<RetryAfter> {
    let v = value.trim_matches([' ', '\t']);
    if v.is_empty() || v.len() > MAX_LEN {
        return None;
    }
    let (wanted, form) = if v.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than u64 holds is still a (absurdly large) number: cap it.
        (
            v.parse::<u64>().unwrap_or(u64::MAX),
            RetryAfterForm::DeltaSeconds,
        )
    } else {
        let at = httpdate::parse_http_date(v).ok()?;
        let at = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let at = i128::from(at);
        let wait = (at - i128::from(now)).max(0);
        (
            u64::try_from(wait).unwrap_or(u64::MAX),
            RetryAfterForm::HttpDate,
        )
    };
    Some(RetryAfter {
        seconds: wanted.min(cap),
        capped: wanted > cap,
        form,
    })
}
