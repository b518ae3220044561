//! The webhook event payload: `event`, `resource.{type,reference,url}`, `occurred_at`,
//! optional `replay_of`. Unknown event names are kept, never rejected.

use super::WebhookError;
use serde::Deserialize;
use std::fmt;

/// An event name. The names the spec lists are variants; any other name is kept in
/// [`EventName::Other`] so a new server event never breaks a receiver.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventName {
    /// `ddex.delivery.status_changed`
    DdexDeliveryStatusChanged,
    /// `ddex.delivery.blocked`
    DdexDeliveryBlocked,
    /// `ddex.delivery.acknowledged`
    DdexDeliveryAcknowledged,
    /// `ddex.delivery.rejected`
    DdexDeliveryRejected,
    /// `ddex.delivery.failed`
    DdexDeliveryFailed,
    /// `ddex.import.completed`
    DdexImportCompleted,
    /// `ddex.import.failed`
    DdexImportFailed,
    /// `ddex.connection.degraded`
    DdexConnectionDegraded,
    /// `enterprise.webhook.test`, sent by the subscription's test endpoint.
    EnterpriseWebhookTest,
    /// Any name the spec does not list, exactly as sent.
    Other(String),
}

pub(super) const KNOWN: [(&str, EventName); 9] = [
    (
        "ddex.delivery.status_changed",
        EventName::DdexDeliveryStatusChanged,
    ),
    ("ddex.delivery.blocked", EventName::DdexDeliveryBlocked),
    (
        "ddex.delivery.acknowledged",
        EventName::DdexDeliveryAcknowledged,
    ),
    ("ddex.delivery.rejected", EventName::DdexDeliveryRejected),
    ("ddex.delivery.failed", EventName::DdexDeliveryFailed),
    ("ddex.import.completed", EventName::DdexImportCompleted),
    ("ddex.import.failed", EventName::DdexImportFailed),
    (
        "ddex.connection.degraded",
        EventName::DdexConnectionDegraded,
    ),
    ("enterprise.webhook.test", EventName::EnterpriseWebhookTest),
];

impl EventName {
    /// Maps a wire name to a variant; unknown names become [`EventName::Other`].
    pub fn parse(name: &str) -> Self {
        KNOWN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| Self::Other(name.to_owned()))
    }

    /// The wire name, exactly as the service sends it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Other(s) => s,
            known => KNOWN
                .iter()
                .find(|(_, v)| v == known)
                .map_or("", |(n, _)| n),
        }
    }

    /// Whether the spec lists this name.
    pub fn is_known(&self) -> bool {
        !matches!(self, Self::Other(_))
    }
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Crosses to every host as the wire name (a string): unknown names are kept.
impl serde::Serialize for EventName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// From the wire name (unknown names kept), for JS handing a verified delivery back.
#[cfg(feature = "wasm")]
impl<'de> serde::Deserialize<'de> for EventName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self::parse(&String::deserialize(deserializer)?))
    }
}

#[cfg(feature = "uniffi")]
uniffi::custom_type!(EventName, String, {
    lower: |name| name.as_str().to_owned(),
    try_lift: |text| Ok(EventName::parse(&text)),
});

#[cfg(feature = "python")]
impl<'py> pyo3::IntoPyObject<'py> for &EventName {
    type Target = pyo3::types::PyString;
    type Output = pyo3::Bound<'py, pyo3::types::PyString>;
    type Error = std::convert::Infallible;
    fn into_pyobject(self, py: pyo3::Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(pyo3::types::PyString::new(py, self.as_str()))
    }
}

record! {
/// A parsed webhook event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "wasm", derive(serde::Deserialize))]
pub struct WebhookEvent {
    /// The event name (`event`), as sent.
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub name: EventName,
    /// Whether the spec lists this name.
    pub is_known: bool,
    /// True for `enterprise.webhook.test`: acknowledge it, do not act on it.
    pub is_test: bool,
    /// `resource.type`, e.g. `ddex_message`; kept as sent.
    pub resource_type: String,
    /// `resource.reference`, the resource's public reference (a UUID), kept as sent.
    pub resource_reference: String,
    /// `resource.url`: the canonical API path to fetch before any irreversible decision.
    pub resource_url: String,
    /// `occurred_at` as Unix seconds (fractions dropped), read from any ISO 8601 form a server
    /// may send (extended or basic, `Z`, `±hh:mm`, `±hhmm`, `±hh`); `None` when it cannot be
    /// read, which never fails verification of a genuine delivery (`occurred_at_text` keeps it).
    pub occurred_at: Option<i64>,
    /// `occurred_at` exactly as sent (a number as its JSON text; `""` when it is null, empty or
    /// absent); the event key uses this text.
    pub occurred_at_text: String,
    /// `replay_of`: the original delivery reference, present only on replays.
    pub replay_of: Option<String>,
}
}

