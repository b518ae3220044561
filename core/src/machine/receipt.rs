//! [`WebhookReceipt`]: one webhook delivery, from the verification result to the reply, as a machine
//! that performs no I/O. The host claims, releases and commits keys in its dedup store and runs
//! its handler when the receipt says so, and reports each outcome back; every rule (which keys,
//! in which order, what a claim's state means, how often a commit is tried, which status to
//! answer) is the receiver module's ([`crate::receiver`]).
//!
//! A host's loop, whatever its framework: each step performed, what became of it reported
//! with the receipt's one input, [`WebhookReceipt::report`] (what a failure means at each step,
//! such as a failed release being as good as done, is the receipt's to decide):
//!
//! ```text
//! let mut receipt = receiver.receive(&headers, &body, now);
//! loop {
//!     let outcome = match receipt.next() {
//!         ReceiptStep::Claim { key } => store.claim(&key).map_or(Failed, Claimed),
//!         ReceiptStep::Release { key } => store.release(&key).map_or(Failed, |_| Done),
//!         ReceiptStep::RunHandler {} => handler(receipt.delivery()).map_or(Failed, |_| Done),
//!         ReceiptStep::Commit { key, .. } => store.commit(&key).map_or(Failed, |_| Done),
//!         ReceiptStep::Wait { seconds } => { sleep(seconds); Done }
//!         ReceiptStep::Reply { status, body } => return (status, body),
//!         // a transactional or inbox receipt: Begin, CommitTransaction, Rollback, Enqueue
//!     };
//!     receipt.report(outcome)?;
//! }
//! ```
//!
//! **Cancellation.** A host whose work is cancelled while a step is in flight (a cancelled task,
//! an interrupt, an aborted request) reports [`ReceiptOutcome::Cancelled`] instead of the step's
//! outcome, then performs what follows — only `Rollback` and `Release` steps, never new work —
//! up to the `Reply`, and lets the cancellation go on. The claims taken are released and an open
//! transaction is rolled back, so the service's redelivery is processed (a claim in flight, if
//! the store took it, runs out with its lease: releasing a key this receipt may not hold could
//! free another worker's claim in a store that does not check).
//!
//! A **transactional** receipt ([`WebhookReceipt::transactional`]) is for a dedup table in the
//! handler's own database ([`crate::dedup::SqlDedup`]): after the claims it asks the host to
//! `Begin` a transaction, `RunHandler` with that transaction, `Commit` (mark done) each key
//! **inside** it, then `CommitTransaction`; a failure anywhere is a `Rollback`, then the claims
//! released. The mark and the effect commit together or not at all: exactly once. The marks
//! come after the handler so that the rows are locked only for the instant before the commit:
//! a redelivery arriving meanwhile is answered at once instead of waiting on the lock.

use super::unexpected;
use crate::dedup::{ClaimState, DedupWindow};
use crate::receiver::{
    decide_claims, failure_reply, plan_receipt, rejection_body, ReceiverFailure, ReceiverStep,
};
use crate::webhook::{
    VerifiedWebhook, VerifyOptions, WebhookError, WebhookSecret, WebhookVerifier,
};
use crate::{ArgumentError, HeaderMap};

step_enum! {
/// What the host does next for a delivery (derived for every binding: see `step_enum!`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum ReceiptStep {
    /// Claim `key` in the dedup store, then report [`WebhookReceipt::claimed`] with its state, or
    /// [`WebhookReceipt::store_failed`] when the store could not be reached.
    Claim {
        /// The key to claim.
        key: String,
    },
    /// Give up this worker's claim on `key`, then report [`WebhookReceipt::released`] (a failed
    /// release is reported the same way: the claim's lease runs out on its own).
    Release {
        /// The key to release.
        key: String,
    },
    /// Run the handler with [`WebhookReceipt::delivery`], then report
    /// [`WebhookReceipt::handler_succeeded`] or [`WebhookReceipt::handler_failed`].
    RunHandler {},
    /// Mark `key` processed, then report [`WebhookReceipt::committed`] or [`WebhookReceipt::store_failed`]
    /// (in a transactional receipt: inside the open transaction, and
    /// [`WebhookReceipt::claim_lost`] when the row no longer holds this claim).
    Commit {
        /// The key to commit.
        key: String,
        /// Which attempt of this commit it is (1 to [`crate::receiver::COMMIT_ATTEMPTS`]).
        attempt: u32,
    },
    /// Pause `seconds` before the next attempt of a commit, then report [`WebhookReceipt::waited`].
    Wait {
        /// How long, in seconds.
        seconds: f64,
    },
    /// (Transactional receipts.) Open the transaction the marks and the handler's effect
    /// share, then report [`WebhookReceipt::began`] or [`WebhookReceipt::store_failed`].
    Begin {},
    /// (Transactional receipts.) Commit the transaction, then report
    /// [`WebhookReceipt::transaction_committed`] or [`WebhookReceipt::store_failed`].
    CommitTransaction {},
    /// (Transactional receipts.) Roll the transaction back, then report
    /// [`WebhookReceipt::rolled_back`] (a failed rollback too: the database rolls back a transaction
    /// whose connection is gone).
    Rollback {},
    /// (Inbox receipts.) Persist the verified delivery under `key` in the inbox — its
    /// `Service-Webhook-Id`, event name and the raw body as received — then report
    /// [`WebhookReceipt::enqueued`] or [`WebhookReceipt::store_failed`].
    Enqueue {
        /// The delivery key.
        key: String,
    },
    /// Answer `status` with the JSON `body`: the delivery is finished.
    Reply {
        /// The HTTP status.
        status: u16,
        /// The JSON body (`application/json`).
        body: String,
    },
}
}

