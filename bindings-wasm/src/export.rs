//! Export lifecycle for JS: conversions only.

use crate::{err, R};
use royaltykit::export;
use wasm_bindgen::prelude::*;

/// `export::validate_export_list_query` over flat `[name, value, ...]` pairs.
#[wasm_bindgen(js_name = validateExportListQuery)]
pub fn validate_export_list_query(flat: Vec<String>) -> R<String> {
    let pairs: Vec<(String, String)> = flat
        .chunks_exact(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    export::validate_export_list_query(&pairs).map_err(err)
}
