//! Request descriptors: from an operation id and its parameters to method, path, query,
//! headers and body, validated against the spec's limits. The host sends it with its own
//! HTTP client.

use crate::bearer::BearerToken;
use crate::catalog::{self, Api, Auth, BodyRule, Idempotency, Operation, QueryKind};
use crate::dedup;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Characters percent-encoded in path segments and query components: everything but
/// RFC 3986 unreserved characters.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What a checked resource path (`{+resource}`) has encoded: it is sent as the event named it,
/// `/` and `%` kept, and only what may not stand in a path encoded.
const RESOURCE_PATH: &AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'|')
    .add(b'^')
    .add(b'[')
    .add(b']');

/// Largest JSON body accepted for validation, in bytes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Why a request could not be built. Codes: `unknown_operation`, `missing_parameter`,
/// `invalid_parameter`, `unknown_parameter`, `invalid_endpoint_url`, `invalid_resource_url`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: `{parameter}` {reason}")]
pub struct RequestError {
    /// The stable code.
    pub code: &'static str,
    /// The parameter at fault (`limit`, `token`, `path.export`, `body.endpoint_url`, …).
    pub parameter: String,
    /// What is wrong and what is accepted (never a token or secret).
    pub reason: String,
}

impl RequestError {
    pub(crate) fn new(
        code: &'static str,
        parameter: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            code,
            parameter: parameter.into(),
            reason: reason.into(),
        }
    }

    /// The stable error code.
    pub fn code(&self) -> &'static str {
        self.code
    }
}

/// The parameters of a request. Values are strings as they would appear on the wire (bindings
/// convert numbers).
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RequestParams {
    /// Path parameters by name (`export`, `importRef`, `uuid`, `reference`, …).
    pub path: Vec<(String, String)>,
    /// Query parameters in the order to send them.
    pub query: Vec<(String, String)>,
    /// The JSON body, as bytes.
    pub body: Option<Vec<u8>>,
    /// The bearer token (machine and enterprise protected routes), typed by the API that issued
    /// it: [`Token::bearer`](crate::token::Token::bearer),
    /// [`EnterpriseToken::bearer`](crate::token::EnterpriseToken::bearer), or
    /// [`BearerToken::reports`]/[`BearerToken::enterprise`] for a cached value. Never
    /// serialised.
    #[serde(skip)]
    pub token: Option<BearerToken>,
    /// `X-Tenant-ID` (reporting machine routes): a UUID.
    pub tenant_id: Option<String>,
    /// `X-User-Id` (enterprise protected routes, optional): a UUID.
    pub user_id: Option<String>,
    /// An idempotency key for this logical request (keep it for its retries). When absent: the
    /// key derived from `request_id`, else a random key from `key_random`.
    pub idempotency_key: Option<String>,
    /// An id the caller gives this logical request; the key is derived from it
    /// ([`dedup::idempotency_key`]) under `key_namespace`, so a retry recomputes it. Accepted
    /// by every operation; one that takes no idempotency key (a read) ignores it.
    pub request_id: Option<String>,
    /// The tenant or organization a key derived from `request_id` is scoped to (default:
    /// `tenant_id`).
    pub key_namespace: Option<String>,
    /// 16 random bytes from the host for a random key (bindings pass the OS RNG's).
    pub key_random: Option<[u8; 16]>,
    /// The header to carry the key on reporting `idem` routes, whose name the spec does not
    /// show. Without it the key is only returned in [`RequestDescriptor::idempotency_key`].
    pub idempotency_header: Option<String>,
}

impl fmt::Debug for RequestParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestParams")
            .field("path", &self.path)
            .field("query", &self.query)
            .field("body_bytes", &self.body.as_ref().map(Vec::len))
            .field("token", &self.token)
            .field("tenant_id", &self.tenant_id)
            .field("user_id", &self.user_id)
            .field("idempotency_key", &self.idempotency_key)
            .field("request_id", &self.request_id)
            .field("key_namespace", &self.key_namespace)
            .finish_non_exhaustive()
    }
}

