//! Catalog, requests, error bodies and tokens for Kotlin: conversions only.

use crate::Result;
use royaltykit::api_error::{parse_api_error as parse, ApiError as CoreApiError};
use royaltykit::catalog::{self, Api};
use royaltykit::request;
use royaltykit::token;
use royaltykit_host::now_or_clock;
use std::collections::HashMap;
use std::sync::Arc;

/// A name and a value (query parameters, headers), in order.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Param {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
}

/// A declared query parameter of an operation.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct QueryParamSpec {
    /// Its name.
    pub name: String,
    /// uuid, limit, key, cursor, text, positive, date or sort.
    pub kind: String,
    /// Whether it must be sent.
    pub required: bool,
}

/// One operation of either API, as data.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Operation {
    /// operationId or stable name.
    pub id: String,
    /// reports or enterprise.
    pub api: String,
    /// machine, human or enterprise.
    pub surface: String,
    /// HTTP method.
    pub method: String,
    /// Path template.
    pub path: String,
    /// none, basic_client, bearer, session or api_key.
    pub auth: String,
    /// Scope shown in the spec.
    pub scope: Option<String>,
    /// none, key (name not shown) or header (Idempotency-Key).
    pub idempotency: String,
    /// Declares a CSRF token.
    pub csrf: bool,
    /// none, recent, recent_mfa or recent_non_recovery.
    pub step_up: String,
    /// Sends X-Tenant-ID.
    pub tenant_header: bool,
    /// May send X-User-Id.
    pub user_header: bool,
    /// none, optional or required.
    pub body: String,
    /// Success statuses.
    pub success: Vec<u16>,
    /// Declared error statuses; null where the spec declares none.
    pub errors: Option<Vec<u16>>,
    /// Declared query parameters.
    pub query: Vec<QueryParamSpec>,
    /// Other query parameters allowed.
    pub open_query: bool,
    /// Response sent with Cache-Control: no-store.
    pub no_store: bool,
    /// Retry class.
    pub retry_class: String,
}

fn to_operation(o: &catalog::Operation) -> Operation {
    Operation {
        id: o.id.clone(),
        api: o.api.as_str().to_owned(),
        surface: o.surface.as_str().to_owned(),
        method: o.method.clone(),
        path: o.path.clone(),
        auth: o.auth.as_str().to_owned(),
        scope: o.scope.clone(),
        idempotency: match o.idempotency {
            catalog::Idempotency::None => "none",
            catalog::Idempotency::KeyUnnamed => "key",
            catalog::Idempotency::Header => "header",
        }
        .to_owned(),
        csrf: o.csrf,
        step_up: o.step_up.as_str().to_owned(),
        tenant_header: o.tenant_header,
        user_header: o.user_header,
        body: o.body.as_str().to_owned(),
        success: o.success.to_vec(),
        errors: o.errors.clone(),
        query: o
            .query
            .iter()
            .map(|q| QueryParamSpec {
                name: q.name.clone(),
                kind: q.kind.as_str().to_owned(),
                required: q.required,
            })
            .collect(),
        open_query: o.open_query,
        no_store: o.no_store,
        retry_class: o.retry_class.as_str().to_owned(),
    }
}

/// Every operation of both APIs.
#[uniffi::export]
pub fn operations() -> Vec<Operation> {
    catalog::operations().iter().map(to_operation).collect()
}

/// One operation by id.
#[uniffi::export]
pub fn operation(id: String) -> Result<Operation> {
    Ok(to_operation(catalog::operation(&id)?))
}

/// The parameters of `buildRequest`.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RequestParams {
    /// Path parameters by name.
    #[uniffi(default)]
    pub path: HashMap<String, String>,
    /// Query parameters, in order.
    #[uniffi(default)]
    pub query: Vec<Param>,
    /// The JSON body.
    #[uniffi(default = None)]
    pub body: Option<Vec<u8>>,
    /// Bearer token.
    #[uniffi(default = None)]
    pub token: Option<String>,
    /// X-Tenant-ID.
    #[uniffi(default = None)]
    pub tenant_id: Option<String>,
    /// X-User-Id.
    #[uniffi(default = None)]
    pub user_id: Option<String>,
    /// Idempotency key (derived when null).
    #[uniffi(default = None)]
    pub idempotency_key: Option<String>,
    /// Header for the key on reporting idem routes.
    #[uniffi(default = None)]
    pub idempotency_header: Option<String>,
}

