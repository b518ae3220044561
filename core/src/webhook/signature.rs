//! The v1 signature scheme: HMAC-SHA256 over `<timestamp>.<raw body>`, lowercase hex.

use super::{error::quote, headers::Values, WebhookError};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

pub(crate) type HmacSha256 = Hmac<Sha256>;

/// Longest accepted `Service-Webhook-Signature` value (all lines together), in bytes.
pub const MAX_SIGNATURE_HEADER_BYTES: usize = 4096;
/// Most comma-separated entries accepted in `Service-Webhook-Signature`.
pub const MAX_SIGNATURE_VALUES: usize = 16;
/// Most digits accepted in `Service-Webhook-Timestamp`.
pub const MAX_TIMESTAMP_DIGITS: usize = 15;
/// Length of a v1 signature in hex characters.
pub const SIGNATURE_HEX_LEN: usize = 64;

/// Step 4: the timestamp is one run of ASCII digits. Returns the exact text that was signed
/// (trimmed of optional whitespace) and its value.
pub(crate) fn parse_timestamp<'a>(values: &Values<'a>) -> Result<(&'a str, i64), WebhookError> {
    let text = values
        .single()
        .map_err(|reason| WebhookError::InvalidTimestamp { reason })?;
    if text.len() > MAX_TIMESTAMP_DIGITS {
        return Err(WebhookError::InvalidTimestamp {
            reason: format!(
                "{} has more than {MAX_TIMESTAMP_DIGITS} digits; expected Unix seconds",
                quote(text)
            ),
        });
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(WebhookError::InvalidTimestamp {
            reason: format!(
                "{} is not a decimal number of Unix seconds (digits only, no sign, no fraction)",
                quote(text)
            ),
        });
    }
    let value = text
        .parse::<i64>()
        .map_err(|_| WebhookError::InvalidTimestamp {
            reason: format!("{} is out of range", quote(text)),
        })?;
    Ok((text, value))
}

/// Step 5: the `v1` candidates of the signature header, decoded. Entries of other versions are
/// skipped; malformed `v1` entries are not usable; no usable entry at all is an error.
pub(crate) fn parse_signatures(values: &Values<'_>) -> Result<Candidates, WebhookError> {
    let invalid = |reason: String| WebhookError::InvalidSignatureHeader { reason };
    if values.overflow {
        return Err(invalid(format!(
            "more than {} header lines",
            super::headers::MAX_VALUES_PER_HEADER
        )));
    }
    let total: usize = values.list().iter().map(|v| v.len()).sum();
    if total > MAX_SIGNATURE_HEADER_BYTES {
        return Err(invalid(format!(
            "{total} bytes, at most {MAX_SIGNATURE_HEADER_BYTES} are accepted"
        )));
    }
    let mut candidates = Candidates::default();
    let mut entries = 0usize;
    let mut malformed_v1 = 0usize;
    let mut other_versions = 0usize;
    for line in values.list() {
        for entry in line.split(',') {
            let entry = super::headers::trim_ows(entry);
            if entry.is_empty() {
                continue;
            }
            entries += 1;
            if entries > MAX_SIGNATURE_VALUES {
                return Err(invalid(format!(
                    "more than {MAX_SIGNATURE_VALUES} comma-separated values"
                )));
            }
            match entry.split_once('=') {
                Some(("v1", hex)) => match decode_lower_hex(hex) {
                    Some(sig) => candidates.push(sig),
                    None => malformed_v1 += 1,
                },
                _ => other_versions += 1,
            }
        }
    }
    if candidates.is_empty() {
        let reason = if malformed_v1 > 0 {
            format!("{malformed_v1} v1 value(s), none of them {SIGNATURE_HEX_LEN} lowercase hex characters")
        } else if other_versions > 0 {
            format!("no v1=<hex> value ({other_versions} value(s) of other or unknown versions were skipped)")
        } else {
            "no v1=<hex> value".to_owned()
        };
        return Err(invalid(reason));
    }
    Ok(candidates)
}

/// The decoded `v1` values of one delivery, kept inline (at most [`MAX_SIGNATURE_VALUES`]).
pub(crate) struct Candidates {
    slots: [[u8; 32]; MAX_SIGNATURE_VALUES],
    len: usize,
}

impl Default for Candidates {
    fn default() -> Self {
        Self {
            slots: [[0; 32]; MAX_SIGNATURE_VALUES],
            len: 0,
        }
    }
}

impl Candidates {
    fn push(&mut self, sig: [u8; 32]) {
        // The caller stops at MAX_SIGNATURE_VALUES entries, so a slot is always free.
        if let Some(slot) = self.slots.get_mut(self.len) {
            *slot = sig;
            self.len += 1;
        }
    }

    pub(crate) fn as_slice(&self) -> &[[u8; 32]] {
        self.slots.get(..self.len).unwrap_or(&[])
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Decodes exactly 64 lowercase hex characters; anything else is `None`. The expected value is
/// lowercase, so an uppercase value can never equal it.
fn decode_lower_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != SIGNATURE_HEX_LEN
        || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

/// The MAC of `<timestamp>.<body>` from a keyed state that has not yet absorbed any message.
pub(crate) fn mac(key: &HmacSha256, timestamp: &str, body: &[u8]) -> [u8; 32] {
    let mut m = key.clone();
    m.update(timestamp.as_bytes());
    m.update(b".");
    m.update(body);
    m.finalize().into_bytes().into()
}

/// Constant-time check whether any candidate equals `expected`. Every candidate is compared in
/// full; only the final yes/no depends on the data.
pub(crate) fn any_matches(expected: &[u8; 32], candidates: &[[u8; 32]]) -> bool {
    let mut hit = subtle::Choice::from(0u8);
    for c in candidates {
        hit |= expected.ct_eq(c);
    }
    hit.into()
}