/// A request ready to send: the host's HTTP client does the I/O.
#[derive(Clone, PartialEq, Eq)]
pub struct RequestDescriptor {
    /// The operation id.
    pub operation_id: String,
    /// The HTTP method.
    pub method: String,
    /// The path, parameters percent-encoded.
    pub path: String,
    /// The query string without `?` (empty when none).
    pub query: String,
    /// Headers in order.
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// The idempotency key used (given or derived), on operations that take one.
    pub idempotency_key: Option<String>,
    /// Whether the key is in `headers`, i.e. actually sent. Reporting `idem` operations send it
    /// only when the host names the header (the spec does not show its name); pass this to the
    /// retry decision ([`crate::retry::RetryState::idempotency_key_sent`]): without it, a
    /// timed-out create must be reconciled, not repeated.
    pub idempotency_key_sent: bool,
}

/// Headers whose values are credentials: never printed.
pub const CREDENTIAL_HEADERS: [&str; 3] = ["Authorization", "X-Api-Key", "X-Api-Secret"];

impl fmt::Debug for RequestDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let secret = CREDENTIAL_HEADERS.iter().any(|s| n.eq_ignore_ascii_case(s));
                (n.as_str(), if secret { "[redacted]" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("RequestDescriptor")
            .field("operation_id", &self.operation_id)
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query)
            .field("headers", &headers)
            .field("body_bytes", &self.body.as_ref().map(Vec::len))
            .field("idempotency_key", &self.idempotency_key)
            .field("idempotency_key_sent", &self.idempotency_key_sent)
            .finish()
    }
}

impl RequestDescriptor {
    /// Path and query, ready to append to the base URL.
    pub fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, self.query)
        }
    }

    /// The full URL under `base` (for example `https://reports.example`; trailing slashes are
    /// dropped, so `base` may end with one).
    pub fn url(&self, base: &str) -> String {
        join_url(base, &self.path_and_query())
    }
}

/// A base URL (trailing slashes dropped) joined to a path and query: what
/// [`RequestDescriptor::url`] returns, for hosts that keep only the path and query.
pub fn join_url(base: &str, path_and_query: &str) -> String {
    format!("{}{}", base.trim_end_matches('/'), path_and_query)
}

pub(crate) fn is_uuid(s: &str) -> bool {
    s.len() == 36 && uuid::Uuid::try_parse(s).is_ok()
}

fn invalid(parameter: impl Into<String>, reason: impl Into<String>) -> RequestError {
    RequestError::new("invalid_parameter", parameter, reason)
}

fn missing(parameter: impl Into<String>, reason: impl Into<String>) -> RequestError {
    RequestError::new("missing_parameter", parameter, reason)
}

fn unknown(parameter: impl Into<String>, reason: impl Into<String>) -> RequestError {
    RequestError::new("unknown_parameter", parameter, reason)
}

/// A header value the host supplies: visible ASCII only, so nothing can inject a header.
fn header_value(parameter: &str, value: &str, max: usize) -> Result<(), RequestError> {
    if value.is_empty() || value.len() > max || !value.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err(invalid(
            parameter,
            format!(
                "must be 1 to {max} visible ASCII characters (no spaces or control characters)"
            ),
        ));
    }
    Ok(())
}

