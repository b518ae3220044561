//! Catalog, requests, error bodies and tokens for Kotlin: conversions only.

use crate::Result;
use royaltykit::api_error::{parse_api_error as parse, ApiError};
use royaltykit::catalog::{self, Api, Operation};
use royaltykit::request;
use royaltykit::token::{self, ResponseNotices};
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

/// Every operation of both APIs.
#[uniffi::export]
pub fn operations() -> Vec<Operation> {
    catalog::operations().to_vec()
}

/// One operation by id.
#[uniffi::export]
pub fn operation(id: String) -> Result<Operation> {
    Ok(catalog::operation(&id)?.clone())
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
    /// The bearer token, typed by the API that issued it (`token.bearer()`, or
    /// `BearerToken.reports`/`enterprise` for a cached value).
    #[uniffi(default = None)]
    pub token: Option<Arc<BearerToken>>,
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
    /// An id for this logical request: the key is derived from it (a retry recomputes it).
    #[uniffi(default = None)]
    pub request_id: Option<String>,
    /// The tenant or organization a `requestId` key is scoped to (default: `tenantId`).
    #[uniffi(default = None)]
    pub key_namespace: Option<String>,
    /// 16 random bytes for the default random key (default: the OS RNG).
    #[uniffi(default = None)]
    pub key_random: Option<Vec<u8>>,
}

/// A request to send with your own client. It holds credentials, so it is an object whose
/// `describe()` redacts them, not a data class whose `toString` would print them.
#[derive(uniffi::Object)]
pub struct RequestDescriptor(pub(crate) request::RequestDescriptor);

#[uniffi::export]
impl RequestDescriptor {
    /// The operation id.
    pub fn operation_id(&self) -> String {
        self.0.operation_id.clone()
    }
    /// The HTTP method.
    pub fn method(&self) -> String {
        self.0.method.clone()
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
        self.0.url(&base)
    }
    /// Headers, in order (credentials included: this is what to send).
    pub fn headers(&self) -> Vec<Param> {
        let pair = |(name, value): &(String, String)| Param {
            name: name.clone(),
            value: value.clone(),
        };
        self.0.headers.iter().map(pair).collect()
    }
    /// The body.
    pub fn body(&self) -> Option<Vec<u8>> {
        self.0.body.clone()
    }
    /// The idempotency key used.
    pub fn idempotency_key(&self) -> Option<String> {
        self.0.idempotency_key.clone()
    }
    /// Whether the key is in `headers()`: pass it to `decideRetry`.
    pub fn idempotency_key_sent(&self) -> bool {
        self.0.idempotency_key_sent
    }
    /// A description with credentials redacted.
    pub fn describe(&self) -> String {
        format!("{:?}", self.0)
    }
    /// What to send under `base`, read in one call instead of four (`method()`, `url(base)`,
    /// `headers()`, `body()`): the clients' transports use it. Its headers carry the
    /// credentials, as `headers()` does: never log it.
    pub fn wire(&self, base: String) -> WireRequest {
        WireRequest {
            method: self.0.method.clone(),
            url: self.0.url(&base),
            headers: self.headers(),
            body: self.0.body.clone(),
        }
    }
}

/// A request as an HTTP client sends it ([`RequestDescriptor::wire`]). Its headers carry the
/// credentials: never log it.
#[derive(uniffi::Record)]
pub struct WireRequest {
    /// The HTTP method.
    pub method: String,
    /// The absolute URL.
    pub url: String,
    /// Headers, in order.
    pub headers: Vec<Param>,
    /// The body.
    pub body: Option<Vec<u8>>,
}

pub(crate) fn descriptor(d: request::RequestDescriptor) -> Arc<RequestDescriptor> {
    Arc::new(RequestDescriptor(d))
}

/// Builds the request for an operation.
#[uniffi::export]
pub fn build_request(
    operation_id: String,
    params: RequestParams,
) -> Result<Arc<RequestDescriptor>> {
    let p = core_params(params)?;
    Ok(descriptor(request::build_request(&operation_id, &p)?))
}

