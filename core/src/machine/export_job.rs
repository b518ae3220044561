//! [`ExportJob`]: a reporting export, create → poll → download, built on [`Call`].
//!
//! - The create (`createPlatformExport`, an `idem` operation) is repeated with its idempotency
//!   key only when the key is sent (the host names its header). Otherwise a create that may have
//!   been applied (a timeout, a lost connection, a 5xx) is reconciled as the spec says — "look
//!   up or search by the data already sent before creating again" — and the job never guesses:
//!   - before its first create, the job lists the tenant's exports, **every page** (the list's
//!     cursor), filtered by the create's `export_class` and `format` when the body names them:
//!     the "before" set;
//!   - after a create that may have been applied, it lists them again, every page, and takes as
//!     candidates the exports that are new since the "before" set and whose members repeat the
//!     body's (a member the list item leaves out does not disqualify it: the spec promises only
//!     "a page of safe lifecycle states");
//!   - one candidate is adopted; none is looked for again after a grace delay
//!     ([`ExportJobOptions::reconcile_grace_seconds`]: an export may show up in the list a read
//!     late), and only when every look found none is the create sent again (at most
//!     [`MAX_CREATES`] creates);
//!   - several candidates, a list that cannot be read to its end (a full page without a next
//!     cursor, a cursor seen twice, more than [`MAX_LIST_PAGES`] pages, a failed read) or a
//!     "before" set that could not be completed stop the job with `Reconcile`, carrying the
//!     candidates: a second create is never sent on a guess.
//! - Polling follows [`crate::export::export_poll_decision`]: unknown intermediate states are
//!   polled like `queued`, end states stop, the budget is `max_polls` reads and, when given,
//!   `max_poll_seconds` of polling.
//! - The download is one complete artifact: a 206, a `Content-Range` or a body other than its
//!   `Content-Length` is read again. The host may stream the body to its own sink (a file) and
//!   report only its length ([`ExportJob::streams`], [`ExportJob::streamed_response`]).
//!
//! Export records' fields are not shown in the spec; the job reads the export's id from `id`
//! and its state from `status` (the list filter's name) unless told otherwise. The list page's
//! shape is not shown either: its items are the page itself when it is an array, else its
//! first array among `data`, `items`, `exports` and `results`; its next cursor is read from
//! `next_cursor`/`nextCursor` (at the top, or under `meta`, `pagination`, `page`, `paging`,
//! `links` or `_links`) or a `next` link's `cursor` parameter, and `has_more: false` or a null
//! cursor ends it; a page shorter than the limit is the last, and after a full page that names
//! no cursor the next is asked for with its last item's id (the spec's export cursor is a UUID).

use super::pages::{items_of, After, PageCursor, PagesEnd, PagesOptions, Paging};
use super::session::TokenSlot;
use super::{
    Call, CallFailure, CallOptions, EventLevel, Jitter, MachineEvent, Response, Session, Step,
    StepOutcome,
};
use crate::bearer::BearerToken;
use crate::export::{export_poll_decision, ExportState, PollAction};
use crate::request::RequestParams;
use crate::retry::{BackoffPolicy, RateBudget, Reconcile, TransportFailure};
use crate::ArgumentError;
use serde_json::Value;

/// Most creates a job sends: the first, and new ones after reconciling proved none applied.
pub const MAX_CREATES: u32 = 3;
/// The page size of the job's lists (the spec's maximum).
const LIST_LIMIT: u32 = 100;
/// The operation the job's listings read.
const LIST_OPERATION: &str = "listPlatformExports";
/// Most pages one listing reads (10,000 exports); a longer list cannot be decided.
pub const MAX_LIST_PAGES: u32 = 100;
/// Default total grace, in seconds, for an export created by a lost create to show up in the
/// list: looks again after 2 s and 5 s more.
pub const DEFAULT_RECONCILE_GRACE_SECONDS: f64 = 7.0;
/// Body members that are also list filters: the listings ask for these only.
const FILTERS: [&str; 2] = ["export_class", "format"];

