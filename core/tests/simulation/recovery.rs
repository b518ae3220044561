//! `recovery` runs: periodic delivery recovery against a model of the enterprise service's
//! delivery log and a receiver's store. Each original delivery meets one fate at random:
//! processed, lost (failed, never reached the receiver), still being attempted, processed by a
//! receiver whose answer the service never saw (failed in the log, done in the store),
//! delivered but forgotten by the store, or claimed by a receiver that is processing it now.
//! Replays the runs ask for are accepted, refused, or accepted with the answer lost; the service
//! then delivers each pending replay, fails it, or keeps it pending. Some log pages are not JSON.
//! Then a calm phase: every replay is accepted and delivered, and nothing new goes wrong.
//!
//! Invariants: no run replays a delivery the store knows (done or claimed, itself or by a
//! replay), one the service is still attempting, one whose replay is pending, or one delivered
//! but unrecorded; no delivery gets more replays than the per-delivery bound; a run replays at
//! most its bound; a failed run replays nothing; the report counts what the run did; after the
//! calm phase every lost delivery from `since` on is processed, unless its replays reached the
//! bound before.

use crate::rng::Rng;
use crate::{seen, Violation};
use royaltykit::dedup::{delivery_key, ClaimState};
use royaltykit::machine::{Recovery, RecoveryAction, RecoveryOptions, RecoveryStep};
use serde_json::{json, Value};
use std::collections::HashMap;

const NS: &str = "org-sim";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Status {
    Pending,
    Delivered,
    Failed,
}

impl Status {
    fn text(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }
}

struct Entry {
    reference: String,
    status: Status,
    created_at: i64,
    replay_of: Option<String>,
    /// Whether the service will deliver it if asked (false: the store will not remember it).
    forgotten: bool,
}

struct Model {
    log: Vec<Entry>,
    /// The receiver's store: key -> state.
    store: HashMap<String, ClaimState>,
    next: u64,
}

impl Model {
    fn key(reference: &str) -> String {
        delivery_key(NS, reference).unwrap()
    }

    fn state(&self, reference: &str) -> ClaimState {
        self.store
            .get(&Self::key(reference))
            .copied()
            .unwrap_or(ClaimState::New)
    }

    fn root<'a>(&'a self, mut reference: &'a str) -> &'a str {
        while let Some(of) = self
            .log
            .iter()
            .find(|e| e.reference == reference)
            .and_then(|e| e.replay_of.as_deref())
        {
            reference = of;
        }
        reference
    }

    /// The references of an original and its replays.
    fn family(&self, original: &str) -> Vec<&str> {
        self.log
            .iter()
            .filter(|e| self.root(&e.reference) == original)
            .map(|e| e.reference.as_str())
            .collect()
    }

    fn page(&self) -> String {
        let data: Vec<Value> = self
            .log
            .iter()
            .map(|e| {
                let mut v = json!({"reference": e.reference, "status": e.status.text(),
                    "event": "ddex.delivery.failed", "created_at": e.created_at});
                if let Some(of) = &e.replay_of {
                    v["replay_of"] = of.clone().into();
                }
                v
            })
            .collect();
        json!({ "data": data }).to_string()
    }

    /// The service moves on: pending entries are delivered (the receiver processes them),
    /// failed, or stay pending; `calm` delivers every pending one.
    fn progress(&mut self, rng: &mut Rng, calm: bool) {
        for i in 0..self.log.len() {
            if self.log[i].status != Status::Pending {
                continue;
            }
            let roll = if calm { 0.0 } else { rng.f64() };
            if roll < 0.5 {
                self.log[i].status = Status::Delivered;
                if !self.log[i].forgotten {
                    let key = Self::key(&self.log[i].reference);
                    self.store.insert(key, ClaimState::Done);
                }
            } else if roll < 0.75 {
                self.log[i].status = Status::Failed;
            }
        }
        if calm {
            // A stuck claim's lease runs out and the receiver that held it is gone.
            self.store.retain(|_, s| *s == ClaimState::Done);
        }
    }
}

