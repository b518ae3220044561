//! Times as the services send them — `occurred_at`, the tokens' `expires_at`,
//! `previous_secret_valid_until`, `Retry-After`, `Sunset` and `Deprecation` dates — read by one
//! parser, [`parse_timestamp`]; and ISO 8601 calendar dates (date query parameters).
//!
//! The grammar is scanned here and the calendar (month lengths, leap years, offsets) is left to
//! the `time` crate's constructors. This accepts exactly what `time`'s own `Rfc3339` parser
//! accepts (a differential property test in this module proves it against that parser), without
//! linking `time`'s generic format-description machinery, which was the largest part of the
//! wasm module.

use time::{Date, Month, PrimitiveDateTime, Time, UtcOffset};

/// A cursor over ASCII input; every method returns `None` when the input does not match.
struct Scan<'a>(&'a [u8]);

impl Scan<'_> {
    fn digits(&mut self, n: usize) -> Option<u32> {
        let (head, rest) = self.0.split_at_checked(n)?;
        let mut value = 0u32;
        for b in head {
            if !b.is_ascii_digit() {
                return None;
            }
            value = value * 10 + u32::from(b - b'0');
        }
        self.0 = rest;
        Some(value)
    }

    fn byte(&mut self, expected: impl Fn(u8) -> bool) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        expected(b).then(|| {
            self.0 = rest;
            b
        })
    }

    fn literal(&mut self, expected: u8) -> Option<()> {
        self.byte(|b| b == expected).map(drop)
    }
}

/// `YYYY-MM-DD` as a valid calendar date.
fn date(s: &mut Scan<'_>) -> Option<Date> {
    let year = s.digits(4)?;
    s.literal(b'-')?;
    let month = Month::try_from(u8::try_from(s.digits(2)?).ok()?).ok()?;
    s.literal(b'-')?;
    let day = u8::try_from(s.digits(2)?).ok()?;
    Date::from_calendar_date(i32::try_from(year).ok()?, month, day).ok()
}

/// Unix seconds of an RFC 3339 date-time (`2026-11-22T04:05:06Z`, `…06.5+02:00`): any one
/// separator byte between date and time (RFC 3339 §5.6 allows a space), fractional seconds of
/// any length, `Z`/`z` or a `±hh:mm` offset, and a leap second (`:60`) only where one can
/// occur (the last second of a month in UTC), read as the second before it. `None` otherwise.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    let mut s = Scan(text.as_bytes());
    let date = date(&mut s)?;
    s.byte(|_| true)?;
    let hour = s.digits(2)?;
    s.literal(b':')?;
    let minute = s.digits(2)?;
    s.literal(b':')?;
    let second = s.digits(2)?;
    if s.literal(b'.').is_some() {
        s.digits(1)?;
        while s.digits(1).is_some() {}
    }
    let offset = zone(&mut s, false)?;
    if !s.0.is_empty() {
        return None;
    }
    at_offset(date, hour, minute, second, offset)
}

/// `Z`/`z` or `±hh:mm` at the end of the input; with `iso8601`, also `±hhmm` and `±hh`.
fn zone(s: &mut Scan<'_>, iso8601: bool) -> Option<UtcOffset> {
    if s.byte(|b| b.eq_ignore_ascii_case(&b'z')).is_some() {
        return Some(UtcOffset::UTC);
    }
    let sign: i8 = if s.byte(|b| b == b'+' || b == b'-')? == b'-' {
        -1
    } else {
        1
    };
    let h = s.digits(2).filter(|h| *h <= 23)?;
    let m = if iso8601 && s.0.is_empty() {
        0
    } else {
        if s.literal(b':').is_none() && !iso8601 {
            return None;
        }
        s.digits(2)?
    };
    UtcOffset::from_hms(
        sign * i8::try_from(h).ok()?,
        sign * i8::try_from(m).ok()?,
        0,
    )
    .ok()
}

/// Most bytes of a timestamp [`parse_iso8601`] looks at: longer text is not a timestamp.
const MAX_ISO8601_BYTES: usize = 64;

