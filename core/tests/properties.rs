//! Properties of the core (proptest): round trips, tamper detection, no panics on arbitrary
//! input, bounded state.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use proptest::prelude::*;
use royaltykit::dedup::DedupWindow;
use royaltykit::retry::{
    self, BackoffPolicy, Outcome, RetryAction, RetryClass, RetryLimits, RetryState,
    TransportFailure,
};
use royaltykit::webhook::{self, VerifyOptions, HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP};

fn secret() -> impl Strategy<Value = String> {
    "[ -~]{1,64}"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// No built path holds a dot segment (`.` or `..`: HTTP clients resolve it to another
    /// route), whatever the path parameters of whatever operation.
    #[test]
    fn built_paths_never_hold_a_dot_segment(pick in any::<u16>(), values in proptest::collection::vec(prop_oneof!["\\.{1,3}", "[./%a-z]{0,6}"], 1..3)) {
        let ops = royaltykit::catalog::operations();
        let op = &ops[usize::from(pick) % ops.len()];
        let names: Vec<&str> = op.path.split('{').skip(1).filter_map(|s| s.split_once('}')).map(|(n, _)| n).collect();
        let path: Vec<(String, String)> = names.iter().zip(values.iter().cycle()).map(|(n, v)| ((*n).to_owned(), v.clone())).collect();
        let dotted = path.iter().any(|(_, v)| v == "." || v == "..");
        use royaltykit::token::BearerToken;
        // every mix of token, tenant and body, so that each operation builds with one of them
        for (token, tenant) in [(None, None), (Some(BearerToken::reports("t", "0f8fad5b-d9cb-469f-a165-70867728950e")), Some("0f8fad5b-d9cb-469f-a165-70867728950e")), (Some(BearerToken::enterprise("t")), None)] {
            for body in [None, Some(b"{}".to_vec())] {
                let params = royaltykit::request::RequestParams {
                    path: path.clone(), token: token.clone(), tenant_id: tenant.map(str::to_owned), body, key_random: Some([7; 16]),
                    ..Default::default()
                };
                if let Ok(d) = royaltykit::request::build_request(&op.id, &params) {
                    prop_assert!(!dotted, "a dot segment was accepted: {}", d.path);
                    prop_assert!(!d.path.split('/').any(|s| s == "." || s == ".."), "{}", d.path);
                }
            }
        }
    }

    /// sign → verify accepts any secret, any body bytes and any timestamp (the payload aside).
    #[test]
    fn sign_then_verify_accepts_the_signature(secret in secret(), body in proptest::collection::vec(any::<u8>(), 0..2048), ts in 0i64..10_000_000_000) {
        let h = webhook::sign(&[&secret], &body, ts, "dlv").unwrap();
        let r = webhook::verify(&h.pairs(), &body, &[&secret], ts, VerifyOptions::default());
        // Arbitrary bytes are rarely an event payload: the signature must pass either way.
        match r {
            Ok(v) => prop_assert_eq!(v.timestamp, ts),
            Err(e) => prop_assert_eq!(e.code(), "invalid_payload"),
        }
    }

    /// Flipping any single bit of the body, the timestamp or the signature is detected.
    #[test]
    fn any_single_bit_flip_is_rejected(secret in secret(), body in proptest::collection::vec(any::<u8>(), 1..512), ts in 1_000_000_000i64..2_000_000_000, pick in any::<u16>(), bit in 0u8..8) {
        let h = webhook::sign(&[&secret], &body, ts, "dlv").unwrap();
        let mut b = body.clone();
        let i = usize::from(pick) % b.len();
        b[i] ^= 1 << bit;
        let e = webhook::verify(&h.pairs(), &b, &[&secret], ts, VerifyOptions::default()).unwrap_err();
        prop_assert_eq!(e.code(), "no_matching_signature");

        let ts2 = (ts ^ (1i64 << (u32::from(pick) % 30))).to_string();
        let headers = [(HEADER_ID, "dlv"), (HEADER_TIMESTAMP, ts2.as_str()), (HEADER_SIGNATURE, h.signature.as_str())];
        let e = webhook::verify(&headers, &body, &[&secret], ts, VerifyOptions::new(86_400, 1 << 20).unwrap()).unwrap_err();
        prop_assert_eq!(e.code(), "no_matching_signature");

        let mut sig = h.signature.into_bytes();
        let j = 3 + usize::from(pick) % 64;
        sig[j] = if sig[j] == b'0' { b'1' } else { b'0' };
        let sig = String::from_utf8(sig).unwrap();
        let headers = [(HEADER_ID, "dlv"), (HEADER_TIMESTAMP, h.timestamp.as_str()), (HEADER_SIGNATURE, sig.as_str())];
        let e = webhook::verify(&headers, &body, &[&secret], ts, VerifyOptions::default()).unwrap_err();
        prop_assert_eq!(e.code(), "no_matching_signature");
    }

    /// Verification returns (never panics) on arbitrary header maps and bodies.
    #[test]
    fn verify_never_panics(headers in proptest::collection::vec(("(?i)service-webhook-(id|timestamp|signature)|[a-z-]{1,12}", "\\PC{0,80}"), 0..8), body in proptest::collection::vec(any::<u8>(), 0..256), now in any::<i64>(), secrets in proptest::collection::vec("\\PC{0,20}", 0..3)) {
        let _ = webhook::verify(&headers, &body, &secrets, now, VerifyOptions::default());
    }

    /// A captured delivery resent under a new delivery id keeps its content key. (The new id
    /// starts with a capital letter and the first holds none, so the two always differ.)
    #[test]
    fn replay_under_a_new_id_keeps_the_content_key(secret in secret(), id in "[a-z0-9]{1,20}", other in "[A-Z][A-Z0-9]{0,19}") {
        let body = br#"{"event":"ddex.delivery.failed","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}"#;
        let h = webhook::sign(&[&secret], body, 1_800_000_000, &id).unwrap();
        let a = webhook::verify(&h.pairs(), body, &[&secret], 1_800_000_000, VerifyOptions::default()).unwrap();
        let headers = [(HEADER_ID, other.as_str()), (HEADER_TIMESTAMP, h.timestamp.as_str()), (HEADER_SIGNATURE, h.signature.as_str())];
        let b = webhook::verify(&headers, body, &[&secret], 1_800_000_000, VerifyOptions::default()).unwrap();
        prop_assert_eq!(a.content_key, b.content_key);
        prop_assert_ne!(a.delivery_id, b.delivery_id);
    }

    /// The window never holds more than its capacity, whatever the keys and clock do.
    #[test]
    fn dedup_window_stays_within_capacity(capacity in 1i64..20, ttl in 1i64..100, ops in proptest::collection::vec(("[a-e]{1,2}", -50i64..500), 0..200)) {
        let mut w = DedupWindow::new(capacity, ttl, [3; 16]).unwrap();
        for (k, now) in ops {
            let _ = w.check_and_insert(&k, now).unwrap();
            prop_assert!(w.len() <= capacity as usize);
        }
    }

    /// Backoff delays stay in their band and under the cap for any policy and random value.
    #[test]
    fn backoff_within_band_and_cap(steps in proptest::collection::vec(0.0f64..100.0, 0..5), lo in 0.0f64..50.0, width in 0.0f64..50.0, cap in 0.1f64..200.0, attempt in 1i64..50, r in 0.0f64..1.0, jitter in 0usize..3) {
        let j = [retry::Jitter::None, retry::Jitter::Full, retry::Jitter::Equal][jitter];
        let p = BackoffPolicy::new(steps.clone(), Some((lo, lo + width)), j, cap).unwrap();
        let d = p.delay(attempt, r).unwrap();
        prop_assert!(d >= 0.0 && d <= cap);
        let i = (attempt - 1) as usize;
        let bound = steps.get(i).copied().unwrap_or(lo + width);
        prop_assert!(d <= bound + 1e-9);
    }

    /// An unsafe create, and an idempotent write sent without its key, is never retried once
    /// the request may have been sent.
    #[test]
    fn unsafe_create_is_never_blindly_retried(status in 100u16..600, attempt in 1i64..10, elapsed in 0.0f64..1000.0, r in 0.0f64..1.0, transport in 0usize..4, keyless_idem in proptest::bool::ANY, key_sent in proptest::bool::ANY) {
        let outcome = match transport {
            0 => Outcome::Transport(TransportFailure::Timeout),
            1 => Outcome::Transport(TransportFailure::ConnectionLost),
            _ => Outcome::Response { status, retry_after: None },
        };
        let (class, key_sent) = if keyless_idem { (RetryClass::IdempotentWrite, false) } else { (RetryClass::UnsafeCreate, key_sent) };
        let state = RetryState { attempt, elapsed_seconds: elapsed, token_refreshed: false, random: r, idempotency_key_sent: key_sent };
        let d = retry::decide_retry(class, outcome, state, RetryLimits::new(100, 1e9).unwrap(), &BackoffPolicy::default()).unwrap();
        let maybe_sent = match outcome {
            Outcome::Transport(_) => true,
            Outcome::Response { status, .. } => status == 408 || status >= 500,
        };
        if maybe_sent {
            prop_assert_ne!(d.action, RetryAction::Retry);
        }
    }
}

