//! Unit tests of behaviour the shared vectors do not pin down (the vectors cover the codes).

use super::*;

const BODY: &[u8] = br#"{"event":"ddex.delivery.failed","resource":{"type":"ddex_message","reference":"r","url":"/api/v1/ddex/messages/r"},"occurred_at":"2026-11-22T04:05:06Z"}"#;

#[test]
fn sign_then_verify_round_trips_with_one_and_two_secrets() {
    let h = sign(&["new", "old"], BODY, 1_000, "dlv-1").unwrap();
    assert_eq!(h.signature.matches("v1=").count(), 2);
    for secrets in [&["new"][..], &["old"], &["other", "old"]] {
        let v = verify(&h.pairs(), BODY, secrets, 1_000, VerifyOptions::default()).unwrap();
        assert_eq!(v.delivery_id, "dlv-1");
        assert_eq!(v.secret_index as usize, secrets.len() - 1);
    }
}

#[test]
fn secrets_never_appear_in_debug_or_errors() {
    let secret = "whsec_SHOULD_NOT_LEAK";
    let verifier = WebhookVerifier::new(&[secret], VerifyOptions::default()).unwrap();
    assert!(!format!("{verifier:?}").contains(secret));
    let h = sign(&[secret], BODY, 1_000, "d").unwrap();
    let late = verifier.verify(&h.pairs(), BODY, 5_000).unwrap_err();
    let forged = verifier.verify(&h.pairs(), b"x", 1_000).unwrap_err();
    let empty = WebhookVerifier::new(&[secret, ""], VerifyOptions::default()).unwrap_err();
    for e in [late, forged, empty] {
        assert!(!format!("{e} {e:?}").contains(secret), "{e}");
        assert!(
            !format!("{e}").contains(&h.signature[3..]),
            "no computed MAC in messages"
        );
    }
}

#[test]
fn error_details_name_header_skew_and_limit() {
    let h = sign(&["s"], BODY, 1_000, "d").unwrap();
    let e = verify(&h.pairs(), BODY, &["s"], 1_400, VerifyOptions::default()).unwrap_err();
    assert_eq!(
        (e.code(), e.skew_seconds(), e.limit()),
        ("timestamp_too_old", Some(400), Some(300))
    );
    let e = verify(
        &[(HEADER_ID, "d")],
        BODY,
        &["s"],
        0,
        VerifyOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.header(), Some(HEADER_TIMESTAMP));
    let small = VerifyOptions::new(300, 10).unwrap();
    let e = verify(&h.pairs(), BODY, &["s"], 1_000, small).unwrap_err();
    assert_eq!((e.code(), e.limit()), ("payload_too_large", Some(10)));
}

#[test]
fn hostile_timestamp_and_now_do_not_overflow() {
    let h = sign(&["s"], BODY, 999_999_999_999_999, "d").unwrap();
    for now in [i64::MIN, i64::MAX, 0] {
        let e = verify(&h.pairs(), BODY, &["s"], now, VerifyOptions::default()).unwrap_err();
        assert!(matches!(
            e.code(),
            "timestamp_too_old" | "timestamp_too_new"
        ));
    }
}

#[test]
fn options_validate_ranges() {
    assert!(VerifyOptions::new(0, 0).is_ok());
    assert!(VerifyOptions::new(86_400, 64 * 1024 * 1024).is_ok());
    assert_eq!(
        VerifyOptions::new(-1, 1).unwrap_err().name,
        "tolerance_seconds"
    );
    assert_eq!(
        VerifyOptions::new(86_401, 1).unwrap_err().name,
        "tolerance_seconds"
    );
    assert_eq!(
        VerifyOptions::new(1, -1).unwrap_err().name,
        "max_body_bytes"
    );
}

#[test]
fn sign_rejects_bad_arguments() {
    assert_eq!(
        sign(&["s"], BODY, -1, "d").unwrap_err().code(),
        "invalid_argument"
    );
    assert_eq!(
        sign(&["s"], BODY, 1, "").unwrap_err().code(),
        "invalid_argument"
    );
    assert_eq!(
        sign(&["s"], BODY, 1, " d").unwrap_err().code(),
        "invalid_argument"
    );
    assert_eq!(
        sign::<&str>(&[], BODY, 1, "d").unwrap_err().code(),
        "invalid_secret"
    );
}

#[test]
fn active_secrets_follow_previous_valid_until() {
    assert_eq!(
        active_secrets("n", Some("o"), Some(10), 10).unwrap(),
        [
            WebhookSecret::new("n", None),
            WebhookSecret::new("o", Some(10))
        ]
    );
    assert_eq!(
        active_secrets("n", Some("o"), Some(10), 11).unwrap(),
        [WebhookSecret::new("n", None)]
    );
    assert_eq!(
        active_secrets("n", None, None, 11).unwrap(),
        [WebhookSecret::new("n", None)]
    );
    // A verifier built from them at rotation time stops accepting the old secret after it.
    let secrets = active_secrets("n", Some("o"), Some(10), 5).unwrap();
    let v = WebhookVerifier::new(&secrets, VerifyOptions::default()).unwrap();
    let old = sign(&["o"], BODY, 12, "d").unwrap();
    assert_eq!(
        v.verify(&old.pairs()[..], BODY, 12).unwrap_err().code(),
        "no_matching_signature"
    );
    assert!(active_secrets("n", Some("o"), None, 0).is_err());
    assert!(active_secrets("n", None, Some(1), 0).is_err());
}

