//! Enterprise outbound webhooks: verify deliveries, sign test deliveries, rotate secrets.
//!
//! A delivery carries three headers — [`HEADER_ID`], [`HEADER_TIMESTAMP`] and
//! [`HEADER_SIGNATURE`] — and a JSON body. The signature is lowercase hex HMAC-SHA256, keyed
//! with the subscription's signing secret (its UTF-8 bytes as is), over
//! `<timestamp>.<raw body>`. During a secret rotation the header carries two `v1=` values for
//! five minutes.
//!
//! Verification checks, in this order, so that every language reports the same code for the
//! same input: required headers present → secrets usable → body size → timestamp well-formed →
//! signature header well-formed → a signature matches → timestamp inside the tolerance →
//! payload parses. A forged request therefore always reports `no_matching_signature`; only a
//! genuine but late delivery reports a timestamp error.

mod error;
mod event;
mod headers;
mod route;
mod signature;
mod subscription;

pub use crate::HeaderMap;
pub use error::WebhookError;
pub use event::{resource_path, EventName, WebhookEvent};
pub use headers::{MAX_DELIVERY_ID_BYTES, MAX_VALUES_PER_HEADER};
pub use route::{known_event_names, EventRouter, Route, MAX_EVENT_NAME_BYTES};
pub use signature::{
    MAX_SIGNATURE_HEADER_BYTES, MAX_SIGNATURE_VALUES, MAX_TIMESTAMP_DIGITS, SIGNATURE_HEX_LEN,
};
pub use subscription::{revealed_secret, RevealedSecret, MAX_SUBSCRIPTION_RESPONSE_BYTES};

use crate::{keyhash, ArgumentError};
use hmac::KeyInit;
use signature::HmacSha256;
use std::fmt;

/// The constant-time comparison verification uses, exposed only for the `make ct-check`
/// statistical timing test. Not part of the API.
#[doc(hidden)]
pub fn __ct_any_matches(expected: &[u8; 32], candidates: &[[u8; 32]]) -> bool {
    signature::any_matches(expected, candidates)
}

/// The delivery reference header; a replay gets a new one.
pub const HEADER_ID: &str = "Service-Webhook-Id";
/// The Unix-seconds timestamp header (decimal), part of the signed content.
pub const HEADER_TIMESTAMP: &str = "Service-Webhook-Timestamp";
/// The signature header: comma-separated `v1=<hex>` values.
pub const HEADER_SIGNATURE: &str = "Service-Webhook-Signature";
/// The three delivery headers, in the order verification checks them.
pub const HEADER_NAMES: [&str; 3] = [HEADER_ID, HEADER_TIMESTAMP, HEADER_SIGNATURE];

/// Default timestamp tolerance: five minutes, as the spec requires of receivers.
pub const DEFAULT_TOLERANCE_SECONDS: u64 = 300;
/// Largest tolerance accepted: one day.
pub const MAX_TOLERANCE_SECONDS: u64 = 86_400;
/// Default body limit: 256 KiB (the service sends at most 256 KB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;
/// Largest body limit accepted: 64 MiB.
pub const MAX_MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Most secrets accepted at once (current and previous are two).
pub const MAX_SECRETS: usize = 8;
/// Longest secret accepted, in bytes.
pub const MAX_SECRET_BYTES: usize = 1024;

/// A signing secret as a verifier takes it: its bytes (the secret string's UTF-8 bytes, as the
/// service showed it) and, optionally, the last Unix second it may verify. Implemented for
/// plain secrets (`&str`, `String`, byte slices and vectors: no expiry) and for
/// [`WebhookSecret`].
pub trait SigningSecret {
    /// The secret's bytes, used as the HMAC key as is.
    fn secret_bytes(&self) -> &[u8];
    /// The last Unix second at which a delivery signed with this secret verifies (the
    /// rotation's `previous_secret_valid_until`); `None`: no limit.
    fn valid_until(&self) -> Option<i64> {
        None
    }
}

impl<T: AsRef<[u8]> + ?Sized> SigningSecret for T {
    fn secret_bytes(&self) -> &[u8] {
        self.as_ref()
    }
}

/// A signing secret with an optional end of validity. After `rotate-secret` the service signs
/// with the new and the previous secret for five minutes, "afterwards only the new one", and
/// returns `previous_secret_valid_until`: give the previous secret that limit, and it never
/// verifies a delivery whose verification time is after it (a rotation often follows a leak).
/// `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret {
    secret: Vec<u8>,
    valid_until: Option<i64>,
}

