//! The protocol machines for Kotlin (`WebhookReceipt`, `Call`, `ExportJob`, `Pages`,
//! `Recovery`; the inbox worker is in `inbox.rs`, the fleet's `FleetToken` in `fleet.rs`) and the `Session` their calls share: conversions only. Each input returns the step that follows, so a
//! step costs one JNA crossing.

use crate::api::{
    core_params, descriptor, BearerToken, EnterpriseToken, Param, RequestDescriptor, RequestParams,
    Token,
};
use crate::retry::RateBudget;
use crate::{DedupWindow, Result};
use royaltykit::machine::{
    self, CallFailure, PageItems, PagesEnd, ReceiptStep, RecoveryOptions, RecoveryReport,
};
use royaltykit::retry::{Reconcile, TransportFailure};
use royaltykit::webhook::{VerifiedWebhook, WebhookError};
use royaltykit::{ArgumentError, Error};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One webhook delivery as a machine (`WebhookVerifier.receipt`): ask `next()`, do what it says,
/// report the outcome (which returns the next step), until it says `Reply`. On a `DedupWindow`
/// (`receiptOn`) it claims, releases and commits there itself. Thread-safe.
#[derive(uniffi::Object)]
pub struct WebhookReceipt {
    receipt: Mutex<machine::WebhookReceipt>,
    /// The window it settles its store steps on, and the caller's fixed clock (None: the clock).
    window: Option<(Arc<DedupWindow>, Option<i64>)>,
}

impl WebhookReceipt {
    pub(crate) fn new(
        namespace: &str,
        verified: std::result::Result<VerifiedWebhook, WebhookError>,
        window: Option<(Arc<DedupWindow>, Option<i64>)>,
        transactional: bool,
        claim_content_key: bool,
        inbox: bool,
    ) -> Result<Arc<Self>> {
        let mut receipt = machine::WebhookReceipt::new(namespace, verified, claim_content_key)?;
        if transactional {
            receipt = receipt.transactional();
        }
        if inbox {
            receipt = receipt.inbox();
        }
        let r = Self {
            receipt: Mutex::new(receipt),
            window,
        };
        r.settled(&mut lock(&r.receipt));
        Ok(Arc::new(r))
    }

    /// The pending step, after the window's steps when it has one.
    fn settled(&self, r: &mut machine::WebhookReceipt) -> ReceiptStep {
        match &self.window {
            Some((w, now)) => r.settle(&mut w.lock(), royaltykit_host::now_or_clock(*now)),
            None => r.next(),
        }
    }

    /// Runs a generated input (`webhook_receipt_inputs!`) under the lock; the next step.
    fn then(
        &self,
        input: impl FnOnce(&mut machine::WebhookReceipt) -> std::result::Result<(), royaltykit::Error>,
    ) -> Result<ReceiptStep> {
        let mut r = lock(&self.receipt);
        input(&mut r)?;
        Ok(self.settled(&mut r))
    }
}

#[uniffi::export]
impl WebhookReceipt {
    /// The step pending; the same until an outcome is reported.
    pub fn next(&self) -> ReceiptStep {
        lock(&self.receipt).next()
    }
    /// Once replied, what happened (`processed`, `duplicate`, `in_progress`, `rejected`,
    /// `acknowledged`, `queued`, `handler_failed`, `store_unavailable`, `claim_lost`); null
    /// before.
    pub fn outcome(&self) -> Option<String> {
        lock(&self.receipt).outcome().map(str::to_owned)
    }
    /// The verified delivery (null when verification failed).
    pub fn delivery(&self) -> Option<VerifiedWebhook> {
        lock(&self.receipt).delivery().cloned()
    }
    /// Whether the receipt has reached its `Reply`.
    pub fn is_finished(&self) -> bool {
        lock(&self.receipt).is_finished()
    }
}

crate::generated::webhook_receipt_inputs!();

/// What a host does next for a `Call` or an `ExportJob`.
// Lowered across the FFI by value once per step: the size of `Fail` on the Rust stack does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(uniffi::Enum)]
pub enum CallStep {
    /// Send `request`, then report `response` or `transportFailure`.
    Send { request: Arc<RequestDescriptor> },
    /// Ask again after `seconds`.
    Wait { seconds: f64 },
    /// Obtain a token, then report `token` (on a `Session`: `session.storeToken`, or
    /// `session.exchangeFailed` / `session.abandonExchange`, then wake the calls waiting on it;
    /// on a fleet's session: run a `FleetToken` around the exchange instead).
    RefreshToken { reason: String },
    /// (A machine on a fleet's `Session`: `Fleet.session`.) Reserve the request in the fleet's
    /// rate budget: send `command` to the fleet's Redis as it is (an `EVAL` of `reserveScript()`),
    /// then report its reply to `reserved` (nil: null), or `reserveFailed` when Redis cannot be
    /// reached; then ask again (the request goes out in the same second, or the call waits).
    Reserve { command: Vec<String> },
    /// (A machine on a `Session`.) Another call of the session is obtaining the token: wait until
    /// `session.version()` differs from `version` (the session's version when this step was
    /// decided) or `seconds` pass, then ask again.
    AwaitToken { seconds: f64, version: i64 },
    /// The request may have been applied: check its effect as `reconcile` says. Over. For an
    /// export job (`stage` `reconcile`), `candidates` are the ids of the exports that may be the
    /// job's own (possibly none); a call's are empty.
    Reconcile {
        reconcile: Reconcile,
        reason: String,
        candidates: Vec<String>,
        stage: Option<String>,
    },
    /// The 2xx response (for an export job: the export's id and its complete artifact). Over.
    Done {
        status: u16,
        headers: Vec<Param>,
        body: Vec<u8>,
        export_id: Option<String>,
        /// Whether `body` is JSON by its `Content-Type`; else bytes (an artifact).
        json: bool,
    },
    /// Stopped: `rule` and `reason` say why; `error` is the exception to throw (null for a
    /// transport failure); `stage` is the export job's stage. Over.
    Fail {
        rule: String,
        reason: String,
        status: Option<u16>,
        transport: Option<TransportFailure>,
        retry_after_seconds: Option<f64>,
        error: Option<Error>,
        stage: Option<String>,
        export_id: Option<String>,
        /// The requests the call sent.
        attempts: i64,
    },
}

