//! pyo3 layer of royaltykit: conversions, the default clock and RNG, and error mapping only.
//! The native module is `royaltykit._native`; the Python package `royaltykit` re-exports it.
#![forbid(unsafe_code)]

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};
use royaltykit::{dedup, seconds_from_f64, webhook, ArgumentError};
use std::borrow::Cow;
use std::sync::Mutex;

mod api;
mod export;
mod retry;

// ---- errors ---------------------------------------------------------------------------------------

static ERRORS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The core's one public error as a Python exception object (not raised): its family picks the
/// class in `royaltykit.errors` (the table is `_FAMILIES` there), its fields become attributes.
pub(crate) fn error_object<'py>(
    py: Python<'py>,
    e: impl Into<royaltykit::Error>,
) -> PyResult<Bound<'py, PyAny>> {
    let factory = ERRORS.get_or_try_init(py, || {
        py.import("royaltykit.errors")?
            .getattr("_from_native")
            .map(Bound::unbind)
    })?;
    let fields =
        serde_json::to_string(&e.into()).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    factory.bind(py).call1((fields,))
}

/// The core's one public error, raised as its family's class.
pub(crate) fn error(py: Python<'_>, e: impl Into<royaltykit::Error>) -> PyErr {
    error_object(py, e).map_or_else(|err| err, PyErr::from_value)
}

/// A binding call's failure: the core's one public error, or a Python error from converting an
/// argument. `?` takes both; at the boundary ([`guard`]) the first is raised as its family's
/// class, the second as is.
pub(crate) enum Failure {
    Core(Box<royaltykit::Error>),
    Py(PyErr),
}

macro_rules! through_core_error {
    ($($t:ty),+) => {$(
        impl From<$t> for Failure {
            fn from(e: $t) -> Self {
                Self::Core(Box::new(e.into()))
            }
        }
    )+};
}
through_core_error!(
    royaltykit::Error,
    ArgumentError,
    webhook::WebhookError,
    royaltykit::request::RequestError,
    royaltykit::token::TokenError,
    royaltykit::export::ExportStateError,
    royaltykit::export::DownloadError
);

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Self::Py(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Core(e) => Python::attach(|py| error(py, *e)),
            Failure::Py(e) => e,
        }
    }
}

/// The result of a binding call's body.
pub(crate) type R<T> = Result<T, Failure>;

// ---- conversions ----------------------------------------------------------------------------------

/// A Python `str` as UTF-8. Lone surrogates become U+FFFD, one per surrogate, exactly as a JS
/// string crossing into wasm does, so both hosts see the same bytes.
fn text<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    match s.to_str() {
        Ok(t) => Ok(Cow::Borrowed(t)),
        Err(_) => {
            let utf16 = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
            let bytes = utf16.cast::<PyBytes>()?.as_bytes();
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            Ok(Cow::Owned(String::from_utf16_lossy(&units)))
        }
    }
}

pub(crate) fn str_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let s = obj
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be str, not {}", type_name(obj))))?;
    Ok(text(s)?.into_owned())
}

pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// The raw body: bytes (borrowed), bytearray, memoryview (copied), or str (UTF-8).
pub(crate) enum Body<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Body<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Body::Borrowed(b) => b,
            Body::Owned(v) => v,
        }
    }
}

