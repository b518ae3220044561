//! [`Recovery`]: the spec's "keep periodic reconciliation until event delivery is proven".
//! It reads a subscription's delivery log (`GET /api/v1/webhooks/{reference}/deliveries`, every
//! page), asks the host which deliveries its dedup or inbox store knows, and replays
//! (`POST …/deliveries/{deliveryReference}/replay`) those never processed. Safe to run
//! periodically: a delivery the service is still attempting, or whose replay it is still
//! attempting, is left alone, so a run never replays what an earlier run replayed while that
//! replay is pending.
//!
//! The spec does not show the delivery log's fields, so an entry is read tolerantly:
//! - its reference from `reference`, `delivery_reference`, `deliveryReference`, `id` or `uuid`
//!   (the `Service-Webhook-Id` the receiver deduplicated by);
//! - `replay_of` (or `replayOf`): the original delivery a replay stands for;
//! - its state from `status` or `state`: `delivered`, `failed`, and `pending` or `retrying`
//!   (the spec's delivery-attempt states). Another value is kept as sent and read by age: the
//!   service may still be attempting it within its whole redelivery schedule;
//! - its time from `created_at`, `createdAt`, `occurred_at`, `attempted_at` or `timestamp`;
//! - its event from `event` (`enterprise.webhook.test` deliveries are never processed by a
//!   receiver, so they are skipped).
//!
//! A log may list one entry per attempt: the entries of one reference are one delivery, which
//! is delivered when any attempt was, in flight when any attempt is pending, else failed.
//!
//! What each delivery from `since` on gets (the first that holds):
//! 1. its key is done in the store: `processed`; claimed now: `in_progress`;
//! 2. a replay of it is done: `processed_by_replay`; claimed now: `in_progress`;
//! 3. the service is still attempting it: `in_flight`;
//! 4. the service is still attempting a replay of it: `replay_pending`;
//! 5. the service says it (or a replay) was delivered, but the store does not know it:
//!    `unrecorded`, not replayed — the store forgot it (its retention is shorter than `since`
//!    reaches back) or is not the one the receiver uses (another namespace): replaying every
//!    such delivery would flood the receiver;
//! 6. it was replayed `max_replays_per_delivery` times and every replay failed:
//!    `replay_limit`;
//! 7. otherwise it is replayed (`replayed`, or `replay_failed` when the request failed), at
//!    most `max_replays` per run (`deferred` past that).

use super::pages::{After, PageCursor, Paging};
use super::{check_now, PagesEnd, PagesOptions};
use crate::dedup::{self, ClaimState, DEFAULT_DEDUP_TTL_SECONDS};
use crate::{ArgumentError, RoyaltyKitError};
use serde_json::Value;

/// The operation a recovery lists deliveries with.
pub const LIST_DELIVERIES: &str = "listEnterpriseWebhookDeliveries";
/// The operation a recovery replays a delivery with.
pub const REPLAY_DELIVERY: &str = "replayEnterpriseWebhookDelivery";
/// Default most replays one run sends.
pub const DEFAULT_MAX_REPLAYS: u32 = 100;
/// Default most replays of one delivery, all failed, before recovery stops replaying it.
pub const DEFAULT_MAX_REPLAYS_PER_DELIVERY: u32 = 3;
/// Default most log entries one run reads.
pub const DEFAULT_MAX_ENTRIES: u64 = 10_000;

const TEST_EVENT: &str = "enterprise.webhook.test";
/// The members a log entry or a replay's answer names its delivery reference with.
const REFERENCE: [&str; 5] = [
    "reference",
    "delivery_reference",
    "deliveryReference",
    "id",
    "uuid",
];

