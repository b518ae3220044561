//! Exhaustive checks of the promises the retry decision makes, over every class, status and
//! transport failure (the shared vectors pin individual cases).

use super::*;

const ALL: [RetryClass; 9] = [
    RetryClass::Read,
    RetryClass::TokenExchange,
    RetryClass::IdempotentWrite,
    RetryClass::SafeUpdate,
    RetryClass::UnsafeCreate,
    RetryClass::Submit,
    RetryClass::Checkout,
    RetryClass::AddonAction,
    RetryClass::Upload,
];
const BLIND_UNSAFE: [RetryClass; 4] = [
    RetryClass::UnsafeCreate,
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
                    capped: false,
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
    for class in BLIND_UNSAFE {
        for o in outcomes().into_iter().filter(|o| may_have_been_applied(*o)) {
            for attempt in 1..=6 {
                let state = RetryState {
                    attempt,
                    elapsed_seconds: 0.0,
                    token_refreshed: false,
                    random: 0.3,
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
            for refreshed in [false, true] {
                for attempt in 1..=6 {
                    for random in [0.0, 0.5, 0.999_999] {
                        let state = RetryState {
                            attempt,
                            elapsed_seconds: 10.0,
                            token_refreshed: refreshed,
                            random,
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