/// Builds the request for `operation_id`. Promises: path parameters percent-encoded; query
/// parameters checked against the spec (required members, `limit` 1–100, `key` 1–160,
/// `cursor` 1–2048 or a UUID, UUID filters) and unknown ones refused where the spec lists them
/// all; `Accept: application/json`; bearer, `X-Tenant-ID` (UUID) and `X-User-Id` (UUID) where
/// the operation takes them; idempotency keys on the operations that declare one (given, or
/// derived with [`dedup::idempotency_key`] from `request_id`, or random from `key_random`: one
/// key per logical request, never derived from the body; a `request_id` is ignored by the
/// operations that take no key, an `idempotency_key` refused), sent when the header is known
/// ([`RequestDescriptor::idempotency_key_sent`]); webhook `endpoint_url` HTTPS without user-info or a literal private, loopback or
/// link-local address. Tokens never go into the query.
pub fn build_request(
    operation_id: &str,
    params: &RequestParams,
) -> Result<RequestDescriptor, RequestError> {
    let op = catalog::operation(operation_id)
        .map_err(|e| RequestError::new("unknown_operation", "operation_id", e.reason))?;
    match op.auth {
        Auth::BasicClient => {
            return Err(invalid(
                "operation_id",
                "the client-credential exchange is built by build_token_request (it takes the client id and secret)",
            ))
        }
        Auth::ApiKey => {
            return Err(invalid(
                "operation_id",
                "the enterprise token exchange is built by build_enterprise_token_request",
            ))
        }
        _ => {}
    }
    let path = render_path(op, &params.path)?;
    let query = render_query(op, params)?;
    let body = check_body(op, params.body.as_deref())?;

    // An export download returns the artifact itself, in a format the spec does not show (CSV
    // or another): ask for anything; every other route answers JSON (enterprise: "Send
    // Accept: application/json").
    let accept = if op.path.ends_with("/download") {
        "*/*"
    } else {
        "application/json"
    };
    let mut headers = vec![("Accept".to_owned(), accept.to_owned())];
    if op.path.ends_with("/download") {
        // The artifact is checked whole by its Content-Length, the length of the bytes sent;
        // an HTTP library that asked for gzip would hand back more bytes than that.
        headers.push(("Accept-Encoding".to_owned(), "identity".to_owned()));
    }
    match (op.auth, &params.token) {
        (Auth::Bearer, Some(t)) if t.api() != op.api => {
            return Err(invalid(
                "token",
                format!(
                    "this is a token of the {} API; {} is an operation of the {} API, which takes the token from {}",
                    t.api().as_str(),
                    op.id,
                    op.api.as_str(),
                    match op.api {
                        Api::Reports => "the reporting token exchange (parse_token_response)",
                        Api::Enterprise => "the enterprise token exchange (parse_enterprise_token_response)",
                    }
                ),
            ))
        }
        (Auth::Bearer, Some(t)) => {
            header_value("token", t.value(), 8192)?;
            headers.push(("Authorization".to_owned(), format!("Bearer {}", t.value())));
        }
        (Auth::Bearer, None) => {
            return Err(missing("token", "this operation needs a bearer token"))
        }
        (_, Some(_)) => {
            return Err(unknown(
                "token",
                format!("{} routes do not take a bearer token", op.auth.as_str()),
            ))
        }
        (_, None) => {}
    }
    // A reporting token remembers its tenant: it is sent when none is given, and a different
    // one is refused (the spec: a tenant reference from one authenticated context must never
    // be passed into another).
    let token_tenant = params.token.as_ref().and_then(BearerToken::tenant_id);
    if op.tenant_header && params.token.is_some() && token_tenant.is_none() {
        return Err(invalid(
            "token",
            "a reporting token must be bound to the tenant it was obtained for (a token from parse_token_response is; one restored from a cache: BearerToken.reports(value, tenant_id)): it is sent only with that tenant's X-Tenant-ID",
        ));
    }
    if let (Some(given), Some(bound)) = (params.tenant_id.as_deref(), token_tenant) {
        if !given.eq_ignore_ascii_case(bound) {
            return Err(invalid(
                "tenant_id",
                format!("is {given:?}, but the token was obtained for tenant {bound:?}; a tenant reference from one authenticated context must never be passed into another: exchange credentials for that tenant"),
            ));
        }
    }
    let tenant_id = params
        .tenant_id
        .clone()
        .or_else(|| token_tenant.filter(|_| op.tenant_header).map(str::to_owned));
    match (op.tenant_header, &tenant_id) {
        (true, Some(t)) if is_uuid(t) => headers.push(("X-Tenant-ID".to_owned(), t.clone())),
        (true, Some(_)) => {
            return Err(invalid(
                "tenant_id",
                "must be the tenant's UUID (X-Tenant-ID)",
            ))
        }
        (true, None) => {
            return Err(missing(
                "tenant_id",
                "machine routes send X-Tenant-ID (a UUID issued with the client credentials)",
            ))
        }
        (false, Some(_)) => {
            return Err(unknown(
                "tenant_id",
                "only reporting machine routes send X-Tenant-ID",
            ))
        }
        (false, None) => {}
    }
    match (op.user_header, &params.user_id) {
        (true, Some(u)) if is_uuid(u) => headers.push(("X-User-Id".to_owned(), u.clone())),
        (true, Some(_)) => return Err(invalid("user_id", "must be a user UUID (X-User-Id)")),
        (false, Some(_)) => {
            return Err(unknown(
                "user_id",
                "only enterprise protected routes take X-User-Id",
            ))
        }
        _ => {}
    }

    let mut key_sent = false;
    let idempotency_key = match op.idempotency {
        Idempotency::None => {
            // A request_id names the logical request for any operation (a generic wrapper need
            // not look idempotency up first); only a key itself is a mistake here.
            if params.idempotency_key.is_some() {
                return Err(unknown(
                    "idempotency_key",
                    "this operation takes no idempotency key",
                ));
            }
            None
        }
        Idempotency::Header | Idempotency::Key => {
            let key = match (&params.idempotency_key, &params.request_id, params.key_random) {
                (Some(k), _, _) => {
                    header_value("idempotency_key", k, 255)?;
                    k.clone()
                }
                (None, Some(request_id), _) => {
                    let namespace = params
                        .key_namespace
                        .as_deref()
                        .or(tenant_id.as_deref())
                        .ok_or_else(|| {
                            missing(
                                "key_namespace",
                                "a key derived from request_id is scoped to a tenant or organization: give key_namespace (or tenant_id)",
                            )
                        })?;
                    dedup::idempotency_key(namespace, &op.id, request_id)
                        .map_err(|e| invalid(e.name, e.reason))?
                }
                (None, None, Some(random)) => dedup::random_idempotency_key(random),
                (None, None, None) => {
                    return Err(missing(
                        "idempotency_key",
                        "this operation takes an idempotency key: give one, a request_id, or 16 random bytes (key_random)",
                    ))
                }
            };
            let header = match (op.idempotency, &params.idempotency_header) {
                (Idempotency::Header, None) => Some("Idempotency-Key".to_owned()),
                (Idempotency::Header, Some(_)) => {
                    return Err(unknown(
                        "idempotency_header",
                        "this operation's header is Idempotency-Key",
                    ))
                }
                (_, Some(h)) => {
                    if h.is_empty() || !h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                        return Err(invalid(
                            "idempotency_header",
                            "must be a header name (letters, digits, '-')",
                        ));
                    }
                    Some(h.clone())
                }
                (_, None) => None,
            };
            if let Some(h) = header {
                headers.push((h, key.clone()));
                key_sent = true;
            }
            Some(key)
        }
    };
    if body.is_some() {
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
    }
    Ok(RequestDescriptor {
        operation_id: op.id.clone(),
        method: op.method.clone(),
        path,
        query,
        headers,
        body: body.map(<[u8]>::to_vec),
        idempotency_key,
        idempotency_key_sent: key_sent,
    })
}