/// What became of a `Send` or a `Reserve` (`report`, `reportIn`): the core's `StepOutcome`, its
/// headers and body owned as they cross.
#[derive(uniffi::Enum)]
pub enum StepOutcome {
    /// The response to `Send`, its body read whole.
    Response {
        status: i64,
        headers: HashMap<String, String>,
        body: Vec<u8>,
    },
    /// The response to `Send` whose body went to your sink (`streams`), `length` bytes.
    Streamed {
        status: i64,
        headers: HashMap<String, String>,
        length: i64,
    },
    /// No response to `Send`; after a `Reserve`, the fleet's Redis could not be reached.
    NoResponse { failure: TransportFailure },
    /// The fleet's reply to `Reserve` (null for nil).
    Reply { reply: Option<String> },
}

impl StepOutcome {
    /// The core's outcome, given to `f`.
    pub(crate) fn report<R>(
        &self,
        f: impl FnOnce(machine::StepOutcome<'_, HashMap<String, String>>) -> Result<R>,
    ) -> Result<R> {
        f(match self {
            Self::Response {
                status,
                headers,
                body,
            } => machine::StepOutcome::Response {
                status: *status,
                headers,
                body,
            },
            Self::Streamed {
                status,
                headers,
                length,
            } => machine::StepOutcome::Streamed {
                status: *status,
                headers,
                length: u64::try_from(*length)
                    .map_err(|_| ArgumentError::new("length", "must be 0 or more"))?,
            },
            Self::NoResponse { failure } => machine::StepOutcome::NoResponse(*failure),
            Self::Reply { reply } => machine::StepOutcome::Reply(reply.as_deref()),
        })
    }
}

/// A step and the events of the machine up to it (`advanceIn`).
#[derive(uniffi::Record)]
pub struct Advance {
    /// The step.
    pub step: CallStep,
    /// What the machine did since the events were last taken, oldest first.
    pub events: Vec<machine::MachineEvent>,
}

fn fail(f: CallFailure, stage: Option<String>, export_id: Option<String>) -> CallStep {
    CallStep::Fail {
        rule: f.rule,
        reason: f.reason,
        status: f.status,
        transport: f.transport,
        retry_after_seconds: f.retry_after_seconds,
        error: f.error,
        stage,
        export_id,
        attempts: f.attempts,
    }
}

/// The exception to throw for a `CallStep.Fail` or `CallStep.Reconcile`, from the core's error
/// table: the error a failure carries (`RoyaltyKitException.Api`, …), else
/// `RoyaltyKitException.CallFailed`, whose message names `operationId`, the host of `baseUrl`,
/// the reason, the attempts and `cause` (the transport's last error, in words), or
/// `RoyaltyKitException.ReconcileRequired`. Any other step is `InvalidArgument`.
#[uniffi::export]
pub fn call_step_error(
    step: CallStep,
    operation_id: String,
    base_url: String,
    cause: Option<String>,
) -> Error {
    match step {
        CallStep::Fail { error: Some(e), .. } => e,
        CallStep::Fail {
            rule,
            reason,
            status,
            transport,
            retry_after_seconds,
            error: None,
            stage,
            export_id,
            attempts,
        } => CallFailure {
            rule,
            reason,
            status,
            transport,
            retry_after_seconds,
            error: None,
            attempts,
        }
        .into_error(
            &operation_id,
            &base_url,
            stage.as_deref(),
            export_id.as_deref(),
            cause.as_deref(),
        ),
        CallStep::Reconcile {
            reconcile,
            reason,
            candidates,
            stage,
        } => machine::reconcile_required(
            reconcile,
            &reason,
            &operation_id,
            candidates,
            stage.as_deref(),
        ),
        _ => royaltykit::ArgumentError::new("step", "not a Fail or Reconcile step").into(),
    }
}

fn params(pairs: Vec<(String, String)>) -> Vec<Param> {
    pairs
        .into_iter()
        .map(|(name, value)| Param { name, value })
        .collect()
}

/// A session's version as Kotlin's `Long` (a signed number, callable from Java).
fn version_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The core's step of a `Call` or an `ExportJob` as this module's `CallStep` (`version`: the
/// session's, for `AwaitToken`).
fn step(s: machine::Step, version: u64) -> CallStep {
    match s {
        machine::Step::Send { request } => CallStep::Send {
            request: descriptor(request),
        },
        machine::Step::Wait { seconds } => CallStep::Wait { seconds },
        machine::Step::RefreshToken { reason } => CallStep::RefreshToken { reason },
        machine::Step::Reserve { command } => CallStep::Reserve { command },
        machine::Step::AwaitToken { seconds } => CallStep::AwaitToken {
            seconds,
            version: version_of(version),
        },
        machine::Step::Reconcile {
            reconcile,
            reason,
            candidates,
            stage,
        } => CallStep::Reconcile {
            reconcile,
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
            headers: params(response.headers),
            body: response.body,
            export_id,
        },
        machine::Step::Fail {
            failure,
            stage,
            export_id,
        } => fail(failure, stage, export_id),
    }
}

/// The exported inputs of a `Call` or an `ExportJob` (the core gives both the same input
/// methods), next to each type's own items.
macro_rules! api_machine {
    ($ty:ident, $core:ty, $step:ident, { $($own:tt)* }) => {
        #[uniffi::export]
        impl $ty {
            $($own)*

            /// A machine saved by `save()`; give it a token again.
            #[uniffi::constructor]
            pub fn resume(saved: String) -> Result<Arc<Self>> {
                Ok(Arc::new(Self(Mutex::new(<$core>::resume(&saved)?))))
            }
            /// The step at `now` (default: the system clock) for a machine standing alone (its
            /// token from `token`), taking one request from `budget` before a send.
            #[uniffi::method(default(now = None, budget = None))]
            pub fn next(&self, now: Option<f64>, budget: Option<Arc<RateBudget>>) -> Result<CallStep> {
                let mut b = budget.as_ref().map(|b| lock(&b.0));
                Ok($step(lock(&self.0).next(royaltykit_host::now_or_clock_f64(now), b.as_deref_mut())?, 0))
            }
            /// The step at `now` (null: the system clock) for a machine on `session`: its
            /// token and rate budget are the session's, shared with the session's other calls.
            /// As `next`, and `AwaitToken` while another call of the session obtains the token
            /// (one exchange in flight per session); `Fail` with rule `token_exchange_failed`
            /// when that exchange failed.
            pub fn next_in(&self, now: Option<f64>, session: Arc<Session>) -> Result<CallStep> {
                let mut machine = lock(&self.0);
                session.with(|s| {
                    let step = machine.next_in(royaltykit_host::now_or_clock_f64(now), s)?;
                    Ok($step(step, s.version()))
                })
            }
            /// `nextIn(now, session)` and `takeEvents(minLevel)` in one call, the events taken
            /// after the step was decided: what the clients' loops ask at each step.
            #[uniffi::method(default(min_level = None))]
            pub fn advance_in(&self, now: f64, session: Arc<Session>, min_level: Option<machine::EventLevel>) -> Result<Advance> {
                let mut machine = lock(&self.0);
                session.with(|s| {
                    let (step, events) = machine.advance_in(now, s, min_level)?;
                    Ok(Advance { step: $step(step, s.version()), events })
                })
            }
            /// What became of the step performed, at `now` (default: the system clock): the one
            /// input after `Send` and `Reserve`. `InvalidArgument` for an outcome the pending
            /// step cannot have.
            #[uniffi::method(default(now = None))]
            pub fn report(&self, outcome: StepOutcome, now: Option<f64>) -> Result<()> {
                let now = royaltykit_host::now_or_clock_f64(now);
                outcome.report(|o| Ok(lock(&self.0).report(o, now)?))
            }
            /// `report(outcome, now)` then `advanceIn(now, session, minLevel)`, in one call: what
            /// the clients' loops give after each `Send` and `Reserve`.
            #[uniffi::method(default(min_level = None))]
            pub fn report_in(&self, outcome: StepOutcome, now: f64, session: Arc<Session>, min_level: Option<machine::EventLevel>) -> Result<Advance> {
                self.report(outcome, Some(now))?;
                self.advance_in(now, session, min_level)
            }
            /// `response(status, headers, body, now)` then `advanceIn(now, session, minLevel)`, in
            /// one call. Deprecated (kept for one release): `reportIn(StepOutcome.Response(…), …)`.
            #[uniffi::method(default(min_level = None))]
            pub fn respond_in(&self, status: i64, headers: HashMap<String, String>, body: Vec<u8>, now: f64, session: Arc<Session>, min_level: Option<machine::EventLevel>) -> Result<Advance> {
                lock(&self.0).response(status, &headers, &body, now)?;
                self.advance_in(now, session, min_level)
            }
            /// The response to the request sent. Deprecated (kept for one release):
            /// `report(StepOutcome.Response(status, headers, body), now)`.
            #[uniffi::method(default(now = None))]
            pub fn response(&self, status: i64, headers: HashMap<String, String>, body: Vec<u8>, now: Option<f64>) -> Result<()> {
                Ok(lock(&self.0).response(status, &headers, &body, royaltykit_host::now_or_clock_f64(now))?)
            }
            /// Whether a response with `status` is streamed to your own sink (a file) and
            /// reported by `streamedResponse`: only a 2xx to a download.
            pub fn streams(&self, status: i64) -> bool {
                lock(&self.0).streams(status)
            }
            /// The download's body is arriving: `received` bytes so far, of `total` (its
            /// `Content-Length`, when given): a `progress` event at each tenth of it and when it
            /// is whole, never more.
            #[uniffi::method(default(total = None))]
            pub fn progress(&self, received: i64, total: Option<i64>) {
                if let Ok(received) = u64::try_from(received) {
                    lock(&self.0).progress(received, total.and_then(|t| u64::try_from(t).ok()));
                }
            }
            /// A download body you streamed to your sink, `length` bytes: a partial one is read
            /// again (start the sink afresh); `Done` then has an empty body. Deprecated (kept for
            /// one release): `report(StepOutcome.Streamed(status, headers, length), now)`.
            #[uniffi::method(default(now = None))]
            pub fn streamed_response(&self, status: i64, headers: HashMap<String, String>, length: i64, now: Option<f64>) -> Result<()> {
                let length = u64::try_from(length)
                    .map_err(|_| royaltykit::ArgumentError::new("length", "must be 0 or more"))?;
                Ok(lock(&self.0).streamed_response(status, &headers, length, royaltykit_host::now_or_clock_f64(now))?)
            }
            /// No response: `TIMEOUT`, `CONNECT_FAILED` (nothing was sent) or `CONNECTION_LOST`.
            /// Deprecated (kept for one release): `report(StepOutcome.NoResponse(failure), now)`.
            #[uniffi::method(default(now = None))]
            pub fn transport_failure(&self, failure: TransportFailure, now: Option<f64>) -> Result<()> {
                Ok(lock(&self.0).transport_failure(failure, royaltykit_host::now_or_clock_f64(now))?)
            }
            /// A token for the requests to come; `refreshAt` (Unix seconds) is when to obtain
            /// the next.
            #[uniffi::method(default(refresh_at = None))]
            pub fn token(&self, token: Arc<BearerToken>, refresh_at: Option<f64>) {
                lock(&self.0).token(token.0.clone(), refresh_at);
            }
            /// (Fleet.) The reply of the pending `Reserve` at `now` (default: the system clock):
            /// its text, null for nil. `ok` lets the next step send (in the same second); `wait
            /// <second> <window>` holds the machine until that second (a `rate_limited` event;
            /// never sent uncounted). `InvalidArgument` when no reservation is pending.
            /// Deprecated (kept for one release): `report(StepOutcome.Reply(reply), now)`.
            #[uniffi::method(default(now = None))]
            pub fn reserved(&self, reply: Option<String>, now: Option<f64>) -> Result<()> {
                Ok(lock(&self.0).reserved(reply.as_deref(), royaltykit_host::now_or_clock_f64(now))?)
            }
            /// (Fleet.) The fleet's Redis could not be reached for the pending `Reserve`: the
            /// machine waits a second and asks again (a `rate_limited` event; it never sends
            /// uncounted). `InvalidArgument` when no reservation is pending. Deprecated (kept for
            /// one release): `report(StepOutcome.NoResponse(TransportFailure.CONNECT_FAILED), now)`.
            #[uniffi::method(default(now = None))]
            pub fn reserve_failed(&self, now: Option<f64>) -> Result<()> {
                Ok(lock(&self.0).reserve_failed(royaltykit_host::now_or_clock_f64(now))?)
            }
            /// The state as JSON text (never the token).
            pub fn save(&self) -> String {
                lock(&self.0).save()
            }
            /// What the machine did since the events were last taken, oldest first (never a
            /// token, a header or a body); with `minLevel`, only those at that level or above
            /// (the others are dropped without being built).
            #[uniffi::method(default(min_level = None))]
            pub fn take_events(&self, min_level: Option<machine::EventLevel>) -> Vec<machine::MachineEvent> {
                lock(&self.0).take_events_from(min_level)
            }
        }
    };
}

/// One API operation with its retries, `Retry-After`, token refresh, idempotency key and rate
/// budget, as a machine. `save()` / `Call.resume(text)` keep it across a crash (never the token).
/// Thread-safe.
#[derive(uniffi::Object)]
pub struct Call(Mutex<machine::Call>);

api_machine!(Call, machine::Call, step, {
    /// A call of `operationId` with `params` (its `token`, if any, is the first one used;
    /// `keyRandom` is ignored: the key comes from `seed`, default the OS RNG).
    #[uniffi::constructor(default(max_attempts = None, max_elapsed_seconds = None, seed = None))]
    pub fn new(
        operation_id: String,
        params: RequestParams,
        max_attempts: Option<i64>,
        max_elapsed_seconds: Option<f64>,
        seed: Option<u64>,
    ) -> Result<Arc<Self>> {
        let mut p = core_params(params)?;
        p.key_random = None;
        let token = p.token.take();
        let options = royaltykit_host::call_options(max_attempts, max_elapsed_seconds, seed)?;
        let mut call = machine::Call::new(&operation_id, p, options)?;
        if let Some(t) = token {
            call.token(t, None);
        }
        Ok(Arc::new(Self(Mutex::new(call))))
    }
    /// A token exchange as a call: `request` from `buildTokenRequest` or
    /// `buildEnterpriseTokenRequest`, sent again by the exchange's retry rules; parse its `Done`
    /// response with `parseTokenResponse`. Its credentials are never saved.
    #[uniffi::constructor(default(max_attempts = None, max_elapsed_seconds = None, seed = None))]
    pub fn exchange(
        request: Arc<RequestDescriptor>,
        max_attempts: Option<i64>,
        max_elapsed_seconds: Option<f64>,
        seed: Option<u64>,
    ) -> Result<Arc<Self>> {
        let options = royaltykit_host::call_options(max_attempts, max_elapsed_seconds, seed)?;
        let call = machine::Call::exchange(request.0.clone(), options)?;
        Ok(Arc::new(Self(Mutex::new(call))))
    }
    /// The idempotency key of the logical request, once the first request is built.
    pub fn idempotency_key(&self) -> Option<String> {
        lock(&self.0).idempotency_key().map(str::to_owned)
    }
});

/// The parameters of an `ExportJob`.
#[derive(uniffi::Record)]
pub struct ExportJobParams {
    /// X-Tenant-ID.
    pub tenant_id: String,
    /// The CreateExportRequest as JSON.
    pub body: Vec<u8>,
    /// The header that carries the create's idempotency key, when known.
    #[uniffi(default = None)]
    pub idempotency_header: Option<String>,
    /// An id for this logical export (the create's key is derived from it).
    #[uniffi(default = None)]
    pub request_id: Option<String>,
    /// Most reads while not ready (default 100).
    #[uniffi(default = None)]
    pub max_polls: Option<i64>,
    /// Most seconds of polling, from the create's answer to the last read (default: bounded by
    /// `maxPolls` only).
    #[uniffi(default = None)]
    pub max_poll_seconds: Option<f64>,
    /// Seconds, in all, a reconciling job looks again for an export a lost create may have made
    /// before concluding there is none (default: the core's, 7; 0: one look).
    #[uniffi(default = None)]
    pub reconcile_grace_seconds: Option<f64>,
    /// The shortest wait between two reads of a pending export, in seconds (default: the
    /// spec's backoff, 2 s, 5 s, 15 s, then 30–60 s).
    #[uniffi(default = None)]
    pub min_poll_interval_seconds: Option<f64>,
    /// The longest wait between two reads of a pending export, in seconds (default: the
    /// backoff's 60 s cap).
    #[uniffi(default = None)]
    pub max_poll_interval_seconds: Option<f64>,
    /// Most attempts of each request (default 5).
    #[uniffi(default = None)]
    pub max_attempts: Option<i64>,
    /// Most seconds of each request's retries (default 300).
    #[uniffi(default = None)]
    pub max_elapsed_seconds: Option<f64>,
    /// The seed of jitter and keys (default: the OS RNG).
    #[uniffi(default = None)]
    pub seed: Option<u64>,
    /// The member holding the export's id (default `id`).
    #[uniffi(default = None)]
    pub id_field: Option<String>,
    /// The member holding the export's state (default `status`).
    #[uniffi(default = None)]
    pub state_field: Option<String>,
}

/// A reporting export (create, poll, download) as a machine; a create that may have been
/// applied is looked up by the data sent, never blindly sent again. Thread-safe.
#[derive(uniffi::Object)]
pub struct ExportJob(Mutex<machine::ExportJob>);

api_machine!(ExportJob, machine::ExportJob, step, {
    /// A job for `params`.
    #[uniffi::constructor]
    pub fn new(params: ExportJobParams) -> Result<Arc<Self>> {
        let job = machine::ExportJob::new(machine::ExportJobOptions {
            tenant_id: params.tenant_id,
            body: params.body,
            idempotency_header: params.idempotency_header,
            request_id: params.request_id,
            max_polls: params.max_polls,
            max_poll_seconds: params.max_poll_seconds,
            reconcile_grace_seconds: params.reconcile_grace_seconds,
            min_poll_interval_seconds: params.min_poll_interval_seconds,
            max_poll_interval_seconds: params.max_poll_interval_seconds,
            call: royaltykit_host::call_options(
                params.max_attempts,
                params.max_elapsed_seconds,
                params.seed,
            )?,
            id_field: params.id_field,
            state_field: params.state_field,
        })?;
        Ok(Arc::new(Self(Mutex::new(job))))
    }
    /// The export's id, once known.
    pub fn export_id(&self) -> Option<String> {
        lock(&self.0).export_id().map(str::to_owned)
    }
    /// The checkpoint to keep before performing the step just given, or null: the saved state
    /// when that step is a `Send` or a `Wait` and it changed since the last one given (or
    /// resumed from), once per step.
    pub fn checkpoint(&self) -> Option<String> {
        lock(&self.0).checkpoint()
    }
});

/// What the calls of one API client share (the core's `machine::Session`): the token, when to
/// refresh it, the one token exchange in flight, and the rate budget. Thread-safe: share one per
/// API client (per API key, or per client id and tenant) between threads and between the clients
/// of that key. Drive a machine on it with `nextIn(session)`; when a call is told to
/// `RefreshToken`, report the exchange's outcome here (`storeToken`, `exchangeFailed`,
/// `abandonExchange`) and wake the calls waiting on it (`AwaitToken`).
#[derive(uniffi::Object)]
pub struct Session(Mutex<machine::Session>);

impl Session {
    /// `f` on the core's session, under its lock (a machine's lock is taken before it).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut machine::Session) -> R) -> R {
        f(&mut lock(&self.0))
    }

    /// The core's `session` as the Kotlin object (a fleet's, from `Fleet.session`).
    pub(crate) fn wrap(session: machine::Session) -> Arc<Self> {
        Arc::new(Self(Mutex::new(session)))
    }
}

#[uniffi::export]
impl Session {
    /// A session without a token yet, pacing its calls by `budget` when given: the session
    /// keeps its own budget, starting from `budget`'s windows and what they counted so far (to
    /// pace several clients of one API key together, give them one session).
    #[uniffi::constructor(default(budget = None))]
    pub fn new(budget: Option<Arc<RateBudget>>) -> Arc<Self> {
        let budget = budget.map(|b| lock(&b.0).clone());
        Arc::new(Self(Mutex::new(machine::Session::new(budget))))
    }

