//! Catalog, requests, error bodies and tokens for Python: conversions only.

use crate::args::{body_or_empty, headers_or_none, Body, Headers, Seconds, Text, TextOrInt, Texts};
use crate::{guard, R};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use royaltykit::api_error::parse_api_error as parse;
use royaltykit::catalog::{self, Api};
use royaltykit::request::{self, RequestDescriptor as CoreDescriptor, RequestParams};
use royaltykit::token;

/// Every operation of both APIs.
#[pyfunction]
pub fn operations() -> Vec<catalog::Operation> {
    catalog::operations().to_vec()
}

/// One operation by id.
#[pyfunction]
pub fn operation(id: &str) -> PyResult<catalog::Operation> {
    guard(|| Ok(catalog::operation(id).cloned()?))
}

/// A bearer token and the API that issued it, for a token restored from a cache; `repr` hides
/// it. `build_request` also takes the `Token` and `EnterpriseToken` the parsers return.
#[pyclass(name = "BearerToken", frozen, eq, module = "royaltykit")]
#[derive(PartialEq)]
pub struct PyBearerToken(token::BearerToken);

#[pymethods]
impl PyBearerToken {
    /// A reporting API access token bound to `tenant_id`, the tenant it was obtained for
    /// (required: requests send that tenant's X-Tenant-ID and refuse another; a token given
    /// None for it is refused by every machine route).
    #[staticmethod]
    fn reports(value: Text, tenant_id: Option<Text>) -> Self {
        Self(match tenant_id {
            Some(tenant) => token::BearerToken::reports(value.0, tenant.0),
            None => token::BearerToken::new(royaltykit::catalog::Api::Reports, value.0),
        })
    }
    /// An enterprise API token.
    #[staticmethod]
    fn enterprise(value: Text) -> Self {
        Self(token::BearerToken::enterprise(value.0))
    }
    #[getter]
    fn api(&self) -> catalog::Api {
        self.0.api()
    }
    #[getter]
    fn value(&self) -> &str {
        self.0.value()
    }
    /// The tenant the token was obtained for, when known.
    #[getter]
    fn tenant_id(&self) -> Option<&str> {
        self.0.tenant_id()
    }
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// The `token` argument: a `Token`, an `EnterpriseToken` or a `BearerToken`; a `str` does not say
/// which API issued it, so it is a `TypeError`.
pub(crate) fn bearer(t: &Bound<'_, PyAny>) -> PyResult<token::BearerToken> {
    if let Ok(t) = t.cast::<token::Token>() {
        return Ok(t.get().bearer());
    }
    if let Ok(t) = t.cast::<token::EnterpriseToken>() {
        return Ok(t.get().bearer());
    }
    if let Ok(t) = t.cast::<PyBearerToken>() {
        return Ok(t.get().0.clone());
    }
    Err(PyTypeError::new_err(
        "token must be a Token (parse_token_response), an EnterpriseToken (parse_enterprise_token_response) \
         or a BearerToken (BearerToken.reports/enterprise for a cached value)",
    ))
}

/// A request to send with your own HTTP client; `repr` hides credentials.
#[pyclass(frozen, module = "royaltykit")]
pub struct RequestDescriptor(pub(crate) CoreDescriptor);

#[pymethods]
impl RequestDescriptor {
    #[getter]
    fn operation_id(&self) -> &str {
        &self.0.operation_id
    }
    #[getter]
    fn method(&self) -> &str {
        &self.0.method
    }
    #[getter]
    fn path(&self) -> &str {
        &self.0.path
    }
    #[getter]
    fn query(&self) -> &str {
        &self.0.query
    }
    #[getter]
    fn path_and_query(&self) -> String {
        self.0.path_and_query()
    }
    #[getter]
    fn headers(&self) -> Vec<(String, String)> {
        self.0.headers.clone()
    }
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.0.body.as_deref().map(|b| PyBytes::new(py, b))
    }
    #[getter]
    fn idempotency_key(&self) -> Option<&str> {
        self.0.idempotency_key.as_deref()
    }
    /// Whether the key is in ``headers`` (pass it to ``decide_retry``).
    #[getter]
    fn idempotency_key_sent(&self) -> bool {
        self.0.idempotency_key_sent
    }
    /// The full URL for a base such as ``https://reports.example``.
    fn url(&self, base: &str) -> String {
        self.0.url(base)
    }
    pub(crate) fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// Path or query parameters: a mapping or (name, value) pairs; a value is a str, an int or a
/// bool (written `true`/`false`); None values are left out.
pub(crate) fn params(obj: Option<&Bound<'_, PyAny>>, what: &str) -> R<Vec<(String, String)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let items = if obj.hasattr("items")? {
        obj.call_method0("items")?
    } else {
        obj.clone()
    };
    let wrong = || {
        PyTypeError::new_err(format!(
            "{what} must be a mapping or (name, value) pairs of str, int or bool"
        ))
    };
    let mut out = Vec::new();
    for item in items.try_iter().map_err(|_| wrong())? {
        let (name, value) = crate::args::pair(&item?).ok_or_else(wrong)?;
        let name = name.extract::<Text>().map_err(|_| wrong())?;
        if let Ok(b) = value.cast::<pyo3::types::PyBool>() {
            out.push((name.0, b.is_true().to_string()));
        } else if !value.is_none() {
            out.push((name.0, value.extract::<TextOrInt>().map_err(|_| wrong())?.0));
        }
    }
    Ok(out)
}

