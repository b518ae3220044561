//! The protocol machines for Python (`WebhookReceipt`, `Call`, `ExportJob`, `Pages`,
//! `Recovery`, `InboxWorker`): argument conversion and the step classes only; every rule and
//! every step is the core's.

use crate::api::{bearer, json_body, params, request_params, RequestDescriptor};
use crate::args::{Body, Headers, Text};
use crate::{guard, DedupWindow};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use royaltykit::machine::{
    self, CallFailure, InboxEntry, InboxStep, PageItems, ReceiptStep, RecoveredDelivery,
    RecoveryReport,
};
use royaltykit::retry::TransportFailure;
use royaltykit::webhook::VerifiedWebhook;
use std::sync::{Mutex, MutexGuard};

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One webhook delivery as a machine (``WebhookVerifier.receipt``): ask ``next()``, do what it
/// says (claim, release or commit a key in your store, run your handler, pause), report the
/// outcome, until it says ``Reply``. Thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct WebhookReceipt {
    receipt: Mutex<machine::WebhookReceipt>,
    /// The in-process window the receipt performs its store steps on, and the caller's fixed
    /// clock (None: the system clock at each step).
    window: Option<(Py<DedupWindow>, Option<i64>)>,
}

impl WebhookReceipt {
    /// A receipt; with a `window`, its store steps are performed there at once.
    pub(crate) fn new(
        r: machine::WebhookReceipt,
        window: Option<(Py<DedupWindow>, Option<i64>)>,
    ) -> Self {
        let receipt = Self {
            receipt: Mutex::new(r),
            window,
        };
        receipt.settled(&mut lock(&receipt.receipt));
        receipt
    }

    /// The pending step, after the window's steps (with a window).
    fn settled(&self, r: &mut machine::WebhookReceipt) -> ReceiptStep {
        match &self.window {
            Some((w, now)) => r.settle(&mut w.get().lock(), royaltykit_host::now_or_clock(*now)),
            None => r.next(),
        }
    }

    /// Runs a generated input (`webhook_receipt_methods!`) under the lock; the next step.
    fn then(
        &self,
        _py: Python<'_>,
        input: impl FnOnce(&mut machine::WebhookReceipt) -> crate::R<()>,
    ) -> PyResult<ReceiptStep> {
        let mut r = lock(&self.receipt);
        guard(|| input(&mut r))?;
        Ok(self.settled(&mut r))
    }
}

crate::generated::webhook_receipt_methods! {
    /// The step pending (``ReceiptStep.Claim``, ``.Release``, ``.RunHandler``, ``.Commit``,
    /// ``.Wait``, ``.Begin``, ``.CommitTransaction``, ``.Rollback``, ``.Enqueue``, ``.Reply``);
    /// the same until an outcome is reported. A receipt on a
    /// ``DedupWindow`` (``receipt(..., window=)``) performs its claims, releases and commits
    /// itself: it asks only for ``RunHandler``, ``Wait`` and ``Reply``.
    fn next(&self) -> ReceiptStep {
        lock(&self.receipt).next()
    }
    /// The verified delivery (None when verification failed).
    #[getter]
    fn delivery(&self) -> Option<VerifiedWebhook> {
        lock(&self.receipt).delivery().cloned()
    }
    /// Once replied, what happened: ``processed``, ``duplicate``, ``in_progress``, ``rejected``,
    /// ``acknowledged``, ``queued`` (inbox), ``handler_failed``, ``store_unavailable`` or
    /// ``claim_lost``; None before.
    #[getter]
    fn outcome(&self) -> Option<&'static str> {
        lock(&self.receipt).outcome()
    }
    /// Whether the receipt has reached its ``Reply``.
    #[getter]
    fn finished(&self) -> bool {
        lock(&self.receipt).is_finished()
    }
}

/// What a ``Call`` or an ``ExportJob`` says to do next. Match on the variant:
/// ``Send(request)``, ``Wait(seconds)``, ``RefreshToken(reason)``, ``Reserve(command)`` and
/// ``AwaitToken(seconds)`` (on a ``Session``; ``Reserve`` on a fleet's), ``Reconcile(reconcile,
/// reason, candidates, stage)``, ``Done(...)`` and ``Fail(...)``.
#[pyclass(frozen, module = "royaltykit")]
pub enum CallStep {
    /// Send ``request`` with your HTTP client, then report ``response`` or ``transport_failure``.
    Send { request: Py<RequestDescriptor> },
    /// Ask again after ``seconds``.
    Wait { seconds: f64 },
    /// Obtain a token, then report ``token`` (on a ``Session``: ``session.store_token``, or
    /// ``session.exchange_failed`` / ``session.abandon_exchange``).
    RefreshToken { reason: String },
    /// (On a fleet's ``Session``: ``Fleet.session``.) Reserve the request in the fleet's rate
    /// budget: send ``command`` to Redis as it is (an ``EVAL`` of ``RESERVE_SCRIPT``), then report
    /// its reply as text to ``reserved`` (or ``reserve_failed`` when Redis cannot be reached), and
    /// ask again.
    Reserve { command: Vec<String> },
    /// (On a ``Session``.) Another call is obtaining the session's token: wait until
    /// ``session.version`` changes or ``seconds`` pass, then ask again.
    AwaitToken { seconds: f64 },
    /// The request may have been applied: check its effect as ``reconcile`` says, among
    /// ``candidates`` (an export job's: the exports that may be its own). Over.
    Reconcile {
        reconcile: String,
        reason: String,
        candidates: Vec<String>,
        stage: Option<String>,
    },
    /// The 2xx response (for an export job: the export's id and its complete artifact). Over.
    Done {
        status: u16,
        headers: Vec<(String, String)>,
        body: Py<PyBytes>,
        export_id: Option<String>,
        /// Whether ``body`` is JSON by its ``Content-Type`` (parse it); else bytes.
        json: bool,
    },
    /// Stopped: ``rule`` and ``reason`` say why; ``error`` is the exception to raise (None for a
    /// transport failure), ``stage`` the export job's stage. Over.
    Fail {
        rule: String,
        reason: String,
        status: Option<u16>,
        transport: Option<String>,
        retry_after_seconds: Option<f64>,
        error: Option<Py<PyAny>>,
        stage: Option<String>,
        export_id: Option<String>,
        /// The requests the call sent.
        attempts: i64,
    },
}