string_enum! {
    /// What a recovery found for one delivery, and did (see the module documentation).
    pub enum RecoveryAction as "action" {
        /// The store has processed it.
        Processed = "processed",
        /// The store has processed a replay of it.
        ProcessedByReplay = "processed_by_replay",
        /// A receiver holds a live claim on it (or on a replay of it): it is being processed.
        InProgress = "in_progress",
        /// The service is still attempting it.
        InFlight = "in_flight",
        /// The service is still attempting a replay of it.
        ReplayPending = "replay_pending",
        /// The service says it was delivered, but the store does not know it: not replayed.
        Unrecorded = "unrecorded",
        /// Replayed by this run.
        Replayed = "replayed",
        /// This run's replay request failed; the next run tries again.
        ReplayFailed = "replay_failed",
        /// Replayed the most times allowed, every replay failed: not replayed again.
        ReplayLimit = "replay_limit",
        /// To be replayed, but this run's replay bound was reached; the next run does it.
        Deferred = "deferred",
    }
}

record! {
/// One delivery a recovery considered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredDelivery {
    /// Its reference (`Service-Webhook-Id`).
    pub reference: String,
    /// Its event name, as the log gives it.
    pub event: Option<String>,
    /// Its state in the log, as sent (the latest-looking of its attempts).
    pub status: Option<String>,
    /// When the log says it was created, Unix seconds.
    pub created_at: Option<i64>,
    /// The references of its replays in the log.
    pub replays: Vec<String>,
    /// What recovery found and did.
    pub action: RecoveryAction,
    /// The new delivery's reference, when this run replayed it and the answer named one.
    pub replay: Option<String>,
    /// The error code, when this run's replay failed.
    pub error: Option<String>,
}
}

record! {
/// What a recovery run found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Log entries read.
    pub entries: u64,
    /// Deliveries from `since` on (replays counted with their original).
    pub considered: u64,
    /// Deliveries before `since`, left alone.
    pub before_since: u64,
    /// Entries skipped: test events, and entries without a usable reference.
    pub skipped: u64,
    /// Replays sent that the service accepted.
    pub replayed: u64,
    /// Whether the log was read to its end (`last`) or cut by `max_entries` (`max_items`):
    /// deliveries past the cut are for the next run.
    pub end: PagesEnd,
    /// Every delivery considered, in log order.
    pub deliveries: Vec<RecoveredDelivery>,
}
}

record! {
/// The bounds of a recovery run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryOptions {
    /// Most replays one run sends (default [`DEFAULT_MAX_REPLAYS`]).
    pub max_replays: Option<u32>,
    /// Most replays of one delivery, all failed, before it is left alone (default
    /// [`DEFAULT_MAX_REPLAYS_PER_DELIVERY`]).
    pub max_replays_per_delivery: Option<u32>,
    /// Most log entries read (default [`DEFAULT_MAX_ENTRIES`]).
    pub max_entries: Option<u64>,
}
}

/// What the host does next for a recovery run.
#[derive(Debug, Clone, PartialEq)]
pub enum RecoveryStep {
    /// Request `listEnterpriseWebhookDeliveries` for the subscription with this query, then
    /// report its 2xx body to [`Recovery::page`].
    Fetch {
        /// The query, in order.
        query: Vec<(String, String)>,
    },
    /// Look these keys up in the store the receiver uses, without claiming them, and report
    /// each one's state, in order, to [`Recovery::checked`].
    Check {
        /// Delivery keys.
        keys: Vec<String>,
    },
    /// Request `replayEnterpriseWebhookDelivery` for the subscription and this delivery, then
    /// report its 2xx body to [`Recovery::replayed`], or its failure to
    /// [`Recovery::replay_failed`].
    Replay {
        /// The delivery reference (`deliveryReference`).
        delivery: String,
    },
    /// The run is over.
    Done {
        /// What it found and did.
        report: RecoveryReport,
    },
    /// The log cannot be read on (family `pagination`); nothing was replayed.
    Fail {
        /// Why.
        error: Box<RoyaltyKitError>,
    },
}

/// How the log says the service stands with one delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Failed,
    /// Unknown state, old enough that the service has stopped attempting it.
    Ended,
    InFlight,
    Delivered,
}

