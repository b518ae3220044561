//! uniffi layer of royaltykit for Kotlin (JVM and Android), package `dev.royaltykit`.
//! Conversions, the default clock and RNG only: records, enums and the error
//! (`RoyaltyKitException`) are the core's own, derived by uniffi into `dev.royaltykit.types`.
//!
//! Shaped for few JNA crossings: build a [`WebhookVerifier`] once with its secrets and call
//! `verify(headers, body, now)` per delivery — one crossing, with the delivery packed into one
//! buffer by the Kotlin layer. On the JVM that one call goes through JNI instead of JNA
//! ([`jni`], the only module with `unsafe`).
#![deny(unsafe_code)]
// The core's error is lowered across the FFI by value; its size on the Rust stack does not matter.
#![allow(clippy::result_large_err)]

use royaltykit::webhook::{self, VerifiedWebhook, WebhookEvent};
use royaltykit::{dedup, ArgumentError, Error};
use royaltykit_host::{now_or_clock, random_seed, random_uuid};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

uniffi::setup_scaffolding!();

mod api;
mod export;
mod fleet;
mod generated;
mod inbox;
mod jni;
mod machine;
mod receiver;
mod retry;
mod route;

pub(crate) type Result<T> = std::result::Result<T, Error>;

/// Headers as Kotlin passes them: a map of name to a list of values.
struct MultiMap<'a>(&'a HashMap<String, Vec<String>>);

impl webhook::HeaderMap for MultiMap<'_> {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        for (n, values) in self.0 {
            if n.eq_ignore_ascii_case(name) {
                values.iter().for_each(|v| f(v));
            }
        }
    }
}

/// The secrets with their ends of validity: `valid_until` is empty (no secret has one) or holds
/// one value per secret (null: none).
fn secrets_with(
    secrets: Vec<String>,
    valid_until: Vec<Option<i64>>,
) -> Result<Vec<webhook::WebhookSecret>> {
    if !valid_until.is_empty() && valid_until.len() != secrets.len() {
        return Err(ArgumentError::new(
            "valid_until",
            "must be empty or hold one value per secret",
        )
        .into());
    }
    let until = valid_until.into_iter().chain(std::iter::repeat(None));
    Ok(secrets
        .into_iter()
        .zip(until)
        .map(|(s, u)| webhook::WebhookSecret::new(s, u))
        .collect())
}

/// A verifier built once with its secrets (current first) and options; thread-safe. Verifying
/// through it costs one JNA crossing per delivery.
#[derive(uniffi::Object)]
pub struct WebhookVerifier(webhook::WebhookVerifier);

impl WebhookVerifier {
    fn receipt_with(
        &self,
        delivery: &[u8],
        namespace: &str,
        window: Option<Arc<DedupWindow>>,
        transactional: bool,
        claim_content_key: bool,
        inbox: bool,
    ) -> Result<Arc<machine::WebhookReceipt>> {
        let d = unpack_delivery(delivery)?;
        let verified = self
            .0
            .verify(d.headers.as_slice(), d.body, now_or_clock(d.now));
        machine::WebhookReceipt::new(
            namespace,
            verified,
            window.map(|w| (w, d.now)),
            transactional,
            claim_content_key,
            inbox,
        )
    }
}

#[uniffi::export]
impl WebhookVerifier {
    /// `toleranceSeconds` defaults to 300, `maxBodyBytes` to 262144 (the core's defaults).
    /// `validUntil`: empty, or per secret the last Unix second it verifies (null: no limit; the
    /// rotation's `previous_secret_valid_until` for the previous secret).
    #[uniffi::constructor(default(tolerance_seconds = None, max_body_bytes = None, valid_until = []))]
    pub fn new(
        secrets: Vec<String>,
        tolerance_seconds: Option<i64>,
        max_body_bytes: Option<i64>,
        valid_until: Vec<Option<i64>>,
    ) -> Result<Arc<Self>> {
        let opts = webhook::VerifyOptions::with_defaults(tolerance_seconds, max_body_bytes)?;
        let secrets = secrets_with(secrets, valid_until)?;
        Ok(Arc::new(Self(webhook::WebhookVerifier::new(
            &secrets, opts,
        )?)))
    }

    /// The largest body accepted, in bytes (hosts reading a request read at most one more).
    pub fn max_body_bytes(&self) -> i64 {
        i64::try_from(self.0.options().max_body_bytes()).unwrap_or(i64::MAX)
    }

