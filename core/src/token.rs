//! Token exchanges of both APIs, and response lifecycle notices.
//!
//! Reporting: POST `/api/platform/v1/oauth/token` with HTTP Basic (client id and secret),
//! `X-Tenant-ID` and JSON `grant_type: client_credentials`; the response has `access_token`,
//! `token_type` (Bearer), `expires_in` (at most 3600) and the granted `scope`, and is sent with
//! `Cache-Control: no-store`. Enterprise: POST `/api/v1/token` with `X-Api-Key` and
//! `X-Api-Secret`; the response has `token` and `expires_at` (ISO 8601, or null when the
//! organization's token lifetime is disabled).

use crate::api_error::{parse_api_error, ApiError};
pub use crate::bearer::BearerToken;
use crate::catalog::{self, Api};
use crate::request::{is_uuid, RequestDescriptor, RequestError};
use crate::{headers::first_value, ArgumentError, HeaderMap};
use base64::Engine;
use serde_json::Value;
use std::fmt;

/// Largest `expires_in` the reporting API may grant, in seconds.
pub const MAX_EXPIRES_IN_SECONDS: i64 = 3600;
/// Most seconds before expiry at which a token should be refreshed.
pub const MAX_REFRESH_SKEW_SECONDS: i64 = 60;

/// Why a token response was not accepted. Codes: `invalid_token_response` (a success status
/// with a body that breaks the contract) or `api_error` (an error status; see the `ApiError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// An error status, parsed.
    #[error("token exchange failed: {0}")]
    Api(Box<ApiError>),
    /// A success status whose body breaks the contract.
    #[error("invalid token response: {reason}")]
    InvalidResponse {
        /// What is wrong (never the token).
        reason: String,
    },
}

impl TokenError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Api(_) => "api_error",
            Self::InvalidResponse { .. } => "invalid_token_response",
        }
    }
}

fn invalid(reason: impl Into<String>) -> TokenError {
    TokenError::InvalidResponse {
        reason: reason.into(),
    }
}

fn credential(
    parameter: &str,
    value: &str,
    extra_forbidden: Option<char>,
) -> Result<(), RequestError> {
    if value.is_empty()
        || value.len() > 4096
        || value
            .chars()
            .any(|c| c.is_control() || Some(c) == extra_forbidden)
    {
        let also = extra_forbidden.map_or(String::new(), |c| format!(" or '{c}'"));
        return Err(RequestError {
            code: "invalid_parameter",
            parameter: parameter.to_owned(),
            reason: format!("must be 1 to 4096 characters without control characters{also}"),
        });
    }
    Ok(())
}

/// The reporting client-credential exchange. Promises `invalid_parameter` for an empty client
/// id (or one with ':', which HTTP Basic cannot carry), an empty secret, a tenant id that is
/// not a UUID, or a scope with spaces. The descriptor's `Debug` hides the credentials.
pub fn build_token_request<S: AsRef<str>>(
    client_id: &str,
    client_secret: &str,
    tenant_id: &str,
    scopes: &[S],
) -> Result<RequestDescriptor, RequestError> {
    credential("client_id", client_id, Some(':'))?;
    credential("client_secret", client_secret, None)?;
    if !is_uuid(tenant_id) {
        return Err(RequestError {
            code: "invalid_parameter",
            parameter: "tenant_id".to_owned(),
            reason: "must be the tenant's UUID (X-Tenant-ID)".to_owned(),
        });
    }
    for s in scopes {
        let s = s.as_ref();
        if s.is_empty()
            || !s
                .bytes()
                .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
        {
            return Err(RequestError {
                code: "invalid_parameter",
                parameter: "scopes".to_owned(),
                reason: "each scope must be a non-empty token without spaces".to_owned(),
            });
        }
    }
    let op = catalog::operation("exchangePlatformClientCredential").map_err(|e| RequestError {
        code: "unknown_operation",
        parameter: "operation_id".to_owned(),
        reason: e.reason,
    })?;
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{client_id}:{client_secret}"));
    let mut body = serde_json::Map::new();
    body.insert("grant_type".to_owned(), Value::from("client_credentials"));
    if !scopes.is_empty() {
        let joined: Vec<&str> = scopes.iter().map(AsRef::as_ref).collect();
        body.insert("scope".to_owned(), Value::from(joined.join(" ")));
    }
    Ok(RequestDescriptor {
        operation_id: op.id.clone(),
        method: op.method.clone(),
        path: op.path.to_owned(),
        query: String::new(),
        headers: vec![
            ("Accept".to_owned(), "application/json".to_owned()),
            ("Authorization".to_owned(), format!("Basic {basic}")),
            ("X-Tenant-ID".to_owned(), tenant_id.to_owned()),
            ("Content-Type".to_owned(), "application/json".to_owned()),
        ],
        body: Some(Value::Object(body).to_string().into_bytes()),
        idempotency_key: None,
        idempotency_key_sent: false,
    })
}

