//! Catalog, requests, error bodies and tokens for Python: conversions only.

use crate::{body_arg, headers_for, now_arg, str_arg, type_name, Body};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use royaltykit::api_error::parse_api_error as parse;
use royaltykit::catalog::{self, Api};
use royaltykit::request::{self, RequestDescriptor as CoreDescriptor, RequestParams};
use royaltykit::{token, RESPONSE_HEADER_NAMES};

/// Every operation of both APIs.
#[pyfunction]
pub fn operations() -> Vec<catalog::Operation> {
    catalog::operations().to_vec()
}

/// One operation by id.
#[pyfunction]
pub fn operation(id: &str) -> PyResult<catalog::Operation> {
    crate::guard(|| Ok(catalog::operation(id).cloned()?))
}

/// A request to send with your own HTTP client; `repr` hides credentials.
#[pyclass(frozen, module = "royaltykit")]
pub struct RequestDescriptor(CoreDescriptor);

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
    /// The full URL for a base such as ``https://reports.example``.
    fn url(&self, base: &str) -> String {
        format!("{}{}", base.trim_end_matches('/'), self.0.path_and_query())
    }
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

fn query_value(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<String>> {
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(b) = v.cast::<pyo3::types::PyBool>() {
        return Ok(Some(if b.is_true() { "true" } else { "false" }.to_owned()));
    }
    if v.is_instance_of::<pyo3::types::PyInt>() {
        return Ok(Some(v.str()?.to_string()));
    }
    str_arg(v, name).map(Some)
}

fn pairs(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Vec<(String, String)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let items = if obj.hasattr("items")? {
        obj.call_method0("items")?
    } else {
        obj.clone()
    };
    let mut out = Vec::new();
    for item in items.try_iter().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a mapping or (name, value) pairs"))
    })? {
        let item = item?;
        let pair = item
            .cast::<PyTuple>()
            .map(|t| t.to_list())
            .or_else(|_| item.cast::<PyList>().cloned())
            .map_err(|_| {
                PyTypeError::new_err(format!("{what} must be a mapping or (name, value) pairs"))
            })?;
        if pair.len() != 2 {
            return Err(PyTypeError::new_err(format!(
                "{what} items must be (name, value) pairs"
            )));
        }
        let name = str_arg(&pair.get_item(0)?, &format!("{what} names"))?;
        if let Some(v) = query_value(&pair.get_item(1)?, &format!("{what}[{name:?}]"))? {
            out.push((name, v));
        }
    }
    Ok(out)
}

fn json_body(py: Python<'_>, body: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
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
        return Ok(Some(str_arg(&text, "body")?.into_bytes()));
    }
    Ok(Some(match body_arg(b)? {
        Body::Borrowed(x) => x.to_vec(),
        Body::Owned(v) => v,
    }))
}

fn opt_str(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    match v {
        Some(x) if !x.is_none() => str_arg(x, what).map(Some),
        _ => Ok(None),
    }
}

/// Builds the request for an operation (see the README); raises RequestBuildError.
#[pyfunction]
#[pyo3(signature = (operation_id, *, path=None, query=None, body=None, token=None, tenant_id=None, user_id=None,
                    idempotency_key=None, idempotency_header=None))]
#[allow(clippy::too_many_arguments)]
pub fn build_request(
    py: Python<'_>,
    operation_id: &Bound<'_, PyAny>,
    path: Option<&Bound<'_, PyAny>>,
    query: Option<&Bound<'_, PyAny>>,
    body: Option<&Bound<'_, PyAny>>,
    token: Option<&Bound<'_, PyAny>>,
    tenant_id: Option<&Bound<'_, PyAny>>,
    user_id: Option<&Bound<'_, PyAny>>,
    idempotency_key: Option<&Bound<'_, PyAny>>,
    idempotency_header: Option<&Bound<'_, PyAny>>,
) -> PyResult<RequestDescriptor> {
    crate::guard(|| {
        let params = RequestParams {
            path: pairs(path, "path")?,
            query: pairs(query, "query")?,
            body: json_body(py, body)?,
            token: opt_str(token, "token")?,
            tenant_id: opt_str(tenant_id, "tenant_id")?,
            user_id: opt_str(user_id, "user_id")?,
            idempotency_key: opt_str(idempotency_key, "idempotency_key")?,
            idempotency_header: opt_str(idempotency_header, "idempotency_header")?,
        };
        request::build_request(&str_arg(operation_id, "operation_id")?, &params)
            .map(RequestDescriptor)
            .map_err(crate::Failure::from)
    })
}

