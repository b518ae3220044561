//! The export lifecycle of the reporting API: states, commands, polling, downloads, list
//! queries and the step-up rule of the human routes.
//!
//! Spec: an export is created `queued`; it may be cancelled only while queued; a `ready`
//! export may be revoked or downloaded (one complete artifact: no range or partial content).
//! The full set of states and the names of the states reached after cancel and revoke are not
//! shown, so `cancelled`/`canceled` and `revoked` are read as the end states and any other value
//! is kept as unknown.

use crate::api_error::{parse_api_error, ApiError};
use crate::catalog::{Api, StepUp};
use crate::request::{self, RequestError, RequestParams};
use crate::retry::BackoffPolicy;
use crate::{ArgumentError, HeaderMap};
use std::fmt;

/// An export's lifecycle state. Parsing never fails: unknown values are kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ExportState {
    /// Waiting to be produced; may be cancelled.
    Queued,
    /// Produced; may be downloaded or revoked.
    Ready,
    /// Cancelled while queued (end state).
    Cancelled,
    /// Revoked after it was ready (end state).
    Revoked,
    /// A value the spec does not show, kept as sent.
    Unknown(String),
}

impl ExportState {
    /// Reads a server value (ASCII case-insensitive; `canceled` is read as `cancelled`).
    pub fn parse(value: &str) -> Self {
        match value.trim().to_ascii_lowercase().as_str() {
            "queued" => Self::Queued,
            "ready" => Self::Ready,
            "cancelled" | "canceled" => Self::Cancelled,
            "revoked" => Self::Revoked,
            _ => Self::Unknown(value.chars().take(200).collect()),
        }
    }

    /// The canonical name, or the unknown value as sent.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Queued => "queued",
            Self::Ready => "ready",
            Self::Cancelled => "cancelled",
            Self::Revoked => "revoked",
            Self::Unknown(v) => v,
        }
    }

    /// Whether the spec shows this state.
    pub fn is_known(&self) -> bool {
        !matches!(self, Self::Unknown(_))
    }

    /// Whether no command moves it any more.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Cancelled | Self::Revoked)
    }

    /// The commands allowed in this state.
    pub fn allowed_commands(&self) -> &'static [ExportCommand] {
        use ExportCommand::{Cancel, Download, Get, Revoke};
        match self {
            Self::Queued => &[Get, Cancel],
            Self::Ready => &[Get, Download, Revoke],
            _ => &[Get],
        }
    }
}

record! {
/// What the library knows about an export state: its name, whether the spec shows it, whether
/// it is an end state, and the commands it allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportStateInfo {
    /// The canonical name, or the unknown value as sent.
    pub name: String,
    /// Whether the spec shows this state.
    pub known: bool,
    /// Whether no command moves it any more.
    pub terminal: bool,
    /// The commands allowed in this state.
    pub allowed_commands: Vec<ExportCommand>,
}
}

/// Reads a server value into an [`ExportStateInfo`]. Never fails: unknown values are kept.
pub fn export_state_info(value: &str) -> ExportStateInfo {
    let state = ExportState::parse(value);
    ExportStateInfo {
        name: state.as_str().to_owned(),
        known: state.is_known(),
        terminal: state.is_terminal(),
        allowed_commands: state.allowed_commands().to_vec(),
    }
}

impl fmt::Display for ExportState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

string_enum! {
    /// A command on an export.
    pub enum ExportCommand as "command" {
        /// Read its state (always allowed).
        Get = "get",
        /// Cancel it (only while queued).
        Cancel = "cancel",
        /// Revoke it (only when ready).
        Revoke = "revoke",
        /// Download its artifact (only when ready).
        Download = "download",
    }
}

impl ExportCommand {
    /// The machine operation that sends it.
    pub fn operation_id(self) -> &'static str {
        match self {
            Self::Get => "getPlatformExport",
            Self::Cancel => "cancelPlatformExport",
            Self::Revoke => "revokePlatformExport",
            Self::Download => "downloadPlatformExport",
        }
    }
}

/// A command that the export's state does not allow. Code `invalid_export_transition`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot {command} an export that is {state}: {why}; allowed now: {}", allowed.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", "))]
pub struct ExportStateError {
    /// The export's state (as sent, for unknown states).
    pub state: String,
    /// The command refused.
    pub command: ExportCommand,
    /// The commands allowed in this state.
    pub allowed: Vec<ExportCommand>,
    /// The rule, in words.
    pub why: String,
}

impl ExportStateError {
    /// The stable code: `invalid_export_transition`.
    pub fn code(&self) -> &'static str {
        "invalid_export_transition"
    }
}

