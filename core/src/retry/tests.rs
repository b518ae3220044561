//! Exhaustive checks of the promises the retry decision makes, over every class, status and
//! transport failure (the shared vectors pin individual cases).

use super::*;

const ALL: [RetryClass; 10] = [
    RetryClass::Read,
    RetryClass::TokenExchange,
    RetryClass::IdempotentWrite,
    RetryClass::SafeUpdate,
    RetryClass::UnsafeCreate,
    RetryClass::Submit,
    RetryClass::Checkout,
    RetryClass::AddonAction,
    RetryClass::Upload,
    RetryClass::SecretRotation,
];
const BLIND_UNSAFE: [RetryClass; 5] = [
    RetryClass::UnsafeCreate,
    RetryClass::SecretRotation,
    RetryClass::Submit,
    RetryClass::Checkout,
    RetryClass::AddonAction,
];

fn outcomes() -> Vec<Outcome> {
    let mut v: Vec<Outcome> = (100..=599)
        .flat_map(|status| {
            [None, Some(0), Some(7), Some(3600)].map(|s| Outcome::Response {
                status,
                retry_after: s.map(|seconds| RetryAfter {
                    seconds,
                    form: RetryAfterForm::DeltaSeconds,
                }),
            })
        })
        .collect();
    v.extend(
        [
            TransportFailure::Timeout,
            TransportFailure::ConnectFailed,
            TransportFailure::ConnectionLost,
        ]
        .map(Outcome::Transport),
    );
    v
}

fn may_have_been_applied(o: Outcome) -> bool {
    match o {
        Outcome::Transport(t) => t != TransportFailure::ConnectFailed,
        Outcome::Response { status, .. } => status == 408 || (500..=599).contains(&status),
    }
}

#[test]
fn never_blindly_repeats_an_unsafe_operation_that_may_have_been_applied() {
    let limits = RetryLimits::new(100, 1e9).unwrap();
    // An idempotent write sent without its key is a create too.
    let unsafe_cases = BLIND_UNSAFE
        .iter()
        .flat_map(|c| [(*c, false), (*c, true)])
        .chain([(RetryClass::IdempotentWrite, false)]);
    for (class, key_sent) in unsafe_cases {
        for o in outcomes().into_iter().filter(|o| may_have_been_applied(*o)) {
            for attempt in 1..=6 {
                let state = RetryState {
                    attempt,
                    elapsed_seconds: 0.0,
                    token_refreshed: false,
                    random: 0.3,
                    idempotency_key_sent: key_sent,
                };
                let d = decide_retry(class, o, state, limits, &BackoffPolicy::default()).unwrap();
                assert_eq!(d.action, RetryAction::Reconcile, "{class:?} {o:?}");
                assert!(d.reconcile.is_some());
            }
        }
    }
}

#[test]
fn every_decision_is_well_formed_and_bounded() {
    let limits = RetryLimits::default();
    for class in ALL {
        for o in outcomes() {
            for (refreshed, key_sent) in [(false, false), (true, true), (false, true)] {
                for attempt in 1..=6 {
                    for random in [0.0, 0.5, 0.999_999] {
                        let state = RetryState {
                            attempt,
                            elapsed_seconds: 10.0,
                            token_refreshed: refreshed,
                            random,
                            idempotency_key_sent: key_sent,
                        };
                        let d = decide_retry(class, o, state, limits, &BackoffPolicy::default())
                            .unwrap();
                        assert!(!d.reason.is_empty() && !d.rule.is_empty());
                        assert_eq!(d.reconcile.is_some(), d.action == RetryAction::Reconcile);
                        match d.action {
                            RetryAction::Retry => {
                                assert!(attempt < 5, "retry within max attempts");
                                assert!(d.delay_seconds >= 0.0 && 10.0 + d.delay_seconds <= 300.0);
                            }
                            RetryAction::Stop if d.rule == "retry_after_exceeds_budget" => {
                                assert!(10.0 + d.delay_seconds > 300.0, "the whole wait");
                            }
                            _ => assert_eq!(d.delay_seconds, 0.0),
                        }
                        if d.action == RetryAction::RefreshToken {
                            assert!(!refreshed && class != RetryClass::TokenExchange);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn retry_after_is_never_shortened() {
    for seconds in [0, 1, 299, 300, 301, 3600, 3601, 7200, u64::MAX] {
        for class in ALL {
            for status in [429, 503] {
                let o = Outcome::Response {
                    status,
                    retry_after: Some(RetryAfter {
                        seconds,
                        form: RetryAfterForm::DeltaSeconds,
                    }),
                };
                let state = RetryState {
                    attempt: 1,
                    elapsed_seconds: 0.0,
                    token_refreshed: false,
                    random: 0.5,
                    idempotency_key_sent: true,
                };
                let d = decide_retry(
                    class,
                    o,
                    state,
                    RetryLimits::default(),
                    &BackoffPolicy::default(),
                )
                .unwrap();
                if matches!(d.action, RetryAction::Retry | RetryAction::Stop)
                    && d.delay_seconds > 0.0
                {
                    assert!(
                        d.delay_seconds >= seconds as f64,
                        "{class:?} {status} {seconds}: {d:?}"
                    );
                }
                if d.action == RetryAction::Retry {
                    assert!(d.delay_seconds >= seconds as f64);
                }
            }
        }
    }
}

#[test]
fn an_idempotent_write_retries_only_when_its_key_was_sent() {
    let timeout = Outcome::Transport(TransportFailure::Timeout);
    let decide = |sent| {
        let state = RetryState {
            attempt: 1,
            elapsed_seconds: 0.0,
            token_refreshed: false,
            random: 0.5,
            idempotency_key_sent: sent,
        };
        decide_retry(
            RetryClass::IdempotentWrite,
            timeout,
            state,
            RetryLimits::default(),
            &BackoffPolicy::default(),
        )
        .unwrap()
    };
    assert_eq!(decide(true).action, RetryAction::Retry);
    let without = decide(false);
    assert_eq!(without.action, RetryAction::Reconcile);
    assert_eq!(without.reconcile, Some(Reconcile::LookupBySentData));
}

#[test]
fn default_backoff_stays_in_its_bands() {
    for attempt in 1..=20 {
        for i in 0..100 {
            let r = f64::from(i) / 100.0;
            let d = backoff_delay(attempt, r).unwrap();
            let (lo, hi) = match attempt {
                1 => (2.0, 2.0),
                2 => (5.0, 5.0),
                3 => (15.0, 15.0),
                _ => (30.0, 60.0),
            };
            assert!(d >= lo && d <= hi, "attempt {attempt} r {r}: {d}");
        }
    }
    assert!(backoff_delay(1, f64::NAN).is_err());
    assert!(backoff_delay(1, f64::INFINITY).is_err());
}

#[test]
fn rate_budget_memory_is_bounded_by_its_limits() {
    let mut b = RateBudget::new(&[("a", 3, Some(60))]).unwrap();
    for t in 0..1000 {
        let _ = b.try_acquire(t / 100);
        assert!(b.usage(t / 100).iter().all(|u| u.count <= u.limit));
    }
}