fn body_bytes(b: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u8>> {
    match b {
        Some(x) if !x.is_none() => Ok(match body_arg(x)? {
            Body::Borrowed(b) => b.to_vec(),
            Body::Owned(v) => v,
        }),
        _ => Ok(Vec::new()),
    }
}

fn response_headers(h: Option<&Bound<'_, PyAny>>) -> PyResult<crate::Headers> {
    match h {
        Some(x) if !x.is_none() => headers_for(x, &RESPONSE_HEADER_NAMES),
        _ => Ok(crate::Headers(Vec::new())),
    }
}

/// Parses an error response into an ApiError (returned, not raised).
#[pyfunction]
#[pyo3(signature = (api, status, headers=None, body=None, *, operation_id=None, now=None))]
pub fn parse_api_error<'py>(
    py: Python<'py>,
    api: &str,
    status: i64,
    headers: Option<&Bound<'py, PyAny>>,
    body: Option<&Bound<'py, PyAny>>,
    operation_id: Option<&str>,
    now: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guard(|| {
        let api = Api::parse(api)?;
        let h = response_headers(headers)?;
        let b = body_bytes(body)?;
        let now = now_arg(now, "now")?;
        let e = parse(api, status, &h, &b, operation_id, now)?;
        Ok(crate::error_object(py, e)?)
    })
}

/// A reporting access token; ``repr`` hides it.
#[pyclass(frozen, module = "royaltykit")]
pub struct Token(token::Token);

#[pymethods]
impl Token {
    #[getter]
    fn access_token(&self) -> &str {
        &self.0.access_token
    }
    #[getter]
    fn token_type(&self) -> &str {
        &self.0.token_type
    }
    #[getter]
    fn expires_in(&self) -> i64 {
        self.0.expires_in
    }
    #[getter]
    fn expires_at(&self) -> i64 {
        self.0.expires_at
    }
    #[getter]
    fn refresh_at(&self) -> i64 {
        self.0.refresh_at
    }
    #[getter]
    fn scopes(&self) -> Vec<String> {
        self.0.scopes.clone()
    }
    #[getter]
    fn missing_scopes(&self) -> Vec<String> {
        self.0.missing_scopes.clone()
    }
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.0.warnings.clone()
    }
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// An enterprise token; ``repr`` hides it.
#[pyclass(frozen, module = "royaltykit")]
pub struct EnterpriseToken(token::EnterpriseToken);

#[pymethods]
impl EnterpriseToken {
    #[getter]
    fn token(&self) -> &str {
        &self.0.token
    }
    #[getter]
    fn expires_at(&self) -> Option<i64> {
        self.0.expires_at
    }
    #[getter]
    fn refresh_at(&self) -> Option<i64> {
        self.0.refresh_at
    }
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

fn str_list(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Vec<String>> {
    match obj {
        Some(o) if !o.is_none() => {
            if o.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "{what} must be a list of str, not a str"
                )));
            }
            o.try_iter()
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{what} must be a list of str, not {}",
                        type_name(o)
                    ))
                })?
                .map(|s| str_arg(&s?, what))
                .collect()
        }
        _ => Ok(Vec::new()),
    }
}

/// The reporting client-credential exchange request.
#[pyfunction]
#[pyo3(signature = (client_id, client_secret, tenant_id, scopes=None))]
pub fn build_token_request(
    client_id: &Bound<'_, PyAny>,
    client_secret: &Bound<'_, PyAny>,
    tenant_id: &Bound<'_, PyAny>,
    scopes: Option<&Bound<'_, PyAny>>,
) -> PyResult<RequestDescriptor> {
    crate::guard(|| {
        let scopes = str_list(scopes, "scopes")?;
        token::build_token_request(
            &str_arg(client_id, "client_id")?,
            &str_arg(client_secret, "client_secret")?,
            &str_arg(tenant_id, "tenant_id")?,
            &scopes,
        )
        .map(RequestDescriptor)
        .map_err(crate::Failure::from)
    })
}