impl WebhookSecret {
    /// A secret valid until `valid_until` (Unix seconds, inclusive), or with no limit.
    pub fn new(secret: impl Into<Vec<u8>>, valid_until: Option<i64>) -> Self {
        Self {
            secret: secret.into(),
            valid_until,
        }
    }

    /// The secret's bytes (hand them to nothing but a verifier or a signer).
    pub fn secret(&self) -> &[u8] {
        &self.secret
    }

    /// The last Unix second it verifies at; `None`: no limit.
    pub fn valid_until(&self) -> Option<i64> {
        self.valid_until
    }
}

impl SigningSecret for WebhookSecret {
    fn secret_bytes(&self) -> &[u8] {
        &self.secret
    }
    fn valid_until(&self) -> Option<i64> {
        self.valid_until
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookSecret")
            .field("secret", &"[redacted]")
            .field("valid_until", &self.valid_until)
            .finish()
    }
}

/// Whether a secret valid until `valid_until` may verify a delivery at `now`.
fn in_force(valid_until: Option<i64>, now: i64) -> bool {
    valid_until.is_none_or(|until| now <= until)
}

/// Verification options. Build with [`VerifyOptions::default`] or [`VerifyOptions::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyOptions {
    tolerance_seconds: u64,
    max_body_bytes: usize,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            tolerance_seconds: DEFAULT_TOLERANCE_SECONDS,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl VerifyOptions {
    /// Options with a tolerance (0 to 86,400 s) and a body limit (0 to 64 MiB). Signed
    /// arguments so that every binding passes host numbers through and gets the same
    /// `invalid_argument` error for out-of-range values.
    pub fn new(tolerance_seconds: i64, max_body_bytes: i64) -> Result<Self, ArgumentError> {
        Self::with_defaults(Some(tolerance_seconds), Some(max_body_bytes))
    }

    /// [`VerifyOptions::new`] where an absent value is its default
    /// ([`DEFAULT_TOLERANCE_SECONDS`], [`DEFAULT_MAX_BODY_BYTES`]).
    pub fn with_defaults(
        tolerance_seconds: Option<i64>,
        max_body_bytes: Option<i64>,
    ) -> Result<Self, ArgumentError> {
        let tolerance_seconds = tolerance_seconds.unwrap_or(DEFAULT_TOLERANCE_SECONDS as i64);
        let max_body_bytes = max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES as i64);
        let tolerance = u64::try_from(tolerance_seconds)
            .ok()
            .filter(|t| *t <= MAX_TOLERANCE_SECONDS)
            .ok_or_else(|| {
                ArgumentError::new(
                    "tolerance_seconds",
                    format!(
                        "must be 0 to {MAX_TOLERANCE_SECONDS} seconds, got {tolerance_seconds}"
                    ),
                )
            })?;
        let max_body = usize::try_from(max_body_bytes)
            .ok()
            .filter(|m| *m <= MAX_MAX_BODY_BYTES)
            .ok_or_else(|| {
                ArgumentError::new(
                    "max_body_bytes",
                    format!("must be 0 to {MAX_MAX_BODY_BYTES} bytes, got {max_body_bytes}"),
                )
            })?;
        Ok(Self {
            tolerance_seconds: tolerance,
            max_body_bytes: max_body,
        })
    }

    /// The timestamp tolerance in seconds.
    pub fn tolerance_seconds(&self) -> u64 {
        self.tolerance_seconds
    }

    /// The body limit in bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }
}

record! {
/// A delivery that passed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
// JS hands a verified delivery back for `planReceipt` as the JSON it received.
#[cfg_attr(feature = "wasm", derive(serde::Deserialize))]
pub struct VerifiedWebhook {
    /// `Service-Webhook-Id`: the delivery reference. Dedup with [`crate::dedup::delivery_key`].
    pub delivery_id: String,
    /// `Service-Webhook-Timestamp`, Unix seconds.
    pub timestamp: i64,
    /// Index, in the secrets given, of the secret that matched (0 = the first). When every
    /// delivery matches the current secret, a rotation is complete.
    pub secret_index: u32,
    /// A key derived from the signed content (timestamp and body), see [`crate::dedup::content_key`].
    /// Unlike the delivery id it cannot be changed by someone replaying a captured delivery.
    pub content_key: String,
    /// The parsed event.
    pub event: WebhookEvent,
}
}

