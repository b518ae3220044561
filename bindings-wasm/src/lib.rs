//! wasm-bindgen layer of royaltykit: conversions only. `js/index.js` adds the idiomatic JS API
//! (header shapes, default clock and RNG, error classes) on top of these exports.
#![forbid(unsafe_code)]

use js_sys::{Array, Object, Reflect};
use royaltykit::{dedup, integer_from_f64, seconds_from_f64, webhook, ArgumentError};
use wasm_bindgen::prelude::*;

mod api;
mod export;
mod retry;

/// Headers as a flat JS array `[name0, value0, name1, value1, ...]` of strings.
pub(crate) struct FlatHeaders(pub(crate) Vec<String>);

impl webhook::HeaderMap for FlatHeaders {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        for pair in self.0.chunks_exact(2) {
            if let [n, v] = pair {
                if n.eq_ignore_ascii_case(name) {
                    f(v);
                }
            }
        }
    }
}

pub(crate) fn set(obj: &Object, key: &str, value: JsValue) {
    // Reflect::set on a fresh plain object cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value);
}

/// An error as a plain object `{kind, code, message, ...details}`; the JS layer turns it into
/// the matching `RoyaltyKitError` subclass.
fn webhook_error(e: &webhook::WebhookError) -> JsValue {
    if let webhook::WebhookError::InvalidArgument(a) = e {
        return argument_error(a);
    }
    let o = Object::new();
    set(&o, "kind", "webhook".into());
    set(&o, "code", e.code().into());
    set(&o, "message", e.to_string().into());
    if let Some(h) = e.header() {
        set(&o, "header", h.into());
    }
    if let Some(s) = e.skew_seconds() {
        set(&o, "skewSeconds", JsValue::from_f64(s as f64));
    }
    if let Some(l) = e.limit() {
        set(&o, "limit", JsValue::from_f64(l as f64));
    }
    o.into()
}

pub(crate) fn argument_error(e: &ArgumentError) -> JsValue {
    let o = Object::new();
    set(&o, "kind", "argument".into());
    set(&o, "code", e.code().into());
    set(&o, "message", e.to_string().into());
    set(&o, "argument", e.name.into());
    o.into()
}

/// The verified delivery as JSON text: one string crossing, parsed by the JS layer, which is
/// several times cheaper than setting each member across the boundary.
fn verified(v: webhook::VerifiedWebhook) -> String {
    // Serializing strings, numbers and booleans cannot fail.
    serde_json::to_string(&v).unwrap_or_default()
}

fn options(tolerance: f64, max_body_bytes: f64) -> Result<webhook::VerifyOptions, JsValue> {
    let t = integer_from_f64("tolerance_seconds", tolerance).map_err(|e| argument_error(&e))?;
    let m = integer_from_f64("max_body_bytes", max_body_bytes).map_err(|e| argument_error(&e))?;
    webhook::VerifyOptions::new(t, m).map_err(|e| argument_error(&e))
}

pub(crate) fn now_arg(now: f64) -> Result<i64, JsValue> {
    seconds_from_f64("now", now).map_err(|e| argument_error(&e))
}

/// The three delivery header names, canonical spelling.
#[wasm_bindgen(js_name = headerNames)]
pub fn header_names() -> Array {
    webhook::HEADER_NAMES
        .iter()
        .map(|n| JsValue::from_str(n))
        .collect()
}

/// The defaults: `[toleranceSeconds, maxBodyBytes]`.
#[wasm_bindgen(js_name = verifyDefaults)]
pub fn verify_defaults() -> Array {
    let d = webhook::VerifyOptions::default();
    [d.tolerance_seconds() as f64, d.max_body_bytes() as f64]
        .iter()
        .map(|n| JsValue::from_f64(*n))
        .collect()
}

/// `webhook::verify` with flat headers.
#[wasm_bindgen(js_name = verifyWebhook)]
pub fn verify_webhook(
    headers: Vec<String>,
    body: &[u8],
    secrets: Vec<String>,
    now: f64,
    tolerance: f64,
    max_body_bytes: f64,
) -> Result<String, JsValue> {
    let opts = options(tolerance, max_body_bytes)?;
    let now = now_arg(now)?;
    webhook::verify(&FlatHeaders(headers), body, &secrets, now, opts)
        .map(verified)
        .map_err(|e| webhook_error(&e))
}