fn render_path(op: &Operation, given: &[(String, String)]) -> Result<String, RequestError> {
    let mut out = String::with_capacity(op.path.len() + 40);
    for (i, segment) in op.path.split('{').enumerate() {
        if i == 0 {
            out.push_str(segment);
            continue;
        }
        let (name, rest) = segment.split_once('}').unwrap_or((segment, ""));
        // `{+resource}`: a canonical resource URL from an event, checked to be a path under the
        // enterprise API (the token goes nowhere else), then sent as named.
        if let Some(name) = name.strip_prefix('+') {
            let value = given
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
                .ok_or_else(|| {
                    missing(
                        format!("path.{name}"),
                        "the resource URL of the event (its resource.url, a path under /api/v1/)",
                    )
                })?;
            let checked = crate::webhook::resource_path(value).map_err(|e| {
                RequestError::new(
                    "invalid_resource_url",
                    format!("path.{name}"),
                    e.to_string(),
                )
            })?;
            let under = checked
                .strip_prefix(op.path.split('{').next().unwrap_or(""))
                .unwrap_or(checked);
            out.extend(percent_encoding::utf8_percent_encode(under, RESOURCE_PATH));
            out.push_str(rest);
            continue;
        }
        let mut values = given.iter().filter(|(n, _)| n == name);
        let value = values.next().map(|(_, v)| v).ok_or_else(|| {
            missing(
                format!("path.{name}"),
                format!("the path {} needs it", op.path),
            )
        })?;
        if values.next().is_some() {
            return Err(invalid(format!("path.{name}"), "given twice"));
        }
        if value.is_empty() || value.len() > 1024 {
            return Err(invalid(
                format!("path.{name}"),
                "must be 1 to 1024 characters",
            ));
        }
        // `.` and `..` are left as they are by percent-encoding, and an HTTP client normalises
        // `/exports/../cancel` to `/cancel`: another route than the one named.
        if value == "." || value == ".." {
            return Err(invalid(
                format!("path.{name}"),
                format!("is {value:?}, a dot segment: HTTP clients would resolve it to another route than {}", op.path),
            ));
        }
        out.extend(utf8_percent_encode(value, COMPONENT));
        out.push_str(rest);
    }
    if let Some((extra, _)) = given.iter().find(|(n, _)| {
        !op.path.contains(&format!("{{{n}}}")) && !op.path.contains(&format!("{{+{n}}}"))
    }) {
        return Err(unknown(
            format!("path.{extra}"),
            format!("the path {} has no such parameter", op.path),
        ));
    }
    Ok(out)
}

