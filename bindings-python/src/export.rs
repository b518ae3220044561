//! Export lifecycle for Python: conversions only.

use crate::{body_arg, now_arg, str_arg, Body};
use pyo3::prelude::*;
use royaltykit::catalog::StepUp;
use royaltykit::export::{self, ExportCommand, ExportState, StepUpKind};

/// An export state as the server sent it.
#[pyclass(frozen, get_all, module = "royaltykit")]
pub struct ExportStateInfo {
    name: String,
    known: bool,
    terminal: bool,
    allowed_commands: Vec<&'static str>,
}

#[pymethods]
impl ExportStateInfo {
    fn __repr__(&self) -> String {
        format!(
            "ExportStateInfo(name={:?}, known={}, allowed_commands={:?})",
            self.name,
            if self.known { "True" } else { "False" },
            self.allowed_commands
        )
    }
}

/// Reads a server value; unknown values are kept.
#[pyfunction]
pub fn export_state(value: &Bound<'_, PyAny>) -> PyResult<ExportStateInfo> {
    crate::guard(|| {
        let s = ExportState::parse(&str_arg(value, "state")?);
        Ok(ExportStateInfo {
            name: s.as_str().to_owned(),
            known: s.is_known(),
            terminal: s.is_terminal(),
            allowed_commands: s.allowed_commands().iter().map(|c| c.as_str()).collect(),
        })
    })
}

/// The state expected after ``command``; raises ExportStateError.
#[pyfunction]
pub fn validate_export_command(state: &Bound<'_, PyAny>, command: &str) -> PyResult<String> {
    crate::guard(|| {
        let cmd = ExportCommand::parse(command)?;
        export::validate_export_command(&ExportState::parse(&str_arg(state, "state")?), cmd)
            .map(|s| s.as_str().to_owned())
            .map_err(crate::Failure::from)
    })
}

/// ``keep_polling``, ``download`` or ``stop`` after the ``attempt``-th read.
#[pyfunction]
#[pyo3(signature = (state, attempt, *, random=None, max_polls=None, max_unknown_polls=None))]
pub fn export_poll_decision(
    state: &Bound<'_, PyAny>,
    attempt: i64,
    random: Option<f64>,
    max_polls: Option<i64>,
    max_unknown_polls: Option<i64>,
) -> PyResult<export::PollDecision> {
    crate::guard(|| {
        let r = match random {
            Some(r) => r,
            None => royaltykit_host::random_unit()?,
        };
        let d = export::export_poll_decision(
            &ExportState::parse(&str_arg(state, "state")?),
            attempt,
            r,
            max_polls,
            max_unknown_polls,
        )?;
        Ok(d)
    })
}

/// Raises ExportDownloadError for partial content and ApiError for an error status.
#[pyfunction]
#[pyo3(signature = (status, headers=None, body=None, *, now=None))]
pub fn check_export_download(
    status: i64,
    headers: Option<&Bound<'_, PyAny>>,
    body: Option<&Bound<'_, PyAny>>,
    now: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    crate::guard(|| {
        let h = match headers {
            Some(x) if !x.is_none() => crate::headers_for(x, &royaltykit::RESPONSE_HEADER_NAMES)?,
            _ => crate::Headers(Vec::new()),
        };
        let b = match body {
            Some(x) if !x.is_none() => match body_arg(x)? {
                Body::Borrowed(b) => b.to_vec(),
                Body::Owned(v) => v,
            },
            _ => Vec::new(),
        };
        let now = now_arg(now, "now")?;
        export::check_export_download(status, &h, &b, now)?.map_err(crate::Failure::from)
    })
}

fn opt_query(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    match v {
        Some(x) if !x.is_none() => {
            if x.is_instance_of::<pyo3::types::PyInt>()
                && !x.is_instance_of::<pyo3::types::PyBool>()
            {
                Ok(Some(x.str()?.to_string()))
            } else {
                str_arg(x, what).map(Some)
            }
        }
        _ => Ok(None),
    }
}

/// Validates an export list query; returns the query string.
#[pyfunction]
#[pyo3(signature = (*, limit=None, cursor=None, export_class=None, status=None, format=None))]
pub fn validate_export_list_query(
    limit: Option<&Bound<'_, PyAny>>,
    cursor: Option<&Bound<'_, PyAny>>,
    export_class: Option<&Bound<'_, PyAny>>,
    status: Option<&Bound<'_, PyAny>>,
    format: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    crate::guard(|| {
        export::validate_export_list_parts(
            opt_query(limit, "limit")?,
            opt_query(cursor, "cursor")?,
            opt_query(export_class, "export_class")?,
            opt_query(status, "status")?,
            opt_query(format, "format")?,
        )
        .map_err(crate::Failure::from)
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
    now: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    crate::guard(|| {
        let now = now_arg(now, "now")?;
        let r = StepUp::parse(requirement)?;
        let k = StepUpKind::parse(kind)?;
        Ok(export::step_up_satisfies(r, k, at, now, max_age_seconds)?)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(export_state, m)?)?;
    m.add_function(wrap_pyfunction!(validate_export_command, m)?)?;
    m.add_function(wrap_pyfunction!(export_poll_decision, m)?)?;
    m.add_function(wrap_pyfunction!(check_export_download, m)?)?;
    m.add_function(wrap_pyfunction!(validate_export_list_query, m)?)?;
    m.add_function(wrap_pyfunction!(step_up_satisfies, m)?)?;
    m.add_class::<ExportStateInfo>()?;
    m.add_class::<export::PollDecision>()?;
    Ok(())
}
