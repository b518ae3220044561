//! Runs tests/vectors/retry.json (the same file the Node, Python and Kotlin suites run).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use royaltykit::retry::{
    self, BackoffPolicy, Jitter, Outcome, RateBudget, RetryClass, RetryLimits, RetryState,
    TransportFailure,
};
use royaltykit::ArgumentError;
use serde_json::Value;

mod common;

fn load() -> Value {
    common::load("retry.json")
}

fn decide(i: &Value) -> Result<retry::RetryDecision, ArgumentError> {
    let class = RetryClass::parse(i["retry_class"].as_str().unwrap())?;
    let now = i["now"].as_i64().unwrap();
    let outcome = if let Some(t) = i.get("transport") {
        Outcome::Transport(TransportFailure::parse(t.as_str().unwrap())?)
    } else {
        let headers = common::pairs(&i["headers"]);
        Outcome::response(i["status"].as_i64().unwrap(), &headers, now)?
    };
    let limits = RetryLimits::new(
        i.get("max_attempts").map_or(5, |v| v.as_i64().unwrap()),
        i.get("max_elapsed_seconds")
            .map_or(300.0, |v| v.as_f64().unwrap()),
    )?;
    let state = RetryState {
        attempt: i["attempt"].as_i64().unwrap(),
        elapsed_seconds: i["elapsed_seconds"].as_f64().unwrap(),
        token_refreshed: i["token_refreshed"].as_bool().unwrap(),
        random: i["random"].as_f64().unwrap(),
    };
    retry::decide_retry(class, outcome, state, limits, &BackoffPolicy::default())
}

#[test]
fn decision_vectors() {
    let v = load();
    let cases = v["decisions"].as_array().unwrap();
    assert!(cases.len() >= 100);
    let mut failures = vec![];
    for c in cases {
        let got = decide(&c["input"]);
        let ok = match (&got, c.get("expected")) {
            (Ok(d), Some(e)) => {
                d.action.as_str() == e["action"].as_str().unwrap()
                    && d.rule == e["rule"].as_str().unwrap()
                    && (d.delay_seconds - e["delay_seconds"].as_f64().unwrap()).abs() < 1e-9
                    && d.reconcile.map(|r| r.as_str()) == e["reconcile"].as_str()
                    && !d.reason.is_empty()
            }
            (Err(e), None) => e.code() == c["error"].as_str().unwrap(),
            _ => false,
        };
        if !ok {
            failures.push(format!("tcId {} ({}): {got:?}", c["tcId"], c["comment"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn schedule_vectors() {
    let s = &load()["schedule"];
    let first = s["first_attempt_at"].as_i64().unwrap();
    let delays: Vec<u64> = s["delays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    assert_eq!(retry::webhook_retry_schedule(), delays.as_slice());
    assert_eq!(
        retry::webhook_gives_up_at(first),
        s["gives_up_at"].as_i64().unwrap()
    );
    for c in s["next_attempt_at"].as_array().unwrap() {
        let got =
            retry::webhook_next_attempt_at(first, c["attempts_made"].as_i64().unwrap()).unwrap();
        assert_eq!(got, c["expected"].as_i64(), "{c}");
    }
    for n in s["invalid_attempts_made"].as_array().unwrap() {
        assert!(retry::webhook_next_attempt_at(first, n.as_i64().unwrap()).is_err());
    }
}

fn policy(p: &Value) -> Result<BackoffPolicy, ArgumentError> {
    let steps = p["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    let band = p["band"]
        .as_array()
        .map(|b| (b[0].as_f64().unwrap(), b[1].as_f64().unwrap()));
    BackoffPolicy::new(
        steps,
        band,
        Jitter::parse(p["jitter"].as_str().unwrap())?,
        p["cap_seconds"].as_f64().unwrap(),
    )
}

#[test]
fn backoff_vectors() {
    for c in load()["backoff"].as_array().unwrap() {
        let attempt = c["attempt"].as_i64().unwrap();
        let random = c["random"].as_f64().unwrap();
        let got = match c.get("policy") {
            Some(p) => policy(p).and_then(|p| p.delay(attempt, random)),
            None => retry::backoff_delay(attempt, random),
        };
        match (got, c.get("expected")) {
            (Ok(d), Some(e)) => assert!((d - e.as_f64().unwrap()).abs() < 1e-9, "{c}: {d}"),
            (Err(e), None) => assert_eq!(e.code(), c["error"].as_str().unwrap()),
            (got, _) => panic!("{c}: {got:?}"),
        }
    }
}

#[test]
fn retry_after_vectors() {
    for c in load()["retry_after"].as_array().unwrap() {
        let cap = c.get("cap_seconds").map(|v| v.as_i64().unwrap());
        let got = retry::parse_retry_after_capped(
            c["value"].as_str().unwrap(),
            c["now"].as_i64().unwrap(),
            cap,
        )
        .unwrap();
        let got = got.map(|r| {
            serde_json::json!({"seconds": r.seconds, "capped": r.capped, "form": match r.form {
                retry::RetryAfterForm::DeltaSeconds => "delta_seconds",
                retry::RetryAfterForm::HttpDate => "http_date",
            }})
        });
        assert_eq!(
            got.as_ref(),
            c["expected"].as_object().map(|_| &c["expected"]),
            "{c}"
        );
    }
}

#[test]
fn rate_budget_vectors() {
    for c in load()["rate_budget"].as_array().unwrap() {
        let budget = match c.get("preset") {
            Some(p) => RateBudget::preset(p.as_str().unwrap()),
            None => {
                let w: Vec<(String, i64, Option<i64>)> = c["windows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| {
                        (
                            w[0].as_str().unwrap().into(),
                            w[1].as_i64().unwrap(),
                            w[2].as_i64(),
                        )
                    })
                    .collect();
                RateBudget::new(&w)
            }
        };
        let mut budget = match (budget, c.get("error")) {
            (Ok(b), None) => b,
            (Err(e), Some(code)) => {
                assert_eq!(e.code(), code.as_str().unwrap());
                continue;
            }
            (b, _) => panic!("{c}: {b:?}"),
        };
        for op in c["ops"].as_array().unwrap() {
            for _ in 0..op.get("repeat").map_or(1, |r| r.as_u64().unwrap()) {
                let d = budget.try_acquire(op["now"].as_i64().unwrap());
                assert_eq!(
                    d.allowed,
                    op["allowed"].as_bool().unwrap(),
                    "{}: {op}",
                    c["comment"]
                );
                assert_eq!(
                    d.wait_until,
                    op.get("wait_until").and_then(Value::as_i64),
                    "{op}"
                );
                assert_eq!(
                    d.limit.as_deref(),
                    op.get("limit").and_then(Value::as_str),
                    "{op}"
                );
            }
        }
    }
}
