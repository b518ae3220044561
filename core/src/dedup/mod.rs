//! Dedup and idempotency keys, and a bounded in-memory dedup window.
//!
//! Every key is `<prefix>_` followed by 64 lowercase hex characters of SHA-256 over
//! length-prefixed fields (each field: its byte length as 8 bytes big-endian, then the bytes),
//! starting with a domain tag. The encoding is unambiguous (no two field lists give the same
//! bytes), stable across languages and versions, and documented so any implementation can
//! reproduce it.
//!
//! | key | prefix | fields after the tag |
//! |---|---|---|
//! | delivery | `dlv` | namespace, `Service-Webhook-Id` |
//! | content | `cnt` | HMAC-SHA256 of `<timestamp>.<body>` under the first secret (32 bytes) |
//! | event | `evt` | namespace, event name, resource type, resource reference, `occurred_at` as sent |
//! | idempotency | `idem` | namespace (tenant or organization), operation id, the caller's request id |
//!
//! A random idempotency key (the default for a request without a request id) is `idem_` and 32
//! hex characters of 128 random bits from the host.
//!
//! Why two webhook keys are claimed: `Service-Webhook-Id` is not covered by the signature, so
//! someone who captured a genuine delivery can resend it under a fresh id within the tolerance
//! window; the content key is derived from what *is* signed, so checking it too stops that
//! resend. The event key is only a hint: an operator replay (`replay_of`) gets a new id on
//! purpose and must be processed (the spec dedups by `Service-Webhook-Id`; the consumer applies
//! the resource's current state idempotently), and two different changes of one resource
//! stamped the same second share an event key, so claiming it would drop one of them.

mod inbox;
mod redis;
mod redis_inbox;
mod sql;
mod window;

pub(crate) use inbox::cut;
pub use inbox::{
    handler_error_text, InboxEntry, SqlInbox, DEFAULT_INBOX_TABLE, DEFAULT_MAX_ATTEMPTS,
    DEFAULT_POISON_LISTED, MAX_ERROR_BYTES, MAX_INBOX_BODY_BYTES, MAX_POISON_LISTED,
};
pub use redis::{RedisDedup, COMMIT_SCRIPT, DEFAULT_REDIS_PREFIX, RELEASE_SCRIPT};
pub use redis_inbox::{
    InboxCounts, InboxPoisonEntry, RedisInbox, CLAIM_SCRIPT, COUNTS_SCRIPT,
    DEFAULT_REDIS_INBOX_PREFIX, ENQUEUE_SCRIPT, MARK_SCRIPT, POISONED_SCRIPT, PURGE_SCRIPT,
    REDIS_INBOX_GROUP, RETRY_SCRIPT, SETTLE_SCRIPT,
};
pub use sql::{ParamStyle, SqlDedup, SqlDialect, SqlStatement, DEFAULT_SQL_TABLE};

pub use window::{
    ClaimState, DedupWindow, DEFAULT_DEDUP_TTL_SECONDS, DEFAULT_LEASE_SECONDS, MAX_CAPACITY,
    MAX_KEY_BYTES,
};

use crate::keyhash::{content_key_from_mac, hash_fields};
use crate::webhook::{WebhookError, WebhookEvent};
use crate::ArgumentError;

const TAG_DELIVERY: &[u8] = b"royaltykit/delivery/v1";
const TAG_EVENT: &[u8] = b"royaltykit/event/v1";
const TAG_IDEMPOTENCY: &[u8] = b"royaltykit/idempotency/v2";

/// Longest namespace, tenant or operation id accepted, in bytes.
pub const MAX_NAME_BYTES: usize = 1024;