/// A store with several receivers racing on it: the claim states the machine is told are what a
/// real store would answer (a key claimed and not released or committed is in progress).
mod receipts {
    use super::*;
    use royaltykit::dedup::ClaimState;
    use royaltykit::machine::{ReceiptStep, WebhookReceipt};
    use royaltykit::webhook::{VerifiedWebhook, WebhookEvent};
    use std::collections::HashMap;

    fn delivery(content: &str) -> VerifiedWebhook {
        let body = br#"{"event":"enterprise.release.updated","resource":{"type":"release","reference":"r1","url":"/api/v1/releases/r1"},"occurred_at":"2026-11-22T04:05:06Z"}"#;
        let event: WebhookEvent = webhook::verify(
            &webhook::sign(&["s"], body, 100, "d").unwrap().pairs(),
            body,
            &["s"],
            100,
            VerifyOptions::default(),
        )
        .unwrap()
        .event;
        VerifiedWebhook {
            delivery_id: "dlv".to_owned(),
            timestamp: 100,
            secret_index: 0,
            content_key: content.to_owned(),
            event,
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Key {
        Free,
        Held,
        Done,
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Whatever the store's failures and the handler's outcome, a receipt runs the handler
        /// only with every key claimed by it, answers 200 `processed` only after every key is
        /// committed, never leaves a claim of its own behind on any other answer but a commit
        /// that kept failing (the lease then ends it), and touches only keys it claimed.
        #[test]
        fn a_receipt_never_loses_an_event_nor_leaks_a_claim(
            before in proptest::collection::vec(0u8..3, 2),
            failures in proptest::collection::vec(any::<bool>(), 12),
            handler_ok in any::<bool>(),
        ) {
            let mut store: HashMap<String, Key> = HashMap::new();
            let d = delivery("cnt_1");
            let keys = [royaltykit::dedup::delivery_key("ns", "dlv").unwrap(), "cnt_1".to_owned()];
            for (k, b) in keys.iter().zip(&before) {
                store.insert(k.clone(), [Key::Free, Key::Held, Key::Done][usize::from(*b)]);
            }
            let initial = store.clone();
            let mut mine: Vec<String> = Vec::new();
            let mut failing = failures.into_iter();
            let mut handled = false;
            let mut release_failed = false;
            let mut r = WebhookReceipt::new("ns", Ok(d), true).unwrap();
            for _ in 0..64 {
                match r.next() {
                    ReceiptStep::Claim { key } => {
                        if failing.next().unwrap_or(false) {
                            r.store_failed().unwrap();
                            continue;
                        }
                        let state = match store[&key] {
                            Key::Free => { store.insert(key.clone(), Key::Held); mine.push(key.clone()); ClaimState::New }
                            Key::Held => ClaimState::InProgress,
                            Key::Done => ClaimState::Done,
                        };
                        r.claimed(state).unwrap();
                    }
                    ReceiptStep::Release { key } => {
                        prop_assert!(mine.contains(&key), "released a key it did not claim");
                        if failing.next().unwrap_or(false) {
                            release_failed = true;
                        } else {
                            store.insert(key.clone(), Key::Free);
                            mine.retain(|k| *k != key);
                        }
                        r.released().unwrap();
                    }
                    ReceiptStep::RunHandler {} => {
                        prop_assert_eq!(mine.len(), keys.len(), "handler run without every key claimed");
                        handled = true;
                        if handler_ok { r.handler_succeeded().unwrap() } else { r.handler_failed().unwrap() }
                    }
                    ReceiptStep::Commit { key, .. } => {
                        prop_assert!(handled && handler_ok && mine.contains(&key));
                        if failing.next().unwrap_or(false) {
                            r.store_failed().unwrap();
                        } else {
                            store.insert(key.clone(), Key::Done);
                            r.committed().unwrap();
                        }
                    }
                    ReceiptStep::Wait { .. } => r.waited().unwrap(),
                    step @ (ReceiptStep::Begin {} | ReceiptStep::CommitTransaction {} | ReceiptStep::Rollback {} | ReceiptStep::Enqueue { .. }) => {
                        prop_assert!(false, "a plain receipt asked for {:?}", step);
                    }
                    ReceiptStep::Reply { status, body } => {
                        match status {
                            200 if body.contains("processed") => {
                                prop_assert!(handled && handler_ok);
                                prop_assert!(keys.iter().all(|k| store[k] == Key::Done));
                            }
                            200 => prop_assert!(!handled && initial.values().any(|s| *s == Key::Done)),
                            500 => prop_assert!(handled && !handler_ok),
                            503 => prop_assert!(!handled || handler_ok),
                            other => prop_assert!(false, "unexpected status {}", other),
                        }
                        // Claims left held by this receipt: only after a commit that kept
                        // failing (or a release that failed), which the lease ends.
                        let held: Vec<_> = mine.iter().filter(|k| store[*k] == Key::Held).collect();
                        prop_assert!(held.is_empty() || status == 503 || release_failed, "{} left held", held.len());
                        return Ok(());
                    }
                }
            }
            prop_assert!(false, "no reply after 64 steps");
        }

        /// A transactional receipt against a model database: the marks and the effect live in
        /// the open transaction and reach the table only when it commits (a failed commit may
        /// or may not have committed, as over a dropped connection). Whatever fails, the effect
        /// is in the table exactly when every key is done; 200 `processed` only after the
        /// commit; the handler runs only with every key claimed and the transaction open, and
        /// every key is marked in it after the handler; a claim of its own is left held only
        /// when a release failed (the lease ends it) and never over a committed row.
        #[test]
        fn a_transactional_receipt_applies_the_effect_with_the_marks_or_not_at_all(
            before in proptest::collection::vec(0u8..3, 2),
            failures in proptest::collection::vec(0u8..4, 16),
            handler_ok in any::<bool>(),
            lost_at in proptest::option::of(0usize..2),
        ) {
            let mut table: HashMap<String, Key> = HashMap::new();
            let keys = [royaltykit::dedup::delivery_key("ns", "dlv").unwrap(), "cnt_1".to_owned()];
            for (k, b) in keys.iter().zip(&before) {
                table.insert(k.clone(), [Key::Free, Key::Held, Key::Done][usize::from(*b)]);
            }
            let mut effect = false;
            let mut mine: Vec<String> = Vec::new();
            let (mut open, mut marked, mut staged_effect) = (false, Vec::<String>::new(), false);
            let mut failing = failures.into_iter();
            let mut release_failed = false;
            let mut r = WebhookReceipt::new("ns", Ok(delivery("cnt_1")), true).unwrap().transactional();
            for _ in 0..64 {
                let fail = failing.next().unwrap_or(0);
                match r.next() {
                    ReceiptStep::Claim { key } => {
                        prop_assert!(!open, "claimed inside the transaction");
                        if fail == 1 { r.store_failed().unwrap(); continue; }
                        let state = match table[&key] {
                            Key::Free => { table.insert(key.clone(), Key::Held); mine.push(key.clone()); ClaimState::New }
                            Key::Held => ClaimState::InProgress,
                            Key::Done => ClaimState::Done,
                        };
                        r.claimed(state).unwrap();
                    }
                    ReceiptStep::Begin {} => {
                        prop_assert_eq!(mine.len(), keys.len());
                        if fail == 1 { r.store_failed().unwrap(); } else { open = true; r.began().unwrap(); }
                    }
                    ReceiptStep::Commit { key, .. } => {
                        prop_assert!(open && staged_effect && mine.contains(&key), "a mark outside the transaction or before the effect");
                        if fail == 1 { r.store_failed().unwrap(); }
                        else if lost_at == Some(marked.len()) { r.claim_lost().unwrap(); }
                        else { marked.push(key); r.committed().unwrap(); }
                    }
                    ReceiptStep::RunHandler {} => {
                        prop_assert!(open && marked.is_empty() && mine.len() == keys.len(), "handler run outside the transaction or without every claim");
                        staged_effect = handler_ok;
                        if handler_ok { r.handler_succeeded().unwrap() } else { r.handler_failed().unwrap() }
                    }
                    ReceiptStep::CommitTransaction {} => {
                        prop_assert!(open && staged_effect && marked.len() == keys.len(), "committed without every mark");
                        // a failed commit over a dropped connection may have committed (fail 2)
                        if fail != 1 {
                            effect = true;
                            for k in &marked { table.insert(k.clone(), Key::Done); }
                        }
                        open = false;
                        if fail == 0 { r.transaction_committed().unwrap() } else { r.store_failed().unwrap() }
                    }
                    ReceiptStep::Rollback {} => {
                        prop_assert!(open);
                        (open, staged_effect) = (false, false);
                        marked.clear();
                        r.rolled_back().unwrap();
                    }
                    ReceiptStep::Release { key } => {
                        prop_assert!(!open && mine.contains(&key), "released inside a transaction or a key not claimed");
                        if fail == 1 { release_failed = true; }
                        else if table[&key] == Key::Held { table.insert(key.clone(), Key::Free); } // guarded: never a done row
                        r.released().unwrap();
                    }
                    ReceiptStep::Wait { .. } => prop_assert!(false, "a transactional receipt never pauses"),
                    ReceiptStep::Enqueue { .. } => prop_assert!(false, "a transactional receipt never enqueues"),
                    ReceiptStep::Reply { status, body } => {
                        prop_assert!(!open, "replied with the transaction open");
                        prop_assert_eq!(effect, keys.iter().all(|k| table[k] == Key::Done && mine.contains(k)));
                        if status == 200 && body.contains("processed") { prop_assert!(effect); }
                        if status != 200 || !body.contains("processed") { prop_assert!(!effect || status == 503); }
                        if status == 500 { prop_assert!(!handler_ok && !effect); }
                        let held = mine.iter().filter(|k| table[*k] == Key::Held).count();
                        prop_assert!(held == 0 || release_failed, "{} left held", held);
                        return Ok(());
                    }
                }
            }
            prop_assert!(false, "no reply after 64 steps");
        }

        /// `WebhookReceipt::settle` on an in-process window takes exactly the steps a host driving a
        /// copy of that window by hand takes, and stops only where the host is needed: several
        /// deliveries (some repeated, some of the same content, some handlers failing) end with
        /// the same replies and the same window either way.
        #[test]
        fn settling_on_a_window_is_driving_it_by_hand(
            deliveries in proptest::collection::vec((0u8..3, 0u8..3, any::<bool>(), any::<bool>()), 1..8),
        ) {
            let mut settled = DedupWindow::new(64, 3600, [7; 16]).unwrap();
            let mut by_hand = settled.clone();
            let mut held: Vec<(WebhookReceipt, WebhookReceipt)> = Vec::new();
            for (t, (id, content, handler_ok, finish_now)) in deliveries.into_iter().enumerate() {
                let now = 1_000 + i64::try_from(t).unwrap();
                let mut d = delivery(&format!("cnt_{content}"));
                d.delivery_id = format!("dlv_{id}");
                let (mut a, mut b) = (WebhookReceipt::new("ns", Ok(d.clone()), true).unwrap(), WebhookReceipt::new("ns", Ok(d), true).unwrap());
                let step = a.settle(&mut settled, now);
                let hand = drive_by_hand(&mut b, &mut by_hand, now);
                prop_assert_eq!(&step, &hand);
                if matches!(step, ReceiptStep::RunHandler {}) {
                    if handler_ok { a.handler_succeeded().unwrap(); b.handler_succeeded().unwrap(); }
                    else { a.handler_failed().unwrap(); b.handler_failed().unwrap(); }
                    if finish_now {
                        prop_assert_eq!(a.settle(&mut settled, now), drive_by_hand(&mut b, &mut by_hand, now));
                    } else {
                        held.push((a, b)); // finished after later deliveries met its claims
                    }
                } else {
                    let replied = matches!(step, ReceiptStep::Reply { .. });
                    prop_assert!(replied, "settle stopped at {:?}", step);
                }
            }
            for (mut a, mut b) in held {
                let step = a.settle(&mut settled, 2_000);
                let replied = matches!(step, ReceiptStep::Reply { .. });
                prop_assert!(replied, "a held receipt ended at {:?}", step);
                prop_assert_eq!(step, drive_by_hand(&mut b, &mut by_hand, 2_000));
            }
            for id in 0..3 {
                let key = royaltykit::dedup::delivery_key("ns", &format!("dlv_{id}")).unwrap();
                prop_assert_eq!(settled.claim(&key, 2_001).unwrap(), by_hand.claim(&key, 2_001).unwrap());
            }
        }
    }

    /// The host's loop over a window, written out: what `settle` must equal.
    fn drive_by_hand(r: &mut WebhookReceipt, window: &mut DedupWindow, now: i64) -> ReceiptStep {
        loop {
            match r.next() {
                ReceiptStep::Claim { key } => r.claimed(window.claim(&key, now).unwrap()).unwrap(),
                ReceiptStep::Release { key } => {
                    window.release(&key, now).unwrap();
                    r.released().unwrap();
                }
                ReceiptStep::Commit { key, .. } => {
                    window.commit(&key, now).unwrap();
                    r.committed().unwrap();
                }
                step => return step,
            }
        }
    }
}