/// What became of the step a [`WebhookReceipt`] gave the host: its one input
/// ([`WebhookReceipt::report`]). Kotlin takes it as it is (a sealed class); Python names it
/// ([`ReceiptOutcome::from_parts`]) and Node gives its JSON ([`ReceiptOutcome::from_json`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum ReceiptOutcome {
    /// The step was performed: a `Release`, `Begin`, `CommitTransaction`, `Rollback` or `Wait`,
    /// the handler (`RunHandler`), or a plain receipt's `Commit`.
    Done,
    /// A `Claim`'s answer: the state the store gave the key.
    Claimed(ClaimState),
    /// A transactional receipt's `Commit` (the mark inside the transaction): whether it changed
    /// a row (`false`: the claim's lease ran out and another worker took the key).
    Marked(bool),
    /// An `Enqueue`'s answer: whether the delivery was new to the inbox.
    Enqueued(bool),
    /// The step failed: the store could not be reached, or the handler failed. A failed
    /// `Release` or `Rollback` is as good as done (a claim's lease runs out; the database rolls
    /// back a transaction whose connection is gone).
    Failed,
    /// The host was cancelled while the step was in flight (see
    /// [`WebhookReceipt::cancelled`]).
    Cancelled,
}

impl ReceiptOutcome {
    /// The forms [`ReceiptOutcome::from_parts`] accepts, as its refusal names them.
    const FORMS: &'static str = "`done`, `failed` or `cancelled` alone, `claimed` with the \
        claim's state (`new`, `in_progress`, `done`), or `marked` or `enqueued` with true or false";

    /// The outcome a binding names: `done`, `failed` and `cancelled` alone (no `state`, no
    /// `flag`); `claimed` with the claim's `state` (`new`, `in_progress`, `done`); `marked` and
    /// `enqueued` with their `flag`. Anything else is `invalid_argument` on `outcome`, naming
    /// the accepted forms (an unknown state: the states).
    pub fn from_parts(
        kind: &str,
        state: Option<&str>,
        flag: Option<bool>,
    ) -> Result<Self, ArgumentError> {
        match (kind, state, flag) {
            ("done", None, None) => Ok(Self::Done),
            ("failed", None, None) => Ok(Self::Failed),
            ("cancelled", None, None) => Ok(Self::Cancelled),
            ("claimed", Some(state), None) => ClaimState::parse(state).map(Self::Claimed),
            ("marked", None, Some(changed)) => Ok(Self::Marked(changed)),
            ("enqueued", None, Some(new)) => Ok(Self::Enqueued(new)),
            _ => Err(Self::unknown()),
        }
    }

    /// The outcome from its JSON: `"done"`, `"failed"`, `"cancelled"`, `{"claimed": state}`,
    /// `{"marked": bool}` or `{"enqueued": bool}`. Anything else is `invalid_argument` on
    /// `outcome`, naming the accepted forms (never echoing the text).
    pub fn from_json(json: &str) -> Result<Self, ArgumentError> {
        serde_json::from_str(json).map_err(|_| Self::unknown())
    }

    /// The refusal of an outcome that is none of the forms.
    fn unknown() -> ArgumentError {
        ArgumentError::new("outcome", format!("a receipt's outcome is {}", Self::FORMS))
    }
}

