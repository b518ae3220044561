//! The protocol machines for JS: conversions only. A step crosses as `[kind, json, request,
//! bytes]`: its members as JSON text, a request as the descriptor pair, bytes (a response body,
//! an artifact) as a `Uint8Array`. Each input returns the step that follows, so a step costs one
//! crossing. A webhook receipt's step is text (its JSON, a reply's outcome after U+0001), and the
//! first one crosses with the verified delivery (`WebhookReceipt::opening`): a delivery on an
//! in-process window costs four crossings (made, opened, handler reported, freed).

use crate::api::descriptor;
use crate::retry::RateBudget;
use crate::{err, json, parse, FlatHeaders, R};
use royaltykit::catalog::Api;
use royaltykit::dedup::DedupWindow;
use royaltykit::machine::{self, CallFailure, CallOptions};
use royaltykit::request::RequestParams;
use royaltykit::retry::TransportFailure;
use royaltykit::token::BearerToken;
use royaltykit::webhook::{VerifiedWebhook, WebhookError};
use serde_json::json;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// The window a receipt claims and commits on, and the caller's fixed clock (None: the clock).
pub(crate) type Window = (Rc<RefCell<DedupWindow>>, Option<i64>);

/// The clock, in whole Unix seconds.
pub(crate) fn clock() -> i64 {
    (js_sys::Date::now() / 1000.0).floor() as i64
}

/// One webhook delivery (`machine::WebhookReceipt`), on an in-process window when it has one.
#[wasm_bindgen]
pub struct WebhookReceipt {
    receipt: machine::WebhookReceipt,
    window: Option<Window>,
    /// The step pending once the receipt was made (what `opening` answers).
    first: String,
}

impl WebhookReceipt {
    pub(crate) fn new(
        namespace: &str,
        verified: Result<VerifiedWebhook, WebhookError>,
        window: Option<Window>,
        transactional: bool,
        claim_content_key: bool,
        inbox: bool,
    ) -> R<Self> {
        let receipt =
            machine::WebhookReceipt::new(namespace, verified, claim_content_key).map_err(err)?;
        let receipt = if transactional {
            receipt.transactional()
        } else {
            receipt
        };
        let receipt = if inbox { receipt.inbox() } else { receipt };
        let mut r = Self {
            receipt,
            window,
            first: String::new(),
        };
        r.first = r.settled();
        Ok(r)
    }

    /// The pending step as JSON, after the window's steps when it has a window.
    fn settled(&mut self) -> String {
        let step = match &self.window {
            Some((w, fixed)) => match w.try_borrow_mut() {
                Ok(mut w) => self.receipt.settle(&mut w, fixed.unwrap_or_else(clock)),
                // Never borrowed elsewhere during a call (see `DedupWindow::window`).
                Err(_) => self.receipt.next(),
            },
            None => self.receipt.next(),
        };
        json(&step)
    }

    /// Runs a generated input (`webhook_receipt_inputs!`); the next step as the JS layer reads
    /// it: its JSON, then for a reply U+0001 and the outcome (the reply's outcome crosses with
    /// it, not in a call of its own).
    fn then(
        &mut self,
        input: impl FnOnce(&mut machine::WebhookReceipt) -> Result<(), royaltykit::Error>,
    ) -> R<String> {
        input(&mut self.receipt).map_err(err)?;
        let step = self.settled();
        Ok(self.with_outcome(step))
    }

    fn with_outcome(&self, mut step: String) -> String {
        if let Some(outcome) = self.receipt.outcome() {
            step.push('\u{1}');
            step.push_str(outcome);
        }
        step
    }
}

#[wasm_bindgen]
impl WebhookReceipt {
    /// What the JS layer reads once a receipt is made, in one crossing: the pending step as the
    /// inputs return it (its JSON, and for a reply U+0001 and the outcome), then, when
    /// verification passed, U+0002 and the delivery as `verified_text`. Neither JSON (whose
    /// control characters are escaped) nor an outcome holds U+0001 or U+0002, so the first of
    /// each is the separator.
    pub fn opening(&self) -> String {
        let mut out = self.with_outcome(self.first.clone());
        if let Some(d) = self.receipt.delivery() {
            out.push('\u{2}');
            out.push_str(&crate::verified_text(d));
        }
        out
    }
}

crate::generated::webhook_receipt_inputs!();

