//! Runs tests/vectors/export.json (the same file every binding runs).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use royaltykit::catalog::{self, StepUp};
use royaltykit::export::{self, DownloadError, ExportCommand, ExportState, StepUpKind};
use royaltykit::token::missing_scopes;
use serde_json::{json, Value};

mod common;
use common::pairs;

fn load() -> Value {
    common::load("export.json")
}

#[test]
fn export_vectors() {
    let v = load();
    for c in v["transitions"].as_array().unwrap() {
        let state = ExportState::parse(c["state"].as_str().unwrap());
        assert_eq!(state.is_known(), c["state_known"].as_bool().unwrap(), "{c}");
        let cmd = ExportCommand::parse(c["command"].as_str().unwrap()).unwrap();
        match (
            export::validate_export_command(&state, cmd),
            c.get("expected_state"),
        ) {
            (Ok(after), Some(x)) => assert_eq!(after.as_str(), x.as_str().unwrap(), "{c}"),
            (Err(e), None) => {
                assert_eq!(e.code(), c["error"].as_str().unwrap());
                assert_eq!(json!(e.allowed), c["allowed"], "{c}");
                assert!(
                    e.to_string().contains(cmd.as_str()) && e.to_string().contains(state.as_str())
                );
            }
            (got, _) => panic!("{c}: {got:?}"),
        }
    }
    for c in v["poll"].as_array().unwrap() {
        let got = export::export_poll_decision(
            &ExportState::parse(c["state"].as_str().unwrap()),
            c["attempt"].as_i64().unwrap(),
            c["random"].as_f64().unwrap(),
            c.get("max_polls").map(|m| m.as_i64().unwrap()),
            c.get("max_unknown_polls").map(|m| m.as_i64().unwrap()),
        );
        match (got, c.get("expected")) {
            (Ok(d), Some(x)) => {
                assert_eq!(d.action.as_str(), x["action"].as_str().unwrap(), "{c}");
                assert!(
                    (d.delay_seconds - x["delay_seconds"].as_f64().unwrap()).abs() < 1e-9,
                    "{c}"
                );
                assert!(!d.reason.is_empty());
            }
            (Err(e), None) => assert_eq!(e.code(), c["error"].as_str().unwrap()),
            (got, _) => panic!("{c}: {got:?}"),
        }
    }
    for c in v["download"].as_array().unwrap() {
        let body = c.get("body").and_then(Value::as_str).unwrap_or("");
        let got = export::check_export_download(
            c["status"].as_i64().unwrap(),
            &pairs(&c["headers"]),
            body.as_bytes(),
            0,
        )
        .unwrap();
        match (got, c.get("expected")) {
            (Ok(()), Some(_)) => {}
            (Err(e), None) => {
                assert_eq!(e.code(), c["error"].as_str().unwrap(), "{}", c["comment"]);
                if let DownloadError::Api(a) = e {
                    let x = &c["api_error"];
                    assert_eq!(
                        json!({"kind": a.kind.as_str(), "declared": a.declared, "body_code": a.body_code}),
                        *x,
                        "{}",
                        c["comment"]
                    );
                }
            }
            (got, _) => panic!("{}: {got:?}", c["comment"]),
        }
    }
    for c in v["list_query"].as_array().unwrap() {
        match (
            export::validate_export_list_query(&pairs(&c["query"])),
            c.get("expected"),
        ) {
            (Ok(q), Some(x)) => assert_eq!(q, x.as_str().unwrap()),
            (Err(e), None) => {
                assert_eq!(e.code(), c["error"].as_str().unwrap(), "{}", c["comment"])
            }
            (got, _) => panic!("{}: {got:?}", c["comment"]),
        }
    }
    for c in v["scopes"].as_array().unwrap() {
        let granted: Vec<&str> = c["granted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert_eq!(
            json!(missing_scopes(&granted, c["operation_id"].as_str().unwrap()).unwrap()),
            c["expected"],
            "{c}"
        );
    }
    for c in v["human_routes"].as_array().unwrap() {
        let op = catalog::operation(c["operation_id"].as_str().unwrap()).unwrap();
        let idem = match op.idempotency {
            catalog::Idempotency::None => "none",
            catalog::Idempotency::Key => "key",
            catalog::Idempotency::Header => "header",
        };
        assert_eq!(
            json!({"csrf": op.csrf, "idempotency": idem, "step_up": op.step_up.as_str()}),
            json!({"csrf": c["csrf"], "idempotency": c["idempotency"], "step_up": c["step_up"]}),
            "{c}"
        );
    }
    for c in v["step_up"].as_array().unwrap() {
        let got = StepUp::parse(c["requirement"].as_str().unwrap()).and_then(|r| {
            let kind = StepUpKind::parse(c["kind"].as_str().unwrap())?;
            export::step_up_satisfies(
                r,
                kind,
                c["at"].as_i64().unwrap(),
                c["now"].as_i64().unwrap(),
                c["max_age_seconds"].as_i64().unwrap(),
            )
        });
        match (got, c.get("expected")) {
            (Ok(b), Some(x)) => assert_eq!(b, x.as_bool().unwrap(), "{c}"),
            (Err(e), None) => assert_eq!(e.code(), c["error"].as_str().unwrap()),
            (got, _) => panic!("{c}: {got:?}"),
        }
    }
}
