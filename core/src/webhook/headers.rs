//! Header lookup over whatever shape the host has, and collection of the three webhook headers.

use super::{error::quote, WebhookError, HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP};
use crate::HeaderMap;

/// Most values kept per header name; more is an error for that header.
pub const MAX_VALUES_PER_HEADER: usize = 16;
/// Longest accepted `Service-Webhook-Id` value, in bytes.
pub const MAX_DELIVERY_ID_BYTES: usize = 256;

/// Values of one header, bounded, kept inline (no allocation per delivery).
#[derive(Default)]
pub(crate) struct Values<'a> {
    slots: [&'a str; MAX_VALUES_PER_HEADER],
    len: usize,
    pub(crate) overflow: bool,
}

impl<'a> Values<'a> {
    fn collect<H: HeaderMap + ?Sized>(headers: &'a H, name: &str) -> Self {
        let mut v = Values::default();
        headers.for_each_value(name, &mut |value| match v.slots.get_mut(v.len) {
            Some(slot) => {
                *slot = value;
                v.len += 1;
            }
            None => v.overflow = true,
        });
        v
    }

    /// The values collected (at most [`MAX_VALUES_PER_HEADER`]).
    pub(crate) fn list(&self) -> &[&'a str] {
        self.slots.get(..self.len).unwrap_or(&[])
    }

    fn non_empty(&self) -> bool {
        self.list().iter().any(|s| !trim_ows(s).is_empty())
    }

    /// The single value of a header that may be repeated only with identical values.
    pub(crate) fn single(&self) -> Result<&'a str, String> {
        if self.overflow {
            return Err(format!("more than {MAX_VALUES_PER_HEADER} values"));
        }
        let mut found: Option<&'a str> = None;
        for raw in self.list() {
            let v = trim_ows(raw);
            if v.is_empty() {
                continue;
            }
            match found {
                None => found = Some(v),
                Some(prev) if prev == v => {}
                Some(prev) => {
                    return Err(format!(
                        "conflicting values {} and {}",
                        quote(prev),
                        quote(v)
                    ))
                }
            }
        }
        found.ok_or_else(|| "empty value".to_owned())
    }
}

/// The three webhook headers, collected and checked for presence (step 1 of verification).
pub(crate) struct Collected<'a> {
    pub(crate) delivery_id: &'a str,
    pub(crate) timestamp: Values<'a>,
    pub(crate) signature: Values<'a>,
}

/// Step 1: every required header is present with a non-empty value; the delivery id is usable.
pub(crate) fn collect<H: HeaderMap + ?Sized>(headers: &H) -> Result<Collected<'_>, WebhookError> {
    let id = Values::collect(headers, HEADER_ID);
    let timestamp = Values::collect(headers, HEADER_TIMESTAMP);
    let signature = Values::collect(headers, HEADER_SIGNATURE);
    for (values, header) in [
        (&id, HEADER_ID),
        (&timestamp, HEADER_TIMESTAMP),
        (&signature, HEADER_SIGNATURE),
    ] {
        if !values.non_empty() {
            return Err(WebhookError::MissingHeader { header });
        }
    }
    let delivery_id = id.single().map_err(|reason| WebhookError::InvalidHeader {
        header: HEADER_ID,
        reason,
    })?;
    if delivery_id.len() > MAX_DELIVERY_ID_BYTES {
        return Err(WebhookError::InvalidHeader {
            header: HEADER_ID,
            reason: format!(
                "value has {} bytes, at most {MAX_DELIVERY_ID_BYTES} are accepted",
                delivery_id.len()
            ),
        });
    }
    if delivery_id.chars().any(char::is_control) {
        return Err(WebhookError::InvalidHeader {
            header: HEADER_ID,
            reason: "value contains control characters".to_owned(),
        });
    }
    Ok(Collected {
        delivery_id,
        timestamp,
        signature,
    })
}

/// Trims HTTP optional whitespace (space and horizontal tab) from both ends.
pub(crate) fn trim_ows(s: &str) -> &str {
    s.trim_matches([' ', '\t'])
}
