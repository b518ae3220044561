//! Export lifecycle for JS: conversions only.

use crate::{argument_error, now_arg, set, FlatHeaders};
use js_sys::{Array, Object};
use royaltykit::catalog::StepUp;
use royaltykit::export::{self, DownloadError, ExportCommand, ExportState, StepUpKind};
use royaltykit::{integer_from_f64, ArgumentError};
use wasm_bindgen::prelude::*;

fn arg<T>(r: Result<T, ArgumentError>) -> Result<T, JsValue> {
    r.map_err(|e| argument_error(&e))
}

/// `{name, known, terminal, allowedCommands}` of a server value.
#[wasm_bindgen(js_name = exportState)]
pub fn export_state(value: &str) -> JsValue {
    let s = ExportState::parse(value);
    let o = Object::new();
    set(&o, "name", s.as_str().into());
    set(&o, "known", s.is_known().into());
    set(&o, "terminal", s.is_terminal().into());
    let allowed: Array = s
        .allowed_commands()
        .iter()
        .map(|c| JsValue::from_str(c.as_str()))
        .collect();
    set(&o, "allowedCommands", allowed.into());
    o.into()
}

/// `export::validate_export_command`; the expected state afterwards.
#[wasm_bindgen(js_name = validateExportCommand)]
pub fn validate_export_command(state: &str, command: &str) -> Result<String, JsValue> {
    let cmd = arg(ExportCommand::parse(command))?;
    export::validate_export_command(&ExportState::parse(state), cmd)
        .map(|s| s.as_str().to_owned())
        .map_err(|e| {
            let o = Object::new();
            set(&o, "kind", "export_state".into());
            set(&o, "code", e.code().into());
            set(&o, "message", e.to_string().into());
            set(&o, "state", e.state.as_str().into());
            set(&o, "command", e.command.as_str().into());
            let allowed: Array = e
                .allowed
                .iter()
                .map(|c| JsValue::from_str(c.as_str()))
                .collect();
            set(&o, "allowed", allowed.into());
            o.into()
        })
}

/// `export::export_poll_decision`.
#[wasm_bindgen(js_name = exportPollDecision)]
pub fn export_poll_decision(
    state: &str,
    attempt: f64,
    random: f64,
    max_polls: Option<f64>,
    max_unknown_polls: Option<f64>,
) -> Result<JsValue, JsValue> {
    let d = arg(export::export_poll_decision(
        &ExportState::parse(state),
        arg(integer_from_f64("attempt", attempt))?,
        random,
        max_polls
            .map(|m| arg(integer_from_f64("max_polls", m)))
            .transpose()?,
        max_unknown_polls
            .map(|m| arg(integer_from_f64("max_unknown_polls", m)))
            .transpose()?,
    ))?;
    let o = Object::new();
    set(&o, "action", d.action.as_str().into());
    set(&o, "delaySeconds", JsValue::from_f64(d.delay_seconds));
    set(&o, "reason", d.reason.into());
    Ok(o.into())
}

/// `[maxPolls, maxUnknownPolls]` defaults.
#[wasm_bindgen(js_name = exportPollDefaults)]
pub fn export_poll_defaults() -> Array {
    [export::DEFAULT_MAX_POLLS, export::DEFAULT_MAX_UNKNOWN_POLLS]
        .iter()
        .map(|n| JsValue::from_f64(*n as f64))
        .collect()
}

/// `export::check_export_download`: `undefined` when whole, else throws.
#[wasm_bindgen(js_name = checkExportDownload)]
pub fn check_export_download(
    status: f64,
    headers: Vec<String>,
    body: &[u8],
    now: f64,
) -> Result<(), JsValue> {
    let status = arg(integer_from_f64("status", status))?;
    match arg(export::check_export_download(
        status,
        &FlatHeaders(headers),
        body,
        now_arg(now)?,
    ))? {
        Ok(()) => Ok(()),
        Err(DownloadError::Api(a)) => Err(crate::api::api_error_value(&a)),
        Err(e) => {
            let o = Object::new();
            set(&o, "kind", "export_download".into());
            set(&o, "code", e.code().into());
            set(&o, "message", e.to_string().into());
            Err(o.into())
        }
    }
}

/// `export::validate_export_list_query` over flat `[name, value, ...]` pairs.
#[wasm_bindgen(js_name = validateExportListQuery)]
pub fn validate_export_list_query(flat: Vec<String>) -> Result<String, JsValue> {
    let pairs: Vec<(String, String)> = flat
        .chunks_exact(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    export::validate_export_list_query(&pairs).map_err(|e| crate::api::request_error(&e))
}

/// `export::step_up_satisfies`.
#[wasm_bindgen(js_name = stepUpSatisfies)]
pub fn step_up_satisfies(
    requirement: &str,
    kind: &str,
    at: f64,
    now: f64,
    max_age_seconds: f64,
) -> Result<bool, JsValue> {
    arg(export::step_up_satisfies(
        arg(StepUp::parse(requirement))?,
        arg(StepUpKind::parse(kind))?,
        arg(integer_from_f64("at", at))?,
        now_arg(now)?,
        arg(integer_from_f64("max_age_seconds", max_age_seconds))?,
    ))
}