/// The core's parameters from Kotlin's record.
pub(crate) fn core_params(params: RequestParams) -> Result<request::RequestParams> {
    Ok(request::RequestParams {
        path: params.path.into_iter().collect(),
        query: params
            .query
            .into_iter()
            .map(|q| (q.name, q.value))
            .collect(),
        body: params.body,
        token: params.token.map(|t| t.0.clone()),
        tenant_id: params.tenant_id,
        user_id: params.user_id,
        idempotency_key: params.idempotency_key,
        idempotency_header: params.idempotency_header,
        request_id: params.request_id,
        key_namespace: params.key_namespace,
        key_random: Some(match params.key_random {
            Some(r) => r
                .try_into()
                .map_err(|_| royaltykit::ArgumentError::new("key_random", "must be 16 bytes"))?,
            None => royaltykit_host::random_seed()?,
        }),
    })
}

/// Parses an error response (never fails on the body).
#[uniffi::export(default(operation_id = None, now = None))]
pub fn parse_api_error(
    api: Api,
    status: i64,
    headers: HashMap<String, String>,
    body: Vec<u8>,
    operation_id: Option<String>,
    now: Option<i64>,
) -> Result<ApiError> {
    let now = now_or_clock(now);
    Ok(parse(
        api,
        status,
        &headers,
        &body,
        operation_id.as_deref(),
        now,
    )?)
}

/// The message of [error] when thrown, the same in every language: `401 Unauthorized
/// (unauthenticated) [invalid_client]` (status, the server's message, the kind, and the reason
/// when the body gives one).
#[uniffi::export]
pub fn api_error_message(error: ApiError) -> String {
    error.to_string()
}

/// [error] as the exception to throw: `RoyaltyKitException.Api`, built by the core's error table
/// (its code, HTTP status and message, the same in every language).
#[uniffi::export]
pub fn api_error_exception(error: ApiError) -> royaltykit::Error {
    error.into()
}

/// A bearer token and the API that issued it: `buildRequest` refuses one API's token on the
/// other's routes. An object so that its `toString` never prints it.
#[derive(Debug, PartialEq, Eq, uniffi::Object)]
pub struct BearerToken(pub(crate) token::BearerToken);

