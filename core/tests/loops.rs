//! The retry loop and the receiver as Rust users write them, over real HTTP on 127.0.0.1 (the
//! core does no I/O; these tests bring a minimal HTTP/1.1 client and server from `std::net`):
//! no blind second create; a delivery whose processing failed is processed on redelivery,
//! exactly once, and a redelivery hours later is still a duplicate.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use royaltykit::dedup::{self, ClaimState, DedupWindow};
use royaltykit::request::{build_request, RequestParams};
use royaltykit::retry::{
    decide_retry, BackoffPolicy, Outcome, Reconcile, RetryAction, RetryLimits, RetryState,
    TransportFailure,
};
use royaltykit::{catalog, token::BearerToken, webhook};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

const TENANT: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

struct Request {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_request(stream: &mut TcpStream) -> Request {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut buf).expect("read request");
        assert!(n > 0, "connection closed before the request ended");
        data.extend_from_slice(&buf[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8(data[..head_end].to_vec()).expect("ASCII head");
    let headers: Vec<(String, String)> = head
        .split("\r\n")
        .skip(1)
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().expect("Content-Length"));
    let mut body = data[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).expect("read body");
        body.extend_from_slice(&buf[..n]);
    }
    Request { headers, body }
}

fn respond(stream: &mut TcpStream, status: u16) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
}

/// Serves each connection on its own thread until the test ends; returns the port.
fn serve(handle: impl Fn(Request, &mut TcpStream) + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let port = listener.local_addr().unwrap().port();
    let handle = Arc::new(handle);
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handle = Arc::clone(&handle);
            thread::spawn(move || {
                let mut stream = stream;
                let request = read_request(&mut stream);
                handle(request, &mut stream);
            });
        }
    });
    port
}

/// Sends one request; `Err(())` when no response came within `timeout`.
fn send(
    port: u16,
    method: &str,
    target: &str,
    headers: &[(String, String)],
    body: &[u8],
    timeout: Duration,
) -> Result<u16, ()> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(timeout)).unwrap();
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut response = Vec::new();
    match s.read_to_end(&mut response) {
        Ok(_) => Ok(String::from_utf8_lossy(&response)[9..12].parse().unwrap()),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Err(()),
        Err(e) => panic!("read response: {e}"),
    }
}

#[derive(Default)]
struct ExportServer {
    calls: usize,
    exports: Vec<String>,
    keys: Vec<String>,
}

/// POST /api/platform/v1/exports: the first request is applied but answered after the client
/// gave up; a known Idempotency-Key is a replay.
fn export_server() -> (u16, Arc<Mutex<ExportServer>>) {
    let state = Arc::new(Mutex::new(ExportServer::default()));
    let shared = Arc::clone(&state);
    let port = serve(move |req, stream| {
        let key = req
            .headers
            .iter()
            .find(|(n, _)| n == "Idempotency-Key")
            .map(|(_, v)| v.clone());
        let first = {
            let mut s = shared.lock().unwrap();
            s.calls += 1;
            if !key.as_ref().is_some_and(|k| s.keys.contains(k)) {
                let id = format!("exp_{}", s.exports.len() + 1);
                s.exports.push(id);
                s.keys.extend(key);
            }
            s.calls == 1
        };
        if first {
            thread::sleep(Duration::from_millis(1500));
        }
        respond(stream, 201);
    });
    (port, state)
}

/// The documented retry loop for a create: send, and on failure do what `decide_retry` says.
fn create_export(port: u16, idempotency_header: Option<&str>) -> (String, Option<Reconcile>, i64) {
    let op = catalog::operation("createPlatformExport").unwrap();
    let params = RequestParams {
        body: Some(br#"{"export_class":"statements","format":"csv"}"#.to_vec()),
        token: Some(BearerToken::reports("t", TENANT)),
        tenant_id: Some(TENANT.into()),
        idempotency_header: idempotency_header.map(Into::into),
        key_random: Some([9; 16]),
        ..RequestParams::default()
    };
    let d = build_request("createPlatformExport", &params).unwrap();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let body = d.body.as_deref().unwrap_or_default();
        let timeout = Duration::from_millis(500);
        match send(
            port,
            &d.method,
            &d.path_and_query(),
            &d.headers,
            body,
            timeout,
        ) {
            Ok(status) => return (format!("created {status}"), None, attempt),
            Err(()) => {
                let state = RetryState {
                    attempt,
                    elapsed_seconds: 0.0,
                    token_refreshed: false,
                    random: 0.0,
                    idempotency_key_sent: d.idempotency_key_sent,
                };
                let outcome = Outcome::Transport(TransportFailure::Timeout);
                let decision = decide_retry(
                    op.retry_class,
                    outcome,
                    state,
                    RetryLimits::default(),
                    &BackoffPolicy::default(),
                )
                .unwrap();
                if decision.action != RetryAction::Retry {
                    return (decision.action.as_str().into(), decision.reconcile, attempt);
                }
            }
        }
    }
}

