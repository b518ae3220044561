//! wasm-bindgen layer of royaltykit: conversions only. `js/index.js` adds the idiomatic JS API
//! (header shapes, default clock and RNG, the error-class table) on top of these exports.
//!
//! Results cross as JSON text of the core's own records (camelCase; their TypeScript
//! declarations are generated from the same types by tsify), which is several times cheaper than
//! setting members one by one. Errors cross as JSON text of the core's one public error. The
//! verification hot path (`WebhookVerifier::verify`) crosses cheaper still: the headers as one
//! string, the record as NUL-led fields (`verified_text`), checked against the JSON in `make test`.
#![forbid(unsafe_code)]
// The core's error is converted by value on the cold error path.
#![allow(clippy::result_large_err)]

use royaltykit::{dedup, integer_from_f64, seconds_from_f64, webhook, ArgumentError};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

mod api;
mod export;
mod generated;
mod machine;
mod receiver;
mod retry;

pub(crate) type R<T> = Result<T, JsValue>;

/// The core's one public error as JSON text; the JS layer maps its family to a class.
pub(crate) fn err(e: impl Into<royaltykit::Error>) -> JsValue {
    JsValue::from_str(&serde_json::to_string(&e.into()).unwrap_or_default())
}

/// A result as JSON text. Serializing the core's records (strings, numbers, booleans, lists and
/// maps of them) cannot fail.
pub(crate) fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A host number that must be whole.
pub(crate) fn int(name: &'static str, value: f64) -> R<i64> {
    integer_from_f64(name, value).map_err(err)
}

/// An optional host number that must be whole.
pub(crate) fn opt_int(name: &'static str, value: Option<f64>) -> R<Option<i64>> {
    value.map(|v| int(name, v)).transpose()
}

/// The host's `now` (Unix seconds, fractions dropped).
pub(crate) fn now_arg(now: f64) -> R<i64> {
    seconds_from_f64("now", now).map_err(err)
}

/// A string enum by its wire name.
pub(crate) fn parse<T>(parse: fn(&str) -> Result<T, ArgumentError>, value: &str) -> R<T> {
    parse(value).map_err(err)
}

/// Headers as a flat JS array `[name0, value0, name1, value1, ...]` of strings.
pub(crate) struct FlatHeaders(pub(crate) Vec<String>);

impl webhook::HeaderMap for FlatHeaders {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        each_value(self.0.iter().map(String::as_str), name, f);
    }
}

/// Items of the joined hot-path headers split once, up front: the JS layer sends only the three
/// webhook headers, so a handful of pairs (the core's three lookups then read the split items
/// instead of scanning the string three times). More items than this are split per lookup.
const HOT_ITEMS: usize = 12;

/// The headers of the verification hot path: the JS layer's flat `[name0, value0, ...]` joined
/// by NUL into one string (one string crossing instead of one per item), or, when a name or
/// value holds a NUL (the pairs could not be told apart in the joined form), the array itself.
pub(crate) enum HotHeaders<'a> {
    /// The joined string's items, split once (at most [`HOT_ITEMS`]; `len` of them used).
    Split {
        items: [&'a str; HOT_ITEMS],
        len: usize,
    },
    /// The joined string, when it has more items than that.
    Joined(&'a str),
    Flat(FlatHeaders),
}

impl<'a> HotHeaders<'a> {
    fn new(joined: &'a str, flat: Option<Vec<String>>) -> Self {
        if let Some(f) = flat {
            return Self::Flat(FlatHeaders(f));
        }
        let mut items = [""; HOT_ITEMS];
        let mut len = 0;
        for item in joined.split('\0') {
            match items.get_mut(len) {
                Some(slot) => *slot = item,
                None => return Self::Joined(joined),
            }
            len += 1;
        }
        Self::Split { items, len }
    }
}

/// Each value of `name` among `[name, value, ...]` items; an odd last item (a name without a
/// value) is ignored.
fn each_value<'a, I: Iterator<Item = &'a str>>(
    mut items: I,
    name: &str,
    f: &mut dyn FnMut(&'a str),
) {
    while let (Some(n), Some(v)) = (items.next(), items.next()) {
        if n.eq_ignore_ascii_case(name) {
            f(v);
        }
    }
}

impl webhook::HeaderMap for HotHeaders<'_> {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        match self {
            Self::Flat(flat) => flat.for_each_value(name, f),
            Self::Split { items, len } => each_value(items.iter().take(*len).copied(), name, f),
            Self::Joined(joined) => each_value(joined.split('\0'), name, f),
        }
    }
}

