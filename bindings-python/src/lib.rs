//! pyo3 layer of royaltykit: conversions, the default clock and RNG, and error mapping only.
//! The native module is `royaltykit._native`; the Python package `royaltykit` re-exports it.
#![forbid(unsafe_code)]

use args::{Body, Headers, Seconds, SigningSecrets, Text};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyDict};
use royaltykit::{dedup, webhook, ArgumentError};
use std::sync::Mutex;

/// Adds the `fn` functions and the `class` classes to the module `m`.
macro_rules! py_export {
    ($m:ident; $(fn $($f:path),+;)? $(class $($c:ty),+)?) => {{
        $($($m.add_function(pyo3::wrap_pyfunction!($f, $m)?)?;)+)?
        $($($m.add_class::<$c>()?;)+)?
    }};
}
pub(crate) use py_export;

mod api;
mod args;
mod export;
mod fleet;
mod generated;
mod machine;
mod receiver;
mod retry;
mod route;

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

// ---- webhook --------------------------------------------------------------------------------------

/// Bodies at least this large are hashed with the interpreter released.
const DETACH_AT: usize = 64 * 1024;

fn run_verify<F>(py: Python<'_>, body: &[u8], f: F) -> R<webhook::VerifiedWebhook>
where
    F: FnOnce(&[u8]) -> Result<webhook::VerifiedWebhook, webhook::WebhookError> + Send,
{
    Ok(if body.len() >= DETACH_AT {
        py.detach(|| f(body))
    } else {
        f(body)
    }?)
}

/// `tolerance_seconds` (the option's one name, as in the core, JS and Kotlin), or `tolerance`,
/// its earlier Python spelling, with a `DeprecationWarning`; both at once is a `TypeError`.
fn tolerance_arg(
    py: Python<'_>,
    tolerance_seconds: Option<i64>,
    tolerance: Option<i64>,
) -> PyResult<Option<i64>> {
    match (tolerance_seconds, tolerance) {
        (Some(_), Some(_)) => Err(PyTypeError::new_err(
            "give tolerance_seconds only (tolerance is its deprecated spelling)",
        )),
        (None, Some(t)) => {
            let category = py.get_type::<pyo3::exceptions::PyDeprecationWarning>();
            PyErr::warn(
                py,
                &category,
                c"tolerance= is deprecated: use tolerance_seconds=",
                2,
            )?;
            Ok(Some(t))
        }
        (t, None) => Ok(t),
    }
}

/// Verifies a webhook delivery; raises WebhookVerificationError with `.code` otherwise.
/// Absent options are the core's defaults.
#[pyfunction]
#[pyo3(signature = (headers, body, secrets, *, now=None, tolerance_seconds=None, max_body_bytes=None, tolerance=None))]
#[allow(clippy::too_many_arguments)]
fn verify_webhook(
    py: Python<'_>,
    headers: Headers,
    body: Body<'_>,
    secrets: SigningSecrets,
    now: Option<Seconds>,
    tolerance_seconds: Option<i64>,
    max_body_bytes: Option<i64>,
    tolerance: Option<i64>,
) -> PyResult<webhook::VerifiedWebhook> {
    let tolerance = tolerance_arg(py, tolerance_seconds, tolerance)?;
    guard(|| {
        let opts = webhook::VerifyOptions::with_defaults(tolerance, max_body_bytes)?;
        let now = args::now(now);
        run_verify(py, &body, |b| {
            webhook::verify(&headers, b, &secrets.0, now, opts)
        })
    })
}

/// A verifier built once with its secrets; share it between threads.
#[pyclass(frozen, module = "royaltykit")]
struct WebhookVerifier(webhook::WebhookVerifier);

#[pymethods]
impl WebhookVerifier {
    #[new]
    #[pyo3(signature = (secrets, *, tolerance_seconds=None, max_body_bytes=None, tolerance=None))]
    fn new(
        py: Python<'_>,
        secrets: SigningSecrets,
        tolerance_seconds: Option<i64>,
        max_body_bytes: Option<i64>,
        tolerance: Option<i64>,
    ) -> PyResult<Self> {
        let tolerance = tolerance_arg(py, tolerance_seconds, tolerance)?;
        guard(|| {
            let opts = webhook::VerifyOptions::with_defaults(tolerance, max_body_bytes)?;
            Ok(Self(webhook::WebhookVerifier::new(&secrets.0, opts)?))
        })
    }

    #[pyo3(signature = (headers, body, *, now=None))]
    fn verify(
        &self,
        py: Python<'_>,
        headers: Headers,
        body: Body<'_>,
        now: Option<Seconds>,
    ) -> PyResult<webhook::VerifiedWebhook> {
        let now = args::now(now);
        guard(|| run_verify(py, &body, |b| self.0.verify(&headers, b, now)))
    }

    /// One delivery as a ``WebhookReceipt`` (verified, its keys scoped to ``namespace``): drive it
    /// with ``next()`` until it says ``Reply``. A rejected delivery's receipt replies at once.
    /// With ``window`` (a ``DedupWindow``) the receipt claims, releases and commits its keys
    /// there itself (at ``now``, else the clock at each step) and asks only for the handler.
    /// With ``transactional=True`` (a dedup table in the handler's database) the keys are marked
    /// done inside the handler's transaction: ``Begin``, ``Commit`` (marks), ``RunHandler``,
    /// ``CommitTransaction``, or ``Rollback`` on a failure.
    /// With ``inbox=True`` (an inbox: ``SqlInboxProtocol``) a verified delivery is persisted
    /// (``Enqueue``) and answered 200 at once (``queued``, or ``duplicate`` when it was in the
    /// inbox already); the handler runs later, in the inbox's worker (``InboxWorker``).
    ///
    /// By default only the delivery key is claimed ("deduplicate by Service-Webhook-Id").
    /// ``claim_content_key=True`` also claims the signed content's key: it stops a captured
    /// delivery resent under a new id, and it merges two genuine deliveries whose body and
    /// timestamp are byte-identical (two changes of one resource in the same second).
    #[pyo3(signature = (headers, body, *, namespace, now=None, window=None, transactional=false, claim_content_key=false, inbox=false))]
    #[allow(clippy::too_many_arguments)] // the Python keyword arguments, one each
    fn receipt(
        &self,
        py: Python<'_>,
        headers: Headers,
        body: Body<'_>,
        namespace: Text,
        now: Option<Seconds>,
        window: Option<Py<DedupWindow>>,
        transactional: bool,
        claim_content_key: bool,
        inbox: bool,
    ) -> PyResult<machine::WebhookReceipt> {
        if transactional && window.is_some() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "window and transactional=True exclude each other: a DedupWindow is not a table in the handler's database",
            ));
        }
        if inbox && (transactional || window.is_some()) {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "inbox=True excludes window and transactional=True: the inbox row is the delivery's dedup record",
            ));
        }
        let fixed = now.as_ref().map(|s| s.0);
        let now = args::now(now);
        let body: &[u8] = &body;
        let verified = if body.len() >= DETACH_AT {
            py.detach(|| self.0.verify(&headers, body, now))
        } else {
            self.0.verify(&headers, body, now)
        };
        guard(|| {
            let receipt =
                royaltykit::machine::WebhookReceipt::new(&namespace, verified, claim_content_key)?;
            let receipt = if inbox {
                receipt.inbox()
            } else if transactional {
                receipt.transactional()
            } else {
                receipt
            };
            Ok(machine::WebhookReceipt::new(
                receipt,
                window.map(|w| (w, fixed)),
            ))
        })
    }

    /// The largest body accepted, in bytes (integrations read at most one byte more).
    #[getter]
    fn max_body_bytes(&self) -> usize {
        self.0.options().max_body_bytes()
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
    secret: SigningSecrets,
    body: Body<'_>,
    timestamp: Option<Seconds>,
    delivery_id: Option<Text>,
) -> PyResult<Bound<'py, PyDict>> {
    guard(|| {
        let id = delivery_id.map_or_else(royaltykit_host::random_uuid, |d| d.0);
        let h = webhook::sign(&secret.0, &body, args::now(timestamp), &id)?;
        Ok(h.pairs().into_py_dict(py)?)
    })
}

