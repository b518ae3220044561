//! `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date in any of its three forms
//! (IMF-fixdate, obsolete RFC 850, asctime), relative to the caller's `now`.

use crate::{headers::first_value, HeaderMap};

/// Longest HTTP-date considered; a longer value that is not all digits is garbage. (A run of
/// digits of any length is a number of seconds: one too large to represent is the longest wait,
/// which stops a retry loop with `retry_after_exceeds_budget` rather than retrying at once.)
const MAX_LEN: usize = 64;

string_enum! {
    /// Which form the value had.
    pub enum RetryAfterForm as "form" {
        /// A number of seconds.
        DeltaSeconds = "delta_seconds",
        /// A date: an HTTP-date (or an ISO 8601 timestamp, read by the same parser).
        HttpDate = "http_date",
    }
}

record! {
/// A parsed `Retry-After`: the whole wait the server asked for, never shortened (enterprise
/// API, client behaviour by status: "wait at least Retry-After").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter {
    /// Seconds to wait from `now` (0 for a date in the past; a number too large for 64 bits is
    /// the largest one).
    pub seconds: u64,
    /// The form of the value.
    pub form: RetryAfterForm,
}
}

/// Parses a `Retry-After` value relative to `now`, keeping the whole wait. Promises: garbage
/// (empty, negative, fractional, unparsable dates, anything but digits over 64 characters)
/// gives `None`, never an error; a value is never shortened, and delta-seconds of any length
/// too large for 64 bits is the longest wait (`u64::MAX` seconds).
pub fn parse_retry_after(value: &str, now: i64) -> Option<RetryAfter> {
    parse(value, now)
}

/// How far apart the response's `Date` and `now` may be for a `Retry-After` date to be counted
/// from `Date` as well (a day): further apart, `Date` is not this response's moment (a cached
/// response) and only `now` counts.
pub const MAX_DATE_SKEW_SECONDS: i64 = 86_400;

/// The `Retry-After` of a response, from its headers (first non-empty value). A date is the
/// service's clock: it is counted from `now` and, when the response has a `Date` within
/// [`MAX_DATE_SKEW_SECONDS`] of `now`, from that `Date` too, and the longer wait is kept — so a
/// host whose clock runs ahead of the service's still waits the whole time the service asked
/// for, never less.
pub fn retry_after_from_headers<H: HeaderMap + ?Sized>(
    headers: &H,
    now: i64,
) -> Option<RetryAfter> {
    let value = first_value(headers, "Retry-After")?;
    let mut ra = parse(value, now)?;
    if ra.form == RetryAfterForm::HttpDate {
        let date = first_value(headers, "Date")
            .and_then(crate::parse_timestamp)
            .filter(|d| d.abs_diff(now) <= MAX_DATE_SKEW_SECONDS.unsigned_abs());
        if let Some(from_date) = date.and_then(|d| parse(value, d)) {
            ra.seconds = ra.seconds.max(from_date.seconds);
        }
    }
    Some(ra)
}

fn parse(value: &str, now: i64) -> Option<RetryAfter> {
    let v = value.trim_matches([' ', '\t']);
    let digits = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
    if v.is_empty() || (v.len() > MAX_LEN && !digits) {
        return None;
    }
    let (wanted, form) = if digits {
        // More digits than u64 holds is still an (absurdly large) number: the longest wait.
        (
            v.parse::<u64>().unwrap_or(u64::MAX),
            RetryAfterForm::DeltaSeconds,
        )
    } else {
        // The library's one timestamp parser: the three HTTP-date forms, and ISO 8601 too.
        let at = i128::from(crate::parse_timestamp(v)?);
        let wait = (at - i128::from(now)).max(0);
        (
            u64::try_from(wait).unwrap_or(u64::MAX),
            RetryAfterForm::HttpDate,
        )
    };
    Some(RetryAfter {
        seconds: wanted,
        form,
    })
}