/// A verified delivery for the JS layer's `verifiedFrom` (lib.cjs): its fields in declaration
/// order, each preceded by a NUL (`String.split` and a fixed object literal are several times
/// cheaper in V8 than `JSON.parse` of the same record); the three flags as `0`/`1` (is_known,
/// is_test, replay_of present), an absent `occurred_at` empty. JSON text (starting with `{`)
/// when any string holds a NUL itself.
pub(crate) fn verified_text(v: &webhook::VerifiedWebhook) -> String {
    let e = &v.event;
    let flag = |b: bool| if b { "1" } else { "0" };
    let occurred_at = e.occurred_at.map(|t| t.to_string()).unwrap_or_default();
    let parts: [&str; 14] = [
        &v.delivery_id,
        &v.timestamp.to_string(),
        &v.secret_index.to_string(),
        &v.content_key,
        e.name.as_str(),
        flag(e.is_known),
        flag(e.is_test),
        flag(e.replay_of.is_some()),
        &e.resource_type,
        &e.resource_reference,
        &e.resource_url,
        &occurred_at,
        &e.occurred_at_text,
        e.replay_of.as_deref().unwrap_or(""),
    ];
    if parts.iter().any(|p| p.contains('\0')) {
        return json(v);
    }
    let mut out = String::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for p in parts {
        out.push('\0');
        out.push_str(p);
    }
    out
}

fn options(tolerance: Option<f64>, max_body_bytes: Option<f64>) -> R<webhook::VerifyOptions> {
    let tolerance = opt_int("tolerance_seconds", tolerance)?;
    let max_body_bytes = opt_int("max_body_bytes", max_body_bytes)?;
    webhook::VerifyOptions::with_defaults(tolerance, max_body_bytes).map_err(err)
}

/// The default body limit of a verification, in bytes (`royaltykit/fetch` reads at most one
/// byte more before the core refuses the body).
#[wasm_bindgen(js_name = defaultMaxBodyBytes)]
pub fn default_max_body_bytes() -> f64 {
    webhook::DEFAULT_MAX_BODY_BYTES as f64
}

/// The three delivery header names, canonical spelling.
#[wasm_bindgen(js_name = headerNames)]
pub fn header_names() -> Vec<String> {
    webhook::HEADER_NAMES
        .iter()
        .map(|n| (*n).to_owned())
        .collect()
}

/// The secrets with their ends of validity: `valid_until` (absent: none has one) holds one
/// value per secret, NaN for a secret without one. The JS layer only ever sends NaN for a
/// secret given without a `validUntil`: what the user gave went through [`valid_until`] first,
/// which refuses NaN, infinities and unreadable values, so an expiry is never taken for none.
fn secrets_with(
    secrets: Vec<String>,
    valid_until: Option<Vec<f64>>,
) -> R<Vec<webhook::WebhookSecret>> {
    let until = valid_until.unwrap_or_else(|| vec![f64::NAN; secrets.len()]);
    if until.len() != secrets.len() {
        return Err(err(royaltykit::ArgumentError::new(
            "valid_until",
            "must hold one value per secret",
        )));
    }
    secrets
        .into_iter()
        .zip(until)
        .map(|(s, u)| {
            let u = if u.is_nan() {
                None
            } else {
                Some(seconds_from_f64("validUntil", u).map_err(err)?)
            };
            Ok(webhook::WebhookSecret::new(s, u))
        })
        .collect()
}