/// Where a receipt is.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// Claiming `keys[claimed]`.
    Claiming,
    /// Releasing `to_release[0]`, then answering `reply`.
    Releasing {
        to_release: Vec<String>,
        reply: (u16, String),
    },
    /// Waiting for the handler.
    Handling,
    /// Committing `keys[index]`, attempt `attempt`.
    Committing { index: usize, attempt: u32 },
    /// Pausing before attempt `attempt` of the commit of `keys[index]`.
    Pausing { index: usize, attempt: u32 },
    /// (Transactional.) Opening the transaction.
    Beginning,
    /// (Transactional.) Committing the transaction.
    CommittingTransaction,
    /// (Transactional.) Rolling back, then releasing `to_release` and answering `reply`.
    RollingBack {
        to_release: Vec<String>,
        reply: (u16, String),
    },
    /// (Inbox.) Persisting the delivery.
    Enqueuing,
    /// Finished.
    Replied(u16, String),
}

/// One webhook delivery in progress (see the module documentation). Built by
/// [`WebhookReceiver::receive`] or [`WebhookReceipt::new`]; it is not serialisable (a delivery lasts one
/// request: a crash is answered by the service's redelivery). Two receipts are equal when they
/// are at the same point of the same delivery.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookReceipt {
    delivery: Option<VerifiedWebhook>,
    keys: Vec<String>,
    claimed: usize,
    commit_attempts: u32,
    commit_delay_seconds: f64,
    success: (u16, String),
    transactional: bool,
    phase: Phase,
    /// What the reply says happened (see [`WebhookReceipt::outcome`]), set with the reply.
    outcome: &'static str,
}

impl WebhookReceipt {
    /// A receipt for a delivery that was verified (or was not: it is then answered with the
    /// error's `http_status` and `{"error": code, "message": …}` at once, the message saying
    /// nothing of the receiver's configuration). Promises the first step: `Reply` for a
    /// rejected delivery and for a test event, otherwise `Claim` of the delivery key (and of
    /// the content key after it with `claim_content_key`: see [`plan_receipt`]);
    /// `invalid_argument` for an empty or over-long namespace.
    pub fn new(
        namespace: &str,
        verified: Result<VerifiedWebhook, WebhookError>,
        claim_content_key: bool,
    ) -> Result<Self, ArgumentError> {
        let delivery = match verified {
            Ok(d) => d,
            Err(e) => {
                let reply = (
                    crate::RoyaltyKitError::from(e.clone()).http_status(),
                    rejection_body(e.code(), &e.public_message()),
                );
                return Ok(Self::finished(None, reply, "rejected"));
            }
        };
        let plan = plan_receipt(namespace, &delivery, claim_content_key)?;
        if plan.step != ReceiverStep::Process {
            return Ok(Self::finished(
                Some(delivery),
                (plan.status, plan.body),
                "acknowledged",
            ));
        }
        Ok(Self {
            delivery: Some(delivery),
            keys: plan.keys,
            claimed: 0,
            commit_attempts: plan.commit_attempts.max(1),
            commit_delay_seconds: f64::from(plan.commit_retry_delay_ms) / 1000.0,
            success: (plan.status, plan.body),
            transactional: false,
            phase: Phase::Claiming,
            outcome: "",
        })
    }

    fn finished(
        delivery: Option<VerifiedWebhook>,
        reply: (u16, String),
        outcome: &'static str,
    ) -> Self {
        Self {
            delivery,
            keys: Vec::new(),
            claimed: 0,
            commit_attempts: 0,
            commit_delay_seconds: 0.0,
            success: reply.clone(),
            transactional: false,
            phase: Phase::Replied(reply.0, reply.1),
            outcome,
        }
    }

