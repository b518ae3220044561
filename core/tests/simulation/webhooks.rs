//! The `webhooks` run: the enterprise service delivers events on its retry schedule (30 s, 2 min,
//! 10 min, 30 min, 1 h, 2 h, 6 h after the first attempt) to a receiver whose store fails now and
//! then, whose handler fails now and then, and whose process is killed now and then; with
//! redeliveries of delivered events, operator replays, same-second twins (byte-identical body and
//! timestamp, another `Service-Webhook-Id`), forgeries, and a secret rotation with its five-minute
//! overlap and a receiver reconfigured a little after it; and hosts cancelled mid-step (a cancelled
//! task, an interrupt), the step in flight done or not, reported as `cancelled`.

use crate::rng::Rng;
use crate::Violation;
use royaltykit::dedup::{ClaimState, DedupWindow};
use royaltykit::machine::{ReceiptOutcome as O, ReceiptStep, WebhookReceipt, WebhookReceiver};
use royaltykit::webhook::{active_secrets, sign, VerifyOptions, WebhookSecret};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const T0: f64 = 1_763_800_000.0;
const NS: &str = "org-7/sim";
const S1: &str = "whsec_sim_first_0123456789abcdef";
const S2: &str = "whsec_sim_second_fedcba9876543210";
const ATTACKER: &str = "whsec_attacker_guess_000000000000";
/// The service's delays after the first attempt (enterprise spec, Delivery schedule).
const SCHEDULE: [f64; 7] = [30.0, 120.0, 600.0, 1800.0, 3600.0, 7200.0, 21600.0];

/// A claim row of the transactional store.
#[derive(Clone, Debug)]
enum Row {
    Held(f64, u64),
    Done,
}

/// The dedup store: the core's window (a store apart from the effects), or a table in the
/// handler's database (claims, then marks and effects committed in one transaction).
struct Store {
    window: DedupWindow,
    rows: BTreeMap<String, Row>,
    outages: Vec<(f64, f64)>,
    next_token: u64,
}

impl Store {
    fn down(&self, now: f64) -> bool {
        self.outages.iter().any(|(a, b)| (*a..*b).contains(&now))
    }
}

struct Delivery {
    id: String,
    body: Vec<u8>,
    first: f64,
    forged: Option<&'static str>,
}