    /// One delivery, packed as for `verify_packed`, as a `WebhookReceipt` machine under
    /// `namespace`: a rejected delivery's receipt replies at once. `transactional`: the keys are
    /// marked done inside the handler's database transaction (`machine::WebhookReceipt::transactional`).
    /// `claimContentKey`: also claim the content key (opt-in; the trade-off is `planReceipt`'s).
    /// `inbox`: a verified delivery is persisted in an inbox (`Enqueue`) and answered at once;
    /// the handler runs later in the inbox's worker (`machine::WebhookReceipt::inbox`).
    #[uniffi::method(default(transactional = false, claim_content_key = false, inbox = false))]
    pub fn receipt_packed(
        &self,
        delivery: Vec<u8>,
        namespace: String,
        transactional: bool,
        claim_content_key: bool,
        inbox: bool,
    ) -> Result<Arc<machine::WebhookReceipt>> {
        self.receipt_with(
            &delivery,
            &namespace,
            None,
            transactional,
            claim_content_key,
            inbox,
        )
    }

    /// As `receipt_packed`, on an in-process `window`: the receipt claims, releases and commits
    /// its keys there itself (at the delivery's `now`, else the clock at each step) and asks
    /// only for the handler, so a delivery crosses twice.
    #[uniffi::method(default(claim_content_key = false))]
    pub fn receipt_on_packed(
        &self,
        window: Arc<DedupWindow>,
        delivery: Vec<u8>,
        namespace: String,
        claim_content_key: bool,
    ) -> Result<Arc<machine::WebhookReceipt>> {
        self.receipt_with(
            &delivery,
            &namespace,
            Some(window),
            false,
            claim_content_key,
            false,
        )
    }

    /// Verifies a delivery packed into one buffer by the Kotlin layer's `verify(headers, body,
    /// now)` and `verifyMulti(...)` (RoyaltyKit.kt), which call this: one JNA argument instead
    /// of three, each of which costs a native allocation call. Layout in [`unpack_delivery`].
    pub fn verify_packed(&self, delivery: Vec<u8>) -> Result<VerifiedWebhook> {
        let d = unpack_delivery(&delivery)?;
        Ok(self
            .0
            .verify(d.headers.as_slice(), d.body, now_or_clock(d.now))?)
    }
}

/// A delivery as the Kotlin layer packs it.
struct PackedDelivery<'a> {
    now: Option<i64>,
    headers: Vec<(&'a str, &'a str)>,
    body: &'a [u8],
}

/// Reads a packed delivery, big-endian: one byte 1/0 (a `now` follows or not: system clock),
/// the i64 `now` when present, a u32 count of header values, per value a u32 length and the
/// UTF-8 name then a u32 length and the UTF-8 value (a name repeats for several values), then
/// the body to the end. Anything else is `invalid_argument`, never a panic.
fn unpack_delivery(buf: &[u8]) -> Result<PackedDelivery<'_>> {
    fn malformed(what: &str) -> Error {
        ArgumentError::new("delivery", format!("packed delivery is malformed: {what}")).into()
    }
    fn take(buf: &[u8], n: usize) -> Result<(&[u8], &[u8])> {
        buf.split_at_checked(n)
            .ok_or_else(|| malformed("truncated"))
    }
    fn u32_at(buf: &[u8]) -> Result<(usize, &[u8])> {
        let (n, rest) = take(buf, 4)?;
        let n = u32::from_be_bytes(n.try_into().map_err(|_| malformed("truncated"))?);
        Ok((n as usize, rest))
    }
    fn text(buf: &[u8]) -> Result<(&str, &[u8])> {
        let (len, rest) = u32_at(buf)?;
        let (bytes, rest) = take(rest, len)?;
        let s = std::str::from_utf8(bytes).map_err(|_| malformed("a header is not UTF-8"))?;
        Ok((s, rest))
    }
    let (flag, rest) = take(buf, 1)?;
    let (now, rest) = match flag {
        [0] => (None, rest),
        [1] => {
            let (n, rest) = take(rest, 8)?;
            let n = i64::from_be_bytes(n.try_into().map_err(|_| malformed("truncated"))?);
            (Some(n), rest)
        }
        _ => return Err(malformed("bad flag")),
    };
    let (count, mut rest) = u32_at(rest)?;
    // Each value takes at least 8 bytes, so the count is bounded by the buffer.
    if count > rest.len() / 8 {
        return Err(malformed("header count exceeds the buffer"));
    }
    let mut headers = Vec::with_capacity(count);
    for _ in 0..count {
        let (name, r) = text(rest)?;
        let (value, r) = text(r)?;
        headers.push((name, value));
        rest = r;
    }
    Ok(PackedDelivery {
        now,
        headers,
        body: rest,
    })
}