#[pymethods]
impl CallStep {
    fn __repr__(&self) -> String {
        match self {
            Self::Send { request } => format!(
                "CallStep.Send({})",
                Python::attach(|py| request.borrow(py).__repr__())
            ),
            Self::Wait { seconds } => format!("CallStep.Wait(seconds={seconds})"),
            Self::RefreshToken { reason } => format!("CallStep.RefreshToken({reason:?})"),
            Self::Reserve { command } => {
                // The keys only (a reservation carries no secret, but its script is long).
                let windows = command
                    .get(2)
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(0);
                let keys = command.get(3..3 + windows).unwrap_or_default();
                format!("CallStep.Reserve(keys={keys:?})")
            }
            Self::AwaitToken { seconds } => format!("CallStep.AwaitToken(seconds={seconds})"),
            Self::Reconcile { reconcile, .. } => format!("CallStep.Reconcile({reconcile:?})"),
            Self::Done {
                status, export_id, ..
            } => format!("CallStep.Done(status={status}, export_id={export_id:?})"),
            Self::Fail { rule, reason, .. } => format!("CallStep.Fail({rule:?}: {reason})"),
        }
    }

    /// The exception to raise for a ``Fail`` or ``Reconcile`` step, from the core's error table:
    /// the error a failure carries (an ``ApiError``, …), else ``CallFailedError`` (its message
    /// names ``operation_id``, the host of ``base_url``, the reason, the attempts and ``cause``,
    /// the HTTP library's last error in words), or ``ReconcileRequired``. None for other steps.
    #[pyo3(signature = (operation_id, base_url, cause=None))]
    fn exception<'py>(
        &self,
        py: Python<'py>,
        operation_id: &str,
        base_url: &str,
        cause: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let error = match self {
            Self::Fail { error: Some(e), .. } => return Ok(Some(e.bind(py).clone())),
            Self::Fail {
                rule,
                reason,
                status,
                transport,
                retry_after_seconds,
                stage,
                export_id,
                attempts,
                error: None,
            } => CallFailure {
                rule: rule.clone(),
                reason: reason.clone(),
                status: *status,
                transport: match transport {
                    Some(t) => Some(TransportFailure::parse(t).map_err(|e| crate::error(py, e))?),
                    None => None,
                },
                retry_after_seconds: *retry_after_seconds,
                error: None,
                attempts: *attempts,
            }
            .into_error(
                operation_id,
                base_url,
                stage.as_deref(),
                export_id.as_deref(),
                cause,
            ),
            Self::Reconcile {
                reconcile,
                reason,
                candidates,
                stage,
            } => machine::reconcile_required(
                royaltykit::retry::Reconcile::parse(reconcile).map_err(|e| crate::error(py, e))?,
                reason,
                operation_id,
                candidates.clone(),
                stage.as_deref(),
            ),
            _ => return Ok(None),
        };
        crate::error_object(py, error).map(Some)
    }
}

fn fail(
    py: Python<'_>,
    f: CallFailure,
    stage: Option<String>,
    export_id: Option<String>,
) -> CallStep {
    CallStep::Fail {
        rule: f.rule,
        reason: f.reason,
        status: f.status,
        transport: f.transport.map(|t| t.as_str().to_owned()),
        retry_after_seconds: f.retry_after_seconds,
        error: f
            .error
            .and_then(|e| crate::error_object(py, e).ok())
            .map(Bound::unbind),
        stage,
        export_id,
        attempts: f.attempts,
    }
}

/// The core's level of ``min_level`` (``None`` stays ``None``: every event).
fn event_level(py: Python<'_>, min_level: Option<&str>) -> PyResult<Option<machine::EventLevel>> {
    min_level
        .map(machine::EventLevel::parse)
        .transpose()
        .map_err(|e| crate::error(py, e))
}

/// A `MachineEvent` as a dict (every member, None when absent).
fn event_dict<'py>(py: Python<'py>, e: &machine::MachineEvent) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", &e.kind)?;
    d.set_item("operation", &e.operation)?;
    d.set_item("attempt", e.attempt)?;
    d.set_item("method", &e.method)?;
    d.set_item("path", &e.path)?;
    d.set_item("status", e.status)?;
    d.set_item("transport", &e.transport)?;
    d.set_item("rule", &e.rule)?;
    d.set_item("reason", &e.reason)?;
    d.set_item("wait_seconds", e.wait_seconds)?;
    d.set_item("state", &e.state)?;
    d.set_item("received_bytes", e.received_bytes)?;
    d.set_item("total_bytes", e.total_bytes)?;
    d.set_item("level", &e.level)?;
    d.set_item("message", &e.message)?;
    Ok(d)
}

fn send(py: Python<'_>, request: royaltykit::request::RequestDescriptor) -> PyResult<CallStep> {
    Ok(CallStep::Send {
        request: Py::new(py, RequestDescriptor(request))?,
    })
}

/// The core's step of a `Call` or an `ExportJob` as this module's `CallStep`.
fn step(py: Python<'_>, step: machine::Step) -> PyResult<CallStep> {
    Ok(match step {
        machine::Step::Send { request } => send(py, request)?,
        machine::Step::Wait { seconds } => CallStep::Wait { seconds },
        machine::Step::RefreshToken { reason } => CallStep::RefreshToken { reason },
        machine::Step::Reserve { command } => CallStep::Reserve { command },
        machine::Step::AwaitToken { seconds } => CallStep::AwaitToken { seconds },
        machine::Step::Reconcile {
            reconcile,
            reason,
            candidates,
            stage,
        } => CallStep::Reconcile {
            reconcile: reconcile.as_str().to_owned(),
            reason,
            candidates,
            stage,
        },
        machine::Step::Done {
            response,
            json,
            export_id,
        } => CallStep::Done {
            json,
            status: response.status,
            headers: response.headers,
            body: PyBytes::new(py, &response.body).unbind(),
            export_id,
        },
        machine::Step::Fail {
            failure,
            stage,
            export_id,
        } => fail(py, failure, stage, export_id),
    })
}

/// A token for the requests to come: a ``Token`` or ``EnterpriseToken`` (refreshed at its
/// ``refresh_at`` unless ``refresh_at`` is given) or a ``BearerToken``.
pub(crate) fn token_of(
    token: &Bound<'_, PyAny>,
    refresh_at: Option<f64>,
) -> PyResult<(royaltykit::token::BearerToken, Option<f64>)> {
    let own = if let Ok(t) = token.cast::<royaltykit::token::Token>() {
        Some(t.get().refresh_at as f64)
    } else if let Ok(t) = token.cast::<royaltykit::token::EnterpriseToken>() {
        t.get().refresh_at.map(|r| r as f64)
    } else {
        None
    };
    Ok((bearer(token)?, refresh_at.or(own)))
}

