//! [`Call`]: one API operation, either API, with everything around the send: the request built
//! from the catalog, the bearer token (refreshed before it expires, and once on 401), the
//! idempotency key of the logical request (kept for every retry), the rate budget, the retry
//! rules of both specs ([`crate::retry::decide_retry`]), `Retry-After` (never shortened), and
//! a complete artifact for an export download (a 206 is retried, never accepted).
//!
//! A host's loop (here over a stand-in `send` that is refused once, then answers 200; a host
//! sends with its own HTTP client and sleeps for real):
//!
//! ```
//! use royaltykit::machine::{Call, CallOptions, Step, StepOutcome};
//! use royaltykit::request::RequestParams;
//! use royaltykit::retry::TransportFailure;
//! use royaltykit::token::BearerToken;
//!
//! # fn main() -> Result<(), royaltykit::Error> {
//! let params = RequestParams { token: Some(BearerToken::enterprise("t")), ..RequestParams::default() };
//! let mut call = Call::new("listEnterpriseReleases", params, CallOptions::default())?;
//! let mut now = 1.0e9;
//! // the host's HTTP client: the status, headers and body, or the failure and its words
//! let mut sent = 0;
//! let mut send = |_request: &royaltykit::request::RequestDescriptor| {
//!     sent += 1;
//!     if sent == 1 {
//!         Err((TransportFailure::ConnectFailed, "ConnectError: refused"))
//!     } else {
//!         Ok((200, vec![("content-type".to_owned(), "application/json".to_owned())], b"{}".to_vec()))
//!     }
//! };
//! let mut cause = None;
//! let response = loop {
//!     match call.next(now, None)? {
//!         Step::Send { request } => match send(&request) {
//!             // what became of the send: one input, `report`
//!             Ok((status, headers, body)) => {
//!                 cause = None;
//!                 let headers = headers.as_slice();
//!                 call.report(StepOutcome::Response { status, headers, body: &body }, now)?
//!             }
//!             Err((failure, words)) => {
//!                 cause = Some(words);
//!                 call.report(StepOutcome::<[(String, String)]>::NoResponse(failure), now)?
//!             }
//!         },
//!         Step::Wait { seconds } => now += seconds, // sleep
//!         Step::RefreshToken { .. } => unreachable!("the token does not expire here"),
//!         Step::Done { response, .. } => break response,
//!         // Fail or Reconcile: the machine is over and the core says what to raise
//!         ended => match ended.error("listEnterpriseReleases", "https://api.example.com", cause) {
//!             Some(error) => return Err(error),
//!             None => unreachable!("{ended:?} is not final"),
//!         },
//!     }
//! };
//! assert_eq!((response.status, sent), (200, 2));
//! # Ok(())
//! # }
//! ```

use super::session::{Acquire, TokenSlot, TokenUse};
use super::{check_now, unexpected, Jitter, Session};
use crate::api_error::parse_api_error;
use crate::bearer::BearerToken;
use crate::catalog::{self, Api, Auth, Idempotency};
use crate::export::{check_download_whole, DownloadError};
use crate::request::{build_request, RequestDescriptor, RequestParams};
use crate::retry::{
    decide_retry, BackoffPolicy, Outcome, Reconcile, RetryAction, RetryClass, RetryDecision,
    RetryLimits, RetryState, TransportFailure,
};
use crate::text::Num;
use crate::{ArgumentError, RoyaltyKitError};

/// An HTTP response as the host received it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers (name, value), in order.
    pub headers: Vec<(String, String)>,
    /// The body, whole.
    pub body: Vec<u8>,
}

impl Response {
    /// Whether the body is JSON by its `Content-Type` (`application/json` or a `+json` type, any
    /// parameters): what a client parses; any other body (an artifact, none) stays bytes.
    pub fn is_json(&self) -> bool {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Content-Type"))
            .is_some_and(|(_, v)| {
                let media = v
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                media == "application/json" || media.ends_with("+json")
            })
    }
}

/// The most of an error response's body a call keeps (saved with it, for the error).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// How a call ended: what is saved, the final step rebuilt from it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum Ended {
    Done(Response),
    Reconcile {
        reconcile: Reconcile,
        reason: String,
    },
    Fail {
        rule: String,
        reason: String,
        status: Option<u16>,
        transport: Option<TransportFailure>,
        retry_after_seconds: Option<f64>,
        cause: Cause,
    },
}

/// What the error of a failed call is made from.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum Cause {
    None,
    Api {
        response: Response,
        at: i64,
    },
    Request {
        code: String,
        detail: String,
        parameter: String,
    },
    Partial(String),
}

/// How a call ended without a usable response.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFailure {
    /// A stable identifier of the rule that stopped it (a retry rule such as
    /// `attempts_exhausted`, `client_error`, `retry_after_exceeds_budget`, or
    /// `invalid_request`, `partial_content`).
    pub rule: String,
    /// A sentence saying why and what to do.
    pub reason: String,
    /// The last response's status, when there was one.
    pub status: Option<u16>,
    /// The last transport failure, when there was no response.
    pub transport: Option<TransportFailure>,
    /// For a `retry_after_exceeds_budget` stop, the wait the server asked for, in seconds.
    pub retry_after_seconds: Option<f64>,
    /// The error: the parsed API error of the last response, the request that could not be
    /// built, or the partial download; `None` for a transport failure.
    pub error: Option<RoyaltyKitError>,
    /// The requests the call sent (0 when it stopped before sending one).
    pub attempts: i64,
}

impl CallFailure {
    /// The error a client raises for this failure: the error it carries (the parsed API
    /// error, the request that could not be built, the partial download), else a `call_failed`
    /// [`RoyaltyKitError::CallFailed`] whose message ([`call_failed_message`]) names
    /// `operation_id`, the host of `base_url`, the reason, the attempts and `cause` (the host's
    /// description of its last transport error, shortened and stripped of control characters).
    /// `stage` and `export_id` are an export job's ([`Step::Fail`]).
    pub fn into_error(
        self,
        operation_id: &str,
        base_url: &str,
        stage: Option<&str>,
        export_id: Option<&str>,
        cause: Option<&str>,
    ) -> RoyaltyKitError {
        if let Some(error) = self.error {
            return error;
        }
        RoyaltyKitError::CallFailed {
            code: "call_failed".to_owned(),
            detail: call_failed_message(operation_id, base_url, &self.reason, self.attempts, cause),
            http_status: 500,
            rule: self.rule,
            reason: self.reason,
            transport: self.transport,
            status: self.status,
            retry_after_seconds: self.retry_after_seconds,
            operation_id: operation_id.to_owned(),
            attempts: self.attempts,
            stage: stage.map(str::to_owned),
            export_id: export_id.map(str::to_owned),
        }
    }

    /// A failure of `rule` without a response or an error to show.
    pub(crate) fn new(rule: &str, reason: impl Into<String>) -> Self {
        Self {
            rule: rule.to_owned(),
            reason: reason.into(),
            status: None,
            transport: None,
            retry_after_seconds: None,
            error: None,
            attempts: 0,
        }
    }
}