#[cfg(test)]
mod tests;

/// Verifies a delivery in one call (builds the keys each time; prefer `WebhookVerifier`).
/// `validUntil` as for `WebhookVerifier`.
#[uniffi::export(default(now = None, tolerance_seconds = None, max_body_bytes = None, valid_until = []))]
pub fn verify_webhook(
    headers: HashMap<String, Vec<String>>,
    body: Vec<u8>,
    secrets: Vec<String>,
    now: Option<i64>,
    tolerance_seconds: Option<i64>,
    max_body_bytes: Option<i64>,
    valid_until: Vec<Option<i64>>,
) -> Result<VerifiedWebhook> {
    let opts = webhook::VerifyOptions::with_defaults(tolerance_seconds, max_body_bytes)?;
    let secrets = secrets_with(secrets, valid_until)?;
    Ok(webhook::verify(
        &MultiMap(&headers),
        &body,
        &secrets,
        now_or_clock(now),
        opts,
    )?)
}

/// Signs a body as the service would: the three headers. `timestamp` defaults to the system
/// clock, `deliveryId` to a random UUID.
#[uniffi::export(default(timestamp = None, delivery_id = None))]
pub fn sign_webhook(
    secrets: Vec<String>,
    body: Vec<u8>,
    timestamp: Option<i64>,
    delivery_id: Option<String>,
) -> Result<HashMap<String, String>> {
    let id = delivery_id.unwrap_or_else(random_uuid);
    let h = webhook::sign(&secrets, &body, now_or_clock(timestamp), &id)?;
    Ok(h.pairs()
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect())
}

/// One secret of `activeWebhookSecrets`, carrying its expiry. An object, so that printing it
/// never shows the secret; Kotlin's `activeSecrets` (RoyaltyKit.kt) turns each into a
/// `WebhookSecret`.
#[derive(uniffi::Object)]
pub struct ActiveSecret(webhook::WebhookSecret);

#[uniffi::export]
impl ActiveSecret {
    /// The secret (hand it to nothing but a verifier or a signer).
    pub fn secret(&self) -> String {
        String::from_utf8_lossy(self.0.secret()).into_owned()
    }
    /// The last Unix second it verifies at; null: no limit.
    pub fn valid_until(&self) -> Option<i64> {
        self.0.valid_until()
    }
}

/// A subscription's reveal-once signing secret as the core read it from the raw 2xx body of a
/// create (`createEnterpriseWebhook`) or a rotation (`rotateEnterpriseWebhookSecret`). An object,
/// so that printing it never shows the secret; Kotlin's `revealedSecret(body)` (RoyaltyKit.kt)
/// gives it as a `RevealedSecret`.
#[derive(uniffi::Object)]
pub struct SubscriptionSecret(webhook::RevealedSecret);

#[uniffi::export]
impl SubscriptionSecret {
    /// The new signing secret (no expiry; hand it to nothing but a verifier, a signer or your
    /// secret store). The service shows it once.
    pub fn secret(&self) -> String {
        String::from_utf8_lossy(self.0.secret.secret()).into_owned()
    }
    /// A rotation's `previous_secret_valid_until`, Unix seconds: until then deliveries carry the
    /// previous secret's signature too. Null for a create.
    pub fn previous_valid_until(&self) -> Option<i64> {
        self.0.previous_valid_until
    }
    /// The subscription's reference, when the response names it.
    pub fn reference(&self) -> Option<String> {
        self.0.reference.clone()
    }
    /// The response as JSON text with every secret member removed: safe to log or store.
    pub fn record(&self) -> String {
        self.0.record.clone()
    }
    /// The secrets a receiver verifies with from now on, each carrying its expiry: the new one,
    /// then `previous` (the secret held until this rotation) until `previousValidUntil`, so a
    /// verifier built from them never accepts it after that second. The new one alone for a
    /// create, or without `previous`.
    #[uniffi::method(default(previous = None))]
    pub fn secrets(&self, previous: Option<String>) -> Vec<Arc<ActiveSecret>> {
        self.0
            .secrets(previous.as_deref())
            .into_iter()
            .map(|s| Arc::new(ActiveSecret(s)))
            .collect()
    }
}