    /// Stores a token for every call of the session — the one the call told to `RefreshToken`
    /// obtained, or one restored from a cache — and ends the exchange in flight; `refreshAt`
    /// (Unix seconds) is when to obtain the next (null: never due). Then wake the waiting calls.
    #[uniffi::method(default(refresh_at = None))]
    pub fn store_token(&self, token: Arc<BearerToken>, refresh_at: Option<f64>) {
        self.with(|s| s.store_token(token.0.clone(), refresh_at));
    }

    /// As `storeToken` for a reporting token, `refreshAt` defaulting to the token's own.
    #[uniffi::method(default(refresh_at = None))]
    pub fn store_reports_token(&self, token: Arc<Token>, refresh_at: Option<f64>) {
        let at = refresh_at.or(Some(token.0.refresh_at as f64));
        self.with(|s| s.store_token(token.0.bearer(), at));
    }

    /// As `storeToken` for an enterprise token, `refreshAt` defaulting to the token's own (none
    /// for a token without an expiry).
    #[uniffi::method(default(refresh_at = None))]
    pub fn store_enterprise_token(&self, token: Arc<EnterpriseToken>, refresh_at: Option<f64>) {
        let at = refresh_at.or(token.0.refresh_at.map(|t| t as f64));
        self.with(|s| s.store_token(token.0.bearer(), at));
    }

