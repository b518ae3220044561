//! Secrets, tokens and client/API secrets never appear in Debug or Display of any public value
//! or error built from them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use royaltykit::request::{build_request, RequestParams};
use royaltykit::{token, webhook};

const SECRET: &str = "whsec_REDACTION_SECRET_1";
const TOKEN: &str = "tok_REDACTION_TOKEN_2";
const CLIENT_SECRET: &str = "cs_REDACTION_CLIENT_SECRET_3";
const API_SECRET: &str = "as_REDACTION_API_SECRET_4";
const TENANT: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

#[test]
fn nothing_prints_a_secret() {
    let mut out = Vec::<String>::new();
    let mut show = |d: &dyn std::fmt::Debug| out.push(format!("{d:?}"));
    let body = br#"{"event":"x","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}"#;
    let h = webhook::sign(&[SECRET], body, 1_000, "d").unwrap();
    let v = webhook::WebhookVerifier::new(&[SECRET], webhook::VerifyOptions::default()).unwrap();
    show(&v);
    show(&v.verify(&h.pairs(), body, 1_000).unwrap());
    for (b, now) in [(&body[..], 9_999), (&b"x"[..], 1_000), (&b"{}"[..], 1_000)] {
        let e = v.verify(&h.pairs(), b, now).unwrap_err();
        out.push(e.to_string());
        out.push(format!("{e:?}"));
    }
    let e = webhook::WebhookVerifier::new(&[SECRET, ""], webhook::VerifyOptions::default())
        .unwrap_err();
    out.push(e.to_string());
    let params = RequestParams {
        token: Some(token::BearerToken::reports(TOKEN, TENANT)),
        tenant_id: Some(TENANT.into()),
        ..RequestParams::default()
    };
    let mut show = |d: &dyn std::fmt::Debug| out.push(format!("{d:?}"));
    show(&params);
    show(&build_request("listPlatformExports", &params).unwrap());
    show(&token::build_token_request("cli", CLIENT_SECRET, TENANT, &["exports:read"]).unwrap());
    show(&token::build_enterprise_token_request("key", API_SECRET).unwrap());
    let ok = format!(r#"{{"access_token":"{TOKEN}","token_type":"Bearer","expires_in":60}}"#);
    show(
        &token::parse_token_response(
            200,
            &[("Cache-Control", "no-store")],
            ok.as_bytes(),
            &["a"],
            TENANT,
            0,
        )
        .unwrap()
        .unwrap(),
    );
    // the fleet's token record, as Redis replies it to a refresh, and the token exchanged
    let record = format!(r#"{{"v":"{TOKEN}","r":null,"a":"reports","t":"{TENANT}"}}"#);
    show(&royaltykit::machine::FleetOutcome::Reply(Some(&record)));
    show(&royaltykit::machine::FleetOutcome::Token(
        token::BearerToken::reports(TOKEN, TENANT),
        None,
    ));
    // a token exchange's response, as a host reports it to the machine
    let none: &[(String, String)] = &[];
    show(&royaltykit::machine::StepOutcome::Response {
        status: 200,
        headers: none,
        body: ok.as_bytes(),
    });
    let ent = format!(r#"{{"token":"{TOKEN}","expires_at":null}}"#);
    show(
        &token::parse_enterprise_token_response(200, &[("X", "y")], ent.as_bytes(), 0)
            .unwrap()
            .unwrap(),
    );
    let bad = token::parse_token_response(
        200,
        &[("X", "y")],
        br#"{"access_token":"a b","token_type":"Bearer","expires_in":60}"#,
        &["a"],
        TENANT,
        0,
    )
    .unwrap()
    .unwrap_err();
    out.push(bad.to_string());
    let e = build_request(
        "listPlatformExports",
        &RequestParams {
            query: vec![("access_token".into(), TOKEN.into())],
            ..params.clone()
        },
    )
    .unwrap_err();
    out.push(e.to_string());
    for o in &out {
        for s in [SECRET, TOKEN, CLIENT_SECRET, API_SECRET] {
            assert!(!o.contains(s), "{s} printed in: {o}");
        }
    }
    assert!(out.len() >= 15);
}