    /// Once the receipt has replied, what happened, for logs and metrics: `processed` (the
    /// handler ran and its effect is marked done), `duplicate` (already processed),
    /// `in_progress` (another worker holds it: 503), `rejected` (not verified), `acknowledged`
    /// (nothing to process: a test event), `queued` (inbox: persisted for the worker),
    /// `handler_failed`, `store_unavailable`, `cancelled` (see [`WebhookReceipt::cancelled`]), or
    /// `claim_lost` (transactional: another worker took the key; rolled back, 503). `None`
    /// before the reply.
    pub fn outcome(&self) -> Option<&'static str> {
        (self.is_finished() && !self.outcome.is_empty()).then_some(self.outcome)
    }

    /// This receipt, for a dedup table in the handler's own database (see the module
    /// documentation): the keys are marked done inside the transaction that holds the
    /// handler's effect. Promises the same claims and replies as a plain receipt; a receipt
    /// that has already replied (a rejected delivery, a test event) is unchanged.
    pub fn transactional(mut self) -> Self {
        self.transactional = true;
        self
    }

    /// This receipt, for an inbox ([`crate::dedup::SqlInbox`] or a stream): the delivery is
    /// persisted under its delivery key and answered 2xx at once — `{"result":"queued"}`, or
    /// `{"result":"duplicate"}` for a delivery already in the inbox — and a worker
    /// ([`super::InboxWorker`]) runs the handler later, so a slow handler never outlives the
    /// service's 10-second attempt. Promises `Enqueue` as the first step of a verified delivery
    /// (content keys are not claimed: the inbox row is the delivery's dedup record); a receipt
    /// that has already replied (a rejected delivery, a test event) is unchanged.
    pub fn inbox(mut self) -> Self {
        if matches!(self.phase, Phase::Claiming) {
            self.keys.truncate(1);
            self.phase = Phase::Enqueuing;
        }
        self
    }

    /// (Inbox.) The pending `Enqueue` is done: `new` when the delivery was added, false when it
    /// was in the inbox already. Promises `Reply` 200, outcome `queued` or `duplicate`.
    pub fn enqueued(&mut self, new: bool) -> Result<(), ArgumentError> {
        if !matches!(self.phase, Phase::Enqueuing) {
            return Err(unexpected("enqueued", self.expecting()));
        }
        let (result, outcome) = if new {
            ("queued", "queued")
        } else {
            ("duplicate", "duplicate")
        };
        let body = serde_json::json!({ "result": result }).to_string();
        self.phase = Phase::Replied(self.success.0, body);
        self.outcome = outcome;
        Ok(())
    }

    /// Whether the receipt is transactional.
    pub fn is_transactional(&self) -> bool {
        self.transactional
    }

    /// The verified delivery, for the handler and for logs (`None` when verification failed).
    pub fn delivery(&self) -> Option<&VerifiedWebhook> {
        self.delivery.as_ref()
    }

    /// Whether the receipt has reached its `Reply`.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Replied(..))
    }

    /// The step pending. Promises: the same step until an input is reported; `Reply` forever
    /// once finished.
    pub fn next(&self) -> ReceiptStep {
        match &self.phase {
            Phase::Claiming => ReceiptStep::Claim {
                key: self.key(self.claimed),
            },
            Phase::Releasing { to_release, reply } => match to_release.first() {
                Some(key) => ReceiptStep::Release { key: key.clone() },
                None => ReceiptStep::Reply {
                    status: reply.0,
                    body: reply.1.clone(),
                },
            },
            Phase::Handling => ReceiptStep::RunHandler {},
            Phase::Committing { index, attempt } => ReceiptStep::Commit {
                key: self.key(*index),
                attempt: *attempt,
            },
            Phase::Pausing { .. } => ReceiptStep::Wait {
                seconds: self.commit_delay_seconds,
            },
            Phase::Beginning => ReceiptStep::Begin {},
            Phase::CommittingTransaction => ReceiptStep::CommitTransaction {},
            Phase::RollingBack { .. } => ReceiptStep::Rollback {},
            Phase::Enqueuing => ReceiptStep::Enqueue { key: self.key(0) },
            Phase::Replied(status, body) => ReceiptStep::Reply {
                status: *status,
                body: body.clone(),
            },
        }
    }

    fn key(&self, index: usize) -> String {
        self.keys.get(index).cloned().unwrap_or_default()
    }

    fn expecting(&self) -> &'static str {
        match self.phase {
            Phase::Claiming => "claimed or store_failed",
            Phase::Releasing { .. } => "released",
            Phase::Handling => "handler_succeeded or handler_failed",
            Phase::Committing { .. } if self.transactional => {
                "committed, claim_lost or store_failed"
            }
            Phase::Committing { .. } => "committed or store_failed",
            Phase::Beginning => "began or store_failed",
            Phase::CommittingTransaction => "transaction_committed or store_failed",
            Phase::RollingBack { .. } => "rolled_back",
            Phase::Pausing { .. } => "waited",
            Phase::Enqueuing => "enqueued or store_failed",
            Phase::Replied(..) => "nothing (the receipt has replied)",
        }
    }

    /// Releases `keys` (in order), then replies; with nothing to release, replies at once.
    fn release_then(&mut self, keys: Vec<String>, reply: (u16, String)) {
        self.phase = if keys.is_empty() {
            Phase::Replied(reply.0, reply.1)
        } else {
            Phase::Releasing {
                to_release: keys,
                reply,
            }
        };
    }

    /// The state the store gave the key of the pending `Claim`. Promises: the next key's
    /// `Claim` while every claim is `new`; `RunHandler` once every key is claimed; otherwise the
    /// `new` claims released, then `Reply` 200 (already processed) or 503 (another worker
    /// holds it). `invalid_argument` when no claim is pending.
    pub fn claimed(&mut self, state: ClaimState) -> Result<(), ArgumentError> {
        if !matches!(self.phase, Phase::Claiming) {
            return Err(unexpected("claimed", self.expecting()));
        }
        self.claimed += 1;
        if state == ClaimState::New {
            self.phase = if self.claimed < self.keys.len() {
                Phase::Claiming
            } else if self.transactional {
                Phase::Beginning
            } else {
                Phase::Handling
            };
            return Ok(());
        }
        let mut states = vec![ClaimState::New; self.claimed - 1];
        states.push(state);
        self.outcome = if state == ClaimState::Done {
            "duplicate"
        } else {
            "in_progress"
        };
        let decision = decide_claims(&states);
        let release = decision
            .release
            .iter()
            .map(|i| self.key(*i as usize))
            .collect();
        self.release_then(release, (decision.status, decision.body));
        Ok(())
    }

    /// The store could not be reached for the pending `Claim` or `Commit` (or, in a
    /// transactional receipt, `Begin` or `CommitTransaction`). Promises: during claims, the
    /// claims already taken released, then `Reply` 503; during commits, `Wait` then the same
    /// commit again until its attempts are used, then `Reply` 503 (the effect stands; the
    /// redelivery runs the handler again). Transactional: a failed `Begin` releases the claims;
    /// a failed mark is a `Rollback`, then the claims released; a failed `CommitTransaction`
    /// releases the claims (a release never removes a row that did commit) — each then `Reply`
    /// 503, and nothing was applied twice. `invalid_argument` in any other phase.
    pub fn store_failed(&mut self) -> Result<(), ArgumentError> {
        let unavailable = failure_reply(ReceiverFailure::StoreUnavailable);
        let reply = (unavailable.status, unavailable.body);
        // (a commit tried again and done later makes it `processed`)
        self.outcome = "store_unavailable";
        match self.phase {
            Phase::Claiming => self.release_claimed_then(reply),
            Phase::Beginning | Phase::CommittingTransaction => {
                self.release_then(self.keys.clone(), reply);
            }
            Phase::Enqueuing => self.phase = Phase::Replied(reply.0, reply.1),
            Phase::Committing { .. } if self.transactional => {
                self.roll_back_then(reply);
            }
            Phase::Committing { index, attempt } if attempt < self.commit_attempts => {
                self.phase = Phase::Pausing {
                    index,
                    attempt: attempt + 1,
                };
            }
            Phase::Committing { .. } => {
                self.phase = Phase::Replied(reply.0, reply.1);
            }
            _ => return Err(unexpected("store_failed", self.expecting())),
        }
        Ok(())
    }

    /// The pending `Release` is done (or failed: a claim's lease runs out on its own).
    /// `invalid_argument` when no release is pending.
    pub fn released(&mut self) -> Result<(), ArgumentError> {
        match &mut self.phase {
            Phase::Releasing { to_release, reply } if !to_release.is_empty() => {
                to_release.remove(0);
                if to_release.is_empty() {
                    self.phase = Phase::Replied(reply.0, std::mem::take(&mut reply.1));
                }
                Ok(())
            }
            _ => Err(unexpected("released", self.expecting())),
        }
    }

    /// During the claims: releases the keys claimed so far (not the one in flight), then replies.
    fn release_claimed_then(&mut self, reply: (u16, String)) {
        let taken = self.keys.iter().take(self.claimed).cloned().collect();
        self.release_then(taken, reply);
    }

    /// Rolls the transaction back, then releases every claim and answers `reply`.
    fn roll_back_then(&mut self, reply: (u16, String)) {
        self.phase = Phase::RollingBack {
            to_release: self.keys.clone(),
            reply,
        };
    }

    /// The handler stored its effect. Promises `Commit` of the first key (transactional: the
    /// mark, inside the transaction).
    pub fn handler_succeeded(&mut self) -> Result<(), ArgumentError> {
        if !matches!(self.phase, Phase::Handling) {
            return Err(unexpected("handler_succeeded", self.expecting()));
        }
        self.phase = Phase::Committing {
            index: 0,
            attempt: 1,
        };
        Ok(())
    }

    /// The handler failed. Promises: every key released (transactional: after a `Rollback`,
    /// which undoes the marks with the effect), then `Reply` 500, so the service's redelivery
    /// is processed.
    pub fn handler_failed(&mut self) -> Result<(), ArgumentError> {
        if !matches!(self.phase, Phase::Handling) {
            return Err(unexpected("handler_failed", self.expecting()));
        }
        let failed = failure_reply(ReceiverFailure::HandlerFailed);
        let reply = (failed.status, failed.body);
        self.outcome = "handler_failed";
        if self.transactional {
            self.roll_back_then(reply);
        } else {
            self.release_then(self.keys.clone(), reply);
        }
        Ok(())
    }

    /// The pending `Commit` is done (whatever the store answered: a key whose lease ran out
    /// and was claimed by another worker is that worker's to finish). Promises the next key's
    /// `Commit`, then `Reply` 200 (transactional: the next key's mark, then `CommitTransaction`).
    pub fn committed(&mut self) -> Result<(), ArgumentError> {
        let Phase::Committing { index, .. } = self.phase else {
            return Err(unexpected("committed", self.expecting()));
        };
        self.phase = if index + 1 < self.keys.len() {
            Phase::Committing {
                index: index + 1,
                attempt: 1,
            }
        } else if self.transactional {
            Phase::CommittingTransaction
        } else {
            self.outcome = "processed";
            Phase::Replied(self.success.0, self.success.1.clone())
        };
        Ok(())
    }

    /// (Transactional.) The pending mark changed no row: this claim's lease ran out and
    /// another worker took the key. Promises `Rollback` (the effect goes with it), the claims
    /// released (a release never touches another worker's claim), then `Reply` 503, so the
    /// service redelivers and the next claim finds the key done or free. `invalid_argument` in
    /// a plain receipt.
    pub fn claim_lost(&mut self) -> Result<(), ArgumentError> {
        if !(self.transactional && matches!(self.phase, Phase::Committing { .. })) {
            return Err(unexpected("claim_lost", self.expecting()));
        }
        let busy = decide_claims(&[ClaimState::InProgress]);
        self.outcome = "claim_lost";
        self.roll_back_then((busy.status, busy.body));
        Ok(())
    }

    /// (Transactional.) The transaction is open. Promises `RunHandler`.
    pub fn began(&mut self) -> Result<(), ArgumentError> {
        if !matches!(self.phase, Phase::Beginning) {
            return Err(unexpected("began", self.expecting()));
        }
        self.phase = Phase::Handling;
        Ok(())
    }

    /// (Transactional.) The transaction committed: the effect and the marks stand together.
    /// Promises `Reply` 200.
    pub fn transaction_committed(&mut self) -> Result<(), ArgumentError> {
        if !matches!(self.phase, Phase::CommittingTransaction) {
            return Err(unexpected("transaction_committed", self.expecting()));
        }
        self.phase = Phase::Replied(self.success.0, self.success.1.clone());
        self.outcome = "processed";
        Ok(())
    }

    /// (Transactional.) The pending `Rollback` is done (or failed: the database rolls back a
    /// transaction whose connection is gone). Promises the claims released, then `Reply`.
    pub fn rolled_back(&mut self) -> Result<(), ArgumentError> {
        let Phase::RollingBack { to_release, reply } = &mut self.phase else {
            return Err(unexpected("rolled_back", self.expecting()));
        };
        let (keys, reply) = (std::mem::take(to_release), std::mem::take(reply));
        self.release_then(keys, reply);
        Ok(())
    }

    /// The host was cancelled while the pending step was in flight (see the module
    /// documentation): report this instead of the step's outcome, then perform the steps that
    /// follow. Promises only `Rollback` and `Release` steps, then `Reply` 503
    /// `{"error":"cancelled"}` (outcome `cancelled`): during the claims, the keys claimed so far
    /// released (not the one in flight); once the handler may have run, in a transactional
    /// receipt, a `Rollback` first (harmless where the transaction is gone or was never
    /// opened), then every claim released (a release never removes a row that committed); in a
    /// plain receipt, every claim released while the handler runs, none once a commit started
    /// (the effect stands and a committed key stays done: the leases run out); an inbox
    /// `Enqueue` answered at once (the redelivery finds it queued or not). During a `Rollback`
    /// or `Release`, the same as [`WebhookReceipt::rolled_back`] or [`WebhookReceipt::released`] (a cancelled
    /// one is a failed one): the cleanup goes on and the reply is unchanged. Once replied,
    /// nothing changes.
    pub fn cancelled(&mut self) -> Result<(), ArgumentError> {
        let failure = failure_reply(ReceiverFailure::Cancelled);
        let reply = (failure.status, failure.body);
        match self.phase {
            Phase::Releasing { .. } => return self.released(),
            Phase::RollingBack { .. } => return self.rolled_back(),
            Phase::Replied(..) => return Ok(()),
            Phase::Claiming => self.release_claimed_then(reply),
            Phase::Enqueuing => self.phase = Phase::Replied(reply.0, reply.1),
            _ if self.transactional => self.roll_back_then(reply),
            Phase::Handling => self.release_then(self.keys.clone(), reply),
            Phase::Committing { .. }
            | Phase::Pausing { .. }
            | Phase::Beginning
            | Phase::CommittingTransaction => self.phase = Phase::Replied(reply.0, reply.1),
        }
        self.outcome = "cancelled";
        Ok(())
    }

    /// What became of the pending step: the one input of a receipt (the other inputs are its
    /// parts). Promises what the part it stands for promises: [`WebhookReceipt::claimed`],
    /// [`WebhookReceipt::enqueued`], [`WebhookReceipt::cancelled`]; for `Marked`,
    /// [`WebhookReceipt::committed`] or [`WebhookReceipt::claim_lost`]; for `Done`, the
    /// pending step's own (`released`, `rolled_back`, `handler_succeeded`, `committed`,
    /// `began`, `transaction_committed`, `waited`); for `Failed`, `released` or `rolled_back`
    /// during a release or a rollback, `handler_failed` for the handler, otherwise
    /// [`WebhookReceipt::store_failed`]. An outcome the pending step cannot have (a `Done` for a
    /// claim, a `Marked` in a plain receipt, a failed wait) is `invalid_argument`, the receipt
    /// unchanged.
    pub fn report(&mut self, outcome: ReceiptOutcome) -> Result<(), ArgumentError> {
        use ReceiptOutcome as O;
        match (outcome, &self.phase) {
            (O::Cancelled, _) => self.cancelled(),
            (O::Claimed(state), _) => self.claimed(state),
            (O::Enqueued(new), _) => self.enqueued(new),
            (O::Marked(true), Phase::Committing { .. }) if self.transactional => self.committed(),
            (O::Marked(false), _) => self.claim_lost(),
            (O::Done | O::Failed, Phase::Releasing { .. }) => self.released(),
            (O::Done | O::Failed, Phase::RollingBack { .. }) => self.rolled_back(),
            (O::Done, Phase::Handling) => self.handler_succeeded(),
            (O::Failed, Phase::Handling) => self.handler_failed(),
            (O::Done, Phase::Committing { .. }) if !self.transactional => self.committed(),
            (O::Done, Phase::Beginning) => self.began(),
            (O::Done, Phase::CommittingTransaction) => self.transaction_committed(),
            (O::Done, Phase::Pausing { .. }) => self.waited(),
            (O::Failed, Phase::Pausing { .. }) | (O::Done | O::Marked(true), _) => {
                Err(unexpected(&format!("{outcome:?}"), self.expecting()))
            }
            (O::Failed, _) => self.store_failed(),
        }
    }

    /// The pending `Wait` is over. Promises the commit's next attempt.
    pub fn waited(&mut self) -> Result<(), ArgumentError> {
        let Phase::Pausing { index, attempt } = self.phase else {
            return Err(unexpected("waited", self.expecting()));
        };
        self.phase = Phase::Committing { index, attempt };
        Ok(())
    }

    /// Performs the pending store steps (`Claim`, `Release`, `Commit`) against an in-process
    /// `window` at `now` (Unix seconds) and returns the first step that needs the host:
    /// `RunHandler`, `Wait` or `Reply`. Promises exactly the inputs a host driving the same
    /// window step by step would report (a window that refuses a key counts as a store
    /// failure), so a delivery on the in-memory window crosses into the core once to be
    /// received and once for the handler's outcome.
    pub fn settle(&mut self, window: &mut DedupWindow, now: i64) -> ReceiptStep {
        loop {
            let step = self.next();
            let reported = match &step {
                ReceiptStep::Claim { key } => match window.claim(key, now) {
                    Ok(state) => self.claimed(state),
                    Err(_) => self.store_failed(),
                },
                ReceiptStep::Release { key } => {
                    // A failed release is reported like a done one: the lease runs out.
                    let _ = window.release(key, now);
                    self.released()
                }
                ReceiptStep::Commit { key, .. } => match window.commit(key, now) {
                    Ok(()) => self.committed(),
                    Err(_) => self.store_failed(),
                },
                _ => return step,
            };
            // Each input above answers the step just read, so none is refused; were one, the
            // pending step is the host's to see rather than a loop.
            if reported.is_err() {
                return self.next();
            }
        }
    }
}