pub(crate) fn budget_lock<'a>(
    budget: &'a Option<PyRef<'_, crate::retry::RateBudget>>,
) -> Option<MutexGuard<'a, royaltykit::retry::RateBudget>> {
    budget.as_ref().map(|b| lock(&b.0))
}

/// What the calls of one API client share: the token, when to refresh it, the one token
/// exchange in flight, and the rate budget (a copy of ``budget`` is kept: share a ``Session``,
/// not a budget, between the clients of one API key). Drive machines on it with
/// ``next(now, session=...)``. A fleet's session (``Fleet.session``) shares the token and the
/// budget with the fleet's other processes through Redis. Thread-safe.
#[pyclass(frozen, weakref, module = "royaltykit")]
pub struct Session(pub(crate) Mutex<machine::Session>);

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (budget=None))]
    fn new(budget: Option<PyRef<'_, crate::retry::RateBudget>>) -> Self {
        Self(Mutex::new(machine::Session::new(
            budget_lock(&budget).map(|b| b.clone()),
        )))
    }

    /// Stores a token for every call of the session: a ``Token``, ``EnterpriseToken`` or
    /// ``BearerToken``, refreshed at its ``refresh_at`` unless ``refresh_at`` is given. Ends the
    /// exchange in flight; wake the calls waiting on the session.
    #[pyo3(signature = (token, refresh_at=None))]
    fn store_token(&self, token: &Bound<'_, PyAny>, refresh_at: Option<f64>) -> PyResult<()> {
        let (t, at) = token_of(token, refresh_at)?;
        lock(&self.0).store_token(t, at);
        Ok(())
    }

    /// The exchange in flight failed (``reason``, never a credential): the calls that waited
    /// for it fail with rule ``token_exchange_failed``.
    fn exchange_failed(&self, reason: Text) {
        lock(&self.0).exchange_failed(&reason);
    }

    /// The exchange in flight ended without an outcome (cancelled): the next call leads anew.
    fn abandon_exchange(&self) {
        lock(&self.0).abandon_exchange();
    }

    /// Changes whenever a waiting call has something new to look at.
    #[getter]
    fn version(&self) -> u64 {
        lock(&self.0).version()
    }

    /// Token exchanges the session's calls have started.
    #[getter]
    fn exchanges(&self) -> u64 {
        lock(&self.0).exchanges()
    }

    /// Whether a token exchange is in flight.
    #[getter]
    fn exchanging(&self) -> bool {
        lock(&self.0).exchanging()
    }

    /// Whether the session holds a token.
    #[getter]
    fn has_token(&self) -> bool {
        lock(&self.0).has_token()
    }

    /// The fleet the session shares its token and budget with (``Fleet.session``), else None.
    #[getter]
    fn fleet(&self) -> Option<crate::fleet::Fleet> {
        lock(&self.0).fleet().cloned().map(crate::fleet::Fleet)
    }

    fn __repr__(&self) -> String {
        let s = lock(&self.0);
        let fleet = s
            .fleet()
            .map(|f| format!(", fleet={:?}", f.prefix()))
            .unwrap_or_default();
        format!(
            "Session(has_token={}, exchanges={}, exchanging={}{fleet})",
            if s.has_token() { "True" } else { "False" },
            s.exchanges(),
            if s.exchanging() { "True" } else { "False" }
        )
    }
}

/// The `#[pymethods]` of a `Call` or an `ExportJob`: its own items, then the inputs both take
/// (the core gives both types the same input methods).
/// A `DeprecationWarning` for one of the inputs `report` replaces, pointing at the caller's line.
fn deprecated(py: Python<'_>, text: &std::ffi::CStr) -> PyResult<()> {
    let category = py.get_type::<pyo3::exceptions::PyDeprecationWarning>();
    PyErr::warn(py, &category, text, 1)
}

