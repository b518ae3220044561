//! Python arguments as the core takes them: each type checks and converts one argument, and a
//! wrong type is a `TypeError` that pyo3 prefixes with the argument's name.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple,
};
use royaltykit::machine::StepOutcome;
use royaltykit::retry::TransportFailure;
use royaltykit::{seconds_from_f64, webhook, ArgumentError};
use std::ops::Deref;

fn type_error(what: &str, obj: &Borrowed<'_, '_, PyAny>) -> PyErr {
    let name = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string());
    PyTypeError::new_err(format!("must be {what}, not {name}"))
}

/// A `str`. Lone surrogates become U+FFFD, one per surrogate, exactly as a JS string crossing
/// into wasm does, so both hosts see the same bytes.
pub struct Text(pub String);

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Text {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let s = obj
            .cast::<PyString>()
            .map_err(|_| type_error("str", &obj))?;
        if let Ok(t) = s.to_str() {
            return Ok(Self(t.to_owned()));
        }
        let utf16 = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
        let units: Vec<u16> = utf16
            .cast::<PyBytes>()?
            .as_bytes()
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        Ok(Self(String::from_utf16_lossy(&units)))
    }
}

/// A `str`, or an `int` written in decimal (query values, a timestamp as sent).
pub struct TextOrInt(pub String);

impl<'a, 'py> FromPyObject<'a, 'py> for TextOrInt {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>() {
            return Ok(Self(obj.str()?.to_string()));
        }
        obj.extract::<Text>()
            .map(|t| Self(t.0))
            .map_err(|_| type_error("str or int", &obj))
    }
}

/// The raw body: bytes (borrowed), bytearray, memoryview (copied), or str (UTF-8).
pub enum Body<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Deref for Body<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Body::Borrowed(b) => b,
            Body::Owned(v) => v,
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Body<'a> {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(b) = obj.extract::<&'a [u8]>() {
            return Ok(Body::Borrowed(b));
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            return Ok(Body::Owned(b.to_vec()));
        }
        if obj.is_instance_of::<PyString>() {
            return Ok(Body::Owned(obj.extract::<Text>()?.0.into_bytes()));
        }
        if obj.is_instance_of::<PyMemoryView>() {
            return Ok(Body::Owned(
                obj.call_method0("tobytes")?
                    .cast::<PyBytes>()?
                    .as_bytes()
                    .to_vec(),
            ));
        }
        Err(type_error("bytes, bytearray, memoryview or str", &obj))
    }
}

/// An optional body: absent or None is empty.
pub fn body_or_empty<'a>(b: Option<Body<'a>>) -> Body<'a> {
    b.unwrap_or(Body::Borrowed(&[]))
}

/// A list or tuple of `str` (never a lone `str`, which would iterate as characters).
pub struct Texts(pub Vec<String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Texts {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
            return Err(type_error("a list or tuple of str", &obj));
        }
        obj.try_iter()?
            .map(|s| Ok(s?.extract::<Text>()?.0))
            .collect::<PyResult<_>>()
            .map(Self)
    }
}

/// Secrets: one `str` or a list/tuple of them.
pub struct Secrets(pub Vec<String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Secrets {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<Text>() {
            Ok(one) => Ok(Self(vec![one.0])),
            Err(_) => obj
                .extract::<Texts>()
                .map(|t| Self(t.0))
                .map_err(|_| type_error("str or a list/tuple of str", &obj)),
        }
    }
}

/// A signing secret with the last Unix second it verifies (the rotation's
/// `previous_secret_valid_until`): ``WebhookSecret(secret, valid_until=None)``. Its `repr`
/// never shows the secret.
#[pyclass(name = "WebhookSecret", frozen, module = "royaltykit")]
pub struct PyWebhookSecret(pub webhook::WebhookSecret, pub Option<i64>);

#[pymethods]
impl PyWebhookSecret {
    /// ``valid_until``: the last Unix second the secret verifies (an ``int``, a finite ``float``,
    /// an aware ``datetime``, or an ISO 8601 text such as ``previous_secret_valid_until`` as the
    /// service sends it); None: no limit. Anything else is refused (never taken for "no limit").
    #[new]
    #[pyo3(signature = (secret, valid_until=None))]
    fn new(secret: Text, valid_until: Option<ValidUntil>) -> Self {
        let until = valid_until.map(|s| s.0);
        Self(webhook::WebhookSecret::new(secret.0, until), until)
    }

