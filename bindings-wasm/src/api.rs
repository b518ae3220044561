//! Catalog, requests, error bodies and tokens for JS: conversions only.

use crate::{err, int, json, now_arg, parse, FlatHeaders, R};
use royaltykit::api_error::parse_api_error as parse_error;
use royaltykit::catalog::{self, Api};
use royaltykit::request::{self, RequestDescriptor, RequestParams};
use royaltykit::token;
use serde_json::json;
use wasm_bindgen::prelude::*;

/// Every operation, as JSON.
#[wasm_bindgen(js_name = operationsJson)]
pub fn operations_json() -> String {
    json(catalog::operations())
}

/// One operation by id, as JSON.
#[wasm_bindgen(js_name = operationJson)]
pub fn operation_json(id: &str) -> R<String> {
    catalog::operation(id).map(json).map_err(err)
}

/// `[descriptorJson, bodyBytes | undefined]`. The descriptor holds credentials, so its JSON is
/// built here, member by member, for the JS class that redacts them when printed.
pub(crate) fn descriptor(d: RequestDescriptor) -> js_sys::Array {
    let fields = json!({
        "operationId": d.operation_id, "method": d.method, "path": d.path, "query": d.query,
        "pathAndQuery": d.path_and_query(), "headers": d.headers, "idempotencyKey": d.idempotency_key,
        "idempotencyKeySent": d.idempotency_key_sent,
    });
    let body = d
        .body
        .as_deref()
        .map_or(JsValue::UNDEFINED, |b| js_sys::Uint8Array::from(b).into());
    js_sys::Array::of2(&fields.to_string().into(), &body)
}

/// `RequestDescriptor::url` from a descriptor's path and query.
#[wasm_bindgen(js_name = requestUrl)]
pub fn request_url(base: &str, path_and_query: &str) -> String {
    request::join_url(base, path_and_query)
}