macro_rules! api_machine {
    ($ty:ident, $core:ty, $step:ident, { $($own:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($own)*

            /// The step to perform at ``now`` (default: the clock), taking one request from
            /// ``budget`` (a ``RateBudget`` shared by your calls) before each send; on a
            /// ``session``, its token and budget instead (``budget`` must then be None).
            #[pyo3(signature = (now=None, budget=None, *, session=None))]
            fn next(
                &self,
                py: Python<'_>,
                now: Option<f64>,
                budget: Option<PyRef<'_, crate::retry::RateBudget>>,
                session: Option<PyRef<'_, Session>>,
            ) -> PyResult<CallStep> {
                let step = guard(|| match &session {
                    Some(_) if budget.is_some() => Err(royaltykit::ArgumentError::new(
                        "budget",
                        "a machine on a session takes the session's budget: give one or the other",
                    )
                    .into()),
                    Some(s) => Ok(lock(&self.0).next_in(royaltykit_host::now_or_clock_f64(now), &mut lock(&s.0))?),
                    None => Ok(lock(&self.0).next(royaltykit_host::now_or_clock_f64(now), budget_lock(&budget).as_deref_mut())?),
                })?;
                $step(py, step)
            }

            /// ``next(now, session=session)`` and ``take_events(min_level)`` in one call:
            /// ``(step, events)``, the events taken after the step was decided. What the
            /// clients' loops ask at each step (each call into the library costs).
            #[pyo3(signature = (now, *, session, min_level=None))]
            fn advance<'py>(
                &self,
                py: Python<'py>,
                now: f64,
                session: PyRef<'_, Session>,
                min_level: Option<&str>,
            ) -> PyResult<(CallStep, Vec<Bound<'py, PyDict>>)> {
                let min = event_level(py, min_level)?;
                let (step, events) =
                    guard(|| Ok(lock(&self.0).advance_in(now, &mut lock(&session.0), min)?))?;
                let events = events.iter().map(|e| event_dict(py, e)).collect::<PyResult<_>>()?;
                Ok(($step(py, step)?, events))
            }

            /// ``response(status, headers, body, now)`` then ``advance(now, session=session,
            /// min_level=min_level)``, in one call: the step after the response, with the events.
            #[pyo3(signature = (status, headers, body, now, *, session, min_level=None))]
            #[allow(clippy::too_many_arguments)]
            fn respond<'py>(
                &self,
                py: Python<'py>,
                status: i64,
                headers: Headers,
                body: Body<'_>,
                now: f64,
                session: PyRef<'_, Session>,
                min_level: Option<&str>,
            ) -> PyResult<(CallStep, Vec<Bound<'py, PyDict>>)> {
                deprecated(py, c"respond() is deprecated (kept for one release): report((status, headers, body), now), then advance()")?;
                guard(|| Ok(lock(&self.0).response(status, &headers, &body, now)?))?;
                self.advance(py, now, session, min_level)
            }

            /// What became of the step performed, at ``now`` (default: the clock): the one
            /// input after ``Send`` and ``Reserve``. ``(status, headers, body)`` a response read
            /// whole; ``(status, headers, length)`` one whose body went to your sink (see
            /// ``streams``); ``("no_response", kind)`` no response (``timeout``,
            /// ``connect_failed``, ``connection_lost``; after a ``Reserve``: Redis could not be
            /// reached); ``("reply", text)`` the fleet's reply to a ``Reserve`` (None for nil).
            /// ``InvalidArgumentError`` for an outcome the pending step cannot have.
            #[pyo3(signature = (outcome, now=None))]
            fn report(&self, outcome: &Bound<'_, PyAny>, now: Option<f64>) -> PyResult<()> {
                let now = royaltykit_host::now_or_clock_f64(now);
                let reported = |o: royaltykit::machine::StepOutcome<'_, _>| {
                    Ok(guard(|| Ok(lock(&self.0).report(o, now)?)))
                };
                match crate::args::with_outcome(outcome, reported)? {
                    Ok(done) => done,
                    Err(refused) => guard(|| Err(refused.into())),
                }
            }

            /// The response to the request sent.
            #[pyo3(signature = (status, headers, body, now=None))]
            fn response(
                &self,
                py: Python<'_>,
                status: i64,
                headers: Headers,
                body: Body<'_>,
                now: Option<f64>,
            ) -> PyResult<()> {
                deprecated(py, c"response() is deprecated (kept for one release): use report((status, headers, body), now)")?;
                guard(|| Ok(lock(&self.0).response(status, &headers, &body, royaltykit_host::now_or_clock_f64(now))?))
            }

            /// Whether the body of a response with ``status`` is to be streamed to your own
            /// sink (a file) and reported by ``streamed_response``: only a 2xx to a download.
            fn streams(&self, status: i64) -> bool {
                lock(&self.0).streams(status)
            }

            /// The download's body is arriving: ``received`` bytes so far, of ``total`` (its
            /// ``Content-Length``, when given). Report it as pieces arrive: a ``progress`` event
            /// at each tenth of the body and when it is whole, never more.
            #[pyo3(signature = (received, total=None))]
            fn progress(&self, received: u64, total: Option<u64>) {
                lock(&self.0).progress(received, total);
            }

            /// A download response whose body you streamed to your sink, ``length`` bytes: a
            /// partial one is read again (start the sink afresh); ``Done`` then has no body.
            #[pyo3(signature = (status, headers, length, now=None))]
            fn streamed_response(
                &self,
                py: Python<'_>,
                status: i64,
                headers: Headers,
                length: u64,
                now: Option<f64>,
            ) -> PyResult<()> {
                deprecated(py, c"streamed_response() is deprecated (kept for one release): use report((status, headers, length), now)")?;
                guard(|| Ok(lock(&self.0).streamed_response(status, &headers, length, royaltykit_host::now_or_clock_f64(now))?))
            }

            /// No response: "timeout", "connect_failed" (nothing was sent) or "connection_lost".
            #[pyo3(signature = (failure, now=None))]
            fn transport_failure(&self, py: Python<'_>, failure: Text, now: Option<f64>) -> PyResult<()> {
                deprecated(py, c"transport_failure() is deprecated (kept for one release): use report((\"no_response\", kind), now)")?;
                guard(|| {
                    let failure = TransportFailure::parse(&failure)?;
                    Ok(lock(&self.0).transport_failure(failure, royaltykit_host::now_or_clock_f64(now))?)
                })
            }

            /// (Fleet.) The reply of the pending ``Reserve`` as text (None for nil) at ``now``
            /// (default: the clock): ``ok`` sends at the next step, in the same second;
            /// ``wait <second> <window>`` holds the machine until that second (a
            /// ``rate_limited`` event). ``InvalidArgumentError`` when no reservation is pending.
            #[pyo3(signature = (reply, now=None))]
            fn reserved(&self, py: Python<'_>, reply: Option<Text>, now: Option<f64>) -> PyResult<()> {
                deprecated(py, c"reserved() is deprecated (kept for one release): use report((\"reply\", text), now)")?;
                guard(|| Ok(lock(&self.0).reserved(reply.as_deref(), royaltykit_host::now_or_clock_f64(now))?))
            }

            /// (Fleet.) Redis could not be reached for the pending ``Reserve``: the machine waits
            /// a second and reserves again (it never sends uncounted). ``InvalidArgumentError``
            /// when no reservation is pending.
            #[pyo3(signature = (now=None))]
            fn reserve_failed(&self, py: Python<'_>, now: Option<f64>) -> PyResult<()> {
                deprecated(py, c"reserve_failed() is deprecated (kept for one release): use report((\"no_response\", \"connect_failed\"), now)")?;
                guard(|| Ok(lock(&self.0).reserve_failed(royaltykit_host::now_or_clock_f64(now))?))
            }

            /// A token (see ``RefreshToken``): a ``Token``, ``EnterpriseToken`` or
            /// ``BearerToken``, refreshed at its ``refresh_at`` unless ``refresh_at`` is given.
            #[pyo3(signature = (token, refresh_at=None))]
            fn token(&self, token: &Bound<'_, PyAny>, refresh_at: Option<f64>) -> PyResult<()> {
                let (t, at) = token_of(token, refresh_at)?;
                lock(&self.0).token(t, at);
                Ok(())
            }

            /// The state as JSON text, to resume after a crash (the token is not in it).
            fn save(&self) -> String {
                lock(&self.0).save()
            }

            /// What the machine did since the events were last taken, oldest first: one dict
            /// per event, the core's ``MachineEvent`` (``kind``, ``operation``, ``attempt``,
            /// ``method``, ``path``, ``status``, ``transport``, ``rule``, ``reason``,
            /// ``wait_seconds``, ``state``, ``received_bytes``, ``total_bytes``, and ``level`` and ``message``: the log level and the
            /// one line, the same in every language). Never a token, a header or a body.
            /// ``min_level`` (``debug``, ``info`` or ``warning``): only the events at that level
            /// or above; the others are dropped without being built (a log that shows only
            /// warnings pays nothing for each request's ``debug`` events).
            #[pyo3(signature = (min_level=None))]
            fn take_events<'py>(
                &self,
                py: Python<'py>,
                min_level: Option<&str>,
            ) -> PyResult<Vec<Bound<'py, PyDict>>> {
                let min = event_level(py, min_level)?;
                let events = lock(&self.0).take_events_from(min);
                events.iter().map(|e| event_dict(py, e)).collect()
            }

            /// A machine saved by ``save()``; give it a token again.
            #[staticmethod]
            fn resume(saved: Text) -> PyResult<Self> {
                guard(|| Ok(Self(Mutex::new(<$core>::resume(&saved)?))))
            }
        }
    };
}

