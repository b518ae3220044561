//! Deterministic simulation of the protocol machines (DESIGN "Sessions, events and simulation"):
//! because the core reads no clock and no randomness, whole runs are played in virtual time
//! against a model of both services with faults injected at random, and invariants are checked
//! on every run, the way FoundationDB and TigerBeetle test their systems.
//!
//! Each seed picks one kind of run:
//! - `export`: a reporting export job on a [`Session`] against the reporting model (paged lists
//!   with a cursor, list lag, items with or without the body's members, creates dropped or timed
//!   out after being applied, 429 with every form of `Retry-After`, 5xx, 401 mid-run, 206 and cut
//!   downloads, redirects to another origin, short-lived tokens, other exports appearing, a
//!   service whose clock, in its `Date` and `Retry-After` dates, runs up to 90 s ahead or behind);
//! - `session`: 2 to 20 concurrent calls on one [`Session`] against the enterprise model (token
//!   lifetimes from an hour down to an `expires_at` behind the client's clock, exchanges failing
//!   or refused, 401 mid-run, 429, rate budgets);
//! - `pages`: a walk over every page of a list against a list service of every paging style,
//!   with random sizes, bounds and one fault in some runs (a cursor given again, a page that
//!   says more without a cursor, a page that is not JSON, a service ignoring the cursor);
//! - `fleet`: 2 to 5 processes of one API client sharing a token and a rate budget through a
//!   model of Redis (Redis unreachable at times, failing exchanges, tight or spec limits);
//! - `inbox`: one to four inbox workers against a model of the SQL inbox table with
//!   transactions and row locks (workers killed at any step, failing handlers, handlers that
//!   outlive the lease, poison pills, an unreachable store), then a calm phase;
//! - `recovery`: periodic delivery recovery against the service's delivery log and a
//!   receiver's store (lost, in-flight, unrecorded and claimed deliveries; replays accepted,
//!   refused, lost or left pending; unreadable log pages), then a calm phase;
//! - `webhooks`: the service delivering events on its retry schedule to a receiver (in-memory or
//!   transactional store, outages, failed commits and handlers, crashes), with redeliveries,
//!   operator replays, same-second twins, forgeries and a secret rotation with its overlap.
//!
//! Invariants (each violation names its seed and prints a replayable transcript): at most one
//! export per job; a run with no fault injected succeeds; every run ends within its budget; no
//! credential leaves its exchange and no request names another origin; `Retry-After` is never
//! shortened; one token exchange in flight per session, and one in all when nothing forces a new
//! one; the per-minute limits of the session's budget are kept; every delivery the service saw
//! answered 2xx was applied, exactly once with a transactional store, and no forged or expired
//! signature is ever applied; a walk over pages ends, never gives an item twice, gives the list's
//! beginning in order, the whole list when it says `last`, and never fails without a fault; recovery
//! never replays a delivery the store knows, one in flight, one whose replay is pending or one
//! delivered but unrecorded, keeps its bounds, and after a calm phase every lost delivery is
//! processed or at its replay bound; an inbox entry's effect commits at most once, and every entry
//! ends done with one effect or poison (after `max_attempts`) with none; a fleet never exceeds a
//! limit across its processes and makes one token exchange when nothing forces another; a
//! receipt and an inbox worker refuse, at every step, an outcome the step cannot have (a `report`
//! probed with one drawn at random), and a refusal leaves the machine exactly as it was.
//!
//! `cargo test --test simulation` runs `ROYALTYKIT_SIM_SEEDS` seeds (default 7000: 1000 of each kind) from
//! `ROYALTYKIT_SIM_START` (default 0); `make simulate SEEDS=N` runs many more in release mode.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::too_many_lines,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::type_complexity
)]

mod enterprise;
mod export;
mod fleet;
mod inbox;
mod pages;
mod recovery;
mod rng;
mod transcript;
mod webhooks;

use std::time::Instant;

/// What one simulated run found wrong, with what replays it.
pub struct Violation {
    /// The invariant broken, in words.
    pub invariant: String,
    /// What happened.
    pub detail: String,
    /// The run as a transcript of tests/vectors/machines.json, when one replays it.
    pub transcript: Option<serde_json::Value>,
}

