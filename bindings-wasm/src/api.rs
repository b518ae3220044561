//! Catalog, requests, error bodies and tokens for JS: conversions only. Results cross the
//! boundary as JSON text (camelCase); these are not hot paths.

use crate::{argument_error, now_arg, set, FlatHeaders};
use js_sys::Object;
use royaltykit::api_error::{parse_api_error as parse, ApiError};
use royaltykit::catalog::{self, Api};
use royaltykit::request::{build_request as build, RequestDescriptor, RequestError, RequestParams};
use royaltykit::{integer_from_f64, token, ArgumentError};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

fn arg<T>(r: Result<T, ArgumentError>) -> Result<T, JsValue> {
    r.map_err(|e| argument_error(&e))
}

pub(crate) fn request_error(e: &RequestError) -> JsValue {
    let o = Object::new();
    set(&o, "kind", "request".into());
    set(&o, "code", e.code.into());
    set(&o, "message", e.to_string().into());
    set(&o, "parameter", e.parameter.as_str().into());
    o.into()
}

fn token_error(e: &token::TokenError) -> JsValue {
    match e {
        token::TokenError::Api(a) => api_error_value(a),
        other => {
            let o = Object::new();
            set(&o, "kind", "token".into());
            set(&o, "code", other.code().into());
            set(&o, "message", other.to_string().into());
            o.into()
        }
    }
}

/// Every operation, as JSON.
#[wasm_bindgen(js_name = operationsJson)]
pub fn operations_json() -> String {
    serde_json::to_string(catalog::operations()).unwrap_or_default()
}

fn descriptor_json(d: &RequestDescriptor) -> Value {
    json!({
        "operationId": d.operation_id, "method": d.method, "path": d.path, "query": d.query,
        "pathAndQuery": d.path_and_query(),
        "headers": d.headers.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>(),
        "idempotencyKey": d.idempotency_key,
    })
}

/// Returns `[descriptorJson, bodyBytes | undefined]`.
fn descriptor(d: RequestDescriptor) -> js_sys::Array {
    let body = d
        .body
        .as_deref()
        .map_or(JsValue::UNDEFINED, |b| js_sys::Uint8Array::from(b).into());
    js_sys::Array::of2(&descriptor_json(&d).to_string().into(), &body)
}

