//! `inbox` runs: one to four inbox workers against a model of the SQL inbox table, with
//! transactions (the handler's effect and the mark commit together or not at all), row locks
//! from the mark to the end of its transaction, leases, and faults: workers killed at any step
//! (their transaction rolled back, a new worker started), handlers that fail, handlers that
//! outlive the lease (so a second worker claims the entry), poison pills that always fail,
//! and an unreachable store. Then a calm phase: no kills, no
//! failures except the pills, until every worker drains.
//!
//! Half the runs model a store without transactions (the Redis stream inbox,
//! `transactional: false`): the handler's effect is applied when it returns, and the mark is a
//! separate guarded step.
//!
//! Invariants: an entry's effect commits at most once (with transactions); without, an effect
//! is repeated only after a worker was killed between the effect and its mark or a mark was
//! refused (the lease ran out), never otherwise; after the calm phase every entry is done with
//! exactly one effect (at least one without transactions), or poison with none (with
//! transactions); poison only after `max_attempts` claims; the handler runs at most
//! `max_attempts` times per entry; the pills end poison; the workers drain.

use crate::rng::Rng;
use crate::{seen, Violation};
use royaltykit::machine::{InboxEntry, InboxOptions, InboxOutcome as O, InboxStep, InboxWorker};
use std::collections::HashMap;

const LEASE: i64 = 60;

#[derive(Debug, Clone, PartialEq)]
struct Row {
    state: &'static str,
    attempts: u32,
    due_at: i64,
    /// The worker whose transaction holds the row lock (from its mark to its commit).
    locked_by: Option<usize>,
}

struct Worker {
    machine: InboxWorker,
    /// The open transaction: effects and the mark it holds.
    tx: Option<(Vec<String>, Option<(String, u32)>)>,
    /// Until when the handler runs (virtual time).
    busy_until: f64,
    /// (no transactions) The entry whose effect was applied and is not yet marked.
    unmarked: Option<String>,
    drain: bool,
    drained: bool,
}

fn new_worker(rng: &mut Rng, options: &InboxOptions, drain: bool) -> Worker {
    let options = InboxOptions {
        drain: Some(drain),
        ..options.clone()
    };
    Worker {
        machine: InboxWorker::new(&options, rng.u64()).unwrap(),
        tx: None,
        busy_until: 0.0,
        unmarked: None,
        drain,
        drained: false,
    }
}