/// Unix seconds of an ISO 8601 date-time as a server may send one for "an ISO 8601 UTC
/// timestamp" (`occurred_at`): everything [`parse_rfc3339`] accepts, and also the basic format
/// (`20261122T040000Z`), a `T`, `t` or space separator, fractional seconds after `.` or `,`
/// (dropped), and offsets `Z`, `±hh:mm`, `±hhmm` or `±hh` (`-00:00` is UTC). A leap second is
/// read as in [`parse_rfc3339`]. `None` for anything else (the caller keeps the text).
pub(crate) fn parse_iso8601(text: &str) -> Option<i64> {
    if let Some(at) = parse_rfc3339(text) {
        return Some(at);
    }
    if text.len() > MAX_ISO8601_BYTES {
        return None;
    }
    let bytes = text.as_bytes();
    let extended = bytes.get(4) == Some(&b'-');
    let mut s = Scan(bytes);
    let year = s.digits(4)?;
    let sep = |s: &mut Scan<'_>, c: u8| if extended { s.literal(c) } else { Some(()) };
    sep(&mut s, b'-')?;
    let month = Month::try_from(u8::try_from(s.digits(2)?).ok()?).ok()?;
    sep(&mut s, b'-')?;
    let day = u8::try_from(s.digits(2)?).ok()?;
    let date = Date::from_calendar_date(i32::try_from(year).ok()?, month, day).ok()?;
    s.byte(|b| b == b'T' || b == b't' || b == b' ')?;
    let hour = s.digits(2)?;
    sep(&mut s, b':')?;
    let minute = s.digits(2)?;
    sep(&mut s, b':')?;
    let second = s.digits(2)?;
    if s.byte(|b| b == b'.' || b == b',').is_some() {
        s.digits(1)?;
        while s.digits(1).is_some() {}
    }
    let offset = zone(&mut s, true)?;
    if !s.0.is_empty() {
        return None;
    }
    at_offset(date, hour, minute, second, offset)
}

/// The instant of a date, a time (a `60` second only where a leap second can occur, read as
/// the second before it) and an offset.
fn at_offset(date: Date, hour: u32, minute: u32, second: u32, offset: UtcOffset) -> Option<i64> {
    let leap = second == 60;
    let time = Time::from_hms(
        u8::try_from(hour).ok()?,
        u8::try_from(minute).ok()?,
        u8::try_from(if leap { 59 } else { second }).ok()?,
    )
    .ok()?;
    let at = PrimitiveDateTime::new(date, time).assume_offset(offset);
    if leap {
        let utc = at.to_offset(UtcOffset::UTC);
        let last_day = utc.day() == utc.month().length(utc.year());
        if !(utc.hour() == 23 && utc.minute() == 59 && last_day) {
            return None;
        }
    }
    Some(at.unix_timestamp())
}

/// Most bytes of text [`parse_timestamp`] looks at.
const MAX_TIMESTAMP_BYTES: usize = 64;

/// Unix seconds of a time as either service may send one, the one parser for every time the
/// library reads (`occurred_at`, `expires_at`, `previous_secret_valid_until`, `Retry-After`
/// and `Sunset`/`Deprecation` dates): everything `parse_iso8601` accepts (RFC 3339 and the
/// ISO 8601 extended and basic forms with `Z`, `±hh:mm`, `±hhmm` or `±hh`), and the three
/// HTTP-date forms of RFC 9110 (IMF-fixdate, RFC 850, asctime). Surrounding spaces and tabs
/// are ignored. Promises `None`, never a panic, for anything else or for text longer than 64
/// bytes.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let t = text.trim_matches([' ', '\t']);
    if t.is_empty() || t.len() > MAX_TIMESTAMP_BYTES {
        return None;
    }
    parse_iso8601(t).or_else(|| {
        let at = httpdate::parse_http_date(t).ok()?;
        let secs = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
        i64::try_from(secs).ok()
    })
}

