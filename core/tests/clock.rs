//! The host's clock stepping back (NTP correcting a fast clock, a VM resumed from a snapshot,
//! a hand-set clock) while a machine waits: no wait is stretched by the step, none shortened.
#![allow(clippy::unwrap_used, clippy::panic)]

use royaltykit::machine::{Call, CallOptions, Step};
use royaltykit::request::RequestParams;
use royaltykit::retry::RateBudget;
use royaltykit::token::BearerToken;

const TENANT: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
const T: f64 = 1_798_761_600.0;

fn read() -> Call {
    let params = RequestParams {
        path: vec![("export".into(), "exp_1".into())],
        tenant_id: Some(TENANT.into()),
        ..RequestParams::default()
    };
    let options = CallOptions {
        seed: 3,
        ..CallOptions::default()
    };
    let mut call = Call::new("getPlatformExport", params, options).unwrap();
    call.token(BearerToken::reports("tok", TENANT), Some(T + 86_400.0));
    call
}

#[test]
fn a_retry_after_is_waited_whole_not_an_hour_more_when_the_clock_steps_back() {
    let mut call = read();
    assert!(matches!(call.next(T, None).unwrap(), Step::Send { .. }));
    call.response(429, &[("Retry-After", "5")], b"", T).unwrap();
    assert_eq!(call.next(T, None).unwrap(), Step::Wait { seconds: 5.0 });
    // During the wait the clock is set back an hour. The call cannot tell how much of the
    // wait had passed when it was: it waits the whole 5 s from the next reading, not 3605.
    let back = T + 2.0 - 3_600.0;
    assert_eq!(call.next(back, None).unwrap(), Step::Wait { seconds: 5.0 });
    // asked again at once, the same 5 s (the step is taken once)
    assert_eq!(call.next(back, None).unwrap(), Step::Wait { seconds: 5.0 });
    let Step::Wait { seconds } = call.next(back + 3.0, None).unwrap() else {
        panic!("still waiting");
    };
    assert!((seconds - 2.0).abs() < 1e-6, "{seconds}");
    assert!(matches!(
        call.next(back + 5.0, None).unwrap(),
        Step::Send { .. }
    ));
}

#[test]
fn a_retry_after_is_not_shortened_when_the_clock_steps_back_during_the_request() {
    let mut call = read();
    assert!(matches!(call.next(T, None).unwrap(), Step::Send { .. }));
    // the clock steps back a minute while the request is out; the 503 says 30 s
    let back = T - 60.0;
    call.response(503, &[("Retry-After", "30")], b"", back)
        .unwrap();
    let Step::Wait { seconds } = call.next(back, None).unwrap() else {
        panic!("a wait after a 503 with Retry-After");
    };
    assert!((30.0..=31.0).contains(&seconds), "{seconds}");
    assert!(matches!(
        call.next(back + 10.0, None).unwrap(),
        Step::Wait { .. }
    ));
}

#[test]
fn a_rate_budget_frees_its_places_one_window_from_a_clock_set_back() {
    let mut budget = RateBudget::new(&[("api_client", 2, Some(60))]).unwrap();
    let t = T as i64;
    assert!(budget.try_acquire(t).allowed);
    assert!(budget.try_acquire(t + 1).allowed);
    assert!(!budget.try_acquire(t + 2).allowed);
    // an hour back: the two requests count as made now, so a place frees within a window and
    // its margin, never an hour and a window later; and not at once either
    let back = t + 2 - 3_600;
    let decision = budget.try_acquire(back);
    assert!(!decision.allowed, "the window is still full");
    let wait = decision.wait_until.unwrap() - back;
    assert!((1..=62).contains(&wait), "{wait}");
}

/// An unkeyed create lost to a 503 with `Retry-After: 20`, looked for in the list; the clock is
/// set back 1000 s during the looks. The next create still waits out the 20 s (real time), and
/// no wait is stretched by the step.
#[test]
fn a_lost_create_s_retry_after_survives_a_clock_set_back_during_the_looks() {
    use royaltykit::machine::{ExportJob, ExportJobOptions};
    let mut job = ExportJob::new(ExportJobOptions {
        tenant_id: TENANT.into(),
        body: br#"{"export_class":"statements","format":"csv"}"#.to_vec(),
        call: CallOptions {
            seed: 5,
            ..CallOptions::default()
        },
        ..ExportJobOptions::default()
    })
    .unwrap();
    job.token(BearerToken::reports("tok", TENANT), Some(T + 86_400.0));
    let json = [("Content-Type", "application/json")];
    // real time, and the host's clock (`real + offset`)
    let (mut real, mut offset) = (T, 0.0);
    let (mut creates, mut looks_after_503, mut refused_at) = (0, 0, None);
    for _ in 0..100 {
        let step = job.next(real + offset, None).unwrap();
        match step {
            Step::Wait { seconds } => {
                assert!(seconds <= 20.0 + 1e-6, "a wait of {seconds} s");
                real += seconds;
            }
            Step::Send { request } => match request.operation_id.as_str() {
                "listPlatformExports" => {
                    if refused_at.is_some() {
                        looks_after_503 += 1;
                        if looks_after_503 == 1 {
                            offset -= 1_000.0; // set back after the first look is sent
                        }
                    }
                    job.response(200, &json, br#"{"data":[]}"#, real + offset)
                        .unwrap();
                }
                "createPlatformExport" => {
                    creates += 1;
                    if creates == 1 {
                        refused_at = Some(real);
                        job.response(503, &[("Retry-After", "20")], b"", real + offset)
                            .unwrap();
                    } else {
                        let waited = real - refused_at.unwrap();
                        assert!(waited >= 20.0 - 1e-6, "sent again {waited} s after the 503");
                        assert!(waited <= 40.0, "sent again {waited} s after the 503");
                        return;
                    }
                }
                other => panic!("unexpected {other}"),
            },
            other => panic!("unexpected step {other:?}"),
        }
    }
    panic!("no second create");
}
