//! A webhook receiver's rules, shared by every framework integration (Node's Express, Fastify
//! and fetch handlers, Python's ASGI, Flask and Django views, the JVM's `WebhookReceiver`):
//! which keys a verified delivery is claimed under, what the claims' states mean, and the status
//! to answer at each step. The integrations do the I/O (read the raw body, call the dedup store
//! and the handler) and decide nothing themselves.
//!
//! The flow, two-phase because the service redelivers until it gets a 2xx (DESIGN §2):
//!
//! 1. verify the delivery; a failure is answered with its error's `http_status`;
//! 2. [`plan_receipt`]: acknowledge a test event, or claim the keys it names, in order, stopping
//!    at the first that is not `new` (the first key then acts as the delivery's lock: two
//!    workers racing for the same delivery never split its keys between them);
//! 3. [`decide_claims`]: release the claims it names, then either answer its status (200 for a
//!    delivery already processed, [`STATUS_IN_PROGRESS`] while another worker processes it), or
//! 4. run the handler: on success commit every key (each commit tried up to
//!    [`COMMIT_ATTEMPTS`] times, [`COMMIT_RETRY_DELAY_MS`] apart) and answer
//!    [`STATUS_PROCESSED`]; on failure release every key and answer [`STATUS_HANDLER_FAILED`],
//!    so the redelivery is processed;
//! 5. a store that cannot be reached is answered [`STATUS_STORE_UNAVAILABLE`]: the service
//!    redelivers, and nothing is lost.
//!
//! The guarantee, precisely: every genuine delivery is processed **at least once**. With a store
//! apart from the handler's effects (the in-memory window, Redis), a commit that still fails
//! after its retries, or a process killed between the effect and the commit, means the
//! redelivery runs the handler again. Processing is exactly once when the handler is idempotent
//! (the spec asks consumers to apply the resource's current state idempotently) or when the
//! dedup mark commits in the same database transaction as the effect.

use crate::dedup::{self, ClaimState};
use crate::webhook::{EventName, VerifiedWebhook};
use crate::ArgumentError;

/// The handler stored the event and every key is committed.
pub const STATUS_PROCESSED: u16 = 200;
/// The handler failed: every claim is released and the service's redelivery is processed.
pub const STATUS_HANDLER_FAILED: u16 = 500;
/// Another worker holds a live claim on the delivery: the service redelivers later.
pub const STATUS_IN_PROGRESS: u16 = 503;
/// The dedup store could not be reached: nothing was processed; the service redelivers.
pub const STATUS_STORE_UNAVAILABLE: u16 = 503;

/// How many times a receiver tries each commit before answering [`STATUS_STORE_UNAVAILABLE`]:
/// the effect is already stored, so a transient store failure is worth retrying rather than
/// having the whole delivery processed again after the lease.
pub const COMMIT_ATTEMPTS: u32 = 3;
/// The pause between two attempts of one commit, in milliseconds.
pub const COMMIT_RETRY_DELAY_MS: u32 = 100;

/// The `result` of a delivery processed and committed.
const PROCESSED: &str = "processed";

string_enum! {
    /// What a receiver does next.
    pub enum ReceiverStep as "step" {
        /// Claim the keys ([`plan_receipt`]), or every claim was new ([`decide_claims`]): run
        /// the handler, then commit every key (or release them all when it fails).
        Process = "process",
        /// Answer `status` (200) without running the handler: a test event, or a delivery
        /// already processed (this delivery, or the same signed content under another id).
        Acknowledge = "acknowledge",
        /// Another worker is processing it: answer `status` (503) so the service redelivers.
        RetryLater = "retry_later",
    }
}

record! {
/// What a receiver does with a verified delivery ([`plan_receipt`]) and after claiming its
/// keys ([`decide_claims`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiverDecision {
    /// What to do next.
    pub step: ReceiverStep,
    /// The status to answer; for `process`, the one to answer once the handler succeeded and
    /// every key is committed.
    pub status: u16,
    /// The keys to claim, in order (from [`plan_receipt`]; empty from [`decide_claims`]).
    pub keys: Vec<String>,
    /// Positions, in the keys claimed, of the claims to release now: the new ones of a delivery
    /// that is not processed, so they hold no key they will never commit (from
    /// [`decide_claims`]; empty from [`plan_receipt`]).
    pub release: Vec<u32>,
    /// The JSON body to answer with `status` (`{"result": …}`); for `process`, the one to
    /// answer once the handler succeeded and every key is committed.
    pub body: String,
    /// For `process`: how many times to try each commit before answering
    /// [`STATUS_STORE_UNAVAILABLE`] ([`COMMIT_ATTEMPTS`]); 0 otherwise.
    pub commit_attempts: u32,
    /// For `process`: the pause between two attempts of one commit, in milliseconds
    /// ([`COMMIT_RETRY_DELAY_MS`]); 0 otherwise.
    pub commit_retry_delay_ms: u32,
    /// Why, for logs.
    pub reason: String,
}
}