impl WebhookEvent {
    /// Parses a payload. Promises: unknown members and unknown event names are accepted; an
    /// `occurred_at` that is not a readable timestamp (a number, null, empty, absent, or text
    /// in no known form) is kept as text (`occurred_at` `None`), never an error; a missing or mistyped required member, or a non-UTF-8 or
    /// non-JSON body, gives `invalid_payload` naming the member.
    pub fn parse(body: &[u8]) -> Result<Self, WebhookError> {
        let invalid = |reason: String| WebhookError::InvalidPayload { reason };
        let text = std::str::from_utf8(body).map_err(|e| {
            invalid(format!(
                "the body is not UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ))
        })?;
        let raw: RawEvent = serde_json::from_str(text).map_err(|e| invalid(describe(&e)))?;
        let require = |value: Option<String>, member: &str| {
            value
                .filter(|v| !v.is_empty())
                .ok_or_else(|| invalid(format!("member `{member}` is missing or empty")))
        };
        let resource = raw
            .resource
            .ok_or_else(|| invalid("member `resource` is missing".to_owned()))?;
        // A genuine delivery is never refused for its timestamp (a 400 on every attempt would
        // lose the event): a number is kept as its JSON text, null, empty or absent as "".
        let occurred_at_text = match raw.occurred_at {
            Some(serde_json::Value::String(s)) => s,
            Some(serde_json::Value::Null) | None => String::new(),
            Some(other) => other.to_string().chars().take(64).collect(),
        };
        let occurred_at = crate::parse_timestamp(&occurred_at_text);
        let name = EventName::parse(&require(raw.event, "event")?);
        Ok(Self {
            is_known: name.is_known(),
            is_test: name == EventName::EnterpriseWebhookTest,
            name,
            resource_type: require(resource.kind, "resource.type")?,
            resource_reference: require(resource.reference, "resource.reference")?,
            resource_url: require(resource.url, "resource.url")?,
            occurred_at,
            occurred_at_text,
            replay_of: raw.replay_of.filter(|s| !s.is_empty()),
        })
    }
}

/// The enterprise API's path prefix: a canonical resource URL lies under it.
const ENTERPRISE_PREFIX: &str = "/api/v1/";
/// Longest resource path accepted.
const MAX_RESOURCE_PATH_BYTES: usize = 2048;

impl WebhookEvent {
    /// `resource.url` as the path to fetch (the spec: "fetch the canonical resource URL with a
    /// bearer token" before an irreversible decision), checked, because the event could name
    /// any URL and the token must go nowhere else. Promises the path only when it is a path
    /// under the enterprise API (`/api/v1/…`, at most 2048 bytes): no scheme, no authority
    /// (`//host`), no query or fragment, no dot segment (`.` or `..`, percent-encoded too), no
    /// backslash or encoded slash, no space or control character. Anything else is
    /// `invalid_resource_url`. Request it on the enterprise API's own base URL.
    pub fn resource_path(&self) -> Result<&str, WebhookError> {
        resource_path(&self.resource_url)
    }
}

/// A `resource.url` checked as [`WebhookEvent::resource_path`] checks it: `url` itself when it is
/// a path under the enterprise API, else `invalid_resource_url`.
pub fn resource_path(url: &str) -> Result<&str, WebhookError> {
    {
        let bad = |why: &str| WebhookError::InvalidResourceUrl {
            reason: format!("{} {why}", crate::text::quote(url)),
        };
        if url.len() > MAX_RESOURCE_PATH_BYTES {
            return Err(bad("is longer than 2048 bytes"));
        }
        if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(bad("has a space or a control character"));
        }
        if url.contains('\\') {
            return Err(bad("has a backslash"));
        }
        if url.contains(['?', '#']) {
            return Err(bad("has a query or a fragment"));
        }
        let Some(rest) = url.strip_prefix(ENTERPRISE_PREFIX) else {
            return Err(bad(if url.contains("://") || url.starts_with("//") {
                "names another origin"
            } else {
                "is not a path under /api/v1/"
            }));
        };
        let segments: Vec<&str> = rest.split('/').collect();
        let last = segments.len().saturating_sub(1);
        for (i, segment) in segments.into_iter().enumerate() {
            let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
            if decoded == "." || decoded == ".." {
                return Err(bad("has a dot segment"));
            }
            if decoded.contains(['/', '\\']) {
                return Err(bad("has an encoded slash or backslash"));
            }
            // A trailing slash is a path; an empty segment elsewhere (`//`) is not one a
            // canonical URL has.
            if segment.is_empty() && (i != last || i == 0) {
                return Err(bad("has an empty segment"));
            }
        }
        Ok(url)
    }
}

#[derive(Deserialize)]
struct RawEvent {
    event: Option<String>,
    resource: Option<RawResource>,
    occurred_at: Option<serde_json::Value>,
    replay_of: Option<String>,
}

#[derive(Deserialize)]
struct RawResource {
    #[serde(rename = "type")]
    kind: Option<String>,
    reference: Option<String>,
    url: Option<String>,
}

/// A serde_json error as a message that names the problem and position but never echoes more
/// than a few characters of the payload.
fn describe(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match e.classify() {
        Category::Syntax => "the body is not valid JSON",
        Category::Eof => "the body is truncated JSON",
        Category::Data => "a member has the wrong type (the payload must be an object with string members event, resource.type, resource.reference, resource.url)",
        Category::Io => "the body could not be read",
    };
    format!("{what} (line {}, column {})", e.line(), e.column())
}