pub fn run(seed: u64) -> Result<(), Violation> {
    let mut rng = Rng::new(seed);
    // The probes of `report`'s refusals draw apart, so the runs are the same with or without them.
    let mut prng = Rng::new(seed ^ 0x0BAD_0C0E);
    let count = rng.range(1, 30) as usize;
    let max_attempts = rng.range(1, 7) as u32;
    let mut table: HashMap<String, Row> = HashMap::new();
    let mut effects: HashMap<String, u32> = HashMap::new();
    // (no transactions) Runs whose effect may be repeated: killed before the mark, or refused.
    let mut repeatable: HashMap<String, u32> = HashMap::new();
    let transactional = rng.chance(0.5);
    let mut pills = Vec::new();
    let mut now: f64 = 1_800_000_000.0;
    let mut keys: Vec<String> = Vec::new();
    for i in 0..count {
        let key = format!("k{i}");
        table.insert(
            key.clone(),
            Row {
                state: "pending",
                attempts: 0,
                due_at: now as i64 + rng.range(0, 30) as i64,
                locked_by: None,
            },
        );
        if rng.chance(0.1) {
            pills.push(key.clone());
        }
        keys.push(key);
    }
    let options = InboxOptions {
        max_attempts: Some(max_attempts),
        poll_seconds: Some(rng.between(0.5, 5.0)),
        transactional: Some(transactional),
        drain: Some(false),
    };
    let n = rng.range(1, 5) as usize;
    let mut workers: Vec<Worker> = (0..n)
        .map(|_| new_worker(&mut rng, &options, false))
        .collect();
    let chaos_steps = rng.range(0, 400);
    let mut step_no = 0u64;
    loop {
        step_no += 1;
        if step_no > 200_000 {
            return Err(Violation::new("the workers drain", "200000 steps"));
        }
        let calm = step_no > chaos_steps;
        if calm {
            // The calm phase: a worker about to claim drains when nothing is due.
            for w in &mut workers {
                if !w.drain && matches!(w.machine.next(), InboxStep::Claim {}) {
                    *w = new_worker(&mut rng, &options, true);
                }
            }
        }
        if calm && workers.iter().all(|w| w.drained) {
            // Nothing due now; an entry waiting out a backoff or a lease needs time to pass.
            let Some(t) = table
                .values()
                .filter(|r| r.state == "pending")
                .map(|r| r.due_at)
                .min()
            else {
                break;
            };
            now = now.max(t as f64);
            for w in &mut workers {
                *w = new_worker(&mut rng, &options, true);
            }
            continue;
        }
        now += rng.between(0.0, 3.0);
        let i = rng.range(0, workers.len() as u64) as usize;
        if !calm && rng.chance(0.03) {
            // Killed: its transaction rolls back, a new worker takes its place.
            for row in table.values_mut() {
                if row.locked_by == Some(i) {
                    row.locked_by = None;
                }
            }
            seen::count("inbox workers killed", 1);
            if let Some(k) = workers[i].unmarked.take() {
                *repeatable.entry(k).or_default() += 1;
            }
            workers[i] = new_worker(&mut rng, &options, false);
            continue;
        }
        let w = &mut workers[i];
        if w.drained {
            continue;
        }
        let store_down = !calm && rng.chance(0.02);
        let step = w.machine.next();
        refuses_the_impossible(&w.machine, &step, now, &mut prng)?;
        match step {
            InboxStep::Claim {} => {
                if store_down {
                    w.machine
                        .report(O::Failed("store down".into()), now)
                        .unwrap();
                    continue;
                }
                let t = now as i64;
                let due = keys
                    .iter()
                    .filter(|k| {
                        let r = &table[*k];
                        r.state == "pending" && r.due_at <= t && r.locked_by.is_none()
                    })
                    .min_by_key(|k| table[*k].due_at)
                    .cloned();
                if let Some(k) = &due {
                    if workers.iter().any(|o| o.unmarked.as_ref() == Some(k)) {
                        // Its lease ran out between another worker's effect and mark.
                        *repeatable.entry(k.clone()).or_default() += 1;
                    }
                }
                let w = &mut workers[i];
                let entry = due.map(|k| {
                    let r = table.get_mut(&k).unwrap();
                    r.attempts += 1;
                    r.due_at = t + LEASE;
                    InboxEntry {
                        key: k.clone(),
                        delivery_id: k.clone(),
                        event: "e".into(),
                        body: "{}".into(),
                        attempts: r.attempts,
                    }
                });
                w.machine.report(O::Claimed(entry), now).unwrap();
            }
            InboxStep::Idle { seconds } => {
                if seconds <= 0.0 || !seconds.is_finite() {
                    return Err(Violation::new(
                        "an idle wait is positive",
                        format!("{seconds}"),
                    ));
                }
                w.machine.report(O::Done, now).unwrap();
            }
            InboxStep::Drained {} => w.drained = true,
            InboxStep::Begin {} => {
                if !transactional {
                    return Err(Violation::new(
                        "no transaction is opened without transactions",
                        "Begin",
                    ));
                }
                if store_down {
                    w.machine
                        .report(O::Failed("store down".into()), now)
                        .unwrap();
                    continue;
                }
                w.tx = Some((Vec::new(), None));
                w.machine.report(O::Done, now).unwrap();
            }
            InboxStep::RunHandler { entry } => {
                if entry.attempts > max_attempts {
                    return Err(Violation::new(
                        "the handler runs at most max_attempts times per entry",
                        format!("{}: claim {} of {max_attempts}", entry.key, entry.attempts),
                    ));
                }
                if w.busy_until == 0.0 {
                    // Usually well inside the lease; sometimes longer than it.
                    let takes = if !calm && rng.chance(0.05) {
                        rng.between(61.0, 120.0)
                    } else {
                        rng.between(0.1, 5.0)
                    };
                    w.busy_until = now + takes;
                    continue;
                }
                if now < w.busy_until {
                    continue;
                }
                w.busy_until = 0.0;
                let fails = pills.contains(&entry.key) || (!calm && rng.chance(0.2));
                if fails {
                    w.machine
                        .report(O::Failed("handler failed".into()), now)
                        .unwrap();
                } else {
                    if let Some((fx, _)) = &mut w.tx {
                        fx.push(entry.key.clone());
                    } else if !transactional {
                        if table[&entry.key].attempts != entry.attempts {
                            // Its lease ran out while the handler ran: another claim since.
                            *repeatable.entry(entry.key.clone()).or_default() += 1;
                        }
                        *effects.entry(entry.key.clone()).or_default() += 1;
                        w.unmarked = Some(entry.key.clone());
                    }
                    w.machine.report(O::Done, now).unwrap();
                }
            }
            InboxStep::MarkDone { key, attempts } => {
                let row = table.get_mut(&key).unwrap();
                if row.locked_by.is_some_and(|o| o != i) {
                    continue; // waits on the other transaction's lock
                }
                let ok = row.state == "pending" && row.attempts == attempts;
                if !transactional {
                    w.unmarked = None;
                    if store_down {
                        // The mark never reached the store: the entry is claimed again
                        // after its lease, and its effect repeats.
                        *repeatable.entry(key.clone()).or_default() += 1;
                        w.machine
                            .report(O::Failed("store down".into()), now)
                            .unwrap();
                        continue;
                    }
                    if ok {
                        row.state = "done";
                    } else {
                        *repeatable.entry(key.clone()).or_default() += 1;
                    }
                    w.machine.report(O::Marked(ok), now).unwrap();
                    continue;
                }
                if ok {
                    row.locked_by = Some(i);
                    if let Some((_, mark)) = &mut w.tx {
                        *mark = Some((key, attempts));
                    }
                }
                w.machine.report(O::Marked(ok), now).unwrap();
            }
            InboxStep::Commit {} => {
                if store_down {
                    w.machine
                        .report(O::Failed("store down".into()), now)
                        .unwrap();
                    continue;
                }
                let (fx, mark) = w.tx.take().unwrap_or_default();
                for k in fx {
                    *effects.entry(k).or_default() += 1;
                }
                if let Some((k, _)) = mark {
                    let row = table.get_mut(&k).unwrap();
                    row.state = "done";
                    row.locked_by = None;
                }
                w.machine.report(O::Done, now).unwrap();
            }
            InboxStep::Rollback {} => {
                w.tx = None;
                for row in table.values_mut() {
                    if row.locked_by == Some(i) {
                        row.locked_by = None;
                    }
                }
                w.machine.report(O::Done, now).unwrap();
            }
            InboxStep::Settle {
                key,
                attempts,
                poison,
                retry_at,
                ..
            } => {
                if store_down {
                    w.machine
                        .report(O::Failed("store down".into()), now)
                        .unwrap();
                    continue;
                }
                let row = table.get_mut(&key).unwrap();
                if row.state == "pending" && row.attempts == attempts && row.locked_by.is_none() {
                    if poison && attempts < max_attempts {
                        return Err(Violation::new(
                            "poison only after max_attempts claims",
                            format!("{key}: {attempts} of {max_attempts}"),
                        ));
                    }
                    row.state = if poison { "poison" } else { "pending" };
                    row.due_at = retry_at;
                }
                w.machine.report(O::Done, now).unwrap();
            }
        }
        for (k, n) in &effects {
            if *n > 1 + repeatable.get(k).copied().unwrap_or(0) {
                return Err(Violation::new(
                    "an effect repeats only after a lost or refused mark (never with transactions)",
                    format!("{k}: {n} effects"),
                ));
            }
        }
    }
    for k in &keys {
        let row = &table[k];
        let fx = effects.get(k).copied().unwrap_or(0);
        match (row.state, fx) {
            ("done", 1) => seen::count("inbox entries done", 1),
            ("poison", 0) => seen::count("inbox entries poison", 1),
            ("done", _) if !transactional && fx >= 1 => {
                seen::count("inbox entries done (no transactions)", 1)
            }
            ("poison", _) if !transactional => seen::count("inbox entries poison", 1),
            _ => {
                return Err(Violation::new(
                    "every entry ends done with one effect or poison with none",
                    format!(
                        "{k}: {} with {fx} effects, {} attempts",
                        row.state, row.attempts
                    ),
                ))
            }
        }
        if pills.contains(k) && row.state != "poison" {
            return Err(Violation::new("a poison pill ends poison", k.clone()));
        }
    }
    Ok(())
}