string_enum! {
    /// Why a receiver could not finish a verified delivery.
    pub enum ReceiverFailure as "failure" {
        /// The handler failed: every claim was released ([`STATUS_HANDLER_FAILED`]).
        HandlerFailed = "handler_failed",
        /// The dedup store could not be reached ([`STATUS_STORE_UNAVAILABLE`]).
        StoreUnavailable = "store_unavailable",
        /// The host was cancelled mid-delivery (a cancelled task, an interrupt, an aborted
        /// request): any transaction rolled back and the claims taken released, unless a plain
        /// receipt's effect already stands (see `machine::WebhookReceipt::cancelled`)
        /// ([`STATUS_STORE_UNAVAILABLE`], so the service redelivers).
        Cancelled = "cancelled",
    }
}

record! {
/// A status and the JSON body to answer with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiverReply {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body (`application/json`).
    pub body: String,
}
}

/// The store a receiver uses when none is given: a dedup window of this many keys (one process).
/// A delivery holds one key (two when the receiver also claims content keys, and the window
/// then remembers half as many deliveries).
pub const DEFAULT_STORE_CAPACITY: u32 = 100_000;

fn json_body(field: &str, value: &str, message: Option<&str>) -> String {
    let mut body = serde_json::Map::new();
    body.insert(field.to_owned(), value.into());
    if let Some(m) = message {
        body.insert("message".to_owned(), m.into());
    }
    serde_json::Value::Object(body).to_string()
}

/// The answer when a verified delivery could not be finished. Promises: `handler_failed` is
/// [`STATUS_HANDLER_FAILED`] and `store_unavailable` [`STATUS_STORE_UNAVAILABLE`], each with the
/// body `{"error":"<failure>"}`.
pub fn failure_reply(failure: ReceiverFailure) -> ReceiverReply {
    ReceiverReply {
        status: match failure {
            ReceiverFailure::HandlerFailed => STATUS_HANDLER_FAILED,
            ReceiverFailure::StoreUnavailable | ReceiverFailure::Cancelled => {
                STATUS_STORE_UNAVAILABLE
            }
        },
        body: json_body("error", failure.as_str(), None),
    }
}

/// The body answering a delivery that failed verification (with the error's `http_status`):
/// `{"error":"<code>","message":"<message>"}`.
pub fn rejection_body(code: &str, message: &str) -> String {
    json_body("error", code, Some(message))
}

/// What to do with a verified delivery. Promises: for `enterprise.webhook.test`, `acknowledge`
/// with 200 and no keys (the spec's test endpoint: acknowledge it, act on nothing); otherwise
/// `process` with the keys to claim, in this order: the delivery key (the spec: "deduplicate by
/// Service-Webhook-Id"; redeliveries of the same delivery), and, only with
/// `claim_content_key`, the content key.
///
/// The content key is opt-in, with its trade-off: it stops a captured delivery resent under a
/// new `Service-Webhook-Id` inside the tolerance (the signature does not cover the id), and it
/// also merges two genuine deliveries whose body and timestamp are byte-identical (two changes
/// of one resource in the same second): the second is acknowledged and its handler never runs.
/// By default every new `Service-Webhook-Id` is processed, as the spec says, and the handler
/// applies the resource's current state idempotently. The event key is never claimed: an
/// operator replay gets a new `Service-Webhook-Id` on purpose and must be processed
/// ([`dedup::event_key`] stays available to hosts that choose to collapse replays).
/// `invalid_argument` for an empty or over-long namespace.
pub fn plan_receipt(
    namespace: &str,
    delivery: &VerifiedWebhook,
    claim_content_key: bool,
) -> Result<ReceiverDecision, ArgumentError> {
    let mut keys = vec![dedup::delivery_key(namespace, &delivery.delivery_id)?];
    if claim_content_key {
        keys.push(delivery.content_key.clone());
    }
    Ok(if delivery.event.name == EventName::EnterpriseWebhookTest {
        ReceiverDecision {
            step: ReceiverStep::Acknowledge,
            status: STATUS_PROCESSED,
            keys: Vec::new(),
            release: Vec::new(),
            body: json_body("result", ReceiverStep::Acknowledge.as_str(), None),
            commit_attempts: 0,
            commit_retry_delay_ms: 0,
            reason: "test event (enterprise.webhook.test): acknowledged, not processed".to_owned(),
        }
    } else {
        ReceiverDecision {
            step: ReceiverStep::Process,
            status: STATUS_PROCESSED,
            keys,
            release: Vec::new(),
            body: json_body("result", PROCESSED, None),
            commit_attempts: COMMIT_ATTEMPTS,
            commit_retry_delay_ms: COMMIT_RETRY_DELAY_MS,
            reason: if claim_content_key {
                "claim the delivery and content keys"
            } else {
                "claim the delivery key"
            }
            .to_owned(),
        }
    })
}