/// What a machine did, for the host's logs, metrics and traces: one schema in every language
/// (the members are the same in Python, Node and Kotlin). Never a token, a credential, a header
/// or a body: the operation, the request's method and path, the response's status, the retry
/// rule and its wait.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct MachineEvent {
    /// `send` (a request goes out), `response` (a status came back), `transport_failure` (no
    /// response), `retry` (it is sent again after `wait_seconds`, by `rule`), `refresh_token`
    /// (a new token is needed: `reason`), `rate_limited` (the rate budget holds the next send for
    /// `wait_seconds`), `progress` (a download's body arriving: `received_bytes` of
    /// `total_bytes`: each tenth of it and its end, or each MiB when its length is unknown),
    /// `notice` (once per call, and once per operation for the calls of a
    /// [`Session`]: the operation is deprecated or has a sunset;
    /// `reason` says when, `rule` is `deprecation` or the lifecycle policy's issues),
    /// `reconcile`, `done`, `fail`; an export job adds `poll` (`state`).
    pub kind: String,
    /// The operation id (`exchangePlatformClientCredential` for a token exchange).
    pub operation: String,
    /// The attempt the event belongs to (1 for the first send; 0 before any).
    pub attempt: i64,
    /// `send`: the method.
    pub method: Option<String>,
    /// `send`: the path, without the query.
    pub path: Option<String>,
    /// `response`, `done`, and a `retry` or `fail` after a response: its status.
    pub status: Option<u16>,
    /// `transport_failure`, and a `retry` or `fail` after one: `connect_failed`, `timeout` or
    /// `connection_lost`.
    pub transport: Option<String>,
    /// `retry`, `fail`, `reconcile`: the rule that decided (`server_error_retry`,
    /// `retry_after`, `attempts_exhausted`, …).
    pub rule: Option<String>,
    /// `retry`, `fail`, `reconcile`, `refresh_token`: why, in words.
    pub reason: Option<String>,
    /// `retry`, `rate_limited`: seconds until the next send.
    pub wait_seconds: Option<f64>,
    /// `poll`: the export's state (kept as the service sent it).
    pub state: Option<String>,
    /// `progress`: the bytes of the download's body received so far.
    pub received_bytes: Option<u64>,
    /// `progress`: the body's length as its `Content-Length` announced it, when it did.
    pub total_bytes: Option<u64>,
    /// The level a log shows the event at, the same in every language: `debug` for `send`,
    /// `response` and `done` (the requests themselves), `warning` for `fail` and `notice`, `info`
    /// for the rest (waits, retries, token refreshes, polls, a lost create looked up: what a
    /// person running a job wants to see).
    pub level: String,
    /// The event as one log line, the same in every language:
    /// `retry listPlatformExports #1: 503 wait 2.1 s (server_error_retry)`.
    pub message: String,
}

string_enum! {
    /// The level a log shows a [`MachineEvent`] at, lowest first: `debug` for `send`,
    /// `response` and `done` (the requests themselves), `info` for waits, retries, token
    /// refreshes, polls and progress, `warning` for `fail` and `notice`. A host that listens only
    /// from some level takes the events with [`Call::take_events_from`], and those below it are
    /// dropped without being described.
    pub enum EventLevel as "min_level" {
        /// The requests themselves: `send`, `response`, `done`.
        Debug = "debug",
        /// What a person running a job wants to see: waits, retries, refreshes, polls.
        Info = "info",
        /// A call that failed, and an operation's deprecation or sunset notice.
        Warning = "warning",
    }
}

impl EventLevel {
    /// The level of an event of `kind` (see [`EventLevel`]).
    pub fn of(kind: &str) -> Self {
        match kind {
            "send" | "response" | "done" => Self::Debug,
            "fail" | "notice" => Self::Warning,
            _ => Self::Info,
        }
    }

    /// Whether an event at this level is shown to a host listening from `min`.
    fn reaches(self, min: Self) -> bool {
        self as u8 >= min as u8
    }
}

/// `events` at `min` or above (`None`: every one), described, oldest first.
pub(crate) fn described_from(
    events: Vec<MachineEvent>,
    min: Option<EventLevel>,
) -> Vec<MachineEvent> {
    let min = min.unwrap_or(EventLevel::Debug);
    events
        .into_iter()
        .filter(|e| EventLevel::of(&e.kind).reaches(min))
        .map(MachineEvent::described)
        .collect()
}

/// The events a machine keeps for a host that never takes them: the newest this many.
pub(crate) const MAX_EVENTS: usize = 256;

impl MachineEvent {
    pub(crate) fn new(kind: &str, operation: &str, attempt: i64) -> Self {
        Self {
            kind: kind.to_owned(),
            operation: operation.to_owned(),
            attempt,
            method: None,
            path: None,
            status: None,
            transport: None,
            rule: None,
            reason: None,
            wait_seconds: None,
            state: None,
            received_bytes: None,
            total_bytes: None,
            level: String::new(),
            message: String::new(),
        }
    }

    /// The event with its `level` and `message` filled from its members.
    pub(crate) fn described(mut self) -> Self {
        self.level = EventLevel::of(&self.kind).as_str().to_owned();
        let mut details: Vec<String> = [&self.method, &self.path]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        details.extend(self.status.map(|s| s.to_string()));
        details.extend(
            [&self.transport, &self.state]
                .into_iter()
                .flatten()
                .map(|v| v.chars().take(64).collect::<String>()),
        );
        if let Some(w) = self.wait_seconds {
            details.push(format!("wait {} s", three_digits(w)));
        }
        if let Some(got) = self.received_bytes {
            details.push(match self.total_bytes {
                Some(total) => format!("{got} of {total} bytes"),
                None => format!("{got} bytes"),
            });
        }
        if let Some(rule) = &self.rule {
            details.push(format!("({rule})"));
        }
        if let (true, Some(reason)) = (self.kind == "notice", &self.reason) {
            details.push(reason.clone());
        }
        self.message = format!("{} {} #{}", self.kind, self.operation, self.attempt);
        if !details.is_empty() {
            self.message.push_str(": ");
            self.message.push_str(&details.join(" "));
        }
        self
    }
}

/// Seconds shown to about three significant digits: `2.1`, `30.1`, `0.05`, `123`.
fn three_digits(x: f64) -> String {
    let decimals = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        3
    };
    let factor = 10f64.powi(decimals);
    crate::text::Num((x * factor).round() / factor).to_string()
}

/// What became of a `Send` or a `Reserve` the host performed: the one input of a [`Call`] and
/// an [`ExportJob`](super::ExportJob) after a step ([`Call::report`]). Borrowed: the host's
/// headers and body are read where they are.
pub enum StepOutcome<'a, H: ?Sized> {
    /// The response to `Send`, its body read whole.
    Response {
        /// The HTTP status.
        status: i64,
        /// The response's headers.
        headers: &'a H,
        /// The whole body.
        body: &'a [u8],
    },
    /// The response to `Send` whose body went to the host's sink ([`Call::streams`]).
    Streamed {
        /// The HTTP status.
        status: i64,
        /// The response's headers.
        headers: &'a H,
        /// The bytes written to the sink.
        length: u64,
    },
    /// No response to `Send` (the failure below HTTP); after a `Reserve`, the fleet's Redis
    /// could not be reached.
    NoResponse(TransportFailure),
    /// The fleet's reply to `Reserve` (its text; `None` for nil).
    Reply(Option<&'a str>),
}

// Copied whatever the headers' type (a derive would ask `H: Copy`): only references inside.
impl<H: ?Sized> Clone for StepOutcome<'_, H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<H: ?Sized> Copy for StepOutcome<'_, H> {}

// Never the body or the headers: a token exchange's response carries the token.
impl<H: ?Sized> std::fmt::Debug for StepOutcome<'_, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Response { status, body, .. } => f
                .debug_struct("Response")
                .field("status", status)
                .field("body_bytes", &body.len())
                .finish_non_exhaustive(),
            Self::Streamed { status, length, .. } => f
                .debug_struct("Streamed")
                .field("status", status)
                .field("length", length)
                .finish_non_exhaustive(),
            Self::NoResponse(failure) => f.debug_tuple("NoResponse").field(failure).finish(),
            Self::Reply(reply) => f.debug_tuple("Reply").field(reply).finish(),
        }
    }
}

