//! [`ExportJob`]: a reporting export, create → poll → download, built on [`Call`].
//!
//! - The create (`createPlatformExport`, an `idem` operation) is repeated with its idempotency
//!   key only when the key is sent (the host names its header). Otherwise a create that may have
//!   been applied (a timeout, a lost connection, a 5xx) is reconciled as the spec says — "look
//!   up by the data already sent" — by listing the tenant's exports and looking for one that is
//!   new since the job started (the job lists them once before its first create) and carries
//!   every member of the body sent. One match is adopted; none means the create was not
//!   applied, and it is sent again (at most [`MAX_CREATES`] times); several are refused.
//! - Polling follows [`crate::export::export_poll_decision`]: unknown intermediate states are
//!   polled like `queued`, end states stop, the budget is `max_polls` reads.
//! - The download is one complete artifact: a 206, a `Content-Range` or a body other than its
//!   `Content-Length` is read again. The host may stream the body to its own sink (a file) and
//!   report only its length ([`ExportJob::streams`], [`ExportJob::streamed_response`]).
//!
//! Export records' fields are not shown in the spec; the job reads the export's id from `id`
//! and its state from `status` (the list filter's name) unless told otherwise.

use super::{Call, CallFailure, CallOptions, CallStep, Jitter, Response};
use crate::bearer::BearerToken;
use crate::export::{export_poll_decision, ExportState, PollAction};
use crate::request::{RequestDescriptor, RequestParams};
use crate::retry::{RateBudget, TransportFailure};
use crate::ArgumentError;
use serde_json::Value;

/// Most creates a job sends: the first, and new ones after reconciling found nothing.
pub const MAX_CREATES: u32 = 3;
/// The page size of the reconciling list (the spec's maximum).
const LIST_LIMIT: &str = "100";

/// What an export job does.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ExportJobOptions {
    /// `X-Tenant-ID`: the tenant the export belongs to (a UUID).
    pub tenant_id: String,
    /// The `CreateExportRequest` body: a JSON object (its members are not shown in the spec).
    pub body: Vec<u8>,
    /// The header that carries the create's idempotency key, when the host knows it (the spec
    /// does not show its name). With it a create that may have been applied is sent again
    /// with the same key; without it, it is reconciled.
    pub idempotency_header: Option<String>,
    /// An id for this logical export; the create's idempotency key is derived from it.
    pub request_id: Option<String>,
    /// Most reads while the export is not ready (default
    /// [`crate::export::DEFAULT_MAX_POLLS`]).
    pub max_polls: Option<i64>,
    /// The limits of each request and the seed of the job's jitter and keys.
    pub call: CallOptions,
    /// The member holding the export's id (default `id`).
    pub id_field: Option<String>,
    /// The member holding the export's state (default `status`).
    pub state_field: Option<String>,
}

/// What the host does next for an export job.
#[derive(Debug, Clone, PartialEq)]
pub enum JobStep {
    /// Send `request`, then report [`ExportJob::response`] or [`ExportJob::transport_failure`].
    Send {
        /// The request.
        request: RequestDescriptor,
    },
    /// Ask again after `seconds`.
    Wait {
        /// How long, in seconds.
        seconds: f64,
    },
    /// Obtain a token, then report [`ExportJob::token`].
    RefreshToken {
        /// Why.
        reason: String,
    },
    /// The export's complete artifact. The job is over.
    Done {
        /// The export's id.
        export_id: String,
        /// The artifact, whole; empty when its body was streamed to the host's sink
        /// ([`ExportJob::streamed_response`]).
        artifact: Vec<u8>,
    },
    /// The job stopped. The job is over.
    Fail {
        /// The stage that failed: `list`, `create`, `reconcile`, `poll` or `download`.
        stage: String,
        /// The export's id, once known.
        export_id: Option<String>,
        /// Why.
        failure: CallFailure,
    },
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Stage {
    List,
    Create,
    Reconcile,
    Poll,
    Download,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Self::List => "list",
            Self::Create => "create",
            Self::Reconcile => "reconcile",
            Self::Poll => "poll",
            Self::Download => "download",
        }
    }
}