/// The HMAC-SHA256 primitive verification uses, so that a host with a faster one (Node's
/// `node:crypto`, which uses the CPU's SHA extensions that WebAssembly cannot reach) can supply
/// it while every rule — header parsing, limits, check order, comparison, tolerance, payload —
/// stays in the core. [`WebhookVerifier`] uses its own keyed states; pass another through
/// [`WebhookVerifier::verify_with_mac`] or [`verify_with_mac`].
pub trait SignatureMac {
    /// HMAC-SHA256, keyed with secret number `secret_index` (in the order the secrets were
    /// given), of `timestamp` + `.` + `body`. `None` when the primitive failed: that secret then
    /// matches nothing (verification fails closed, `no_matching_signature`).
    fn mac(&mut self, secret_index: usize, timestamp: &str, body: &[u8]) -> Option<[u8; 32]>;
}

/// The core's own primitive: keyed states, cloned per delivery.
struct KeyedStates<'k>(&'k [HmacSha256]);

impl SignatureMac for KeyedStates<'_> {
    fn mac(&mut self, secret_index: usize, timestamp: &str, body: &[u8]) -> Option<[u8; 32]> {
        self.0
            .get(secret_index)
            .map(|key| signature::mac(key, timestamp, body))
    }
}

/// A verifier holding its secrets (as keyed HMAC states) and options; build it once and reuse
/// it for every delivery. It is `Send + Sync` and never exposes the secrets.
#[derive(Clone)]
pub struct WebhookVerifier {
    keys: Vec<HmacSha256>,
    valid_until: Vec<Option<i64>>,
    options: VerifyOptions,
}

impl fmt::Debug for WebhookVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookVerifier")
            .field("secrets", &format_args!("[{} redacted]", self.keys.len()))
            .field("options", &self.options)
            .finish()
    }
}

impl WebhookVerifier {
    /// A verifier for one or more secrets (current first, then previous), each with its
    /// optional end of validity ([`WebhookSecret`]; a plain secret has none). Promises:
    /// `invalid_secret` when the list is empty, longer than [`MAX_SECRETS`], or a secret is
    /// empty or longer than [`MAX_SECRET_BYTES`]; a secret past its `valid_until` at the time of
    /// verification never matches.
    pub fn new<S: SigningSecret>(
        secrets: &[S],
        options: VerifyOptions,
    ) -> Result<Self, WebhookError> {
        Ok(Self {
            keys: keys_for(secrets)?,
            valid_until: secrets.iter().map(SigningSecret::valid_until).collect(),
            options,
        })
    }

    /// The options this verifier applies.
    pub fn options(&self) -> VerifyOptions {
        self.options
    }

    /// Verifies one delivery: `headers` as received, `body` as the exact raw bytes, `now` in
    /// Unix seconds. See the module documentation for the order of checks.
    pub fn verify<H: HeaderMap + ?Sized>(
        &self,
        headers: &H,
        body: &[u8],
        now: i64,
    ) -> Result<VerifiedWebhook, WebhookError> {
        let collected = headers::collect(headers)?;
        let mut mac = KeyedStates(&self.keys);
        verify_collected(
            &collected,
            &self.valid_until,
            &mut mac,
            body,
            now,
            self.options,
        )
    }

    /// As [`WebhookVerifier::verify`], with the MACs computed by `mac` for this verifier's
    /// secrets (same order). Every check but the MAC itself runs here; a `mac` that computes
    /// anything else simply never matches.
    pub fn verify_with_mac<H: HeaderMap + ?Sized, M: SignatureMac + ?Sized>(
        &self,
        headers: &H,
        body: &[u8],
        now: i64,
        mac: &mut M,
    ) -> Result<VerifiedWebhook, WebhookError> {
        let collected = headers::collect(headers)?;
        verify_collected(&collected, &self.valid_until, mac, body, now, self.options)
    }
}

/// Verifies one delivery against one or more secrets (current first). Equivalent to
/// [`WebhookVerifier::new`] then [`WebhookVerifier::verify`], except that missing headers are
/// reported before unusable secrets, as the check order requires. A secret past its
/// `valid_until` at `now` never matches.
pub fn verify<H: HeaderMap + ?Sized, S: SigningSecret>(
    headers: &H,
    body: &[u8],
    secrets: &[S],
    now: i64,
    options: VerifyOptions,
) -> Result<VerifiedWebhook, WebhookError> {
    let collected = headers::collect(headers)?;
    let keys = keys_for(secrets)?;
    let valid_until: Vec<_> = secrets.iter().map(SigningSecret::valid_until).collect();
    verify_collected(
        &collected,
        &valid_until,
        &mut KeyedStates(&keys),
        body,
        now,
        options,
    )
}