/// The secrets to verify with at `now` during a rotation (current first), each a
/// ``WebhookSecret`` carrying its expiry: the previous one keeps ``previous_valid_until`` (Unix
/// seconds, an aware datetime, or the ISO 8601 text the service returns), so a verifier built
/// from them never accepts it after that instant.
#[pyfunction]
#[pyo3(signature = (current, previous=None, previous_valid_until=None, *, now=None))]
fn active_secrets(
    current: Text,
    previous: Option<Text>,
    previous_valid_until: Option<args::ValidUntil>,
    now: Option<Seconds>,
) -> PyResult<Vec<args::PyWebhookSecret>> {
    guard(|| {
        let until = previous_valid_until.map(|s| s.0);
        let active = webhook::active_secrets(&current, previous.as_deref(), until, args::now(now))?;
        Ok(active
            .into_iter()
            .map(|s| {
                let until = s.valid_until();
                args::PyWebhookSecret(s, until)
            })
            .collect())
    })
}

/// A subscription's signing secret as its create (``createEnterpriseWebhook``) or rotation
/// (``rotateEnterpriseWebhookSecret``) revealed it, from ``revealed_secret``. The service shows
/// the secret once: store ``secret.secret`` now. ``secrets(previous)`` is what a receiver or a
/// verifier takes from now on. ``record`` is the response without the secret (safe to log);
/// ``repr`` never shows the secret.
#[pyclass(name = "RevealedSecret", frozen, module = "royaltykit")]
struct RevealedSecret(webhook::RevealedSecret);