pub fn run(seed: u64) -> Result<(), Violation> {
    let mut rng = Rng::new(seed);
    let transactional = rng.chance(0.4);
    let p_handler = *rng.pick(&[0.0, 0.0, 0.1, 0.3]);
    let p_commit = *rng.pick(&[0.0, 0.0, 0.1, 0.3]);
    let p_crash = *rng.pick(&[0.0, 0.0, 0.02, 0.05]);
    // Cancellations draw from a stream of their own, so the other faults of a seed are unchanged.
    let mut crng = Rng::new(seed ^ 0x00CA_9CE1);
    // The probes of `report`'s refusals draw apart, so the runs are the same with or without them.
    let mut prng = Rng::new(seed ^ 0x0BAD_0C0E);
    let p_cancel = *crng.pick(&[0.0, 0.0, 0.03, 0.08]);
    let outages: Vec<(f64, f64)> = (0..rng.range(0, 3))
        .map(|_| {
            let a = T0 + rng.between(0.0, 3600.0);
            (a, a + rng.between(10.0, 1200.0))
        })
        .collect();
    let healthy = p_handler == 0.0
        && p_commit == 0.0
        && p_crash == 0.0
        && p_cancel == 0.0
        && outages.is_empty();
    let rotation = rng.chance(0.5).then(|| T0 + rng.between(0.0, 3000.0));
    let config_lag = rng.between(0.0, 240.0);

    // The events and their deliveries.
    let mut deliveries: Vec<Delivery> = Vec::new();
    let events = rng.range(3, 25);
    for n in 0..events {
        let at = T0 + rng.between(0.0, 3600.0);
        let reference = rng.uuid();
        let body = json!({"event": *rng.pick(&["ddex.delivery.status_changed", "enterprise.release.updated", "ddex.import.completed"]),
                          "resource": {"type": "release", "reference": reference, "url": format!("/api/v1/releases/{reference}")},
                          "occurred_at": "2026-11-22T04:05:06Z"});
        let bytes = body.to_string().into_bytes();
        deliveries.push(Delivery {
            id: format!("dlv_{n}"),
            body: bytes.clone(),
            first: at,
            forged: None,
        });
        if rng.chance(0.15) {
            // A second change of the resource in the same second: the very same bytes, another id.
            deliveries.push(Delivery {
                id: format!("dlv_{n}_twin"),
                body: bytes,
                first: at,
                forged: None,
            });
        }
        if rng.chance(0.1) {
            let mut replay = body.clone();
            replay["replay_of"] = json!(format!("dlv_{n}"));
            deliveries.push(Delivery {
                id: format!("dlv_{n}_replay"),
                body: replay.to_string().into_bytes(),
                first: at + rng.between(60.0, 7200.0),
                forged: None,
            });
        }
    }
    for n in 0..rng.range(0, 3) {
        let at = T0 + rng.between(0.0, 3600.0);
        let leaked = rotation.is_some_and(|r| at > r + 400.0) && rng.chance(0.5);
        deliveries.push(Delivery {
            id: format!("dlv_forged_{n}"),
            body: br#"{"event":"enterprise.release.updated","resource":{"type":"release","reference":"x","url":"/api/v1/releases/x"},"occurred_at":"2026-11-22T04:05:06Z"}"#.to_vec(),
            first: at,
            forged: Some(if leaked { S1 } else { ATTACKER }),
        });
    }

    // The attempts, in time order: (time, delivery index, attempt number).
    let mut queue: Vec<(f64, usize, usize)> = deliveries
        .iter()
        .enumerate()
        .map(|(i, d)| (d.first, i, 0))
        .collect();
    let mut store = Store {
        window: DedupWindow::with_defaults(100_000, None, None, [7; 16]).unwrap(),
        rows: BTreeMap::new(),
        outages,
        next_token: 0,
    };
    let old_receiver = WebhookReceiver::new(
        &[WebhookSecret::new(S1, None)],
        VerifyOptions::default(),
        NS,
    )
    .unwrap();
    let new_receiver = rotation.map(|r| {
        // Reconfigured a little after the rotation, once, from active_secrets: the previous secret
        // carries its valid_until, so this receiver stops taking it by itself.
        let secrets = active_secrets(
            S2,
            Some(S1),
            Some((r + 300.0).floor() as i64),
            (r + config_lag).floor() as i64,
        )
        .unwrap();
        WebhookReceiver::new(&secrets, VerifyOptions::default(), NS).unwrap()
    });
    let mut effects: BTreeMap<String, u32> = BTreeMap::new();
    let mut acked: BTreeMap<String, u16> = BTreeMap::new();
    let mut transcripts: BTreeMap<String, Value> = BTreeMap::new();
    let mut guard = 0;
    while let Some(pos) = queue
        .iter()
        .enumerate()
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.1 .1.cmp(&b.1 .1)))
        .map(|(p, _)| p)
    {
        guard += 1;
        if guard > 10_000 {
            return Err(Violation::new(
                "every run ends within its budget",
                "more than 10,000 delivery attempts",
            ));
        }
        let (now, i, attempt) = queue.swap_remove(pos);
        let d = &deliveries[i];
        let ts = now.floor() as i64;
        let signers: Vec<&str> = match (d.forged, rotation) {
            (Some(s), _) => vec![s],
            (None, Some(r)) if now >= r && now <= r + 300.0 => vec![S2, S1],
            (None, Some(r)) if now > r + 300.0 => vec![S2],
            _ => vec![S1],
        };
        let headers = sign(&signers, &d.body, ts, &d.id).unwrap();
        let pairs: Vec<(String, String)> = headers
            .pairs()
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        let receiver = match (&new_receiver, rotation) {
            (Some(r), Some(at)) if now >= at + config_lag => r,
            _ => &old_receiver,
        };
        let mut receipt = receiver.receive(&pairs, &d.body, ts);
        if transactional {
            receipt = receipt.transactional();
        }
        // Drive the receipt against the store and the handler, recording the answers.
        let mut answers: Vec<&str> = Vec::new();
        let mut claimed: Vec<(String, u64)> = Vec::new();
        let mut staged_effect = false;
        let mut staged_marks: Vec<String> = Vec::new();
        let mut t = now;
        let mut status = None;
        // Where the host was cancelled (the step's name), and the keys whose claims it reported.
        let mut cancelled: Option<&'static str> = None;
        let mut taken: Vec<String> = Vec::new();
        let mut tx_open = false;
        // New work asked for after a cancellation (an invariant broken: reported below).
        let mut late_work: Option<String> = None;
        for _ in 0..100 {
            if p_crash > 0.0 && rng.chance(p_crash) {
                crate::seen::count("receivers killed", 1);
                break; // the receiver's process is killed: no answer
            }
            let step = receipt.next();
            let down = store.down(t);
            let sec = t.floor() as i64;
            let cleanup = matches!(
                step,
                ReceiptStep::Release { .. } | ReceiptStep::Rollback {} | ReceiptStep::Reply { .. }
            );
            if cancelled.is_some() && !cleanup {
                late_work = Some(format!(
                    "{} asked for {step:?} after it was cancelled",
                    d.id
                ));
                break;
            }
            // The host is cancelled while this step is in flight: the step is done or not (its
            // outcome never reported), then `cancelled` is.
            let cancel_now = cancelled.is_none()
                && !matches!(step, ReceiptStep::Reply { .. })
                && p_cancel > 0.0
                && crng.chance(p_cancel);
            let mut scratch = cancel_now.then(|| receipt.clone());
            let (claims_before, answers_before) = (claimed.len(), answers.len());
            if cancel_now {
                crate::seen::count("hosts cancelled mid-step", 1);
                cancelled = Some(step_name(&step));
                if !crng.chance(0.5) {
                    // A rollback cut short is a failed one: the store discards the connection,
                    // and the database rolls back a transaction whose connection is gone.
                    tx_open &= !matches!(step, ReceiptStep::Rollback {});
                    answers.push("cancel");
                    receipt.report(O::Cancelled).unwrap();
                    continue;
                }
            }
            let real = &mut receipt;
            let receipt = scratch.as_mut().unwrap_or(real);
            refuses_the_impossible(receipt, &step, transactional, &mut prng)?;
            match step {
                ReceiptStep::Claim { key } => {
                    if down {
                        answers.push("store_down");
                        receipt.report(O::Failed).unwrap();
                    } else if transactional {
                        let state = match store.rows.get(&key) {
                            Some(Row::Done) => ClaimState::Done,
                            Some(Row::Held(until, _)) if *until > t => ClaimState::InProgress,
                            _ => {
                                store.next_token += 1;
                                store
                                    .rows
                                    .insert(key.clone(), Row::Held(t + 60.0, store.next_token));
                                claimed.push((key.clone(), store.next_token));
                                ClaimState::New
                            }
                        };
                        answers.push(state.as_str());
                        if state == ClaimState::New && !cancel_now {
                            taken.push(key.clone());
                        }
                        receipt.report(O::Claimed(state)).unwrap();
                    } else {
                        let state = store.window.claim(&key, sec).unwrap();
                        answers.push(state.as_str());
                        if state == ClaimState::New && !cancel_now {
                            taken.push(key.clone());
                        }
                        receipt.report(O::Claimed(state)).unwrap();
                    }
                }
                ReceiptStep::Release { key } => {
                    answers.push(if down { "store_down" } else { "ok" });
                    if !down {
                        if transactional {
                            if let Some((_, token)) = claimed.iter().find(|(k, _)| *k == key) {
                                if matches!(store.rows.get(&key), Some(Row::Held(_, tk)) if tk == token)
                                {
                                    store.rows.remove(&key);
                                }
                            }
                        } else {
                            store.window.release(&key, sec).unwrap();
                        }
                    }
                    // A failed release is as good as done: the claim's lease runs out.
                    receipt
                        .report(if down { O::Failed } else { O::Done })
                        .unwrap();
                }
                ReceiptStep::RunHandler {} => {
                    if rng.chance(p_handler) {
                        answers.push("fail");
                        receipt.report(O::Failed).unwrap();
                    } else {
                        answers.push("ok");
                        if transactional {
                            staged_effect = true;
                        } else {
                            *effects.entry(d.id.clone()).or_default() += 1;
                        }
                        receipt.report(O::Done).unwrap();
                    }
                }
                ReceiptStep::Begin {} => {
                    if down {
                        answers.push("store_down");
                        receipt.report(O::Failed).unwrap();
                    } else {
                        answers.push("ok");
                        tx_open = true;
                        receipt.report(O::Done).unwrap();
                    }
                }
                ReceiptStep::Commit { key, .. } => {
                    if down || rng.chance(p_commit) {
                        answers.push("store_down");
                        receipt.report(O::Failed).unwrap();
                    } else if transactional {
                        let mine = claimed.iter().find(|(k, _)| *k == key).map(|(_, tk)| *tk);
                        if matches!((store.rows.get(&key), mine), (Some(Row::Held(_, tk)), Some(m)) if *tk == m)
                        {
                            answers.push("ok");
                            staged_marks.push(key);
                            receipt.report(O::Marked(true)).unwrap();
                        } else {
                            answers.push("lost");
                            receipt.report(O::Marked(false)).unwrap();
                        }
                    } else {
                        answers.push("ok");
                        store.window.commit(&key, sec).unwrap();
                        receipt.report(O::Done).unwrap();
                    }
                }
                ReceiptStep::CommitTransaction {} => {
                    tx_open = false; // committed, or rolled back by the failed commit
                    if down || rng.chance(p_commit) {
                        answers.push("store_down");
                        staged_effect = false;
                        staged_marks.clear();
                        receipt.report(O::Failed).unwrap();
                    } else {
                        answers.push("ok");
                        if staged_effect {
                            *effects.entry(d.id.clone()).or_default() += 1;
                        }
                        for k in staged_marks.drain(..) {
                            store.rows.insert(k, Row::Done);
                        }
                        staged_effect = false;
                        receipt.report(O::Done).unwrap();
                    }
                }
                ReceiptStep::Rollback {} => {
                    tx_open = false;
                    answers.push("ok");
                    staged_effect = false;
                    staged_marks.clear();
                    receipt.report(O::Done).unwrap();
                }
                ReceiptStep::Wait { seconds } => {
                    t += seconds;
                    receipt.report(O::Done).unwrap();
                }
                ReceiptStep::Reply { status: s, .. } => {
                    status = Some(s);
                    break;
                }
                ReceiptStep::Enqueue { key } => {
                    panic!("a receipt that is not an inbox's asked to enqueue {key}")
                }
            }
            if cancel_now {
                // The step was done, its outcome never reported: `cancelled` instead (a claim
                // taken in flight is not this receipt's to release: its lease runs out).
                claimed.truncate(claims_before);
                answers.truncate(answers_before);
                answers.push("cancel");
                real.report(O::Cancelled).unwrap();
            }
        }
        let secrets_json: Vec<Value> = if std::ptr::eq(receiver, &old_receiver) {
            vec![json!({"secret": S1})]
        } else {
            let r = rotation.unwrap_or(T0);
            vec![
                json!({"secret": S2}),
                json!({"secret": S1, "valid_until": (r + 300.0).floor() as i64}),
            ]
        };
        transcripts.insert(d.id.clone(), json!({
            "comment": format!("simulated seed {seed}: {} attempt {}", d.id, attempt + 1),
            "spec": "DESIGN, Sessions, events and simulation (a simulated seed)",
            "input": {"namespace": NS, "secrets": secrets_json, "headers": pairs, "body": String::from_utf8_lossy(&d.body),
                      "now": ts, "answers": answers, "transactional": transactional},
        }));
        // The receipt's own invariants, each reported with the attempt's replayable transcript.
        let problem = if let Some(detail) = late_work {
            Some(("a cancelled delivery starts no new work", detail))
        } else if tx_open && status.is_some() {
            Some((
                "no transaction is left open",
                format!("{} replied with its transaction open", d.id),
            ))
        } else if let (Some(at), Some(s)) = (cancelled, status) {
            let at_work = !matches!(at, "release" | "rollback");
            // A plain receipt cancelled once its handler succeeded keeps its claims (the effect
            // stands; the leases run out).
            let keeps = !transactional && matches!(at, "commit" | "wait");
            let held = |k: &String| {
                if transactional {
                    claimed.iter().any(|(ck, tk)| {
                        ck == k && matches!(store.rows.get(k), Some(Row::Held(_, x)) if x == tk)
                    })
                } else {
                    store.window.state(k, t.floor() as i64).ok() == Some(ClaimState::InProgress)
                }
            };
            if at_work && s != 503 {
                Some((
                    "a delivery cancelled mid-work is answered 503",
                    format!("{} answered {s}", d.id),
                ))
            } else if at_work && !keeps && taken.iter().any(held) {
                Some((
                    "a cancelled delivery leaves no claim held",
                    format!("{} cancelled at {at} kept a claim", d.id),
                ))
            } else {
                None
            }
        } else {
            None
        };
        if let Some((invariant, detail)) = problem {
            let mut v = Violation::new(invariant, detail);
            v.transcript = transcripts.get(&d.id).cloned();
            return Err(v);
        }
        if let Some(forger) = d.forged {
            if status.is_some_and(|s| s != 401) {
                let mut v = Violation::new(
                    "no forged or expired signature is ever applied",
                    format!(
                        "{} signed with {} answered {status:?}",
                        d.id,
                        if forger == S1 {
                            "the rotated-out secret"
                        } else {
                            "an attacker's secret"
                        }
                    ),
                );
                v.transcript = transcripts.get(&d.id).cloned();
                return Err(v);
            }
            crate::seen::count("forgeries refused", 1);
            continue;
        }
        match status {
            Some(s) if (200..300).contains(&s) => {
                acked.insert(d.id.clone(), s);
                if rng.chance(0.05) {
                    // At least once: the service delivers it again, later.
                    queue.push((now + rng.between(1.0, 3600.0), i, attempt + 1));
                }
            }
            _ if attempt < SCHEDULE.len() => {
                queue.push(((d.first + SCHEDULE[attempt]).max(now + 1.0), i, attempt + 1))
            }
            _ => {}
        }
    }
    for d in deliveries.iter().filter(|d| d.forged.is_none()) {
        let applied = effects.get(&d.id).copied().unwrap_or(0);
        let problem = if acked.contains_key(&d.id) && applied == 0 {
            Some((
                "every delivery answered 2xx was applied",
                format!("{} was acknowledged but its handler never ran", d.id),
            ))
        } else if transactional && applied > 1 {
            Some((
                "exactly once with a transactional store",
                format!("{} applied {applied} times", d.id),
            ))
        } else if healthy && !acked.contains_key(&d.id) {
            Some((
                "a run with no fault injected succeeds",
                format!("{} was never acknowledged", d.id),
            ))
        } else {
            None
        };
        if let Some((invariant, detail)) = problem {
            let mut v = Violation::new(invariant, detail);
            v.transcript = transcripts.get(&d.id).cloned();
            return Err(v);
        }
    }
    crate::seen::count(
        "twins applied",
        deliveries
            .iter()
            .filter(|d| d.id.ends_with("_twin") && effects.contains_key(&d.id))
            .count() as u64,
    );
    for id in effects.keys() {
        if deliveries.iter().any(|d| d.id == *id && d.forged.is_some()) {
            return Err(Violation::new(
                "no forged or expired signature is ever applied",
                id.clone(),
            ));
        }
    }
    Ok(())
}