/// Whether `step` can have `outcome`, from the steps' contracts (DESIGN, Protocol machines): a
/// claim its entry or a failure; a mark whether it changed a row, or a failure; an idle wait is
/// done; the drained worker takes nothing; any other step is done or failed.
fn can_have(step: &InboxStep, outcome: &O) -> bool {
    match (step, outcome) {
        (InboxStep::Drained {}, _) => false,
        (InboxStep::Claim {}, o) => matches!(o, O::Claimed(_) | O::Failed(_)),
        (InboxStep::MarkDone { .. }, o) => matches!(o, O::Marked(_) | O::Failed(_)),
        (InboxStep::Idle { .. }, o) => *o == O::Done,
        (_, o) => matches!(o, O::Done | O::Failed(_)),
    }
}

/// `report`'s refusal, probed at every step: an outcome the pending step cannot have is
/// refused, and the worker is left exactly as it was.
fn refuses_the_impossible(
    worker: &InboxWorker,
    step: &InboxStep,
    now: f64,
    prng: &mut Rng,
) -> Result<(), Violation> {
    let entry = InboxEntry {
        key: "k".into(),
        delivery_id: "k".into(),
        event: "e".into(),
        body: "{}".into(),
        attempts: 1,
    };
    let outcomes = [
        O::Done,
        O::Failed("probe".into()),
        O::Claimed(None),
        O::Claimed(Some(entry)),
        O::Marked(true),
        O::Marked(false),
    ];
    let outcome = prng.pick(&outcomes).clone();
    if can_have(step, &outcome) {
        return Ok(());
    }
    seen::count("impossible inbox outcomes refused", 1);
    crate::refused(
        worker,
        "inbox worker",
        step,
        &outcome,
        |w, o| w.report(o, now),
        InboxWorker::next,
    )
}
