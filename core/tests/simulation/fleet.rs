//! `fleet` runs: 2 to 5 processes of one API client, each with a fleet [`Session`] and 1 to 8
//! calls, sharing one Redis (a model of `GET`, `SET NX PX` and the fleet's three scripts, with
//! key expiry) against the enterprise model's token exchange and reads, with the per-minute
//! limits tight or the spec's. Faults in some runs: Redis unreachable now and then, a 503 on an
//! exchange, a process's calls starting late.
//!
//! Invariants: the fleet's requests never exceed a window's limit in any rolling window (the
//! service's count, over every process, by arrival after a latency of up to 0.95 s); with an hour-long token and no fault, the fleet makes
//! exactly one token exchange; a call's `Reserve` is answered and then sent or held, never
//! sent uncounted; every call ends, and a run without faults ends with every call done.

use crate::rng::Rng;
use crate::{seen, ServiceCount, Violation};
use royaltykit::catalog::Api;
use royaltykit::machine::{
    Call, CallOptions, Fleet, FleetToken, FleetTokenStep, Session, Step, StepOutcome,
    PUBLISH_SCRIPT, RESERVE_SCRIPT, UNLOCK_SCRIPT,
};
use royaltykit::request::RequestParams;
use royaltykit::retry::{RateBudget, TransportFailure};
use serde_json::json;
use std::collections::HashMap;

const T0: f64 = 1_763_950_000.0;

/// A model of the Redis commands the fleet sends.
#[derive(Default)]
struct Redis {
    strings: HashMap<String, (String, Option<f64>)>,
    zsets: HashMap<String, Vec<(i64, String)>>,
}

impl Redis {
    fn get(&mut self, key: &str, now: f64) -> Option<String> {
        match self.strings.get(key) {
            Some((v, exp)) if exp.is_none_or(|e| e > now) => Some(v.clone()),
            _ => None,
        }
    }

    fn run(&mut self, c: &[String], now: f64) -> Option<String> {
        match c[0].as_str() {
            "GET" => self.get(&c[1], now),
            "SET" => {
                // SET key value NX PX ms
                if self.get(&c[1], now).is_some() {
                    return None;
                }
                let ms: f64 = c[5].parse().unwrap();
                self.strings
                    .insert(c[1].clone(), (c[2].clone(), Some(now + ms / 1000.0)));
                Some("OK".into())
            }
            "EVAL" if c[1] == RESERVE_SCRIPT => {
                let n: usize = c[2].parse().unwrap();
                let keys = &c[3..3 + n];
                let argv = &c[3 + n..];
                let second: i64 = argv[0].parse().unwrap();
                let mut wait: Option<i64> = None;
                let mut first = None;
                for (i, k) in keys.iter().enumerate() {
                    let limit: usize = argv[2 + 2 * i].parse().unwrap();
                    let len: i64 = argv[3 + 2 * i].parse().unwrap();
                    let z = self.zsets.entry(k.clone()).or_default();
                    z.retain(|(s, _)| *s > second - len - 2);
                    if z.len() >= limit {
                        let oldest = z.iter().map(|(s, _)| *s).min().unwrap();
                        wait = Some(wait.map_or(oldest + len + 2, |w| w.max(oldest + len + 2)));
                        first.get_or_insert(i + 1);
                    }
                }
                if let Some(w) = wait {
                    return Some(format!("wait {w} {}", first.unwrap()));
                }
                for k in keys {
                    self.zsets
                        .entry(k.clone())
                        .or_default()
                        .push((second, argv[1].clone()));
                }
                Some("ok".into())
            }
            "EVAL" if c[1] == PUBLISH_SCRIPT => {
                let ttl: f64 = c[7].parse().unwrap();
                let exp = (ttl > 0.0).then(|| now + ttl / 1000.0);
                self.strings.insert(c[3].clone(), (c[5].clone(), exp));
                if self.get(&c[4], now).as_deref() == Some(c[6].as_str()) {
                    self.strings.remove(&c[4]);
                }
                Some("1".into())
            }
            "EVAL" if c[1] == UNLOCK_SCRIPT => {
                if self.get(&c[3], now).as_deref() == Some(c[4].as_str()) {
                    self.strings.remove(&c[3]);
                    return Some("1".into());
                }
                Some("0".into())
            }
            other => panic!("unexpected Redis command {other}"),
        }
    }
}