/// Every outcome a host could report, right or wrong.
const OUTCOMES: [O; 10] = [
    O::Done,
    O::Failed,
    O::Cancelled,
    O::Claimed(ClaimState::New),
    O::Claimed(ClaimState::InProgress),
    O::Claimed(ClaimState::Done),
    O::Marked(true),
    O::Marked(false),
    O::Enqueued(true),
    O::Enqueued(false),
];

/// Whether `step` can have `outcome`, from the steps' contracts (DESIGN, Protocol machines):
/// a cancellation always; a claim its state; an enqueue whether it was new; a transactional
/// commit (the mark) whether it changed a row; a wait is done; any other step done or failed.
fn can_have(step: &ReceiptStep, transactional: bool, outcome: O) -> bool {
    match (step, outcome) {
        (ReceiptStep::Reply { .. }, _) => false,
        (_, O::Cancelled) => true,
        (ReceiptStep::Claim { .. }, o) => matches!(o, O::Claimed(_) | O::Failed),
        (ReceiptStep::Enqueue { .. }, o) => matches!(o, O::Enqueued(_) | O::Failed),
        (ReceiptStep::Commit { .. }, O::Marked(_)) => transactional,
        (ReceiptStep::Commit { .. }, O::Done) => !transactional,
        (ReceiptStep::Wait { .. }, o) => o == O::Done,
        (_, o) => matches!(o, O::Done | O::Failed),
    }
}