pub(crate) fn body_arg<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Body<'a>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Body::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Body::Owned(b.to_vec()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Body::Owned(text(s)?.into_owned().into_bytes()));
    }
    if obj.is_instance_of::<pyo3::types::PyMemoryView>() {
        let b = obj.call_method0("tobytes")?;
        return Ok(Body::Owned(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Err(PyTypeError::new_err(format!(
        "body must be bytes, bytearray, memoryview or str, not {}",
        type_name(obj)
    )))
}

fn secrets_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if obj.is_instance_of::<PyString>() {
        return Ok(vec![str_arg(obj, "secret")?]);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return obj
            .try_iter()?
            .map(|s| str_arg(&s?, "each secret"))
            .collect();
    }
    Err(PyTypeError::new_err(format!(
        "secrets must be str or a list/tuple of str, not {}",
        type_name(obj)
    )))
}

/// The delivery headers out of a Mapping (anything with `.items()`) or an iterable of pairs.
/// Only names the core asks for are kept; their values must be str (or a list/tuple of str).
pub(crate) struct Headers(pub(crate) Vec<(&'static str, String)>);

impl webhook::HeaderMap for Headers {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        for (n, v) in &self.0 {
            if n.eq_ignore_ascii_case(name) {
                f(v);
            }
        }
    }
}

fn headers_arg(obj: &Bound<'_, PyAny>) -> PyResult<Headers> {
    headers_for(obj, &webhook::HEADER_NAMES)
}

/// The headers named in `wanted` (ASCII case-insensitive), from a Mapping or pairs.
pub(crate) fn headers_for(obj: &Bound<'_, PyAny>, wanted: &[&'static str]) -> PyResult<Headers> {
    let wrong = || {
        PyTypeError::new_err(format!(
            "headers must be a Mapping[str, str] or an iterable of (name, value) pairs, not {}",
            type_name(obj)
        ))
    };
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(wrong());
    }
    let mut out = Vec::new();
    // A dict (the common case) is read directly; any other Mapping through items().
    if let Ok(dict) = obj.cast_exact::<PyDict>() {
        for (name, value) in dict.iter() {
            add_header(&mut out, wanted, &name, &value)?;
        }
        return Ok(Headers(out));
    }
    let items = if obj.hasattr("items")? {
        obj.call_method0("items")?
    } else {
        obj.clone()
    };
    let iter = items.try_iter().map_err(|_| wrong())?;
    let not_pair = || PyTypeError::new_err("each header must be a (name, value) pair");
    for item in iter {
        let item = item?;
        let (name, value) = if let Ok(t) = item.cast::<PyTuple>() {
            if t.len() != 2 {
                return Err(not_pair());
            }
            (t.get_item(0)?, t.get_item(1)?)
        } else if let Ok(l) = item.cast::<PyList>() {
            if l.len() != 2 {
                return Err(not_pair());
            }
            (l.get_item(0)?, l.get_item(1)?)
        } else {
            return Err(not_pair());
        };
        add_header(&mut out, wanted, &name, &value)?;
    }
    Ok(Headers(out))
}

/// Keeps one header when its name is wanted; a value may be a str or a list/tuple of str.
fn add_header(
    out: &mut Vec<(&'static str, String)>,
    wanted: &[&'static str],
    name_obj: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let name = name_obj.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "header names must be str, not {}",
            type_name(name_obj)
        ))
    })?;
    let name = text(name)?;
    let Some(canonical) = wanted.iter().find(|n| n.eq_ignore_ascii_case(&name)) else {
        return Ok(());
    };
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        for v in value.try_iter()? {
            out.push((*canonical, str_arg(&v?, "header values")?));
        }
    } else {
        out.push((*canonical, str_arg(value, "header values")?));
    }
    Ok(())
}

/// `now` in Unix seconds: None = the system clock; int as is; float rounded down.
pub(crate) fn now_arg(now: Option<&Bound<'_, PyAny>>, name: &'static str) -> R<i64> {
    match now {
        None => Ok(royaltykit_host::now_unix_seconds()),
        Some(v) if v.is_none() => now_arg(None, name),
        Some(v) if v.is_instance_of::<pyo3::types::PyInt>() => Ok(v
            .extract::<i64>()
            .map_err(|_| ArgumentError::new(name, "is out of range"))?),
        Some(v) if v.is_instance_of::<pyo3::types::PyFloat>() => {
            Ok(seconds_from_f64(name, v.extract()?)?)
        }
        Some(v) => Err(PyTypeError::new_err(format!(
            "{name} must be int or float Unix seconds, not {}",
            type_name(v)
        ))
        .into()),
    }
}

