//! Export lifecycle for Kotlin: conversions only.

use crate::Result;
use royaltykit::catalog::StepUp;
use royaltykit::export::{self, ExportCommand, ExportState, StepUpKind};
use royaltykit_host::now_or_clock;
use std::collections::HashMap;

/// An export state as the server sent it.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ExportStateInfo {
    /// Canonical name, or the unknown value.
    pub name: String,
    /// Whether the spec shows it.
    pub known: bool,
    /// Whether it is an end state.
    pub terminal: bool,
    /// Commands allowed now.
    pub allowed_commands: Vec<String>,
}

/// Reads a server value; unknown values are kept.
#[uniffi::export]
pub fn export_state(value: String) -> ExportStateInfo {
    let s = ExportState::parse(&value);
    ExportStateInfo {
        name: s.as_str().to_owned(),
        known: s.is_known(),
        terminal: s.is_terminal(),
        allowed_commands: s
            .allowed_commands()
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect(),
    }
}

/// The state expected after `command`; throws RoyaltyKitException.ExportState.
#[uniffi::export]
pub fn validate_export_command(state: String, command: String) -> Result<String> {
    let cmd = ExportCommand::parse(&command)?;
    Ok(
        export::validate_export_command(&ExportState::parse(&state), cmd)?
            .as_str()
            .to_owned(),
    )
}

/// What to do after reading an export.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct PollDecision {
    /// keep_polling, download or stop.
    pub action: String,
    /// Seconds before the next read.
    pub delay_seconds: f64,
    /// Why.
    pub reason: String,
}

/// `keep_polling`, `download` or `stop` after the `attempt`-th read.
#[uniffi::export(default(random = None, max_polls = None, max_unknown_polls = None))]
pub fn export_poll_decision(
    state: String,
    attempt: i64,
    random: Option<f64>,
    max_polls: Option<i64>,
    max_unknown_polls: Option<i64>,
) -> Result<PollDecision> {
    let r = match random {
        Some(r) => r,
        None => royaltykit_host::random_unit()?,
    };
    let d = export::export_poll_decision(
        &ExportState::parse(&state),
        attempt,
        r,
        max_polls,
        max_unknown_polls,
    )?;
    Ok(PollDecision {
        action: d.action.as_str().to_owned(),
        delay_seconds: d.delay_seconds,
        reason: d.reason,
    })
}

/// Throws ExportDownload for partial content and Api for an error status.
#[uniffi::export(default(now = None))]
pub fn check_export_download(
    status: i64,
    headers: HashMap<String, String>,
    body: Vec<u8>,
    now: Option<i64>,
) -> Result<()> {
    Ok(export::check_export_download(
        status,
        &headers,
        &body,
        now_or_clock(now),
    )??)
}

/// Validates an export list query; returns the query string.
#[uniffi::export(default(limit = None, cursor = None, export_class = None, status = None, format = None))]
pub fn validate_export_list_query(
    limit: Option<String>,
    cursor: Option<String>,
    export_class: Option<String>,
    status: Option<String>,
    format: Option<String>,
) -> Result<String> {
    Ok(export::validate_export_list_parts(
        limit,
        cursor,
        export_class,
        status,
        format,
    )?)
}

/// Whether a step-up (`mfa` or `recovery_code`, made at `at`) satisfies a requirement.
#[uniffi::export(default(now = None))]
pub fn step_up_satisfies(
    requirement: String,
    kind: String,
    at: i64,
    max_age_seconds: i64,
    now: Option<i64>,
) -> Result<bool> {
    Ok(export::step_up_satisfies(
        StepUp::parse(&requirement)?,
        StepUpKind::parse(&kind)?,
        at,
        now_or_clock(now),
        max_age_seconds,
    )?)
}