secret_record! {
/// A reporting API access token.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// The bearer value. Never printed by `Debug`.
    pub access_token: String,
    /// Always `Bearer` (normalised from any case).
    pub token_type: String,
    /// Lifetime in seconds (1 to 3600).
    pub expires_in: i64,
    /// `now + expires_in`.
    pub expires_at: i64,
    /// When to refresh: `expires_at` minus a skew of a tenth of the lifetime, at most 60 s.
    pub refresh_at: i64,
    /// Scopes granted, as the response's `scope` lists them; `None` when it has no `scope`
    /// member: the grant is unknown (never assumed to be what was requested).
    pub scopes: Option<Vec<String>>,
    /// Scopes requested but not granted (the exchange succeeds; calls needing them get 403);
    /// `None` when the grant is unknown.
    pub missing_scopes: Option<Vec<String>>,
    /// Contract deviations that do not invalidate the token (e.g. no `Cache-Control: no-store`).
    pub warnings: Vec<String>,
    /// The tenant (`X-Tenant-ID`) the token was obtained for: requests built with it send this
    /// tenant, and refuse another (the spec: a tenant reference from one authenticated context
    /// must never be passed into another).
    pub tenant_id: String,
}}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token")
            .field("access_token", &"[redacted]")
            .field("token_type", &self.token_type)
            .field("expires_at", &self.expires_at)
            .field("refresh_at", &self.refresh_at)
            .field("scopes", &self.scopes)
            .field("missing_scopes", &self.missing_scopes)
            .field("warnings", &self.warnings)
            .field("tenant_id", &self.tenant_id)
            .finish()
    }
}

impl Token {
    /// The token as a [`BearerToken`] of the reporting API bound to its tenant, for
    /// [`crate::request::RequestParams`].
    pub fn bearer(&self) -> BearerToken {
        BearerToken::reports(self.access_token.clone(), self.tenant_id.clone())
    }
}

fn refresh_at(expires_at: i64, lifetime: i64) -> i64 {
    expires_at.saturating_sub((lifetime / 10).clamp(1, MAX_REFRESH_SKEW_SECONDS))
}

fn json_object(body: &[u8]) -> Result<serde_json::Map<String, Value>, TokenError> {
    if body.len() > 64 * 1024 {
        return Err(invalid("the body is larger than 64 KiB"));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(o)) => Ok(o),
        _ => Err(invalid("the body is not a JSON object")),
    }
}

fn bearer_value(v: Option<&Value>, member: &str) -> Result<String, TokenError> {
    match v {
        Some(Value::String(s))
            if !s.is_empty()
                && s.len() <= 8192
                && s.bytes().all(|b| (0x21..=0x7e).contains(&b)) =>
        {
            Ok(s.clone())
        }
        Some(Value::String(_)) => Err(invalid(format!(
            "`{member}` is empty or has characters a bearer token cannot carry"
        ))),
        _ => Err(invalid(format!("`{member}` is missing or not a string"))),
    }
}

