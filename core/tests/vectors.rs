//! Runs the shared vectors in tests/vectors/ (the same files the Node, Python and Kotlin suites
//! run). Expected values come from tests/vectors/gen_vectors.py, not from this crate.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use royaltykit::dedup::{self, DedupWindow};
use royaltykit::webhook::{self, VerifyOptions};
use serde_json::Value;

mod common;
use common::load;

fn body(v: &Value) -> Vec<u8> {
    common::bytes(v).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// HMAC-SHA256 keyed afresh per call from the secret bytes: a stand-in for a host primitive.
struct ExternalMac<'a>(&'a [String]);

impl webhook::SignatureMac for ExternalMac<'_> {
    fn mac(&mut self, secret_index: usize, timestamp: &str, body: &[u8]) -> Option<[u8; 32]> {
        use hmac::{KeyInit, Mac};
        let mut m =
            hmac::Hmac::<sha2::Sha256>::new_from_slice(self.0.get(secret_index)?.as_bytes())
                .ok()?;
        m.update(timestamp.as_bytes());
        m.update(b".");
        m.update(body);
        Some(m.finalize().into_bytes().into())
    }
}

#[test]
fn webhook_vectors() {
    let file = load("webhook.json");
    let cases = file["cases"].as_array().unwrap();
    assert!(cases.len() >= 60, "at least 60 webhook cases");
    let mut failures = Vec::new();
    for case in cases {
        let id = case["tcId"].as_u64().unwrap();
        let input = &case["input"];
        let headers = common::pairs(&input["headers"]);
        let body = body(&input["body"]);
        let secrets = strings(&input["secrets"]);
        let now = input["now"].as_i64().unwrap();
        let options = VerifyOptions::new(
            input.get("tolerance").map_or(300, |v| v.as_i64().unwrap()),
            input
                .get("max_body_bytes")
                .map_or(262_144, |v| v.as_i64().unwrap()),
        )
        .unwrap();
        let got = webhook::verify(&headers, &body, &secrets, now, options);
        // The reusable verifier must agree whenever the secrets are usable, and so must both
        // with the MAC delegated to another HMAC implementation (what the Node binding does
        // with node:crypto above a body size).
        let mut external = ExternalMac(&secrets);
        let delegated =
            webhook::verify_with_mac(&headers, &body, &secrets, now, options, &mut external);
        if delegated.as_ref().map_err(|e| e.code()) != got.as_ref().map_err(|e| e.code()) {
            failures.push(format!("tcId {id}: verify_with_mac disagrees with verify"));
        }
        if let Ok(verifier) = webhook::WebhookVerifier::new(&secrets, options) {
            let again = verifier.verify(&headers, &body, now);
            if again.as_ref().map_err(|e| e.code()) != got.as_ref().map_err(|e| e.code()) {
                failures.push(format!("tcId {id}: WebhookVerifier disagrees with verify"));
            }
            let again = verifier.verify_with_mac(&headers, &body, now, &mut external);
            if again.as_ref().map_err(|e| e.code()) != got.as_ref().map_err(|e| e.code()) {
                failures.push(format!(
                    "tcId {id}: WebhookVerifier::verify_with_mac disagrees"
                ));
            }
        }
        match (case["result"].as_str().unwrap(), got) {
            ("valid", Ok(v)) => {
                let e = &case["expected"];
                let ev = &e["event"];
                let checks = [
                    v.delivery_id == e["delivery_id"].as_str().unwrap(),
                    v.timestamp == e["timestamp"].as_i64().unwrap(),
                    v.secret_index as u64 == e["secret_index"].as_u64().unwrap(),
                    v.content_key == e["content_key"].as_str().unwrap(),
                    v.event.name.as_str() == ev["name"].as_str().unwrap(),
                    v.event.resource_type == ev["resource_type"].as_str().unwrap(),
                    v.event.resource_reference == ev["resource_reference"].as_str().unwrap(),
                    v.event.resource_url == ev["resource_url"].as_str().unwrap(),
                    v.event.occurred_at == ev["occurred_at"].as_i64().unwrap(),
                    v.event.replay_of.as_deref() == ev["replay_of"].as_str(),
                    v.event.is_test == ev["is_test"].as_bool().unwrap(),
                ];
                if checks.iter().any(|ok| !ok) {
                    failures.push(format!("tcId {id}: result differs: {v:?} vs {e}"));
                }
            }
            ("invalid", Err(err)) => {
                let status = royaltykit::Error::from(err.clone()).http_status();
                if err.code() != case["error"].as_str().unwrap()
                    || Some(u64::from(status)) != case["http_status"].as_u64()
                {
                    failures.push(format!(
                        "tcId {id} ({}): expected {}, got {} ({err})",
                        case["comment"],
                        case["error"],
                        err.code()
                    ));
                }
            }
            (want, got) => failures.push(format!(
                "tcId {id} ({}): expected {want}, got {:?}",
                case["comment"],
                got.map(|_| "valid").map_err(|e| e.code())
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn check<T: PartialEq<String> + std::fmt::Debug>(
    case: &Value,
    got: Result<T, &'static str>,
    failures: &mut Vec<String>,
) {
    let ok = match (case.get("expected"), &got) {
        (Some(exp), Ok(v)) => *v == exp.as_str().unwrap().to_owned(),
        (None, Err(code)) => case["error"].as_str() == Some(*code),
        _ => false,
    };
    if !ok {
        failures.push(format!("{}: got {got:?}", case["comment"]));
    }
}

#[test]
fn dedup_vectors() {
    let file = load("dedup.json");
    let mut failures = Vec::new();
    for c in file["delivery_key"].as_array().unwrap() {
        let i = &c["input"];
        let got = dedup::delivery_key(
            i["namespace"].as_str().unwrap(),
            i["delivery_id"].as_str().unwrap(),
        );
        check(c, got.map_err(|e| e.code()), &mut failures);
    }
    for c in file["event_key"].as_array().unwrap() {
        let i = &c["input"];
        let s = |k: &str| i[k].as_str().unwrap();
        let got = dedup::event_key_parts(
            s("namespace"),
            s("name"),
            s("resource_type"),
            s("resource_reference"),
            s("occurred_at"),
        );
        check(c, got.map_err(|e| e.code()), &mut failures);
    }
    for c in file["content_key"].as_array().unwrap() {
        let i = &c["input"];
        let got = dedup::content_key(
            i["secret"].as_str().unwrap(),
            i["timestamp"].as_str().unwrap(),
            &body(&i["body"]),
        );
        check(c, got.map_err(|e| e.code()), &mut failures);
    }
    for c in file["idempotency_key"].as_array().unwrap() {
        let i = &c["input"];
        let got = dedup::idempotency_key(
            i["tenant"].as_str().unwrap(),
            i["operation_id"].as_str().unwrap(),
            &body(&i["body"]),
        );
        check(c, got.map_err(|e| e.code()), &mut failures);
    }
    for c in file["window"].as_array().unwrap() {
        let w = DedupWindow::new(
            c["capacity"].as_i64().unwrap(),
            c["ttl_seconds"].as_i64().unwrap(),
            [42; 16],
        );
        match (w, c.get("error")) {
            (Ok(mut w), None) => {
                for op in c["ops"].as_array().unwrap() {
                    let got = w
                        .check_and_insert(op["key"].as_str().unwrap(), op["now"].as_i64().unwrap())
                        .unwrap();
                    if got != op["expected"].as_bool().unwrap() {
                        failures.push(format!("window {}: op {op} gave {got}", c["comment"]));
                    }
                }
            }
            (Err(e), Some(code)) if code.as_str() == Some(e.code()) => {}
            (w, _) => failures.push(format!("window {}: {:?}", c["comment"], w.err())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