    /// The last Unix second at which the secret verifies; None: no limit.
    #[getter]
    fn valid_until(&self) -> Option<i64> {
        self.1
    }

    /// The secret itself, to store (a subscription's is shown once: ``revealed_secret``) or to
    /// hand to a verifier or a signer; never in ``repr`` or ``str``.
    #[getter]
    fn secret(&self) -> String {
        String::from_utf8_lossy(self.0.secret()).into_owned()
    }

    fn __repr__(&self) -> String {
        match self.1 {
            Some(u) => format!("WebhookSecret('[redacted]', valid_until={u})"),
            None => "WebhookSecret('[redacted]')".to_owned(),
        }
    }
}

/// Signing secrets: a `str` or a `WebhookSecret`, or a list/tuple of them (current first).
pub struct SigningSecrets(pub Vec<webhook::WebhookSecret>);

impl<'a, 'py> FromPyObject<'a, 'py> for SigningSecrets {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        fn one(obj: &Bound<'_, PyAny>) -> Option<webhook::WebhookSecret> {
            if let Ok(s) = obj.cast::<PyWebhookSecret>() {
                return Some(s.get().0.clone());
            }
            obj.extract::<Text>()
                .ok()
                .map(|t| webhook::WebhookSecret::new(t.0, None))
        }
        let wrong = || type_error("str, WebhookSecret, or a list/tuple of them", &obj);
        let bound = obj.to_owned();
        if let Some(s) = one(&bound) {
            return Ok(Self(vec![s]));
        }
        if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
            return Err(wrong());
        }
        obj.try_iter()?
            .map(|s| one(&s?).ok_or_else(wrong))
            .collect::<PyResult<_>>()
            .map(Self)
    }
}

/// Unix seconds: an int as is, a float rounded down; `None` (or absent) is the system clock.
pub struct Seconds(pub i64);

impl<'a, 'py> FromPyObject<'a, 'py> for Seconds {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let out_of_range = |e: ArgumentError| crate::error(obj.py(), e);
        if obj.is_instance_of::<PyInt>() {
            return obj
                .extract::<i64>()
                .map(Self)
                .map_err(|_| out_of_range(ArgumentError::new("seconds", "is out of range")));
        }
        if obj.is_instance_of::<PyFloat>() {
            return seconds_from_f64("seconds", obj.extract()?)
                .map(Self)
                .map_err(out_of_range);
        }
        Err(type_error("int or float Unix seconds", &obj))
    }
}

/// An instant a secret is valid until: `int` or finite `float` Unix seconds, an aware
/// `datetime`, or an ISO 8601 text (read by the core's one timestamp parser). Anything else is
/// `invalid_argument` saying which forms are accepted: an expiry is never silently lost.
pub struct ValidUntil(pub i64);

impl<'a, 'py> FromPyObject<'a, 'py> for ValidUntil {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let refuse = |got: String| {
            crate::error(
                obj.py(),
                ArgumentError::new(
                    "valid_until",
                    format!("must be Unix seconds (an int or a finite float), an aware datetime, or an ISO 8601 timestamp text such as 2026-11-22T03:05:06Z; got {got}"),
                ),
            )
        };
        if obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>() {
            return obj
                .extract::<Seconds>()
                .map(|s| Self(s.0))
                .map_err(|_| refuse(obj.repr().map_or_else(|_| "?".into(), |r| r.to_string())));
        }
        if obj.is_instance_of::<PyString>() {
            let text = obj.extract::<Text>()?;
            return royaltykit::parse_timestamp(&text)
                .map(Self)
                .ok_or_else(|| refuse(format!("{:?}", text.chars().take(40).collect::<String>())));
        }
        if obj.is_instance_of::<pyo3::types::PyDateTime>() {
            if obj.getattr("tzinfo")?.is_none() {
                return Err(refuse(
                    "a naive datetime (give it a timezone: its instant is unknown)".into(),
                ));
            }
            let ts: f64 = obj.call_method0("timestamp")?.extract()?;
            return seconds_from_f64("valid_until", ts.floor())
                .map(Self)
                .map_err(|e| crate::error(obj.py(), e));
        }
        Err(refuse(format!(
            "a {}",
            obj.get_type()
                .name()
                .map_or_else(|_| "?".to_owned(), |n| n.to_string())
        )))
    }
}