/// A request to send with your own client; `toString` hides nothing secret because it shows
/// nothing (read the parts through the methods).
#[derive(uniffi::Object)]
pub struct RequestDescriptor(request::RequestDescriptor);

#[uniffi::export]
impl RequestDescriptor {
    /// The operation id.
    pub fn operation_id(&self) -> String {
        self.0.operation_id.to_owned()
    }
    /// The HTTP method.
    pub fn method(&self) -> String {
        self.0.method.to_owned()
    }
    /// The encoded path.
    pub fn path(&self) -> String {
        self.0.path.clone()
    }
    /// The query string (no `?`).
    pub fn query(&self) -> String {
        self.0.query.clone()
    }
    /// Path and query.
    pub fn path_and_query(&self) -> String {
        self.0.path_and_query()
    }
    /// The URL under `base`.
    pub fn url(&self, base: String) -> String {
        format!("{}{}", base.trim_end_matches('/'), self.0.path_and_query())
    }
    /// Headers, in order (credentials included: this is what to send).
    pub fn headers(&self) -> Vec<Param> {
        self.0
            .headers
            .iter()
            .map(|(n, v)| Param {
                name: n.clone(),
                value: v.clone(),
            })
            .collect()
    }
    /// The body.
    pub fn body(&self) -> Option<Vec<u8>> {
        self.0.body.clone()
    }
    /// The idempotency key used.
    pub fn idempotency_key(&self) -> Option<String> {
        self.0.idempotency_key.clone()
    }
    /// A description with credentials redacted.
    pub fn describe(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// Builds the request for an operation.
#[uniffi::export]
pub fn build_request(
    operation_id: String,
    params: RequestParams,
) -> Result<Arc<RequestDescriptor>> {
    let p = request::RequestParams {
        path: params.path.into_iter().collect(),
        query: params
            .query
            .into_iter()
            .map(|q| (q.name, q.value))
            .collect(),
        body: params.body,
        token: params.token,
        tenant_id: params.tenant_id,
        user_id: params.user_id,
        idempotency_key: params.idempotency_key,
        idempotency_header: params.idempotency_header,
    };
    Ok(Arc::new(RequestDescriptor(request::build_request(
        &operation_id,
        &p,
    )?)))
}

/// A parsed API error response.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ApiError {
    /// reports or enterprise.
    pub api: String,
    /// HTTP status.
    pub status: u16,
    /// bad_request, unauthenticated, forbidden, not_found, conflict, validation, rate_limited,
    /// unavailable, timeout, server_error or other.
    pub kind: String,
    /// A specific reason when the body says more.
    pub reason: Option<String>,
    /// A message for people.
    pub message: String,
    /// The body's own code (the error's own `code` is always `api_error`).
    pub body_code: Option<String>,
    /// Field errors.
    pub field_errors: HashMap<String, Vec<String>>,
    /// Retry-After in seconds.
    pub retry_after_seconds: Option<u64>,
    /// Whether the operation declares the status (null: unknown).
    pub declared: Option<bool>,
    /// The operation id given.
    pub operation_id: Option<String>,
    /// The body (bounded).
    pub raw_body: String,
}

impl From<CoreApiError> for ApiError {
    fn from(e: CoreApiError) -> Self {
        Self {
            api: e.api.as_str().to_owned(),
            status: e.status,
            kind: e.kind.as_str().to_owned(),
            reason: e.reason,
            message: e.message,
            body_code: e.body_code,
            field_errors: e.field_errors.into_iter().collect(),
            retry_after_seconds: e.retry_after_seconds,
            declared: e.declared,
            operation_id: e.operation_id,
            raw_body: e.raw_body,
        }
    }
}

/// Parses an error response (returned, not thrown).
#[uniffi::export(default(operation_id = None, now = None))]
pub fn parse_api_error(
    api: String,
    status: i64,
    headers: HashMap<String, String>,
    body: Vec<u8>,
    operation_id: Option<String>,
    now: Option<i64>,
) -> Result<ApiError> {
    let api = Api::parse(&api)?;
    Ok(parse(
        api,
        status,
        &headers,
        &body,
        operation_id.as_deref(),
        now_or_clock(now),
    )?
    .into())
}

/// A reporting access token; `toString` does not show it.
#[derive(uniffi::Object)]
pub struct Token(token::Token);

#[uniffi::export]
impl Token {
    /// The bearer value.
    pub fn access_token(&self) -> String {
        self.0.access_token.clone()
    }
    /// Bearer.
    pub fn token_type(&self) -> String {
        self.0.token_type.clone()
    }
    /// Lifetime.
    pub fn expires_in(&self) -> i64 {
        self.0.expires_in
    }
    /// Expiry, Unix seconds.
    pub fn expires_at(&self) -> i64 {
        self.0.expires_at
    }
    /// When to refresh.
    pub fn refresh_at(&self) -> i64 {
        self.0.refresh_at
    }
    /// Granted scopes.
    pub fn scopes(&self) -> Vec<String> {
        self.0.scopes.clone()
    }
    /// Requested but not granted.
    pub fn missing_scopes(&self) -> Vec<String> {
        self.0.missing_scopes.clone()
    }
    /// Contract deviations.
    pub fn warnings(&self) -> Vec<String> {
        self.0.warnings.clone()
    }
}

/// An enterprise token; `toString` does not show it.
#[derive(uniffi::Object)]
pub struct EnterpriseToken(token::EnterpriseToken);

#[uniffi::export]
impl EnterpriseToken {
    /// The bearer value.
    pub fn token(&self) -> String {
        self.0.token.clone()
    }
    /// Expiry, or null for none.
    pub fn expires_at(&self) -> Option<i64> {
        self.0.expires_at
    }
    /// When to refresh, or null.
    pub fn refresh_at(&self) -> Option<i64> {
        self.0.refresh_at
    }
}

/// The reporting client-credential exchange request.
#[uniffi::export(default(scopes = []))]
pub fn build_token_request(
    client_id: String,
    client_secret: String,
    tenant_id: String,
    scopes: Vec<String>,
) -> Result<Arc<RequestDescriptor>> {
    Ok(Arc::new(RequestDescriptor(token::build_token_request(
        &client_id,
        &client_secret,
        &tenant_id,
        &scopes,
    )?)))
}

/// Checks a token response; throws RoyaltyKitException.Api or .TokenResponse.
#[uniffi::export(default(requested_scopes = [], now = None))]
pub fn parse_token_response(
    status: i64,
    headers: HashMap<String, String>,
    body: Vec<u8>,
    requested_scopes: Vec<String>,
    now: Option<i64>,
) -> Result<Arc<Token>> {
    Ok(Arc::new(Token(token::parse_token_response(
        status,
        &headers,
        &body,
        &requested_scopes,
        now_or_clock(now),
    )??)))
}

/// The enterprise key-and-secret exchange request.
#[uniffi::export]
pub fn build_enterprise_token_request(
    api_key: String,
    api_secret: String,
) -> Result<Arc<RequestDescriptor>> {
    Ok(Arc::new(RequestDescriptor(
        token::build_enterprise_token_request(&api_key, &api_secret)?,
    )))
}

/// Checks an enterprise token response.
#[uniffi::export(default(now = None))]
pub fn parse_enterprise_token_response(
    status: i64,
    headers: HashMap<String, String>,
    body: Vec<u8>,
    now: Option<i64>,
) -> Result<Arc<EnterpriseToken>> {
    Ok(Arc::new(EnterpriseToken(
        token::parse_enterprise_token_response(status, &headers, &body, now_or_clock(now))??,
    )))
}

/// Scopes an operation needs that `granted` lacks.
#[uniffi::export]
pub fn missing_scopes(granted: Vec<String>, operation_id: String) -> Result<Vec<String>> {
    Ok(token::missing_scopes(&granted, &operation_id)?)
}

/// Deprecation, Sunset and Link of a response.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ResponseNotices {
    /// A Deprecation header is present.
    pub deprecated: bool,
    /// When deprecated.
    pub deprecated_at: Option<i64>,
    /// When it stops working.
    pub sunset_at: Option<i64>,
    /// The Link header.
    pub link: Option<String>,
}

/// Reads the lifecycle headers of a response.
#[uniffi::export]
pub fn response_notices(headers: HashMap<String, String>) -> ResponseNotices {
    let n = token::response_notices(&headers);
    ResponseNotices {
        deprecated: n.deprecated,
        deprecated_at: n.deprecated_at,
        sunset_at: n.sunset_at,
        link: n.link,
    }
}
