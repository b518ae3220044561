//! Export lifecycle for Python: conversions only.

use crate::args::{body_or_empty, headers_or_none, Body, Headers, Seconds, Text, TextOrInt};
use crate::guard;
use pyo3::prelude::*;
use royaltykit::catalog::StepUp;
use royaltykit::export::{self, ExportCommand, ExportState, StepUpKind};

/// Reads a server value; unknown values are kept.
#[pyfunction]
pub fn export_state(value: Text) -> export::ExportStateInfo {
    export::export_state_info(&value)
}

/// The state expected after ``command``; raises ExportStateError.
#[pyfunction]
pub fn validate_export_command(state: Text, command: &str) -> PyResult<String> {
    guard(|| {
        Ok(export::validate_export_command(
            &ExportState::parse(&state),
            ExportCommand::parse(command)?,
        )?
        .as_str()
        .to_owned())
    })
}

/// ``keep_polling``, ``download`` or ``stop`` after the ``attempt``-th read: queued and every
/// state the spec does not show keep polling until ``max_polls`` reads.
#[pyfunction]
#[pyo3(signature = (state, attempt, *, random=None, max_polls=None))]
pub fn export_poll_decision(
    state: Text,
    attempt: i64,
    random: Option<f64>,
    max_polls: Option<i64>,
) -> PyResult<export::PollDecision> {
    guard(|| {
        let r = random.map_or_else(royaltykit_host::random_unit, Ok)?;
        let state = ExportState::parse(&state);
        Ok(export::export_poll_decision(&state, attempt, r, max_polls)?)
    })
}

/// Raises ExportDownloadError for partial content and ApiError for an error status.
#[pyfunction]
#[pyo3(signature = (status, headers=None, body=None, *, now=None))]
pub fn check_export_download(
    status: i64,
    headers: Option<Headers>,
    body: Option<Body<'_>>,
    now: Option<Seconds>,
) -> PyResult<()> {
    guard(|| {
        Ok(export::check_export_download(
            status,
            &headers_or_none(headers),
            &body_or_empty(body),
            crate::args::now(now),
        )??)
    })
}

/// Validates an export list query; returns the query string.
#[pyfunction]
#[pyo3(signature = (*, limit=None, cursor=None, export_class=None, status=None, format=None))]
pub fn validate_export_list_query(
    limit: Option<TextOrInt>,
    cursor: Option<TextOrInt>,
    export_class: Option<TextOrInt>,
    status: Option<TextOrInt>,
    format: Option<TextOrInt>,
) -> PyResult<String> {
    let s = |v: Option<TextOrInt>| v.map(|v| v.0);
    guard(|| {
        Ok(export::validate_export_list_parts(
            s(limit),
            s(cursor),
            s(export_class),
            s(status),
            s(format),
        )?)
    })
}

/// Whether a step-up (``mfa`` or ``recovery_code``, made at ``at``) satisfies a requirement.
#[pyfunction]
#[pyo3(signature = (requirement, kind, at, *, max_age_seconds, now=None))]
pub fn step_up_satisfies(
    requirement: &str,
    kind: &str,
    at: i64,
    max_age_seconds: i64,
    now: Option<Seconds>,
) -> PyResult<bool> {
    guard(|| {
        Ok(export::step_up_satisfies(
            StepUp::parse(requirement)?,
            StepUpKind::parse(kind)?,
            at,
            crate::args::now(now),
            max_age_seconds,
        )?)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::py_export!(m;
        fn export_state, validate_export_command, export_poll_decision, check_export_download,
            validate_export_list_query, step_up_satisfies;
        class export::ExportStateInfo, export::PollDecision
    );
    Ok(())
}
