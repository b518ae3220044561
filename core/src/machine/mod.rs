//! Protocol machines: the sequences of I/O steps the rules need, written once and performing
//! none of them (DESIGN "Protocol machines"; the shape of h11, rustls and quinn-proto).
//!
//! Each machine answers `next()` with the step the host performs (claim a key, send a request,
//! wait, refresh the token, reply) and takes one method per kind of outcome (a store answer, a
//! response, a transport failure, a token). Time is an input (`now`, Unix seconds, fractions
//! allowed) and so is randomness (a seed the host draws from its RNG), so a transcript of
//! inputs gives the same steps in every language.
//!
//! - [`WebhookReceipt`] (built by a [`WebhookReceiver`]): one webhook delivery.
//! - [`Call`]: one API operation with its retries, `Retry-After`, token refresh, idempotency
//!   key and rate budget.
//! - [`ExportJob`]: a reporting export, create → poll → download, reconciling a create that may
//!   have been applied.
//! - [`Pages`]: every page of a list operation, bounded by pages or items.
//! - [`InboxWorker`]: an inbox's worker — claim a due entry, run the handler, mark it done in
//!   the handler's transaction; backoff between failed attempts, poison after the last.
//! - [`Recovery`]: a subscription's delivery log read, checked against the store, and the
//!   deliveries never processed replayed.
//! - [`Session`]: what the calls of one API client share (the token, the one exchange in
//!   flight, the rate budget); a [`Fleet`]'s sessions share them across processes in Redis.

mod call;
mod export_job;
mod fleet;
mod inbox;
mod pages;
mod receipt;
mod recovery;
mod session;

#[allow(deprecated)]
pub use call::CallStep;
pub use call::{
    call_failed_message, reconcile_required, Call, CallFailure, CallOptions, EventLevel,
    MachineEvent, Response, Step, StepOutcome,
};
#[allow(deprecated)]
pub use export_job::JobStep;
pub use export_job::{export_interrupted_message, ExportJob, ExportJobOptions, MAX_CREATES};
pub use fleet::{
    Fleet, FleetOutcome, FleetToken, FleetTokenStep, DEFAULT_FLEET_PREFIX, FLEET_POLL_SECONDS,
    MAX_FLEET_PREFIX_BYTES, PUBLISH_SCRIPT, RESERVE_SCRIPT, UNLOCK_SCRIPT,
};
pub use inbox::{
    InboxEntry, InboxOptions, InboxOutcome, InboxStep, InboxWorker, DEFAULT_POLL_SECONDS,
    MAX_INBOX_ATTEMPTS,
};
pub use pages::{PageItems, Pages, PagesEnd, PagesOptions, PagesStep};
pub use receipt::{ReceiptOutcome, ReceiptStep, WebhookReceipt, WebhookReceiver};

/// Deprecated name of [`WebhookReceipt`], the name it has in Python, Node and Kotlin; kept for
/// one release.
#[deprecated(
    since = "0.1.0",
    note = "renamed `WebhookReceipt`, its name in every language"
)]
pub type Receipt = WebhookReceipt;

/// Deprecated name of [`WebhookReceiver`], the receiver's fixed part (verifier and namespace);
/// kept for one release.
#[deprecated(since = "0.1.0", note = "renamed `WebhookReceiver`")]
pub type Receiver = WebhookReceiver;
pub use recovery::{
    RecoveredDelivery, Recovery, RecoveryAction, RecoveryOptions, RecoveryOutcome, RecoveryReport,
    RecoveryStep, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_REPLAYS, DEFAULT_MAX_REPLAYS_PER_DELIVERY,
    LIST_DELIVERIES, REPLAY_DELIVERY,
};
pub use session::{Session, EXCHANGE_LEASE_SECONDS};

use crate::ArgumentError;

/// The error for an input the machine is not waiting for.
fn unexpected(input: &str, expecting: &str) -> ArgumentError {
    ArgumentError::new(
        "input",
        format!("{input} was reported, but the machine is waiting for {expecting}"),
    )
}

/// A small deterministic generator (SplitMix64) for jitter: seeded by the host, so the core
/// draws no randomness of its own and a saved machine resumes with the same sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Jitter(u64);

impl Jitter {
    /// The next value in `[0, 1)`.
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A seed for a machine this one starts.
    fn fork(&mut self) -> u64 {
        self.next();
        self.0
    }
}

/// A clock value: finite and not negative; with its whole seconds, for the rules that count
/// in seconds (rate windows, `Retry-After` dates, token expiry).
fn check_now(now: f64) -> Result<(f64, i64), ArgumentError> {
    if !(now.is_finite() && now >= 0.0) {
        return Err(ArgumentError::new(
            "now",
            "must be finite Unix seconds, 0 or more",
        ));
    }
    Ok((now, crate::seconds_from_f64("now", now)?))
}
