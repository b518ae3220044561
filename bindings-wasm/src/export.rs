//! Export lifecycle for JS: conversions only.

use crate::{err, int, json, now_arg, opt_int, parse, FlatHeaders, R};
use royaltykit::catalog::StepUp;
use royaltykit::export::{self, ExportCommand, ExportState, StepUpKind};
use wasm_bindgen::prelude::*;

/// `export::export_state_info`, as JSON.
#[wasm_bindgen(js_name = exportState)]
pub fn export_state(value: &str) -> String {
    json(&export::export_state_info(value))
}

/// `export::validate_export_command`; the expected state afterwards.
#[wasm_bindgen(js_name = validateExportCommand)]
pub fn validate_export_command(state: &str, command: &str) -> R<String> {
    let command = parse(ExportCommand::parse, command)?;
    let after =
        export::validate_export_command(&ExportState::parse(state), command).map_err(err)?;
    Ok(after.as_str().to_owned())
}

/// `export::export_poll_decision`, as JSON; absent bounds are the core's defaults.
#[wasm_bindgen(js_name = exportPollDecision)]
pub fn export_poll_decision(
    state: &str,
    attempt: f64,
    random: f64,
    max_polls: Option<f64>,
) -> R<String> {
    let (attempt, max_polls) = (int("attempt", attempt)?, opt_int("max_polls", max_polls)?);
    let state = ExportState::parse(state);
    let d = export::export_poll_decision(&state, attempt, random, max_polls);
    d.map(|d| json(&d)).map_err(err)
}

/// `export::check_export_download`: `undefined` when whole, else throws.
#[wasm_bindgen(js_name = checkExportDownload)]
pub fn check_export_download(status: f64, headers: Vec<String>, body: &[u8], now: f64) -> R<()> {
    let (status, now) = (int("status", status)?, now_arg(now)?);
    export::check_export_download(status, &FlatHeaders(headers), body, now)
        .map_err(err)?
        .map_err(err)
}

/// `export::validate_export_list_query` over flat `[name, value, ...]` pairs.
#[wasm_bindgen(js_name = validateExportListQuery)]
pub fn validate_export_list_query(flat: Vec<String>) -> R<String> {
    let pairs: Vec<(String, String)> = flat
        .chunks_exact(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    export::validate_export_list_query(&pairs).map_err(err)
}

/// `export::step_up_satisfies`.
#[wasm_bindgen(js_name = stepUpSatisfies)]
pub fn step_up_satisfies(
    requirement: &str,
    kind: &str,
    at: f64,
    now: f64,
    max_age_seconds: f64,
) -> R<bool> {
    let (requirement, kind) = (
        parse(StepUp::parse, requirement)?,
        parse(StepUpKind::parse, kind)?,
    );
    let (at, now, max_age) = (
        int("at", at)?,
        now_arg(now)?,
        int("max_age_seconds", max_age_seconds)?,
    );
    export::step_up_satisfies(requirement, kind, at, now, max_age).map_err(err)
}
