//! Values in messages: numbers written without core's float formatter, untrusted text quoted
//! and shortened.

/// A number (seconds, a random value) for a message: whole values as integers, others with the
/// shortest digits that read back the same (serde_json's writer), so messages never link
/// core's float formatter, which was a large share of the wasm module.
pub(crate) struct Num(pub f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        let x = self.0;
        if x.fract() == 0.0 && x.abs() <= EXACT {
            // Whole and within ±2^53, so the conversion is exact.
            #[allow(clippy::cast_possible_truncation)]
            return write!(f, "{}", x as i64);
        }
        match serde_json::Number::from_f64(x) {
            Some(n) => write!(f, "{n}"),
            None if x.is_nan() => f.write_str("NaN"),
            None => f.write_str(if x > 0.0 { "inf" } else { "-inf" }),
        }
    }
}

/// Quotes an untrusted value for an error message: at most 40 characters, control characters
/// escaped, so a hostile value cannot forge log lines.
pub(crate) fn quote(value: &str) -> String {
    const MAX: usize = 40;
    let mut out = String::with_capacity(MAX + 8);
    out.push('"');
    for (i, c) in value.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        out.extend(c.escape_debug());
    }
    out.push('"');
    out
}
