//! The `session` run: 2 to 20 calls on one [`Session`], started together or spread out,
//! against a model of the enterprise API: its token exchange (lifetimes from an hour to an
//! `expires_at` behind the client's clock; 503, or credentials refused), its reads (429 with
//! `Retry-After`, 503, 401 mid-run, dropped connections) and its per-minute limits.

use crate::export::arrival;
use crate::rng::Rng;
use crate::transcript::{bearer_of, call_view, check_request, report, Outcome, Recorder};
use crate::{ServiceCount, Violation};
use royaltykit::machine::{Call, CallOptions, Session, Step};
use royaltykit::request::RequestParams;
use royaltykit::retry::RateBudget;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const T0: f64 = 1_763_950_000.0;

/// How the token exchange behaves in a run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tokens {
    /// An hour (or no expiry).
    Long,
    /// One second.
    Second,
    /// `expires_at` a minute behind the client's clock, while the server honours the token for
    /// an hour (the two clocks disagree).
    Behind,
    /// The credentials are refused (401) on every exchange.
    Refused,
}

struct Enterprise {
    rng: Rng,
    tokens: Tokens,
    tokens_issued: BTreeMap<String, (f64, bool)>,
    issued: u64,
    fault_p: f64,
    exchange_fault_p: f64,
    violations: Vec<Violation>,
}

impl Enterprise {
    fn handle(&mut self, r: &royaltykit::request::RequestDescriptor, at: f64) -> Outcome {
        if r.operation_id == "exchangeEnterpriseToken" {
            if self.tokens == Tokens::Refused {
                return Outcome::json(
                    401,
                    &json!({"success": false, "message": "Invalid API key or secret"}),
                );
            }
            if self.rng.chance(self.exchange_fault_p) {
                return Outcome::status(503, Vec::new());
            }
            self.issued += 1;
            let token = format!("et_{}", self.issued);
            let (valid_until, expires_at) = match self.tokens {
                Tokens::Long if self.issued % 2 == 0 => (at + 3600.0, Value::Null),
                Tokens::Second => (at + 1.0, json!(iso(at + 1.0))),
                Tokens::Behind => (at + 3600.0, json!(iso(at - 60.0))),
                _ => (at + 3600.0, json!(iso(at + 3600.0))),
            };
            self.tokens_issued
                .insert(token.clone(), (valid_until, false));
            return Outcome::json(200, &json!({"token": token, "expires_at": expires_at}));
        }
        let token = bearer_of(r);
        match self.tokens_issued.get(&token) {
            Some((until, false)) if *until > at => {}
            _ => {
                return Outcome::json(
                    401,
                    &json!({"success": false, "message": "Unauthenticated."}),
                )
            }
        }
        if self.rng.chance(self.fault_p) {
            match self.rng.range(0, 5) {
                0 => return Outcome::status(503, Vec::new()),
                1 => {
                    let secs = self.rng.range(1, 20);
                    return Outcome::status(429, vec![("Retry-After".into(), secs.to_string())]);
                }
                2 => {
                    if let Some(t) = self.tokens_issued.get_mut(&token) {
                        t.1 = true;
                    }
                    return Outcome::json(
                        401,
                        &json!({"success": false, "message": "Unauthenticated."}),
                    );
                }
                3 => return Outcome::Transport("connection_lost"),
                _ => return Outcome::Transport("connect_failed"),
            }
        }
        Outcome::json(200, &json!({"data": [{"code": "NL"}]}))
    }
}

fn iso(at: f64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(at.floor() as i64).unwrap();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}+0000",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

enum Task {
    Ready(f64),
    InFlight(f64, Outcome),
    Awaiting(f64),
    /// Leading the session's token exchange: the exchange's own call, at its next event, with
    /// the outcome of its send in flight.
    Leading(f64, Box<Call>, Option<Outcome>),
    Finished(String),
}

impl Task {
    fn at(&self) -> f64 {
        match self {
            Self::Ready(t) | Self::InFlight(t, _) | Self::Awaiting(t) | Self::Leading(t, ..) => *t,
            Self::Finished(_) => f64::INFINITY,
        }
    }
}

