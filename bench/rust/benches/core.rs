//! `make bench`, Rust: `royaltykit::webhook::verify` (and the reusable `WebhookVerifier`)
//! against the raw `hmac` + `sha2` floor over the same bytes, per delivery of
//! `bench/cases.py`; then `DedupWindow`, `decide_retry` and `parse_api_error` per call.
//! Criterion writes its samples under `target/criterion`; `bench/report.py` reads them.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use hmac::{KeyInit, Mac};
use royaltykit::webhook::{self, VerifyOptions, WebhookVerifier};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Counts live heap bytes so that `DedupWindow`'s bytes per entry are measured, not estimated.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
// SAFETY: delegates to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.realloc(p, l, new)
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

struct Case {
    name: String,
    body: Vec<u8>,
    secret: String,
    headers: Vec<(String, String)>,
    timestamp: i64,
}

fn cases() -> Vec<Case> {
    let path = std::env::var("BENCH_CASES").expect("BENCH_CASES names the file of bench/cases.py");
    let text = std::fs::read_to_string(path).expect("read BENCH_CASES");
    let v: serde_json::Value = serde_json::from_str(&text).expect("cases JSON");
    v["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().expect("name").to_owned(),
            body: c["body"].as_str().expect("body").as_bytes().to_vec(),
            secret: c["royaltykit"]["secret"]
                .as_str()
                .expect("secret")
                .to_owned(),
            headers: c["royaltykit"]["headers"]
                .as_object()
                .expect("headers")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().expect("value").to_owned()))
                .collect(),
            timestamp: c["timestamp"].as_i64().expect("timestamp"),
        })
        .collect()
}

fn verify(c: &mut Criterion) {
    for case in cases() {
        let mut g = c.benchmark_group(format!("verify/{}", case.name));
        g.throughput(Throughput::Bytes(case.body.len() as u64));
        let secrets = [case.secret.as_str()];
        let ts = case.timestamp.to_string();
        let floor_key =
            hmac::Hmac::<sha2::Sha256>::new_from_slice(case.secret.as_bytes()).expect("key");
        let verifier = WebhookVerifier::new(&secrets, VerifyOptions::default()).expect("verifier");
        // The library must accept the delivery, or the timing is meaningless.
        verifier
            .verify(case.headers.as_slice(), &case.body, case.timestamp)
            .expect("genuine delivery");
        // Contenders back to back for each body, so they share the machine's state.
        g.bench_function("floor: raw hmac+sha2", |b| {
            b.iter(|| {
                let mut m = floor_key.clone();
                m.update(black_box(ts.as_bytes()));
                m.update(b".");
                m.update(black_box(&case.body));
                black_box(m.finalize().into_bytes())
            })
        });
        g.bench_function("royaltykit WebhookVerifier::verify", |b| {
            b.iter(|| {
                verifier
                    .verify(
                        black_box(case.headers.as_slice()),
                        black_box(&case.body),
                        case.timestamp,
                    )
                    .expect("genuine")
            })
        });
        g.bench_function("royaltykit webhook::verify", |b| {
            b.iter(|| {
                webhook::verify(
                    black_box(case.headers.as_slice()),
                    black_box(&case.body),
                    &secrets,
                    case.timestamp,
                    VerifyOptions::default(),
                )
                .expect("genuine")
            })
        });
        g.finish();
    }
}

fn dedup(c: &mut Criterion) {
    use royaltykit::dedup::DedupWindow;
    const CAP: usize = 100_000;
    let keys: Vec<String> = (0..CAP * 2)
        .map(|i| format!("dlv1:org_42:wh_del_{i:012}"))
        .collect();
    // Bytes per entry: live heap of a full window (keys included) over its capacity.
    let before = LIVE.load(Ordering::Relaxed);
    let mut w = DedupWindow::new(CAP as i64, 3600, [7; 16]).expect("window");
    for k in &keys[..CAP] {
        w.check_and_insert(k, 1_000).expect("insert");
    }
    let bytes = LIVE.load(Ordering::Relaxed) - before;
    for k in &keys[CAP..] {
        w.check_and_insert(k, 1_000).expect("insert");
    }
    let after_overflow = LIVE.load(Ordering::Relaxed) - before;
    let key_len = keys[0].len();
    let out = std::env::var("BENCH_OUT").unwrap_or_else(|_| "dedup-memory.json".into());
    std::fs::write(
        out,
        format!(
            "{{\"capacity\":{CAP},\"key_bytes\":{key_len},\"live_bytes_full\":{bytes},\"live_bytes_after_2x_capacity\":{after_overflow}}}"
        ),
    )
    .expect("write dedup memory");
    drop(w);

    let mut g = c.benchmark_group("dedup");
    g.throughput(Throughput::Elements(1));
    let mut w = DedupWindow::new(CAP as i64, 3600, [7; 16]).expect("window");
    let mut i = 0usize;
    g.bench_function(
        "DedupWindow::check_and_insert (new keys, full window)",
        |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                black_box(w.check_and_insert(&keys[i], 1_000).expect("insert"))
            })
        },
    );
    let mut w = DedupWindow::new(CAP as i64, 3600, [7; 16]).expect("window");
    for k in &keys[..1000] {
        w.check_and_insert(k, 1_000).expect("insert");
    }
    let mut j = 0usize;
    g.bench_function("DedupWindow::check_and_insert (duplicates)", |b| {
        b.iter(|| {
            j = (j + 1) % 1000;
            black_box(w.check_and_insert(&keys[j], 1_000).expect("insert"))
        })
    });
    g.finish();
}

fn calls(c: &mut Criterion) {
    use royaltykit::api_error::parse_api_error;
    use royaltykit::catalog::Api;
    use royaltykit::retry::{
        decide_retry, BackoffPolicy, Outcome, RetryClass, RetryLimits, RetryState,
    };
    let mut g = c.benchmark_group("calls");
    let policy = BackoffPolicy::default();
    let headers = [("Retry-After", "7")];
    g.bench_function("decide_retry (503 with Retry-After, read)", |b| {
        b.iter(|| {
            let outcome = Outcome::response(503, black_box(&headers[..]), 1_000).expect("outcome");
            decide_retry(
                RetryClass::parse("read").expect("class"),
                outcome,
                RetryState {
                    attempt: 1,
                    elapsed_seconds: 0.5,
                    token_refreshed: false,
                    random: 0.25,
                    idempotency_key_sent: false,
                },
                RetryLimits::default(),
                &policy,
            )
            .expect("decision")
        })
    });
    let body = br#"{"error":{"code":"validation_failed","message":"The request is invalid.","details":[{"field":"name","issue":"required"}]},"request_id":"req_123"}"#;
    let eh = [
        ("Content-Type", "application/json"),
        ("X-Request-Id", "req_123"),
    ];
    g.bench_function("parse_api_error (422 JSON body)", |b| {
        b.iter(|| {
            parse_api_error(
                Api::Enterprise,
                422,
                black_box(&eh[..]),
                black_box(body),
                None,
                1_000,
            )
            .expect("parsed")
        })
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(60)
        .without_plots()
}

criterion_group! { name = benches; config = config(); targets = verify, dedup, calls }
criterion_main!(benches);
