//! The events a call reports (`Call::take_events`): one per thing that happened, in order, with
//! the retry rule and its wait, and never a token or a credential.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use royaltykit::machine::{Call, CallOptions, MachineEvent, Session, Step};
use royaltykit::request::RequestParams;
use royaltykit::retry::TransportFailure;
use royaltykit::token;

const TENANT: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
const CLIENT_SECRET: &str = "cs_EVENTS_CLIENT_SECRET";
const TOKEN: &str = "tok_EVENTS_TOKEN";

fn kinds(events: &[MachineEvent]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

#[test]
fn a_call_reports_each_send_response_retry_and_its_end() {
    let mut session = Session::new(None);
    let params = RequestParams {
        tenant_id: Some(TENANT.into()),
        ..RequestParams::default()
    };
    let options = CallOptions {
        seed: 7,
        ..CallOptions::default()
    };
    let mut call = Call::new("listPlatformExports", params, options).unwrap();
    let mut now = 1_000.0;
    let mut events = Vec::new();
    // the token first: the exchange is a call of its own, with its own events
    let step = call.next_in(now, &mut session).unwrap();
    assert!(matches!(step, Step::RefreshToken { .. }), "{step:?}");
    let request = token::build_token_request("cli", CLIENT_SECRET, TENANT, &[] as &[&str]).unwrap();
    let mut exchange = Call::exchange(request, options).unwrap();
    assert!(matches!(
        exchange.next(now, None).unwrap(),
        Step::Send { .. }
    ));
    exchange
        .transport_failure(TransportFailure::ConnectFailed, now)
        .unwrap();
    let wait = match exchange.next(now, None).unwrap() {
        Step::Wait { seconds } => seconds,
        other => panic!("{other:?}"),
    };
    now += wait;
    assert!(matches!(
        exchange.next(now, None).unwrap(),
        Step::Send { .. }
    ));
    let body = format!(r#"{{"access_token":"{TOKEN}","token_type":"Bearer","expires_in":3600}}"#);
    exchange
        .response(200, &[("Cache-Control", "no-store")], body.as_bytes(), now)
        .unwrap();
    assert!(matches!(
        exchange.next(now, None).unwrap(),
        Step::Done { .. }
    ));
    let x = exchange.take_events();
    assert_eq!(
        kinds(&x),
        [
            "send",
            "transport_failure",
            "retry",
            "send",
            "response",
            "done"
        ]
    );
    assert_eq!(x[0].operation, "exchangePlatformClientCredential");
    assert_eq!(x[2].transport.as_deref(), Some("connect_failed"));
    assert_eq!(x[2].wait_seconds, Some(wait));
    assert!(x[2].rule.is_some() && x[2].reason.is_some());
    assert_eq!((x[3].attempt, x[4].status), (2, Some(200)));
    events.extend(x);
    let token = token::parse_token_response(
        200,
        &[("Cache-Control", "no-store")],
        body.as_bytes(),
        &[] as &[&str],
        TENANT,
        now as i64,
    )
    .unwrap()
    .unwrap();
    session.store_token(token.bearer(), None);
    // the call: a 503, a retry after its wait, then the page
    assert!(matches!(
        call.next_in(now, &mut session).unwrap(),
        Step::Send { .. }
    ));
    call.response(503, &[("Retry-After", "3")], b"", now)
        .unwrap();
    let wait = match call.next_in(now, &mut session).unwrap() {
        Step::Wait { seconds } => seconds,
        other => panic!("{other:?}"),
    };
    now += wait;
    assert!(matches!(
        call.next_in(now, &mut session).unwrap(),
        Step::Send { .. }
    ));
    call.response(
        200,
        &[("Content-Type", "application/json")],
        br#"{"data":[]}"#,
        now,
    )
    .unwrap();
    assert!(matches!(
        call.next_in(now, &mut session).unwrap(),
        Step::Done { .. }
    ));
    let c = call.take_events();
    assert_eq!(
        kinds(&c),
        [
            "refresh_token",
            "send",
            "response",
            "retry",
            "send",
            "response",
            "done"
        ]
    );
    assert_eq!(c[1].method.as_deref(), Some("GET"));
    assert_eq!(c[1].path.as_deref(), Some("/api/platform/v1/exports"));
    assert_eq!((c[2].status, c[3].status), (Some(503), Some(503)));
    assert_eq!(c[3].wait_seconds, Some(wait));
    assert!(wait >= 3.0, "the Retry-After is honoured: {wait}");
    assert!(call.take_events().is_empty(), "taken once");
    events.extend(c);
    // never a token or a credential
    let shown = format!("{events:?}");
    assert!(
        !shown.contains(TOKEN) && !shown.contains(CLIENT_SECRET),
        "{shown}"
    );
}

#[test]
fn a_deprecated_operation_is_noticed_once_per_call() {
    let params = RequestParams {
        tenant_id: Some(TENANT.into()),
        token: Some(token::BearerToken::reports(TOKEN, TENANT)),
        ..RequestParams::default()
    };
    let mut call = Call::new("listPlatformExports", params, CallOptions::default()).unwrap();
    let notices = [
        ("Deprecation", "@1798761600"),
        ("Sunset", "Wed, 01 Sep 2027 00:00:00 GMT"),
    ];
    let mut now = 1_000.0;
    assert!(matches!(call.next(now, None).unwrap(), Step::Send { .. }));
    call.response(503, &notices, b"", now).unwrap();
    let wait = match call.next(now, None).unwrap() {
        Step::Wait { seconds } => seconds,
        other => panic!("{other:?}"),
    };
    now += wait;
    assert!(matches!(call.next(now, None).unwrap(), Step::Send { .. }));
    call.response(200, &notices, br#"{"data":[]}"#, now)
        .unwrap();
    let events = call.take_events();
    let notice: Vec<_> = events.iter().filter(|e| e.kind == "notice").collect();
    assert_eq!(notice.len(), 1, "{events:?}");
    let reason = notice[0].reason.as_deref().unwrap();
    assert!(
        reason
            .starts_with("deprecated since Fri, 01 Jan 2027 00:00:00 GMT; sunset Wed, 01 Sep 2027"),
        "{reason}"
    );
    // the lifecycle policy: 180 days are kept, but no successor is named
    assert_eq!(notice[0].rule.as_deref(), Some("no_replacement"));
    assert_eq!(kinds(&events)[..3], ["send", "response", "notice"]);
}

#[test]
fn on_a_session_a_deprecated_operation_is_noticed_once_not_on_every_call() {
    let mut session = Session::new(None);
    session.store_token(token::BearerToken::reports(TOKEN, TENANT), None);
    let notices = [("Deprecation", "@1798761600")];
    let mut noticed = Vec::new();
    for (operation, path) in [
        ("listPlatformExports", None),
        ("listPlatformExports", None),
        (
            "getPlatformExport",
            Some(("export", "7c9e6679-7425-40de-944b-e07072fc6b14")),
        ),
        ("listPlatformExports", None),
    ] {
        let mut params = RequestParams {
            tenant_id: Some(TENANT.into()),
            ..RequestParams::default()
        };
        if let Some((name, value)) = path {
            params.path = vec![(name.into(), value.into())];
        }
        let mut call = Call::new(operation, params, CallOptions::default()).unwrap();
        assert!(matches!(
            call.next_in(1_000.0, &mut session).unwrap(),
            Step::Send { .. }
        ));
        call.response(200, &notices, b"{}", 1_000.0).unwrap();
        assert!(matches!(
            call.next_in(1_000.0, &mut session).unwrap(),
            Step::Done { .. }
        ));
        noticed.extend(
            call.take_events()
                .into_iter()
                .filter(|e| e.kind == "notice")
                .map(|e| e.operation),
        );
    }
    // once for each operation, on the first call that met it
    assert_eq!(noticed, ["listPlatformExports", "getPlatformExport"]);
}

/// A call of `operation` with a token (on the test's export, for a download).
fn with_token(operation: &str) -> Call {
    let params = RequestParams {
        tenant_id: Some(TENANT.into()),
        token: Some(token::BearerToken::reports(TOKEN, TENANT)),
        path: if operation == "downloadPlatformExport" {
            vec![(
                "export".into(),
                "7c9e6679-7425-40de-944b-e07072fc6b14".into(),
            )]
        } else {
            Vec::new()
        },
        ..RequestParams::default()
    };
    let options = CallOptions {
        seed: 5,
        ..CallOptions::default()
    };
    Call::new(operation, params, options).unwrap()
}

fn download() -> Call {
    with_token("downloadPlatformExport")
}

#[test]
fn each_event_has_its_log_level_and_one_line_the_same_in_every_language() {
    let mut call = with_token("listPlatformExports");
    let mut now = 1_000.0;
    assert!(matches!(call.next(now, None).unwrap(), Step::Send { .. }));
    call.response(503, &[("Retry-After", "7")], b"", now)
        .unwrap();
    let Step::Wait { seconds } = call.next(now, None).unwrap() else {
        panic!("a 503 is retried")
    };
    now += seconds;
    assert!(matches!(call.next(now, None).unwrap(), Step::Send { .. }));
    call.response(200, &[("Deprecation", "@1798761600")], b"{}", now)
        .unwrap();
    assert!(matches!(call.next(now, None).unwrap(), Step::Done { .. }));
    let lines: Vec<(String, String)> = call
        .take_events()
        .into_iter()
        .map(|e| (e.level, e.message))
        .collect();
    let want = [
        ("debug", "send listPlatformExports #1: GET /api/platform/v1/exports"),
        ("debug", "response listPlatformExports #1: 503"),
        ("info", "retry listPlatformExports #1: 503 wait 7 s (server_error_retry)"),
        ("debug", "send listPlatformExports #2: GET /api/platform/v1/exports"),
        ("debug", "response listPlatformExports #2: 200"),
        (
            "warning",
            "notice listPlatformExports #2: (missing_sunset,no_replacement) deprecated since Fri, 01 Jan 2027 00:00:00 GMT",
        ),
        ("debug", "done listPlatformExports #2: 200"),
    ];
    let got: Vec<(&str, &str)> = lines
        .iter()
        .map(|(l, m)| (l.as_str(), m.as_str()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_download_reports_its_progress_at_each_tenth_and_when_whole_not_per_piece() {
    let mut call = download();
    // outside a request in flight: nothing
    call.progress(10, Some(100));
    assert!(matches!(
        call.next(1_000.0, None).unwrap(),
        Step::Send { .. }
    ));
    call.take_events();
    // 1,000 pieces of 10 bytes: one event per tenth (100, 200, … 1,000 bytes... of 10,000)
    for piece in 1..=1_000u64 {
        call.progress(piece * 10, Some(10_000));
    }
    call.progress(10_000, Some(10_000)); // reported again: still one end
    let progress: Vec<(u64, Option<u64>, String)> = call
        .take_events()
        .into_iter()
        .filter(|e| e.kind == "progress")
        .map(|e| (e.received_bytes.unwrap(), e.total_bytes, e.message))
        .collect();
    let received: Vec<u64> = progress.iter().map(|p| p.0).collect();
    assert_eq!(
        received,
        [1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000, 10_000]
    );
    assert!(progress.iter().all(|p| p.1 == Some(10_000)));
    assert_eq!(
        progress[9].2,
        "progress downloadPlatformExport #1: 10000 of 10000 bytes"
    );
    // a body of unknown length: each MiB
    let mut unknown = download();
    assert!(matches!(
        unknown.next(1_000.0, None).unwrap(),
        Step::Send { .. }
    ));
    for piece in 1..=40u64 {
        unknown.progress(piece * 65_536, None); // 2.5 MiB in 64 KiB pieces
    }
    let got: Vec<u64> = unknown
        .take_events()
        .into_iter()
        .filter(|e| e.kind == "progress")
        .map(|e| e.received_bytes.unwrap())
        .collect();
    assert_eq!(got, [1 << 20, 2 << 20]);
}

/// A session holding a token, and a two-attempt list call of `seed` on it.
fn session_and_call(seed: u64) -> (Session, Call) {
    let mut session = Session::new(None);
    session.store_token(token::BearerToken::reports(TOKEN, TENANT), None);
    let params = RequestParams {
        tenant_id: Some(TENANT.into()),
        ..RequestParams::default()
    };
    let options = CallOptions {
        seed,
        max_attempts: Some(2),
        ..CallOptions::default()
    };
    let call = Call::new("listPlatformExports", params, options).unwrap();
    (session, call)
}

/// A call with a 503, its retry and a final 503 after the attempts run out: every kind of level.
fn a_failing_call() -> Call {
    let (mut session, mut call) = session_and_call(7);
    let mut now = 1_000.0;
    for _ in 0..10 {
        match call.next_in(now, &mut session).unwrap() {
            Step::Send { .. } => call
                .response(503, &[("Retry-After", "1")], b"", now)
                .unwrap(),
            Step::Wait { seconds } => now += seconds,
            Step::Fail { .. } => return call,
            other => panic!("{other:?}"),
        }
    }
    panic!("the call did not end");
}

#[test]
fn events_below_the_hosts_level_are_dropped_and_the_rest_kept_in_order() {
    use royaltykit::machine::EventLevel;
    let all = a_failing_call().take_events();
    let levels: Vec<&str> = all.iter().map(|e| e.level.as_str()).collect();
    // the call's events carry every level, so each filter below has something to drop
    for level in ["debug", "info", "warning"] {
        assert!(levels.contains(&level), "{levels:?}");
    }
    for (min, kept) in [
        (EventLevel::Debug, vec!["debug", "info", "warning"]),
        (EventLevel::Info, vec!["info", "warning"]),
        (EventLevel::Warning, vec!["warning"]),
    ] {
        let expected: Vec<&MachineEvent> = all
            .iter()
            .filter(|e| kept.contains(&e.level.as_str()))
            .collect();
        let mut call = a_failing_call();
        let got = call.take_events_from(Some(min));
        assert_eq!(got.iter().collect::<Vec<_>>(), expected, "{min}");
        assert!(
            call.take_events().is_empty(),
            "{min}: the dropped ones are gone too"
        );
    }
    assert_eq!(EventLevel::parse("warning").unwrap(), EventLevel::Warning);
    assert_eq!(EventLevel::parse("error").unwrap_err().name, "min_level");
}

#[test]
fn advance_in_is_next_in_then_the_events_from_its_level() {
    use royaltykit::machine::EventLevel;
    let twin = || session_and_call(11);
    let ((mut s1, mut one), (mut s2, mut other)) = (twin(), twin());
    let mut now = 1_000.0;
    for min in [
        None,
        Some(EventLevel::Info),
        None,
        Some(EventLevel::Warning),
    ] {
        let step = one.next_in(now, &mut s1).unwrap();
        let expected = (format!("{step:?}"), one.take_events_from(min));
        let (got, events) = other.advance_in(now, &mut s2, min).unwrap();
        assert_eq!((format!("{got:?}"), events), expected, "{min:?}");
        match step {
            Step::Send { .. } => {
                one.response(503, &[("Retry-After", "1")], b"", now)
                    .unwrap();
                other
                    .response(503, &[("Retry-After", "1")], b"", now)
                    .unwrap();
            }
            Step::Wait { seconds } => now += seconds,
            _ => {}
        }
    }
}
