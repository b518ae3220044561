//! Arbitrary Retry-After values and clocks.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: (String, i64)| {
    let (value, now) = data;
    let _ = royaltykit::retry::parse_retry_after(&value, now);
    let _ = royaltykit::token::response_notices(&[("Deprecation", value.as_str()), ("Sunset", value.as_str())]);
});
