//! Export lifecycle for Python: conversions only.

use crate::args::TextOrInt;
use crate::guard;
use pyo3::prelude::*;
use royaltykit::export;

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::py_export!(m;
        fn validate_export_list_query;
        class export::ExportStateInfo, export::PollDecision
    );
    Ok(())
}