/// Whether `text` is an ISO 8601 calendar date `YYYY-MM-DD` that exists.
pub(crate) fn is_calendar_date(text: &str) -> bool {
    let mut s = Scan(text.as_bytes());
    date(&mut s).is_some() && s.0.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use time::format_description::well_known::Rfc3339;

    /// `time`'s own parser, the reference.
    fn reference(text: &str) -> Option<i64> {
        time::OffsetDateTime::parse(text, &Rfc3339)
            .ok()
            .map(|t| t.unix_timestamp())
    }

    #[test]
    fn known_values() {
        assert_eq!(parse_rfc3339("2026-11-22T04:05:06Z"), Some(1_795_320_306));
        assert_eq!(
            parse_rfc3339("2026-11-22T06:05:06+02:00"),
            Some(1_795_320_306)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22t04:05:06.999z"),
            Some(1_795_320_306)
        );
        assert_eq!(parse_rfc3339("2026-11-22 04:05:06Z"), Some(1_795_320_306));
        assert_eq!(parse_rfc3339("2016-12-31T23:59:60Z"), Some(1_483_228_799));
        assert_eq!(parse_rfc3339("2016-12-30T23:59:60Z"), None);
        assert_eq!(parse_rfc3339("2026-02-29T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("2026-11-22T04:05:06"), None);
        assert_eq!(parse_rfc3339("2026-11-22T04:05:06.Z"), None);
        assert_eq!(parse_rfc3339("2026-11-22T04:05:06+24:00"), None);
        assert_eq!(parse_rfc3339("2026-11-22T04:05:06Z "), None);
        // ISO 8601 forms a server may send for "an ISO 8601 UTC timestamp"
        for form in [
            "2026-11-22T04:05:06+0000",
            "2026-11-22T04:05:06+00",
            "2026-11-22T04:05:06-00:00",
            "20261122T040506Z",
            "20261122T040506,5+0000",
            "2026-11-22T04:05:06,25Z",
            "2026-11-22T06:05:06+0200",
            "20261122T060506+02",
        ] {
            assert_eq!(parse_iso8601(form), Some(1_795_320_306), "{form}");
        }
        for garbage in [
            "2026-11-22T040506Z",
            "20261122T04:05:06Z",
            "2026-11-22T04:05:06+2400",
            "2026-11-22T04:05:06+0",
            "2026-11-22T04:05:06+00:",
            "20261122T040506",
            "20261122",
            "yesterday",
            "",
        ] {
            assert_eq!(parse_iso8601(garbage), None, "{garbage}");
        }
        // The one parser: ISO 8601 forms and HTTP-dates alike.
        for form in [
            "2026-11-22T04:05:06Z",
            "2026-11-22T04:05:06+0000",
            "20261122T040506Z",
            " Sun, 22 Nov 2026 04:05:06 GMT\t",
            "Sunday, 22-Nov-26 04:05:06 GMT",
            "Sun Nov 22 04:05:06 2026",
        ] {
            assert_eq!(parse_timestamp(form), Some(1_795_320_306), "{form:?}");
        }
        for garbage in ["", "  ", "tomorrow", "1795320306", &"9".repeat(65)] {
            assert_eq!(parse_timestamp(garbage), None, "{garbage:?}");
        }
        assert!(is_calendar_date("2024-02-29"));
        assert!(!is_calendar_date("2026-02-29"));
        assert!(!is_calendar_date("2026-1-01"));
        assert!(!is_calendar_date("2026-01-01T"));
    }

    /// Strings near the grammar: every position drawn from the characters that matter there,
    /// or anything, so both valid and subtly invalid timestamps come up often.
    fn near_rfc3339() -> impl Strategy<Value = String> {
        let d = "[0-9]";
        let pattern = format!(
            "{d}{{4}}-(0[1-9]|1[0-2]|0[0-9]|1[0-3])-([0-2][0-9]|3[01]|{d}{d})[Tt ]([01][0-9]|2[0-4]):([0-5][0-9]|[0-5][0-9]|[0-5][0-9]|60):([0-5][0-9]|[0-5][0-9]|[0-5][0-9]|6[01])(\\.{d}{{0,12}})?([Zz]|[+-]([01][0-9]|2[0-4]):[0-6][0-9]|[Zz]|.{{0,2}})"
        );
        prop_oneof![
            4 => proptest::string::string_regex(&pattern).expect("valid regex"),
            1 => "\\PC{0,30}",
            1 => "[0-9:T+Z.-]{15,32}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn agrees_with_the_time_crate(text in near_rfc3339()) {
            prop_assert_eq!(parse_rfc3339(&text), reference(&text), "{:?}", text);
        }

        /// ISO 8601 reading extends RFC 3339 reading and never changes its value; the basic
        /// form and the other UTC offsets of a valid UTC timestamp read as the same instant.
        #[test]
        fn iso8601_extends_rfc3339(text in near_rfc3339()) {
            let rfc = parse_rfc3339(&text);
            if rfc.is_some() {
                prop_assert_eq!(parse_iso8601(&text), rfc, "{:?}", text);
            }
            if let (Some(at), Some(utc)) = (rfc, text.strip_suffix('Z')) {
                let basic: String = utc.chars().filter(|c| *c != '-' && *c != ':').collect();
                prop_assert_eq!(parse_iso8601(&format!("{basic}Z")), Some(at), "{:?}", basic);
                prop_assert_eq!(parse_iso8601(&format!("{utc}+0000")), Some(at));
                prop_assert_eq!(parse_iso8601(&format!("{utc}+00")), Some(at));
            }
        }

        #[test]
        fn dates_agree_with_the_time_crate(text in "[0-9]{4}-[0-1][0-9]-[0-3][0-9]|.{0,12}") {
            let format = time::macros::format_description!("[year]-[month]-[day]");
            let expected = text.len() == 10 && Date::parse(&text, &format).is_ok();
            prop_assert_eq!(is_calendar_date(&text), expected, "{:?}", text);
        }
    }
}
