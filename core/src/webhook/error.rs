//! Webhook verification errors, one variant per failure, each with a stable code.

/// Why a webhook delivery was not accepted (or could not be signed).
///
/// Every variant has a stable [`code`](WebhookError::code) that is identical in the Rust, JS,
/// Python and Kotlin APIs, and a message that says what to check. Messages never contain a
/// secret or a computed signature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// A required header is absent or has only empty values. Code `missing_header`.
    #[error("missing header {header}: the request has no non-empty {header} value; is it a webhook delivery, and does your framework pass all headers through?")]
    MissingHeader {
        /// The header's canonical name.
        header: &'static str,
    },
    /// A header is present but unusable (too long, too many or conflicting values).
    /// Code `invalid_header`.
    #[error("invalid header {header}: {reason}")]
    InvalidHeader {
        /// The header's canonical name.
        header: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A secret cannot be used: none given, empty, or too long. Code `invalid_secret`.
    #[error("invalid secret: {reason}; pass the signing secret exactly as the service showed it when the subscription was created or the secret rotated")]
    InvalidSecret {
        /// Position of the offending secret in the list given, if one secret is at fault.
        index: Option<usize>,
        /// What is wrong (never the secret itself).
        reason: String,
    },
    /// The body is larger than the configured maximum. Code `payload_too_large`.
    #[error("payload too large: the body has {size} bytes, the limit is {limit} bytes (the service sends at most 256 KB; raise max_body_bytes only if you must)")]
    PayloadTooLarge {
        /// The body's size in bytes.
        size: u64,
        /// The configured limit in bytes.
        limit: u64,
    },
    /// `Service-Webhook-Timestamp` is not a decimal Unix time. Code `invalid_timestamp`.
    #[error("invalid timestamp in Service-Webhook-Timestamp: {reason}")]
    InvalidTimestamp {
        /// What is wrong with the value (the value is quoted, shortened).
        reason: String,
    },
    /// `Service-Webhook-Signature` has no usable `v1=<64 hex>` value, or too many values.
    /// Code `invalid_signature_header`.
    #[error("invalid Service-Webhook-Signature header: {reason}")]
    InvalidSignatureHeader {
        /// What is wrong with the header.
        reason: String,
    },
    /// No signature value matches any secret: a forged, tampered or wrongly-keyed request.
    /// Code `no_matching_signature`.
    #[error("no matching signature: none of the {candidates} v1 signature value(s) matches any of the {secrets} secret(s) in force{}; the body may have been altered (verify the exact raw bytes, before any JSON parsing) or the secret is wrong or rotated", expired_note(*expired))]
    NoMatchingSignature {
        /// How many well-formed `v1` values the header carried.
        candidates: usize,
        /// How many secrets were tried.
        secrets: usize,
        /// How many secrets were past their `valid_until` and not tried.
        expired: usize,
    },
    /// The signature is genuine but the timestamp is older than the tolerance allows.
    /// Code `timestamp_too_old`.
    #[error("timestamp too old: the delivery was signed {skew_seconds} s before now, the tolerance is {tolerance_seconds} s; check this host's clock if genuine deliveries fail")]
    TimestampTooOld {
        /// `now - timestamp`, in seconds (positive).
        skew_seconds: i64,
        /// The configured tolerance.
        tolerance_seconds: u64,
    },
    /// The signature is genuine but the timestamp is further in the future than the tolerance
    /// allows. Code `timestamp_too_new`.
    #[error("timestamp too new: the delivery is dated {skew_seconds} s after now, the tolerance is {tolerance_seconds} s; this host's clock is probably behind")]
    TimestampTooNew {
        /// `timestamp - now`, in seconds (positive).
        skew_seconds: i64,
        /// The configured tolerance.
        tolerance_seconds: u64,
    },
    /// The body is genuine but is not a webhook event payload. Code `invalid_payload`.
    #[error("invalid payload: {reason}")]
    InvalidPayload {
        /// What is missing or malformed.
        reason: String,
    },
    /// The event's `resource.url` is not a path under the enterprise API, so it must not be
    /// fetched with a bearer token. Code `invalid_resource_url`.
    #[error("invalid resource.url: {reason}; the canonical resource URL must be a path under the enterprise API (/api/v1/…), fetched on the API's own origin")]
    InvalidResourceUrl {
        /// What is wrong (the value is quoted, shortened).
        reason: String,
    },
    /// A subscription's create or rotate-secret response carries no signing secret the library
    /// can read. Code `secret_not_revealed`. The secret is shown once: the message never
    /// echoes the response.
    #[error("the response shows no signing secret: {reason}")]
    SecretNotRevealed {
        /// What was looked for (never a secret).
        reason: String,
    },
    /// An option or argument is out of range (tolerance, body limit, timestamp to sign).
    /// Code `invalid_argument`.
    #[error(transparent)]
    InvalidArgument(#[from] crate::ArgumentError),
}

impl WebhookError {
    /// The stable, documented error code (snake_case), the same in every language.
    pub fn code(&self) -> &'static str {
        match self {
            Self::MissingHeader { .. } => "missing_header",
            Self::InvalidHeader { .. } => "invalid_header",
            Self::InvalidSecret { .. } => "invalid_secret",
            Self::PayloadTooLarge { .. } => "payload_too_large",
            Self::InvalidTimestamp { .. } => "invalid_timestamp",
            Self::InvalidSignatureHeader { .. } => "invalid_signature_header",
            Self::NoMatchingSignature { .. } => "no_matching_signature",
            Self::TimestampTooOld { .. } => "timestamp_too_old",
            Self::TimestampTooNew { .. } => "timestamp_too_new",
            Self::InvalidPayload { .. } => "invalid_payload",
            Self::InvalidResourceUrl { .. } => "invalid_resource_url",
            Self::SecretNotRevealed { .. } => "secret_not_revealed",
            Self::InvalidArgument(e) => e.code(),
        }
    }

    /// The message for the sender of a rejected delivery (a receiver's reply body): the
    /// message itself, except that it says nothing of the receiver's configuration — how many
    /// secrets it holds, which are expired, or why its own secrets or options are unusable.
    pub fn public_message(&self) -> String {
        match self {
            Self::NoMatchingSignature { .. } => "no matching signature: the delivery is not signed with a secret this endpoint accepts, or its body was altered (the signature covers the timestamp and the exact raw body)".to_owned(),
            Self::InvalidSecret { .. } | Self::InvalidArgument(_) => {
                "this endpoint cannot verify deliveries now (its configuration is being fixed)".to_owned()
            }
            other => other.to_string(),
        }
    }

    /// The header at fault, for `missing_header`, `invalid_header`, `invalid_timestamp` and
    /// `invalid_signature_header`.
    pub fn header(&self) -> Option<&'static str> {
        match self {
            Self::MissingHeader { header } | Self::InvalidHeader { header, .. } => Some(header),
            Self::InvalidTimestamp { .. } => Some(super::HEADER_TIMESTAMP),
            Self::InvalidSignatureHeader { .. } => Some(super::HEADER_SIGNATURE),
            _ => None,
        }
    }

    /// How far the timestamp was outside the clock, in seconds, for the two timestamp errors.
    pub fn skew_seconds(&self) -> Option<i64> {
        match self {
            Self::TimestampTooOld { skew_seconds, .. }
            | Self::TimestampTooNew { skew_seconds, .. } => Some(*skew_seconds),
            _ => None,
        }
    }

    /// The limit that was exceeded: the tolerance in seconds for the timestamp errors, the body
    /// limit in bytes for `payload_too_large`.
    pub fn limit(&self) -> Option<u64> {
        match self {
            Self::TimestampTooOld {
                tolerance_seconds, ..
            }
            | Self::TimestampTooNew {
                tolerance_seconds, ..
            } => Some(*tolerance_seconds),
            Self::PayloadTooLarge { limit, .. } => Some(*limit),
            _ => None,
        }
    }
}

pub(crate) use crate::text::quote;

fn expired_note(expired: usize) -> String {
    if expired == 0 {
        String::new()
    } else {
        format!(" ({expired} more past its valid_until, no longer accepted: the rotation's overlap is over)")
    }
}
