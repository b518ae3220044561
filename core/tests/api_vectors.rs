//! Runs api_error.json, requests.json and token.json (the same files every binding runs).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use royaltykit::api_error::parse_api_error;
use royaltykit::catalog::Api;
use royaltykit::request::{build_request, RequestDescriptor, RequestParams};
use royaltykit::token;
use serde_json::{json, Value};

mod common;
use common::{bytes, load, pairs};

fn opt_str(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

#[test]
fn api_error_vectors() {
    let cases = load("api_error.json")["cases"].as_array().unwrap().clone();
    assert!(cases.len() >= 60);
    for c in &cases {
        let i = &c["input"];
        let got = parse_api_error(
            Api::parse(i["api"].as_str().unwrap()).unwrap(),
            i["status"].as_i64().unwrap(),
            &pairs(&i["headers"]),
            &bytes(&i["body"]).unwrap(),
            i["operation_id"].as_str(),
            i["now"].as_i64().unwrap(),
        );
        match (got, c.get("expected")) {
            (Ok(e), Some(x)) => {
                let got = json!({
                    "kind": e.kind.as_str(), "reason": e.reason, "message": e.message, "body_code": e.body_code,
                    "field_errors": e.field_errors, "retry_after_seconds": e.retry_after_seconds, "declared": e.declared,
                });
                let mut want = x.clone();
                want.as_object_mut().unwrap().remove("raw_body_prefix");
                assert_eq!(got, want, "tcId {} {}", c["tcId"], c["comment"]);
                if let Some(p) = x.get("raw_body_prefix") {
                    assert!(
                        e.raw_body.starts_with(p.as_str().unwrap()),
                        "{}",
                        c["comment"]
                    );
                    assert!(e.raw_body.len() <= 4 * 1024 + 3);
                }
            }
            (Err(e), None) => assert_eq!(e.code(), c["error"].as_str().unwrap()),
            (got, _) => panic!("tcId {} {}: {got:?}", c["tcId"], c["comment"]),
        }
    }
}

fn descriptor_json(d: &RequestDescriptor) -> Value {
    json!({
        "method": d.method, "path": d.path, "query": d.query,
        "headers": d.headers.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>(),
        "body": d.body.as_ref().map(|b| json!({"utf8": String::from_utf8(b.clone()).unwrap()})),
        "idempotency_key": d.idempotency_key,
    })
}

#[test]
fn request_vectors() {
    let cases = load("requests.json")["cases"].as_array().unwrap().clone();
    assert!(cases.len() >= 40);
    for c in &cases {
        let p = &c["params"];
        let params = RequestParams {
            path: p["path"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().into()))
                .collect(),
            query: pairs(&p["query"]),
            body: bytes(&p["body"]),
            token: opt_str(&p["token"]),
            tenant_id: opt_str(&p["tenant_id"]),
            user_id: opt_str(&p["user_id"]),
            idempotency_key: opt_str(&p["idempotency_key"]),
            idempotency_header: opt_str(&p["idempotency_header"]),
        };
        match (
            build_request(c["operation_id"].as_str().unwrap(), &params),
            c.get("expected"),
        ) {
            (Ok(d), Some(x)) => {
                assert_eq!(
                    &descriptor_json(&d),
                    x,
                    "tcId {} {}",
                    c["tcId"],
                    c["comment"]
                );
                assert!(
                    !format!("{d:?}").contains("tok_ABC"),
                    "Debug hides the token"
                );
            }
            (Err(e), None) => assert_eq!(
                e.code(),
                c["error"].as_str().unwrap(),
                "tcId {} {}: {e}",
                c["tcId"],
                c["comment"]
            ),
            (got, _) => panic!("tcId {} {}: {got:?}", c["tcId"], c["comment"]),
        }
    }
}