/// One API operation with its retries, ``Retry-After``, token refresh, idempotency key and rate
/// budget, as a machine: ``next(now, budget)`` says what to do, and you report what happened.
/// ``save()`` / ``Call.resume(text)`` keep it across a crash (never the token). Thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct Call(Mutex<machine::Call>);

api_machine!(Call, machine::Call, step, {
    #[new]
    #[pyo3(signature = (operation_id, *, path=None, query=None, body=None, token=None, tenant_id=None, user_id=None,
                        idempotency_key=None, idempotency_header=None, request_id=None, key_namespace=None,
                        max_attempts=None, max_elapsed_seconds=None, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        operation_id: Text,
        path: Option<&Bound<'_, PyAny>>,
        query: Option<&Bound<'_, PyAny>>,
        body: Option<&Bound<'_, PyAny>>,
        token: Option<&Bound<'_, PyAny>>,
        tenant_id: Option<Text>,
        user_id: Option<Text>,
        idempotency_key: Option<Text>,
        idempotency_header: Option<Text>,
        request_id: Option<Text>,
        key_namespace: Option<Text>,
        max_attempts: Option<i64>,
        max_elapsed_seconds: Option<f64>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        guard(|| {
            let params = request_params(
                py,
                path,
                query,
                body,
                None,
                tenant_id,
                user_id,
                idempotency_key,
                idempotency_header,
                request_id,
                key_namespace,
                None,
            )?;
            let options = royaltykit_host::call_options(max_attempts, max_elapsed_seconds, seed)?;
            let mut call = machine::Call::new(&operation_id, params, options)?;
            if let Some(t) = token {
                let (t, at) = token_of(t, None)?;
                call.token(t, at);
            }
            Ok(Self(Mutex::new(call)))
        })
    }

    /// A token exchange as a call: ``request`` from ``build_token_request`` or
    /// ``build_enterprise_token_request``, sent again by the exchange's retry rules; parse its
    /// ``Done`` response with ``parse_token_response``. Its credentials are never saved.
    #[staticmethod]
    #[pyo3(signature = (request, *, max_attempts=None, max_elapsed_seconds=None, seed=None))]
    fn exchange(
        request: PyRef<'_, crate::api::RequestDescriptor>,
        max_attempts: Option<i64>,
        max_elapsed_seconds: Option<f64>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        guard(|| {
            let options = royaltykit_host::call_options(max_attempts, max_elapsed_seconds, seed)?;
            Ok(Self(Mutex::new(machine::Call::exchange(
                request.0.clone(),
                options,
            )?)))
        })
    }

    /// The idempotency key of the logical request, once the first request is built.
    #[getter]
    fn idempotency_key(&self) -> Option<String> {
        lock(&self.0).idempotency_key().map(str::to_owned)
    }
});

/// A reporting export — create, poll, download — as a machine (see ``Call``); a create that may
/// have been applied is looked up by the data sent, never blindly sent again. Thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct ExportJob(Mutex<machine::ExportJob>);

api_machine!(ExportJob, machine::ExportJob, step, {
    #[new]
    #[pyo3(signature = (*, tenant_id, body, token=None, idempotency_header=None, request_id=None, max_polls=None,
                        max_attempts=None, max_elapsed_seconds=None, seed=None, id_field=None, state_field=None,
                        max_poll_seconds=None, reconcile_grace_seconds=None, min_poll_interval_seconds=None,
                        max_poll_interval_seconds=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tenant_id: Text,
        body: &Bound<'_, PyAny>,
        token: Option<&Bound<'_, PyAny>>,
        idempotency_header: Option<Text>,
        request_id: Option<Text>,
        max_polls: Option<i64>,
        max_attempts: Option<i64>,
        max_elapsed_seconds: Option<f64>,
        seed: Option<u64>,
        id_field: Option<Text>,
        state_field: Option<Text>,
        max_poll_seconds: Option<f64>,
        reconcile_grace_seconds: Option<f64>,
        min_poll_interval_seconds: Option<f64>,
        max_poll_interval_seconds: Option<f64>,
    ) -> PyResult<Self> {
        guard(|| {
            let mut job = machine::ExportJob::new(machine::ExportJobOptions {
                max_poll_seconds,
                reconcile_grace_seconds,
                min_poll_interval_seconds,
                max_poll_interval_seconds,
                tenant_id: tenant_id.0,
                body: json_body(py, Some(body))?.unwrap_or_default(),
                idempotency_header: idempotency_header.map(|t| t.0),
                request_id: request_id.map(|t| t.0),
                max_polls,
                call: royaltykit_host::call_options(max_attempts, max_elapsed_seconds, seed)?,
                id_field: id_field.map(|t| t.0),
                state_field: state_field.map(|t| t.0),
            })?;
            if let Some(t) = token {
                let (t, at) = token_of(t, None)?;
                job.token(t, at);
            }
            Ok(Self(Mutex::new(job)))
        })
    }

    /// The export's id, once known.
    #[getter]
    fn export_id(&self) -> Option<String> {
        lock(&self.0).export_id().map(str::to_owned)
    }

    /// The checkpoint to keep before performing the step just given, or ``None``: the saved
    /// state when that step is a ``Send`` or a ``Wait`` and it changed since the last one given
    /// (or resumed from), once per step.
    fn checkpoint(&self) -> Option<String> {
        lock(&self.0).checkpoint()
    }
});