    /// The exchange in flight failed (`reason`, never a credential): the calls that waited for it
    /// fail with rule `token_exchange_failed`; a call that asks later starts a new one. Then wake
    /// the waiting calls.
    pub fn exchange_failed(&self, reason: String) {
        self.with(|s| s.exchange_failed(&reason));
    }

    /// The exchange in flight ended without an outcome (its call was cancelled or interrupted):
    /// the next call that asks starts a new one. Then wake the waiting calls.
    pub fn abandon_exchange(&self) {
        self.with(machine::Session::abandon_exchange);
    }

    /// Changes whenever a call waiting on the session (`AwaitToken`) has something new to look
    /// at (a signed `Long`, callable from Java).
    pub fn version(&self) -> i64 {
        version_of(self.with(|s| s.version()))
    }

    /// How many token exchanges the session's calls have started.
    pub fn exchanges(&self) -> i64 {
        version_of(self.with(|s| s.exchanges()))
    }

    /// Whether an exchange is in flight.
    pub fn exchanging(&self) -> bool {
        self.with(|s| s.exchanging())
    }

    /// Whether the session holds a token.
    pub fn has_token(&self) -> bool {
        self.with(|s| s.has_token())
    }

    /// The fleet the session shares its token and rate budget with (`Fleet.session`); null for
    /// a session of one process.
    pub fn fleet(&self) -> Option<Arc<crate::fleet::Fleet>> {
        self.with(|s| s.fleet().cloned())
            .map(|f| Arc::new(crate::fleet::Fleet(f)))
    }
}

/// What a host does next for a walk over a list's pages (`Pages`).
// Lowered across the FFI by value once per step: the size of `Fail` on the Rust stack does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(uniffi::Enum)]
pub enum PagesStep {
    /// Request the list with `query` (the caller's own query parameters with the page's, in
    /// order; send the caller's other parameters as they are), then report its 2xx body to
    /// `pageItems` (or `page`).
    Fetch { query: Vec<Param> },
    /// The walk is over: `end` says why (`LAST`: the list was read to its end; `MAX_PAGES`,
    /// `MAX_ITEMS`: a bound was reached, more may follow), after `pages` pages read and `items`
    /// items given.
    Done {
        end: PagesEnd,
        pages: i64,
        items: i64,
    },
    /// The list cannot be read on: throw `error`, a `RoyaltyKitException.Pagination` (code
    /// `page_unreadable`, `next_page_unknown` or `list_cursor_repeated`). The items given so far
    /// stand.
    Fail { error: Error },
}

/// A caller's bound as the core's number: null stays null, anything out of `T`'s range (below 0,
/// too large) is `invalid_argument` naming it (0 is the core's to refuse).
pub(crate) fn bound<T: TryFrom<i64> + std::fmt::Display>(
    name: &'static str,
    value: Option<i64>,
    max: T,
) -> Result<Option<T>> {
    value
        .map(|n| {
            T::try_from(n).map_err(|_| {
                ArgumentError::new(name, format!("{n} is out of range (1 to {max})")).into()
            })
        })
        .transpose()
}

/// The items `shown` points at in the page `body` (the page itself, or its member), the first
/// `take` of them, each as its JSON text exactly as the service sent it.
fn item_texts(body: &[u8], shown: &PageItems) -> Result<Vec<Vec<u8>>> {
    use serde_json::value::RawValue;
    let items: Option<Vec<&RawValue>> = match &shown.member {
        None => serde_json::from_slice(body).ok(),
        Some(member) => serde_json::from_slice::<HashMap<String, &RawValue>>(body)
            .ok()
            .and_then(|page| page.get(member).copied())
            .and_then(|array| serde_json::from_str(array.get()).ok()),
    };
    // The core read the same body as a page with these items: anything else is a bug.
    let items = items.ok_or_else(|| Error::internal("a page's items could not be read again"))?;
    let take = usize::try_from(shown.take).unwrap_or(usize::MAX);
    Ok(items
        .into_iter()
        .take(take)
        .map(|item| item.get().as_bytes().to_vec())
        .collect())
}

/// Every page of a list operation, one request at a time, bounded by pages or items, as a
/// machine (the core's `machine::Pages`: how the operation pages, where a page's items are and
/// what follows it are all decided there). Ask `next()`: `Fetch` → request the list with its
/// query and report the 2xx body to `pageItems` (which gives the items to hand on), until `Done`
/// or `Fail`. Thread-safe.
#[derive(uniffi::Object)]
pub struct Pages(Mutex<machine::Pages>);

#[uniffi::export]
impl Pages {
    /// A walk over `operationId`'s pages starting from `query` (its `cursor`, `page`, `limit` or
    /// `size` say where to start and the page size), reading at most `maxPages` pages and giving
    /// at most `maxItems` items (null: no bound), asking for `pageSize` items a page (null: the
    /// query's, else the list's largest or the service's default); `idField` names an item's id
    /// for the export list's keyset cursor (default `id`). `RoyaltyKitException.InvalidArgument`
    /// for an unknown operation, one that is not a list (a GET), a bound below 1, a page size out
    /// of the list's range or one that differs from the query's.
    #[uniffi::constructor(default(query = [], max_pages = None, max_items = None, page_size = None, id_field = None))]
    pub fn new(
        operation_id: String,
        query: Vec<Param>,
        max_pages: Option<i64>,
        max_items: Option<i64>,
        page_size: Option<i64>,
        id_field: Option<String>,
    ) -> Result<Arc<Self>> {
        let options = machine::PagesOptions {
            max_pages: bound("max_pages", max_pages, u32::MAX)?,
            max_items: bound("max_items", max_items, u64::MAX)?,
            page_size: bound("page_size", page_size, u32::MAX)?,
            id_field,
        };
        let query = query.into_iter().map(|p| (p.name, p.value)).collect();
        let pages = machine::Pages::new(&operation_id, query, options)?;
        Ok(Arc::new(Self(Mutex::new(pages))))
    }