/// `now` for the core: the given seconds, or the system clock.
pub fn now(s: Option<Seconds>) -> i64 {
    s.map_or_else(royaltykit_host::now_unix_seconds, |s| s.0)
}

/// Headers out of a Mapping (anything with `.items()`) or an iterable of pairs; only the names
/// the core reads are kept (ASCII case-insensitively); a value is a str or a list/tuple of str.
pub struct Headers(pub Vec<(&'static str, String)>);

impl webhook::HeaderMap for Headers {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        self.0
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .for_each(|(_, v)| f(v));
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Headers {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let mut out = Vec::new();
        if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
            return Err(type_error(
                "a Mapping[str, str] or an iterable of (name, value) pairs",
                &obj,
            ));
        }
        if let Ok(dict) = obj.cast_exact::<PyDict>() {
            for (name, value) in dict.iter() {
                add(&mut out, &name, &value)?;
            }
            return Ok(Self(out));
        }
        let items = if obj.hasattr("items")? {
            obj.call_method0("items")?
        } else {
            obj.to_owned()
        };
        let iter = items.try_iter().map_err(|_| {
            type_error(
                "a Mapping[str, str] or an iterable of (name, value) pairs",
                &obj,
            )
        })?;
        for item in iter {
            let (name, value) = pair(&item?)
                .ok_or_else(|| PyTypeError::new_err("each header must be a (name, value) pair"))?;
            add(&mut out, &name, &value)?;
        }
        Ok(Self(out))
    }
}

/// A (name, value) pair given as a tuple or a list of two.
pub fn pair<'py>(item: &Bound<'py, PyAny>) -> Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let ok = (item.is_instance_of::<PyTuple>() || item.is_instance_of::<PyList>())
        && item.len().ok()? == 2;
    ok.then(|| Some((item.get_item(0).ok()?, item.get_item(1).ok()?)))
        .flatten()
}

fn add(
    out: &mut Vec<(&'static str, String)>,
    name: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let name = name
        .extract::<Text>()
        .map_err(|_| PyTypeError::new_err("header names must be str"))?;
    let mut known = webhook::HEADER_NAMES
        .iter()
        .chain(&royaltykit::RESPONSE_HEADER_NAMES);
    let Some(known) = known.find(|n| n.eq_ignore_ascii_case(&name)) else {
        return Ok(());
    };
    let value_error = |_| {
        PyTypeError::new_err(format!(
            "header {known}: values must be str or a list/tuple of str"
        ))
    };
    for v in value.extract::<Secrets>().map_err(value_error)?.0 {
        out.push((known, v));
    }
    Ok(())
}

/// Optional headers: absent or None is none.
pub fn headers_or_none(h: Option<Headers>) -> Headers {
    h.unwrap_or(Headers(Vec::new()))
}

/// What became of a `Send` or a `Reserve` (a machine's `report`), given to `f` as the core's
/// outcome: `(status, headers, body)` a response read whole, `(status, headers, length)` one
/// streamed to the host's sink (`length` an `int`), `("no_response", kind)` no response (a
/// transport failure; after a `Reserve`, Redis unreachable), `("reply", text_or_None)` the
/// fleet's reply to a `Reserve`. A `TypeError` for another shape; the body is read where it is.
pub fn with_outcome<R>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(StepOutcome<'_, Headers>) -> Result<R, ArgumentError>,
) -> PyResult<Result<R, ArgumentError>> {
    const SHAPES: &str = "a (status, headers, body) or (status, headers, length) response, \
                          ('no_response', kind) or ('reply', text)";
    let wrong = || type_error(SHAPES, &obj.as_borrowed());
    let t = obj.cast::<PyTuple>().map_err(|_| wrong())?;
    let item = |i| t.get_item(i);
    match t.len() {
        3 => {
            let (status, headers, third) = (item(0)?.extract()?, item(1)?.extract()?, item(2)?);
            let headers: &Headers = &headers;
            if third.is_instance_of::<PyInt>() && !third.is_instance_of::<pyo3::types::PyBool>() {
                let length = third.extract()?;
                return Ok(f(StepOutcome::Streamed {
                    status,
                    headers,
                    length,
                }));
            }
            let body = third.extract::<Body<'_>>()?;
            Ok(f(StepOutcome::Response {
                status,
                headers,
                body: &body,
            }))
        }
        2 => match &*item(0)?.extract::<Text>()? {
            "no_response" => {
                let kind = item(1)?.extract::<Text>()?;
                Ok(TransportFailure::parse(&kind).and_then(|k| f(StepOutcome::NoResponse(k))))
            }
            "reply" => {
                let reply = item(1)?.extract::<Option<Text>>()?;
                Ok(f(StepOutcome::Reply(reply.as_deref())))
            }
            _ => Err(wrong()),
        },
        _ => Err(wrong()),
    }
}

/// A receipt's outcome (`WebhookReceipt.report`): `"done"`, `"failed"` or `"cancelled"`, or a
/// pair `("claimed", state)`, `("marked", changed)` or `("enqueued", new)`. Another shape is a
/// `TypeError`; a name or state the core does not know is its `invalid_argument`, kept here
/// until the input runs.
pub struct ReceiptOutcomeArg(pub Result<royaltykit::machine::ReceiptOutcome, ArgumentError>);

impl<'a, 'py> FromPyObject<'a, 'py> for ReceiptOutcomeArg {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        use royaltykit::machine::ReceiptOutcome as O;
        const SHAPES: &str = "'done', 'failed', 'cancelled', ('claimed', state), ('marked', bool) \
                              or ('enqueued', bool)";
        let (kind, value) = named(&obj, SHAPES)?;
        Ok(Self(match value {
            None => O::from_parts(&kind, None, None),
            Some(v) if v.is_instance_of::<pyo3::types::PyBool>() => {
                O::from_parts(&kind, None, Some(v.extract()?))
            }
            Some(v) => {
                let state = v.extract::<Text>().map_err(|_| type_error(SHAPES, &obj))?;
                O::from_parts(&kind, Some(&state), None)
            }
        }))
    }
}