#[uniffi::export]
impl BearerToken {
    /// A reporting API access token restored from your cache, bound to `tenantId`, the tenant it
    /// was obtained for (required: requests send it and refuse another; a token given null for
    /// it is refused by every machine route).
    #[uniffi::constructor]
    pub fn reports(value: String, tenant_id: Option<String>) -> Arc<Self> {
        Arc::new(Self(match tenant_id {
            Some(tenant) => token::BearerToken::reports(value, tenant),
            None => token::BearerToken::new(catalog::Api::Reports, value),
        }))
    }
    /// An enterprise API token restored from your cache.
    #[uniffi::constructor]
    pub fn enterprise(value: String) -> Arc<Self> {
        Arc::new(Self(token::BearerToken::enterprise(value)))
    }
    /// The API that issued it.
    pub fn api(&self) -> catalog::Api {
        self.0.api()
    }
    /// The bearer value: send it, never log it.
    pub fn value(&self) -> String {
        self.0.value().to_owned()
    }
    /// The tenant the token was obtained for, when known.
    pub fn tenant_id(&self) -> Option<String> {
        self.0.tenant_id().map(str::to_owned)
    }
    /// A description with the value redacted.
    pub fn describe(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// A reporting access token; an object so that its `toString` never prints it.
#[derive(uniffi::Object)]
pub struct Token(pub(crate) token::Token);

#[uniffi::export]
impl Token {
    /// The bearer value: send it, never log it.
    pub fn access_token(&self) -> String {
        self.0.access_token.clone()
    }
    /// `Bearer`.
    pub fn token_type(&self) -> String {
        self.0.token_type.clone()
    }
    /// Lifetime in seconds.
    pub fn expires_in(&self) -> i64 {
        self.0.expires_in
    }
    /// When it expires (Unix seconds).
    pub fn expires_at(&self) -> i64 {
        self.0.expires_at
    }
    /// When to refresh it (Unix seconds).
    pub fn refresh_at(&self) -> i64 {
        self.0.refresh_at
    }
    /// Scopes granted; null when the response did not say (the grant is unknown).
    pub fn scopes(&self) -> Option<Vec<String>> {
        self.0.scopes.clone()
    }
    /// Scopes requested but not granted; null when the grant is unknown.
    pub fn missing_scopes(&self) -> Option<Vec<String>> {
        self.0.missing_scopes.clone()
    }
    /// Contract deviations that do not invalidate the token.
    pub fn warnings(&self) -> Vec<String> {
        self.0.warnings.clone()
    }
    /// The tenant the token was obtained for: requests built with it send it and refuse another.
    pub fn tenant_id(&self) -> String {
        self.0.tenant_id.clone()
    }
    /// The token for `RequestParams.token`.
    pub fn bearer(&self) -> Arc<BearerToken> {
        Arc::new(BearerToken(self.0.bearer()))
    }
}

/// An enterprise API token; an object so that its `toString` never prints it.
#[derive(uniffi::Object)]
pub struct EnterpriseToken(pub(crate) token::EnterpriseToken);

#[uniffi::export]
impl EnterpriseToken {
    /// The bearer value: send it, never log it.
    pub fn token(&self) -> String {
        self.0.token.clone()
    }
    /// When it expires (Unix seconds); null for no expiry.
    pub fn expires_at(&self) -> Option<i64> {
        self.0.expires_at
    }
    /// When to refresh it (Unix seconds); null for no expiry.
    pub fn refresh_at(&self) -> Option<i64> {
        self.0.refresh_at
    }
    /// The token for `RequestParams.token`.
    pub fn bearer(&self) -> Arc<BearerToken> {
        Arc::new(BearerToken(self.0.bearer()))
    }
}

/// The reporting client-credential exchange.
#[uniffi::export(default(scopes = []))]
pub fn build_token_request(
    client_id: String,
    client_secret: String,
    tenant_id: String,
    scopes: Vec<String>,
) -> Result<Arc<RequestDescriptor>> {
    let d = token::build_token_request(&client_id, &client_secret, &tenant_id, &scopes)?;
    Ok(descriptor(d))
}

/// Checks a reporting token response; `tenantId` is the tenant the exchange was made for (its
/// `X-Tenant-ID`), which the token remembers.
#[uniffi::export(default(requested_scopes = [], now = None))]
pub fn parse_token_response(
    status: i64,
    headers: HashMap<String, String>,
    body: Vec<u8>,
    tenant_id: String,
    requested_scopes: Vec<String>,
    now: Option<i64>,
) -> Result<Arc<Token>> {
    let now = now_or_clock(now);
    let t =
        token::parse_token_response(status, &headers, &body, &requested_scopes, &tenant_id, now)??;
    Ok(Arc::new(Token(t)))
}

/// Checks an API session response (granted scopes, when to refresh).
#[uniffi::export(default(now = None))]
pub fn parse_api_session(
    status: i64,
    headers: HashMap<String, String>,
    body: Vec<u8>,
    now: Option<i64>,
) -> Result<token::ApiSession> {
    Ok(token::parse_api_session(
        status,
        &headers,
        &body,
        now_or_clock(now),
    )??)
}

/// The enterprise token exchange (`X-Api-Key`, `X-Api-Secret`).
#[uniffi::export]
pub fn build_enterprise_token_request(
    api_key: String,
    api_secret: String,
) -> Result<Arc<RequestDescriptor>> {
    Ok(descriptor(token::build_enterprise_token_request(
        &api_key,
        &api_secret,
    )?))
}

/// Checks an enterprise token response.
#[uniffi::export(default(now = None))]
pub fn parse_enterprise_token_response(
    status: i64,
    headers: HashMap<String, String>,
    body: Vec<u8>,
    now: Option<i64>,
) -> Result<Arc<EnterpriseToken>> {
    let now = now_or_clock(now);
    let t = token::parse_enterprise_token_response(status, &headers, &body, now)??;
    Ok(Arc::new(EnterpriseToken(t)))
}

/// `Deprecation`, `Sunset` and `Link` of a response, from its headers as a list (a name may
/// repeat: two `Link` lines). Kotlin also takes `List<Pair<String, String>>` and maps.
#[uniffi::export]
pub fn response_notices(headers: Vec<Param>) -> ResponseNotices {
    let pairs: Vec<(String, String)> = headers.into_iter().map(|p| (p.name, p.value)).collect();
    token::response_notices(&pairs)
}