/// One recovery run; checks the per-run invariants. Returns the report's actions by reference.
fn one_run(
    m: &mut Model,
    rng: &mut Rng,
    since: i64,
    now: i64,
    options: &RecoveryOptions,
    calm: bool,
) -> Result<HashMap<String, RecoveryAction>, Violation> {
    let mut run = Recovery::new("wh_sim", NS, since as f64, now as f64, options.clone()).unwrap();
    let mut replays_sent = 0u32;
    let mut accepted = 0u64;
    let mut checked = false;
    for _ in 0..10_000 {
        match run.next() {
            RecoveryStep::Fetch { .. } => {
                let body = if !calm && rng.chance(0.05) {
                    "<html>busy</html>".to_owned()
                } else {
                    m.page()
                };
                run.page(body.as_bytes()).unwrap();
            }
            RecoveryStep::Check { keys } => {
                checked = true;
                let states: Vec<ClaimState> = keys
                    .iter()
                    .map(|k| m.store.get(k).copied().unwrap_or(ClaimState::New))
                    .collect();
                run.checked(&states).unwrap();
            }
            RecoveryStep::Replay { delivery } => {
                if !checked {
                    return Err(Violation::new("a replay follows the store check", delivery));
                }
                // The invariants on what may be replayed, against the model as it is now.
                let family = m.family(&delivery);
                if m.root(&delivery) != delivery {
                    return Err(Violation::new("only originals are replayed", delivery));
                }
                for r in &family {
                    if m.state(r) != ClaimState::New {
                        return Err(Violation::new(
                            "no delivery the store knows is replayed",
                            format!("{delivery} (via {r}: {:?})", m.state(r)),
                        ));
                    }
                    let e = m.log.iter().find(|e| &e.reference == r).unwrap();
                    if e.status == Status::Pending {
                        return Err(Violation::new(
                            "nothing in flight or with a pending replay is replayed",
                            format!("{delivery} ({r} pending)"),
                        ));
                    }
                    if e.status == Status::Delivered {
                        return Err(Violation::new(
                            "a delivered but unrecorded delivery is not replayed",
                            format!("{delivery} ({r})"),
                        ));
                    }
                }
                if family.len() > options.max_replays_per_delivery.unwrap_or(3) as usize {
                    return Err(Violation::new(
                        "a delivery gets at most the per-delivery bound of replays",
                        format!("{delivery}: {} replays already", family.len() - 1),
                    ));
                }
                replays_sent += 1;
                if replays_sent > options.max_replays.unwrap_or(100) {
                    return Err(Violation::new("a run replays at most its bound", delivery));
                }
                let roll = if calm { 0.0 } else { rng.f64() };
                let forgotten = m
                    .log
                    .iter()
                    .find(|e| e.reference == delivery)
                    .is_some_and(|e| e.forgotten);
                if !(0.8..0.9).contains(&roll) {
                    m.next += 1;
                    let reference = format!("r{}", m.next);
                    m.log.push(Entry {
                        reference: reference.clone(),
                        status: Status::Pending,
                        created_at: now,
                        replay_of: Some(delivery.clone()),
                        forgotten,
                    });
                    if roll < 0.8 {
                        accepted += 1;
                        seen::count("replays accepted", 1);
                        let body = json!({"data": {"reference": reference, "status": "pending"}});
                        run.replayed(body.to_string().as_bytes()).unwrap();
                    } else {
                        // Accepted, but the answer was lost.
                        run.replay_failed("reconcile_required").unwrap();
                    }
                } else {
                    run.replay_failed("call_failed").unwrap();
                }
            }
            RecoveryStep::Done { report } => {
                if report.replayed != accepted {
                    return Err(Violation::new(
                        "the report counts the replays accepted",
                        format!("{} reported, {accepted} accepted", report.replayed),
                    ));
                }
                return Ok(report
                    .deliveries
                    .into_iter()
                    .map(|d| (d.reference, d.action))
                    .collect());
            }
            RecoveryStep::Fail { .. } => {
                if replays_sent > 0 {
                    return Err(Violation::new("a failed run replays nothing", ""));
                }
                seen::count("recovery runs failed on the log", 1);
                return Ok(HashMap::new());
            }
        }
    }
    Err(Violation::new("a recovery run ends", "10000 steps"))
}

pub fn run(seed: u64) -> Result<(), Violation> {
    let mut rng = Rng::new(seed);
    let now0: i64 = 1_800_000_000;
    let count = rng.range(0, 40) as usize;
    let mut m = Model {
        log: Vec::new(),
        store: HashMap::new(),
        next: 0,
    };
    // The originals and their fates.
    let mut lost = Vec::new();
    for i in 0..count {
        let reference = format!("d{i}");
        let created_at = now0 - rng.range(0, 30_000) as i64;
        let (status, state, forgotten) = match rng.range(0, 10) {
            0..=3 => (Status::Delivered, Some(ClaimState::Done), false),
            4..=5 => (Status::Failed, None, false),
            6 => (Status::Pending, None, false),
            // The receiver committed but the service never saw its answer.
            7 => (Status::Failed, Some(ClaimState::Done), false),
            // Delivered, but the store forgot it (and forgets its replays too).
            8 => (Status::Delivered, None, true),
            _ => (Status::Failed, Some(ClaimState::InProgress), false),
        };
        if status == Status::Failed && state.is_none() {
            lost.push(reference.clone());
        }
        if let Some(s) = state {
            m.store.insert(Model::key(&reference), s);
        }
        m.log.push(Entry {
            reference,
            status,
            created_at,
            replay_of: None,
            forgotten,
        });
    }
    let since = now0 - rng.range(0, 30_000) as i64;
    let options = RecoveryOptions {
        max_replays: rng.chance(0.3).then(|| rng.range(1, 8) as u32),
        max_replays_per_delivery: rng.chance(0.3).then(|| rng.range(1, 5) as u32),
        max_entries: None,
    };
    let mut now = now0;
    for _ in 0..rng.range(1, 6) {
        one_run(&mut m, &mut rng, since, now, &options, false)?;
        now += rng.range(60, 7_200) as i64;
        m.progress(&mut rng, false);
    }
    // The calm phase: enough runs for every deferred delivery to get its turn.
    let mut last = HashMap::new();
    for _ in 0..(count / options.max_replays.unwrap_or(100) as usize + 3) {
        m.progress(&mut rng, true);
        last = one_run(&mut m, &mut rng, since, now, &options, true)?;
        now += 600;
    }
    m.progress(&mut rng, true);
    for reference in &lost {
        let created = m
            .log
            .iter()
            .find(|e| &e.reference == reference)
            .map_or(0, |e| e.created_at);
        if created < since {
            continue;
        }
        let processed = m
            .family(reference)
            .iter()
            .any(|r| m.state(r) == ClaimState::Done);
        let action = last.get(reference).copied();
        if !processed && action != Some(RecoveryAction::ReplayLimit) {
            return Err(Violation::new(
                "after the calm phase every lost delivery is processed or at its replay bound",
                format!("{reference}: {action:?}, family {:?}", m.family(reference)),
            ));
        }
        if processed {
            seen::count("lost deliveries recovered", 1);
        }
    }
    Ok(())
}