/// What a ``Pages`` walk says to do next. Match on the variant: ``Fetch(query)``,
/// ``Done(end, pages, items)`` and ``Fail(error)``.
#[pyclass(frozen, module = "royaltykit")]
pub enum PagesStep {
    /// Request the list with ``query`` (the caller's own parameters with the page's, in order),
    /// then report its 2xx body to ``page``.
    Fetch { query: Vec<(String, String)> },
    /// The walk is over: ``end`` says why (``last``, ``max_pages`` or ``max_items``), ``pages``
    /// and ``items`` how many were read and given.
    Done { end: String, pages: u32, items: u64 },
    /// The list cannot be read on (the items given so far stand): ``error`` is the
    /// ``PaginationError`` to raise (``page_unreadable``, ``next_page_unknown``,
    /// ``list_cursor_repeated``). Over.
    Fail { error: Py<PyAny> },
}

#[pymethods]
impl PagesStep {
    fn __repr__(&self) -> String {
        match self {
            Self::Fetch { query } => format!("PagesStep.Fetch(query={query:?})"),
            Self::Done { end, pages, items } => {
                format!("PagesStep.Done(end={end:?}, pages={pages}, items={items})")
            }
            Self::Fail { error } => Python::attach(|py| {
                let error = error.bind(py);
                let code = error
                    .getattr("code")
                    .and_then(|c| c.extract::<String>())
                    .unwrap_or_default();
                format!("PagesStep.Fail({code:?}: {error})")
            }),
        }
    }
}

/// A bound from Python as the core's `u32`: a negative one as 0 (which the core refuses,
/// saying why), one past `u32` as its largest value.
fn bound32(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// Every page of a list operation as a machine: ask ``next()``; for ``Fetch``, request the list
/// with its ``query`` (with your own path, tenant and user), report the 2xx body to ``page``,
/// and give the first ``take`` items it points at; until ``Done`` or ``Fail``. The walk never
/// loops and never gives an item twice. Thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct Pages(Mutex<machine::Pages>);

#[pymethods]
impl Pages {
    /// A walk over ``operation_id``'s pages from ``query`` (a mapping or pairs, as ``Call``
    /// takes it: its ``cursor``, ``page``, ``limit`` or ``size`` say where to start and the
    /// page size), bounded by ``max_pages`` and ``max_items``; ``page_size`` is the ``limit`` or
    /// ``size`` to ask for (default: the query's, else 100 for a reporting list, else the
    /// service's); ``id_field`` names an item's id for the export list's keyset cursor
    /// (default ``id``). ``InvalidArgumentError`` for an unknown operation, one that is not a
    /// GET, or bounds out of range.
    #[new]
    #[pyo3(signature = (operation_id, *, query=None, max_pages=None, max_items=None, page_size=None, id_field=None))]
    fn new(
        operation_id: Text,
        query: Option<&Bound<'_, PyAny>>,
        max_pages: Option<i64>,
        max_items: Option<i64>,
        page_size: Option<i64>,
        id_field: Option<Text>,
    ) -> PyResult<Self> {
        guard(|| {
            let options = machine::PagesOptions {
                max_pages: max_pages.map(bound32),
                max_items: max_items.map(|n| n.max(0).unsigned_abs()),
                page_size: page_size.map(bound32),
                id_field: id_field.map(|t| t.0),
            };
            let pages = machine::Pages::new(&operation_id, params(query, "query")?, options)?;
            Ok(Self(Mutex::new(pages)))
        })
    }

    /// The step pending (``PagesStep.Fetch``, ``.Done``, ``.Fail``); the same until a page is
    /// reported.
    fn next(&self, py: Python<'_>) -> PyResult<PagesStep> {
        let step = guard(|| Ok(lock(&self.0).next()))?;
        Ok(match step {
            machine::PagesStep::Fetch { query } => PagesStep::Fetch { query },
            machine::PagesStep::Done { end, pages, items } => PagesStep::Done {
                end: end.as_str().to_owned(),
                pages,
                items,
            },
            machine::PagesStep::Fail { error } => PagesStep::Fail {
                error: crate::error_object(py, *error)?.unbind(),
            },
        })
    }

    /// The 2xx body of the page fetched: where its items are (``PageItems``: the page itself
    /// when ``member`` is None, else ``page[member]``; give the first ``take``), or None when
    /// the page has no items array (the next step is then ``Fail``). ``InvalidArgumentError``
    /// when no fetch is pending.
    fn page(&self, body: Body<'_>) -> PyResult<Option<PageItems>> {
        guard(|| Ok(lock(&self.0).page(&body)?))
    }

    /// Pages read so far.
    #[getter]
    fn pages(&self) -> u32 {
        lock(&self.0).pages()
    }

    /// Items given so far.
    #[getter]
    fn items(&self) -> u64 {
        lock(&self.0).items()
    }

    fn __repr__(&self) -> String {
        let p = lock(&self.0);
        format!("Pages(pages={}, items={})", p.pages(), p.items())
    }
}

/// What a ``Recovery`` run says to do next. Match on the variant: ``Fetch(query)``,
/// ``Check(keys)``, ``Replay(delivery)``, ``Done(report)`` and ``Fail(error)``.
#[pyclass(frozen, module = "royaltykit")]
pub enum RecoveryStep {
    /// Request ``listEnterpriseWebhookDeliveries`` for the subscription (path ``reference``)
    /// with ``query``, then report its 2xx body to ``page``.
    Fetch { query: Vec<(String, String)> },
    /// Look each of ``keys`` up in the store the receiver uses, without claiming it, then report
    /// each one's state (``new``, ``in_progress``, ``done``), in order, to ``checked``.
    Check { keys: Vec<String> },
    /// Request ``replayEnterpriseWebhookDelivery`` for the subscription and ``delivery`` (path
    /// ``deliveryReference``), then report its 2xx body to ``replayed``, or the code of the
    /// library error it raised to ``replay_failed``.
    Replay { delivery: String },
    /// The run is over: ``report`` says what it found and did.
    Done { report: Py<RecoveryReport> },
    /// The delivery log cannot be read on (nothing was replayed): ``error`` is the
    /// ``PaginationError`` to raise. Over.
    Fail { error: Py<PyAny> },
}

#[pymethods]
impl RecoveryStep {
    fn __repr__(&self) -> String {
        match self {
            Self::Fetch { query } => format!("RecoveryStep.Fetch(query={query:?})"),
            Self::Check { keys } => format!("RecoveryStep.Check(keys={keys:?})"),
            Self::Replay { delivery } => format!("RecoveryStep.Replay(delivery={delivery:?})"),
            Self::Done { report } => {
                let r = report.get();
                format!(
                    "RecoveryStep.Done(considered={}, replayed={}, end={:?})",
                    r.considered,
                    r.replayed,
                    r.end.as_str()
                )
            }
            Self::Fail { error } => Python::attach(|py| {
                let error = error.bind(py);
                let code = error
                    .getattr("code")
                    .and_then(|c| c.extract::<String>())
                    .unwrap_or_default();
                format!("RecoveryStep.Fail({code:?}: {error})")
            }),
        }
    }
}

/// An instant as the core's `f64` Unix seconds: an `int` or a `float` as given (the core checks
/// it), or an aware `datetime`; a naive one is `invalid_argument` naming `name`.
fn instant(obj: &Bound<'_, PyAny>, name: &'static str) -> crate::R<f64> {
    use pyo3::types::{PyBool, PyDateTime, PyFloat, PyInt};
    if obj.is_instance_of::<PyDateTime>() {
        if obj.getattr("tzinfo")?.is_none() {
            return Err(royaltykit::ArgumentError::new(
                name,
                "is a naive datetime: give it a timezone (its instant is unknown)",
            )
            .into());
        }
        return Ok(obj.call_method0("timestamp")?.extract::<f64>()?);
    }
    if (obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>())
        || obj.is_instance_of::<PyFloat>()
    {
        return Ok(obj.extract::<f64>()?);
    }
    let got = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string());
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "{name} must be Unix seconds (an int or a float) or an aware datetime, not {got}"
    ))
    .into())
}

