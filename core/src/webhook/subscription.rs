//! The reveal-once signing secret of a webhook subscription: the enterprise API returns it once,
//! in the answer to `POST /api/v1/webhooks` ("the signing secret is returned once") and to
//! `POST …/rotate-secret` ("new secret (once) and previous_secret_valid_until").
//!
//! The name of the member carrying the secret is not shown in the spec. It is read from
//! `secret`, `signing_secret`, `webhook_secret`, `new_secret` or `signingSecret`, at the top
//! of the response or under `data`, `subscription` or `webhook`; `previous_secret_valid_until`
//! (or `previousSecretValidUntil`) and `reference` from the same places. Unknown members are
//! kept: [`RevealedSecret::record`] is the response with the secret members removed, so it can
//! be logged or stored.

use super::{WebhookError, WebhookSecret};
use serde_json::{Map, Value};
use std::fmt;

/// The largest subscription response read, in bytes.
pub const MAX_SUBSCRIPTION_RESPONSE_BYTES: usize = 1024 * 1024;
const SECRET_MEMBERS: [&str; 5] = [
    "secret",
    "signing_secret",
    "webhook_secret",
    "new_secret",
    "signingSecret",
];
const HOLDERS: [&str; 3] = ["data", "subscription", "webhook"];

/// A subscription's signing secret as its create or rotation revealed it. `Debug` never shows
/// the secret.
#[derive(Clone, PartialEq)]
pub struct RevealedSecret {
    /// The new signing secret (no expiry).
    pub secret: WebhookSecret,
    /// A rotation's `previous_secret_valid_until`, Unix seconds: until then deliveries carry
    /// the previous secret's signature too. `None` for a create.
    pub previous_valid_until: Option<i64>,
    /// The subscription's reference, when the response names it.
    pub reference: Option<String>,
    /// The response as JSON text, with every secret member removed: safe to log or store.
    pub record: String,
}

impl fmt::Debug for RevealedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RevealedSecret")
            .field("secret", &self.secret)
            .field("previous_valid_until", &self.previous_valid_until)
            .field("reference", &self.reference)
            .finish_non_exhaustive()
    }
}

impl RevealedSecret {
    /// The secrets a receiver verifies with from now on: the new one, and `previous` (the
    /// secret held until the rotation) until `previous_valid_until`, carrying that expiry, so a
    /// verifier built from them never accepts the previous one after it. Without a
    /// `previous_valid_until` (a create) or a `previous`, the new one alone.
    pub fn secrets(&self, previous: Option<&str>) -> Vec<WebhookSecret> {
        let mut out = vec![self.secret.clone()];
        if let (Some(p), Some(until)) = (previous, self.previous_valid_until) {
            out.push(WebhookSecret::new(p.as_bytes().to_vec(), Some(until)));
        }
        out
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// The signing secret a create (`createEnterpriseWebhook`) or a rotation
/// (`rotateEnterpriseWebhookSecret`) response reveals (see the module documentation).
/// Promises `secret_not_revealed` for a body that is not a JSON object of at most
/// [`MAX_SUBSCRIPTION_RESPONSE_BYTES`], that names no secret, or whose
/// `previous_secret_valid_until` is not a time; its message never contains the body.
pub fn revealed_secret(body: &[u8]) -> Result<RevealedSecret, WebhookError> {
    let fail = |reason: &str| WebhookError::SecretNotRevealed {
        reason: reason.to_owned(),
    };
    if body.len() > MAX_SUBSCRIPTION_RESPONSE_BYTES {
        return Err(fail("the response is larger than 1 MiB"));
    }
    let Ok(Value::Object(mut top)) = serde_json::from_slice::<Value>(body) else {
        return Err(fail("the response is not a JSON object"));
    };
    let mut secret = None;
    let mut until = None;
    let mut reference = None;
    let mut visit = |holder: &mut Map<String, Value>| {
        for k in SECRET_MEMBERS {
            if let Some(v) = holder.remove(k) {
                if secret.is_none() {
                    secret = text(Some(&v));
                }
            }
        }
        for k in ["previous_secret_valid_until", "previousSecretValidUntil"] {
            if until.is_none() {
                until = holder.get(k).cloned();
            }
        }
        if reference.is_none() {
            reference = text(holder.get("reference"));
        }
    };
    visit(&mut top);
    for h in HOLDERS {
        if let Some(Value::Object(inner)) = top.get_mut(h) {
            visit(inner);
        }
    }
    let Some(secret) = secret else {
        return Err(fail("no member `secret`, `signing_secret`, `webhook_secret`, `new_secret` or `signingSecret` (at the top or under `data`, `subscription`, `webhook`) holds a non-empty string; the secret is shown once: read it from the raw response before it is lost, then rotate it"));
    };
    let previous_valid_until = match until {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n.as_i64().ok_or_else(|| {
            fail("previous_secret_valid_until is not a whole number of Unix seconds")
        })?),
        Some(Value::String(s)) => Some(crate::parse_timestamp(&s).ok_or_else(|| {
            fail("previous_secret_valid_until is not a time (RFC 3339 or Unix seconds)")
        })?),
        Some(_) => return Err(fail("previous_secret_valid_until is not a time")),
    };
    Ok(RevealedSecret {
        secret: WebhookSecret::new(secret.into_bytes(), None),
        previous_valid_until,
        reference,
        record: Value::Object(top).to_string(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_never_shows_in_debug_or_the_record() {
        let r =
            revealed_secret(br#"{"data":{"reference":"wh_1","secret":"whsec_abc","active":true}}"#)
                .unwrap();
        assert_eq!(r.secret.secret(), b"whsec_abc");
        assert_eq!(r.reference.as_deref(), Some("wh_1"));
        assert!(!format!("{r:?}").contains("whsec_abc"));
        assert!(!r.record.contains("whsec_abc") && r.record.contains("\"active\":true"));
    }

    #[test]
    fn a_rotation_keeps_the_previous_secret_until_its_end() {
        let r = revealed_secret(
            br#"{"new_secret":"s2","previous_secret_valid_until":"2026-11-27T10:05:00Z"}"#,
        )
        .unwrap();
        let s = r.secrets(Some("s1"));
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].valid_until(), Some(1_795_773_900));
        assert_eq!(r.secrets(None).len(), 1);
    }

    #[test]
    fn no_secret_is_an_error_that_does_not_echo_the_body() {
        let e = revealed_secret(br#"{"data":{"token_like":"hunter2"}}"#).unwrap_err();
        assert_eq!(e.code(), "secret_not_revealed");
        assert!(!e.to_string().contains("hunter2"));
        assert!(revealed_secret(b"[1]").is_err());
        assert!(
            revealed_secret(br#"{"secret":"s","previous_secret_valid_until":"soon"}"#).is_err()
        );
    }
}