/// As [`verify`], with the MACs computed by `mac` for `secrets` (same order). The secrets are
/// still checked here (`invalid_secret`, in the contract's order); only the MAC is delegated.
pub fn verify_with_mac<H: HeaderMap + ?Sized, S: SigningSecret, M: SignatureMac + ?Sized>(
    headers: &H,
    body: &[u8],
    secrets: &[S],
    now: i64,
    options: VerifyOptions,
    mac: &mut M,
) -> Result<VerifiedWebhook, WebhookError> {
    let collected = headers::collect(headers)?;
    check_secrets(secrets)?;
    let valid_until: Vec<_> = secrets.iter().map(SigningSecret::valid_until).collect();
    verify_collected(&collected, &valid_until, mac, body, now, options)
}

/// Step 2 without keying: the same checks and errors as [`keys_for`].
fn check_secrets<S: SigningSecret>(secrets: &[S]) -> Result<(), WebhookError> {
    check_secret_count(secrets.len())?;
    for (index, s) in secrets.iter().enumerate() {
        secret_problem(s.secret_bytes()).map_or(Ok(()), |reason| {
            Err(WebhookError::InvalidSecret {
                index: Some(index),
                reason: format!("secret #{index} {reason}"),
            })
        })?;
    }
    Ok(())
}

fn check_secret_count(count: usize) -> Result<(), WebhookError> {
    if count == 0 {
        return Err(WebhookError::InvalidSecret {
            index: None,
            reason: "no secret given".to_owned(),
        });
    }
    if count > MAX_SECRETS {
        return Err(WebhookError::InvalidSecret {
            index: None,
            reason: format!("{count} secrets given, at most {MAX_SECRETS}"),
        });
    }
    Ok(())
}

fn secret_problem(secret: &[u8]) -> Option<String> {
    if secret.is_empty() {
        return Some("is empty".to_owned());
    }
    if secret.len() > MAX_SECRET_BYTES {
        return Some(format!("is longer than {MAX_SECRET_BYTES} bytes"));
    }
    None
}

/// Step 2: secrets usable, each keyed once.
fn keys_for<S: SigningSecret>(secrets: &[S]) -> Result<Vec<HmacSha256>, WebhookError> {
    check_secrets(secrets)?;
    secrets
        .iter()
        .enumerate()
        .map(|(index, s)| {
            HmacSha256::new_from_slice(s.secret_bytes()).map_err(|_| WebhookError::InvalidSecret {
                index: Some(index),
                reason: format!("secret #{index} cannot key HMAC-SHA256"),
            })
        })
        .collect()
}

/// The MAC of `<timestamp>.<body>` under one secret, with the secret checked as verification
/// checks it (`invalid_secret` with index 0).
pub(crate) fn mac_with_secret(
    secret: &[u8],
    timestamp: &str,
    body: &[u8],
) -> Result<[u8; 32], WebhookError> {
    let key = keys_for(&[secret])?;
    let key = key.first().ok_or_else(|| WebhookError::InvalidSecret {
        index: None,
        reason: "no secret given".to_owned(),
    })?;
    Ok(signature::mac(key, timestamp, body))
}

/// Steps 3 to 8, with one secret per `valid_until` entry, whose MACs `mac` computes.
fn verify_collected<M: SignatureMac + ?Sized>(
    c: &headers::Collected<'_>,
    valid_until: &[Option<i64>],
    mac: &mut M,
    body: &[u8],
    now: i64,
    options: VerifyOptions,
) -> Result<VerifiedWebhook, WebhookError> {
    if body.len() > options.max_body_bytes {
        return Err(WebhookError::PayloadTooLarge {
            size: body.len() as u64,
            limit: options.max_body_bytes as u64,
        });
    }
    let (ts_text, timestamp) = signature::parse_timestamp(&c.timestamp)?;
    let candidates = signature::parse_signatures(&c.signature)?;

    // Each secret's MAC is computed once; the first secret's MAC is always computed because the
    // content key is derived from it. A secret past its end of validity is never compared.
    let mut first_mac = None;
    let mut matched = None;
    let mut expired = 0;
    for (index, until) in valid_until.iter().enumerate() {
        let live = in_force(*until, now);
        if !live {
            expired += 1;
            if index != 0 {
                continue;
            }
        }
        let Some(expected) = mac.mac(index, ts_text, body) else {
            continue;
        };
        if index == 0 {
            first_mac = Some(expected);
        }
        if live && signature::any_matches(&expected, candidates.as_slice()) {
            matched = Some(index);
            break;
        }
    }
    let (Some(secret_index), Some(first_mac)) = (matched, first_mac) else {
        return Err(WebhookError::NoMatchingSignature {
            candidates: candidates.len(),
            secrets: valid_until.len() - expired,
            expired,
        });
    };

    let skew = i128::from(now) - i128::from(timestamp);
    let tolerance = i128::from(options.tolerance_seconds);
    let clamp = |v: i128| i64::try_from(v).unwrap_or(i64::MAX);
    if skew > tolerance {
        return Err(WebhookError::TimestampTooOld {
            skew_seconds: clamp(skew),
            tolerance_seconds: options.tolerance_seconds,
        });
    }
    if -skew > tolerance {
        return Err(WebhookError::TimestampTooNew {
            skew_seconds: clamp(-skew),
            tolerance_seconds: options.tolerance_seconds,
        });
    }

    let event = WebhookEvent::parse(body)?;
    Ok(VerifiedWebhook {
        delivery_id: c.delivery_id.to_owned(),
        timestamp,
        secret_index: u32::try_from(secret_index).unwrap_or(u32::MAX),
        content_key: keyhash::content_key_from_mac(&first_mac),
        event,
    })
}