impl Violation {
    /// A violation of `invariant`.
    pub fn new(invariant: &str, detail: impl Into<String>) -> Self {
        Self {
            invariant: invariant.to_owned(),
            detail: detail.into(),
            transcript: None,
        }
    }
}

/// `report`'s refusal of `outcome`, which the pending `step` cannot have: a copy of `machine`
/// (a `what`) is told it through `report`, which must refuse it and leave the copy exactly as the
/// machine is; `next` says what the copy asks for when it took the outcome instead.
pub fn refused<M: Clone + PartialEq, O: std::fmt::Debug + Clone, S: std::fmt::Debug, E>(
    machine: &M,
    what: &str,
    step: &S,
    outcome: &O,
    report: impl FnOnce(&mut M, O) -> Result<(), E>,
    next: impl FnOnce(&M) -> S,
) -> Result<(), Violation> {
    let mut probe = machine.clone();
    match report(&mut probe, outcome.clone()) {
        Err(_) if probe == *machine => Ok(()),
        Err(_) => Err(Violation::new(
            &format!("a refused outcome leaves the {what} unchanged"),
            format!("{outcome:?} at {step:?} changed the {what}"),
        )),
        Ok(()) => Err(Violation::new(
            "an outcome the pending step cannot have is refused",
            format!(
                "{outcome:?} at {step:?} was taken; the {what} now asks for {:?}",
                next(&probe)
            ),
        )),
    }
}

/// The service's count of one client's requests, as the enterprise service counts them: by
/// the time each request *arrives*, in every rolling window of a limit's length. Requests reach
/// it after a latency that differs from one to the next (up to 0.95 s here), so two requests
/// may arrive closer together than they were sent.
#[derive(Default)]
pub struct ServiceCount {
    arrivals: Vec<f64>,
}

impl ServiceCount {
    /// A request's latency to the service: mostly milliseconds, now and then most of a second.
    pub fn latency(rng: &mut rng::Rng) -> f64 {
        if rng.chance(0.05) {
            rng.between(0.1, 0.95)
        } else {
            rng.between(0.0005, 0.1)
        }
    }

    /// Counts a request arriving at `at`.
    pub fn arrive(&mut self, at: f64) {
        self.arrivals.push(at);
    }

    /// The busiest rolling window of `seconds` (any `[t, t + seconds)`), as (requests, t), or
    /// `None` when more than `limit` requests never arrived in one.
    pub fn over(&self, limit: i64, seconds: i64) -> Option<(usize, f64)> {
        let mut sorted = self.arrivals.clone();
        sorted.sort_by(f64::total_cmp);
        let mut end = 0;
        for (start, t) in sorted.iter().enumerate() {
            while end < sorted.len() && sorted[end] < t + seconds as f64 {
                end += 1;
            }
            let count = end - start;
            if count as i64 > limit {
                return Some((count, *t));
            }
        }
        None
    }
}

/// How often the runs reached the paths worth reaching (printed with the summary, so a model
/// that stopped reaching them shows).
pub mod seen {
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Counters by name.
    pub static COUNTERS: [(&str, AtomicU64); 28] = [
        ("jobs done", AtomicU64::new(0)),
        ("jobs reconcile", AtomicU64::new(0)),
        ("jobs failed", AtomicU64::new(0)),
        ("lost creates adopted", AtomicU64::new(0)),
        ("second creates after proving none", AtomicU64::new(0)),
        ("listings of 2+ pages", AtomicU64::new(0)),
        ("grace looks", AtomicU64::new(0)),
        ("await_token steps", AtomicU64::new(0)),
        ("token exchanges", AtomicU64::new(0)),
        ("twins applied", AtomicU64::new(0)),
        ("receivers killed", AtomicU64::new(0)),
        ("hosts cancelled mid-step", AtomicU64::new(0)),
        ("forgeries refused", AtomicU64::new(0)),
        ("processes killed mid-job and resumed", AtomicU64::new(0)),
        ("requests applied by a killed process", AtomicU64::new(0)),
        ("walks read to the end", AtomicU64::new(0)),
        ("walks of 2+ pages", AtomicU64::new(0)),
        ("walks stopped by a bound", AtomicU64::new(0)),
        ("walks failed on a fault", AtomicU64::new(0)),
        ("replays accepted", AtomicU64::new(0)),
        ("recovery runs failed on the log", AtomicU64::new(0)),
        ("lost deliveries recovered", AtomicU64::new(0)),
        ("inbox workers killed", AtomicU64::new(0)),
        ("inbox entries done", AtomicU64::new(0)),
        ("inbox entries poison", AtomicU64::new(0)),
        ("fleet token exchanges", AtomicU64::new(0)),
        ("impossible receipt outcomes refused", AtomicU64::new(0)),
        ("impossible inbox outcomes refused", AtomicU64::new(0)),
    ];