/// Checks a command against the state before sending it. Returns the state expected afterwards
/// (`cancel` → cancelled, `revoke` → revoked, `get` and `download` leave it unchanged).
/// Promises `invalid_export_transition` naming the state, the command and the allowed commands;
/// for an unknown state only `get` is allowed, because what it permits is not known.
pub fn validate_export_command(
    state: &ExportState,
    command: ExportCommand,
) -> Result<ExportState, ExportStateError> {
    let allowed = state.allowed_commands();
    if allowed.contains(&command) {
        return Ok(match command {
            ExportCommand::Cancel => ExportState::Cancelled,
            ExportCommand::Revoke => ExportState::Revoked,
            ExportCommand::Get | ExportCommand::Download => state.clone(),
        });
    }
    let why = match (state, command) {
        (ExportState::Unknown(_), _) => {
            "the state is not one the spec shows, so only reading it is safe".to_owned()
        }
        (_, ExportCommand::Cancel) => "an export may be cancelled only while queued".to_owned(),
        (_, ExportCommand::Revoke) => "only a ready export may be revoked".to_owned(),
        (_, ExportCommand::Download) => "only a ready export can be downloaded".to_owned(),
        (_, ExportCommand::Get) => "reading is always allowed".to_owned(),
    };
    Err(ExportStateError {
        state: state.as_str().to_owned(),
        command,
        allowed: allowed.to_vec(),
        why,
    })
}

string_enum! {
    /// The next step of a create → poll → download loop.
    pub enum PollAction as "action" {
        /// Read the export again after `delay_seconds`.
        KeepPolling = "keep_polling",
        /// Download the complete artifact now.
        Download = "download",
        /// Stop polling: an end state, or a bound was reached.
        Stop = "stop",
    }
}

record! {
/// What to do after reading an export's state while waiting for it.
#[derive(Debug, Clone, PartialEq)]
pub struct PollDecision {
    /// What to do.
    pub action: PollAction,
    /// Seconds to wait before the next read (0 unless `keep_polling`).
    pub delay_seconds: f64,
    /// Why, in words.
    pub reason: String,
}
}

/// Default bound on reads of an export that is not ready yet (queued, or a state the spec does
/// not show): with the default backoff (2, 5, 15, then 30–60 s) about 75 minutes.
pub const DEFAULT_MAX_POLLS: i64 = 100;

/// Decides the next step of a create → poll → download loop. `attempt` counts the reads made
/// (1 after the first). Promises: `ready` → `download`; cancelled or revoked → `stop` (end
/// states); `queued` and every state the spec does not show ("The full set of export statuses:
/// not shown", so states between queued and ready are expected, and a new one is never a reason
/// to give up) → `keep_polling` with the default backoff delay (2, 5, 15, then 30–60 s, capped),
/// until `max_polls` reads (default [`DEFAULT_MAX_POLLS`]), where it is `stop` with a reason
/// naming the state and the budget; `invalid_argument` for an attempt below 1, a random value
/// outside [0, 1) or a bound below 1.
pub fn export_poll_decision(
    state: &ExportState,
    attempt: i64,
    random: f64,
    max_polls: Option<i64>,
) -> Result<PollDecision, ArgumentError> {
    let max_polls = max_polls.unwrap_or(DEFAULT_MAX_POLLS);
    if max_polls < 1 {
        return Err(ArgumentError::new(
            "max_polls",
            format!("must be 1 or more, got {max_polls}"),
        ));
    }
    let delay = BackoffPolicy::default().delay(attempt, random)?;
    let stop = |reason: String| PollDecision {
        action: PollAction::Stop,
        delay_seconds: 0.0,
        reason,
    };
    Ok(match state {
        ExportState::Ready => PollDecision {
            action: PollAction::Download,
            delay_seconds: 0.0,
            reason: "the export is ready: download the complete artifact".to_owned(),
        },
        ExportState::Cancelled | ExportState::Revoked => {
            stop(format!("the export is {state}: an end state, there is nothing to download"))
        }
        _ if attempt >= max_polls => stop(format!(
            "polling budget reached: still {state} after {attempt} reads (max_polls {max_polls}); the export may still become ready, read it later or raise max_polls"
        )),
        ExportState::Queued => PollDecision {
            action: PollAction::KeepPolling,
            delay_seconds: delay,
            reason: format!("queued: read it again after {} s", crate::text::Num(delay)),
        },
        ExportState::Unknown(v) => PollDecision {
            action: PollAction::KeepPolling,
            delay_seconds: delay,
            reason: format!(
                "state {v:?} is not one the spec shows (the full status set is not shown) and not an end state: read it again after {} s, within the same budget as queued",
                crate::text::Num(delay)
            ),
        },
    })
}

/// Why a download response is not a complete artifact.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownloadError {
    /// A 206 or a `Content-Range` header: the export is delivered only whole. Code
    /// `partial_content_unsupported`.
    #[error(
        "partial content: {reason}; export downloads are one complete artifact, never send Range"
    )]
    PartialContent {
        /// What was seen.
        reason: String,
    },
    /// An error status (409 not ready, 422, …), parsed. Code `api_error`.
    #[error("download failed: {0}")]
    Api(Box<ApiError>),
}

impl DownloadError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::PartialContent { .. } => "partial_content_unsupported",
            Self::Api(_) => "api_error",
        }
    }
}