#[pymethods]
impl RevealedSecret {
    /// The new signing secret (no expiry), as a ``WebhookSecret``.
    #[getter]
    fn secret(&self) -> args::PyWebhookSecret {
        args::PyWebhookSecret(self.0.secret.clone(), None)
    }

    /// A rotation's ``previous_secret_valid_until`` in Unix seconds: until then deliveries carry
    /// the previous secret's signature too. None for a create.
    #[getter]
    fn previous_valid_until(&self) -> Option<i64> {
        self.0.previous_valid_until
    }

    /// The subscription's reference, when the response names it.
    #[getter]
    fn reference(&self) -> Option<String> {
        self.0.reference.clone()
    }

    /// The response as JSON text with every secret member removed: safe to log or store.
    #[getter]
    fn record(&self) -> String {
        self.0.record.clone()
    }

    /// The secrets a receiver verifies with from now on (current first): the new one, then
    /// ``previous`` (the secret held until this rotation) carrying ``previous_valid_until``, so
    /// a verifier built from them never accepts it after that instant. The new one alone for a
    /// create or without ``previous``.
    #[pyo3(signature = (previous=None))]
    fn secrets(&self, previous: Option<Text>) -> Vec<args::PyWebhookSecret> {
        self.0
            .secrets(previous.as_deref())
            .into_iter()
            .map(|s| {
                let until = s.valid_until();
                args::PyWebhookSecret(s, until)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        let none = || "None".to_owned();
        let until = self
            .0
            .previous_valid_until
            .map_or_else(none, |u| u.to_string());
        let reference = self
            .0
            .reference
            .as_ref()
            .map_or_else(none, |r| format!("{r:?}"));
        format!("RevealedSecret(secret=WebhookSecret('[redacted]'), previous_valid_until={until}, reference={reference})")
    }
}

/// The signing secret a subscription's create or rotation response reveals, from its raw 2xx
/// body (bytes, or text): a ``RevealedSecret``. The secret is shown once: store it now.
/// ``WebhookVerificationError`` with code ``secret_not_revealed`` for a body that is not a JSON
/// object of at most 1 MiB, names no secret, or has a ``previous_secret_valid_until`` that is
/// not a time; its message never contains the body.
#[pyfunction]
fn revealed_secret(body: Body<'_>) -> PyResult<RevealedSecret> {
    guard(|| Ok(RevealedSecret(webhook::revealed_secret(&body)?)))
}

/// The event's canonical resource path (``resource.url``), checked: returned only when it is a
/// path under the enterprise API (``/api/v1/…``); otherwise ``WebhookVerificationError`` with
/// code ``invalid_resource_url``. Takes the URL text or a ``WebhookEvent``.
#[pyfunction]
fn resource_path(url: &Bound<'_, PyAny>) -> PyResult<String> {
    let text: String = match url.cast::<webhook::WebhookEvent>() {
        Ok(e) => e.get().resource_url.clone(),
        Err(_) => url.extract::<Text>()?.0,
    };
    guard(|| Ok(webhook::resource_path(&text)?.to_owned()))
}

/// A client's timeouts as ``(connect_seconds, read_seconds)``: each one given checked (seconds
/// more than 0, at most a day), each one not given the library's default (10 s to connect, 30 s
/// to read). Otherwise ``InvalidArgumentError`` naming ``connect_timeout`` or ``read_timeout``.
#[pyfunction]
#[pyo3(signature = (connect_timeout = None, read_timeout = None))]
fn client_timeouts(
    connect_timeout: Option<f64>,
    read_timeout: Option<f64>,
) -> PyResult<(f64, f64)> {
    guard(|| {
        let t = royaltykit::request::client_timeouts(connect_timeout, read_timeout)?;
        Ok((t.connect_seconds, t.read_seconds))
    })
}

// ---- dedup ----------------------------------------------------------------------------------------

/// The event key of an event (a WebhookEvent, or any object with `name`, `resource_type`,
/// `resource_reference` and `occurred_at_text`).
#[pyfunction]
fn event_key(namespace: Text, event: &Bound<'_, PyAny>) -> PyResult<String> {
    guard(|| {
        let field = |name: &str| -> PyResult<Text> {
            let missing =
                |_| PyTypeError::new_err(format!("event must have a str attribute `{name}`"));
            event
                .getattr(name)
                .map_err(missing)?
                .extract::<Text>()
                .map_err(missing)
        };
        let parts = [
            field("name")?,
            field("resource_type")?,
            field("resource_reference")?,
            field("occurred_at_text")?,
        ];
        Ok(dedup::event_key_parts(
            &namespace, &parts[0], &parts[1], &parts[2], &parts[3],
        )?)
    })
}

/// A bounded in-memory dedup window, safe to share between threads.
#[pyclass(frozen, module = "royaltykit")]
pub(crate) struct DedupWindow(Mutex<dedup::DedupWindow>);

impl DedupWindow {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, dedup::DedupWindow> {
        // A poisoned lock only means another thread panicked mid-call; the window's state is
        // still a valid (bounded) set, so keep serving.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl DedupWindow {
    /// `ttl_seconds` (how long a processed key is remembered) defaults to the service's whole
    /// redelivery schedule plus the tolerance; `lease_seconds` (how long a claim holds) to 60.
    #[new]
    #[pyo3(signature = (capacity, ttl_seconds=None, *, lease_seconds=None))]
    fn new(capacity: i64, ttl_seconds: Option<i64>, lease_seconds: Option<i64>) -> PyResult<Self> {
        guard(|| {
            let seed = royaltykit_host::random_seed()?;
            let w = dedup::DedupWindow::with_defaults(capacity, ttl_seconds, lease_seconds, seed)?;
            Ok(Self(Mutex::new(w)))
        })
    }

    /// Claims ``key`` before processing: ``"new"`` (process, then ``commit`` or ``release``),
    /// ``"in_progress"`` (answer 503) or ``"done"`` (answer 200, skip).
    #[pyo3(signature = (key, now=None))]
    fn claim(&self, key: Text, now: Option<Seconds>) -> PyResult<dedup::ClaimState> {
        guard(|| Ok(self.lock().claim(&key, args::now(now))?))
    }

    /// Marks ``key`` processed (call once the effect is stored, before answering 2xx).
    #[pyo3(signature = (key, now=None))]
    fn commit(&self, key: Text, now: Option<Seconds>) -> PyResult<()> {
        guard(|| Ok(self.lock().commit(&key, args::now(now))?))
    }

    /// Gives up a claim after processing failed (then answer 5xx); True when one was dropped.
    #[pyo3(signature = (key, now=None))]
    fn release(&self, key: Text, now: Option<Seconds>) -> PyResult<bool> {
        guard(|| Ok(self.lock().release(&key, args::now(now))?))
    }

    /// One phase: True when ``key`` was not seen (records it as processed). Prefer ``claim``.
    #[pyo3(signature = (key, now=None))]
    fn check_and_insert(&self, key: Text, now: Option<Seconds>) -> PyResult<bool> {
        guard(|| Ok(self.lock().check_and_insert(&key, args::now(now))?))
    }

    /// What is remembered of ``key``, without claiming or recording it (delivery recovery asks
    /// it): ``"done"`` once committed (for the time-to-live), ``"in_progress"`` while a claim's
    /// lease is live, ``"new"`` otherwise.
    #[pyo3(signature = (key, now=None))]
    fn state(&self, key: Text, now: Option<Seconds>) -> PyResult<dedup::ClaimState> {
        guard(|| Ok(self.lock().state(&key, args::now(now))?))
    }

    /// Whether `key` is remembered (claimed or done), without recording it.
    #[pyo3(signature = (key, now=None))]
    fn contains(&self, key: Text, now: Option<Seconds>) -> PyResult<bool> {
        guard(|| Ok(self.lock().contains(&key, args::now(now))?))
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
    crate::py_export!(m;
        fn verify_webhook, sign_webhook, active_secrets, revealed_secret, resource_path, client_timeouts, event_key;
        class WebhookVerifier, args::PyWebhookSecret, RevealedSecret, webhook::VerifiedWebhook,
            webhook::WebhookEvent, DedupWindow
    );
    #[cfg(feature = "test-hooks")]
    m.add_function(wrap_pyfunction!(panic_for_tests, m)?)?;
    generated::register(m)?;
    retry::register(m)?;
    api::register(m)?;
    export::register(m)?;
    receiver::register(m)?;
    route::register(m)?;
    machine::register(m)?;
    fleet::register(m)?;
    m.add("HEADER_NAMES", webhook::HEADER_NAMES.to_vec())?;
    m.add(
        "DEFAULT_TOLERANCE_SECONDS",
        webhook::DEFAULT_TOLERANCE_SECONDS,
    )?;
    m.add("DEFAULT_MAX_BODY_BYTES", webhook::DEFAULT_MAX_BODY_BYTES)?;
    m.add(
        "DEFAULT_DEDUP_TTL_SECONDS",
        dedup::DEFAULT_DEDUP_TTL_SECONDS,
    )?;
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