/// A webhook receiver's fixed part, built once: the verifier (secrets and options) and the
/// namespace its keys are scoped to. Each delivery becomes a [`WebhookReceipt`].
#[derive(Debug, Clone)]
pub struct WebhookReceiver {
    verifier: WebhookVerifier,
    namespace: String,
    claim_content_key: bool,
}

impl WebhookReceiver {
    /// A receiver for `secrets` (current first) under `namespace`. Promises `invalid_secret`
    /// for unusable secrets and `invalid_argument` for an empty or over-long namespace.
    pub fn new(
        secrets: &[WebhookSecret],
        options: VerifyOptions,
        namespace: &str,
    ) -> Result<Self, WebhookError> {
        crate::dedup::delivery_key(namespace, "probe").map_err(WebhookError::InvalidArgument)?;
        Ok(Self {
            verifier: WebhookVerifier::new(secrets, options)?,
            namespace: namespace.to_owned(),
            claim_content_key: false,
        })
    }

    /// This receiver, claiming each delivery's content key after its delivery key when
    /// `claim` is true (opt-in, with the trade-off [`plan_receipt`] describes).
    pub fn claiming_content_key(mut self, claim: bool) -> Self {
        self.claim_content_key = claim;
        self
    }

    /// The namespace keys are scoped to.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Verifies one delivery (`headers` as received, `body` the raw bytes, `now` Unix seconds)
    /// and returns its receipt. Promises a receipt whose first step is `Reply` for a rejected
    /// delivery.
    pub fn receive<H: HeaderMap + ?Sized>(
        &self,
        headers: &H,
        body: &[u8],
        now: i64,
    ) -> WebhookReceipt {
        let verified = self.verifier.verify(headers, body, now);
        // The namespace was checked when the receiver was built.
        WebhookReceipt::new(&self.namespace, verified, self.claim_content_key).unwrap_or_else(|e| {
            let reply = failure_reply(ReceiverFailure::HandlerFailed);
            WebhookReceipt::finished(
                None,
                (
                    reply.status,
                    rejection_body("invalid_argument", &e.to_string()),
                ),
                "rejected",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhook::sign;

    #[test]
    fn a_rejection_says_nothing_of_the_receiver_s_secrets() {
        let secrets = [
            WebhookSecret::new("whsec_a", None),
            WebhookSecret::new("whsec_b", Some(10)),
            WebhookSecret::new("whsec_c", None),
        ];
        let receiver = WebhookReceiver::new(&secrets, VerifyOptions::default(), "ns").unwrap();
        let body = br#"{"event":"x","resource":{"type":"t","reference":"r","url":"/api/v1/x"},"occurred_at":"2026-11-22T04:05:06Z"}"#;
        let forged = sign(&["whsec_attacker"], body, 1_000, "d").unwrap();
        let ReceiptStep::Reply { status, body } =
            receiver.receive(&forged.pairs()[..], body, 1_000).next()
        else {
            panic!("a forged delivery is answered at once")
        };
        assert_eq!(status, 401);
        assert!(body.contains("no_matching_signature"), "{body}");
        for leak in ["3 secret", "2 secret", "in force", "valid_until", "1 v1"] {
            assert!(!body.contains(leak), "{leak:?} in {body}");
        }
    }

    #[test]
    fn the_outcome_names_what_the_reply_says() {
        let secrets = [WebhookSecret::new("whsec_a", None)];
        let receiver = WebhookReceiver::new(&secrets, VerifyOptions::default(), "ns").unwrap();
        let body = br#"{"event":"x","resource":{"type":"t","reference":"r","url":"/api/v1/x"},"occurred_at":"2026-11-22T04:05:06Z"}"#;
        let signed = sign(&["whsec_a"], body, 1_000, "d1").unwrap();
        let mut window = DedupWindow::new(100, 3_600, [7; 16]).unwrap();
        let settle = |r: &mut WebhookReceipt, w: &mut DedupWindow, ok: bool| {
            let mut step = r.settle(w, 1_000);
            if matches!(step, ReceiptStep::RunHandler {}) {
                assert_eq!(r.outcome(), None, "not before the reply");
                if ok {
                    r.handler_succeeded().unwrap();
                } else {
                    r.handler_failed().unwrap();
                }
                step = r.settle(w, 1_000);
            }
            assert!(matches!(step, ReceiptStep::Reply { .. }), "{step:?}");
            r.outcome()
        };
        let mut r = receiver.receive(&signed.pairs()[..], body, 1_000);
        assert_eq!(settle(&mut r, &mut window, false), Some("handler_failed"));
        let mut r = receiver.receive(&signed.pairs()[..], body, 1_000);
        assert_eq!(settle(&mut r, &mut window, true), Some("processed"));
        let mut r = receiver.receive(&signed.pairs()[..], body, 1_000);
        assert_eq!(settle(&mut r, &mut window, true), Some("duplicate"));
        let forged = sign(&["whsec_b"], body, 1_000, "d2").unwrap();
        let r = receiver.receive(&forged.pairs()[..], body, 1_000);
        assert_eq!(r.outcome(), Some("rejected"));
        let other = sign(&["whsec_a"], body, 1_000, "d3").unwrap();
        let mut r = receiver.receive(&other.pairs()[..], body, 1_000);
        assert!(matches!(r.next(), ReceiptStep::Claim { .. }));
        r.store_failed().unwrap();
        assert!(matches!(r.next(), ReceiptStep::Reply { status: 503, .. }));
        assert_eq!(r.outcome(), Some("store_unavailable"));
    }
}