fn events_json(events: Vec<machine::MachineEvent>) -> String {
    let list: Vec<serde_json::Value> = events
        .into_iter()
        .map(|e| {
            json!({
                "kind": e.kind, "operation": e.operation, "attempt": e.attempt, "method": e.method,
                "path": e.path, "status": e.status, "transport": e.transport, "rule": e.rule,
                "reason": e.reason, "waitSeconds": e.wait_seconds, "state": e.state,
                "receivedBytes": e.received_bytes, "totalBytes": e.total_bytes,
                "level": e.level, "message": e.message,
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

fn step(kind: &str, fields: serde_json::Value) -> js_sys::Array {
    js_sys::Array::of2(&kind.into(), &fields.to_string().into())
}

fn failure(f: CallFailure, stage: Option<String>, export_id: Option<String>) -> js_sys::Array {
    step(
        "fail",
        json!({
            "rule": f.rule, "reason": f.reason, "status": f.status,
            "transport": f.transport.map(|t| t.as_str()), "retryAfterSeconds": f.retry_after_seconds,
            "error": f.error, "stage": stage, "exportId": export_id, "attempts": f.attempts,
        }),
    )
}

/// The members of a `fail` or `reconcile` step the JS layer read (the step's JSON, as given).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Ended {
    step: String,
    #[serde(default)]
    rule: String,
    reason: String,
    status: Option<u16>,
    transport: Option<TransportFailure>,
    retry_after_seconds: Option<f64>,
    #[serde(default)]
    attempts: i64,
    stage: Option<String>,
    export_id: Option<String>,
    reconcile: Option<royaltykit::retry::Reconcile>,
    #[serde(default)]
    candidates: Vec<String>,
}

/// The core's error (JSON text, for the JS layer's class table) for a `fail` step without an
/// error of its own (`call_failed`, with the core's message naming `operationId`, the host of
/// `baseUrl`, the reason, the attempts and `cause`) or a `reconcile` step
/// (`reconcile_required`).
#[wasm_bindgen(js_name = callStepError)]
pub fn call_step_error(
    step: &str,
    operation_id: &str,
    base_url: &str,
    cause: Option<String>,
) -> R<String> {
    let s: Ended = serde_json::from_str(step)
        .map_err(|e| err(royaltykit::ArgumentError::new("step", e.to_string())))?;
    let error = match (s.step.as_str(), s.reconcile) {
        ("reconcile", Some(reconcile)) => machine::reconcile_required(
            reconcile,
            &s.reason,
            operation_id,
            s.candidates,
            s.stage.as_deref(),
        ),
        ("fail", _) => CallFailure {
            rule: s.rule,
            reason: s.reason,
            status: s.status,
            transport: s.transport,
            retry_after_seconds: s.retry_after_seconds,
            error: None,
            attempts: s.attempts,
        }
        .into_error(
            operation_id,
            base_url,
            s.stage.as_deref(),
            s.export_id.as_deref(),
            cause.as_deref(),
        ),
        _ => {
            return Err(err(royaltykit::ArgumentError::new(
                "step",
                "not a fail or reconcile step of a Call or an ExportJob",
            )))
        }
    };
    Ok(crate::json(&error))
}

fn bytes(b: &[u8]) -> JsValue {
    js_sys::Uint8Array::from(b).into()
}

/// The core's step of a `Call` or an `ExportJob` as `[kind, fields JSON, request?, body?]`.
fn call_step(s: machine::Step) -> js_sys::Array {
    match s {
        machine::Step::Send { request } => {
            let a = step("send", serde_json::Value::Null);
            a.push(&descriptor(request));
            a
        }
        machine::Step::Wait { seconds } => step("wait", json!({ "seconds": seconds })),
        machine::Step::RefreshToken { reason } => {
            step("refresh_token", json!({ "reason": reason }))
        }
        machine::Step::AwaitToken { seconds } => step("await_token", json!({ "seconds": seconds })),
        machine::Step::Reconcile {
            reconcile,
            reason,
            candidates,
            stage,
        } => step(
            "reconcile",
            json!({ "reconcile": reconcile, "reason": reason, "candidates": candidates, "stage": stage }),
        ),
        machine::Step::Done {
            response,
            json,
            export_id,
        } => {
            let mut fields =
                json!({ "status": response.status, "headers": response.headers, "json": json });
            if let Some(id) = export_id {
                fields["exportId"] = id.into(); // a call's has none (`exportId?` in index.d.ts)
            }
            let a = step("done", fields);
            a.push(&JsValue::UNDEFINED);
            a.push(&bytes(&response.body));
            a
        }
        machine::Step::Fail {
            failure: f,
            stage,
            export_id,
        } => failure(f, stage, export_id),
        machine::Step::Reserve { command } => step("reserve", json!({ "command": command })),
    }
}

/// A token from the JS layer: its value, the API that issued it and (reporting) its tenant.
fn bearer(value: String, api: &str, tenant: Option<String>) -> R<BearerToken> {
    let t = BearerToken::new(parse(Api::parse, api)?, value);
    Ok(match tenant {
        Some(tenant) => t.for_tenant(tenant),
        None => t,
    })
}

fn record<T: serde::de::DeserializeOwned>(what: &'static str, text: &str) -> R<T> {
    serde_json::from_str(text).map_err(|e| {
        err(royaltykit::ArgumentError::new(
            what,
            format!("is not the core's record: {e}"),
        ))
    })
}

/// The exported inputs of a `Call` or an `ExportJob` (the core gives both the same input
/// methods), next to each type's own items.
macro_rules! api_machine {
    ($ty:ident, $core:ty, $step:ident, { $($own:tt)* }) => {
        #[wasm_bindgen]
        impl $ty {
            $($own)*

            /// The step at `now` (without a budget).
            pub fn next(&mut self, now: f64) -> R<js_sys::Array> {
                self.0.next(now, None).map($step).map_err(err)
            }
            /// The step at `now`, taking a request from `budget` before a send.
            #[wasm_bindgen(js_name = nextWithBudget)]
            pub fn next_with_budget(&mut self, now: f64, budget: &mut RateBudget) -> R<js_sys::Array> {
                self.0.next(now, Some(&mut budget.0)).map($step).map_err(err)
            }
            /// The step at `now` on `session`: its token and rate budget, shared with the
            /// session's other machines.
            #[wasm_bindgen(js_name = nextIn)]
            pub fn next_in(&mut self, now: f64, session: &mut Session) -> R<js_sys::Array> {
                self.0.next_in(now, &mut session.0).map($step).map_err(err)
            }
            /// What became of the step performed, at `now`: the one input after `send` and
            /// `reserve` (see the core's `report`). `kind` is `response` (`status`, flat
            /// `headers`, `body`), `streamed` (`status`, `headers`, `length`), `no_response`
            /// (`text`, the transport failure; after a `reserve`: Redis could not be reached)
            /// or `reply` (`text`, undefined for nil: the fleet's reply to a `reserve`).
            #[allow(clippy::too_many_arguments)]
            pub fn report(&mut self, kind: &str, status: f64, headers: Vec<String>, body: &[u8], length: f64, text: Option<String>, now: f64) -> R<()> {
                use royaltykit::machine::StepOutcome;
                let headers = &FlatHeaders(headers);
                let outcome = match kind {
                    "response" => StepOutcome::Response { status: crate::int("status", status)?, headers, body },
                    "streamed" => StepOutcome::Streamed {
                        status: crate::int("status", status)?,
                        headers,
                        length: u64::try_from(crate::int("length", length)?)
                            .map_err(|_| err(royaltykit::ArgumentError::new("length", "must be 0 or more")))?,
                    },
                    "no_response" => StepOutcome::NoResponse(parse(TransportFailure::parse, text.as_deref().unwrap_or_default())?),
                    "reply" => StepOutcome::Reply(text.as_deref()),
                    _ => return Err(err(royaltykit::ArgumentError::new("kind", "must be response, streamed, no_response or reply"))),
                };
                self.0.report(outcome, now).map_err(err)
            }
            /// Whether a response with `status` is streamed to the host's sink (a 2xx download).
            pub fn streams(&self, status: f64) -> bool {
                crate::int("status", status).is_ok_and(|s| self.0.streams(s))
            }
            /// The download's body is arriving: `received` bytes of `total` (NaN: unknown).
            pub fn progress(&mut self, received: f64, total: f64) {
                let bytes = |v: f64| crate::int("bytes", v).ok().and_then(|v| u64::try_from(v).ok());
                if let Some(received) = bytes(received) {
                    self.0.progress(received, if total.is_nan() { None } else { bytes(total) });
                }
            }
            /// A token: value, issuing API, tenant; `refresh_at` NaN for none.
            pub fn token(&mut self, value: String, api: &str, tenant: Option<String>, refresh_at: f64) -> R<()> {
                let t = bearer(value, api, tenant)?;
                self.0.token(t, Some(refresh_at).filter(|r| !r.is_nan()));
                Ok(())
            }
            /// The state as JSON (never the token).
            pub fn save(&self) -> String {
                self.0.save()
            }
            /// What the machine did since the events were last taken, oldest first, as a JSON
            /// array of the core's `MachineEvent` in JS names (never a token, a header or a body);
            /// with `min_level` (`debug`, `info`, `warning`) only those at that level or above.
            #[wasm_bindgen(js_name = takeEvents)]
            pub fn take_events(&mut self, min_level: Option<String>) -> R<String> {
                let min = min_level.map(|l| parse(machine::EventLevel::parse, &l)).transpose()?;
                Ok(events_json(self.0.take_events_from(min)))
            }
            /// A machine saved by `save`.
            pub fn resume(saved: &str) -> R<$ty> {
                <$core>::resume(saved).map($ty).map_err(err)
            }
        }
    };
}

/// What the machines of one API client share (`machine::Session`): the token, the one token
/// exchange in flight, the rate budget.
#[wasm_bindgen]
pub struct Session(machine::Session);

#[wasm_bindgen]
impl Session {
    /// A session without a token or a budget.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Session {
        Session(machine::Session::new(None))
    }
    /// A session pacing its machines by a copy of `budget` (its windows and the requests
    /// already counted).
    #[wasm_bindgen(js_name = withBudget)]
    pub fn with_budget(budget: &RateBudget) -> Session {
        Session(machine::Session::new(Some(budget.0.clone())))
    }
    /// `Session::store_token`: value, issuing API, tenant; `refresh_at` NaN for none.
    #[wasm_bindgen(js_name = storeToken)]
    pub fn store_token(
        &mut self,
        value: String,
        api: &str,
        tenant: Option<String>,
        refresh_at: f64,
    ) -> R<()> {
        let t = bearer(value, api, tenant)?;
        self.0
            .store_token(t, Some(refresh_at).filter(|r| !r.is_nan()));
        Ok(())
    }
    /// `Session::exchange_failed`.
    #[wasm_bindgen(js_name = exchangeFailed)]
    pub fn exchange_failed(&mut self, reason: &str) {
        self.0.exchange_failed(reason);
    }
    /// `Session::abandon_exchange`.
    #[wasm_bindgen(js_name = abandonExchange)]
    pub fn abandon_exchange(&mut self) {
        self.0.abandon_exchange();
    }
    /// `Session::version`.
    #[wasm_bindgen(getter)]
    pub fn version(&self) -> f64 {
        self.0.version() as f64
    }
    /// `Session::exchanges`.
    #[wasm_bindgen(getter)]
    pub fn exchanges(&self) -> f64 {
        self.0.exchanges() as f64
    }
    /// `Session::exchanging`.
    #[wasm_bindgen(getter)]
    pub fn exchanging(&self) -> bool {
        self.0.exchanging()
    }
    /// `Session::has_token`.
    #[wasm_bindgen(getter, js_name = hasToken)]
    pub fn has_token(&self) -> bool {
        self.0.has_token()
    }
    /// The key prefix of the fleet the session belongs to (`Session::fleet`); undefined for a
    /// session of one process.
    #[wasm_bindgen(getter, js_name = fleetPrefix)]
    pub fn fleet_prefix(&self) -> Option<String> {
        self.0.fleet().map(|f| f.prefix().to_owned())
    }
}

/// Where one API client's processes keep their shared token and rate budget in Redis
/// (`machine::Fleet`).
#[wasm_bindgen]
pub struct Fleet(machine::Fleet);

#[wasm_bindgen]
impl Fleet {
    /// `Fleet::new`: under `prefix` (undefined: the core's default). Throws `invalid_argument`
    /// for an empty prefix, one over 128 bytes, or one with spaces or control characters.
    #[wasm_bindgen(constructor)]
    pub fn new(prefix: Option<String>) -> R<Fleet> {
        machine::Fleet::new(prefix.as_deref())
            .map(Fleet)
            .map_err(err)
    }
    /// The key prefix.
    #[wasm_bindgen(getter)]
    pub fn prefix(&self) -> String {
        self.0.prefix().to_owned()
    }
    /// A fleet session without a budget (`Fleet::session(None)`): the token is the fleet's,
    /// requests are not counted.
    pub fn session(&self) -> Session {
        Session(self.0.session(None))
    }
    /// A fleet session whose requests are counted in Redis by a copy of `budget`'s windows
    /// (`Fleet::session(Some(budget))`): each send is preceded by a `reserve` step.
    #[wasm_bindgen(js_name = sessionWithBudget)]
    pub fn session_with_budget(&self, budget: &RateBudget) -> Session {
        Session(self.0.session(Some(budget.0.clone())))
    }
}

/// The core's fleet constants as JSON: `reserveScript`, `publishScript`, `unlockScript`,
/// `defaultFleetPrefix`, `maxFleetPrefixBytes`, `fleetPollSeconds`.
#[wasm_bindgen(js_name = fleetConstants)]
pub fn fleet_constants() -> String {
    json!({
        "reserveScript": machine::RESERVE_SCRIPT,
        "publishScript": machine::PUBLISH_SCRIPT,
        "unlockScript": machine::UNLOCK_SCRIPT,
        "defaultFleetPrefix": machine::DEFAULT_FLEET_PREFIX,
        "maxFleetPrefixBytes": machine::MAX_FLEET_PREFIX_BYTES,
        "fleetPollSeconds": machine::FLEET_POLL_SECONDS,
    })
    .to_string()
}

/// One token refresh of a fleet session (`machine::FleetToken`): adopt the token another process
/// published, or take the fleet's exchange lock, exchange and publish. Every input returns the
/// step that follows.
#[wasm_bindgen]
pub struct FleetToken(machine::FleetToken);

impl FleetToken {
    fn then(
        &mut self,
        input: impl FnOnce(&mut machine::FleetToken) -> Result<(), royaltykit::ArgumentError>,
    ) -> R<String> {
        input(&mut self.0).map_err(err)?;
        Ok(crate::json(&self.0.next()))
    }
}

#[wasm_bindgen]
impl FleetToken {
    /// `FleetToken::new`: a refresh for `session` (a fleet's) of a token of `api` (`tenant` for
    /// a reporting token) at `now`, by the process named by `seed` (the host's RNG; a whole
    /// number from 0). Throws `invalid_argument` for a session that is not a fleet's, a `now`
    /// that is not finite, or a bad seed.
    #[wasm_bindgen(constructor)]
    pub fn new(
        session: &Session,
        api: &str,
        tenant: Option<String>,
        seed: f64,
        now: f64,
    ) -> R<FleetToken> {
        let seed = u64::try_from(crate::int("seed", seed)?).map_err(|_| {
            err(royaltykit::ArgumentError::new(
                "seed",
                "must be a whole number from 0",
            ))
        })?;
        let api = parse(Api::parse, api)?;
        machine::FleetToken::new(&session.0, api, tenant.as_deref(), seed, now)
            .map(FleetToken)
            .map_err(err)
    }
    /// The step pending (the same until its outcome is reported), as the JSON of the core's
    /// `FleetTokenStep` (tagged by `step`).
    pub fn next(&self) -> String {
        crate::json(&self.0.next())
    }
    /// The reply of the pending `command` as text (undefined for nil), at `now`; an adopted or
    /// published token is stored in `session`. Returns the next step. Throws `invalid_argument`
    /// when no command is pending.
    pub fn replied(&mut self, reply: Option<String>, session: &mut Session, now: f64) -> R<String> {
        self.then(|t| t.replied(reply.as_deref(), &mut session.0, now))
    }
    /// Redis could not be reached for the pending `command`: this process exchanges on its own.
    /// Returns the next step. Throws `invalid_argument` when no command is pending.
    #[wasm_bindgen(js_name = redisFailed)]
    pub fn redis_failed(&mut self, session: &mut Session) -> R<String> {
        self.then(|t| t.redis_failed(&mut session.0))
    }
    /// The wait is over; returns the next step. Throws `invalid_argument` when no wait is
    /// pending.
    pub fn waited(&mut self) -> R<String> {
        self.then(machine::FleetToken::waited)
    }
    /// The exchange this process ran succeeded: the token (value, issuing API, tenant), due at
    /// `refresh_at` (NaN: never), at `now`; returns the next step (its publish). Throws
    /// `invalid_argument` when no exchange is pending.
    pub fn exchanged(
        &mut self,
        value: String,
        api: &str,
        tenant: Option<String>,
        refresh_at: f64,
        now: f64,
    ) -> R<String> {
        let token = bearer(value, api, tenant)?;
        let refresh_at = Some(refresh_at).filter(|r| !r.is_nan());
        self.then(|t| t.exchanged(token, refresh_at, now))
    }
    /// The exchange this process ran failed (`reason`, never a credential); returns the next
    /// step (the lock's release). Throws `invalid_argument` when no exchange is pending.
    #[wasm_bindgen(js_name = exchangeFailed)]
    pub fn exchange_failed(&mut self, reason: &str) -> R<String> {
        self.then(|t| t.exchange_failed(reason))
    }
    /// `FleetToken::abandon_command`: the command releasing the fleet's exchange lock when this
    /// refresh holds it (its exchange is running), for a call cancelled mid-exchange — take it,
    /// `session.abandonExchange()`, then send it (best effort); undefined when it holds no lock.
    #[wasm_bindgen(js_name = abandonCommand)]
    pub fn abandon_command(&self) -> Option<Vec<String>> {
        self.0.abandon_command()
    }
    /// Seconds since this refresh started, at `now`.
    pub fn elapsed(&self, now: f64) -> f64 {
        self.0.elapsed(now)
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

/// One API operation (`machine::Call`).
#[wasm_bindgen]
pub struct Call(machine::Call);

api_machine!(Call, machine::Call, call_step, {
    /// `params` and `options` are the core's `RequestParams` and `CallOptions` records as JSON
    /// (snake_case members; the body crosses apart, as bytes).
    #[wasm_bindgen(constructor)]
    pub fn new(operation_id: &str, params: &str, body: Option<Vec<u8>>, options: &str) -> R<Call> {
        let mut params: RequestParams = record("params", params)?;
        params.body = body;
        let options: CallOptions = record("options", options)?;
        machine::Call::new(operation_id, params, options)
            .map(Call)
            .map_err(err)
    }
    /// A token exchange (`machine::Call::exchange`): the request's members as the JS descriptor
    /// holds them (JSON, camelCase) and its body.
    pub fn exchange(request: &str, body: Option<Vec<u8>>, options: &str) -> R<Call> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Sent {
            operation_id: String,
            method: String,
            path: String,
            query: String,
            headers: Vec<(String, String)>,
        }
        let s: Sent = record("request", request)?;
        let request = royaltykit::request::RequestDescriptor {
            operation_id: s.operation_id,
            method: s.method,
            path: s.path,
            query: s.query,
            headers: s.headers,
            body,
            idempotency_key: None,
            idempotency_key_sent: false,
        };
        machine::Call::exchange(request, record("options", options)?)
            .map(Call)
            .map_err(err)
    }
    /// The idempotency key of the logical request, once built.
    #[wasm_bindgen(js_name = idempotencyKey)]
    pub fn idempotency_key(&self) -> Option<String> {
        self.0.idempotency_key().map(str::to_owned)
    }
});

/// A reporting export job (`machine::ExportJob`).
#[wasm_bindgen]
pub struct ExportJob(machine::ExportJob);

api_machine!(ExportJob, machine::ExportJob, call_step, {
    /// `options` is the core's `ExportJobOptions` record as JSON (snake_case; the body crosses
    /// apart, as bytes).
    #[wasm_bindgen(constructor)]
    pub fn new(options: &str, body: Vec<u8>) -> R<ExportJob> {
        let mut options: machine::ExportJobOptions = record("options", options)?;
        options.body = body;
        machine::ExportJob::new(options).map(ExportJob).map_err(err)
    }
    /// The export's id, once known.
    #[wasm_bindgen(js_name = exportId)]
    pub fn export_id(&self) -> Option<String> {
        self.0.export_id().map(str::to_owned)
    }
    /// The checkpoint to keep before performing the step just given, or undefined (the core's
    /// `ExportJob::checkpoint`: before each send and wait, when the state changed).
    pub fn checkpoint(&mut self) -> Option<String> {
        self.0.checkpoint()
    }
});

/// A host number that must be a whole number from 1 (the core then checks its range), as `T`.
fn count<T: TryFrom<i64>>(name: &'static str, value: Option<f64>) -> R<Option<T>> {
    crate::opt_int(name, value)?
        .map(|v| {
            T::try_from(v).map_err(|_| {
                err(royaltykit::ArgumentError::new(
                    name,
                    format!("{v} is out of range: give a whole number from 1"),
                ))
            })
        })
        .transpose()
}

/// A step of a walk over pages, as `[kind, json]`: `fetch` with `query` (`[[name, value], …]`),
/// `done` with `end`, `pages` and `items`, `fail` with the core's `error`.
fn pages_step(s: machine::PagesStep) -> js_sys::Array {
    match s {
        machine::PagesStep::Fetch { query } => step("fetch", json!({ "query": query })),
        machine::PagesStep::Done { end, pages, items } => step(
            "done",
            json!({ "end": end.as_str(), "pages": pages, "items": items }),
        ),
        machine::PagesStep::Fail { error } => step("fail", json!({ "error": error })),
    }
}

/// Every page of a list operation (`machine::Pages`), bounded by pages or items.
#[wasm_bindgen]
pub struct Pages(machine::Pages);

#[wasm_bindgen]
impl Pages {
    /// `machine::Pages::new`: the caller's query as flat `[name, value, …]` pairs and the
    /// `PagesOptions` one by one (undefined: none). Throws `invalid_argument` for an unknown
    /// operation, one that is not a GET, a bound below 1 or a page size out of range.
    #[wasm_bindgen(constructor)]
    pub fn new(
        operation_id: &str,
        query: Vec<String>,
        max_pages: Option<f64>,
        max_items: Option<f64>,
        page_size: Option<f64>,
        id_field: Option<String>,
    ) -> R<Pages> {
        let query = query
            .chunks_exact(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect();
        let options = machine::PagesOptions {
            max_pages: count("max_pages", max_pages)?,
            max_items: count("max_items", max_items)?,
            page_size: count("page_size", page_size)?,
            id_field,
        };
        machine::Pages::new(operation_id, query, options)
            .map(Pages)
            .map_err(err)
    }
    /// The step pending (the same until a page is reported), as `[kind, json]`.
    pub fn next(&self) -> js_sys::Array {
        pages_step(self.0.next())
    }
    /// The 2xx body of the page fetched: the core's `PageItems` as JSON (`{"member", "take"}`),
    /// or undefined when the page has no items array (the next step is then `fail`). Throws
    /// `invalid_argument` when no fetch is pending.
    pub fn page(&mut self, body: &[u8]) -> R<Option<String>> {
        self.0
            .page(body)
            .map(|items| items.as_ref().map(json))
            .map_err(err)
    }
    /// Pages read so far.
    #[wasm_bindgen(getter)]
    pub fn pages(&self) -> f64 {
        f64::from(self.0.pages())
    }
    /// Items given so far.
    #[wasm_bindgen(getter)]
    pub fn items(&self) -> f64 {
        self.0.items() as f64
    }
}

/// A step of a recovery run, as `[kind, json]`: `fetch` with `operationId` and `query`
/// (`[[name, value], …]`), `check` with `keys`, `replay` with `operationId` and `delivery`,
/// `done` with the core's `report` (camelCase), `fail` with the core's `error`.
fn recovery_step(s: machine::RecoveryStep) -> js_sys::Array {
    match s {
        machine::RecoveryStep::Fetch { query } => step(
            "fetch",
            json!({ "operationId": machine::LIST_DELIVERIES, "query": query }),
        ),
        machine::RecoveryStep::Check { keys } => step("check", json!({ "keys": keys })),
        machine::RecoveryStep::Replay { delivery } => step(
            "replay",
            json!({ "operationId": machine::REPLAY_DELIVERY, "delivery": delivery }),
        ),
        machine::RecoveryStep::Done { report } => step("done", json!({ "report": report })),
        machine::RecoveryStep::Fail { error } => step("fail", json!({ "error": error })),
    }
}

/// One recovery run over a subscription's delivery log (`machine::Recovery`): the log read, each
/// delivery checked against the receiver's store, those never processed replayed.
#[wasm_bindgen]
pub struct Recovery(machine::Recovery);

impl Recovery {
    /// Runs a generated input (`recovery_inputs!`); the next step.
    fn then(
        &mut self,
        input: impl FnOnce(&mut machine::Recovery) -> Result<(), royaltykit::Error>,
    ) -> R<js_sys::Array> {
        input(&mut self.0).map_err(err)?;
        Ok(recovery_step(self.0.next()))
    }
}

#[wasm_bindgen]
impl Recovery {
    /// `machine::Recovery::new`: `since` and `now` Unix seconds, the `RecoveryOptions` one by
    /// one (undefined: the core's default). Throws `invalid_argument` for an empty subscription,
    /// an empty or over-long namespace, a time that is not finite Unix seconds, or a bound
    /// below 1.
    #[wasm_bindgen(constructor)]
    pub fn new(
        subscription: &str,
        namespace: &str,
        since: f64,
        now: f64,
        max_replays: Option<f64>,
        max_replays_per_delivery: Option<f64>,
        max_entries: Option<f64>,
    ) -> R<Recovery> {
        let options = machine::RecoveryOptions {
            max_replays: count("max_replays", max_replays)?,
            max_replays_per_delivery: count("max_replays_per_delivery", max_replays_per_delivery)?,
            max_entries: count("max_entries", max_entries)?,
        };
        machine::Recovery::new(subscription, namespace, since, now, options)
            .map(Recovery)
            .map_err(err)
    }
    /// The step pending (the same until its outcome is reported), as `[kind, json]`.
    pub fn next(&self) -> js_sys::Array {
        recovery_step(self.0.next())
    }
}

crate::generated::recovery_inputs!();

/// The worker of an inbox (`machine::InboxWorker`): claim a due entry, run the handler, mark it
/// done in the handler's transaction; backoff and poison are the core's. Every input returns the
/// step that follows.
#[wasm_bindgen]
pub struct InboxWorker(machine::InboxWorker);

impl InboxWorker {
    /// Runs an input; the next step.
    fn then(
        &mut self,
        input: impl FnOnce(&mut machine::InboxWorker) -> Result<(), royaltykit::Error>,
    ) -> R<String> {
        input(&mut self.0).map_err(err)?;
        Ok(crate::json(&self.0.next()))
    }
}

#[wasm_bindgen]
impl InboxWorker {
    /// `machine::InboxWorker::new`: the `InboxOptions` one by one (undefined: the core's
    /// default) and the jitter `seed` (the host's RNG; a whole number from 0). Throws
    /// `invalid_argument` for `max_attempts` out of range, a poll interval that is not positive
    /// and finite, or a bad seed.
    #[wasm_bindgen(constructor)]
    pub fn new(
        max_attempts: Option<f64>,
        poll_seconds: Option<f64>,
        transactional: Option<bool>,
        drain: Option<bool>,
        seed: f64,
    ) -> R<InboxWorker> {
        let seed = u64::try_from(crate::int("seed", seed)?).map_err(|_| {
            err(royaltykit::ArgumentError::new(
                "seed",
                "must be a whole number from 0",
            ))
        })?;
        let options = machine::InboxOptions {
            max_attempts: count("max_attempts", max_attempts)?,
            poll_seconds,
            transactional,
            drain,
        };
        machine::InboxWorker::new(&options, seed)
            .map(InboxWorker)
            .map_err(err)
    }
    /// The step pending (the same until its outcome is reported), as the JSON of the core's
    /// `InboxStep` (tagged by `step`, camelCase fields).
    pub fn next(&self) -> String {
        crate::json(&self.0.next())
    }
    /// The claim at `now` returned this entry (its five columns); returns the next step.
    pub fn claimed(
        &mut self,
        key: String,
        delivery_id: String,
        event: String,
        body: String,
        attempts: f64,
        now: f64,
    ) -> R<String> {
        let attempts = u32::try_from(crate::int("attempts", attempts)?).map_err(|_| {
            err(royaltykit::ArgumentError::new(
                "attempts",
                "must be a whole number from 0",
            ))
        })?;
        let entry = machine::InboxEntry {
            key,
            delivery_id,
            event,
            body,
            attempts,
        };
        self.then(|w| Ok(w.claimed(Some(entry), now)?))
    }
    /// The claim at `now` returned no row (nothing is due); returns the next step.
    #[wasm_bindgen(js_name = claimedNone)]
    pub fn claimed_none(&mut self, now: f64) -> R<String> {
        self.then(|w| Ok(w.claimed(None, now)?))
    }
    /// Entries processed (committed) so far.
    #[wasm_bindgen(getter)]
    pub fn processed(&self) -> f64 {
        self.0.processed() as f64
    }
    /// Failed attempts settled to be retried so far.
    #[wasm_bindgen(getter)]
    pub fn retried(&self) -> f64 {
        self.0.retried() as f64
    }
    /// Entries set aside as poison so far.
    #[wasm_bindgen(getter)]
    pub fn poisoned(&self) -> f64 {
        self.0.poisoned() as f64
    }
}

crate::generated::inbox_worker_inputs!();