/// The HMAC primitive of the JS host: `mac(secretIndex, timestamp)` returns the 32-byte
/// HMAC-SHA256 of `<timestamp>.<body>` under that secret (the JS layer holds the body and the
/// keys; node:crypto uses the CPU's SHA extensions, which wasm cannot). A throw or a value that
/// is not 32 bytes counts as "no MAC" (fails closed); the first throw is rethrown to the caller.
struct HostMac<'f> {
    function: &'f js_sys::Function,
    thrown: Option<JsValue>,
}

impl webhook::SignatureMac for HostMac<'_> {
    fn mac(&mut self, secret_index: usize, timestamp: &str, _body: &[u8]) -> Option<[u8; 32]> {
        let index = JsValue::from_f64(secret_index as f64);
        match self
            .function
            .call2(&JsValue::NULL, &index, &JsValue::from_str(timestamp))
        {
            Ok(v) => {
                let bytes = v.dyn_into::<js_sys::Uint8Array>().ok()?;
                let mut out = [0u8; 32];
                (bytes.length() == 32).then(|| bytes.copy_to(&mut out))?;
                Some(out)
            }
            Err(e) => {
                self.thrown.get_or_insert(e);
                None
            }
        }
    }
}

fn with_host_mac(
    function: &js_sys::Function,
    verify: impl FnOnce(&mut HostMac<'_>) -> Result<webhook::VerifiedWebhook, webhook::WebhookError>,
) -> Result<String, JsValue> {
    let mut mac = HostMac {
        function,
        thrown: None,
    };
    let result = verify(&mut mac);
    if let Some(e) = mac.thrown {
        return Err(e);
    }
    result.map(verified).map_err(|e| webhook_error(&e))
}

/// `webhook::verify_with_mac` with flat headers and the host's HMAC (see `HostMac`).
#[wasm_bindgen(js_name = verifyWebhookWithMac)]
pub fn verify_webhook_with_mac(
    headers: Vec<String>,
    body: &[u8],
    secrets: Vec<String>,
    now: f64,
    tolerance: f64,
    max_body_bytes: f64,
    mac: &js_sys::Function,
) -> Result<String, JsValue> {
    let opts = options(tolerance, max_body_bytes)?;
    let now = now_arg(now)?;
    with_host_mac(mac, |m| {
        webhook::verify_with_mac(&FlatHeaders(headers), body, &secrets, now, opts, m)
    })
}

/// A verifier holding its secrets; reuse it for every delivery.
#[wasm_bindgen]
pub struct WebhookVerifier(webhook::WebhookVerifier);

#[wasm_bindgen]
impl WebhookVerifier {
    /// `webhook::WebhookVerifier::new`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        secrets: Vec<String>,
        tolerance: f64,
        max_body_bytes: f64,
    ) -> Result<WebhookVerifier, JsValue> {
        let opts = options(tolerance, max_body_bytes)?;
        webhook::WebhookVerifier::new(&secrets, opts)
            .map(WebhookVerifier)
            .map_err(|e| webhook_error(&e))
    }

    /// `webhook::WebhookVerifier::verify` with flat headers.
    pub fn verify(&self, headers: Vec<String>, body: &[u8], now: f64) -> Result<String, JsValue> {
        let now = now_arg(now)?;
        self.0
            .verify(&FlatHeaders(headers), body, now)
            .map(verified)
            .map_err(|e| webhook_error(&e))
    }

    /// `webhook::WebhookVerifier::verify_with_mac` with flat headers and the host's HMAC.
    #[wasm_bindgen(js_name = verifyWithMac)]
    pub fn verify_with_mac(
        &self,
        headers: Vec<String>,
        body: &[u8],
        now: f64,
        mac: &js_sys::Function,
    ) -> Result<String, JsValue> {
        let now = now_arg(now)?;
        with_host_mac(mac, |m| {
            self.0.verify_with_mac(&FlatHeaders(headers), body, now, m)
        })
    }
}

/// `webhook::sign`; returns `[id, timestamp, signature]` header values.
#[wasm_bindgen(js_name = signWebhook)]
pub fn sign_webhook(
    secrets: Vec<String>,
    body: &[u8],
    timestamp: f64,
    delivery_id: &str,
) -> Result<Array, JsValue> {
    let ts = integer_from_f64("timestamp", timestamp).map_err(|e| argument_error(&e))?;
    let h = webhook::sign(&secrets, body, ts, delivery_id).map_err(|e| webhook_error(&e))?;
    Ok([h.id, h.timestamp, h.signature]
        .into_iter()
        .map(JsValue::from)
        .collect())
}