/// What the states of a delivery's claims mean: the states of the keys claimed so far, in the
/// order of [`plan_receipt`]'s keys, up to and including the first that is not `new`.
/// Promises: `process` with 200 (and the commit attempts) when every state is `new`; otherwise `retry_later` with 503
/// when any is `in_progress`, else `acknowledge` with 200; in both, the positions of the `new`
/// ones to release. No states at all is `process`.
pub fn decide_claims(states: &[ClaimState]) -> ReceiverDecision {
    let decision = |step, status, reason: &str| ReceiverDecision {
        step,
        status,
        keys: Vec::new(),
        release: (0u32..)
            .zip(states)
            .filter(|(_, s)| **s == ClaimState::New && step != ReceiverStep::Process)
            .map(|(i, _)| i)
            .collect(),
        body: json_body(
            "result",
            match step {
                ReceiverStep::Process => PROCESSED,
                other => other.as_str(),
            },
            None,
        ),
        commit_attempts: if step == ReceiverStep::Process {
            COMMIT_ATTEMPTS
        } else {
            0
        },
        commit_retry_delay_ms: if step == ReceiverStep::Process {
            COMMIT_RETRY_DELAY_MS
        } else {
            0
        },
        reason: reason.to_owned(),
    };
    if states.iter().all(|s| *s == ClaimState::New) {
        decision(
            ReceiverStep::Process,
            STATUS_PROCESSED,
            "new delivery: process it, then commit",
        )
    } else if states.contains(&ClaimState::InProgress) {
        decision(
            ReceiverStep::RetryLater,
            STATUS_IN_PROGRESS,
            "another worker is processing it; the service redelivers",
        )
    } else {
        decision(
            ReceiverStep::Acknowledge,
            STATUS_PROCESSED,
            "already processed (a redelivery, or the same signed content under another id)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ClaimState::{Done, InProgress, New};

    #[test]
    fn claims() {
        let d = decide_claims(&[New, New, New]);
        assert_eq!(
            (d.step, d.status, d.release),
            (ReceiverStep::Process, 200, vec![])
        );
        let d = decide_claims(&[New, New, Done]);
        assert_eq!(
            (d.step, d.status, d.release),
            (ReceiverStep::Acknowledge, 200, vec![0, 1])
        );
        let d = decide_claims(&[Done, InProgress, New]);
        assert_eq!(
            (d.step, d.status, d.release),
            (ReceiverStep::RetryLater, 503, vec![2])
        );
        assert_eq!(decide_claims(&[]).step, ReceiverStep::Process);
    }

    #[test]
    fn replies() {
        assert_eq!(decide_claims(&[New]).body, r#"{"result":"processed"}"#);
        assert_eq!(decide_claims(&[Done]).body, r#"{"result":"acknowledge"}"#);
        assert_eq!(
            decide_claims(&[InProgress]).body,
            r#"{"result":"retry_later"}"#
        );
        let r = failure_reply(ReceiverFailure::HandlerFailed);
        assert_eq!(
            (r.status, r.body.as_str()),
            (500, r#"{"error":"handler_failed"}"#)
        );
        let r = failure_reply(ReceiverFailure::StoreUnavailable);
        assert_eq!(
            (r.status, r.body.as_str()),
            (503, r#"{"error":"store_unavailable"}"#)
        );
        let r = failure_reply(ReceiverFailure::Cancelled);
        assert_eq!(
            (r.status, r.body.as_str()),
            (503, r#"{"error":"cancelled"}"#)
        );
        assert_eq!(
            rejection_body("invalid_signature", "no \"v1\" matched"),
            r#"{"error":"invalid_signature","message":"no \"v1\" matched"}"#
        );
    }
}