/// `webhook::verify` with flat headers; absent options are the core's defaults.
#[wasm_bindgen(js_name = verifyWebhook)]
pub fn verify_webhook(
    headers: Vec<String>,
    body: &[u8],
    secrets: Vec<String>,
    now: f64,
    tolerance: Option<f64>,
    max_body_bytes: Option<f64>,
    valid_until: Option<Vec<f64>>,
) -> R<String> {
    let opts = options(tolerance, max_body_bytes)?;
    let secrets = secrets_with(secrets, valid_until)?;
    let v = webhook::verify(&FlatHeaders(headers), body, &secrets, now_arg(now)?, opts);
    v.map(|v| json(&v)).map_err(err)
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

/// The verification's own result, or the host MAC's first throw.
fn verified_with_host_mac(
    function: &js_sys::Function,
    verify: impl FnOnce(&mut HostMac<'_>) -> Result<webhook::VerifiedWebhook, webhook::WebhookError>,
) -> R<Result<webhook::VerifiedWebhook, webhook::WebhookError>> {
    let mut mac = HostMac {
        function,
        thrown: None,
    };
    let result = verify(&mut mac);
    match mac.thrown {
        Some(e) => Err(e),
        None => Ok(result),
    }
}

/// A verifier holding its secrets; reuse it for every delivery.
#[wasm_bindgen]
pub struct WebhookVerifier(webhook::WebhookVerifier);

impl WebhookVerifier {
    /// One delivery verified (with the host's HMAC when `mac` is given) as a receipt, on a
    /// window (and its fixed clock) when given.
    #[allow(clippy::too_many_arguments)] // the JS arguments, forwarded one by one
    fn receipt_with(
        &self,
        headers: HotHeaders<'_>,
        body: &[u8],
        now: Option<f64>,
        namespace: &str,
        mac: Option<js_sys::Function>,
        window: Option<machine::Window>,
        transactional: bool,
        claim_content_key: bool,
        inbox: bool,
    ) -> R<machine::WebhookReceipt> {
        let now = now.map_or_else(|| Ok(machine::clock()), now_arg)?;
        let verified = match mac {
            Some(f) => {
                verified_with_host_mac(&f, |m| self.0.verify_with_mac(&headers, body, now, m))?
            }
            None => self.0.verify(&headers, body, now),
        };
        machine::WebhookReceipt::new(
            namespace,
            verified,
            window,
            transactional,
            claim_content_key,
            inbox,
        )
    }
}

#[wasm_bindgen]
impl WebhookVerifier {
    /// `webhook::WebhookVerifier::new`; absent options are the core's defaults.
    #[wasm_bindgen(constructor)]
    pub fn new(
        secrets: Vec<String>,
        tolerance: Option<f64>,
        max_body_bytes: Option<f64>,
        valid_until: Option<Vec<f64>>,
    ) -> R<WebhookVerifier> {
        let opts = options(tolerance, max_body_bytes)?;
        let secrets = secrets_with(secrets, valid_until)?;
        let verifier = webhook::WebhookVerifier::new(&secrets, opts).map_err(err)?;
        Ok(WebhookVerifier(verifier))
    }

    /// `webhook::WebhookVerifier::verify` with the hot path's headers (`HotHeaders`: `joined`,
    /// else `flat` when given); the result as `verified_text`.
    pub fn verify(
        &self,
        joined: &str,
        flat: Option<Vec<String>>,
        body: &[u8],
        now: f64,
    ) -> R<String> {
        let headers = HotHeaders::new(joined, flat);
        let v = self.0.verify(&headers, body, now_arg(now)?);
        v.map(|v| verified_text(&v)).map_err(err)
    }

    /// One delivery as a `machine::WebhookReceipt` under `namespace` (the host's HMAC when `mac` is
    /// given): a rejected delivery's receipt replies at once. `transactional`: the keys are
    /// marked done inside the handler's database transaction (`machine::WebhookReceipt::transactional`).
    /// `claim_content_key`: the content key is claimed after the delivery key (the core's
    /// opt-in, `receiver::plan_receipt`). `inbox`: the verified delivery is persisted in an
    /// inbox (`Enqueue`) and answered at once (`machine::WebhookReceipt::inbox`).
    /// The headers are the hot path's (`HotHeaders`: `joined`, else `flat` when given).
    #[allow(clippy::too_many_arguments)] // the JS arguments, forwarded one by one
    pub fn receipt(
        &self,
        joined: &str,
        flat: Option<Vec<String>>,
        body: &[u8],
        now: f64,
        namespace: &str,
        mac: Option<js_sys::Function>,
        transactional: bool,
        claim_content_key: bool,
        inbox: bool,
    ) -> R<machine::WebhookReceipt> {
        self.receipt_with(
            HotHeaders::new(joined, flat),
            body,
            Some(now),
            namespace,
            mac,
            None,
            transactional,
            claim_content_key,
            inbox,
        )
    }

    /// As `receipt`, on an in-process `window`: the receipt claims, releases and commits its
    /// keys there itself (at `now`, else the clock at each step) and asks only for the handler.
    #[wasm_bindgen(js_name = receiptOn)]
    #[allow(clippy::too_many_arguments)] // the JS arguments, forwarded one by one
    pub fn receipt_on(
        &self,
        window: &DedupWindow,
        joined: &str,
        flat: Option<Vec<String>>,
        body: &[u8],
        now: Option<f64>,
        namespace: &str,
        mac: Option<js_sys::Function>,
        claim_content_key: bool,
    ) -> R<machine::WebhookReceipt> {
        let fixed = now.map(now_arg).transpose()?;
        let on = Some((Rc::clone(&window.0), fixed));
        self.receipt_with(
            HotHeaders::new(joined, flat),
            body,
            now,
            namespace,
            mac,
            on,
            false,
            claim_content_key,
            false,
        )
    }

    /// `webhook::WebhookVerifier::verify_with_mac` with the hot path's headers and the host's
    /// HMAC; the result as `verified_text`.
    #[wasm_bindgen(js_name = verifyWithMac)]
    pub fn verify_with_mac(
        &self,
        joined: &str,
        flat: Option<Vec<String>>,
        body: &[u8],
        now: f64,
        mac: &js_sys::Function,
    ) -> R<String> {
        let headers = HotHeaders::new(joined, flat);
        let now = now_arg(now)?;
        verified_with_host_mac(mac, |m| self.0.verify_with_mac(&headers, body, now, m))?
            .map(|v| verified_text(&v))
            .map_err(err)
    }
}

/// `webhook::sign`: the three headers as a JSON object keyed by header name.
#[wasm_bindgen(js_name = signWebhook)]
pub fn sign_webhook(
    secrets: Vec<String>,
    body: &[u8],
    timestamp: f64,
    delivery_id: &str,
) -> R<String> {
    let signed = webhook::sign(&secrets, body, int("timestamp", timestamp)?, delivery_id);
    signed.map(|h| json(&h)).map_err(err)
}

/// `webhook::active_secrets`: the secrets, each with its expiry, as JSON
/// `[{"secret", "validUntil"}]` (for the JS class that hides the secret when printed).
/// `previous_valid_until` went through [`valid_until`] in the JS layer.
#[wasm_bindgen(js_name = activeSecrets)]
pub fn active_secrets(
    current: &str,
    previous: Option<String>,
    previous_valid_until: Option<f64>,
    now: f64,
) -> R<String> {
    let until = previous_valid_until
        .map(|u| seconds_from_f64("previousValidUntil", u))
        .transpose()
        .map_err(err)?;
    let active = webhook::active_secrets(current, previous.as_deref(), until, now_arg(now)?);
    Ok(secrets_json(&active.map_err(err)?))
}

/// Secrets as JSON `[{"secret", "validUntil"}]`, for the JS `WebhookSecret` class (which hides
/// the secret when printed).
fn secrets_json(secrets: &[webhook::WebhookSecret]) -> String {
    let list: Vec<serde_json::Value> = secrets
        .iter()
        .map(|s| {
            serde_json::json!({
                "secret": String::from_utf8_lossy(s.secret()),
                "validUntil": s.valid_until(),
            })
        })
        .collect();
    json(&list)
}

/// `webhook::revealed_secret`: the reveal-once signing secret of a subscription's create or
/// rotation response (the raw 2xx body) as JSON `{"secret", "previousValidUntil", "reference",
/// "record"}`, for the JS `RevealedSecret` class, which hides the secret when printed. Else
/// `secret_not_revealed`, whose message never contains the body.
#[wasm_bindgen(js_name = revealedSecret)]
pub fn revealed_secret(body: &[u8]) -> R<String> {
    let r = webhook::revealed_secret(body).map_err(err)?;
    Ok(json(&serde_json::json!({
        "secret": String::from_utf8_lossy(r.secret.secret()),
        "previousValidUntil": r.previous_valid_until,
        "reference": r.reference,
        "record": r.record,
    })))
}

/// `webhook::RevealedSecret::secrets` of a revealed `secret` and its `previous_valid_until`
/// (as [`revealed_secret`] gave them): the secrets a receiver verifies with from now on, as
/// JSON `[{"secret", "validUntil"}]` — the new one, then `previous` (the secret held before the
/// rotation) until `previous_valid_until` when both are given.
#[wasm_bindgen(js_name = revealedSecrets)]
pub fn revealed_secrets(
    secret: &str,
    previous_valid_until: Option<f64>,
    previous: Option<String>,
) -> R<String> {
    let revealed = webhook::RevealedSecret {
        secret: webhook::WebhookSecret::new(secret, None),
        previous_valid_until: opt_int("previous_valid_until", previous_valid_until)?,
        reference: None,
        record: String::new(),
    };
    Ok(secrets_json(&revealed.secrets(previous.as_deref())))
}

/// The end of a secret's validity as the JS layer takes it (`name`: `validUntil` or
/// `previousValidUntil`): Unix seconds (a finite number), a `Date`, or a text the core's
/// [`royaltykit::parse_timestamp`] reads (ISO 8601, as `previous_secret_valid_until` comes);
/// `undefined` or `null`: no limit. Anything else — NaN, an infinity, an invalid `Date`, an
/// unreadable text, another type — is `invalid_argument` saying which forms are accepted, so an
/// expiry is never silently lost.
#[wasm_bindgen(js_name = validUntil)]
pub fn valid_until(value: JsValue, name: &str) -> R<Option<f64>> {
    let name = if name == "previousValidUntil" {
        "previousValidUntil"
    } else {
        "validUntil"
    };
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let refuse = |got: String| {
        err(ArgumentError::new(
            name,
            format!("must be Unix seconds (a finite number), a valid Date, or an ISO 8601 timestamp text such as 2026-11-22T03:05:06Z; got {got} (an expiry is never taken for none: leave it out or pass null for a secret without one)"),
        ))
    };
    let seconds = if let Some(n) = value.as_f64() {
        if !n.is_finite() {
            let shown = if n.is_nan() {
                "NaN"
            } else if n > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            };
            return Err(refuse(shown.to_owned()));
        }
        n
    } else if let Some(date) = value.dyn_ref::<js_sys::Date>() {
        let ms = date.get_time();
        if !ms.is_finite() {
            return Err(refuse("an invalid Date".to_owned()));
        }
        ms / 1000.0
    } else if let Some(text) = value.as_string() {
        match royaltykit::parse_timestamp(&text) {
            Some(t) => t as f64,
            None => {
                let shown: String = text.chars().take(40).collect();
                return Err(refuse(format!("the text {shown:?}")));
            }
        }
    } else {
        let kind = value.js_typeof().as_string().unwrap_or_default();
        return Err(refuse(format!("a {kind}")));
    };
    seconds_from_f64(name, seconds)
        .map(|s| Some(s as f64))
        .map_err(err)
}

/// `webhook::resource_path`: the event's `resource.url` when it is a path under the enterprise
/// API, else `invalid_resource_url`.
#[wasm_bindgen(js_name = resourcePath)]
pub fn resource_path(url: &str) -> R<String> {
    webhook::resource_path(url).map(str::to_owned).map_err(err)
}

/// `request::client_timeouts`: `[connectSeconds, readSeconds]`, each given one checked, each
/// missing one the core's default; else `invalid_argument` (`connect_timeout`, `read_timeout`).
#[wasm_bindgen(js_name = clientTimeouts)]
pub fn client_timeouts(connect_seconds: Option<f64>, read_seconds: Option<f64>) -> R<Vec<f64>> {
    royaltykit::request::client_timeouts(connect_seconds, read_seconds)
        .map(|t| vec![t.connect_seconds, t.read_seconds])
        .map_err(err)
}

/// `dedup::event_key_parts`.
#[wasm_bindgen(js_name = eventKey)]
pub fn event_key(
    namespace: &str,
    name: &str,
    resource_type: &str,
    resource_reference: &str,
    occurred_at: &str,
) -> R<String> {
    dedup::event_key_parts(
        namespace,
        name,
        resource_type,
        resource_reference,
        occurred_at,
    )
    .map_err(err)
}

/// `dedup::DedupWindow`, seeded by the JS layer from `crypto.getRandomValues`. Shared with the
/// receipts received on it (`WebhookVerifier.receiptOn`), which claim and commit there.
#[wasm_bindgen]
pub struct DedupWindow(pub(crate) Rc<RefCell<dedup::DedupWindow>>);

impl DedupWindow {
    fn window(&self) -> R<std::cell::RefMut<'_, dedup::DedupWindow>> {
        // JS runs one call at a time and nothing here calls back into JS, so the window is
        // never borrowed twice; were it, the caller gets an error rather than a panic.
        self.0
            .try_borrow_mut()
            .map_err(|_| err(ArgumentError::new("window", "is in use by another call")))
    }
}