const CREDENTIAL_NAMES: [&str; 6] = [
    "token",
    "access_token",
    "bearer",
    "api_key",
    "api_secret",
    "client_secret",
];

fn render_query(op: &Operation, params: &RequestParams) -> Result<String, RequestError> {
    let given = &params.query;
    for (i, (name, value)) in given.iter().enumerate() {
        if given.iter().skip(i + 1).any(|(n, _)| n == name) {
            return Err(invalid(name.clone(), "given twice"));
        }
        if CREDENTIAL_NAMES
            .iter()
            .any(|c| name.eq_ignore_ascii_case(c))
            || params
                .token
                .as_ref()
                .is_some_and(|t| !t.value().is_empty() && value.contains(t.value()))
        {
            return Err(invalid(name.clone(), "credentials never go into a query string; the token is sent as Authorization: Bearer"));
        }
        match op.query.iter().find(|p| p.name == *name) {
            Some(p) => check_query(&p.name, p.kind, value)?,
            None if op.open_query => {
                if name.is_empty() || value.is_empty() {
                    return Err(invalid(name.clone(), "names and values must not be empty"));
                }
            }
            None if op.query.is_empty() => {
                return Err(unknown(
                    name.clone(),
                    format!("{} takes no query parameters", op.id),
                ))
            }
            None => {
                let names: Vec<&str> = op.query.iter().map(|p| p.name.as_str()).collect();
                return Err(unknown(
                    name.clone(),
                    format!("{} takes {}", op.id, names.join(", ")),
                ));
            }
        }
    }
    if let Some(p) = op
        .query
        .iter()
        .find(|p| p.required && !given.iter().any(|(n, _)| *n == p.name))
    {
        return Err(missing(p.name.as_str(), format!("{} requires it", op.id)));
    }
    Ok(given
        .iter()
        .map(|(n, v)| {
            format!(
                "{}={}",
                utf8_percent_encode(n, COMPONENT),
                utf8_percent_encode(v, COMPONENT)
            )
        })
        .collect::<Vec<_>>()
        .join("&"))
}

fn check_query(name: &str, kind: QueryKind, value: &str) -> Result<(), RequestError> {
    let chars = value.chars().count();
    let ok = match kind {
        QueryKind::Uuid => is_uuid(value),
        QueryKind::Limit => {
            value.parse::<u32>().is_ok_and(|n| (1..=100).contains(&n)) && !value.starts_with('+')
        }
        QueryKind::Key => (1..=160).contains(&chars),
        QueryKind::Cursor => (1..=2048).contains(&chars),
        QueryKind::Text => !value.is_empty() && chars <= 2048,
        QueryKind::Positive => {
            value.parse::<u32>().is_ok_and(|n| n >= 1) && !value.starts_with('+')
        }
        QueryKind::Date => crate::timestamp::is_calendar_date(value),
        QueryKind::Sort => value == "asc" || value == "desc",
    };
    if ok {
        return Ok(());
    }
    let rule = match kind {
        QueryKind::Uuid => "must be a UUID",
        QueryKind::Limit => "must be an integer from 1 to 100 (default 50)",
        QueryKind::Key => "must be 1 to 160 characters",
        QueryKind::Cursor => "must be 1 to 2048 characters",
        QueryKind::Text => "must be a non-empty string",
        QueryKind::Positive => "must be a positive integer",
        QueryKind::Date => "must be a date YYYY-MM-DD",
        QueryKind::Sort => "must be asc or desc",
    };
    Err(invalid(name, rule))
}