enum Task {
    Ready(f64),
    Awaiting(f64),
    Refreshing(f64, Box<FleetToken>),
    Finished(bool),
}

pub fn run(seed: u64) -> Result<(), Violation> {
    let mut rng = Rng::new(seed);
    let processes = rng.range(2, 6) as usize;
    let faulty = rng.chance(0.3);
    let redis_down_p = if faulty { 0.05 } else { 0.0 };
    let exchange_fault_p = if faulty { 0.2 } else { 0.0 };
    let tight = rng.chance(0.7);
    let windows: Vec<(String, i64, Option<i64>)> = if tight {
        vec![
            (
                "api_client".into(),
                rng.range(2, 8) as i64,
                Some(rng.range(5, 30) as i64),
            ),
            ("organization".into(), rng.range(3, 12) as i64, Some(60)),
        ]
    } else {
        vec![
            ("api_client".into(), 600, None),
            ("organization".into(), 1200, None),
            ("source_address".into(), 180, None),
        ]
    };
    let fleet = Fleet::new(Some("rk:sim:")).unwrap();
    let mut sessions: Vec<Session> = (0..processes)
        .map(|_| fleet.session(Some(RateBudget::new(&windows).unwrap())))
        .collect();
    let mut redis = Redis::default();
    let mut calls: Vec<(usize, Call)> = Vec::new();
    let mut tasks: Vec<Task> = Vec::new();
    for p in 0..processes {
        let late = rng.chance(0.3);
        for _ in 0..rng.range(1, 9) {
            let call = Call::new(
                "listEnterpriseCountries",
                RequestParams::default(),
                CallOptions {
                    seed: rng.u64(),
                    ..CallOptions::default()
                },
            )
            .unwrap();
            calls.push((p, call));
            tasks.push(Task::Ready(
                T0 + if late { rng.between(0.0, 20.0) } else { 0.0 },
            ));
        }
    }
    let mut issued = 0u64;
    let mut valid: HashMap<String, f64> = HashMap::new();
    let mut service = ServiceCount::default();
    for _ in 0..200_000 {
        let Some((i, now)) = tasks
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t {
                Task::Ready(t) | Task::Awaiting(t) | Task::Refreshing(t, _) => Some((i, *t)),
                Task::Finished(_) => None,
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
        else {
            break;
        };
        let p = calls[i].0;
        if let Task::Refreshing(_, mut ft) = std::mem::replace(&mut tasks[i], Task::Ready(now)) {
            let session = &mut sessions[p];
            match ft.next() {
                FleetTokenStep::Command { command } => {
                    if rng.chance(redis_down_p) {
                        ft.redis_failed(session).unwrap();
                    } else {
                        let reply = redis.run(&command, now);
                        ft.replied(reply.as_deref(), session, now).unwrap();
                    }
                    // The next command goes out after a round trip: other processes act between.
                    tasks[i] = Task::Refreshing(now + rng.between(0.0001, 0.05), ft);
                }
                FleetTokenStep::Exchange {} => {
                    if rng.chance(exchange_fault_p) {
                        ft.exchange_failed("503 from the token exchange").unwrap();
                    } else {
                        issued += 1;
                        let value = format!("et_{issued}");
                        valid.insert(value.clone(), now + 3600.0);
                        let token = royaltykit::token::BearerToken::new(Api::Enterprise, value);
                        ft.exchanged(token, Some(now + 3000.0), now).unwrap();
                    }
                    tasks[i] = Task::Refreshing(now + rng.between(0.001, 0.2), ft);
                }
                FleetTokenStep::Wait { seconds } => {
                    ft.waited().unwrap();
                    tasks[i] = Task::Refreshing(now + seconds, ft);
                }
                FleetTokenStep::Done {} | FleetTokenStep::Failed { .. } => {
                    // Wake the process's calls waiting on its session.
                    for (j, t) in tasks.iter_mut().enumerate() {
                        if calls[j].0 == p {
                            if let Task::Awaiting(until) = t {
                                *t = Task::Ready(until.min(now));
                            }
                        }
                    }
                    tasks[i] = Task::Ready(now);
                }
            }
            continue;
        }
        let step = calls[i].1.next_in(now, &mut sessions[p]).unwrap();
        match step {
            Step::Reserve { command } => {
                if rng.chance(redis_down_p) {
                    let down = TransportFailure::ConnectFailed;
                    calls[i]
                        .1
                        .report(StepOutcome::<[(String, String)]>::NoResponse(down), now)
                        .unwrap();
                } else {
                    let reply = redis.run(&command, now);
                    // The reply comes back a little later, sometimes seconds later (a slow
                    // Redis): a reservation is only good for the second it was made in.
                    let back = if rng.chance(0.1) {
                        now + rng.between(0.5, 3.0)
                    } else {
                        now + rng.between(0.0005, 0.01)
                    };
                    calls[i]
                        .1
                        .report(
                            StepOutcome::<[(String, String)]>::Reply(reply.as_deref()),
                            back,
                        )
                        .unwrap();
                    tasks[i] = Task::Ready(back);
                    continue;
                }
                tasks[i] = Task::Ready(now);
            }
            Step::Send { request } => {
                let there = now + ServiceCount::latency(&mut rng);
                service.arrive(there);
                let token = crate::transcript::bearer_of(&request);
                let ok = valid.get(&token).is_some_and(|until| *until > now);
                let (status, body) = if ok {
                    (200, json!({"data": []}))
                } else {
                    (
                        401,
                        json!({"success": false, "message": "Missing bearer token"}),
                    )
                };
                let back = there + rng.between(0.001, 0.1);
                let headers = &[("Content-Type".to_owned(), "application/json".to_owned())][..];
                let body = body.to_string();
                let body = body.as_bytes();
                calls[i]
                    .1
                    .report(
                        StepOutcome::Response {
                            status,
                            headers,
                            body,
                        },
                        back,
                    )
                    .unwrap();
                tasks[i] = Task::Ready(back);
            }
            Step::Wait { seconds } => tasks[i] = Task::Ready(now + seconds),
            Step::AwaitToken { seconds } => tasks[i] = Task::Awaiting(now + seconds),
            Step::RefreshToken { .. } => {
                let ft =
                    FleetToken::new(&sessions[p], Api::Enterprise, None, rng.u64(), now).unwrap();
                tasks[i] = Task::Refreshing(now, Box::new(ft));
            }
            Step::Done { .. } => tasks[i] = Task::Finished(true),
            Step::Fail { .. } | Step::Reconcile { .. } => tasks[i] = Task::Finished(false),
        }
    }
    if tasks.iter().any(|t| !matches!(t, Task::Finished(_))) {
        return Err(Violation::new("every fleet call ends", "200000 steps"));
    }
    for (name, limit, secs) in &windows {
        let len = secs.unwrap_or(60);
        if let Some((count, at)) = service.over(*limit, len) {
            return Err(Violation::new(
                "the fleet never exceeds a per-minute limit, as the service counts on arrival",
                format!("{count} requests arrived within {len} s from {at:.3} against {name}'s {limit} ({processes} processes)"),
            ));
        }
    }
    seen::count("fleet token exchanges", issued);
    if !faulty {
        if tasks.iter().any(|t| matches!(t, Task::Finished(false))) {
            return Err(Violation::new(
                "a fleet run without faults ends with every call done",
                format!("{processes} processes, windows {windows:?}"),
            ));
        }
        if issued != 1 {
            return Err(Violation::new(
                "one token exchange per fleet when nothing forces another",
                format!("{issued} exchanges for {processes} processes"),
            ));
        }
    }
    Ok(())
}