/// The one message of a failed call (`call_failed`), the same in every language: the operation,
/// the host of `base_url`, the machine's reason, the attempts made and, when the host's HTTP
/// library raised one, the last transport error (`cause`: its class and text, kept to 300
/// characters, control characters replaced). Example: `listPlatformExports to api.example.com:
/// would retry (connect_failed_retry), but 5 of 5 attempts are used (5 attempts made); last
/// failure: ConnectError: [Errno 111] Connection refused`.
pub fn call_failed_message(
    operation: &str,
    base_url: &str,
    reason: &str,
    attempts: i64,
    cause: Option<&str>,
) -> String {
    let after_scheme = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let host = after_scheme.split('/').next().unwrap_or(after_scheme);
    let plural = if attempts == 1 { "" } else { "s" };
    let mut message = format!("{operation} to {host}: {reason} ({attempts} attempt{plural} made)");
    if let Some(cause) = cause.filter(|c| !c.is_empty()) {
        let shown: String = cause
            .chars()
            .take(300)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        message.push_str("; last failure: ");
        message.push_str(&shown);
    }
    message
}

/// The error a client raises for a [`Step::Reconcile`] (of a call or an export job)
/// (`reconcile_required`): the request of `operation_id` may have been applied, so check its
/// effect as `reconcile` says before anything is sent again. `candidates` and `stage`
/// (`reconcile`) are an export job's; a single call has none.
///
/// In every language the host chains the exception of its HTTP library's last failure (when
/// the last send ended in one, such as the timeout that made a create ambiguous) as the cause
/// of the error a call ends in, whatever its family: Python `raise … from`, JS `cause`, Java
/// `initCause`.
pub fn reconcile_required(
    reconcile: Reconcile,
    reason: &str,
    operation_id: &str,
    candidates: Vec<String>,
    stage: Option<&str>,
) -> RoyaltyKitError {
    RoyaltyKitError::ReconcileRequired {
        code: "reconcile_required".to_owned(),
        detail: reason.to_owned(),
        http_status: 500,
        reconcile,
        operation_id: operation_id.to_owned(),
        reason: reason.to_owned(),
        candidates,
        stage: stage.map(str::to_owned),
    }
}

/// What the host does next for a [`Call`] or an [`super::ExportJob`]: the one step type of the
/// two machines, so a host drives both with one loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send `request`, then report the machine's `response` or `transport_failure`.
    Send {
        /// The request (its headers carry the token: never log them).
        request: RequestDescriptor,
    },
    /// Ask again after `seconds` (a backoff, a `Retry-After`, the rate budget, or an export's
    /// poll delay).
    Wait {
        /// How long, in seconds.
        seconds: f64,
    },
    /// Obtain a token (a new one: the one given expires, or was refused), then report
    /// [`Call::token`] (or, for a machine on a [`Session`], [`Session::store_token`], or
    /// [`Session::exchange_failed`] when the exchange fails).
    RefreshToken {
        /// Why.
        reason: String,
    },
    /// (A machine on a fleet's [`Session`]: [`super::Fleet::session`].) Reserve this request in
    /// the fleet's rate budget: send `command` to Redis, then report [`Call::reserved`] with its
    /// reply (or [`Call::reserve_failed`]). The request is sent at the next step when the
    /// reservation holds, in the same second.
    Reserve {
        /// The Redis command ([`super::RESERVE_SCRIPT`] with its keys and arguments).
        command: Vec<String>,
    },
    /// (A machine on a [`Session`].) Another call is obtaining the session's token: ask again
    /// when the session's [`Session::version`] changes, at the latest after `seconds`.
    AwaitToken {
        /// The longest wait, in seconds.
        seconds: f64,
    },
    /// The request may have been applied and must not be repeated blindly: check its effect
    /// first, as `reconcile` says. The machine is over; [`Step::error`] is what a client raises.
    Reconcile {
        /// What to check (an export job: always [`Reconcile::LookupBySentData`]).
        reconcile: Reconcile,
        /// Why, in words.
        reason: String,
        /// (An export job.) The ids of the exports that may be the job's own (new since it
        /// started and matching the data sent), possibly none; a call's are empty.
        candidates: Vec<String>,
        /// (An export job.) `reconcile`; `None` for a call.
        stage: Option<String>,
    },
    /// The operation succeeded: `response` is its 2xx response (an export job's: the
    /// download's, its body the complete artifact, or empty when the body was streamed to the
    /// host's sink). The machine is over.
    Done {
        /// The response.
        response: Response,
        /// Whether a client parses `response.body` as JSON: a call's JSON response
        /// ([`Response::is_json`]); an export's artifact is always bytes.
        json: bool,
        /// (An export job.) The export's id; `None` for a call.
        export_id: Option<String>,
    },
    /// The operation failed for a reason that retrying cannot fix, or its budget ran out. The
    /// machine is over; [`Step::error`] is what a client raises.
    Fail {
        /// Why.
        failure: CallFailure,
        /// (An export job.) The stage that failed: `list`, `create`, `reconcile`, `poll` or
        /// `download`; `None` for a call.
        stage: Option<String>,
        /// (An export job.) The export's id, once known.
        export_id: Option<String>,
    },
}

impl Step {
    /// Whether the machine is over (`Done`, `Reconcile` or `Fail`).
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            Self::Done { .. } | Self::Reconcile { .. } | Self::Fail { .. }
        )
    }

    /// The error a client raises for a `Fail` ([`CallFailure::into_error`]: the error it
    /// carries, else `call_failed` naming `operation_id`, the host of `base_url`, the stage and
    /// export of a job, and `cause`, the host's description of its last transport error) or a
    /// `Reconcile` ([`reconcile_required`]); `None` for any other step.
    pub fn error(
        &self,
        operation_id: &str,
        base_url: &str,
        cause: Option<&str>,
    ) -> Option<RoyaltyKitError> {
        match self {
            Self::Fail {
                failure,
                stage,
                export_id,
            } => Some(failure.clone().into_error(
                operation_id,
                base_url,
                stage.as_deref(),
                export_id.as_deref(),
                cause,
            )),
            Self::Reconcile {
                reconcile,
                reason,
                candidates,
                stage,
            } => Some(reconcile_required(
                *reconcile,
                reason,
                operation_id,
                candidates.clone(),
                stage.as_deref(),
            )),
            _ => None,
        }
    }
}

/// The step type of a [`Call`]: [`Step`], under its former name.
#[deprecated(since = "0.1.0", note = "renamed `Step`, shared with `ExportJob`")]
pub type CallStep = Step;

/// The bounds and randomness of a call.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CallOptions {
    /// Most attempts (default [`crate::retry::DEFAULT_MAX_ATTEMPTS`]).
    pub max_attempts: Option<i64>,
    /// Most seconds from the first send to the start of a retry (default
    /// [`crate::retry::DEFAULT_MAX_ELAPSED_SECONDS`]).
    pub max_elapsed_seconds: Option<f64>,
    /// A seed from the host's RNG, for jitter and, where the operation takes an idempotency key
    /// and none was given, the key itself.
    pub seed: u64,
}