fn api_error<H: HeaderMap + ?Sized>(
    api: Api,
    status: u16,
    headers: &H,
    body: &[u8],
    op: &str,
    now: i64,
) -> TokenError {
    match parse_api_error(api, i64::from(status), headers, body, Some(op), now) {
        Ok(e) => TokenError::Api(Box::new(e)),
        Err(e) => invalid(e.reason),
    }
}

/// The body of a response to `op` as a JSON object when the status is a success; the parsed
/// API error otherwise. Promises `invalid_argument` for a status outside 100–599.
fn success_body<H: HeaderMap + ?Sized>(
    api: Api,
    status: i64,
    headers: &H,
    body: &[u8],
    op: &str,
    now: i64,
) -> Result<Result<serde_json::Map<String, Value>, TokenError>, ArgumentError> {
    let status = u16::try_from(status)
        .ok()
        .filter(|s| (100..=599).contains(s))
        .ok_or_else(|| ArgumentError::new("status", format!("must be 100 to 599, got {status}")))?;
    if !(200..=299).contains(&status) {
        return Ok(Err(api_error(api, status, headers, body, op, now)));
    }
    Ok(json_object(body))
}

/// Checks a reporting token response. Promises: an error status gives `api_error` with the
/// parsed body; a 2xx body without a usable `access_token`, with a `token_type` other than
/// Bearer (any case), or with `expires_in` not a whole number from 1 to 3600 gives
/// `invalid_token_response`; scopes requested but not granted are listed, not rejected; a
/// missing `Cache-Control: no-store` or `scope` member is a warning. `tenant_id` is the
/// tenant the exchange was made for (its `X-Tenant-ID`): the token remembers it;
/// `invalid_argument` when it is not a UUID.
pub fn parse_token_response<H: HeaderMap + ?Sized, S: AsRef<str>>(
    status: i64,
    headers: &H,
    body: &[u8],
    requested_scopes: &[S],
    tenant_id: &str,
    now: i64,
) -> Result<Result<Token, TokenError>, ArgumentError> {
    if !is_uuid(tenant_id) {
        return Err(ArgumentError::new(
            "tenant_id",
            "must be the tenant's UUID the exchange was made for (its X-Tenant-ID)",
        ));
    }
    Ok(success_body(Api::Reports, status, headers, body, "exchangePlatformClientCredential", now)?.and_then(|obj| {
        let access_token = bearer_value(obj.get("access_token"), "access_token")?;
        let token_type = match obj.get("token_type") {
            Some(Value::String(t)) if t.eq_ignore_ascii_case("bearer") => "Bearer".to_owned(),
            Some(Value::String(t)) => {
                return Err(invalid(format!(
                    "`token_type` is {:?}, expected Bearer",
                    t.chars().take(40).collect::<String>()
                )))
            }
            _ => return Err(invalid("`token_type` is missing")),
        };
        let expires_in = obj
            .get("expires_in")
            .and_then(Value::as_i64)
            .ok_or_else(|| invalid("`expires_in` is missing or not a whole number of seconds"))?;
        if !(1..=MAX_EXPIRES_IN_SECONDS).contains(&expires_in) {
            return Err(invalid(format!("`expires_in` is {expires_in}; the contract allows 1 to {MAX_EXPIRES_IN_SECONDS} seconds")));
        }
        let mut warnings = Vec::new();
        let scopes: Option<Vec<String>> = match obj.get("scope") {
            Some(Value::String(s)) => Some(
                s.split(' ')
                    .filter(|x| !x.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            _ => {
                warnings.push("the response has no `scope` member: the granted scopes are unknown (a call needing one may get 403)".to_owned());
                None
            }
        };
        let missing_scopes = scopes.as_ref().map(|granted| {
            requested_scopes
                .iter()
                .map(AsRef::as_ref)
                .filter(|r| !granted.iter().any(|g| g == r))
                .map(str::to_owned)
                .collect()
        });
        if !has_no_store(headers) {
            warnings.push(
                "the response lacks Cache-Control: no-store; do not let any cache keep it"
                    .to_owned(),
            );
        }
        let expires_at = now.saturating_add(expires_in);
        Ok(Token {
            access_token,
            token_type,
            expires_in,
            expires_at,
            refresh_at: refresh_at(expires_at, expires_in),
            scopes,
            missing_scopes,
            warnings,
            tenant_id: tenant_id.to_owned(),
        })
    }))
}

fn has_no_store<H: HeaderMap + ?Sized>(headers: &H) -> bool {
    let mut found = false;
    headers.for_each_value("Cache-Control", &mut |v| {
        found |= v
            .split(',')
            .any(|d| d.trim().eq_ignore_ascii_case("no-store"));
    });
    found
}

/// The enterprise token exchange. Promises `invalid_parameter` for an empty key or secret.
/// The descriptor's `Debug` hides both.
pub fn build_enterprise_token_request(
    api_key: &str,
    api_secret: &str,
) -> Result<RequestDescriptor, RequestError> {
    credential("api_key", api_key, None)?;
    credential("api_secret", api_secret, None)?;
    for (name, v) in [("api_key", api_key), ("api_secret", api_secret)] {
        if !v.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
            return Err(RequestError {
                code: "invalid_parameter",
                parameter: name.to_owned(),
                reason: "must be printable ASCII (it travels in a header)".to_owned(),
            });
        }
    }
    Ok(RequestDescriptor {
        operation_id: "exchangeEnterpriseToken".to_owned(),
        method: "POST".to_owned(),
        path: "/api/v1/token".to_owned(),
        query: String::new(),
        headers: vec![
            ("Accept".to_owned(), "application/json".to_owned()),
            ("X-Api-Key".to_owned(), api_key.to_owned()),
            ("X-Api-Secret".to_owned(), api_secret.to_owned()),
        ],
        body: None,
        idempotency_key: None,
        idempotency_key_sent: false,
    })
}

secret_record! {
/// An enterprise API token.
#[derive(Clone, PartialEq, Eq)]
pub struct EnterpriseToken {
    /// The bearer value. Never printed by `Debug`.
    pub token: String,
    /// When it expires (Unix seconds); `None` when the organization's token lifetime is disabled.
    pub expires_at: Option<i64>,
    /// When to refresh (a tenth of the remaining lifetime before expiry, at most 60 s).
    pub refresh_at: Option<i64>,
}}

impl fmt::Debug for EnterpriseToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseToken")
            .field("token", &"[redacted]")
            .field("expires_at", &self.expires_at)
            .field("refresh_at", &self.refresh_at)
            .finish()
    }
}