/// A machine's outcome as Python names it: a name alone, or a (name, value) pair; another shape
/// is a `TypeError` naming the accepted `shapes`.
fn named<'py>(
    obj: &Borrowed<'_, 'py, PyAny>,
    shapes: &str,
) -> PyResult<(Text, Option<Bound<'py, PyAny>>)> {
    if obj.is_instance_of::<PyString>() {
        return Ok((obj.extract::<Text>()?, None));
    }
    let t = obj.cast::<PyTuple>().map_err(|_| type_error(shapes, obj))?;
    if t.len() != 2 {
        return Err(type_error(shapes, obj));
    }
    Ok((t.get_item(0)?.extract::<Text>()?, Some(t.get_item(1)?)))
}

/// An inbox worker's outcome (`InboxWorker.report`): `"done"`, or a pair `("claimed", row)`
/// (the claim's row of five columns or an `InboxEntry`, None when nothing is due),
/// `("marked", changed)` or `("failed", message)`. Another shape is a `TypeError`; the value
/// is read by its type and the core decides whether the name takes it (`invalid_argument`),
/// kept here until the input runs.
pub(crate) struct InboxOutcomeArg(pub(crate) crate::R<royaltykit::machine::InboxOutcome>);

impl<'a, 'py> FromPyObject<'a, 'py> for InboxOutcomeArg {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        use royaltykit::machine::InboxOutcome as O;
        const SHAPES: &str =
            "'done', ('claimed', row or None), ('marked', bool) or ('failed', message)";
        let (kind, value) = named(&obj, SHAPES)?;
        let read = match value {
            None => O::from_parts(&kind, None, None, None),
            Some(v) if v.is_instance_of::<pyo3::types::PyBool>() => {
                O::from_parts(&kind, None, Some(v.extract()?), None)
            }
            Some(v) if v.is_instance_of::<PyString>() => {
                O::from_parts(&kind, None, None, Some(&v.extract::<Text>()?))
            }
            Some(v) if v.is_none() => O::from_parts(&kind, Some(None), None, None),
            Some(v) => match crate::machine::inbox_entry(&v) {
                Ok(entry) => O::from_parts(&kind, Some(Some(entry)), None, None),
                Err(e) => return Ok(Self(Err(e))),
            },
        };
        Ok(Self(read.map_err(Into::into)))
    }
}