/// One API operation in progress (see the module documentation). Its state serialises (the
/// token excepted: a resumed call asks for one), so a job can resume after a crash.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Call {
    operation_id: String,
    api: Api,
    class: RetryClass,
    needs_token: bool,
    download: bool,
    params: RequestParams,
    options: CallOptions,
    jitter: Jitter,
    attempt: i64,
    started_at: Option<f64>,
    /// A pause: from `.0` (Unix seconds), `.1` seconds long (kept apart so the wait reported
    /// is the delay itself, not a difference of large timestamps).
    hold: (f64, f64),
    token_refreshed: bool,
    awaiting: bool,
    /// Whether the request in flight carries its idempotency key.
    in_flight_key_sent: Option<bool>,
    /// The request in flight: not saved (its headers carry the token).
    #[serde(skip)]
    in_flight: Option<RequestDescriptor>,
    /// A token exchange's request, built by the token module: not saved (it carries the
    /// credentials).
    #[serde(skip)]
    exchange: Option<RequestDescriptor>,
    /// The token of a call standing alone ([`Call::token`]); not saved.
    #[serde(skip)]
    own: TokenSlot,
    /// This call's use of its token slot; not saved (a resumed call starts afresh).
    #[serde(skip)]
    token_use: TokenUse,
    /// The generation of the token the request in flight carries.
    #[serde(skip)]
    sent_generation: Option<u64>,
    /// How the call ended, saved with it (a resumed call that had ended stays ended).
    ended: Option<Ended>,
    /// Until when the last response's `Retry-After` holds the operation back (Unix seconds).
    #[serde(default)]
    retry_after_until: Option<f64>,
    /// What happened since the host last took the events ([`Call::take_events`]); not saved.
    #[serde(skip)]
    events: Vec<MachineEvent>,
    /// Whether a `notice` event was given (once per call).
    #[serde(skip)]
    noticed: bool,
    /// The last `progress` event's step (tenths of the body, or MiB when its length is
    /// unknown), so that a body in many pieces gives a few events, not one per piece.
    #[serde(skip)]
    progress_step: Option<u64>,
    /// Resumed ([`Call::resume`]) and not stepped since: the time budget starts again at the
    /// next step (the time the process was gone is not time spent retrying).
    #[serde(skip)]
    resumed: bool,
    /// (Fleet.) The second a reservation was granted for; used by the send of that second.
    #[serde(skip)]
    reservation: Option<i64>,
    /// (Fleet.) The reservation asked for: its second and the budget's window names.
    #[serde(skip)]
    reserving: Option<(i64, Vec<String>)>,
}

impl Call {
    /// A call of `operation_id` with `params` (a token in them is used until it is refused or
    /// [`Call::token`] replaces it). Promises `invalid_argument` for an unknown operation, a
    /// token exchange (see [`Call::exchange`]), or limits out of range.
    /// Nothing is sent before [`Call::next`].
    pub fn new(
        operation_id: &str,
        mut params: RequestParams,
        options: CallOptions,
    ) -> Result<Self, ArgumentError> {
        let op = catalog::operation(operation_id)?;
        if matches!(op.auth, Auth::BasicClient | Auth::ApiKey) {
            return Err(ArgumentError::new(
                "operation_id",
                format!(
                    "{} is a token exchange: build its request with the token module and send it with Call::exchange",
                    op.id
                ),
            ));
        }
        RetryLimits::with_defaults(options.max_attempts, options.max_elapsed_seconds)?;
        let mut jitter = Jitter(options.seed);
        let keyed = op.idempotency != Idempotency::None;
        if keyed
            && params.idempotency_key.is_none()
            && params.request_id.is_none()
            && params.key_random.is_none()
        {
            let mut random = [0u8; 16];
            random[..8].copy_from_slice(&jitter.fork().to_le_bytes());
            random[8..].copy_from_slice(&jitter.fork().to_le_bytes());
            params.key_random = Some(random);
        }
        Ok(Self::of(op, params, options, jitter, None))
    }

    /// A token exchange: `request` from [`crate::token::build_token_request`] or
    /// [`crate::token::build_enterprise_token_request`], sent with the retry rules of a token
    /// exchange (safe to repeat: 503, 5xx, timeouts and lost connections are retried with
    /// backoff; a 401 stops, the credentials are wrong). Its `Done` response is for
    /// [`crate::token::parse_token_response`] (or the enterprise parser). Promises
    /// `invalid_argument` for a request of another operation, or limits out of range. The
    /// credentials are never saved: a resumed exchange fails with `invalid_request`; start a new
    /// one.
    pub fn exchange(
        request: RequestDescriptor,
        options: CallOptions,
    ) -> Result<Self, ArgumentError> {
        let op = catalog::operation(&request.operation_id)?;
        if !matches!(op.auth, Auth::BasicClient | Auth::ApiKey) {
            return Err(ArgumentError::new(
                "request",
                format!(
                    "{} is not a token exchange: build a Call of it with its parameters",
                    op.id
                ),
            ));
        }
        RetryLimits::with_defaults(options.max_attempts, options.max_elapsed_seconds)?;
        let jitter = Jitter(options.seed);
        Ok(Self::of(
            op,
            RequestParams::default(),
            options,
            jitter,
            Some(request),
        ))
    }

    fn of(
        op: &catalog::Operation,
        mut params: RequestParams,
        options: CallOptions,
        jitter: Jitter,
        exchange: Option<RequestDescriptor>,
    ) -> Self {
        let mut own = TokenSlot::default();
        if let Some(token) = params.token.take() {
            own.store(token, None);
        }
        Self {
            operation_id: op.id.clone(),
            api: op.api,
            class: op.retry_class,
            needs_token: op.auth == Auth::Bearer,
            download: op.id.starts_with("downloadPlatformExport"),
            params,
            options,
            jitter,
            attempt: 0,
            started_at: None,
            hold: (0.0, 0.0),
            token_refreshed: false,
            awaiting: false,
            in_flight_key_sent: None,
            in_flight: None,
            exchange,
            ended: None,
            retry_after_until: None,
            own,
            token_use: TokenUse::default(),
            sent_generation: None,
            events: Vec::new(),
            noticed: false,
            progress_step: None,
            resumed: false,
            reservation: None,
            reserving: None,
        }
    }

    /// What the call did since the last time they were taken, oldest first (see
    /// [`MachineEvent`]): take them after each step and each reported outcome, to log them.
    pub fn take_events(&mut self) -> Vec<MachineEvent> {
        self.take_events_from(None)
    }

    /// The events as recorded, not yet described: a job keeps its calls' events this way and
    /// describes only those its host takes ([`ExportJob::take_events_from`]).
    ///
    /// [`ExportJob::take_events_from`]: super::ExportJob::take_events_from
    pub(crate) fn take_raw_events(&mut self) -> Vec<MachineEvent> {
        std::mem::take(&mut self.events)
    }

    /// The events of [`Call::take_events`] at `min` or above (see [`EventLevel`]; `None`: every
    /// one); the others are taken too, and dropped without being described: a host whose log
    /// shows only warnings, with no other listener, pays nothing for the requests' `debug`
    /// events.
    pub fn take_events_from(&mut self, min: Option<EventLevel>) -> Vec<MachineEvent> {
        described_from(self.take_raw_events(), min)
    }

    /// A `notice` event, once per call, when a response says the operation is deprecated or
    /// has a sunset (`Deprecation`, `Sunset`, `Link`; see [`crate::token::response_notices`]).
    fn notice<H: crate::HeaderMap + ?Sized>(&mut self, headers: &H) {
        if self.noticed {
            return;
        }
        let n = crate::token::response_notices(headers);
        if !n.deprecated && n.sunset_at.is_none() {
            return;
        }
        self.noticed = true;
        let date = |t: i64| {
            u64::try_from(t).map_or_else(
                |_| t.to_string(),
                |s| {
                    httpdate::fmt_http_date(
                        std::time::UNIX_EPOCH + std::time::Duration::from_secs(s),
                    )
                },
            )
        };
        let mut reason = if n.deprecated {
            let since = n.deprecated_at.map(|t| format!(" since {}", date(t)));
            format!("deprecated{}", since.unwrap_or_default())
        } else {
            "to be withdrawn".to_owned()
        };
        if let Some(t) = n.sunset_at {
            reason.push_str(&format!("; sunset {}", date(t)));
        }
        if let Some(link) = &n.link {
            let shown: String = link.chars().take(200).collect();
            reason.push_str(&format!("; Link: {shown}"));
        }
        let issues: Vec<&str> = n.policy_issues.iter().map(|i| i.as_str()).collect();
        self.event("notice", |e| {
            e.rule = Some(if issues.is_empty() {
                "deprecation".to_owned()
            } else {
                issues.join(",")
            });
            e.reason = Some(reason);
        });
    }