impl EnterpriseToken {
    /// The token as a [`BearerToken`] of the enterprise API, for
    /// [`crate::request::RequestParams`].
    pub fn bearer(&self) -> BearerToken {
        BearerToken::enterprise(self.token.clone())
    }
}

/// Checks an enterprise token response: `token` (a string) and `expires_at` (ISO 8601 with an
/// offset, or null/absent for no expiry). Promises the same error split as
/// [`parse_token_response`].
pub fn parse_enterprise_token_response<H: HeaderMap + ?Sized>(
    status: i64,
    headers: &H,
    body: &[u8],
    now: i64,
) -> Result<Result<EnterpriseToken, TokenError>, ArgumentError> {
    Ok(success_body(
        Api::Enterprise,
        status,
        headers,
        body,
        "exchangeEnterpriseToken",
        now,
    )?
    .and_then(|obj| {
        let token = bearer_value(obj.get("token"), "token")?;
        let expires_at = match obj.get("expires_at") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(crate::parse_timestamp(s).ok_or_else(|| {
                invalid("`expires_at` is not an ISO 8601 timestamp (such as 2026-11-27T03:00:00Z)")
            })?),
            Some(_) => return Err(invalid("`expires_at` must be a string or null")),
        };
        Ok(EnterpriseToken {
            token,
            expires_at,
            refresh_at: expires_at.map(|e| refresh_at(e, e.saturating_sub(now).max(0))),
        })
    }))
}