/// A reporting export in progress (see the module documentation). Its state serialises (the
/// token excepted), so a job resumes after a crash without creating a second export.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ExportJob {
    options: ExportJobOptions,
    stage: Stage,
    call: Call,
    jitter: Jitter,
    #[serde(skip)]
    token: Option<BearerToken>,
    refresh_at: Option<f64>,
    baseline: Vec<String>,
    creates: u32,
    idempotency_key: Option<String>,
    export_id: Option<String>,
    polls: i64,
    #[serde(skip)]
    finished: Option<JobStep>,
}

fn fail(rule: &str, reason: String) -> CallFailure {
    CallFailure {
        rule: rule.to_owned(),
        reason,
        status: None,
        transport: None,
        retry_after_seconds: None,
        error: None,
    }
}

/// The JSON of a response body, when it is JSON.
fn json(response: &Response) -> Option<Value> {
    serde_json::from_slice(&response.body).ok()
}

/// The items of a list page: the page itself when it is an array, else its first array member
/// among `data`, `items`, `exports` and `results` (the page's shape is not shown).
fn items(page: &Value) -> Vec<Value> {
    if let Value::Array(a) = page {
        return a.clone();
    }
    ["data", "items", "exports", "results"]
        .iter()
        .find_map(|k| page.get(k).and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl ExportJob {
    /// A job for `options`. Promises `invalid_argument` for a body that is not a JSON object,
    /// an empty tenant, or call limits out of range. Nothing is sent before
    /// [`ExportJob::next`]; the first request lists the tenant's exports when the create must be
    /// reconcilable (no idempotency header), else it is the create.
    pub fn new(options: ExportJobOptions) -> Result<Self, ArgumentError> {
        if !matches!(serde_json::from_slice(&options.body), Ok(Value::Object(_))) {
            return Err(ArgumentError::new(
                "body",
                "must be the CreateExportRequest as a JSON object",
            ));
        }
        if options.tenant_id.is_empty() {
            return Err(ArgumentError::new("tenant_id", "must be the tenant's UUID"));
        }
        if options.max_polls.is_some_and(|m| m < 1) {
            return Err(ArgumentError::new("max_polls", "must be 1 or more"));
        }
        let jitter = Jitter(options.call.seed);
        let list_first = options.idempotency_header.is_none();
        let placeholder = Call::new(
            "listPlatformExports",
            RequestParams::default(),
            options.call,
        )?;
        let mut job = Self {
            options,
            stage: Stage::List,
            call: placeholder,
            jitter,
            token: None,
            refresh_at: None,
            baseline: Vec::new(),
            creates: 0,
            idempotency_key: None,
            export_id: None,
            polls: 0,
            finished: None,
        };
        if list_first {
            job.start(Stage::List, 0.0, 0.0)?;
        } else {
            job.start(Stage::Create, 0.0, 0.0)?;
        }
        Ok(job)
    }

    /// The job's state as JSON text, to resume after a crash ([`ExportJob::resume`]). Promises:
    /// no token in it; a request in flight when it was saved counts as a lost connection when
    /// resumed (a create is then reconciled, never sent blindly again).
    pub fn save(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A job saved by [`ExportJob::save`]. Promises `invalid_argument` for anything else.
    pub fn resume(saved: &str) -> Result<Self, ArgumentError> {
        serde_json::from_str(saved)
            .map_err(|e| ArgumentError::new("saved", format!("is not a saved export job: {e}")))
    }

    /// The export's id, once the create's response (or the reconciling list) named it.
    pub fn export_id(&self) -> Option<&str> {
        self.export_id.as_deref()
    }

    /// Whether the job has reached `Done` or `Fail`.
    pub fn is_finished(&self) -> bool {
        self.finished.is_some()
    }

    fn field<'a>(&'a self, name: &'a Option<String>, default: &'a str) -> &'a str {
        name.as_deref().unwrap_or(default)
    }

    fn start(&mut self, stage: Stage, now: f64, delay: f64) -> Result<(), ArgumentError> {
        let tenant = self.options.tenant_id.clone();
        let mut params = RequestParams {
            tenant_id: Some(tenant),
            ..RequestParams::default()
        };
        let operation = match stage {
            Stage::List | Stage::Reconcile => {
                params.query = vec![("limit".to_owned(), LIST_LIMIT.to_owned())];
                "listPlatformExports"
            }
            Stage::Create => {
                params.body = Some(self.options.body.clone());
                params.idempotency_header = self.options.idempotency_header.clone();
                params.idempotency_key = self.idempotency_key.clone();
                if params.idempotency_key.is_none() {
                    params.request_id = self.options.request_id.clone();
                }
                "createPlatformExport"
            }
            Stage::Poll | Stage::Download => {
                let id = self.export_id.clone().unwrap_or_default();
                params.path = vec![("export".to_owned(), id)];
                if stage == Stage::Poll {
                    "getPlatformExport"
                } else {
                    "downloadPlatformExport"
                }
            }
        };
        let options = CallOptions {
            seed: self.jitter.fork(),
            ..self.options.call
        };
        let mut call = Call::new(operation, params, options)?;
        if let Some(token) = self.token.clone() {
            call.token(token, self.refresh_at);
        }
        call.hold(now, delay);
        self.call = call;
        self.stage = stage;
        Ok(())
    }

    fn finish(&mut self, step: JobStep) -> JobStep {
        self.finished = Some(step.clone());
        step
    }

    fn fail(&mut self, failure: CallFailure) -> JobStep {
        let step = JobStep::Fail {
            stage: self.stage.name().to_owned(),
            export_id: self.export_id.clone(),
            failure,
        };
        self.finish(step)
    }

    /// The step to perform at `now`, taking requests from `budget` (shared by the host's
    /// calls). Promises the steps of the current request's [`Call`], and between requests the
    /// job's own: the create after the first list, the first read after the create (with the
    /// poll delay), reads until `ready`, the download, then `Done` with the artifact; `Fail`
    /// naming the stage when a request fails, an export ends cancelled or revoked, the polling
    /// budget runs out, or reconciling finds several candidates. `invalid_argument` for a bad
    /// `now`.
    pub fn next(
        &mut self,
        now: f64,
        mut budget: Option<&mut RateBudget>,
    ) -> Result<JobStep, ArgumentError> {
        loop {
            if let Some(step) = &self.finished {
                return Ok(step.clone());
            }
            let step = self.call.next(now, budget.as_deref_mut())?;
            match step {
                CallStep::Send { request } => return Ok(JobStep::Send { request }),
                CallStep::Wait { seconds } => return Ok(JobStep::Wait { seconds }),
                CallStep::RefreshToken { reason } => {
                    self.token = None;
                    return Ok(JobStep::RefreshToken { reason });
                }
                CallStep::Fail { failure } => return Ok(self.fail(failure)),
                CallStep::Reconcile { reason, .. } if self.stage == Stage::Create => {
                    if self.idempotency_key.is_none() {
                        self.idempotency_key = self.call.idempotency_key().map(str::to_owned);
                    }
                    let _ = reason;
                    self.start(Stage::Reconcile, now, 0.0)?;
                }
                CallStep::Reconcile { reason, .. } => {
                    return Ok(self.fail(fail("reconcile", reason)));
                }
                CallStep::Done { response } => {
                    if let Some(step) = self.advance(&response, now)? {
                        return Ok(step);
                    }
                }
            }
        }
    }

    /// The job's own step after a request of the current stage succeeded; `None` when a new
    /// request was started.
    fn advance(&mut self, response: &Response, now: f64) -> Result<Option<JobStep>, ArgumentError> {
        let body = json(response);
        let id_field = self.field(&self.options.id_field, "id").to_owned();
        let state_field = self.field(&self.options.state_field, "status").to_owned();
        match self.stage {
            Stage::List => {
                let page = body.unwrap_or(Value::Null);
                self.baseline = items(&page)
                    .iter()
                    .filter_map(|e| e.get(&id_field).and_then(text))
                    .collect();
                self.start(Stage::Create, now, 0.0)?;
            }
            Stage::Create => {
                self.creates += 1;
                self.idempotency_key = self.call.idempotency_key().map(str::to_owned);
                let record = body.unwrap_or(Value::Null);
                let Some(id) = record.get(&id_field).and_then(text) else {
                    return Ok(Some(self.fail(fail(
                        "no_export_id",
                        format!("the create succeeded ({}) but its response has no `{id_field}` member naming the export; set id_field to the member that does", response.status),
                    ))));
                };
                self.export_id = Some(id);
                let state = record.get(&state_field).and_then(text);
                return self.polled(state.as_deref().unwrap_or("queued"), now);
            }
            Stage::Reconcile => {
                let page = body.unwrap_or(Value::Null);
                let sent: serde_json::Map<String, Value> =
                    serde_json::from_slice(&self.options.body).unwrap_or_default();
                let found: Vec<Value> = items(&page)
                    .into_iter()
                    .filter(|e| {
                        e.get(&id_field)
                            .and_then(text)
                            .is_some_and(|id| !self.baseline.contains(&id))
                            && sent.iter().all(|(k, v)| e.get(k) == Some(v))
                    })
                    .collect();
                match found.as_slice() {
                    [] if self.creates + 1 >= MAX_CREATES => {
                        return Ok(Some(self.fail(fail(
                            "creates_exhausted",
                            format!("{MAX_CREATES} creates were sent and none can be found among the tenant's exports; check the service before creating again"),
                        ))));
                    }
                    [] => {
                        self.creates += 1;
                        self.start(Stage::Create, now, 0.0)?;
                    }
                    [one] => {
                        self.creates += 1;
                        self.export_id = one.get(&id_field).and_then(text);
                        let state = one.get(&state_field).and_then(text);
                        return self.polled(state.as_deref().unwrap_or("queued"), now);
                    }
                    several => {
                        return Ok(Some(self.fail(fail(
                            "reconcile_ambiguous",
                            format!("{} exports created since the job started match the data sent; the job cannot tell which is its own", several.len()),
                        ))));
                    }
                }
            }
            Stage::Poll => {
                let record = body.unwrap_or(Value::Null);
                let state = record.get(&state_field).and_then(text).unwrap_or_default();
                return self.polled(&state, now);
            }
            Stage::Download => {
                let step = JobStep::Done {
                    export_id: self.export_id.clone().unwrap_or_default(),
                    artifact: response.body.clone(),
                };
                return Ok(Some(self.finish(step)));
            }
        }
        Ok(None)
    }

    /// After a read (the create's response counts as the first): poll again, download, or stop.
    fn polled(&mut self, state: &str, now: f64) -> Result<Option<JobStep>, ArgumentError> {
        self.polls += 1;
        let random = self.jitter.next();
        let decision = export_poll_decision(
            &ExportState::parse(state),
            self.polls,
            random,
            self.options.max_polls,
        )?;
        match decision.action {
            PollAction::KeepPolling => self.start(Stage::Poll, now, decision.delay_seconds)?,
            PollAction::Download => self.start(Stage::Download, now, 0.0)?,
            PollAction::Stop => {
                self.stage = Stage::Poll;
                return Ok(Some(self.fail(fail("poll_stopped", decision.reason))));
            }
        }
        Ok(None)
    }

    /// A token for the requests to come (see [`Call::token`]).
    pub fn token(&mut self, token: BearerToken, refresh_at: Option<f64>) {
        self.token = Some(token.clone());
        self.refresh_at = refresh_at;
        self.call.token(token, refresh_at);
    }

    /// The response to the request in flight (see [`Call::response`]).
    pub fn response<H: crate::HeaderMap + ?Sized>(
        &mut self,
        status: i64,
        headers: &H,
        body: &[u8],
        now: f64,
    ) -> Result<(), ArgumentError> {
        self.call.response(status, headers, body, now)
    }

    /// Whether a response with `status` to the request in flight is streamed to the host's
    /// sink: true only for a 2xx to the download (see [`Call::streams`]).
    pub fn streams(&self, status: i64) -> bool {
        self.finished.is_none() && self.call.streams(status)
    }

    /// The download's response, its body streamed to the host's sink (see
    /// [`Call::streamed_response`]): `Done` then carries an empty artifact, and a partial body
    /// is read again into a fresh sink.
    pub fn streamed_response<H: crate::HeaderMap + ?Sized>(
        &mut self,
        status: i64,
        headers: &H,
        length: u64,
        now: f64,
    ) -> Result<(), ArgumentError> {
        self.call.streamed_response(status, headers, length, now)
    }

    /// No response to the request in flight (see [`Call::transport_failure`]).
    pub fn transport_failure(
        &mut self,
        failure: TransportFailure,
        now: f64,
    ) -> Result<(), ArgumentError> {
        self.call.transport_failure(failure, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TENANT: &str = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e";

    fn job() -> ExportJob {
        let mut job = ExportJob::new(ExportJobOptions {
            tenant_id: TENANT.to_owned(),
            body: br#"{"format":"csv"}"#.to_vec(),
            call: CallOptions {
                seed: 3,
                ..CallOptions::default()
            },
            ..ExportJobOptions::default()
        })
        .unwrap();
        job.token(BearerToken::reports("secret-bearer-77"), None);
        job
    }

    fn sent(step: JobStep) -> String {
        match step {
            JobStep::Send { request } => format!("{} {}", request.method, request.path_and_query()),
            other => panic!("expected a send, got {other:?}"),
        }
    }

    fn resume(job: &ExportJob) -> ExportJob {
        let saved = serde_json::to_string(job).unwrap();
        assert!(
            !saved.contains("secret-bearer-77"),
            "the token is never saved: {saved}"
        );
        let mut job: ExportJob = serde_json::from_str(&saved).unwrap();
        job.token(BearerToken::reports("secret-bearer-77"), None);
        job
    }

    #[test]
    fn resumed_after_a_lost_create_it_reconciles_instead_of_creating_again() {
        let mut job = job();
        let list = "GET /api/platform/v1/exports?limit=100";
        assert_eq!(sent(job.next(0.0, None).unwrap()), list);
        job.response(200, &[("x", "y")], br#"{"data":[]}"#, 0.0)
            .unwrap();
        assert_eq!(
            sent(job.next(0.0, None).unwrap()),
            "POST /api/platform/v1/exports"
        );
        job.transport_failure(TransportFailure::Timeout, 1.0)
            .unwrap();
        let mut job = resume(&job);
        assert_eq!(sent(job.next(1.0, None).unwrap()), list);
        job.response(
            200,
            &[("x", "y")],
            br#"[{"id":"e1","format":"csv","status":"queued"}]"#,
            1.0,
        )
        .unwrap();
        assert!(matches!(job.next(1.0, None).unwrap(), JobStep::Wait { .. }));
        assert_eq!(job.export_id(), Some("e1"), "adopted, not created again");
    }

    #[test]
    fn a_crash_while_the_create_is_in_flight_is_a_lost_connection() {
        let mut job = job();
        job.next(0.0, None).unwrap();
        job.response(200, &[("x", "y")], b"[]", 0.0).unwrap();
        assert_eq!(
            sent(job.next(0.0, None).unwrap()),
            "POST /api/platform/v1/exports"
        );
        // Saved with the create in flight, then the process died.
        let mut job = resume(&job);
        assert_eq!(
            sent(job.next(5.0, None).unwrap()),
            "GET /api/platform/v1/exports?limit=100",
            "never a blind second create"
        );
    }

    #[test]
    fn only_a_download_s_2xx_is_streamed() {
        let mut job = job();
        job.next(0.0, None).unwrap();
        assert!(!job.streams(200), "the list is read whole");
        let err = job
            .streamed_response(200, &[("x", "y")], 2, 0.0)
            .unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        job.response(200, &[("x", "y")], b"[]", 0.0).unwrap();
    }

    #[test]
    fn inputs_out_of_turn_are_refused() {
        let mut job = job();
        assert_eq!(
            job.response(200, &[("x", "y")], b"[]", 0.0)
                .unwrap_err()
                .code(),
            "invalid_argument"
        );
        assert!(job.next(f64::NAN, None).is_err());
    }
}