    fn event(&mut self, kind: &str, fill: impl FnOnce(&mut MachineEvent)) {
        if self.events.len() >= MAX_EVENTS {
            self.events.remove(0);
        }
        let mut e = MachineEvent::new(kind, &self.operation_id, self.attempt);
        fill(&mut e);
        self.events.push(e);
    }

    /// The call's state as JSON text, to resume after a crash ([`Call::resume`]). Promises: no
    /// token in it (a resumed call asks for one), and a request that was in flight when it was
    /// saved counts as a lost connection when resumed.
    pub fn save(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A call saved by [`Call::save`]. Promises `invalid_argument` for anything else. Its
    /// attempts keep counting; its time budget (`max_elapsed_seconds`) starts again at the
    /// first step after the resume, however long the saved state waited.
    pub fn resume(saved: &str) -> Result<Self, ArgumentError> {
        let mut call: Self = serde_json::from_str(saved)
            .map_err(|e| ArgumentError::new("saved", format!("is not a saved call: {e}")))?;
        call.resumed = true;
        Ok(call)
    }

    /// See [`Call::resume`]: the time budget starts again at the next step.
    pub(crate) fn mark_resumed(&mut self) {
        self.resumed = true;
    }

    /// The operation id.
    pub fn operation_id(&self) -> &str {
        &self.operation_id
    }

    /// Attempts sent so far.
    pub fn attempts(&self) -> i64 {
        self.attempt
    }

    /// The idempotency key of the logical request, once the first request is built.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.params.idempotency_key.as_deref()
    }

    /// Until when the last response's `Retry-After` holds this operation back (Unix seconds),
    /// when it had one: a new request of the same kind (an export job's next create after
    /// reconciling) waits for it too.
    pub fn retry_after_until(&self) -> Option<f64> {
        self.retry_after_until
    }

    /// Whether the call has reached `Done`, `Reconcile` or `Fail`.
    pub fn is_finished(&self) -> bool {
        self.ended.is_some()
    }

    /// Sends nothing for `seconds` after `now`: a poll's delay.
    pub fn hold(&mut self, now: f64, seconds: f64) {
        self.hold = (now, seconds);
    }

    /// The step to perform at `now` for a call standing alone (its token from [`Call::token`]),
    /// taking one request from `budget` (shared by the host's calls) before each send.
    /// Promises: `Send` of the same request until its outcome is reported; `RefreshToken`
    /// before sending without a token or past its refresh time (a token obtained for this call
    /// is used at least once, whatever its lifetime); `Wait` while a backoff, a `Retry-After` or
    /// the budget holds the send back (never shorter); the final step forever once finished.
    /// `invalid_argument` for a `now` that is not finite or is negative.
    pub fn next(
        &mut self,
        now: f64,
        budget: Option<&mut crate::retry::RateBudget>,
    ) -> Result<Step, ArgumentError> {
        let mut own = std::mem::take(&mut self.own);
        let step = self.step(now, &mut own, budget, None);
        self.own = own;
        step
    }

    /// [`Call::next_in`], then [`Call::take_events_from`] (`min`): the step and the events up to
    /// it, in one input, as a client's loop asks at each step.
    pub fn advance_in(
        &mut self,
        now: f64,
        session: &mut Session,
        min: Option<EventLevel>,
    ) -> Result<(Step, Vec<MachineEvent>), ArgumentError> {
        let step = self.next_in(now, session)?;
        Ok((step, self.take_events_from(min)))
    }

    /// The step to perform at `now` for a call on `session`: its token and rate budget are the
    /// session's, shared with the session's other calls. Promises what [`Call::next`] promises,
    /// and: `AwaitToken` while another call of the session obtains the token (one exchange in
    /// flight per session); `Fail` with rule `token_exchange_failed` when that exchange failed,
    /// and `token_refresh_exhausted` after as many exchanges as the call has attempts.
    pub fn next_in(&mut self, now: f64, session: &mut Session) -> Result<Step, ArgumentError> {
        let step = self.step(
            now,
            &mut session.slot,
            session.budget.as_mut(),
            session.fleet.as_ref(),
        );
        session.notice_once(&mut self.events);
        step
    }

    pub(crate) fn step(
        &mut self,
        now: f64,
        slot: &mut TokenSlot,
        budget: Option<&mut crate::retry::RateBudget>,
        fleet: Option<&super::Fleet>,
    ) -> Result<Step, ArgumentError> {
        let (now, seconds) = check_now(now)?;
        if let Some(ended) = &self.ended {
            return Ok(self.final_step(ended));
        }
        if std::mem::take(&mut self.resumed) && self.started_at.is_some() {
            self.started_at = Some(now);
        }
        if self.awaiting && self.in_flight.is_none() {
            // Resumed from a state saved while a request was in flight: its fate is unknown,
            // so it is a lost connection (a create is reconciled, never sent blindly again).
            self.transport_failure(TransportFailure::ConnectionLost, now)?;
            return self.step(now, slot, budget, fleet);
        }
        if let (true, Some(request)) = (self.awaiting, &self.in_flight) {
            return Ok(Step::Send {
                request: request.clone(),
            });
        }
        let (from, delay) = self.hold;
        // Within a millisecond is on time: a clock of large timestamps cannot do better.
        if delay - (now - from) > 0.001 {
            return Ok(Step::Wait {
                seconds: delay - (now - from),
            });
        }
        // The budget first, without counting: a token is taken only for a request that goes
        // out at once, never held through a wait for the budget.
        let mut budget = budget;
        if let (None, Some(budget)) = (fleet, budget.as_deref_mut()) {
            let decision = budget.peek(seconds);
            if !decision.allowed {
                let until = decision.wait_until.map_or(now + 1.0, |u| u as f64);
                let seconds = (until - now).max(0.001);
                self.event("rate_limited", |e| e.wait_seconds = Some(seconds));
                return Ok(Step::Wait { seconds });
            }
        }
        let mut generation = None;
        if self.needs_token {
            let limit = u32::try_from(
                self.options
                    .max_attempts
                    .unwrap_or(crate::retry::DEFAULT_MAX_ATTEMPTS),
            )
            .unwrap_or(u32::MAX);
            match slot.acquire(now, &mut self.token_use, limit) {
                Acquire::Token(token, g) => {
                    self.params.token = Some(token);
                    generation = Some(g);
                }
                Acquire::Refresh(reason) => {
                    self.event("refresh_token", |e| e.reason = Some(reason.clone()));
                    return Ok(Step::RefreshToken { reason });
                }
                Acquire::Await(seconds) => return Ok(Step::AwaitToken { seconds }),
                Acquire::Failed(rule, reason) => {
                    return Ok(self.finish(Ended::Fail {
                        rule: rule.to_owned(),
                        reason,
                        status: None,
                        transport: None,
                        retry_after_seconds: None,
                        cause: Cause::None,
                    }))
                }
            }
        }
        if let (Some(fleet), Some(budget)) = (fleet, budget.as_deref()) {
            // The fleet's budget: a reservation of this second, else one asked for now.
            if self.reservation.take() != Some(seconds) {
                let member = self.jitter.fork();
                let names = budget.windows().into_iter().map(|w| w.0).collect();
                self.reserving = Some((seconds, names));
                return Ok(Step::Reserve {
                    command: fleet.reserve_command(budget, seconds, member),
                });
            }
        } else if let Some(budget) = budget {
            let decision = budget.try_acquire(seconds);
            if !decision.allowed {
                let until = decision.wait_until.map_or(now + 1.0, |u| u as f64);
                let seconds = (until - now).max(0.001);
                self.event("rate_limited", |e| e.wait_seconds = Some(seconds));
                return Ok(Step::Wait { seconds });
            }
        }
        let request = match self.request() {
            Ok(r) => r,
            Err(e) => return Ok(self.finish_request_error(e)),
        };
        self.params.token = None;
        if self.params.idempotency_key.is_none() {
            self.params.idempotency_key = request.idempotency_key.clone();
        }
        self.token_use.sent();
        self.sent_generation = generation;
        self.attempt += 1;
        self.started_at.get_or_insert(now);
        self.awaiting = true;
        self.progress_step = None;
        self.in_flight_key_sent = Some(request.idempotency_key_sent);
        self.event("send", |e| {
            e.method = Some(request.method.clone());
            e.path = Some(request.path.clone());
        });
        self.in_flight = Some(request.clone());
        Ok(Step::Send { request })
    }