#[derive(Debug, Clone, PartialEq)]
struct Delivery {
    reference: String,
    key: String,
    event: Option<String>,
    status: Option<String>,
    created_at: Option<i64>,
    stage: Stage,
    replay_of: Option<String>,
}

/// An original delivery from `since` on, its replays and what the run does with it.
#[derive(Debug, Clone, PartialEq)]
struct Planned {
    /// The original.
    original: Delivery,
    /// Its replays.
    replays: Vec<Delivery>,
    action: RecoveryAction,
    /// Whether this run's replay request was answered (accepted or failed).
    answered: bool,
    /// The reference the accepted replay's answer named.
    replay: Option<String>,
    /// The failed replay's code.
    error: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Listing(After),
    Checking(Vec<String>),
    Replaying(usize),
    Done,
    Fail(Box<RoyaltyKitError>),
}

/// What became of the step a [`Recovery`] gave the host: its one input ([`Recovery::report`]).
#[derive(Debug, Clone, Copy)]
pub enum RecoveryOutcome<'a> {
    /// The 2xx body of the log page fetched.
    Page(&'a [u8]),
    /// The store's state of each key the check named, in order.
    Checked(&'a [ClaimState]),
    /// The 2xx body of the replay's request: the service accepted it.
    Replayed(&'a [u8]),
    /// The replay's request ended in the library's error of this code.
    ReplayFailed(&'a str),
}

/// One recovery run for one subscription (see the module documentation): ask
/// [`Recovery::next`], perform the step with the caller's client and store, report the
/// outcome, and ask again, until `Done` or `Fail`.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    namespace: String,
    since: i64,
    now: i64,
    max_replays: u32,
    max_per_delivery: u32,
    paging: Paging,
    at: PageCursor,
    phase: Phase,
    /// Deliveries by first appearance in the log.
    deliveries: Vec<Delivery>,
    entries: u64,
    skipped: u64,
    /// One entry per original from `since` on, in log order.
    plan: Vec<Planned>,
    before_since: u64,
    end: PagesEnd,
}

fn text<'a>(entry: &'a Value, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|n| entry.get(n).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
}

fn time_of(entry: &Value) -> Option<i64> {
    [
        "created_at",
        "createdAt",
        "occurred_at",
        "attempted_at",
        "timestamp",
    ]
    .iter()
    .find_map(|n| match entry.get(n)? {
        Value::String(s) => crate::parse_timestamp(s),
        Value::Number(n) => n.as_i64(),
        _ => None,
    })
}

impl Recovery {
    /// A run over `subscription`'s delivery log, checking keys of `namespace` (the receiver's
    /// namespace) for deliveries from `since` (Unix seconds) on, at `now`. Promises
    /// `invalid_argument` for an empty subscription, an empty or over-long namespace, a
    /// `since` or `now` that is not finite Unix seconds, or a bound of 0.
    pub fn new(
        subscription: &str,
        namespace: &str,
        since: f64,
        now: f64,
        options: RecoveryOptions,
    ) -> Result<Self, ArgumentError> {
        if subscription.is_empty() {
            return Err(ArgumentError::new("subscription", "must not be empty"));
        }
        dedup::delivery_key(namespace, "probe")?;
        let (_, now) = check_now(now)?;
        let (_, since) = check_now(since)
            .map_err(|_| ArgumentError::new("since", "must be finite Unix seconds, 0 or more"))?;
        let bound = |name: &'static str, v: Option<u64>| {
            if v == Some(0) {
                Err(ArgumentError::new(name, "must be at least 1 when given"))
            } else {
                Ok(())
            }
        };
        bound("max_replays", options.max_replays.map(u64::from))?;
        bound(
            "max_replays_per_delivery",
            options.max_replays_per_delivery.map(u64::from),
        )?;
        bound("max_entries", options.max_entries)?;
        let paging = Paging::new(
            LIST_DELIVERIES,
            &[],
            &PagesOptions {
                max_items: Some(options.max_entries.unwrap_or(DEFAULT_MAX_ENTRIES)),
                ..PagesOptions::default()
            },
        )?;
        Ok(Self {
            namespace: namespace.to_owned(),
            since,
            now,
            max_replays: options.max_replays.unwrap_or(DEFAULT_MAX_REPLAYS),
            max_per_delivery: options
                .max_replays_per_delivery
                .unwrap_or(DEFAULT_MAX_REPLAYS_PER_DELIVERY),
            paging,
            at: PageCursor::default(),
            phase: Phase::Listing(After::Fetch),
            deliveries: Vec::new(),
            entries: 0,
            skipped: 0,
            plan: Vec::new(),
            before_since: 0,
            end: PagesEnd::Last,
        })
    }

    /// The step pending; the same until its outcome is reported.
    pub fn next(&self) -> RecoveryStep {
        match &self.phase {
            Phase::Listing(_) => RecoveryStep::Fetch {
                query: self.paging.query(&self.at),
            },
            Phase::Checking(keys) => RecoveryStep::Check { keys: keys.clone() },
            Phase::Replaying(i) => match self.plan.get(*i) {
                Some(p) => RecoveryStep::Replay {
                    delivery: p.original.reference.clone(),
                },
                None => RecoveryStep::Done {
                    report: self.report_so_far(),
                },
            },
            Phase::Done => RecoveryStep::Done {
                report: self.report_so_far(),
            },
            Phase::Fail(error) => RecoveryStep::Fail {
                error: error.clone(),
            },
        }
    }

    /// What became of the pending step: the one input of a run (the other inputs are its
    /// parts, which say what each promises: [`Recovery::page`], [`Recovery::checked`],
    /// [`Recovery::replayed`], [`Recovery::replay_failed`]). An outcome the pending step cannot
    /// have is `invalid_argument`, the run unchanged.
    pub fn report(&mut self, outcome: RecoveryOutcome<'_>) -> Result<(), ArgumentError> {
        match outcome {
            RecoveryOutcome::Page(body) => self.page(body),
            RecoveryOutcome::Checked(states) => self.checked(states),
            RecoveryOutcome::Replayed(body) => self.replayed(body),
            RecoveryOutcome::ReplayFailed(code) => self.replay_failed(code),
        }
    }

    /// The 2xx body of the log page fetched. Promises `invalid_argument` when no fetch is
    /// pending; a page that cannot be read ends the run with `Fail` (family `pagination`).
    pub fn page(&mut self, body: &[u8]) -> Result<(), ArgumentError> {
        if !matches!(self.phase, Phase::Listing(_)) {
            return Err(super::unexpected("a page", "another input"));
        }
        let after = match serde_json::from_slice::<Value>(body) {
            Err(_) => After::Fail(
                "page_unreadable",
                format!("a page of {LIST_DELIVERIES} is not JSON; read it with request() to see what the service sent"),
            ),
            Ok(page) => {
                let (items, after) = self.paging.read(&mut self.at, &page);
                if let Some(items) = items {
                    let list = match &items.member {
                        Some(m) => page.get(m.as_str()),
                        None => Some(&page),
                    };
                    if let Some(Value::Array(list)) = list {
                        let take = usize::try_from(items.take).unwrap_or(usize::MAX);
                        for entry in list.iter().take(take) {
                            self.add(entry);
                        }
                    }
                }
                after
            }
        };
        match after {
            After::Fetch => self.phase = Phase::Listing(After::Fetch),
            After::End(end) => {
                self.end = end;
                self.phase = Phase::Checking(self.keys());
            }
            After::Fail(code, message) => {
                self.phase = Phase::Fail(Box::new(RoyaltyKitError::Pagination {
                    code: code.to_owned(),
                    detail: message,
                    http_status: 500,
                }));
            }
        }
        Ok(())
    }

    /// One log entry.
    fn add(&mut self, entry: &Value) {
        self.entries += 1;
        let reference = text(entry, &REFERENCE);
        let event = text(entry, &["event", "event_name", "type"]);
        let Some(reference) = reference else {
            self.skipped += 1;
            return;
        };
        let Ok(key) = dedup::delivery_key(&self.namespace, reference) else {
            self.skipped += 1;
            return;
        };
        if event == Some(TEST_EVENT) {
            self.skipped += 1;
            return;
        }
        let status = text(entry, &["status", "state"]);
        let created_at = time_of(entry);
        let stage = match status {
            Some("delivered") => Stage::Delivered,
            Some("pending" | "retrying") => Stage::InFlight,
            Some("failed") => Stage::Failed,
            // Unknown: the service may still be attempting it within its schedule.
            _ => match created_at {
                Some(t) if self.now.saturating_sub(t) >= DEFAULT_DEDUP_TTL_SECONDS => Stage::Ended,
                _ => Stage::InFlight,
            },
        };
        let replay_of = text(entry, &["replay_of", "replayOf"]).map(str::to_owned);
        if let Some(d) = self
            .deliveries
            .iter_mut()
            .find(|d| d.reference == reference)
        {
            // Another attempt of the same delivery: the furthest stage stands.
            if stage > d.stage {
                d.stage = stage;
                d.status = status.map(str::to_owned);
            }
            d.created_at = match (d.created_at, created_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            d.replay_of = d.replay_of.take().or(replay_of);
            return;
        }
        self.deliveries.push(Delivery {
            reference: reference.to_owned(),
            key,
            event: event.map(str::to_owned),
            status: status.map(str::to_owned),
            created_at,
            stage,
            replay_of,
        });
    }

    /// The reference of the original a delivery stands for: itself, or the end of its
    /// `replay_of` chain (`None` when the chain leaves the log or loops).
    fn root<'a>(&'a self, d: &'a Delivery) -> Option<&'a str> {
        let mut at = d;
        for _ in 0..=self.deliveries.len() {
            match &at.replay_of {
                None => return Some(&at.reference),
                Some(of) => at = self.deliveries.iter().find(|d| &d.reference == of)?,
            }
        }
        None
    }

    /// Groups the log into originals from `since` on with their replays, and the keys to check.
    fn keys(&mut self) -> Vec<String> {
        let mut plan: Vec<Planned> = Vec::new();
        for d in self.deliveries.iter().filter(|d| d.replay_of.is_none()) {
            if d.created_at.is_some_and(|t| t < self.since) {
                self.before_since += 1;
            } else {
                plan.push(Planned {
                    original: d.clone(),
                    replays: Vec::new(),
                    action: RecoveryAction::Deferred,
                    answered: false,
                    replay: None,
                    error: None,
                });
            }
        }
        for d in self.deliveries.iter().filter(|d| d.replay_of.is_some()) {
            if let Some(root) = self.root(d) {
                if let Some(p) = plan.iter_mut().find(|p| p.original.reference == root) {
                    p.replays.push(d.clone());
                }
            }
        }
        self.plan = plan;
        self.plan
            .iter()
            .flat_map(|p| std::iter::once(&p.original).chain(&p.replays))
            .map(|d| d.key.clone())
            .collect()
    }

    /// The store's state of each key the `Check` step named, in order. Promises
    /// `invalid_argument` when no check is pending or the count differs.
    pub fn checked(&mut self, states: &[ClaimState]) -> Result<(), ArgumentError> {
        let Phase::Checking(keys) = &self.phase else {
            return Err(super::unexpected("store states", "another input"));
        };
        if states.len() != keys.len() {
            return Err(ArgumentError::new(
                "states",
                format!(
                    "{} states for {} keys; give one per key, in order",
                    states.len(),
                    keys.len()
                ),
            ));
        }
        let mut states = states.iter().copied();
        let mut replays_left = self.max_replays;
        for p in &mut self.plan {
            let own = states.next().unwrap_or(ClaimState::New);
            let theirs: Vec<ClaimState> = states.by_ref().take(p.replays.len()).collect();
            let replay_stage = |s: Stage| p.replays.iter().any(|r| r.stage == s);
            p.action = if own == ClaimState::Done {
                RecoveryAction::Processed
            } else if theirs.contains(&ClaimState::Done) {
                RecoveryAction::ProcessedByReplay
            } else if own == ClaimState::InProgress || theirs.contains(&ClaimState::InProgress) {
                RecoveryAction::InProgress
            } else if p.original.stage == Stage::InFlight {
                RecoveryAction::InFlight
            } else if replay_stage(Stage::InFlight) {
                RecoveryAction::ReplayPending
            } else if p.original.stage == Stage::Delivered || replay_stage(Stage::Delivered) {
                RecoveryAction::Unrecorded
            } else if p.replays.len() >= self.max_per_delivery as usize {
                RecoveryAction::ReplayLimit
            } else if replays_left > 0 {
                replays_left -= 1;
                RecoveryAction::Replayed
            } else {
                RecoveryAction::Deferred
            };
        }
        self.advance();
        Ok(())
    }

    /// Moves to the next delivery to replay, or to `Done`.
    fn advance(&mut self) {
        self.phase = match self
            .plan
            .iter()
            .position(|p| p.action == RecoveryAction::Replayed && !p.answered)
        {
            Some(i) => Phase::Replaying(i),
            None => Phase::Done,
        };
    }

    /// The plan entry of the replay pending.
    fn replaying(&mut self, what: &str) -> Result<&mut Planned, ArgumentError> {
        match self.phase {
            Phase::Replaying(i) => self.plan.get_mut(i),
            _ => None,
        }
        .ok_or_else(|| super::unexpected(what, "another input"))
    }

    /// The 2xx body of the replay request: the replay is sent. Promises `invalid_argument`
    /// when no replay is pending.
    pub fn replayed(&mut self, body: &[u8]) -> Result<(), ArgumentError> {
        let p = self.replaying("a replay's answer")?;
        let answer = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
        let record = answer
            .get("data")
            .filter(|d| d.is_object())
            .unwrap_or(&answer);
        p.answered = true;
        p.replay = text(record, &REFERENCE).map(str::to_owned);
        self.advance();
        Ok(())
    }

    /// The replay request failed with `code` (a `call_failed` or `reconcile_required` outcome
    /// of the host's call, or a transport failure): the next run looks again (a replay the
    /// service did accept shows in its log as pending). Promises `invalid_argument` when no
    /// replay is pending.
    pub fn replay_failed(&mut self, code: &str) -> Result<(), ArgumentError> {
        let p = self.replaying("a replay's failure")?;
        p.answered = true;
        p.action = RecoveryAction::ReplayFailed;
        p.error = Some(
            if code.is_empty() {
                "replay_failed"
            } else {
                code
            }
            .to_owned(),
        );
        self.advance();
        Ok(())
    }

    fn report_so_far(&self) -> RecoveryReport {
        let deliveries: Vec<RecoveredDelivery> = self
            .plan
            .iter()
            .map(|p| {
                let d = &p.original;
                RecoveredDelivery {
                    reference: d.reference.clone(),
                    event: d.event.clone(),
                    status: d.status.clone(),
                    created_at: d.created_at,
                    replays: p.replays.iter().map(|r| r.reference.clone()).collect(),
                    action: p.action,
                    replay: p.replay.clone(),
                    error: p.error.clone(),
                }
            })
            .collect();
        RecoveryReport {
            entries: self.entries,
            considered: deliveries.len() as u64,
            before_since: self.before_since,
            skipped: self.skipped,
            replayed: self
                .plan
                .iter()
                .filter(|p| p.action == RecoveryAction::Replayed && p.answered)
                .count() as u64,
            end: self.end,
            deliveries,
        }
    }
}