/// A request body: a dict or list is sent as compact JSON (the core canonicalises it for the
/// idempotency key), anything else as raw bytes.
pub(crate) fn json_body(py: Python<'_>, body: Option<&Bound<'_, PyAny>>) -> R<Option<Vec<u8>>> {
    let Some(b) = body.filter(|b| !b.is_none()) else {
        return Ok(None);
    };
    if b.is_instance_of::<PyDict>() || b.is_instance_of::<PyList>() {
        let kwargs = PyDict::new(py);
        kwargs.set_item("separators", (",", ":"))?;
        kwargs.set_item("ensure_ascii", false)?;
        let text = py
            .import("json")?
            .call_method("dumps", (b,), Some(&kwargs))?;
        return Ok(Some(text.extract::<Text>()?.0.into_bytes()));
    }
    Ok(Some(b.extract::<Body<'_>>()?.to_vec()))
}

/// Builds the request for an operation (see docs/clients.md); raises RequestBuildError.
#[pyfunction]
#[pyo3(signature = (operation_id, *, path=None, query=None, body=None, token=None, tenant_id=None, user_id=None,
                    idempotency_key=None, idempotency_header=None, request_id=None, key_namespace=None, key_random=None))]
#[allow(clippy::too_many_arguments)]
pub fn build_request(
    py: Python<'_>,
    operation_id: Text,
    path: Option<&Bound<'_, PyAny>>,
    query: Option<&Bound<'_, PyAny>>,
    body: Option<&Bound<'_, PyAny>>,
    token: Option<&Bound<'_, PyAny>>,
    tenant_id: Option<Text>,
    user_id: Option<Text>,
    idempotency_key: Option<Text>,
    idempotency_header: Option<Text>,
    request_id: Option<Text>,
    key_namespace: Option<Text>,
    key_random: Option<[u8; 16]>,
) -> PyResult<RequestDescriptor> {
    guard(|| {
        let key_random = Some(key_random.map_or_else(royaltykit_host::random_seed, Ok)?);
        let params = request_params(
            py,
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
            key_random,
        )?;
        Ok(RequestDescriptor(request::build_request(
            &operation_id,
            &params,
        )?))
    })
}

/// The core's request parameters from `build_request`'s (and `Call`'s) keyword arguments.
#[allow(clippy::too_many_arguments)]
pub(crate) fn request_params(
    py: Python<'_>,
    path: Option<&Bound<'_, PyAny>>,
    query: Option<&Bound<'_, PyAny>>,
    body: Option<&Bound<'_, PyAny>>,
    token: Option<&Bound<'_, PyAny>>,
    tenant_id: Option<Text>,
    user_id: Option<Text>,
    idempotency_key: Option<Text>,
    idempotency_header: Option<Text>,
    request_id: Option<Text>,
    key_namespace: Option<Text>,
    key_random: Option<[u8; 16]>,
) -> R<RequestParams> {
    Ok(RequestParams {
        path: params(path, "path")?,
        query: params(query, "query")?,
        body: json_body(py, body)?,
        token: token.map(bearer).transpose()?,
        tenant_id: tenant_id.map(|t| t.0),
        user_id: user_id.map(|t| t.0),
        idempotency_key: idempotency_key.map(|t| t.0),
        idempotency_header: idempotency_header.map(|t| t.0),
        request_id: request_id.map(|t| t.0),
        key_namespace: key_namespace.map(|t| t.0),
        key_random,
    })
}