fn check_body<'a>(
    op: &Operation,
    body: Option<&'a [u8]>,
) -> Result<Option<&'a [u8]>, RequestError> {
    let body = match (op.body, body) {
        (BodyRule::None, Some(_)) => {
            return Err(unknown("body", format!("{} takes no body", op.id)))
        }
        (BodyRule::Required, None) => {
            return Err(missing("body", format!("{} needs a JSON body", op.id)))
        }
        (_, None) => return Ok(None),
        (_, Some(b)) => b,
    };
    if body.len() > MAX_BODY_BYTES {
        return Err(invalid(
            "body",
            format!("is larger than {MAX_BODY_BYTES} bytes"),
        ));
    }
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| invalid("body", "must be JSON (UTF-8)"))?;
    if matches!(
        op.id.as_str(),
        "createEnterpriseWebhook" | "updateEnterpriseWebhook"
    ) {
        match value.get("endpoint_url") {
            Some(serde_json::Value::String(url)) => check_endpoint_url(url)?,
            Some(_) => return Err(invalid("body.endpoint_url", "must be a string")),
            None if op.id == "createEnterpriseWebhook" => {
                return Err(missing(
                    "body.endpoint_url",
                    "a webhook subscription needs its HTTPS endpoint",
                ))
            }
            None => {}
        }
    }
    Ok(Some(body))
}

/// Checks a webhook endpoint: `https`, no user-info, and a host that is not a literal private,
/// loopback, link-local, unspecified or otherwise non-public address (nor `localhost`).
/// DNS names are not resolved (no I/O); the service checks where they resolve.
pub fn check_endpoint_url(url: &str) -> Result<(), RequestError> {
    let bad = |reason: &str| RequestError::new("invalid_endpoint_url", "body.endpoint_url", reason);
    if url.len() > 2048 || url.chars().any(|c| c.is_control() || c == ' ') {
        return Err(bad(
            "must be at most 2048 characters without spaces or control characters",
        ));
    }
    let rest = url
        .get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))
        .and_then(|_| url.get(8..))
        .ok_or_else(|| bad("must be an https:// URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(bad("must not contain user-info (user:password@)"));
    }
    // A port, when given, is 1 to 65535 (RFC 3986 allows an empty one: the default).
    let check_port = |port: &str| -> Result<(), RequestError> {
        if port.is_empty()
            || (port.len() <= 5
                && port.bytes().all(|b| b.is_ascii_digit())
                && port.parse::<u32>().is_ok_and(|p| (1..=65_535).contains(&p)))
        {
            Ok(())
        } else {
            Err(bad("has an invalid port (1 to 65535)"))
        }
    };
    let host = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("has an unterminated IPv6 literal"))?;
        match after.strip_prefix(':') {
            Some(port) => check_port(port)?,
            None if after.is_empty() => {}
            None => return Err(bad("has an invalid port (1 to 65535)")),
        }
        let ip: Ipv6Addr = addr
            .parse()
            .map_err(|_| bad("has an invalid IPv6 literal"))?;
        if !public_v6(ip) {
            return Err(bad(
                "must point at a globally reachable address (not private, loopback, link-local or another IANA special-purpose block)",
            ));
        }
        return Ok(());
    } else {
        match authority.rsplit_once(':') {
            Some((h, port)) => {
                check_port(port)?;
                h
            }
            None => authority,
        }
    };
    if host.is_empty() {
        return Err(bad("has no host"));
    }
    // An internationalised name is checked as the ASCII name it resolves as (IDNA, UTS 46): so
    // `https://bücher.example/` is accepted like `xn--bcher-kva.example`, and a name that maps
    // to a refused one (fullwidth `ｌｏｃａｌｈｏｓｔ`, `１２７．０．０．１`) is refused like it.
    let ascii;
    let host = if host.is_ascii() && !host.to_ascii_lowercase().contains("xn--") {
        host
    } else {
        ascii = idna::domain_to_ascii(host)
            .map_err(|_| bad("has an invalid internationalised host name (IDNA)"))?;
        ascii.as_str()
    };
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        if !public_v4(ip) {
            return Err(bad(
                "must point at a globally reachable address (not private, loopback, link-local or another IANA special-purpose block)",
            ));
        }
        return Ok(());
    }
    // One trailing dot is the fully qualified form of the same name (`localhost.`).
    let lower = host.to_ascii_lowercase();
    let lower = lower.strip_suffix('.').unwrap_or(&lower).to_owned();
    if !lower
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        || lower.split('.').any(str::is_empty)
    {
        return Err(bad("has an invalid host name"));
    }
    if !lower.bytes().any(|b| b.is_ascii_alphabetic())
        || lower.starts_with("0x")
        || lower.contains(".0x")
    {
        // 2130706433, 0177.1, 0x7f.1: numeric forms some resolvers read as addresses.
        return Err(bad(
            "must not use a numeric host form other than a dotted IPv4 address",
        ));
    }
    let local = [
        "localhost",
        "localdomain",
        "local",
        "internal",
        "home.arpa",
        "test",
        "invalid",
    ];
    if local
        .iter()
        .any(|l| lower == *l || lower.ends_with(&format!(".{l}")))
    {
        return Err(bad("must not point at a local host name"));
    }
    Ok(())
}