/// Checks a token response; raises ApiError (error status) or TokenResponseError.
#[pyfunction]
#[pyo3(signature = (status, headers, body, *, requested_scopes=None, now=None))]
pub fn parse_token_response(
    status: i64,
    headers: Option<&Bound<'_, PyAny>>,
    body: Option<&Bound<'_, PyAny>>,
    requested_scopes: Option<&Bound<'_, PyAny>>,
    now: Option<&Bound<'_, PyAny>>,
) -> PyResult<Token> {
    crate::guard(|| {
        let h = response_headers(headers)?;
        let b = body_bytes(body)?;
        let requested = str_list(requested_scopes, "requested_scopes")?;
        let now = now_arg(now, "now")?;
        token::parse_token_response(status, &h, &b, &requested, now)?
            .map(Token)
            .map_err(crate::Failure::from)
    })
}

/// The enterprise key-and-secret exchange request.
#[pyfunction]
pub fn build_enterprise_token_request(
    api_key: &Bound<'_, PyAny>,
    api_secret: &Bound<'_, PyAny>,
) -> PyResult<RequestDescriptor> {
    crate::guard(|| {
        token::build_enterprise_token_request(
            &str_arg(api_key, "api_key")?,
            &str_arg(api_secret, "api_secret")?,
        )
        .map(RequestDescriptor)
        .map_err(crate::Failure::from)
    })
}

/// Checks an enterprise token response (``expires_at`` None: no expiry).
#[pyfunction]
#[pyo3(signature = (status, headers, body, *, now=None))]
pub fn parse_enterprise_token_response(
    status: i64,
    headers: Option<&Bound<'_, PyAny>>,
    body: Option<&Bound<'_, PyAny>>,
    now: Option<&Bound<'_, PyAny>>,
) -> PyResult<EnterpriseToken> {
    crate::guard(|| {
        let h = response_headers(headers)?;
        let b = body_bytes(body)?;
        let now = now_arg(now, "now")?;
        token::parse_enterprise_token_response(status, &h, &b, now)?
            .map(EnterpriseToken)
            .map_err(crate::Failure::from)
    })
}

/// Scopes an operation needs that ``granted`` lacks.
#[pyfunction]
pub fn missing_scopes(granted: &Bound<'_, PyAny>, operation_id: &str) -> PyResult<Vec<String>> {
    crate::guard(|| {
        let granted = str_list(Some(granted), "granted")?;
        Ok(token::missing_scopes(&granted, operation_id)?)
    })
}

/// ``Deprecation``, ``Sunset`` and ``Link`` of a response.
#[pyclass(frozen, get_all, module = "royaltykit")]
pub struct ResponseNotices {
    deprecated: bool,
    deprecated_at: Option<i64>,
    sunset_at: Option<i64>,
    link: Option<String>,
}

#[pymethods]
impl ResponseNotices {
    fn __repr__(&self) -> String {
        format!(
            "ResponseNotices(deprecated={}, deprecated_at={:?}, sunset_at={:?}, link={:?})",
            if self.deprecated { "True" } else { "False" },
            self.deprecated_at,
            self.sunset_at,
            self.link
        )
    }
}

/// Reads the lifecycle headers of a response.
#[pyfunction]
pub fn response_notices(headers: &Bound<'_, PyAny>) -> PyResult<ResponseNotices> {
    crate::guard(|| {
        let n = token::response_notices(&response_headers(Some(headers))?);
        Ok(ResponseNotices {
            deprecated: n.deprecated,
            deprecated_at: n.deprecated_at,
            sunset_at: n.sunset_at,
            link: n.link,
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(operations, m)?)?;
    m.add_function(wrap_pyfunction!(operation, m)?)?;
    m.add_function(wrap_pyfunction!(build_request, m)?)?;
    m.add_function(wrap_pyfunction!(parse_api_error, m)?)?;
    m.add_function(wrap_pyfunction!(build_token_request, m)?)?;
    m.add_function(wrap_pyfunction!(parse_token_response, m)?)?;
    m.add_function(wrap_pyfunction!(build_enterprise_token_request, m)?)?;
    m.add_function(wrap_pyfunction!(parse_enterprise_token_response, m)?)?;
    m.add_function(wrap_pyfunction!(missing_scopes, m)?)?;
    m.add_function(wrap_pyfunction!(response_notices, m)?)?;
    m.add_class::<catalog::Operation>()?;
    m.add_class::<catalog::QueryParam>()?;
    m.add_class::<RequestDescriptor>()?;
    m.add_class::<Token>()?;
    m.add_class::<EnterpriseToken>()?;
    m.add_class::<ResponseNotices>()?;
    Ok(())
}
