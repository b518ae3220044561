//! API error bodies: from (API, status, headers, body bytes) to one [`ApiError`].
//!
//! The enterprise API documents `{success: false, message, errors}` with four known messages.
//! The reporting API does not show its error body, so the common shapes are accepted: a
//! `message`/`error`/`code` object, `{error: {message, code}}`, OAuth `error` and
//! `error_description`, RFC 9457 problem details, `errors` as a map or a list. Anything else —
//! HTML from a proxy, an empty or truncated body — falls back to the status. Parsing is
//! bounded and never fails.

use crate::catalog::{self, Api};
use crate::retry::retry_after_from_headers;
use crate::{ArgumentError, HeaderMap};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Largest body parsed as JSON; larger bodies fall back to the status.
pub const MAX_PARSED_BODY_BYTES: usize = 64 * 1024;
/// Longest raw body kept on the error, in bytes (cut at a character boundary).
pub const MAX_RAW_BODY_BYTES: usize = 4 * 1024;
const MAX_FIELDS: usize = 100;
const MAX_MESSAGES_PER_FIELD: usize = 20;
const MAX_TEXT: usize = 1000;

string_enum! {
    /// The family of an error, from the status.
    pub enum ApiErrorKind as "kind" {
        /// 400.
        BadRequest = "bad_request",
        /// 401.
        Unauthenticated = "unauthenticated",
        /// 403.
        Forbidden = "forbidden",
        /// 404 and 410.
        NotFound = "not_found",
        /// 409.
        Conflict = "conflict",
        /// 422.
        Validation = "validation",
        /// 429.
        RateLimited = "rate_limited",
        /// 503.
        Unavailable = "unavailable",
        /// 408 and 504.
        Timeout = "timeout",
        /// Other 5xx.
        ServerError = "server_error",
        /// Anything else.
        Other = "other",
    }
}

impl ApiErrorKind {
    /// From the status alone.
    pub fn from_status(status: u16) -> Self {
        match status {
            400 => Self::BadRequest,
            401 => Self::Unauthenticated,
            403 => Self::Forbidden,
            404 | 410 => Self::NotFound,
            408 | 504 => Self::Timeout,
            409 => Self::Conflict,
            422 => Self::Validation,
            429 => Self::RateLimited,
            503 => Self::Unavailable,
            500..=599 => Self::ServerError,
            _ => Self::Other,
        }
    }
}

record! {
/// An API error response, parsed. Its fields are the same in every language; when thrown or
/// raised, the error's own `code` is `api_error` and this record's `body_code` is the body's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The API that answered.
    pub api: Api,
    /// The HTTP status.
    pub status: u16,
    /// The family, from the status.
    pub kind: ApiErrorKind,
    /// A specific reason when the body says more: enterprise `missing_bearer_token`,
    /// `action_unauthorized`, `resource_not_found`, `validation_failed`; OAuth error values
    /// (`invalid_client`, `invalid_scope`, …).
    pub reason: Option<String>,
    /// A message for people: the body's, or the status text.
    pub message: String,
    /// The body's own code, if it has one (kept as sent; the set is not shown in the specs).
    pub body_code: Option<String>,
    /// Field errors: field name to messages.
    pub field_errors: HashMap<String, Vec<String>>,
    /// `Retry-After` in seconds, when present: the whole wait, never shortened.
    pub retry_after_seconds: Option<u64>,
    /// Whether the operation declares this status; `None` without an operation or where the
    /// spec declares no statuses.
    pub declared: Option<bool>,
    /// The operation id given.
    pub operation_id: Option<String>,
    /// The body as received (lossy UTF-8, at most 4 KiB).
    pub raw_body: String,
}
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} ({})",
            self.status,
            self.message,
            self.kind.as_str()
        )?;
        if let Some(r) = &self.reason {
            write!(f, " [{r}]")?;
        }
        Ok(())
    }
}

const ENTERPRISE_MESSAGES: [(&str, &str); 4] = [
    ("missing bearer token", "missing_bearer_token"),
    ("this action is unauthorized", "action_unauthorized"),
    ("resource not found", "resource_not_found"),
    ("validation failed", "validation_failed"),
];
const OAUTH_ERRORS: [&str; 7] = [
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
    "access_denied",
];