#[wasm_bindgen]
impl DedupWindow {
    /// `dedup::DedupWindow::with_defaults`; `seed` must be 16 bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(
        capacity: f64,
        ttl_seconds: Option<f64>,
        lease_seconds: Option<f64>,
        seed: &[u8],
    ) -> R<DedupWindow> {
        let seed: [u8; 16] = seed
            .try_into()
            .map_err(|_| err(ArgumentError::new("seed", "must be 16 bytes")))?;
        let (c, t) = (
            int("capacity", capacity)?,
            opt_int("ttl_seconds", ttl_seconds)?,
        );
        let lease = opt_int("lease_seconds", lease_seconds)?;
        dedup::DedupWindow::with_defaults(c, t, lease, seed)
            .map(|w| DedupWindow(Rc::new(RefCell::new(w))))
            .map_err(err)
    }

    /// `dedup::DedupWindow::claim`: `new`, `in_progress` or `done`.
    pub fn claim(&self, key: &str, now: f64) -> R<String> {
        let now = now_arg(now)?;
        Ok(self
            .window()?
            .claim(key, now)
            .map_err(err)?
            .as_str()
            .to_owned())
    }

    /// `dedup::DedupWindow::commit`.
    pub fn commit(&self, key: &str, now: f64) -> R<()> {
        let now = now_arg(now)?;
        self.window()?.commit(key, now).map_err(err)
    }

    /// `dedup::DedupWindow::release`.
    pub fn release(&self, key: &str, now: f64) -> R<bool> {
        let now = now_arg(now)?;
        self.window()?.release(key, now).map_err(err)
    }

    /// `dedup::DedupWindow::check_and_insert`.
    #[wasm_bindgen(js_name = checkAndInsert)]
    pub fn check_and_insert(&self, key: &str, now: f64) -> R<bool> {
        let now = now_arg(now)?;
        self.window()?.check_and_insert(key, now).map_err(err)
    }

    /// `dedup::DedupWindow::state`: `new`, `in_progress` or `done`, read without claiming.
    pub fn state(&self, key: &str, now: f64) -> R<String> {
        let now = now_arg(now)?;
        Ok(self
            .window()?
            .state(key, now)
            .map_err(err)?
            .as_str()
            .to_owned())
    }

    /// `dedup::DedupWindow::contains`.
    pub fn contains(&self, key: &str, now: f64) -> R<bool> {
        self.window()?.contains(key, now_arg(now)?).map_err(err)
    }

    /// Number of keys remembered.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.0.borrow().len() as f64
    }

    /// The capacity.
    #[wasm_bindgen(getter)]
    pub fn capacity(&self) -> f64 {
        self.0.borrow().capacity() as f64
    }
}

/// Test-only exports, compiled only with the `test-hooks` feature (never in the npm package).
#[cfg(feature = "test-hooks")]
mod test_hooks {
    use wasm_bindgen::prelude::*;

    /// The size of this module's linear memory in bytes, for `make bench` (`DedupWindow` bytes
    /// per entry).
    #[wasm_bindgen(js_name = wasmMemoryBytes)]
    pub fn wasm_memory_bytes() -> f64 {
        #[cfg(target_arch = "wasm32")]
        let pages = core::arch::wasm32::memory_size::<0>();
        #[cfg(not(target_arch = "wasm32"))]
        let pages = 0usize;
        (pages * 65_536) as f64
    }

    /// Panics: lets the test suite prove what a panic does to the module.
    #[wasm_bindgen(js_name = panicForTests)]
    pub fn panic_for_tests() {
        panic!("royaltykit: deliberate panic for tests");
    }
}