/// `request::build_request`; params as flat arrays of strings.
#[wasm_bindgen(js_name = buildRequest)]
#[allow(clippy::too_many_arguments)]
pub fn build_request(
    operation_id: &str,
    path: Vec<String>,
    query: Vec<String>,
    body: Option<Vec<u8>>,
    token: Option<String>,
    tenant_id: Option<String>,
    user_id: Option<String>,
    idempotency_key: Option<String>,
    idempotency_header: Option<String>,
) -> Result<js_sys::Array, JsValue> {
    let pairs = |flat: Vec<String>| {
        flat.chunks_exact(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect()
    };
    let params = RequestParams {
        path: pairs(path),
        query: pairs(query),
        body,
        token,
        tenant_id,
        user_id,
        idempotency_key,
        idempotency_header,
    };
    build(operation_id, &params)
        .map(descriptor)
        .map_err(|e| request_error(&e))
}

fn api_error_json(e: &ApiError) -> Value {
    serde_json::to_value(e).unwrap_or_default()
}

pub(crate) fn api_error_value(e: &ApiError) -> JsValue {
    let o = Object::new();
    set(&o, "kind", "api".into());
    set(&o, "json", api_error_json(e).to_string().into());
    o.into()
}

/// `api_error::parse_api_error`; returns the error as JSON.
#[wasm_bindgen(js_name = parseApiError)]
pub fn parse_api_error(
    api: &str,
    status: f64,
    headers: Vec<String>,
    body: &[u8],
    operation_id: Option<String>,
    now: f64,
) -> Result<String, JsValue> {
    let api = arg(Api::parse(api))?;
    let status = arg(integer_from_f64("status", status))?;
    let e = arg(parse(
        api,
        status,
        &FlatHeaders(headers),
        body,
        operation_id.as_deref(),
        now_arg(now)?,
    ))?;
    Ok(api_error_json(&e).to_string())
}

/// `token::build_token_request`.
#[wasm_bindgen(js_name = buildTokenRequest)]
pub fn build_token_request(
    client_id: &str,
    client_secret: &str,
    tenant_id: &str,
    scopes: Vec<String>,
) -> Result<js_sys::Array, JsValue> {
    token::build_token_request(client_id, client_secret, tenant_id, &scopes)
        .map(descriptor)
        .map_err(|e| request_error(&e))
}

/// `token::build_enterprise_token_request`.
#[wasm_bindgen(js_name = buildEnterpriseTokenRequest)]
pub fn build_enterprise_token_request(
    api_key: &str,
    api_secret: &str,
) -> Result<js_sys::Array, JsValue> {
    token::build_enterprise_token_request(api_key, api_secret)
        .map(descriptor)
        .map_err(|e| request_error(&e))
}

/// `token::parse_token_response`; returns the token as JSON.
#[wasm_bindgen(js_name = parseTokenResponse)]
pub fn parse_token_response(
    status: f64,
    headers: Vec<String>,
    body: &[u8],
    requested_scopes: Vec<String>,
    now: f64,
) -> Result<String, JsValue> {
    let status = arg(integer_from_f64("status", status))?;
    let t = arg(token::parse_token_response(
        status,
        &FlatHeaders(headers),
        body,
        &requested_scopes,
        now_arg(now)?,
    ))?
    .map_err(|e| token_error(&e))?;
    Ok(json!({
        "accessToken": t.access_token, "tokenType": t.token_type, "expiresIn": t.expires_in, "expiresAt": t.expires_at,
        "refreshAt": t.refresh_at, "scopes": t.scopes, "missingScopes": t.missing_scopes, "warnings": t.warnings,
    })
    .to_string())
}

/// `token::parse_enterprise_token_response`; returns the token as JSON.
#[wasm_bindgen(js_name = parseEnterpriseTokenResponse)]
pub fn parse_enterprise_token_response(
    status: f64,
    headers: Vec<String>,
    body: &[u8],
    now: f64,
) -> Result<String, JsValue> {
    let status = arg(integer_from_f64("status", status))?;
    let t = arg(token::parse_enterprise_token_response(
        status,
        &FlatHeaders(headers),
        body,
        now_arg(now)?,
    ))?
    .map_err(|e| token_error(&e))?;
    Ok(json!({"token": t.token, "expiresAt": t.expires_at, "refreshAt": t.refresh_at}).to_string())
}

/// `token::missing_scopes`.
#[wasm_bindgen(js_name = missingScopes)]
pub fn missing_scopes(granted: Vec<String>, operation_id: &str) -> Result<Vec<String>, JsValue> {
    arg(token::missing_scopes(&granted, operation_id))
}

/// `token::response_notices`, as JSON.
#[wasm_bindgen(js_name = responseNotices)]
pub fn response_notices(headers: Vec<String>) -> String {
    let n = token::response_notices(&FlatHeaders(headers));
    json!({"deprecated": n.deprecated, "deprecatedAt": n.deprecated_at, "sunsetAt": n.sunset_at, "link": n.link}).to_string()
}

/// The response headers the library reads.
#[wasm_bindgen(js_name = responseHeaderNames)]
pub fn response_header_names() -> js_sys::Array {
    royaltykit::RESPONSE_HEADER_NAMES
        .iter()
        .map(|n| JsValue::from_str(n))
        .collect()
}

/// Headers whose values are credentials (redacted when printed).
#[wasm_bindgen(js_name = credentialHeaderNames)]
pub fn credential_header_names() -> js_sys::Array {
    royaltykit::request::CREDENTIAL_HEADERS
        .iter()
        .map(|n| JsValue::from_str(n))
        .collect()
}