/// Checks the base URL a client will send every request to, when the client is built, so that a
/// mistake fails at once instead of being retried as a network fault. Promises `Ok` with the URL
/// less its trailing `/` only for:
/// - the scheme `https` (any case), or `http` to a loopback host (`localhost` or a name under
///   it, `127.0.0.0/8`, `[::1]`); `http` to any other host only with `allow_insecure_http`,
///   since the client's credentials (API key and secret, client secret, bearer token) would
///   travel in clear;
/// - a host, an optional port of 1 to 65535, and no user-info (`user:password@`);
/// - no query or fragment, and a path without an `api` segment: every operation's path starts
///   with the API prefix (`/api/platform/v1/…`, `/api/v1/…`), which the client adds itself.
///
/// Anything else is `invalid_argument` naming `base_url`, with what is wrong and what is
/// accepted; the message never repeats user-info.
pub fn check_base_url(
    base_url: &str,
    allow_insecure_http: bool,
) -> Result<String, crate::ArgumentError> {
    let bad = |reason: String| crate::ArgumentError::new("base_url", reason);
    let example = "an origin such as https://api.example.com";
    if base_url.is_empty()
        || base_url.len() > 2048
        || base_url
            .chars()
            .any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(bad(format!(
            "must be 1 to 2048 characters without spaces or control characters: {example}"
        )));
    }
    let Some((scheme, rest)) = base_url.split_once("://") else {
        return Err(bad(format!(
            "has no scheme: write it with https://, {example}"
        )));
    };
    let insecure = if scheme.eq_ignore_ascii_case("https") {
        false
    } else if scheme.eq_ignore_ascii_case("http") {
        true
    } else {
        let shown: String = scheme.chars().take(24).collect();
        return Err(bad(format!(
            "has the scheme `{shown}`: the client speaks `https` (and plain `http` to a loopback host), {example}"
        )));
    };
    if rest.contains(['?', '#']) {
        return Err(bad(format!("must not have a query or fragment: {example}")));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(bad(
            "must not contain user-info (user:password@): the client sends its credentials in headers"
                .to_owned(),
        ));
    }
    // The host and the port: `[v6]:port`, `host:port`, or either without a port.
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("has an unterminated IPv6 literal".to_owned()))?;
        if addr.parse::<Ipv6Addr>().is_err() {
            return Err(bad("has an invalid IPv6 literal".to_owned()));
        }
        match after.strip_prefix(':') {
            Some(port) => (addr, Some(port)),
            None if after.is_empty() => (addr, None),
            None => return Err(bad("has an invalid port (1 to 65535)".to_owned())),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, port)) => (h, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(bad(format!("has no host: {example}")));
    }
    if let Some(port) = port {
        let valid = port.len() <= 5
            && !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|p| (1..=65_535).contains(&p));
        if !valid {
            return Err(bad("has an invalid port (1 to 65535)".to_owned()));
        }
    }
    if insecure && !allow_insecure_http && !loopback_host(host) {
        let shown: String = host.chars().take(255).collect();
        return Err(bad(format!(
            "uses plain `http` to `{shown}`, which would send the client's credentials in clear: use https:// (plain http is accepted for a loopback host, or with allow_insecure_http)"
        )));
    }
    if path
        .split('/')
        .any(|segment| segment.eq_ignore_ascii_case("api"))
    {
        return Err(bad(format!(
            "includes the API prefix (`/api/…`), which the client adds to every operation's path: give {example}"
        )));
    }
    Ok(base_url.trim_end_matches('/').to_owned())
}

/// Whether `host` (without brackets or port) is a loopback host: `localhost` or a name under
/// it (RFC 6761), an address of `127.0.0.0/8`, or `::1`.
fn loopback_host(host: &str) -> bool {
    let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
        || name.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether an IPv4 address is globally reachable: outside every block of the IANA IPv4
/// Special-Purpose Address Registry that is not (RFC 6890 and updates), and not multicast or
/// broadcast.
fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_private() // 10/8, 172.16/12, 192.168/16
        || ip.is_loopback() // 127/8
        || ip.is_link_local() // 169.254/16
        || ip.is_documentation() // 192.0.2/24, 198.51.100/24, 203.0.113/24
        || ip.is_multicast() // 224/4
        || a == 0 // "this network"
        || (a == 100 && (64..=127).contains(&b)) // shared address space (RFC 6598)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments (RFC 6890)
        || (a == 192 && b == 88 && c == 99) // deprecated 6to4 relay anycast (RFC 7526)
        || (a == 198 && (b == 18 || b == 19)) // benchmarking (RFC 2544)
        || a >= 240) // reserved (RFC 1112), and the limited broadcast address
}