#[test]
fn token_vectors() {
    let t = load("token.json");
    for c in t["build"].as_array().unwrap() {
        let i = &c["input"];
        let scopes: Vec<String> = i["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().into())
            .collect();
        let got = token::build_token_request(
            i["client_id"].as_str().unwrap(),
            i["client_secret"].as_str().unwrap(),
            i["tenant_id"].as_str().unwrap(),
            &scopes,
        );
        match (got, c.get("expected")) {
            (Ok(d), Some(x)) => {
                let mut j = descriptor_json(&d);
                for k in ["query", "idempotency_key"] {
                    j.as_object_mut().unwrap().remove(k);
                }
                assert_eq!(&j, x, "{}", c["comment"]);
                assert!(
                    !format!("{d:?}").contains(&d.headers[1].1),
                    "Debug hides the Basic credentials"
                );
            }
            (Err(e), None) => assert_eq!(e.code(), c["error"].as_str().unwrap()),
            (got, _) => panic!("{}: {got:?}", c["comment"]),
        }
    }
    for c in t["parse"].as_array().unwrap() {
        let i = &c["input"];
        let requested: Vec<String> = i["requested_scopes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().into())
            .collect();
        let got = token::parse_token_response(
            i["status"].as_i64().unwrap(),
            &pairs(&i["headers"]),
            &bytes(&i["body"]).unwrap(),
            &requested,
            i["now"].as_i64().unwrap(),
        )
        .unwrap();
        match (got, c.get("expected")) {
            (Ok(tk), Some(x)) => {
                let j = json!({
                    "access_token": tk.access_token, "token_type": tk.token_type, "expires_in": tk.expires_in,
                    "expires_at": tk.expires_at, "refresh_at": tk.refresh_at, "scopes": tk.scopes,
                    "missing_scopes": tk.missing_scopes, "warnings": tk.warnings.len(),
                });
                assert_eq!(&j, x, "{}", c["comment"]);
                assert!(!format!("{tk:?}").contains(&tk.access_token));
            }
            (Err(e), None) => {
                assert_eq!(
                    e.code(),
                    c["error"].as_str().unwrap(),
                    "{}: {e}",
                    c["comment"]
                );
                if let (token::TokenError::Api(a), Some(x)) = (&e, c.get("api_error")) {
                    assert_eq!(a.kind.as_str(), x["kind"].as_str().unwrap());
                    assert_eq!(a.reason.as_deref(), x["reason"].as_str());
                }
            }
            (got, _) => panic!("{}: {got:?}", c["comment"]),
        }
    }
    for c in t["build_enterprise"].as_array().unwrap() {
        let i = &c["input"];
        match (
            token::build_enterprise_token_request(
                i["api_key"].as_str().unwrap(),
                i["api_secret"].as_str().unwrap(),
            ),
            c.get("expected"),
        ) {
            (Ok(d), Some(x)) => {
                let mut j = descriptor_json(&d);
                for k in ["query", "idempotency_key"] {
                    j.as_object_mut().unwrap().remove(k);
                }
                assert_eq!(&j, x);
                assert!(!format!("{d:?}").contains("sec_1"));
            }
            (Err(e), None) => assert_eq!(e.code(), c["error"].as_str().unwrap()),
            (got, _) => panic!("{}: {got:?}", c["comment"]),
        }
    }
    for c in t["parse_enterprise"].as_array().unwrap() {
        let i = &c["input"];
        let got = token::parse_enterprise_token_response(
            i["status"].as_i64().unwrap(),
            &pairs(&i["headers"]),
            &bytes(&i["body"]).unwrap(),
            i["now"].as_i64().unwrap(),
        )
        .unwrap();
        match (got, c.get("expected")) {
            (Ok(tk), Some(x)) => assert_eq!(
                &json!({"token": tk.token, "expires_at": tk.expires_at, "refresh_at": tk.refresh_at}),
                x,
                "{}",
                c["comment"]
            ),
            (Err(e), None) => {
                assert_eq!(e.code(), c["error"].as_str().unwrap(), "{}", c["comment"]);
                if let (token::TokenError::Api(a), Some(x)) = (&e, c.get("api_error")) {
                    assert_eq!(a.kind.as_str(), x["kind"].as_str().unwrap());
                    assert_eq!(a.reason.as_deref(), x["reason"].as_str());
                }
            }
            (got, _) => panic!("{}: {got:?}", c["comment"]),
        }
    }
    for c in t["missing_scopes"].as_array().unwrap() {
        let granted: Vec<String> = c["granted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().into())
            .collect();
        match (
            token::missing_scopes(&granted, c["operation_id"].as_str().unwrap()),
            c.get("expected"),
        ) {
            (Ok(m), Some(x)) => assert_eq!(&json!(m), x, "{}", c["comment"]),
            (Err(e), None) => assert_eq!(e.code(), c["error"].as_str().unwrap()),
            (got, _) => panic!("{}: {got:?}", c["comment"]),
        }
    }
    for c in t["notices"].as_array().unwrap() {
        let n = token::response_notices(&pairs(&c["headers"]));
        let j = json!({"deprecated": n.deprecated, "deprecated_at": n.deprecated_at, "sunset_at": n.sunset_at, "link": n.link});
        assert_eq!(&j, &c["expected"], "{}", c["comment"]);
    }
}