/// Parses an error response into an ApiError (returned, not raised).
#[pyfunction]
#[pyo3(signature = (api, status, headers=None, body=None, *, operation_id=None, now=None))]
pub fn parse_api_error<'py>(
    py: Python<'py>,
    api: &str,
    status: i64,
    headers: Option<Headers>,
    body: Option<Body<'_>>,
    operation_id: Option<&str>,
    now: Option<Seconds>,
) -> PyResult<Bound<'py, PyAny>> {
    guard(|| {
        let e = parse(
            Api::parse(api)?,
            status,
            &headers_or_none(headers),
            &body_or_empty(body),
            operation_id,
            crate::args::now(now),
        )?;
        Ok(crate::error_object(py, e)?)
    })
}

/// The reporting client-credential exchange request.
#[pyfunction]
#[pyo3(signature = (client_id, client_secret, tenant_id, scopes=None))]
pub fn build_token_request(
    client_id: Text,
    client_secret: Text,
    tenant_id: Text,
    scopes: Option<Texts>,
) -> PyResult<RequestDescriptor> {
    guard(|| {
        let scopes = scopes.map_or_else(Vec::new, |s| s.0);
        Ok(RequestDescriptor(token::build_token_request(
            &client_id,
            &client_secret,
            &tenant_id,
            &scopes,
        )?))
    })
}

/// Checks a token response; raises ApiError (error status) or TokenResponseError.
#[pyfunction]
#[pyo3(signature = (status, headers, body, *, tenant_id, requested_scopes=None, now=None))]
pub fn parse_token_response(
    status: i64,
    headers: Option<Headers>,
    body: Option<Body<'_>>,
    tenant_id: Text,
    requested_scopes: Option<Texts>,
    now: Option<Seconds>,
) -> PyResult<token::Token> {
    guard(|| {
        let requested = requested_scopes.map_or_else(Vec::new, |s| s.0);
        Ok(token::parse_token_response(
            status,
            &headers_or_none(headers),
            &body_or_empty(body),
            &requested,
            &tenant_id,
            crate::args::now(now),
        )??)
    })
}

/// Checks an API session response (granted scopes, ``expires_at``); raises ApiError (error
/// status) or TokenResponseError.
#[pyfunction]
#[pyo3(signature = (status, headers, body, *, now=None))]
pub fn parse_api_session(
    status: i64,
    headers: Option<Headers>,
    body: Option<Body<'_>>,
    now: Option<Seconds>,
) -> PyResult<token::ApiSession> {
    guard(|| {
        Ok(token::parse_api_session(
            status,
            &headers_or_none(headers),
            &body_or_empty(body),
            crate::args::now(now),
        )??)
    })
}

/// The enterprise key-and-secret exchange request.
#[pyfunction]
pub fn build_enterprise_token_request(
    api_key: Text,
    api_secret: Text,
) -> PyResult<RequestDescriptor> {
    guard(|| {
        Ok(RequestDescriptor(token::build_enterprise_token_request(
            &api_key,
            &api_secret,
        )?))
    })
}

/// Checks an enterprise token response (``expires_at`` None: no expiry).
#[pyfunction]
#[pyo3(signature = (status, headers, body, *, now=None))]
pub fn parse_enterprise_token_response(
    status: i64,
    headers: Option<Headers>,
    body: Option<Body<'_>>,
    now: Option<Seconds>,
) -> PyResult<token::EnterpriseToken> {
    guard(|| {
        Ok(token::parse_enterprise_token_response(
            status,
            &headers_or_none(headers),
            &body_or_empty(body),
            crate::args::now(now),
        )??)
    })
}

/// Reads the lifecycle headers of a response.
#[pyfunction]
pub fn response_notices(headers: Headers) -> token::ResponseNotices {
    token::response_notices(&headers)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::py_export!(m;
        fn operations, operation, build_request, parse_api_error, build_token_request,
            parse_token_response, parse_api_session, build_enterprise_token_request,
            parse_enterprise_token_response, response_notices;
        class catalog::Operation, catalog::QueryParam, RequestDescriptor, token::Token,
            token::EnterpriseToken, PyBearerToken, token::ResponseNotices, token::ApiSession
    );
    Ok(())
}