/// The one message of an interrupted export job (`export_interrupted`: Ctrl-C, a cancelled
/// task, an aborted signal), the same in every language: whether the service named the export
/// (`export_id`, cut to 100 characters, control characters replaced) and what resuming from
/// the job's checkpoint does. Example: `the export job was interrupted while export exp_9 may
/// still be running on the service: resume from the checkpoint to finish it (it is read, never
/// created again)`.
pub fn export_interrupted_message(export_id: Option<&str>) -> String {
    match export_id.filter(|id| !id.is_empty()) {
        Some(id) => {
            let shown: String = id
                .chars()
                .take(100)
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            format!("the export job was interrupted while export {shown} may still be running on the service: resume from the checkpoint to finish it (it is read, never created again)")
        }
        None => "the export job was interrupted before the service named its export (a create may have been sent): resume from the checkpoint, which looks for that export before it creates one".to_owned(),
    }
}

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
    /// Most seconds of polling, from the create's answer to the last read (default: bounded by
    /// `max_polls` only).
    pub max_poll_seconds: Option<f64>,
    /// The shortest wait between two reads of a pending export, in seconds (default: none, the
    /// spec's backoff decides: 2 s, 5 s, 15 s, then 30–60 s). A server's `Retry-After` on a
    /// read still holds the read back longer.
    pub min_poll_interval_seconds: Option<f64>,
    /// The longest wait between two reads of a pending export, in seconds (default: none, the
    /// backoff's 60 s cap).
    pub max_poll_interval_seconds: Option<f64>,
    /// Seconds, in all, a reconciling job looks again for an export a lost create may have
    /// made before concluding there is none (default `DEFAULT_RECONCILE_GRACE_SECONDS`; the
    /// looks follow the backoff: after 2 s, 5 s, 15 s, …, while they fit). 0: one look.
    pub reconcile_grace_seconds: Option<f64>,
    /// The limits of each request and the seed of the job's jitter and keys.
    pub call: CallOptions,
    /// The member holding the export's id (default `id`).
    pub id_field: Option<String>,
    /// The member holding the export's state (default `status`).
    pub state_field: Option<String>,
}

/// The step type of an [`ExportJob`]: [`Step`], under its former name.
#[deprecated(since = "0.1.0", note = "renamed `Step`, shared with `Call`")]
pub type JobStep = Step;

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

/// A listing of the tenant's exports in progress: one pass over every page.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Listing {
    /// Where the pass is (the page being read, the cursors seen).
    #[serde(flatten)]
    at: PageCursor,
    /// The items read so far: (id, state), in order.
    items: Vec<(String, Option<String>)>,
}

/// A reporting export in progress (see the module documentation). Its state serialises (the
/// token excepted), so a job resumes after a crash without creating a second export.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ExportJob {
    options: ExportJobOptions,
    stage: Stage,
    call: Call,
    jitter: Jitter,
    /// The token of a job standing alone ([`ExportJob::token`]); not saved.
    #[serde(skip)]
    own: TokenSlot,
    /// The exports listed before the first create (all of them, unless `baseline_gap` says
    /// why the list could not be read to its end).
    baseline: Vec<String>,
    /// Why the "before" listing could not be completed.
    baseline_gap: Option<String>,
    listing: Listing,
    /// Reconciling looks made since the last create.
    looks: u32,
    /// Seconds of grace waited since the last create.
    grace_waited: f64,
    creates: u32,
    idempotency_key: Option<String>,
    export_id: Option<String>,
    polls: i64,
    /// When polling began (the create's answer, or the adoption).
    poll_started: Option<f64>,
    /// Until when a lost create's `Retry-After` holds the next create back.
    #[serde(default)]
    create_not_before: Option<f64>,
    #[serde(skip)]
    finished: Option<Step>,
    /// The events of the job's finished calls and its own ([`ExportJob::take_events`]); not saved.
    #[serde(skip)]
    events: Vec<MachineEvent>,
    /// Resumed and not stepped since: the polling budget starts again at the next step.
    #[serde(skip)]
    resumed: bool,
    /// The last step given is a send or a wait, and [`ExportJob::checkpoint`] has not been
    /// asked since.
    #[serde(skip)]
    checkpoint_due: bool,
    /// The last checkpoint given (or the text resumed from); not saved.
    #[serde(skip)]
    checkpoint_given: Option<String>,
}