fn options(tolerance: i64, max_body_bytes: i64) -> R<webhook::VerifyOptions> {
    Ok(webhook::VerifyOptions::new(tolerance, max_body_bytes)?)
}

const DEFAULT_TOLERANCE: i64 = webhook::DEFAULT_TOLERANCE_SECONDS as i64;
const DEFAULT_MAX_BODY: i64 = webhook::DEFAULT_MAX_BODY_BYTES as i64;

// ---- results --------------------------------------------------------------------------------------

/// Bodies at least this large are hashed with the interpreter released.
const DETACH_AT: usize = 64 * 1024;

fn run_verify<F>(py: Python<'_>, body: &[u8], f: F) -> R<webhook::VerifiedWebhook>
where
    F: FnOnce(&[u8]) -> Result<webhook::VerifiedWebhook, webhook::WebhookError> + Send,
{
    let result = if body.len() >= DETACH_AT {
        py.detach(|| f(body))
    } else {
        f(body)
    };
    Ok(result?)
}

// ---- webhook --------------------------------------------------------------------------------------

/// Verifies a webhook delivery; raises WebhookVerificationError with `.code` otherwise.
#[pyfunction]
#[pyo3(signature = (headers, body, secrets, *, now=None, tolerance=DEFAULT_TOLERANCE, max_body_bytes=DEFAULT_MAX_BODY))]
fn verify_webhook(
    py: Python<'_>,
    headers: &Bound<'_, PyAny>,
    body: &Bound<'_, PyAny>,
    secrets: &Bound<'_, PyAny>,
    now: Option<&Bound<'_, PyAny>>,
    tolerance: i64,
    max_body_bytes: i64,
) -> PyResult<webhook::VerifiedWebhook> {
    crate::guard(|| {
        let headers = headers_arg(headers)?;
        let body = body_arg(body)?;
        let secrets = secrets_arg(secrets)?;
        let opts = options(tolerance, max_body_bytes)?;
        let now = now_arg(now, "now")?;
        run_verify(py, body.bytes(), |b| {
            webhook::verify(&headers, b, &secrets, now, opts)
        })
    })
}

/// A verifier built once with its secrets; share it between threads.
#[pyclass(frozen, module = "royaltykit")]
struct WebhookVerifier(webhook::WebhookVerifier);

#[pymethods]
impl WebhookVerifier {
    #[new]
    #[pyo3(signature = (secrets, *, tolerance=DEFAULT_TOLERANCE, max_body_bytes=DEFAULT_MAX_BODY))]
    fn new(secrets: &Bound<'_, PyAny>, tolerance: i64, max_body_bytes: i64) -> PyResult<Self> {
        crate::guard(|| {
            let secrets = secrets_arg(secrets)?;
            let opts = options(tolerance, max_body_bytes)?;
            webhook::WebhookVerifier::new(&secrets, opts)
                .map(Self)
                .map_err(Failure::from)
        })
    }

    #[pyo3(signature = (headers, body, *, now=None))]
    fn verify(
        &self,
        py: Python<'_>,
        headers: &Bound<'_, PyAny>,
        body: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<webhook::VerifiedWebhook> {
        crate::guard(|| {
            let headers = headers_arg(headers)?;
            let body = body_arg(body)?;
            let now = now_arg(now, "now")?;
            run_verify(py, body.bytes(), |b| self.0.verify(&headers, b, now))
        })
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// Signs a body as the service would; returns the three headers as a dict.
#[pyfunction]
#[pyo3(signature = (secret, body, *, timestamp=None, delivery_id=None))]
fn sign_webhook<'py>(
    py: Python<'py>,
    secret: &Bound<'py, PyAny>,
    body: &Bound<'py, PyAny>,
    timestamp: Option<&Bound<'py, PyAny>>,
    delivery_id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    crate::guard(|| {
        let secrets = secrets_arg(secret)?;
        let body = body_arg(body)?;
        let ts = now_arg(timestamp, "timestamp")?;
        let id = match delivery_id {
            Some(d) if !d.is_none() => str_arg(d, "delivery_id")?,
            _ => royaltykit_host::random_uuid(),
        };
        let h = webhook::sign(&secrets, body.bytes(), ts, &id)?;
        let out = PyDict::new(py);
        for (name, value) in h.pairs() {
            out.set_item(name, value)?;
        }
        Ok(out)
    })
}

/// The secrets to verify with at `now` during a rotation (current first).
#[pyfunction]
#[pyo3(signature = (current, previous=None, previous_valid_until=None, *, now=None))]
fn active_secrets(
    current: &Bound<'_, PyAny>,
    previous: Option<&Bound<'_, PyAny>>,
    previous_valid_until: Option<&Bound<'_, PyAny>>,
    now: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<String>> {
    crate::guard(|| {
        let current = str_arg(current, "current")?;
        let previous = match previous {
            Some(p) if !p.is_none() => Some(str_arg(p, "previous")?),
            _ => None,
        };
        let until = match previous_valid_until {
            Some(u) if !u.is_none() => Some(now_arg(Some(u), "previous_valid_until")?),
            _ => None,
        };
        let now = now_arg(now, "now")?;
        webhook::active_secrets(&current, previous.as_deref(), until, now)
            .map(|v| v.into_iter().map(str::to_owned).collect())
            .map_err(Failure::from)
    })
}

// ---- dedup ----------------------------------------------------------------------------------------

/// The namespaced delivery key of a `Service-Webhook-Id`.
#[pyfunction]
fn delivery_key(namespace: &Bound<'_, PyAny>, delivery_id: &Bound<'_, PyAny>) -> PyResult<String> {
    crate::guard(|| {
        dedup::delivery_key(
            &str_arg(namespace, "namespace")?,
            &str_arg(delivery_id, "delivery_id")?,
        )
        .map_err(Failure::from)
    })
}

/// The event key of an event (a WebhookEvent, or any object with `name`, `resource_type`,
/// `resource_reference` and `occurred_at_text`).
#[pyfunction]
fn event_key(namespace: &Bound<'_, PyAny>, event: &Bound<'_, PyAny>) -> PyResult<String> {
    crate::guard(|| {
        let field = |name: &str| -> PyResult<String> {
            let v = event.getattr(name).map_err(|_| {
                PyTypeError::new_err(format!("event must have a str attribute `{name}`"))
            })?;
            str_arg(&v, name)
        };
        dedup::event_key_parts(
            &str_arg(namespace, "namespace")?,
            &field("name")?,
            &field("resource_type")?,
            &field("resource_reference")?,
            &field("occurred_at_text")?,
        )
        .map_err(Failure::from)
    })
}

/// The content key of signed content (timestamp as sent, raw body) under a secret.
#[pyfunction]
fn content_key(
    secret: &Bound<'_, PyAny>,
    timestamp: &Bound<'_, PyAny>,
    body: &Bound<'_, PyAny>,
) -> PyResult<String> {
    crate::guard(|| {
        let ts = if timestamp.is_instance_of::<pyo3::types::PyInt>() {
            timestamp.str()?.to_string()
        } else {
            str_arg(timestamp, "timestamp")?
        };
        let body = body_arg(body)?;
        dedup::content_key(&str_arg(secret, "secret")?, &ts, body.bytes()).map_err(Failure::from)
    })
}

/// The deterministic idempotency key of a request.
#[pyfunction]
#[pyo3(signature = (tenant, operation_id, body=None))]
fn idempotency_key(
    tenant: &Bound<'_, PyAny>,
    operation_id: &Bound<'_, PyAny>,
    body: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    crate::guard(|| {
        let body = match body {
            Some(b) if !b.is_none() => body_arg(b)?,
            _ => Body::Owned(Vec::new()),
        };
        dedup::idempotency_key(
            &str_arg(tenant, "tenant")?,
            &str_arg(operation_id, "operation_id")?,
            body.bytes(),
        )
        .map_err(Failure::from)
    })
}

/// A bounded in-memory dedup window, safe to share between threads.
#[pyclass(frozen, module = "royaltykit")]
struct DedupWindow(Mutex<dedup::DedupWindow>);

impl DedupWindow {
    fn lock(&self) -> std::sync::MutexGuard<'_, dedup::DedupWindow> {
        // A poisoned lock only means another thread panicked mid-call; the window's state is
        // still a valid (bounded) set, so keep serving.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl DedupWindow {
    #[new]
    fn new(capacity: i64, ttl_seconds: i64) -> PyResult<Self> {
        crate::guard(|| {
            let seed = royaltykit_host::random_seed()?;
            dedup::DedupWindow::new(capacity, ttl_seconds, seed)
                .map(|w| Self(Mutex::new(w)))
                .map_err(Failure::from)
        })
    }

    /// True when `key` was not seen within the TTL (process it); records it either way.
    #[pyo3(signature = (key, now=None))]
    fn check_and_insert(
        &self,
        key: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        crate::guard(|| {
            let key = str_arg(key, "key")?;
            let now = now_arg(now, "now")?;
            self.lock()
                .check_and_insert(&key, now)
                .map_err(Failure::from)
        })
    }

    /// Whether `key` was seen within the TTL, without recording it.
    #[pyo3(signature = (key, now=None))]
    fn contains(&self, key: &Bound<'_, PyAny>, now: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        crate::guard(|| {
            let key = str_arg(key, "key")?;
            let now = now_arg(now, "now")?;
            self.lock().contains(&key, now).map_err(Failure::from)
        })
    }

    #[getter]
    fn capacity(&self) -> usize {
        self.lock().capacity()
    }

    fn __len__(&self) -> usize {
        self.lock().len()
    }

    fn __repr__(&self) -> String {
        format!("{:?}", *self.lock())
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(verify_webhook, m)?)?;
    m.add_function(wrap_pyfunction!(sign_webhook, m)?)?;
    m.add_function(wrap_pyfunction!(active_secrets, m)?)?;
    m.add_function(wrap_pyfunction!(delivery_key, m)?)?;
    m.add_function(wrap_pyfunction!(event_key, m)?)?;
    m.add_function(wrap_pyfunction!(content_key, m)?)?;
    m.add_function(wrap_pyfunction!(idempotency_key, m)?)?;
    m.add_class::<WebhookVerifier>()?;
    m.add_class::<webhook::VerifiedWebhook>()?;
    m.add_class::<webhook::WebhookEvent>()?;
    m.add_class::<DedupWindow>()?;
    #[cfg(feature = "test-hooks")]
    m.add_function(wrap_pyfunction!(panic_for_tests, m)?)?;
    retry::register(m)?;
    api::register(m)?;
    export::register(m)?;
    m.add("HEADER_NAMES", webhook::HEADER_NAMES.to_vec())?;
    m.add(
        "DEFAULT_TOLERANCE_SECONDS",
        webhook::DEFAULT_TOLERANCE_SECONDS,
    )?;
    m.add("DEFAULT_MAX_BODY_BYTES", webhook::DEFAULT_MAX_BODY_BYTES)?;
    Ok(())
}

/// Runs a binding body so that a Rust panic (a bug: the core denies panicking constructs)
/// becomes `RoyaltyKitError(code="internal_error")` instead of pyo3's `PanicException`, which
/// is not an `Exception` and would escape `except Exception` in the host.
pub(crate) fn guard<T>(f: impl FnOnce() -> R<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => Ok(result?),
        Err(_) => Err(Python::attach(|py| {
            error(
                py,
                royaltykit::Error::internal("the call failed, the process is unaffected"),
            )
        })),
    }
}

/// Panics inside [`guard`]: lets the test suite prove that a panic reaches Python as
/// `RoyaltyKitError`. Only in the `test-hooks` build, never in the shipped wheel.
#[cfg(feature = "test-hooks")]
#[pyfunction]
fn panic_for_tests() -> PyResult<()> {
    guard(|| panic!("royaltykit: deliberate panic for tests"))
}