#[test]
fn event_names_round_trip_and_unknown_names_are_kept() {
    for name in [
        "ddex.delivery.status_changed",
        "ddex.delivery.blocked",
        "ddex.delivery.acknowledged",
        "ddex.delivery.rejected",
        "ddex.delivery.failed",
        "ddex.import.completed",
        "ddex.import.failed",
        "ddex.connection.degraded",
        "enterprise.webhook.test",
    ] {
        let n = EventName::parse(name);
        assert!(n.is_known(), "{name}");
        assert_eq!(n.as_str(), name);
    }
    let other = EventName::parse("ddex.brand_new");
    assert_eq!(other, EventName::Other("ddex.brand_new".into()));
    assert!(!other.is_known());
    assert_eq!(other.to_string(), "ddex.brand_new");
}

#[test]
fn verifier_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<WebhookVerifier>();
}

#[test]
fn keyed_hmac_states_are_zeroized_on_drop() {
    // Compile-time proof: the only secret material the core keeps (the keyed HMAC states held by
    // a WebhookVerifier) wipes itself when dropped.
    // HmacCore<Sha256> keeps the key only as two SHA-256 cores (inner and outer pads absorbed).
    fn assert_zeroize_on_drop<T: zeroize::ZeroizeOnDrop>() {}
    assert_zeroize_on_drop::<<sha2::Sha256 as hmac::EagerHash>::Core>();
}

/// A primitive that fails, or answers with the wrong value: verification must fail closed.
struct Broken(Option<[u8; 32]>, usize);

impl SignatureMac for Broken {
    fn mac(&mut self, _: usize, _: &str, _: &[u8]) -> Option<[u8; 32]> {
        self.1 += 1;
        self.0
    }
}

#[test]
fn a_delegated_mac_that_fails_or_lies_never_matches() {
    let h = sign(&["s"], BODY, 1_000, "d").unwrap();
    let verifier = WebhookVerifier::new(&["s", "t"], VerifyOptions::default()).unwrap();
    for answer in [None, Some([0u8; 32])] {
        let mut mac = Broken(answer, 0);
        let e = verifier
            .verify_with_mac(&h.pairs(), BODY, 1_000, &mut mac)
            .unwrap_err();
        assert_eq!(e.code(), "no_matching_signature");
        assert_eq!(mac.1, 2, "each secret's MAC asked for once");
        let e = verify_with_mac(
            &h.pairs(),
            BODY,
            &["s"],
            1_000,
            VerifyOptions::default(),
            &mut mac,
        )
        .unwrap_err();
        assert_eq!(e.code(), "no_matching_signature");
    }
}

#[test]
fn a_delegated_mac_keeps_the_check_order() {
    let h = sign(&["s"], BODY, 1_000, "d").unwrap();
    let mut mac = Broken(None, 0);
    let opts = VerifyOptions::default();
    let none: [(&str, &str); 0] = [];
    let e = verify_with_mac(&none, BODY, &[""], 1_000, opts, &mut mac).unwrap_err();
    assert_eq!(
        e.code(),
        "missing_header",
        "headers are checked before secrets"
    );
    let e = verify_with_mac(&h.pairs(), BODY, &[""], 1_000, opts, &mut mac).unwrap_err();
    assert_eq!(e.code(), "invalid_secret");
    let empty: [&str; 0] = [];
    let e = verify_with_mac(&h.pairs(), BODY, &empty, 1_000, opts, &mut mac).unwrap_err();
    assert_eq!(e.code(), "invalid_secret");
    assert_eq!(mac.1, 0, "no MAC is computed before the secrets are usable");
}

#[test]
fn a_secret_past_its_valid_until_never_matches_and_the_message_says_so() {
    let h = sign(&["new", "old"], BODY, 1_000, "dlv-1").unwrap();
    let secrets = [
        WebhookSecret::new("other", None),
        WebhookSecret::new("old", Some(1_000)),
    ];
    let opts = VerifyOptions::default();
    // inclusive: valid at its valid_until
    let v = verify(&h.pairs(), BODY, &secrets, 1_000, opts).unwrap();
    assert_eq!(v.secret_index, 1);
    // one second later the same delivery (still inside the tolerance) is refused, by every path
    let verifier = WebhookVerifier::new(&secrets, opts).unwrap();
    for e in [
        verify(&h.pairs(), BODY, &secrets, 1_001, opts).unwrap_err(),
        verifier.verify(&h.pairs(), BODY, 1_001).unwrap_err(),
    ] {
        assert_eq!(e.code(), "no_matching_signature");
        assert!(e.to_string().contains("1 more past its valid_until"), "{e}");
    }
    // the content key does not depend on whether the first secret expired
    let fresh = [WebhookSecret::new("new", None)];
    let expired_first = [
        WebhookSecret::new("new", Some(0)),
        WebhookSecret::new("old", None),
    ];
    assert_eq!(
        verify(&h.pairs(), BODY, &fresh, 1_000, opts)
            .unwrap()
            .content_key,
        verify(&h.pairs(), BODY, &expired_first, 1_000, opts)
            .unwrap()
            .content_key
    );
    let debug = format!("{:?}", secrets[1]);
    assert!(!debug.contains("old") && debug.contains("1000"), "{debug}");
}
