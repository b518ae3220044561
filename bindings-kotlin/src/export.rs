//! Export lifecycle for Kotlin: conversions only.

use crate::Result;
use royaltykit::export;

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