/// The JSON of a response body, when it is JSON.
fn json(response: &Response) -> Option<Value> {
    serde_json::from_slice(&response.body).ok()
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
    /// an empty tenant, or limits out of range. Nothing is sent before [`ExportJob::next`]; the
    /// first request lists the tenant's exports when the create must be reconcilable (no
    /// idempotency header), else it is the create.
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
        for (name, v) in [
            ("max_poll_seconds", options.max_poll_seconds),
            ("reconcile_grace_seconds", options.reconcile_grace_seconds),
            (
                "min_poll_interval_seconds",
                options.min_poll_interval_seconds,
            ),
            (
                "max_poll_interval_seconds",
                options.max_poll_interval_seconds,
            ),
        ] {
            if v.is_some_and(|v| !(v.is_finite() && (0.0..=86_400.0).contains(&v))) {
                return Err(ArgumentError::new(
                    name,
                    "must be finite seconds, 0 to 86400",
                ));
            }
        }
        if let (Some(min), Some(max)) = (
            options.min_poll_interval_seconds,
            options.max_poll_interval_seconds,
        ) {
            if min > max {
                return Err(ArgumentError::new(
                    "min_poll_interval_seconds",
                    format!(
                        "must not exceed max_poll_interval_seconds ({} > {})",
                        crate::text::Num(min),
                        crate::text::Num(max)
                    ),
                ));
            }
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
            own: TokenSlot::default(),
            baseline: Vec::new(),
            baseline_gap: None,
            listing: Listing::default(),
            looks: 0,
            grace_waited: 0.0,
            creates: 0,
            idempotency_key: None,
            export_id: None,
            polls: 0,
            poll_started: None,
            create_not_before: None,
            finished: None,
            events: Vec::new(),
            resumed: false,
            checkpoint_due: false,
            checkpoint_given: None,
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

    /// A job saved by [`ExportJob::save`]. Promises `invalid_argument` for anything else. Its
    /// counts (attempts, creates, polls) carry on; its time budgets (each request's
    /// `max_elapsed_seconds`, `max_poll_seconds`) start again at the first step after the
    /// resume, however long the saved state waited: a job interrupted overnight resumes, it
    /// does not fail for the time it was gone (and a create in flight is still reconciled).
    pub fn resume(saved: &str) -> Result<Self, ArgumentError> {
        let mut job: Self = serde_json::from_str(saved)
            .map_err(|e| ArgumentError::new("saved", format!("is not a saved export job: {e}")))?;
        job.call.mark_resumed();
        job.resumed = true;
        job.checkpoint_given = Some(saved.to_owned());
        Ok(job)
    }

    /// The checkpoint to keep before performing the step just given, or `None`. Promises the
    /// rule every host follows: a text ([`ExportJob::save`]) when the last step given is a
    /// `Send` or a `Wait` and the state differs from the last text given (or resumed from),
    /// once per step; `None` for any other step, when asked again, or when nothing changed.
    /// Kept before each request, a create in flight is reconciled on resume; kept before each
    /// pause, a `Retry-After`, backoff or poll interval is waited out by the resumed job
    /// instead of being cut short.
    pub fn checkpoint(&mut self) -> Option<String> {
        if !std::mem::take(&mut self.checkpoint_due) {
            return None;
        }
        let text = self.save();
        if self.checkpoint_given.as_deref() == Some(text.as_str()) {
            return None;
        }
        self.checkpoint_given = Some(text.clone());
        Some(text)
    }

    /// The export's id, once the create's response (or the reconciling list) named it.
    pub fn export_id(&self) -> Option<&str> {
        self.export_id.as_deref()
    }

    /// Whether the job has reached `Done`, `Reconcile` or `Fail`.
    pub fn is_finished(&self) -> bool {
        self.finished.is_some()
    }

    fn field<'a>(&'a self, name: &'a Option<String>, default: &'a str) -> &'a str {
        name.as_deref().unwrap_or(default)
    }

    /// The body sent, as an object.
    fn sent(&self) -> serde_json::Map<String, Value> {
        serde_json::from_slice(&self.options.body).unwrap_or_default()
    }

    fn start(&mut self, stage: Stage, now: f64, delay: f64) -> Result<(), ArgumentError> {
        let tenant = self.options.tenant_id.clone();
        let mut params = RequestParams {
            tenant_id: Some(tenant),
            ..RequestParams::default()
        };
        let operation = match stage {
            Stage::List | Stage::Reconcile => {
                params.query = self.paging()?.query(&self.listing.at);
                LIST_OPERATION
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
        call.hold(now, delay);
        let done = std::mem::replace(&mut self.call, call).take_raw_events();
        self.keep_events(done);
        self.stage = stage;
        Ok(())
    }

    fn finish(&mut self, step: Step) -> Step {
        self.finished = Some(step.clone());
        step
    }

    fn fail(&mut self, failure: CallFailure) -> Step {
        let step = Step::Fail {
            stage: Some(self.stage.name().to_owned()),
            export_id: self.export_id.clone(),
            failure,
        };
        self.finish(step)
    }

    fn reconcile(&mut self, reason: String, candidates: Vec<String>) -> Step {
        self.stage = Stage::Reconcile;
        self.finish(Step::Reconcile {
            reconcile: Reconcile::LookupBySentData,
            reason,
            candidates,
            stage: Some(Stage::Reconcile.name().to_owned()),
        })
    }

    /// The step to perform at `now` for a job standing alone (its token from
    /// [`ExportJob::token`]), taking requests from `budget` (shared by the host's calls).
    /// Promises the steps of the current request's [`Call`], and between requests the job's
    /// own: the pages of the "before" list, the create, the first read after the create (with
    /// the poll delay), reads until `ready`, the download, then `Done` with the artifact;
    /// after a create that may have been applied, the reconciling lists (see the module
    /// documentation), then the adopted export's reads, a new create, or `Reconcile`; `Fail`
    /// naming the stage when a request fails, an export ends cancelled or revoked, or a polling
    /// budget runs out. `invalid_argument` for a bad `now`.
    pub fn next(
        &mut self,
        now: f64,
        budget: Option<&mut RateBudget>,
    ) -> Result<Step, ArgumentError> {
        let mut own = std::mem::take(&mut self.own);
        let step = self.step(now, &mut own, budget, None);
        self.own = own;
        step
    }

    /// [`ExportJob::next_in`], then [`ExportJob::take_events_from`] (`min`): the step and the
    /// events up to it, in one input (see [`Call::advance_in`]).
    pub fn advance_in(
        &mut self,
        now: f64,
        session: &mut Session,
        min: Option<EventLevel>,
    ) -> Result<(Step, Vec<MachineEvent>), ArgumentError> {
        let step = self.next_in(now, session)?;
        Ok((step, self.take_events_from(min)))
    }

    /// The step to perform at `now` for a job on `session` (its token and budget are the
    /// session's). Promises what [`ExportJob::next`] promises, and `AwaitToken` as
    /// [`Call::next_in`] does.
    pub fn next_in(&mut self, now: f64, session: &mut Session) -> Result<Step, ArgumentError> {
        let step = self.step(
            now,
            &mut session.slot,
            session.budget.as_mut(),
            session.fleet.as_ref(),
        );
        let current = self.call.take_raw_events();
        self.keep_events(current);
        session.notice_once(&mut self.events);
        step
    }

    /// [`ExportJob::step_inner`], noting whether its step is one a checkpoint is kept before.
    fn step(
        &mut self,
        now: f64,
        slot: &mut TokenSlot,
        budget: Option<&mut RateBudget>,
        fleet: Option<&super::Fleet>,
    ) -> Result<Step, ArgumentError> {
        let step = self.step_inner(now, slot, budget, fleet);
        self.checkpoint_due = matches!(step, Ok(Step::Send { .. } | Step::Wait { .. }));
        step
    }

    fn step_inner(
        &mut self,
        now: f64,
        slot: &mut TokenSlot,
        mut budget: Option<&mut RateBudget>,
        fleet: Option<&super::Fleet>,
    ) -> Result<Step, ArgumentError> {
        if std::mem::take(&mut self.resumed) && self.poll_started.is_some() && now.is_finite() {
            self.poll_started = Some(now);
        }
        loop {
            if let Some(step) = &self.finished {
                return Ok(step.clone());
            }
            let step = self.call.step(now, slot, budget.as_deref_mut(), fleet)?;
            match step {
                Step::Send { .. }
                | Step::Reserve { .. }
                | Step::Wait { .. }
                | Step::RefreshToken { .. }
                | Step::AwaitToken { .. } => return Ok(step),
                Step::Fail { failure, .. } if self.stage == Stage::Reconcile => {
                    let candidates = self.candidates();
                    return Ok(self.reconcile(
                        format!("the create may have been applied, and the list that would tell could not be read ({}); check the tenant's exports before creating again", failure.reason),
                        candidates,
                    ));
                }
                Step::Fail { failure, .. } => return Ok(self.fail(failure)),
                Step::Reconcile { .. } if self.stage == Stage::Create => {
                    if self.idempotency_key.is_none() {
                        self.idempotency_key = self.call.idempotency_key().map(str::to_owned);
                    }
                    self.creates += 1;
                    self.create_not_before = self.call.retry_after_until();
                    self.looks = 0;
                    self.grace_waited = 0.0;
                    self.listing = Listing::default();
                    self.start(Stage::Reconcile, now, 0.0)?;
                }
                Step::Reconcile { reason, .. } => {
                    return Ok(self.reconcile(reason, Vec::new()));
                }
                Step::Done { response, .. } => {
                    if let Some(step) = self.advance(&response, now)? {
                        return Ok(step);
                    }
                }
            }
        }
    }

    /// The candidates among the items listed so far: new since the "before" set, and matching
    /// every member of the body they repeat.
    fn candidates(&self) -> Vec<String> {
        self.listing
            .items
            .iter()
            .filter(|(id, _)| !self.baseline.contains(id))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The rules of the job's listings: the export list filtered by the body's `export_class`
    /// and `format`, 100 a page, at most [`MAX_LIST_PAGES`] pages.
    fn paging(&self) -> Result<Paging, ArgumentError> {
        let sent = self.sent();
        let query: Vec<(String, String)> = FILTERS
            .iter()
            .filter_map(|name| match sent.get(*name) {
                Some(Value::String(v)) => Some(((*name).to_owned(), v.clone())),
                _ => None,
            })
            .collect();
        let options = PagesOptions {
            max_pages: Some(MAX_LIST_PAGES),
            page_size: Some(LIST_LIMIT),
            id_field: Some(self.field(&self.options.id_field, "id").to_owned()),
            ..PagesOptions::default()
        };
        Paging::new(LIST_OPERATION, &query, &options)
    }

    /// One page of a listing read: `Ok(true)` when the listing is complete, `Ok(false)` when
    /// the next page was started, `Err(why)` when the list cannot be read to its end.
    fn page(
        &mut self,
        response: &Response,
        now: f64,
    ) -> Result<Result<bool, String>, ArgumentError> {
        let id_field = self.field(&self.options.id_field, "id").to_owned();
        let state_field = self.field(&self.options.state_field, "status").to_owned();
        let sent = self.sent();
        let Some(page) = json(response) else {
            return Ok(Err("a page of the list is not JSON".to_owned()));
        };
        let paging = self.paging()?;
        let (_, after) = paging.read(&mut self.listing.at, &page);
        let reconciling = self.stage == Stage::Reconcile;
        for item in items_of(&page).map_or(&[][..], |(_, found)| found) {
            let Some(id) = item.get(&id_field).and_then(text) else {
                return Ok(Err(format!("an item of the list has no `{id_field}` member; set id_field to the member naming the export")));
            };
            // In a reconciling list, an item that repeats a member of the body with another
            // value is another export, never the job's own.
            if reconciling && !sent.iter().all(|(k, v)| item.get(k).is_none_or(|x| x == v)) {
                continue;
            }
            let state = item.get(&state_field).and_then(text);
            if !self.listing.items.iter().any(|(i, _)| *i == id) {
                self.listing.items.push((id, state));
            }
        }
        match after {
            After::End(PagesEnd::Last) => Ok(Ok(true)),
            After::End(_) => Ok(Err(format!("the list goes on past {MAX_LIST_PAGES} pages"))),
            After::Fail(_, why) => Ok(Err(why)),
            After::Fetch => {
                let stage = self.stage;
                self.start(stage, now, 0.0)?;
                Ok(Ok(false))
            }
        }
    }

    /// The delay before the next reconciling look, when the grace allows one.
    fn grace_delay(&self) -> Option<f64> {
        let grace = self
            .options
            .reconcile_grace_seconds
            .unwrap_or(DEFAULT_RECONCILE_GRACE_SECONDS);
        let delay = BackoffPolicy::default()
            .delay(i64::from(self.looks), 0.0)
            .ok()?;
        (self.grace_waited + delay <= grace + 1e-9).then_some(delay)
    }

    /// The job's own step after a request of the current stage succeeded; `None` when a new
    /// request was started.
    fn advance(&mut self, response: &Response, now: f64) -> Result<Option<Step>, ArgumentError> {
        let body = json(response);
        let id_field = self.field(&self.options.id_field, "id").to_owned();
        let state_field = self.field(&self.options.state_field, "status").to_owned();
        match self.stage {
            Stage::List => {
                match self.page(response, now)? {
                    Ok(false) => {}
                    done => {
                        // An incomplete "before" set is kept with why: the create can still
                        // succeed plainly; a create that may have been applied then stops the
                        // job with what is known.
                        self.baseline = self.listing.items.iter().map(|(i, _)| i.clone()).collect();
                        self.baseline_gap = done.err();
                        self.listing = Listing::default();
                        self.start(Stage::Create, now, 0.0)?;
                    }
                }
            }
            Stage::Create => {
                self.creates += 1;
                self.idempotency_key = self.call.idempotency_key().map(str::to_owned);
                let record = body.unwrap_or(Value::Null);
                let Some(id) = record.get(&id_field).and_then(text) else {
                    return Ok(Some(self.fail(CallFailure::new(
                        "no_export_id",
                        format!("the create succeeded ({}) but its response has no `{id_field}` member naming the export; set id_field to the member that does", response.status),
                    ))));
                };
                self.export_id = Some(id);
                self.poll_started = Some(now);
                let state = record.get(&state_field).and_then(text);
                return self.polled(state.as_deref().unwrap_or("queued"), now);
            }
            Stage::Reconcile => {
                let complete = match self.page(response, now)? {
                    Ok(false) => return Ok(None),
                    Ok(true) => None,
                    Err(why) => Some(why),
                };
                let candidates = self.candidates();
                if let Some(why) = complete.or_else(|| {
                    self.baseline_gap.as_ref().map(|g| {
                        format!("the exports listed before the create could not all be read ({g})")
                    })
                }) {
                    return Ok(Some(self.reconcile(
                        format!("the create may have been applied and the list cannot tell: {why}; check the tenant's exports before creating again"),
                        candidates,
                    )));
                }
                match candidates.as_slice() {
                    [] => {
                        self.looks += 1;
                        if let Some(delay) = self.grace_delay() {
                            self.grace_waited += delay;
                            self.listing = Listing::default();
                            self.start(Stage::Reconcile, now, delay)?;
                        } else if self.creates >= MAX_CREATES {
                            return Ok(Some(self.fail(CallFailure::new(
                                "creates_exhausted",
                                format!("{MAX_CREATES} creates were sent and none can be found among the tenant's exports; check the service before creating again"),
                            ))));
                        } else {
                            // A create sent again still honours the Retry-After the lost one got.
                            let hold = self.create_not_before.map_or(0.0, |u| (u - now).max(0.0));
                            self.listing = Listing::default();
                            self.start(Stage::Create, now, hold)?;
                        }
                    }
                    [one] => {
                        let id = one.clone();
                        let state = self
                            .listing
                            .items
                            .iter()
                            .find(|(i, _)| *i == id)
                            .and_then(|(_, s)| s.clone());
                        self.export_id = Some(id);
                        self.poll_started = Some(now);
                        self.listing = Listing::default();
                        return self.polled(state.as_deref().unwrap_or("queued"), now);
                    }
                    several => {
                        let n = several.len();
                        let candidates = several.to_vec();
                        return Ok(Some(self.reconcile(
                            format!("{n} exports created since the job started match the data sent; the job cannot tell which is its own"),
                            candidates,
                        )));
                    }
                }
            }
            Stage::Poll => {
                let record = body.unwrap_or(Value::Null);
                let state = record.get(&state_field).and_then(text).unwrap_or_default();
                return self.polled(&state, now);
            }
            Stage::Download => {
                let step = Step::Done {
                    response: response.clone(),
                    json: false,
                    // the download is reached only once the export's id is known
                    export_id: self.export_id.clone(),
                };
                return Ok(Some(self.finish(step)));
            }
        }
        Ok(None)
    }

    /// After a read (the create's response counts as the first): poll again, download, or stop.
    fn polled(&mut self, state: &str, now: f64) -> Result<Option<Step>, ArgumentError> {
        self.polls += 1;
        // after the read's own events, in order
        let mut events = self.call.take_raw_events();
        let mut event = MachineEvent::new("poll", "getPlatformExport", self.polls);
        event.state = Some(state.chars().take(64).collect());
        events.push(event);
        self.keep_events(events);
        let random = self.jitter.next();
        let mut decision = export_poll_decision(
            &ExportState::parse(state),
            self.polls,
            random,
            self.options.max_polls,
        )?;
        if decision.action == PollAction::KeepPolling {
            if let Some(min) = self.options.min_poll_interval_seconds {
                decision.delay_seconds = decision.delay_seconds.max(min);
            }
            if let Some(max) = self.options.max_poll_interval_seconds {
                decision.delay_seconds = decision.delay_seconds.min(max);
            }
        }
        match decision.action {
            PollAction::KeepPolling => {
                let spent = now - self.poll_started.unwrap_or(now);
                if let Some(max) = self.options.max_poll_seconds {
                    if spent + decision.delay_seconds > max {
                        self.stage = Stage::Poll;
                        return Ok(Some(self.fail(CallFailure::new(
                            "poll_stopped",
                            format!("polling budget reached: still {state} after {} s of polling, and the next read would pass max_poll_seconds {}; the export may still become ready, read it later or raise max_poll_seconds", crate::text::Num(spent), crate::text::Num(max)),
                        ))));
                    }
                }
                self.start(Stage::Poll, now, decision.delay_seconds)?;
            }
            PollAction::Download => self.start(Stage::Download, now, 0.0)?,
            PollAction::Stop => {
                self.stage = Stage::Poll;
                return Ok(Some(
                    self.fail(CallFailure::new("poll_stopped", decision.reason)),
                ));
            }
        }
        Ok(None)
    }

    /// What became of the step the host performed (see [`Call::report`]): the one input a job
    /// takes after `Send` and `Reserve`.
    pub fn report<H: crate::HeaderMap + ?Sized>(
        &mut self,
        outcome: StepOutcome<'_, H>,
        now: f64,
    ) -> Result<(), ArgumentError> {
        self.call.report(outcome, now)
    }

    /// (Fleet.) The reply of the pending `Reserve` (see [`Call::reserved`]).
    pub fn reserved(&mut self, reply: Option<&str>, now: f64) -> Result<(), ArgumentError> {
        self.call.reserved(reply, now)
    }

    /// (Fleet.) Redis could not be reached for the pending `Reserve` (see
    /// [`Call::reserve_failed`]).
    pub fn reserve_failed(&mut self, now: f64) -> Result<(), ArgumentError> {
        self.call.reserve_failed(now)
    }

    /// A token for a job standing alone (see [`Call::token`]).
    pub fn token(&mut self, token: BearerToken, refresh_at: Option<f64>) {
        self.own.store(token, refresh_at);
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

    /// What the job did since the last time they were taken, oldest first: its requests' events
    /// (see [`MachineEvent`]) and a `poll` for each state read (`attempt` is the poll's number).
    pub fn take_events(&mut self) -> Vec<MachineEvent> {
        self.take_events_from(None)
    }

    /// The events of [`ExportJob::take_events`] at `min` or above (see
    /// [`Call::take_events_from`]); the others are dropped without being described (the job
    /// keeps its calls' events as recorded until then).
    pub fn take_events_from(&mut self, min: Option<EventLevel>) -> Vec<MachineEvent> {
        let mut events = super::call::described_from(std::mem::take(&mut self.events), min);
        events.extend(self.call.take_events_from(min));
        events
    }

    fn keep_events(&mut self, events: Vec<MachineEvent>) {
        self.events.extend(events);
        let excess = self.events.len().saturating_sub(super::call::MAX_EVENTS);
        self.events.drain(..excess);
    }

    /// The download's body is arriving (see [`Call::progress`]): a `progress` event at each
    /// tenth of it, and when it is whole.
    pub fn progress(&mut self, received: u64, total: Option<u64>) {
        self.call.progress(received, total);
    }

    /// Whether a response with `status` to the request in flight is streamed to the host's
    /// sink: true only for a 200 to the download (see [`Call::streams`]).
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
        job.token(BearerToken::reports("secret-bearer-77", TENANT), None);
        job
    }

    fn sent(step: Step) -> String {
        match step {
            Step::Send { request } => format!("{} {}", request.method, request.path_and_query()),
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
        job.token(BearerToken::reports("secret-bearer-77", TENANT), None);
        job
    }

    #[test]
    fn resumed_after_a_lost_create_it_reconciles_instead_of_creating_again() {
        let mut job = job();
        let list = "GET /api/platform/v1/exports?limit=100&format=csv";
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
        assert!(matches!(job.next(1.0, None).unwrap(), Step::Wait { .. }));
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
            "GET /api/platform/v1/exports?limit=100&format=csv",
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