    fn request(&self) -> Result<RequestDescriptor, crate::request::RequestError> {
        match &self.exchange {
            Some(request) => Ok(request.clone()),
            None if self.class == RetryClass::TokenExchange => {
                Err(crate::request::RequestError::new(
                    "missing_parameter",
                    "request",
                    "a token exchange is saved without its credentials: start a new exchange",
                ))
            }
            None => build_request(&self.operation_id, &self.params),
        }
    }

    fn finish_request_error(&mut self, e: crate::request::RequestError) -> Step {
        self.finish(Ended::Fail {
            rule: "invalid_request".to_owned(),
            reason: format!("the request cannot be built: {e}"),
            status: None,
            transport: None,
            retry_after_seconds: None,
            cause: Cause::Request {
                code: e.code.to_owned(),
                detail: e.to_string(),
                parameter: e.parameter,
            },
        })
    }

    fn finish(&mut self, ended: Ended) -> Step {
        match &ended {
            Ended::Done(response) => self.event("done", |e| e.status = Some(response.status)),
            Ended::Reconcile { reconcile, reason } => self.event("reconcile", |e| {
                e.rule = Some(reconcile.as_str().to_owned());
                e.reason = Some(reason.clone());
            }),
            Ended::Fail {
                rule,
                reason,
                status,
                transport,
                ..
            } => self.event("fail", |e| {
                e.rule = Some(rule.clone());
                e.reason = Some(reason.clone());
                e.status = *status;
                e.transport = transport.map(|t| t.as_str().to_owned());
            }),
        }
        let step = self.final_step(&ended);
        self.ended = Some(ended);
        self.awaiting = false;
        self.in_flight = None;
        step
    }

    /// The final step of an ended call, its error rebuilt from what was saved.
    fn final_step(&self, ended: &Ended) -> Step {
        match ended {
            Ended::Done(response) => Step::Done {
                json: response.is_json(),
                response: response.clone(),
                export_id: None,
            },
            Ended::Reconcile { reconcile, reason } => Step::Reconcile {
                reconcile: *reconcile,
                reason: reason.clone(),
                candidates: Vec::new(),
                stage: None,
            },
            Ended::Fail {
                rule,
                reason,
                status,
                transport,
                retry_after_seconds,
                cause,
            } => Step::Fail {
                failure: CallFailure {
                    rule: rule.clone(),
                    reason: reason.clone(),
                    status: *status,
                    transport: *transport,
                    retry_after_seconds: *retry_after_seconds,
                    attempts: self.attempt,
                    error: match cause {
                        Cause::None => None,
                        Cause::Api { response, at } => parse_api_error(
                            self.api,
                            i64::from(response.status),
                            &response.headers,
                            &response.body,
                            Some(&self.operation_id),
                            *at,
                        )
                        .ok()
                        .map(Into::into),
                        Cause::Request {
                            code,
                            detail,
                            parameter,
                        } => Some(RoyaltyKitError::Request {
                            code: code.clone(),
                            detail: detail.clone(),
                            http_status: 500,
                            parameter: parameter.clone(),
                        }),
                        Cause::Partial(reason) => Some(
                            DownloadError::PartialContent {
                                reason: reason.clone(),
                            }
                            .into(),
                        ),
                    },
                },
                stage: None,
                export_id: None,
            },
        }
    }

    /// What became of the step the host performed, at `now`: the one input a call takes after
    /// `Send` and `Reserve` (the other inputs are kept for one release as its parts). Promises
    /// what the part it stands for promises: [`Call::response`], [`Call::streamed_response`],
    /// [`Call::transport_failure`] after a `Send`; [`Call::reserved`] after a `Reserve`, where
    /// [`StepOutcome::NoResponse`] (of any kind) is [`Call::reserve_failed`]. A response or a
    /// reply the pending step does not take is `invalid_argument`.
    pub fn report<H: crate::HeaderMap + ?Sized>(
        &mut self,
        outcome: StepOutcome<'_, H>,
        now: f64,
    ) -> Result<(), ArgumentError> {
        match outcome {
            StepOutcome::NoResponse(_) if self.reserving.is_some() => self.reserve_failed(now),
            StepOutcome::NoResponse(failure) => self.transport_failure(failure, now),
            StepOutcome::Reply(reply) => self.reserved(reply, now),
            _ if self.reserving.is_some() => {
                Err(super::unexpected("the reservation's reply", "a response"))
            }
            StepOutcome::Response {
                status,
                headers,
                body,
            } => self.response(status, headers, body, now),
            StepOutcome::Streamed {
                status,
                headers,
                length,
            } => self.streamed_response(status, headers, length, now),
        }
    }

    /// (Fleet.) The reply of the pending `Reserve` (its text; `None` for nil), at `now`:
    /// `ok` lets the next step send (in the same second), `wait <second> <window>` holds the
    /// call until that second (a `rate_limited` event; never sent uncounted). Promises
    /// `invalid_argument` when no reservation is pending.
    pub fn reserved(&mut self, reply: Option<&str>, now: f64) -> Result<(), ArgumentError> {
        let (now, _) = check_now(now)?;
        let Some((second, names)) = self.reserving.take() else {
            return Err(super::unexpected("a reservation", "another input"));
        };
        match super::fleet::reserve_reply(reply, &names, second) {
            Ok(()) => self.reservation = Some(second),
            Err((until, window)) => {
                let seconds = (until as f64 - now).max(0.001);
                self.hold(now, seconds);
                self.event("rate_limited", |e| {
                    e.wait_seconds = Some(seconds);
                    e.reason = (!window.is_empty()).then(|| format!("the fleet's {window} limit"));
                });
            }
        }
        Ok(())
    }

    /// (Fleet.) Redis could not be reached for the pending `Reserve`: the call waits a second
    /// and asks again (it never sends uncounted). Promises `invalid_argument` when no
    /// reservation is pending.
    pub fn reserve_failed(&mut self, now: f64) -> Result<(), ArgumentError> {
        let (now, _) = check_now(now)?;
        if self.reserving.take().is_none() {
            return Err(super::unexpected("a reservation failure", "another input"));
        }
        self.hold(now, 1.0);
        self.event("rate_limited", |e| {
            e.wait_seconds = Some(1.0);
            e.reason = Some("the fleet's Redis could not be reached".to_owned());
        });
        Ok(())
    }

    /// A token for a call standing alone (see [`Call::next`]; a call on a [`Session`] takes the
    /// session's): `refresh_at` (Unix seconds) is when to obtain the next one
    /// ([`crate::token::Token::refresh_at`]; `None` for a token without an expiry). A token
    /// reported after `RefreshToken` is used at least once, whatever `refresh_at` says.
    pub fn token(&mut self, token: BearerToken, refresh_at: Option<f64>) {
        self.own.store(token, refresh_at);
    }

    fn arrived(&mut self, input: &str, now: f64) -> Result<f64, ArgumentError> {
        if !self.awaiting {
            return Err(unexpected(
                input,
                if self.ended.is_some() {
                    "nothing (the call is over)"
                } else {
                    "a step from next() (no request is in flight)"
                },
            ));
        }
        self.awaiting = false;
        self.in_flight = None;
        self.in_flight_key_sent = None;
        Ok((now - self.started_at.unwrap_or(now)).max(0.0))
    }

