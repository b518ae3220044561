//! Export lifecycle for Kotlin: conversions only.

use crate::Result;
use royaltykit::catalog::StepUp;
use royaltykit::export::{
    self, ExportCommand, ExportState, ExportStateInfo, PollDecision, StepUpKind,
};
use royaltykit_host::now_or_clock;
use std::collections::HashMap;

/// Reads a server value; unknown values are kept.
#[uniffi::export]
pub fn export_state(value: String) -> ExportStateInfo {
    export::export_state_info(&value)
}

/// The state expected after `command`; throws `RoyaltyKitException.ExportState`.
#[uniffi::export]
pub fn validate_export_command(state: String, command: ExportCommand) -> Result<String> {
    let after = export::validate_export_command(&ExportState::parse(&state), command)?;
    Ok(after.as_str().to_owned())
}

/// What to do after the `attempt`-th read; `random` defaults to the OS RNG. Queued and every
/// state the spec does not show keep polling until `maxPolls` reads.
#[uniffi::export(default(random = None, max_polls = None))]
pub fn export_poll_decision(
    state: String,
    attempt: i64,
    random: Option<f64>,
    max_polls: Option<i64>,
) -> Result<PollDecision> {
    let random = royaltykit_host::random_or_os(random)?;
    let state = ExportState::parse(&state);
    Ok(export::export_poll_decision(
        &state, attempt, random, max_polls,
    )?)
}

/// Throws for partial content or an error status; returns when the artifact is whole.
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

/// The query string of an export list request, validated.
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

/// Whether a step-up of `kind` made at `at` satisfies `requirement` now.
#[uniffi::export(default(now = None))]
pub fn step_up_satisfies(
    requirement: StepUp,
    kind: StepUpKind,
    at: i64,
    max_age_seconds: i64,
    now: Option<i64>,
) -> Result<bool> {
    Ok(export::step_up_satisfies(
        requirement,
        kind,
        at,
        now_or_clock(now),
        max_age_seconds,
    )?)
}