/// `request::build_request`; path and query as flat `[name, value, ...]` arrays.
#[wasm_bindgen(js_name = buildRequest)]
#[allow(clippy::too_many_arguments)]
pub fn build_request(
    operation_id: &str,
    path: Vec<String>,
    query: Vec<String>,
    body: Option<Vec<u8>>,
    token: Option<String>,
    token_api: Option<String>,
    token_tenant: Option<String>,
    tenant_id: Option<String>,
    user_id: Option<String>,
    idempotency_key: Option<String>,
    idempotency_header: Option<String>,
    request_id: Option<String>,
    key_namespace: Option<String>,
    key_random: &[u8],
) -> R<js_sys::Array> {
    let key_random: [u8; 16] = key_random.try_into().map_err(|_| {
        err(royaltykit::ArgumentError::new(
            "key_random",
            "must be 16 bytes",
        ))
    })?;
    let pairs = |flat: Vec<String>| {
        flat.chunks_exact(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect()
    };
    let (path, query) = (pairs(path), pairs(query));
    let api = Api::parse(token_api.as_deref().unwrap_or_default());
    let token = match token {
        Some(value) => {
            let t = token::BearerToken::new(api.map_err(err)?, value);
            Some(match token_tenant {
                Some(tenant) => t.for_tenant(tenant),
                None => t,
            })
        }
        None => None,
    };
    let params = RequestParams {
        path,
        query,
        body,
        token,
        tenant_id,
        user_id,
        idempotency_key,
        idempotency_header,
        request_id,
        key_namespace,
        key_random: Some(key_random),
    };
    request::build_request(operation_id, &params)
        .map(descriptor)
        .map_err(err)
}

/// `api_error::parse_api_error`, as the JSON of the core's `Api` error (so JS builds the same
/// `ApiError` class it throws).
#[wasm_bindgen(js_name = parseApiError)]
pub fn parse_api_error(
    api: &str,
    status: f64,
    headers: Vec<String>,
    body: &[u8],
    operation_id: Option<String>,
    now: f64,
) -> R<String> {
    let (api, status, now) = (
        parse(Api::parse, api)?,
        int("status", status)?,
        now_arg(now)?,
    );
    let e = parse_error(
        api,
        status,
        &FlatHeaders(headers),
        body,
        operation_id.as_deref(),
        now,
    );
    e.map(|e| json(&royaltykit::Error::from(e))).map_err(err)
}

/// `token::build_token_request`.
#[wasm_bindgen(js_name = buildTokenRequest)]
pub fn build_token_request(
    client_id: &str,
    client_secret: &str,
    tenant_id: &str,
    scopes: Vec<String>,
) -> R<js_sys::Array> {
    let d = token::build_token_request(client_id, client_secret, tenant_id, &scopes);
    d.map(descriptor).map_err(err)
}

/// `token::parse_api_session`, as JSON.
#[wasm_bindgen(js_name = parseApiSession)]
pub fn parse_api_session(status: f64, headers: Vec<String>, body: &[u8], now: f64) -> R<String> {
    let (status, now) = (int("status", status)?, now_arg(now)?);
    let parsed = token::parse_api_session(status, &FlatHeaders(headers), body, now);
    Ok(json(&parsed.map_err(err)?.map_err(err)?))
}

/// `token::build_enterprise_token_request`.
#[wasm_bindgen(js_name = buildEnterpriseTokenRequest)]
pub fn build_enterprise_token_request(api_key: &str, api_secret: &str) -> R<js_sys::Array> {
    token::build_enterprise_token_request(api_key, api_secret)
        .map(descriptor)
        .map_err(err)
}

/// `token::parse_token_response`; the token as JSON for the JS class that hides it.
#[wasm_bindgen(js_name = parseTokenResponse)]
pub fn parse_token_response(
    status: f64,
    headers: Vec<String>,
    body: &[u8],
    requested_scopes: Vec<String>,
    tenant_id: &str,
    now: f64,
) -> R<String> {
    let (status, now) = (int("status", status)?, now_arg(now)?);
    let parsed = token::parse_token_response(
        status,
        &FlatHeaders(headers),
        body,
        &requested_scopes,
        tenant_id,
        now,
    );
    let t = parsed.map_err(err)?.map_err(err)?;
    Ok(json!({
        "accessToken": t.access_token, "tokenType": t.token_type, "expiresIn": t.expires_in, "expiresAt": t.expires_at,
        "refreshAt": t.refresh_at, "scopes": t.scopes, "missingScopes": t.missing_scopes, "warnings": t.warnings,
        "tenantId": t.tenant_id,
    })
    .to_string())
}

/// `token::parse_enterprise_token_response`; the token as JSON for the JS class that hides it.
#[wasm_bindgen(js_name = parseEnterpriseTokenResponse)]
pub fn parse_enterprise_token_response(
    status: f64,
    headers: Vec<String>,
    body: &[u8],
    now: f64,
) -> R<String> {
    let (status, now) = (int("status", status)?, now_arg(now)?);
    let parsed = token::parse_enterprise_token_response(status, &FlatHeaders(headers), body, now);
    let t = parsed.map_err(err)?.map_err(err)?;
    Ok(json!({"token": t.token, "expiresAt": t.expires_at, "refreshAt": t.refresh_at}).to_string())
}

/// `token::response_notices`, as JSON.
#[wasm_bindgen(js_name = responseNotices)]
pub fn response_notices(headers: Vec<String>) -> String {
    json(&token::response_notices(&FlatHeaders(headers)))
}

/// The response headers the library reads.
#[wasm_bindgen(js_name = responseHeaderNames)]
pub fn response_header_names() -> Vec<String> {
    royaltykit::RESPONSE_HEADER_NAMES
        .iter()
        .map(|n| (*n).to_owned())
        .collect()
}

/// Headers whose values are credentials (redacted when printed).
#[wasm_bindgen(js_name = credentialHeaderNames)]
pub fn credential_header_names() -> Vec<String> {
    request::CREDENTIAL_HEADERS
        .iter()
        .map(|n| (*n).to_owned())
        .collect()
}