/// Checks a download response before its body is used: a 200 without `Content-Range` is the
/// whole artifact. Promises `partial_content_unsupported` for 206, any `Content-Range`, or a
/// body shorter or longer than its `Content-Length` (a truncated transfer);
/// error statuses (409, 422, …) come back parsed by the error parser for `downloadPlatformExport`.
pub fn check_export_download<H: HeaderMap + ?Sized>(
    status: i64,
    headers: &H,
    body: &[u8],
    now: i64,
) -> Result<Result<(), DownloadError>, ArgumentError> {
    if (200..=299).contains(&status) {
        return Ok(check_download_whole(status, headers, body.len() as u64));
    }
    let e = parse_api_error(
        Api::Reports,
        status,
        headers,
        body,
        Some("downloadPlatformExport"),
        now,
    )?;
    Ok(Err(DownloadError::Api(Box::new(e))))
}

/// Whether a 2xx download of `received` bytes is the whole artifact: refused for a 206, any
/// `Content-Range`, or a `Content-Length` naming another length (a transfer that ended early or
/// ran long). Shared by [`check_export_download`] and a streamed download (whose body the host
/// kept, not the core).
pub(crate) fn check_download_whole<H: HeaderMap + ?Sized>(
    status: i64,
    headers: &H,
    received: u64,
) -> Result<(), DownloadError> {
    let partial = |reason: String| Err(DownloadError::PartialContent { reason });
    if status == 206 {
        return partial("status 206".to_owned());
    }
    let mut content_range = None;
    headers.for_each_value("Content-Range", &mut |v| {
        content_range.get_or_insert_with(|| v.chars().take(80).collect::<String>());
    });
    if let Some(range) = content_range {
        return partial(format!("Content-Range {range:?}"));
    }
    let mut declared = None;
    headers.for_each_value("Content-Length", &mut |v| {
        declared.get_or_insert_with(|| v.trim().parse::<u64>().ok());
    });
    match declared {
        Some(Some(n)) if n != received => partial(format!(
            "Content-Length {n} but {received} bytes received (the connection ended early)"
        )),
        _ => Ok(()),
    }
}

/// Validates an export list query (`limit` 1–100, default 50; `cursor` a UUID; `export_class`,
/// `status`, `format` non-empty) with the catalog's rules for `listPlatformExports`, and returns
/// the query string. Promises the request builder's codes (`invalid_parameter`,
/// `unknown_parameter`).
pub fn validate_export_list_query(query: &[(String, String)]) -> Result<String, RequestError> {
    let params = RequestParams {
        query: query.to_vec(),
        token: Some(crate::token::BearerToken::reports(
            "validation-only",
            "00000000-0000-4000-8000-000000000000",
        )),
        tenant_id: Some("00000000-0000-4000-8000-000000000000".to_owned()),
        ..RequestParams::default()
    };
    request::build_request("listPlatformExports", &params).map(|d| d.query)
}

string_enum! {
    /// How a human step-up was made.
    pub enum StepUpKind as "kind" {
        /// A multi-factor challenge (TOTP).
        Mfa = "mfa",
        /// A recovery code.
        RecoveryCode = "recovery_code",
    }
}

/// Whether a step-up made at `at` by `kind` satisfies `requirement` at `now`, given how long a
/// step-up counts as recent (`max_age_seconds`: not shown in the spec, so the caller says).
/// Promises: a recovery-code step-up never satisfies a recent-MFA or non-recovery requirement
/// ("recovery-code use does not satisfy sensitive step-up"); a step-up from the future or older
/// than `max_age_seconds` satisfies nothing but `none`; `invalid_argument` for a negative age.
pub fn step_up_satisfies(
    requirement: StepUp,
    kind: StepUpKind,
    at: i64,
    now: i64,
    max_age_seconds: i64,
) -> Result<bool, ArgumentError> {
    if max_age_seconds < 0 {
        return Err(ArgumentError::new("max_age_seconds", "must be 0 or more"));
    }
    let age = i128::from(now) - i128::from(at);
    let recent = (0..=i128::from(max_age_seconds)).contains(&age);
    Ok(match requirement {
        StepUp::None => true,
        StepUp::Recent => recent,
        StepUp::RecentMfa | StepUp::RecentNonRecovery => recent && kind == StepUpKind::Mfa,
    })
}

/// [`validate_export_list_query`] from named parts (absent ones are not sent), in the order
/// limit, cursor, export_class, status, format.
pub fn validate_export_list_parts(
    limit: Option<String>,
    cursor: Option<String>,
    export_class: Option<String>,
    status: Option<String>,
    format: Option<String>,
) -> Result<String, RequestError> {
    let query: Vec<(String, String)> = [
        ("limit", limit),
        ("cursor", cursor),
        ("export_class", export_class),
        ("status", status),
        ("format", format),
    ]
    .into_iter()
    .filter_map(|(n, v)| v.map(|v| (n.to_owned(), v)))
    .collect();
    validate_export_list_query(&query)
}