    /// The step pending; the same until a page is reported.
    pub fn next(&self) -> PagesStep {
        match lock(&self.0).next() {
            machine::PagesStep::Fetch { query } => PagesStep::Fetch {
                query: params(query),
            },
            machine::PagesStep::Done { end, pages, items } => PagesStep::Done {
                end,
                pages: i64::from(pages),
                items: i64::try_from(items).unwrap_or(i64::MAX),
            },
            machine::PagesStep::Fail { error } => PagesStep::Fail { error: *error },
        }
    }

    /// Reports the 2xx body of the page fetched: where its items are (`member`: null for the
    /// page itself, else its member holding them) and how many of them to give (`take`, the
    /// first ones); null when the page has no items array (the next step is then `Fail`).
    /// `InvalidArgument` when no fetch is pending.
    pub fn page(&self, body: Vec<u8>) -> Result<Option<PageItems>> {
        Ok(lock(&self.0).page(&body)?)
    }

    /// As `page`, returning the items to give themselves: the first `take` of the page's items,
    /// each as its JSON text (UTF-8) exactly as the service sent it; null when the page has no
    /// items array (the next step is then `Fail`).
    pub fn page_items(&self, body: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>> {
        let shown = lock(&self.0).page(&body)?;
        shown.map(|s| item_texts(&body, &s)).transpose()
    }

    /// Pages read so far.
    pub fn pages(&self) -> i64 {
        i64::from(lock(&self.0).pages())
    }

    /// Items given so far.
    pub fn items(&self) -> i64 {
        i64::try_from(lock(&self.0).items()).unwrap_or(i64::MAX)
    }
}

/// What a host does next for a recovery run (`Recovery`).
// Lowered across the FFI by value once per step: the size of `Fail` on the Rust stack does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(uniffi::Enum)]
pub enum RecoveryStep {
    /// Request `operation` (`listEnterpriseWebhookDeliveries`) with the path `{reference:
    /// subscription}` and this `query` (in order) through the client's normal request path,
    /// then report its 2xx body to `page`.
    Fetch {
        operation: String,
        query: Vec<Param>,
    },
    /// Look each of `keys` (delivery keys) up in the store the receiver uses, without claiming,
    /// and report their states to `checked`, one per key, in order.
    Check { keys: Vec<String> },
    /// Request `operation` (`replayEnterpriseWebhookDelivery`) with the path `{reference:
    /// subscription, deliveryReference: delivery}` through the client's normal request path (it
    /// is never sent twice), then report its 2xx body to `replayed`, or the code of the
    /// library's error it ended in to `replayFailed`.
    Replay { operation: String, delivery: String },
    /// The run is over: `report` says what it found and did.
    Done { report: RecoveryReport },
    /// The log cannot be read on: throw `error`, a `RoyaltyKitException.Pagination`. Nothing
    /// was replayed.
    Fail { error: Error },
}

/// One recovery run over a subscription's delivery log (the core's `machine::Recovery`: which
/// deliveries are processed, pending or lost, and which are replayed, are all decided there).
/// Ask `next()`: `Fetch` → request the log page and report it to `page`; `Check` → the store's
/// states to `checked`; `Replay` → the replay's answer to `replayed` or its failure to
/// `replayFailed`; until `Done` or `Fail`. Thread-safe.
#[derive(uniffi::Object)]
pub struct Recovery(Mutex<machine::Recovery>);

impl Recovery {
    /// The step `s` as Kotlin's `RecoveryStep`.
    fn step(s: machine::RecoveryStep) -> RecoveryStep {
        match s {
            machine::RecoveryStep::Fetch { query } => RecoveryStep::Fetch {
                operation: machine::LIST_DELIVERIES.to_owned(),
                query: params(query),
            },
            machine::RecoveryStep::Check { keys } => RecoveryStep::Check { keys },
            machine::RecoveryStep::Replay { delivery } => RecoveryStep::Replay {
                operation: machine::REPLAY_DELIVERY.to_owned(),
                delivery,
            },
            machine::RecoveryStep::Done { report } => RecoveryStep::Done { report },
            machine::RecoveryStep::Fail { error } => RecoveryStep::Fail { error: *error },
        }
    }