/// `webhook::active_secrets`.
#[wasm_bindgen(js_name = activeSecrets)]
pub fn active_secrets(
    current: &str,
    previous: Option<String>,
    previous_valid_until: Option<f64>,
    now: f64,
) -> Result<Array, JsValue> {
    let until = previous_valid_until
        .map(|u| seconds_from_f64("previous_valid_until", u))
        .transpose()
        .map_err(|e| argument_error(&e))?;
    webhook::active_secrets(current, previous.as_deref(), until, now_arg(now)?)
        .map(|v| v.into_iter().map(JsValue::from_str).collect())
        .map_err(|e| argument_error(&e))
}

/// `dedup::delivery_key`.
#[wasm_bindgen(js_name = deliveryKey)]
pub fn delivery_key(namespace: &str, delivery_id: &str) -> Result<String, JsValue> {
    dedup::delivery_key(namespace, delivery_id).map_err(|e| argument_error(&e))
}

/// `dedup::event_key_parts`.
#[wasm_bindgen(js_name = eventKey)]
pub fn event_key(
    namespace: &str,
    name: &str,
    resource_type: &str,
    resource_reference: &str,
    occurred_at: &str,
) -> Result<String, JsValue> {
    dedup::event_key_parts(
        namespace,
        name,
        resource_type,
        resource_reference,
        occurred_at,
    )
    .map_err(|e| argument_error(&e))
}

/// `dedup::content_key`.
#[wasm_bindgen(js_name = contentKey)]
pub fn content_key(secret: &str, timestamp: &str, body: &[u8]) -> Result<String, JsValue> {
    dedup::content_key(secret, timestamp, body).map_err(|e| webhook_error(&e))
}

/// `dedup::idempotency_key`.
#[wasm_bindgen(js_name = idempotencyKey)]
pub fn idempotency_key(tenant: &str, operation_id: &str, body: &[u8]) -> Result<String, JsValue> {
    dedup::idempotency_key(tenant, operation_id, body).map_err(|e| argument_error(&e))
}

/// `dedup::DedupWindow`, seeded by the JS layer from `crypto.getRandomValues`.
#[wasm_bindgen]
pub struct DedupWindow(dedup::DedupWindow);

#[wasm_bindgen]
impl DedupWindow {
    /// `dedup::DedupWindow::new`; `seed` must be 16 bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(capacity: f64, ttl_seconds: f64, seed: &[u8]) -> Result<DedupWindow, JsValue> {
        let seed: [u8; 16] = seed
            .try_into()
            .map_err(|_| argument_error(&ArgumentError::new("seed", "must be 16 bytes")))?;
        let c = integer_from_f64("capacity", capacity).map_err(|e| argument_error(&e))?;
        let t = integer_from_f64("ttl_seconds", ttl_seconds).map_err(|e| argument_error(&e))?;
        dedup::DedupWindow::new(c, t, seed)
            .map(DedupWindow)
            .map_err(|e| argument_error(&e))
    }

    /// `dedup::DedupWindow::check_and_insert`.
    #[wasm_bindgen(js_name = checkAndInsert)]
    pub fn check_and_insert(&mut self, key: &str, now: f64) -> Result<bool, JsValue> {
        let now = now_arg(now)?;
        self.0
            .check_and_insert(key, now)
            .map_err(|e| argument_error(&e))
    }

    /// `dedup::DedupWindow::contains`.
    pub fn contains(&self, key: &str, now: f64) -> Result<bool, JsValue> {
        let now = now_arg(now)?;
        self.0.contains(key, now).map_err(|e| argument_error(&e))
    }

    /// Number of keys remembered.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.0.len() as f64
    }

    /// The capacity.
    #[wasm_bindgen(getter)]
    pub fn capacity(&self) -> f64 {
        self.0.capacity() as f64
    }
}

/// The size of this module's linear memory in bytes, for `make bench` (`DedupWindow` bytes per
/// entry). Not part of the API.
#[wasm_bindgen(js_name = __wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    let pages = core::arch::wasm32::memory_size::<0>();
    #[cfg(not(target_arch = "wasm32"))]
    let pages = 0usize;
    (pages * 65_536) as f64
}

/// Panics: lets the test suite prove what a panic does to the module. Not part of the API.
#[wasm_bindgen(js_name = __panicForTests)]
pub fn panic_for_tests() {
    panic!("royaltykit: deliberate panic for tests");
}