fn name_arg(name: &'static str, value: &str) -> Result<(), ArgumentError> {
    if value.is_empty() {
        return Err(ArgumentError::new(name, "must not be empty"));
    }
    if value.len() > MAX_NAME_BYTES {
        return Err(ArgumentError::new(
            name,
            format!("must be at most {MAX_NAME_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// The delivery key: `Service-Webhook-Id` inside a namespace the host chooses (organization,
/// subscription or tenant), so one shared store never mixes tenants. A replay has a new
/// delivery id and so a new delivery key. Promises: `invalid_argument` for an empty or
/// over-long namespace or delivery id.
pub fn delivery_key(namespace: &str, delivery_id: &str) -> Result<String, ArgumentError> {
    name_arg("namespace", namespace)?;
    name_arg("delivery_id", delivery_id)?;
    Ok(hash_fields(
        "dlv",
        TAG_DELIVERY,
        &[namespace.as_bytes(), delivery_id.as_bytes()],
    ))
}

/// The content key of a delivery: derived from the HMAC-SHA256 of `<timestamp>.<body>` under
/// `secret` — the same value [`crate::webhook::VerifiedWebhook::content_key`] carries when
/// `secret` is the first secret given to verification. It depends only on what the signature
/// covers, so a captured delivery resent under a new `Service-Webhook-Id` keeps its content key.
/// Keep the current secret first when verifying, so the key does not change with the order.
/// Promises: `invalid_secret` for an unusable secret.
pub fn content_key(secret: &str, timestamp: &str, body: &[u8]) -> Result<String, WebhookError> {
    let mac = crate::webhook::mac_with_secret(secret.as_bytes(), timestamp, body)?;
    Ok(content_key_from_mac(&mac))
}

/// The event key: the event's identity (name, resource type, resource reference, `occurred_at`
/// as sent) inside a namespace. An original delivery and its replay (`replay_of`) have the same
/// event key. A hint for a host that deliberately collapses replays, never a dedup key to claim
/// by default: two different changes of one resource in the same second share it too. Promises:
/// `invalid_argument` for an empty or over-long namespace.
pub fn event_key(namespace: &str, event: &WebhookEvent) -> Result<String, ArgumentError> {
    event_key_parts(
        namespace,
        event.name.as_str(),
        &event.resource_type,
        &event.resource_reference,
        &event.occurred_at_text,
    )
}

/// [`event_key`] from the fields themselves, for hosts that store events rather than
/// [`WebhookEvent`] values.
pub fn event_key_parts(
    namespace: &str,
    name: &str,
    resource_type: &str,
    resource_reference: &str,
    occurred_at: &str,
) -> Result<String, ArgumentError> {
    name_arg("namespace", namespace)?;
    Ok(hash_fields(
        "evt",
        TAG_EVENT,
        &[
            namespace.as_bytes(),
            name.as_bytes(),
            resource_type.as_bytes(),
            resource_reference.as_bytes(),
            occurred_at.as_bytes(),
        ],
    ))
}

/// The deterministic idempotency key of one **logical request**, from an id the caller gave
/// that request: (namespace — the tenant or organization the key is scoped to —, operation id,
/// request id). Every retry of the request passes the same request id and gets the same key (a
/// job restarted after a crash can recompute it); two deliberately identical requests get two
/// request ids and never share a key, so the second is applied rather than answered as a
/// replay. The key is 69 ASCII characters. Promises: `invalid_argument` for an empty or
/// over-long namespace, operation id or request id.
pub fn idempotency_key(
    namespace: &str,
    operation_id: &str,
    request_id: &str,
) -> Result<String, ArgumentError> {
    name_arg("namespace", namespace)?;
    name_arg("operation_id", operation_id)?;
    name_arg("request_id", request_id)?;
    Ok(hash_fields(
        "idem",
        TAG_IDEMPOTENCY,
        &[
            namespace.as_bytes(),
            operation_id.as_bytes(),
            request_id.as_bytes(),
        ],
    ))
}

/// A random idempotency key for one logical request: `idem_` and the 32 lowercase hex
/// characters of 128 random bits from the host's RNG (the default when the caller gives no
/// request id, as Stripe does). Keep it with the request and send it on every retry.
pub fn random_idempotency_key(random: [u8; 16]) -> String {
    let mut hex = [0u8; 32];
    // 16 bytes always fit 32 hex characters.
    let _ = hex::encode_to_slice(random, &mut hex);
    format!("idem_{}", std::str::from_utf8(&hex).unwrap_or_default())
}