record! {
/// The reporting API session of a token (`getPlatformApiSession`): what was granted and when
/// to refresh. The client and tenant members' names are not shown in the spec, so they are
/// not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiSession {
    /// Scopes granted, as the session lists them.
    pub scopes: Vec<String>,
    /// When the token must be refreshed by (Unix seconds).
    pub expires_at: i64,
    /// When to refresh: `expires_at` minus a skew of a tenth of the remaining lifetime, at
    /// most 60 s ("refresh before expires_at (from the API session) instead of waiting for 401").
    pub refresh_at: i64,
}
}

/// Checks an API session response (`GET /api/platform/v1/api/session`): an array of granted
/// `scopes` and `expires_at` (an RFC 3339 timestamp or Unix seconds). Promises the same error
/// split as [`parse_token_response`]: `invalid_argument` for a status outside 100–599, an API
/// error for an error status, `invalid_token_response` for a success body without usable
/// `scopes` or `expires_at`.
pub fn parse_api_session<H: HeaderMap + ?Sized>(
    status: i64,
    headers: &H,
    body: &[u8],
    now: i64,
) -> Result<Result<ApiSession, TokenError>, ArgumentError> {
    Ok(success_body(
        Api::Reports,
        status,
        headers,
        body,
        "getPlatformApiSession",
        now,
    )?
    .and_then(|obj| {
        let scopes = match obj.get("scopes") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(|| invalid("`scopes` must be an array of scope names"))?,
            _ => return Err(invalid("`scopes` is missing or not an array")),
        };
        let expires_at = match obj.get("expires_at") {
            Some(Value::String(s)) => crate::parse_timestamp(s)
                .ok_or_else(|| invalid("`expires_at` is not an ISO 8601 timestamp"))?,
            Some(Value::Number(n)) => n
                .as_i64()
                .ok_or_else(|| invalid("`expires_at` is not whole Unix seconds"))?,
            _ => return Err(invalid("`expires_at` is missing")),
        };
        Ok(ApiSession {
            scopes,
            expires_at,
            refresh_at: refresh_at(expires_at, expires_at.saturating_sub(now).max(0)),
        })
    }))
}

/// Scopes that `operation_id` needs and `granted` lacks. Promises `invalid_argument` for an
/// unknown operation.
pub fn missing_scopes<S: AsRef<str>>(
    granted: &[S],
    operation_id: &str,
) -> Result<Vec<String>, ArgumentError> {
    Ok(catalog::operation(operation_id)?.missing_scopes(granted))
}

string_enum! {
    /// A way a deprecation notice falls short of the reporting API's lifecycle policy
    /// ("minimum deprecation period 180 days; a sunset header is required on deprecated
    /// operations; a replacement operation must be named").
    pub enum NoticeIssue as "policy_issue" {
        /// Deprecated without a `Sunset` header.
        MissingSunset = "missing_sunset",
        /// The sunset is less than 180 days after the deprecation.
        SunsetTooSoon = "sunset_too_soon",
        /// Deprecated without a `Link` naming the successor (`rel="successor-version"`).
        NoReplacement = "no_replacement",
    }
}

/// The reporting API's minimum deprecation period, in seconds (180 days).
pub const MIN_DEPRECATION_PERIOD_SECONDS: i64 = 180 * 86_400;