/// The signing secret a subscription's create or rotation reveals, read from its raw 2xx `body`
/// (the core's `revealed_secret`). `RoyaltyKitException.Webhook` with code `secret_not_revealed`
/// for a body that is not a JSON object of at most 1 MiB, names no secret, or whose
/// `previous_secret_valid_until` is not a time; its message never contains the body. Kotlin:
/// `revealedSecret(body)` (RoyaltyKit.kt) gives it as a `RevealedSecret`.
#[uniffi::export]
pub fn subscription_secret(body: Vec<u8>) -> Result<Arc<SubscriptionSecret>> {
    Ok(Arc::new(SubscriptionSecret(webhook::revealed_secret(
        &body,
    )?)))
}

/// The secrets to verify with at `now` during a rotation (current first), each carrying its
/// expiry: the previous one keeps `previousValidUntil`. Kotlin: `activeSecrets` (RoyaltyKit.kt)
/// gives them as `WebhookSecret`s.
#[uniffi::export(default(previous = None, previous_valid_until = None, now = None))]
pub fn active_webhook_secrets(
    current: String,
    previous: Option<String>,
    previous_valid_until: Option<i64>,
    now: Option<i64>,
) -> Result<Vec<Arc<ActiveSecret>>> {
    let active = webhook::active_secrets(
        &current,
        previous.as_deref(),
        previous_valid_until,
        now_or_clock(now),
    )?;
    Ok(active
        .into_iter()
        .map(|s| Arc::new(ActiveSecret(s)))
        .collect())
}

/// A webhook secret's `validUntil` as Unix seconds, from exactly one of `seconds` (a finite
/// number, its fraction dropped) or `text` (ISO 8601, read by `parseTimestamp`). Anything else
/// (NaN, an infinity, unreadable text, neither or both) is `invalid_argument` naming the forms
/// accepted: a secret whose expiry was lost must never verify for good.
#[uniffi::export(default(seconds = None, text = None))]
pub fn webhook_secret_valid_until(seconds: Option<f64>, text: Option<String>) -> Result<i64> {
    const FORMS: &str = "must be Unix seconds (a Long, or a finite Double), a java.time.Instant, or an ISO 8601 text such as 2026-11-27T03:05:06Z";
    let refused = |got: String| -> Error {
        ArgumentError::new("valid_until", format!("{FORMS}; got {got}")).into()
    };
    match (seconds, text) {
        (Some(s), None) if s.is_finite() => Ok(royaltykit::seconds_from_f64("valid_until", s)?),
        (Some(s), None) => Err(refused(s.to_string())),
        (None, Some(t)) => royaltykit::parse_timestamp(&t)
            .ok_or_else(|| refused(format!("{:?}", t.chars().take(64).collect::<String>()))),
        _ => Err(refused("no value".to_owned())),
    }
}

/// An event's `resource.url` as the path to fetch, checked: the path itself when it lies under
/// the enterprise API (`/api/v1/…`; no scheme, authority, query, fragment, dot segment,
/// backslash, encoded slash, space or control character; at most 2048 bytes), else
/// `RoyaltyKitException.Webhook` with code `invalid_resource_url`. Request it on the enterprise
/// API's own base URL. Kotlin also has `event.resourcePath()`.
#[uniffi::export]
pub fn resource_path(url: String) -> Result<String> {
    Ok(webhook::resource_path(&url)?.to_owned())
}

/// A client's timeouts: each one given checked (seconds more than 0, at most a day), each one
/// not given the library's default (10 s to connect, 30 s to read). Otherwise
/// `RoyaltyKitException.InvalidArgument` naming `connect_timeout` or `read_timeout`.
#[uniffi::export(default(connect_seconds = None, read_seconds = None))]
pub fn client_timeouts(
    connect_seconds: Option<f64>,
    read_seconds: Option<f64>,
) -> Result<royaltykit::request::Timeouts> {
    Ok(royaltykit::request::client_timeouts(
        connect_seconds,
        read_seconds,
    )?)
}

/// The event key of an event: the same for an original and its replay (a hint for hosts that
/// collapse replays; receivers never claim it).
#[uniffi::export]
pub fn event_key(namespace: String, event: WebhookEvent) -> Result<String> {
    Ok(dedup::event_key(&namespace, &event)?)
}