/// One delivery-recovery run for one webhook subscription as a machine: ask ``next()``; for
/// ``Fetch``, request the subscription's delivery log with its ``query`` and report the 2xx body
/// to ``page``; for ``Check``, look each key up in the receiver's store without claiming it and
/// report the states to ``checked``; for ``Replay``, request the replay and report its 2xx body
/// to ``replayed`` (or its failure's code to ``replay_failed``); until ``Done`` (the
/// ``RecoveryReport``) or ``Fail``. Every decision (which deliveries were processed, which are
/// still attempted, which to replay, how many) is the core's. Thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct Recovery(Mutex<machine::Recovery>);

impl Recovery {
    /// The step `s` as Python's `RecoveryStep`.
    fn step(py: Python<'_>, s: machine::RecoveryStep) -> PyResult<RecoveryStep> {
        Ok(match s {
            machine::RecoveryStep::Fetch { query } => RecoveryStep::Fetch { query },
            machine::RecoveryStep::Check { keys } => RecoveryStep::Check { keys },
            machine::RecoveryStep::Replay { delivery } => RecoveryStep::Replay { delivery },
            machine::RecoveryStep::Done { report } => RecoveryStep::Done {
                report: Py::new(py, report)?,
            },
            machine::RecoveryStep::Fail { error } => RecoveryStep::Fail {
                error: crate::error_object(py, *error)?.unbind(),
            },
        })
    }

    /// Runs a generated input (`recovery_methods!`) under the lock; the next step.
    fn then(
        &self,
        py: Python<'_>,
        input: impl FnOnce(&mut machine::Recovery) -> crate::R<()>,
    ) -> PyResult<RecoveryStep> {
        let mut run = lock(&self.0);
        guard(|| input(&mut run))?;
        let step = guard(|| Ok(run.next()))?;
        Self::step(py, step)
    }
}

crate::generated::recovery_methods! {
    /// The operation a recovery lists a subscription's deliveries with.
    #[classattr]
    const LIST_DELIVERIES: &'static str = machine::LIST_DELIVERIES;
    /// The operation a recovery replays a delivery with.
    #[classattr]
    const REPLAY_DELIVERY: &'static str = machine::REPLAY_DELIVERY;
    /// The most replays one run sends when ``max_replays`` is not given.
    #[classattr]
    const DEFAULT_MAX_REPLAYS: u32 = machine::DEFAULT_MAX_REPLAYS;
    /// The most replays of one delivery, all failed, before it is left alone, when
    /// ``max_replays_per_delivery`` is not given.
    #[classattr]
    const DEFAULT_MAX_REPLAYS_PER_DELIVERY: u32 = machine::DEFAULT_MAX_REPLAYS_PER_DELIVERY;
    /// The most log entries one run reads when ``max_entries`` is not given.
    #[classattr]
    const DEFAULT_MAX_ENTRIES: u64 = machine::DEFAULT_MAX_ENTRIES;

    /// A run over ``subscription``'s delivery log checking the keys of ``namespace`` (the
    /// receiver's namespace: its delivery keys are ``delivery_key(namespace,
    /// Service-Webhook-Id)``) for the deliveries from ``since`` on, at ``now`` (each Unix seconds
    /// or an aware datetime; ``now`` defaults to the system clock), bounded by ``max_replays``
    /// (replays sent per run), ``max_replays_per_delivery`` (failed replays of one delivery
    /// before it is left alone) and ``max_entries`` (log entries read). ``InvalidArgumentError``
    /// for an empty subscription, an empty or over-long namespace, a ``since`` or ``now`` that is
    /// not finite Unix seconds (or a naive datetime), or a bound of 0.
    #[new]
    #[pyo3(signature = (subscription, namespace, since, now=None, *, max_replays=None, max_replays_per_delivery=None,
                        max_entries=None))]
    fn new(
        subscription: Text,
        namespace: Text,
        since: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
        max_replays: Option<i64>,
        max_replays_per_delivery: Option<i64>,
        max_entries: Option<i64>,
    ) -> PyResult<Self> {
        guard(|| {
            let since = instant(since, "since")?;
            let now = match now.filter(|n| !n.is_none()) {
                Some(n) => instant(n, "now")?,
                None => royaltykit_host::now_unix_f64(),
            };
            let options = machine::RecoveryOptions {
                max_replays: max_replays.map(bound32),
                max_replays_per_delivery: max_replays_per_delivery.map(bound32),
                max_entries: max_entries.map(|n| n.max(0).unsigned_abs()),
            };
            let run = machine::Recovery::new(&subscription, &namespace, since, now, options)?;
            Ok(Self(Mutex::new(run)))
        })
    }

    /// The step pending (``RecoveryStep.Fetch``, ``.Check``, ``.Replay``, ``.Done``,
    /// ``.Fail``); the same until its outcome is reported.
    fn next(&self, py: Python<'_>) -> PyResult<RecoveryStep> {
        let step = guard(|| Ok(lock(&self.0).next()))?;
        Self::step(py, step)
    }

    fn __repr__(&self) -> String {
        "Recovery()".to_owned()
    }
}