/// Parses an error response. `operation_id`, when given, sets `declared` and must be a known
/// operation of `api`. Promises: never fails on any body (HTML, empty, truncated, huge, not
/// UTF-8); `invalid_argument` only for a status outside 100–599 or an unknown operation.
pub fn parse_api_error<H: HeaderMap + ?Sized>(
    api: Api,
    status: i64,
    headers: &H,
    body: &[u8],
    operation_id: Option<&str>,
    now: i64,
) -> Result<ApiError, ArgumentError> {
    let status = u16::try_from(status)
        .ok()
        .filter(|s| (100..=599).contains(s))
        .ok_or_else(|| ArgumentError::new("status", format!("must be 100 to 599, got {status}")))?;
    let op = operation_id.map(catalog::operation).transpose()?;
    if let Some(op) = op {
        if op.api != api {
            return Err(ArgumentError::new(
                "operation_id",
                format!("{} belongs to the {} API", op.id, op.api.as_str()),
            ));
        }
    }
    let mut err = ApiError {
        api,
        status,
        kind: ApiErrorKind::from_status(status),
        reason: None,
        message: String::new(),
        body_code: None,
        field_errors: HashMap::new(),
        retry_after_seconds: retry_after_from_headers(headers, now).map(|r| r.seconds),
        declared: op.and_then(|o| o.declares(status)),
        operation_id: op.map(|o| o.id.to_owned()),
        raw_body: raw(body),
    };
    if body.len() <= MAX_PARSED_BODY_BYTES {
        if let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(body) {
            read_object(&obj, &mut err);
        }
    }
    if err.message.is_empty() {
        err.message = status_text(status).to_owned();
    }
    Ok(err)
}

fn raw(body: &[u8]) -> String {
    let cut = body.get(..MAX_RAW_BODY_BYTES).unwrap_or(body);
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if body.len() > MAX_RAW_BODY_BYTES {
        // from_utf8_lossy may have replaced a split character at the end; that is acceptable.
        s.push('…');
    }
    s
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.chars().take(MAX_TEXT).collect()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn read_object(obj: &Map<String, Value>, err: &mut ApiError) {
    // OAuth (RFC 6749 §5.2): error + error_description.
    if let Some(Value::String(e)) = obj.get("error") {
        if OAUTH_ERRORS.contains(&e.as_str()) || obj.contains_key("error_description") {
            err.body_code = Some(e.chars().take(MAX_TEXT).collect());
            err.reason = Some(err.body_code.clone().unwrap_or_default());
            if let Some(d) = obj.get("error_description").and_then(text) {
                err.message = d;
            }
        } else if is_code_like(e) {
            err.body_code = Some(e.clone());
        } else if let Some(m) = text(&Value::String(e.clone())) {
            err.message = m;
        }
    }
    // {error: {message, code, errors}}
    if let Some(Value::Object(inner)) = obj.get("error") {
        read_object(inner, err);
    }
    // RFC 9457 problem details: detail, title, type.
    if err.message.is_empty() {
        if let Some(m) = obj
            .get("message")
            .and_then(text)
            .or_else(|| obj.get("detail").and_then(text))
            .or_else(|| obj.get("title").and_then(text))
        {
            err.message = m;
        }
    }
    if err.body_code.is_none() {
        err.body_code = obj.get("code").and_then(text).or_else(|| {
            obj.get("type")
                .and_then(text)
                .filter(|t| t != "about:blank")
        });
    }
    if let Some(errors) = obj.get("errors") {
        read_field_errors(errors, err);
    }
    if err.reason.is_none() && err.api == Api::Enterprise {
        let m = err
            .message
            .trim()
            .trim_end_matches('.')
            .to_ascii_lowercase();
        err.reason = ENTERPRISE_MESSAGES
            .iter()
            .find(|(msg, _)| *msg == m)
            .map(|(_, r)| (*r).to_owned());
    }
}

fn is_code_like(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
}

fn push_field(err: &mut ApiError, field: String, message: String) {
    if err.field_errors.len() >= MAX_FIELDS && !err.field_errors.contains_key(&field) {
        return;
    }
    let list = err.field_errors.entry(field).or_default();
    if list.len() < MAX_MESSAGES_PER_FIELD {
        list.push(message);
    }
}

fn read_field_errors(errors: &Value, err: &mut ApiError) {
    match errors {
        // {field: [messages]} or {field: message}
        Value::Object(map) => {
            for (field, v) in map.iter().take(MAX_FIELDS) {
                let field: String = field.chars().take(200).collect();
                match v {
                    Value::Array(items) => {
                        for m in items.iter().filter_map(text) {
                            push_field(err, field.clone(), m);
                        }
                    }
                    other => {
                        if let Some(m) = text(other) {
                            push_field(err, field, m);
                        }
                    }
                }
            }
        }
        // [{field, message}], [{pointer|path|name, detail}], or plain strings (not per field)
        Value::Array(items) => {
            for item in items.iter().take(MAX_FIELDS * MAX_MESSAGES_PER_FIELD) {
                match item {
                    Value::Object(o) => {
                        let field = ["field", "pointer", "path", "name", "parameter"]
                            .iter()
                            .find_map(|k| o.get(*k).and_then(text));
                        let message = ["message", "detail", "title", "code"]
                            .iter()
                            .find_map(|k| o.get(*k).and_then(text));
                        if let Some(m) = message {
                            push_field(err, field.unwrap_or_default(), m);
                        }
                    }
                    other => {
                        if let Some(m) = text(other) {
                            push_field(err, String::new(), m);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// The reason phrase of a status (RFC 9110), or a generic one.
#[allow(clippy::match_overlapping_arm)] // specific phrases first, then the class
pub fn status_text(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        100..=199 => "Informational",
        200..=299 => "Success",
        300..=399 => "Redirection",
        400..=499 => "Client Error",
        _ => "Server Error",
    }
}