/// A bounded in-memory dedup window; thread-safe.
#[derive(uniffi::Object)]
pub struct DedupWindow(Mutex<dedup::DedupWindow>);

impl DedupWindow {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, dedup::DedupWindow> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[uniffi::export]
impl DedupWindow {
    /// A window of `capacity` keys; `ttlSeconds` (how long a processed key is remembered)
    /// defaults to the service's whole redelivery schedule plus the tolerance, `leaseSeconds`
    /// (how long a claim holds) to 60.
    #[uniffi::constructor(default(ttl_seconds = None, lease_seconds = None))]
    pub fn new(
        capacity: i64,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Arc<Self>> {
        let w = dedup::DedupWindow::with_defaults(
            capacity,
            ttl_seconds,
            lease_seconds,
            random_seed()?,
        )?;
        Ok(Arc::new(Self(Mutex::new(w))))
    }

    /// Claims `key` before processing: `NEW` (process, then `commit` or `release`),
    /// `IN_PROGRESS` (answer 503) or `DONE` (answer 200, skip).
    #[uniffi::method(default(now = None))]
    pub fn claim(&self, key: String, now: Option<i64>) -> Result<dedup::ClaimState> {
        Ok(self.lock().claim(&key, now_or_clock(now))?)
    }

    /// Marks `key` processed: call once the effect is stored, before answering 2xx.
    #[uniffi::method(default(now = None))]
    pub fn commit(&self, key: String, now: Option<i64>) -> Result<()> {
        Ok(self.lock().commit(&key, now_or_clock(now))?)
    }

    /// Gives up a claim after processing failed (then answer 5xx); true when one was dropped.
    #[uniffi::method(default(now = None))]
    pub fn release(&self, key: String, now: Option<i64>) -> Result<bool> {
        Ok(self.lock().release(&key, now_or_clock(now))?)
    }

    /// One phase: true when `key` was not seen (records it as processed). Prefer `claim`.
    #[uniffi::method(default(now = None))]
    pub fn check_and_insert(&self, key: String, now: Option<i64>) -> Result<bool> {
        Ok(self.lock().check_and_insert(&key, now_or_clock(now))?)
    }

    /// Whether `key` was seen within the TTL, without recording it.
    #[uniffi::method(default(now = None))]
    pub fn contains(&self, key: String, now: Option<i64>) -> Result<bool> {
        Ok(self.lock().contains(&key, now_or_clock(now))?)
    }

    /// What is remembered of `key` at `now` (default: the clock), without claiming or recording
    /// it: `DONE` once committed (for the TTL), `IN_PROGRESS` while a claim's lease is live, `NEW`
    /// otherwise. Delivery recovery asks it.
    #[uniffi::method(default(now = None))]
    pub fn state(&self, key: String, now: Option<i64>) -> Result<dedup::ClaimState> {
        Ok(self.lock().state(&key, now_or_clock(now))?)
    }

    /// Number of keys remembered. (A signed `Long`, so that Java sees `size()`, not the
    /// mangled name Kotlin gives functions returning unsigned types.)
    pub fn size(&self) -> i64 {
        i64::try_from(self.lock().len()).unwrap_or(i64::MAX)
    }

    /// The capacity (a signed `Long`, callable from Java).
    pub fn capacity(&self) -> i64 {
        i64::try_from(self.lock().capacity()).unwrap_or(i64::MAX)
    }
}

/// The three delivery header names.
#[uniffi::export]
pub fn header_names() -> Vec<String> {
    webhook::HEADER_NAMES
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// Test-only hooks, compiled only with the `test-hooks` feature (never in the shipped jar).
#[cfg(feature = "test-hooks")]
mod test_hooks {
    /// Panics: lets the test suite prove that a Rust panic reaches the JVM as an exception
    /// (uniffi's `InternalException`) rather than crashing it.
    #[uniffi::export]
    pub fn panic_for_tests() {
        panic!("royaltykit: deliberate panic for tests");
    }

    /// Does nothing: one call through uniffi + JNA with no arguments, the floor `make bench`
    /// reports beside `WebhookVerifier.verify`.
    #[uniffi::export]
    pub fn ffi_floor() {}

    /// Takes a byte array and returns its length: the cost of one buffer across uniffi + JNA.
    #[uniffi::export]
    pub fn ffi_floor_with_bytes(bytes: Vec<u8>) -> u64 {
        bytes.len() as u64
    }
}