#[test]
fn a_timed_out_create_without_its_key_is_reconciled_not_sent_twice() {
    let (port, state) = export_server();
    let (action, reconcile, attempts) = create_export(port, None);
    assert_eq!(
        (action.as_str(), reconcile, attempts),
        ("reconcile", Some(Reconcile::LookupBySentData), 1)
    );
    thread::sleep(Duration::from_millis(1600));
    let s = state.lock().unwrap();
    assert_eq!((s.calls, s.exports.clone()), (1, vec!["exp_1".to_owned()]));
}

#[test]
fn with_the_key_sent_the_retry_is_safe_and_one_export_exists() {
    let (port, state) = export_server();
    let outcome = create_export(port, Some("Idempotency-Key"));
    assert_eq!(outcome, ("created 201".to_owned(), None, 2));
    thread::sleep(Duration::from_millis(1600));
    let s = state.lock().unwrap();
    assert_eq!((s.calls, s.exports.clone()), (2, vec!["exp_1".to_owned()]));
}

struct World {
    clock: i64,
    db_up: bool,
    stored: Vec<String>,
    seen: DedupWindow,
}

#[test]
fn a_receiver_processes_a_failed_delivery_once_and_a_late_redelivery_is_a_duplicate() {
    const SECRET: &str = "whsec_loop";
    let world = Arc::new(Mutex::new(World {
        clock: 1_795_320_000, // injected clock (Unix seconds)
        db_up: false,
        stored: vec![],
        // default TTL: the whole redelivery schedule
        seen: DedupWindow::with_defaults(1000, None, None, [3; 16]).unwrap(),
    }));
    let shared = Arc::clone(&world);
    let port = serve(move |req, stream| {
        let mut w = shared.lock().unwrap();
        let now = w.clock;
        let v = match webhook::verify(
            &req.headers,
            &req.body,
            &[SECRET],
            now,
            webhook::VerifyOptions::default(),
        ) {
            Ok(v) => v,
            Err(e) => return respond(stream, royaltykit::RoyaltyKitError::from(e).http_status()),
        };
        let key = dedup::delivery_key("org-1", &v.delivery_id).unwrap();
        match w.seen.claim(&key, now).unwrap() {
            ClaimState::New => {}
            ClaimState::Done => return respond(stream, 200),
            ClaimState::InProgress => return respond(stream, 503),
        }
        if !w.db_up {
            w.seen.release(&key, now).unwrap();
            return respond(stream, 500);
        }
        w.stored.push(v.delivery_id);
        w.seen.commit(&key, now).unwrap();
        respond(stream, 200);
    });
    let body = br#"{"event":"ddex.delivery.failed","resource":{"type":"ddex_message","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}"#;
    let deliver = |clock: i64| {
        let signed = webhook::sign(&[SECRET], body, clock, "dlv_1").unwrap();
        let headers: Vec<(String, String)> = signed
            .pairs()
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        send(
            port,
            "POST",
            "/webhooks",
            &headers,
            body,
            Duration::from_secs(10),
        )
        .unwrap()
    };
    let clock = world.lock().unwrap().clock;
    assert_eq!(deliver(clock), 500, "DB down: released");
    {
        let mut w = world.lock().unwrap();
        w.db_up = true;
        w.clock += 30; // the service's first redelivery delay
    }
    assert_eq!(deliver(clock + 30), 200);
    world.lock().unwrap().clock += 6 * 3600; // a late redelivery, re-signed at its own time
    assert_eq!(deliver(clock + 30 + 6 * 3600), 200);
    assert_eq!(
        world.lock().unwrap().stored,
        ["dlv_1"],
        "exactly one effect"
    );
}