/// A claim's row as the core's entry: an ``InboxEntry`` as is, or the five columns the claim
/// returns (``inbox_key``, ``delivery_id``, ``event``, ``body``, ``attempts``).
pub(crate) fn inbox_entry(row: &Bound<'_, PyAny>) -> crate::R<InboxEntry> {
    if let Ok(entry) = row.cast::<InboxEntry>() {
        return Ok(entry.get().clone());
    }
    let (key, delivery_id, event, body, attempts): (Text, Text, Text, Text, i64) =
        row.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "entry must be an InboxEntry, the claim's row of five columns (inbox_key, delivery_id, event, body, attempts), or None",
            )
        })?;
    let attempts = u32::try_from(attempts).map_err(|_| {
        royaltykit::ArgumentError::new(
            "attempts",
            format!("must be 0 to {}, got {attempts}", u32::MAX),
        )
    })?;
    Ok(InboxEntry {
        key: key.0,
        delivery_id: delivery_id.0,
        event: event.0,
        body: body.0,
        attempts,
    })
}

/// The worker of an inbox as a machine: ask ``next()``, do what it says with your inbox (the
/// statements of ``SqlInboxProtocol``) and your handler, report the outcome, and ask again —
/// until ``Drained``, or for as long as you run it (stop at any ``Claim`` or ``Idle``). A claim
/// counts the attempt before the handler runs; the handler's effect and the mark share one
/// transaction; a failure rolls back and settles the entry (the core's backoff, or poison after
/// ``max_attempts``). Every decision is the core's. Thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct InboxWorker(Mutex<machine::InboxWorker>);

impl InboxWorker {
    /// Runs an input under the lock; the next step.
    fn then(
        &self,
        _py: Python<'_>,
        f: impl FnOnce(&mut machine::InboxWorker) -> crate::R<()>,
    ) -> PyResult<InboxStep> {
        let mut w = lock(&self.0);
        guard(|| f(&mut w))?;
        Ok(w.next())
    }
}

crate::generated::inbox_worker_methods! {
    /// Seconds between claims when nothing is due, when ``poll_seconds`` is not given.
    #[classattr]
    const DEFAULT_POLL_SECONDS: f64 = machine::DEFAULT_POLL_SECONDS;
    /// The most handler runs ``max_attempts`` may allow.
    #[classattr]
    const MAX_ATTEMPTS: u32 = machine::MAX_INBOX_ATTEMPTS;

    /// A worker: ``max_attempts`` handler runs of an entry before it is poison (default 5),
    /// ``poll_seconds`` between claims when nothing is due (default 1), ``transactional``
    /// (default True: the effect and the mark share a transaction), ``drain`` (stop at the first
    /// claim that finds nothing due), ``seed`` for the backoff's jitter (default: the OS random
    /// source). ``InvalidArgumentError`` for ``max_attempts`` outside 1 to ``MAX_ATTEMPTS`` or a
    /// poll interval that is not more than 0 and at most 3600.
    #[new]
    #[pyo3(signature = (*, max_attempts=None, poll_seconds=None, transactional=None, drain=None, seed=None))]
    fn new(
        max_attempts: Option<i64>,
        poll_seconds: Option<f64>,
        transactional: Option<bool>,
        drain: Option<bool>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        guard(|| {
            let options = machine::InboxOptions {
                max_attempts: max_attempts.map(bound32),
                poll_seconds,
                transactional,
                drain,
            };
            let seed = match seed {
                Some(s) => s,
                None => royaltykit_host::random_u64()?,
            };
            Ok(Self(Mutex::new(machine::InboxWorker::new(&options, seed)?)))
        })
    }

    /// The step pending (``InboxStep.Claim``, ``.Idle``, ``.Drained``, ``.Begin``,
    /// ``.RunHandler``, ``.MarkDone``, ``.Commit``, ``.Rollback``, ``.Settle``); the same until
    /// its outcome is reported.
    fn next(&self) -> InboxStep {
        lock(&self.0).next()
    }

    /// What the claim returned at ``now`` (default: the clock): its row (the five columns, or
    /// an ``InboxEntry``), or None when nothing is due. Returns the next step.
    /// ``InvalidArgumentError`` when no claim is pending. Deprecated (kept for one release): use
    /// ``report(("claimed", row), now)``, the worker's one input.
    #[pyo3(signature = (entry, now=None))]
    fn claimed(
        &self,
        py: Python<'_>,
        entry: Option<&Bound<'_, PyAny>>,
        now: Option<f64>,
    ) -> PyResult<InboxStep> {
        deprecated(py, c"InboxWorker.claimed() is deprecated (kept for one release): use report((\"claimed\", row), now)")?;
        let entry = guard(|| entry.filter(|e| !e.is_none()).map(inbox_entry).transpose())?;
        self.then(py, |w| Ok(w.claimed(entry, royaltykit_host::now_or_clock_f64(now))?))
    }

    /// Entries processed (committed) so far.
    #[getter]
    fn processed(&self) -> u64 {
        lock(&self.0).processed()
    }

    /// Failed attempts settled to be retried so far.
    #[getter]
    fn retried(&self) -> u64 {
        lock(&self.0).retried()
    }

    /// Entries set aside as poison so far.
    #[getter]
    fn poisoned(&self) -> u64 {
        lock(&self.0).poisoned()
    }

    fn __repr__(&self) -> String {
        let w = lock(&self.0);
        format!(
            "InboxWorker(processed={}, retried={}, poisoned={})",
            w.processed(),
            w.retried(),
            w.poisoned()
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::py_export!(m;
        class WebhookReceipt, ReceiptStep, CallStep, Call, ExportJob, Session, Pages, PagesStep, PageItems,
            Recovery, RecoveryStep, RecoveryReport, RecoveredDelivery, InboxWorker, InboxStep, InboxEntry
    );
    Ok(())
}