    /// Counts one of `name`.
    pub fn count(name: &str, n: u64) {
        if let Some((_, c)) = COUNTERS.iter().find(|(k, _)| *k == name) {
            c.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The counters, as `name n, …`.
    pub fn summary() -> String {
        COUNTERS
            .iter()
            .map(|(k, c)| format!("{k} {}", c.load(Ordering::Relaxed)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The kinds of runs, by seed.
const KINDS: [&str; 7] = [
    "export", "session", "webhooks", "pages", "recovery", "inbox", "fleet",
];

fn run_seed(seed: u64) -> (usize, Result<(), Violation>) {
    let kind = (seed % KINDS.len() as u64) as usize;
    let result = match kind {
        0 => export::run(seed),
        1 => enterprise::run(seed),
        2 => webhooks::run(seed),
        3 => pages::run(seed),
        4 => recovery::run(seed),
        5 => inbox::run(seed),
        _ => fleet::run(seed),
    };
    (kind, result)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn simulated_runs() {
    let seeds = env_u64("ROYALTYKIT_SIM_SEEDS", 7000);
    let start = env_u64("ROYALTYKIT_SIM_START", 0);
    let threads = env_u64(
        "ROYALTYKIT_SIM_THREADS",
        std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
    )
    .max(1);
    let began = Instant::now();
    let results: Vec<(u64, [u64; 7], Vec<(u64, usize, Violation)>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut counts = [0u64; 7];
                    let mut bad = Vec::new();
                    let mut seed = start + t;
                    let mut n = 0;
                    while seed < start + seeds {
                        let (kind, r) = run_seed(seed);
                        counts[kind] += 1;
                        n += 1;
                        if let Err(v) = r {
                            bad.push((seed, kind, v));
                            if bad.len() >= 3 {
                                break;
                            }
                        }
                        seed += threads;
                    }
                    (n, counts, bad)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total = 0;
    let mut counts = [0u64; 7];
    let mut bad = Vec::new();
    for (n, c, b) in results {
        total += n;
        for (k, v) in c.iter().enumerate() {
            counts[k] += v;
        }
        bad.extend(b);
    }
    bad.sort_by_key(|(seed, _, _)| *seed);
    let elapsed = began.elapsed().as_secs_f64();
    println!(
        "simulation: {total} seeds from {start} ({} export, {} session, {} webhooks, {} pages, {} recovery, {} inbox, {} fleet) in {elapsed:.1} s, {} violation(s)",
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        counts[4],
        counts[5],
        counts[6],
        bad.len()
    );
    println!("simulation reached: {}", seen::summary());
    if let Some((seed, kind, v)) = bad.first() {
        let mut report = format!(
            "seed {seed} ({} run) broke `{}`: {}\nreplay: ROYALTYKIT_SIM_START={seed} ROYALTYKIT_SIM_SEEDS=1 cargo test -p royaltykit --test simulation",
            KINDS[*kind], v.invariant, v.detail
        );
        if let Some(t) = &v.transcript {
            report.push_str("\ntranscript (tests/vectors/machines.json form):\n");
            report.push_str(&serde_json::to_string_pretty(t).unwrap_or_default());
        }
        for (seed, kind, v) in bad.iter().skip(1) {
            report.push_str(&format!(
                "\nalso seed {seed} ({}): `{}`: {}",
                KINDS[*kind], v.invariant, v.detail
            ));
        }
        panic!("{report}");
    }
}