    /// Where the retry loop is. `key_sent`: whether the request carried its key.
    fn retry_state(&mut self, elapsed: f64, key_sent: Option<bool>) -> RetryState {
        RetryState {
            attempt: self.attempt.max(1),
            elapsed_seconds: elapsed,
            token_refreshed: self.token_refreshed,
            random: self.jitter.next(),
            idempotency_key_sent: key_sent.unwrap_or(false),
        }
    }

    fn limits(&self) -> RetryLimits {
        RetryLimits::with_defaults(self.options.max_attempts, self.options.max_elapsed_seconds)
            .unwrap_or_default()
    }

    /// The response to the request in flight. Promises: `Done` for a 2xx (a download only when
    /// it is the complete artifact: a 206 or `Content-Range` is retried within the limits);
    /// otherwise the retry rules: a retry `Wait`s its delay (at least the `Retry-After`), a 401
    /// asks once for a new token, a request that may have been applied and must not be repeated
    /// is `Reconcile`, and a stop is `Fail` with the parsed API error. `invalid_argument` when
    /// no request is in flight, or for a status outside 100–599.
    pub fn response<H: crate::HeaderMap + ?Sized>(
        &mut self,
        status: i64,
        headers: &H,
        body: &[u8],
        now: f64,
    ) -> Result<(), ArgumentError> {
        self.respond(status, headers, body, None, now)
    }

    /// Whether the body of a response with `status` to the request in flight is to be streamed
    /// to the host's own sink (a file) instead of read whole: true only for a 200 to an export
    /// download. Then report it with [`Call::streamed_response`]; otherwise read the body and
    /// report [`Call::response`]. A 206 (or another 2xx) is never streamed: it is not the
    /// artifact, so the sink (and the progress the host reports from it) never shows it.
    pub fn streams(&self, status: i64) -> bool {
        self.download && self.awaiting && status == 200
    }

    /// The download's body is arriving: `received` bytes so far, of `total` (its
    /// `Content-Length`, when it gave one). Report it as pieces arrive, as often as you like:
    /// it gives a `progress` event (see [`MachineEvent`]) at each tenth of the body and when it
    /// is whole, or each MiB when its length is unknown (its end is then the `response` event),
    /// never more. Promises nothing else: the
    /// response is still reported by [`Call::streamed_response`]; outside a download, nothing.
    pub fn progress(&mut self, received: u64, total: Option<u64>) {
        if !(self.download && self.awaiting) {
            return;
        }
        let step = match total {
            Some(0) => 10,
            Some(t) => {
                u64::try_from(u128::from(received.min(t)) * 10 / u128::from(t)).unwrap_or(10)
            }
            None => received / (1 << 20),
        };
        let whole = total.is_some_and(|t| received >= t);
        if self.progress_step.is_some_and(|last| last >= step) && !whole {
            return;
        }
        if whole && self.progress_step == Some(u64::MAX) {
            return;
        }
        self.progress_step = Some(if whole { u64::MAX } else { step });
        if step == 0 && !whole {
            return; // the first piece: nothing to say yet
        }
        self.event("progress", |e| {
            e.received_bytes = Some(received);
            e.total_bytes = total;
        });
    }

    /// A download response whose body the host streamed to its sink, `length` bytes. Promises
    /// what [`Call::response`] promises for a download, checked on the length: a 206, a
    /// `Content-Range`, or a length other than the `Content-Length` is read again (start the
    /// sink afresh), and `Done` carries an empty body (the artifact is in the sink).
    /// `invalid_argument` when [`Call::streams`] is false for `status`.
    pub fn streamed_response<H: crate::HeaderMap + ?Sized>(
        &mut self,
        status: i64,
        headers: &H,
        length: u64,
        now: f64,
    ) -> Result<(), ArgumentError> {
        if !self.streams(status) {
            return Err(ArgumentError::new(
                "status",
                format!("a {status} to this request is read whole and reported by response(); only a 2xx to an export download is streamed"),
            ));
        }
        self.respond(status, headers, &[], Some(length), now)
    }

    /// A response: its body whole, or (`streamed`) its length only.
    fn respond<H: crate::HeaderMap + ?Sized>(
        &mut self,
        status: i64,
        headers: &H,
        body: &[u8],
        streamed: Option<u64>,
        now: f64,
    ) -> Result<(), ArgumentError> {
        let (now, seconds) = check_now(now)?;
        let code = u16::try_from(status)
            .ok()
            .filter(|s| (100..=599).contains(s))
            .ok_or_else(|| {
                ArgumentError::new("status", format!("must be 100 to 599, got {status}"))
            })?;
        let key_sent = self.in_flight_key_sent;
        let elapsed = self.arrived("response", now)?;
        self.event("response", |e| e.status = Some(code));
        self.notice(headers);
        // A 206 is never a success (neither API serves partial content): the retry rules decide.
        let success = (200..=299).contains(&code) && (code != 206 || self.download);
        if success && self.download {
            let received = streamed.unwrap_or(body.len() as u64);
            if let Err(DownloadError::PartialContent { reason }) =
                check_download_whole(status, headers, received)
            {
                self.partial(code, reason, elapsed, now);
                return Ok(());
            }
        }
        if success {
            let mut kept = Vec::new();
            for name in crate::RESPONSE_HEADER_NAMES {
                headers.for_each_value(name, &mut |v| kept.push((name.to_owned(), v.to_owned())));
            }
            self.finish(Ended::Done(Response {
                status: code,
                headers: kept,
                body: body.to_vec(),
            }));
            return Ok(());
        }
        let outcome = Outcome::response(status, headers, seconds)?;
        if let Some(ra) = crate::retry::retry_after_from_headers(headers, seconds) {
            // From this clock's own reading (a date's wait is counted from the whole second
            // before it, so this is never earlier than the date).
            self.retry_after_until = Some(now + ra.seconds as f64);
        }
        let state = self.retry_state(elapsed, key_sent);
        let mut decision = decide_retry(
            self.class,
            outcome,
            state,
            self.limits(),
            &BackoffPolicy::default(),
        )?;
        if decision.rule == "redirect" {
            decision.reason = format!(
                "{} (the Location points at {})",
                decision.reason,
                location_origin(headers)
            );
        }
        let mut kept = Vec::new();
        for name in crate::RESPONSE_HEADER_NAMES {
            headers.for_each_value(name, &mut |v| kept.push((name.to_owned(), v.to_owned())));
        }
        let cause = Cause::Api {
            response: Response {
                status: code,
                headers: kept,
                body: body.get(..MAX_ERROR_BODY).unwrap_or(body).to_vec(),
            },
            at: seconds,
        };
        // A redirect is no API error to show: the failure's reason (naming where the Location
        // points) is what the host raises.
        let cause = if decision.rule == "redirect" {
            Cause::None
        } else {
            cause
        };
        self.apply(decision, now, Some(code), None, cause);
        Ok(())
    }

    /// No response to the request in flight: `timeout` (it may have been applied),
    /// `connect_failed` (nothing was sent) or `connection_lost` (it may have been applied).
    /// Promises the retry rules as for [`Call::response`]; `invalid_argument` when no request
    /// is in flight.
    pub fn transport_failure(
        &mut self,
        failure: TransportFailure,
        now: f64,
    ) -> Result<(), ArgumentError> {
        let (now, _) = check_now(now)?;
        let key_sent = self.in_flight_key_sent;
        let elapsed = self.arrived("transport_failure", now)?;
        self.event("transport_failure", |e| {
            e.transport = Some(failure.as_str().to_owned())
        });
        let state = self.retry_state(elapsed, key_sent);
        let decision = decide_retry(
            self.class,
            Outcome::Transport(failure),
            state,
            self.limits(),
            &BackoffPolicy::default(),
        )?;
        self.apply(decision, now, None, Some(failure), Cause::None);
        Ok(())
    }