record! {
/// `Deprecation` and `Sunset` response headers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResponseNotices {
    /// A `Deprecation` header is present (the operation is or will be deprecated).
    pub deprecated: bool,
    /// When it was or will be deprecated (RFC 9745 `@<seconds>`, or an HTTP-date).
    pub deprecated_at: Option<i64>,
    /// When it stops working (RFC 8594 `Sunset`, an HTTP-date).
    pub sunset_at: Option<i64>,
    /// The `Link` header, which may name the replacement (`rel="successor-version"`).
    pub link: Option<String>,
    /// Where a deprecation falls short of the lifecycle policy (empty when not deprecated):
    /// report these to whoever owns the integration, the operation may go sooner than expected.
    pub policy_issues: Vec<NoticeIssue>,
}
}

/// Most characters of the `Link` field kept and examined.
const MAX_LINK_CHARS: usize = 8192;

/// Splits `s` at `sep` outside double-quoted strings and `<…>` references.
fn split_outside_quotes(s: &str, sep: char) -> impl Iterator<Item = &str> {
    let mut parts = Vec::new();
    let (mut quoted, mut bracketed, mut escaped, mut start) = (false, false, false, 0);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' if !bracketed => quoted = !quoted,
            '<' if !quoted => bracketed = true,
            '>' if !quoted => bracketed = false,
            c if c == sep && !quoted && !bracketed => {
                parts.push(s.get(start..i).unwrap_or_default());
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(s.get(start..).unwrap_or_default());
    parts.into_iter()
}

/// Whether a `Link` field (RFC 8288) has a link-value whose `rel` names `successor-version`,
/// on any line and in any position.
fn names_successor_version(field: &str) -> bool {
    split_outside_quotes(field, ',').any(|link_value| {
        split_outside_quotes(link_value, ';').skip(1).any(|param| {
            param.split_once('=').is_some_and(|(name, value)| {
                name.trim().eq_ignore_ascii_case("rel")
                    && value
                        .trim()
                        .trim_matches('"')
                        .split_ascii_whitespace()
                        .any(|rel| rel.eq_ignore_ascii_case("successor-version"))
            })
        })
    })
}

/// Reads `Deprecation`, `Sunset` and `Link` from a response, and says where a deprecation falls
/// short of the reporting API's lifecycle policy (no sunset, under 180 days, no named
/// replacement). Unparsable values are kept as "present" without a date.
pub fn response_notices<H: HeaderMap + ?Sized>(headers: &H) -> ResponseNotices {
    let http_date = crate::parse_timestamp;
    let deprecation = first_value(headers, "Deprecation");
    let deprecated_at = deprecation.and_then(|v| match v.strip_prefix('@') {
        Some(n) => n.parse::<i64>().ok(),
        None => http_date(v),
    });
    let deprecated = deprecation.is_some_and(|v| !v.eq_ignore_ascii_case("false"));
    let sunset = first_value(headers, "Sunset");
    let sunset_at = sunset.and_then(http_date);
    // Every `Link` line, in order, joined as one field value (RFC 9110 §5.3), bounded.
    let mut lines: Vec<&str> = Vec::new();
    headers.for_each_value("Link", &mut |v| lines.push(v));
    let link: Option<String> =
        (!lines.is_empty()).then(|| lines.join(", ").chars().take(MAX_LINK_CHARS).collect());
    let mut policy_issues = Vec::new();
    if deprecated {
        if sunset.is_none() {
            policy_issues.push(NoticeIssue::MissingSunset);
        }
        if let (Some(d), Some(s)) = (deprecated_at, sunset_at) {
            if s.saturating_sub(d) < MIN_DEPRECATION_PERIOD_SECONDS {
                policy_issues.push(NoticeIssue::SunsetTooSoon);
            }
        }
        let names_successor = link.as_deref().is_some_and(names_successor_version);
        if !names_successor {
            policy_issues.push(NoticeIssue::NoReplacement);
        }
    }
    ResponseNotices {
        deprecated,
        deprecated_at,
        sunset_at,
        link,
        policy_issues,
    }
}