/// The three headers of a signed delivery. Serialized (for JS) as a header object keyed by the
/// canonical header names, ready to pass to `fetch`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
pub struct SignedHeaders {
    /// Value of `Service-Webhook-Id`.
    #[serde(rename = "Service-Webhook-Id")]
    pub id: String,
    /// Value of `Service-Webhook-Timestamp`.
    #[serde(rename = "Service-Webhook-Timestamp")]
    pub timestamp: String,
    /// Value of `Service-Webhook-Signature`: one `v1=<hex>` per secret, comma-separated.
    #[serde(rename = "Service-Webhook-Signature")]
    pub signature: String,
}

impl SignedHeaders {
    /// The headers as `(name, value)` pairs, ready to send.
    pub fn pairs(&self) -> [(&'static str, &str); 3] {
        [
            (HEADER_ID, &self.id),
            (HEADER_TIMESTAMP, &self.timestamp),
            (HEADER_SIGNATURE, &self.signature),
        ]
    }
}

/// Signs a body as the service would: for test senders, simulators and receivers' own tests.
/// With two secrets the signature header carries two values, as during a rotation.
/// Promises: `invalid_secret` as for verification; `invalid_argument` for a negative
/// timestamp or an empty, over-long or control-character delivery id.
pub fn sign<S: SigningSecret>(
    secrets: &[S],
    body: &[u8],
    timestamp: i64,
    delivery_id: &str,
) -> Result<SignedHeaders, WebhookError> {
    let keys = keys_for(secrets)?;
    if timestamp < 0 {
        return Err(ArgumentError::new("timestamp", "must be non-negative Unix seconds").into());
    }
    if delivery_id.is_empty()
        || delivery_id.len() > MAX_DELIVERY_ID_BYTES
        || delivery_id.chars().any(char::is_control)
        || headers::trim_ows(delivery_id) != delivery_id
    {
        return Err(ArgumentError::new(
            "delivery_id",
            format!("must be 1 to {MAX_DELIVERY_ID_BYTES} bytes, without control characters or surrounding spaces"),
        )
        .into());
    }
    let ts = timestamp.to_string();
    let signature = keys
        .iter()
        .map(|k| format!("v1={}", hex::encode(signature::mac(k, &ts, body))))
        .collect::<Vec<_>>()
        .join(",");
    Ok(SignedHeaders {
        id: delivery_id.to_owned(),
        timestamp: ts,
        signature,
    })
}

/// The secrets to verify with at `now` during a rotation: the current one, and the previous
/// one while `now <= previous_valid_until` (the service signs with both for five minutes after
/// `rotate-secret`, and returns `previous_secret_valid_until`). Promises secrets that carry
/// their expiry: the previous one keeps `previous_valid_until`, so a verifier built from them
/// (even long-lived, built at rotation time) never accepts it after that instant.
/// `invalid_argument` when exactly one of `previous` and `previous_valid_until` is given.
pub fn active_secrets(
    current: &str,
    previous: Option<&str>,
    previous_valid_until: Option<i64>,
    now: i64,
) -> Result<Vec<WebhookSecret>, ArgumentError> {
    let current = WebhookSecret::new(current, None);
    match (previous, previous_valid_until) {
        (None, None) => Ok(vec![current]),
        (Some(prev), Some(until)) if now <= until => {
            Ok(vec![current, WebhookSecret::new(prev, Some(until))])
        }
        (Some(_), Some(_)) => Ok(vec![current]),
        (Some(_), None) => Err(ArgumentError::new(
            "previous_valid_until",
            "is required with a previous secret (the service returns it as previous_secret_valid_until)",
        )),
        (None, Some(_)) => Err(ArgumentError::new(
            "previous",
            "previous_valid_until was given without the previous secret",
        )),
    }
}

#[cfg(test)]
mod tests;