    /// Runs a generated input (`recovery_inputs!`) under the lock; the next step.
    fn then(
        &self,
        input: impl FnOnce(&mut machine::Recovery) -> std::result::Result<(), royaltykit::Error>,
    ) -> Result<RecoveryStep> {
        let mut run = lock(&self.0);
        input(&mut run)?;
        Ok(Self::step(run.next()))
    }
}

#[uniffi::export]
impl Recovery {
    /// A run over `subscription`'s delivery log, checking the delivery keys of `namespace` (the
    /// receiver's) of the deliveries from `since` (Unix seconds) on, at `now` (Unix seconds);
    /// `maxReplays` (most replays sent, default 100), `maxReplaysPerDelivery` (most failed
    /// replays of one delivery, default 3) and `maxEntries` (most log entries read, default
    /// 10000): null for the core's default. `RoyaltyKitException.InvalidArgument` for an empty
    /// subscription, an empty or over-long namespace, a `since` or `now` that is not finite Unix
    /// seconds, or a bound below 1 or out of range.
    #[uniffi::constructor(default(max_replays = None, max_replays_per_delivery = None, max_entries = None))]
    pub fn new(
        subscription: String,
        namespace: String,
        since: f64,
        now: f64,
        max_replays: Option<i64>,
        max_replays_per_delivery: Option<i64>,
        max_entries: Option<i64>,
    ) -> Result<Arc<Self>> {
        let options = RecoveryOptions {
            max_replays: bound("max_replays", max_replays, u32::MAX)?,
            max_replays_per_delivery: bound(
                "max_replays_per_delivery",
                max_replays_per_delivery,
                u32::MAX,
            )?,
            max_entries: bound("max_entries", max_entries, u64::MAX)?,
        };
        let run = machine::Recovery::new(&subscription, &namespace, since, now, options)?;
        Ok(Arc::new(Self(Mutex::new(run))))
    }

    /// The step pending; the same until its outcome is reported.
    pub fn next(&self) -> RecoveryStep {
        Self::step(lock(&self.0).next())
    }
}

crate::generated::recovery_inputs!();