/// Whether an IPv6 address is globally reachable: inside global unicast (2000::/3, the only
/// space IANA allocates for it; everything in ::/8 but the two forms below — unspecified,
/// loopback, IPv4-compatible, IPv4-translated `::ffff:0:a.b.c.d`, `::1:0:0:1` — is reserved)
/// and outside every block of the IANA IPv6 Special-Purpose Address Registry that is not. An
/// address that embeds an IPv4 one as the registry routes it (IPv4-mapped, NAT64 well-known
/// prefix) is judged by the IPv4 address.
fn public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let [s0, s1, s2, _, s4, s5, s6, s7] = s;
    let embedded = Ipv4Addr::new((s6 >> 8) as u8, s6 as u8, (s7 >> 8) as u8, s7 as u8);
    if s[..5] == [0, 0, 0, 0, 0] && s5 == 0xffff {
        return public_v4(embedded); // IPv4-mapped
    }
    if [s0, s1, s2, s[3], s4, s5] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return public_v4(embedded); // NAT64 well-known prefix (RFC 6052)
    }
    let global_unicast = (s0 & 0xe000) == 0x2000; // 2000::/3
                                                  // 2001::/23 (IETF protocol assignments, Teredo) and 2001:db8::/32 (documentation), 6to4
                                                  // (2002::/16, deprecated, embeds an IPv4 address), documentation 3fff::/20
    let special =
        (s0 == 0x2001 && (s1 < 0x200 || s1 == 0x0db8)) || s0 == 0x2002 || (s0 & 0xfff0) == 0x3ff0;
    global_unicast && !special
}

/// Seconds a client waits for a connection to be made (TCP and TLS) when its user sets none.
pub const DEFAULT_CONNECT_TIMEOUT_SECONDS: f64 = 10.0;
/// Seconds a client waits for the response's headers, and then between two pieces of its
/// body, when its user sets none.
pub const DEFAULT_READ_TIMEOUT_SECONDS: f64 = 30.0;
/// The longest timeout a client accepts, in seconds (a day).
pub const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;

/// How long a client waits for the network, each bound in seconds (see [`client_timeouts`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct Timeouts {
    /// To make the connection (TCP and TLS).
    pub connect_seconds: f64,
    /// For the response's headers once the request is sent, then between two pieces of its
    /// body (an idle bound: a large artifact that keeps arriving never times out).
    pub read_seconds: f64,
}

/// A client's timeouts, checked when the client is built: each one given must be finite
/// seconds, more than 0 and at most [`MAX_TIMEOUT_SECONDS`]; one not given is the core's
/// default ([`DEFAULT_CONNECT_TIMEOUT_SECONDS`], [`DEFAULT_READ_TIMEOUT_SECONDS`]). Promises
/// `invalid_argument` naming `connect_timeout` or `read_timeout` otherwise. Every binding's
/// client takes its defaults from here, so they are the same in every language.
pub fn client_timeouts(
    connect_seconds: Option<f64>,
    read_seconds: Option<f64>,
) -> Result<Timeouts, crate::ArgumentError> {
    let check = |name: &'static str, v: Option<f64>, default: f64| match v {
        None => Ok(default),
        Some(v) if v.is_finite() && v > 0.0 && v <= MAX_TIMEOUT_SECONDS => Ok(v),
        Some(v) => Err(crate::ArgumentError::new(
            name,
            format!(
                "must be seconds more than 0 and at most {}, got {}",
                crate::text::Num(MAX_TIMEOUT_SECONDS),
                crate::text::Num(v)
            ),
        )),
    };
    Ok(Timeouts {
        connect_seconds: check(
            "connect_timeout",
            connect_seconds,
            DEFAULT_CONNECT_TIMEOUT_SECONDS,
        )?,
        read_seconds: check("read_timeout", read_seconds, DEFAULT_READ_TIMEOUT_SECONDS)?,
    })
}