pub fn run(seed: u64) -> Result<(), Violation> {
    let mut rng = Rng::new(seed);
    let n = rng.range(2, 21) as usize;
    let together = rng.chance(0.5);
    let tokens = *rng.pick(&[
        Tokens::Long,
        Tokens::Long,
        Tokens::Second,
        Tokens::Behind,
        Tokens::Refused,
    ]);
    let mut server = Enterprise {
        rng: Rng::new(rng.u64()),
        tokens,
        tokens_issued: BTreeMap::new(),
        issued: 0,
        fault_p: *rng.pick(&[0.0, 0.0, 0.1, 0.3]),
        exchange_fault_p: *rng.pick(&[0.0, 0.0, 0.3]),
        violations: Vec::new(),
    };
    let tiny = rng.chance(0.5);
    // A 1-second token under a budget that makes calls wait longer than it lives cannot serve
    // every call: such calls end (unauthorized_after_refresh), which termination checks.
    let healthy = server.fault_p == 0.0
        && server.exchange_fault_p == 0.0
        && tokens != Tokens::Refused
        && !(tokens == Tokens::Second && tiny);
    let windows: Vec<(String, i64, Option<i64>)> = if !tiny {
        vec![
            ("api_client".into(), 600, None),
            ("organization".into(), 1200, None),
            ("source_address".into(), 180, None),
        ]
    } else {
        vec![(
            "api_client".into(),
            rng.range(2, 6) as i64,
            Some(rng.range(5, 30) as i64),
        )]
    };
    let budget = RateBudget::new(&windows).unwrap();
    let mut session = Session::new(Some(budget));
    let mut rec = Recorder::new(
        "enterprise",
        "",
        json!(windows
            .iter()
            .map(|(n, l, s)| json!([n, l, s.unwrap_or(60)]))
            .collect::<Vec<_>>()),
        T0,
    );
    let mut calls: Vec<Call> = Vec::new();
    let mut tasks: Vec<Task> = Vec::new();
    for _ in 0..n {
        let call_seed = rng.u64();
        let op = *rng.pick(&["listEnterpriseCountries", "listEnterpriseReleases"]);
        rec.machine(
            json!({"kind": "call", "operation": op, "params": {}, "options": {"seed": call_seed}}),
        );
        calls.push(
            Call::new(
                op,
                RequestParams::default(),
                CallOptions {
                    seed: call_seed,
                    ..CallOptions::default()
                },
            )
            .unwrap(),
        );
        tasks.push(Task::Ready(if together {
            T0
        } else {
            T0 + rng.between(0.0, 30.0)
        }));
    }
    // The requests as the service counts them for the per-minute limits: by arrival.
    let mut service = ServiceCount::default();
    let mut not_before: Vec<f64> = vec![0.0; n];
    let fail = |rec: &Recorder, session: &Session, v: Violation| {
        let mut v = v;
        v.transcript = Some(rec.transcript(&format!("simulated seed {seed}"), session.exchanges()));
        Err(v)
    };
    for _ in 0..20_000 {
        let Some((i, at)) = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (i, t.at()))
            .filter(|(_, t)| t.is_finite())
            .min_by(|a, b| a.1.total_cmp(&b.1))
        else {
            break;
        };
        let now = at;
        match std::mem::replace(&mut tasks[i], Task::Ready(now)) {
            Task::InFlight(_, outcome) => {
                rec.respond(i, now, &outcome, false);
                match &outcome {
                    Outcome::Transport(_) => report(&mut calls[i], &outcome, now),
                    Outcome::Response {
                        status,
                        headers,
                        body: _,
                    } => {
                        if *status == 429 {
                            let secs: f64 = headers
                                .iter()
                                .find(|(n, _)| n == "Retry-After")
                                .map_or(0.0, |(_, v)| v.parse().unwrap_or(0.0));
                            not_before[i] = now + secs;
                        }
                        report(&mut calls[i], &outcome, now);
                    }
                }
                continue;
            }
            Task::Leading(_, mut x, in_flight) => {
                if let Some(outcome) = in_flight {
                    report(x.as_mut(), &outcome, now);
                    tasks[i] = Task::Leading(now, x, None);
                    continue;
                }
                let ended = match x.next(now, None).unwrap() {
                    Step::Send { request } => {
                        if let Err(v) = check_request(&request) {
                            return fail(&rec, &session, v);
                        }
                        let outcome = server.handle(&request, now);
                        let (_, back) = arrival(&mut rng, now, &outcome);
                        tasks[i] = Task::Leading(back, x, Some(outcome));
                        continue;
                    }
                    Step::Wait { seconds } => {
                        tasks[i] = Task::Leading(now + seconds, x, None);
                        continue;
                    }
                    Step::Done { response, .. } => {
                        match royaltykit::token::parse_enterprise_token_response(
                            i64::from(response.status),
                            &response.headers,
                            &response.body,
                            now.floor() as i64,
                        )
                        .unwrap()
                        {
                            Ok(token) => Ok((token.bearer(), token.refresh_at.map(|r| r as f64))),
                            Err(e) => Err(e.to_string()),
                        }
                    }
                    Step::Fail { failure, .. } => Err(failure.reason),
                    other => {
                        return fail(
                            &rec,
                            &session,
                            Violation::new("a token exchange ends", format!("{other:?}")),
                        )
                    }
                };
                match ended {
                    Ok((token, refresh_at)) => {
                        rec.token(now, token.value(), refresh_at);
                        session.store_token(token, refresh_at);
                        tasks[i] = Task::Ready(now);
                    }
                    Err(reason) => {
                        rec.exchange_failed(now, &reason);
                        session.exchange_failed(&reason);
                        tasks[i] = Task::Finished(format!("exchange failed: {reason}"));
                    }
                }
                // The host wakes every call waiting on the session.
                for t in &mut tasks {
                    if let Task::Awaiting(until) = t {
                        *t = Task::Ready(until.min(now));
                    }
                }
                continue;
            }
            Task::Awaiting(..) | Task::Ready(_) => {}
            Task::Finished(_) => unreachable!(),
        }
        let step = calls[i].next_in(now, &mut session).unwrap();
        rec.next(i, now, call_view(&step));
        match step {
            Step::Send { request } => {
                if let Err(v) = check_request(&request) {
                    return fail(&rec, &session, v);
                }
                if now < not_before[i] - 1e-6 {
                    return fail(
                        &rec,
                        &session,
                        Violation::new(
                            "Retry-After is never shortened",
                            format!("call {i} sent {:.3} s early", not_before[i] - now),
                        ),
                    );
                }
                let there = now + ServiceCount::latency(&mut rng);
                service.arrive(there);
                let outcome = server.handle(&request, now);
                let (_, back) = arrival(&mut rng, now, &outcome);
                let back = back.max(there);
                tasks[i] = Task::InFlight(back, outcome);
            }
            Step::Wait { seconds } => tasks[i] = Task::Ready(now + seconds),
            Step::Reserve { .. } => {
                return fail(
                    &rec,
                    &session,
                    Violation::new("only a fleet's call reserves", format!("call {i}")),
                )
            }
            Step::AwaitToken { seconds } => {
                crate::seen::count("await_token steps", 1);
                tasks[i] = Task::Awaiting(now + seconds);
            }
            Step::RefreshToken { .. } => {
                let leading = tasks
                    .iter()
                    .filter(|t| matches!(t, Task::Leading(..)))
                    .count();
                if leading > 0 {
                    return fail(&rec, &session, Violation::new("one token exchange in flight per session", format!("call {i} told to refresh while {leading} exchange(s) are in flight")));
                }
                let request =
                    royaltykit::token::build_enterprise_token_request("key-1", "secret-1").unwrap();
                let x = Call::exchange(
                    request,
                    CallOptions {
                        seed: rng.u64(),
                        ..CallOptions::default()
                    },
                )
                .unwrap();
                tasks[i] = Task::Leading(now, Box::new(x), None);
            }
            end @ (Step::Done { .. } | Step::Fail { .. } | Step::Reconcile { .. }) => {
                tasks[i] = Task::Finished(call_view(&end).to_string());
            }
        }
    }
    crate::seen::count("token exchanges", session.exchanges());
    if let Some(i) = tasks.iter().position(|t| !matches!(t, Task::Finished(_))) {
        return fail(
            &rec,
            &session,
            Violation::new(
                "every run ends within its budget",
                format!("call {i} never ended"),
            ),
        );
    }
    if let Some(v) = server.violations.pop() {
        return fail(&rec, &session, v);
    }
    for (name, limit, secs) in &windows {
        let window = secs.unwrap_or(60);
        if let Some((count, at)) = service.over(*limit, window) {
            return fail(
                &rec,
                &session,
                Violation::new(
                    "the per-minute limits are never exceeded, as the service counts on arrival",
                    format!("{count} requests arrived within {window} s from {at:.3} against {name}'s {limit}"),
                ),
            );
        }
    }
    for (i, t) in tasks.iter().enumerate() {
        if let Task::Finished(how) = t {
            if healthy && !how.contains("\"done\"") {
                return fail(
                    &rec,
                    &session,
                    Violation::new(
                        "a run with no fault injected succeeds",
                        format!("call {i} of {n} ({tokens:?} tokens, budget {windows:?}): {how}"),
                    ),
                );
            }
        }
    }
    if healthy && tokens == Tokens::Long && session.exchanges() != 1 {
        return fail(
            &rec,
            &session,
            Violation::new(
                "one token exchange in all when nothing forces a new one",
                format!(
                    "{} exchanges for {n} calls with an hour-long token",
                    session.exchanges()
                ),
            ),
        );
    }
    if tokens == Tokens::Refused && session.exchanges() as usize > n {
        return fail(
            &rec,
            &session,
            Violation::new(
                "a refused exchange is not repeated by every waiting call",
                format!("{} exchanges", session.exchanges()),
            ),
        );
    }
    Ok(())
}