    fn apply(
        &mut self,
        decision: RetryDecision,
        now: f64,
        status: Option<u16>,
        transport: Option<TransportFailure>,
        cause: Cause,
    ) {
        // A retry is an event here; how a call ends is one in `finish`.
        if matches!(
            decision.action,
            RetryAction::Retry | RetryAction::RefreshToken
        ) {
            self.event("retry", |e| {
                e.status = status;
                e.transport = transport.map(|t| t.as_str().to_owned());
                e.rule = Some(decision.rule.clone());
                e.reason = Some(decision.reason.clone());
                e.wait_seconds = Some(if decision.action == RetryAction::Retry {
                    decision.delay_seconds
                } else {
                    0.0
                });
            });
        }
        match decision.action {
            RetryAction::Retry => self.hold = (now, decision.delay_seconds),
            RetryAction::RefreshToken => {
                if let Some(g) = self.sent_generation {
                    self.token_use.refuse(g);
                }
                self.token_refreshed = true;
            }
            RetryAction::Reconcile => {
                self.finish(Ended::Reconcile {
                    reconcile: decision.reconcile.unwrap_or(Reconcile::LookupBySentData),
                    reason: decision.reason,
                });
            }
            RetryAction::Stop => {
                let retry_after_seconds = (decision.rule == "retry_after_exceeds_budget")
                    .then_some(decision.delay_seconds);
                self.finish(Ended::Fail {
                    rule: decision.rule,
                    reason: decision.reason,
                    status,
                    transport,
                    retry_after_seconds,
                    cause,
                });
            }
        }
    }

    /// A 2xx download that is not the whole artifact: read again (a read is safe to repeat)
    /// with the default backoff, within the limits.
    fn partial(&mut self, status: u16, reason: String, elapsed: f64, now: f64) {
        let random = self.jitter.next();
        let delay = BackoffPolicy::default()
            .delay(self.attempt.max(1), random)
            .unwrap_or(0.0);
        let (max_attempts, max_elapsed) = (
            self.options
                .max_attempts
                .unwrap_or(crate::retry::DEFAULT_MAX_ATTEMPTS),
            self.options
                .max_elapsed_seconds
                .unwrap_or(crate::retry::DEFAULT_MAX_ELAPSED_SECONDS),
        );
        let stop = if self.attempt >= max_attempts {
            Some(format!(
                "partial content ({reason}) on every attempt: {} of {max_attempts} attempts are used; exports are delivered only whole",
                self.attempt
            ))
        } else if elapsed + delay > max_elapsed {
            Some(format!(
                "partial content ({reason}); a new read after {} s passes the {} s budget",
                Num(delay),
                Num(max_elapsed)
            ))
        } else {
            None
        };
        match stop {
            Some(why) => {
                self.finish(Ended::Fail {
                    rule: "partial_content".to_owned(),
                    reason: why,
                    status: Some(status),
                    transport: None,
                    retry_after_seconds: None,
                    cause: Cause::Partial(reason),
                });
            }
            None => {
                self.event("retry", |e| {
                    e.status = Some(status);
                    e.rule = Some("partial_content".to_owned());
                    e.reason = Some(reason.clone());
                    e.wait_seconds = Some(delay);
                });
                self.hold = (now, delay);
            }
        }
    }
}

/// The origin a redirect's `Location` points at (`scheme://host[:port]`, never its path, query
/// or user-info), for the error; "the same origin" for a relative one.
fn location_origin<H: crate::HeaderMap + ?Sized>(headers: &H) -> String {
    let Some(location) = crate::headers::first_value(headers, "Location") else {
        return "nowhere (no Location header)".to_owned();
    };
    let location = location.trim();
    let Some((scheme, rest)) = location.split_once("://") else {
        return match location.strip_prefix("//") {
            Some(rest) => {
                let host = rest.split(['/', '?', '#']).next().unwrap_or("");
                format!("//{}", host.rsplit('@').next().unwrap_or(host))
            }
            None => "the same origin (a relative Location)".to_owned(),
        };
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let origin = format!("{}://{}", scheme.to_ascii_lowercase(), host);
    origin
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_names_only_the_origin_it_points_at() {
        let at = |l: &str| location_origin(&[("Location", l)][..]);
        assert_eq!(
            at("https://user:pw@evil.example:8443/x?token=1"),
            "https://evil.example:8443"
        );
        assert_eq!(at("//evil.example/steal"), "//evil.example");
        assert_eq!(at("/api/v1/token"), "the same origin (a relative Location)");
        assert_eq!(
            location_origin(&[("X", "y")][..]),
            "nowhere (no Location header)"
        );
    }

    #[test]
    fn a_body_is_json_by_its_media_type_only() {
        let r = |t: &str| Response {
            status: 200,
            headers: vec![("content-type".to_owned(), t.to_owned())],
            body: Vec::new(),
        };
        assert!(r("application/json; charset=utf-8").is_json());
        assert!(r("application/problem+json").is_json());
        assert!(!r("text/csv").is_json());
        assert!(!r("text/x-json-lines").is_json());
        assert!(!Response {
            status: 204,
            headers: Vec::new(),
            body: Vec::new()
        }
        .is_json());
    }

    #[test]
    fn a_failure_without_an_error_becomes_call_failed_with_the_core_message() {
        let mut f = CallFailure::new(
            "attempts_exhausted",
            "would retry, but 5 of 5 attempts are used",
        );
        f.transport = Some(TransportFailure::ConnectFailed);
        f.attempts = 5;
        let e = f.into_error(
            "createPlatformExport",
            "https://api.example.com/base",
            Some("create"),
            None,
            Some("ConnectError:\nrefused"),
        );
        assert_eq!((e.code(), e.http_status()), ("call_failed", 500));
        assert_eq!(e.family(), crate::ErrorFamily::CallFailed);
        assert_eq!(
            e.to_string(),
            "createPlatformExport to api.example.com: would retry, but 5 of 5 attempts are used (5 attempts made); last failure: ConnectError: refused"
        );
        let RoyaltyKitError::CallFailed {
            rule,
            transport,
            attempts,
            stage,
            export_id,
            operation_id,
            ..
        } = e
        else {
            panic!("not call_failed: {e:?}");
        };
        assert_eq!(rule, "attempts_exhausted");
        assert_eq!(transport, Some(TransportFailure::ConnectFailed));
        assert_eq!(
            (attempts, operation_id.as_str()),
            (5, "createPlatformExport")
        );
        assert_eq!((stage.as_deref(), export_id), (Some("create"), None));
        let json = serde_json::to_value(CallFailure::new("x", "y").into_error(
            "op",
            "https://h",
            None,
            None,
            None,
        ))
        .unwrap_or_default();
        assert_eq!(json["family"], "call_failed");
        assert_eq!(json["operationId"], "op");
        assert_eq!(json["message"], "op to h: y (0 attempts made)");
    }

    #[test]
    fn a_failure_carrying_an_error_is_that_error() {
        let mut f = CallFailure::new("client_error", "404");
        let api: RoyaltyKitError = crate::ArgumentError::new("limit", "out of range").into();
        f.error = Some(api.clone());
        assert_eq!(f.into_error("op", "https://h", None, None, Some("x")), api);
    }

    #[test]
    fn reconcile_required_names_what_to_check() {
        let e = reconcile_required(
            Reconcile::LookupBySentData,
            "the create may have been applied",
            "createPlatformExport",
            vec!["exp_1".to_owned()],
            Some("reconcile"),
        );
        assert_eq!(
            (e.code(), e.family()),
            ("reconcile_required", crate::ErrorFamily::ReconcileRequired)
        );
        assert_eq!(e.to_string(), "the create may have been applied");
        let json = serde_json::to_value(&e).unwrap_or_default();
        assert_eq!(json["reconcile"], "lookup_by_sent_data");
        assert_eq!(json["candidates"][0], "exp_1");
        assert_eq!(json["stage"], "reconcile");
    }
}