/// `report`'s refusal, probed at every step but the reply: an outcome the pending step cannot
/// have is refused, and the receipt is left exactly as it was.
fn refuses_the_impossible(
    receipt: &WebhookReceipt,
    step: &ReceiptStep,
    transactional: bool,
    prng: &mut Rng,
) -> Result<(), Violation> {
    if matches!(step, ReceiptStep::Reply { .. }) {
        return Ok(());
    }
    let outcome = *prng.pick(&OUTCOMES);
    if can_have(step, transactional, outcome) {
        return Ok(());
    }
    crate::seen::count("impossible receipt outcomes refused", 1);
    let what = if transactional {
        "transactional receipt"
    } else {
        "receipt"
    };
    crate::refused(
        receipt,
        what,
        step,
        &outcome,
        WebhookReceipt::report,
        WebhookReceipt::next,
    )
}

/// A step's name in the transcripts.
fn step_name(step: &ReceiptStep) -> &'static str {
    match step {
        ReceiptStep::Claim { .. } => "claim",
        ReceiptStep::Release { .. } => "release",
        ReceiptStep::RunHandler {} => "run_handler",
        ReceiptStep::Commit { .. } => "commit",
        ReceiptStep::Wait { .. } => "wait",
        ReceiptStep::Begin {} => "begin",
        ReceiptStep::CommitTransaction {} => "commit_transaction",
        ReceiptStep::Rollback {} => "rollback",
        ReceiptStep::Enqueue { .. } => "enqueue",
        ReceiptStep::Reply { .. } => "reply",
    }
}
