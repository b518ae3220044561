//! The `export` run: one reporting export job on a [`Session`], against a model of the
//! reporting service.

use crate::rng::Rng;
use crate::transcript::{bearer_of, check_request, job_view, report, Outcome, Recorder};
use crate::Violation;
use royaltykit::machine::{Call, CallOptions, ExportJob, ExportJobOptions, Session, Step};
use royaltykit::request::RequestDescriptor;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const TENANT: &str = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e";
const T0: f64 = 1_763_900_000.0;
/// The client's timeout: a request without an answer is reported this long after it was sent.
const TIMEOUT: f64 = 30.0;

struct Export {
    id: String,
    body: Map<String, Value>,
    visible_at: f64,
    states: Vec<&'static str>,
    reads: usize,
    /// Created by the job's creates (not another process).
    mine: bool,
}

impl Export {
    fn state(&self) -> &'static str {
        self.states[self.reads.min(self.states.len()).saturating_sub(1)]
    }
}

/// The reporting service as the job meets it.
pub struct Reports {
    rng: Rng,
    /// The service's clock minus the host's, in seconds: its `Date` and `Retry-After` dates are
    /// on its own clock (0 in most runs; up to a minute and a half either way in the others).
    skew: f64,
    exports: Vec<Export>,
    newest_first: bool,
    echo: bool,
    /// How a page says there is more: 0 `next_cursor`, 1 `meta.next_cursor`, 2 `links.next`,
    /// 3 `has_more` with `next_cursor`, 4 `pagination.nextCursor`.
    cursor_style: u8,
    /// The array member of a page: 0 `data`, 1 `items`, 2 the page itself.
    shape: u8,
    /// The most items the service puts on a page, whatever `limit` asks.
    page_cap: usize,
    /// The longest an export takes to show up in the list.
    lag: f64,
    token_life: i64,
    tokens: BTreeMap<String, (f64, bool)>,
    issued: u64,
    /// When each operation may be sent again (the `Retry-After` it was given).
    not_before: BTreeMap<String, f64>,
    keys: BTreeMap<String, String>,
    pub fault_p: f64,
    pub faults_injected: u64,
    /// The first create is applied and its answer lost (the case reconciling is for).
    pub lose_first_create: bool,
    artifact: Vec<u8>,
    foreign_same: bool,
    /// A full page was served in a form that cannot say it is the last (a bare array of `limit`
    /// items): the job may rightly stop with Reconcile.
    pub undecidable: bool,
    pub violations: Vec<Violation>,
}

/// A `Date` header: the moment on the service's clock, to the second (truncated, as servers do).
fn date_header(at: f64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(at.max(0.0).floor() as u64);
    httpdate::fmt_http_date(t)
}

fn http_date(at: f64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(at.max(0.0).ceil() as u64);
    httpdate::fmt_http_date(t)
}

impl Reports {
    pub fn new(rng: &mut Rng, body: &Map<String, Value>) -> Self {
        let mut r = Self {
            rng: Rng::new(rng.u64()),
            skew: 0.0,
            exports: Vec::new(),
            newest_first: rng.chance(0.5),
            echo: rng.chance(0.5),
            cursor_style: rng.range(0, 5) as u8,
            shape: rng.range(0, 3) as u8,
            page_cap: *rng.pick(&[100, 100, 40, 7]),
            lag: *rng.pick(&[0.0, 0.0, 0.8, 3.0, 6.5]),
            token_life: *rng.pick(&[3600, 3600, 600, 60, 5, 1]),
            tokens: BTreeMap::new(),
            issued: 0,
            not_before: BTreeMap::new(),
            keys: BTreeMap::new(),
            fault_p: *rng.pick(&[0.0, 0.0, 0.05, 0.15, 0.3]),
            faults_injected: 0,
            lose_first_create: rng.chance(0.4),
            artifact: format!(
                "statement_id,amount\n{}",
                (0..rng.range(1, 50))
                    .map(|i| format!("{i},{i}.5\n"))
                    .collect::<String>()
            )
            .into_bytes(),
            foreign_same: false,
            undecidable: false,
            violations: Vec::new(),
        };
        // Exports that exist before the job: some with the job's very body, some more than a page.
        let before = *rng.pick(&[0, 3, 99, 100, 101, 230]);
        for _ in 0..before {
            let mut b = body.clone();
            if rng.chance(0.4) {
                b.insert("format".into(), json!(*rng.pick(&["pdf", "xlsx"])));
            }
            r.add(b, T0 - 1000.0, false);
        }
        if r.rng.chance(0.4) {
            r.skew = r.rng.between(-90.0, 90.0);
        }
        r
    }

    fn add(&mut self, body: Map<String, Value>, at: f64, mine: bool) -> String {
        let id = self.rng.uuid();
        let lag = self.rng.between(0.0, self.lag);
        let mut states = vec!["queued"];
        for _ in 0..self.rng.range(0, 4) {
            states.push(*self.rng.pick(&["queued", "processing", "rendering"]));
        }
        states.push("ready");
        self.exports.push(Export {
            id: id.clone(),
            body,
            visible_at: at + lag,
            states,
            reads: 0,
            mine,
        });
        id
    }

    /// Another process creates an export meanwhile: with the job's body when `same`, else with
    /// another value of the body's first member. The job can tell it from its own only by that
    /// member (repeated in the list, or a list filter); when it cannot, an ambiguous list is its
    /// right answer, and `foreign_same` says so.
    pub fn foreign(&mut self, body: &Map<String, Value>, at: f64, same: bool) {
        let mut b = body.clone();
        let first = b.keys().next().cloned().unwrap_or_default();
        let filtered = first == "export_class" || first == "format";
        if same || !(self.echo || filtered) {
            self.foreign_same = true;
        }
        if !same {
            b.insert(first, json!("other"));
        }
        self.add(b, at, false);
    }

    pub fn mine(&self) -> Vec<&str> {
        self.exports
            .iter()
            .filter(|e| e.mine)
            .map(|e| e.id.as_str())
            .collect()
    }

    /// A fault for this request, when the run injects one.
    fn fault(&mut self, op: &str) -> Option<&'static str> {
        if op == "createPlatformExport" && self.lose_first_create {
            self.lose_first_create = false;
            return Some("drop_after");
        }
        if !self.rng.chance(self.fault_p) {
            return None;
        }
        self.faults_injected += 1;
        let common: &[&'static str] = &[
            "503",
            "429",
            "drop_before",
            "drop_after",
            "401",
            "redirect",
            "500_after",
        ];
        let download: &[&'static str] = &["206", "truncate", "503", "429", "drop_after"];
        Some(*self.rng.pick(if op == "downloadPlatformExport" {
            download
        } else {
            common
        }))
    }

    fn retry_after(&mut self, op: &str, at: f64) -> Vec<(String, String)> {
        let form = self.rng.range(0, 5);
        let secs = self.rng.range(1, 25) as f64;
        // The service's clock reads `at + skew`: a date is on it, and so is the response's Date.
        let theirs = at + self.skew;
        let value = match form {
            0 | 1 => secs.to_string(),
            2 => http_date(theirs + secs),
            3 => "soon".to_owned(),
            _ => {
                return Vec::new();
            }
        };
        let until = match form {
            0 | 1 => at + secs,
            2 => (theirs + secs).ceil() - self.skew,
            _ => at,
        };
        self.not_before.insert(op.to_owned(), until);
        vec![
            ("Date".to_owned(), date_header(theirs)),
            ("Retry-After".to_owned(), value),
        ]
    }

    fn bearer_ok(&mut self, r: &RequestDescriptor, at: f64) -> bool {
        let token = bearer_of(r);
        matches!(self.tokens.get(&token), Some((until, false)) if *until > at)
    }

    fn revoke(&mut self, r: &RequestDescriptor) {
        for (_, v) in r.headers.iter().filter(|(n, _)| n == "Authorization") {
            if let Some(t) = self.tokens.get_mut(v.trim_start_matches("Bearer ")) {
                t.1 = true;
            }
        }
    }

    /// Handles a request that arrives at `at`: the outcome, and whether it was applied.
    pub fn handle(&mut self, r: &RequestDescriptor, at: f64) -> Outcome {
        let op = r.operation_id.clone();
        if let Some(until) = self.not_before.remove(&op) {
            if at < until - 1e-6 {
                self.violations.push(Violation::new(
                    "Retry-After is never shortened",
                    format!(
                        "{op} sent {:.3} s before the Retry-After allowed",
                        until - at
                    ),
                ));
            }
        }
        let fault = self.fault(&op);
        if op == "exchangePlatformClientCredential" {
            return match fault {
                Some("503") => Outcome::status(503, Vec::new()),
                Some("429") => {
                    let h = self.retry_after(&op, at);
                    Outcome::status(429, h)
                }
                Some("drop_before" | "drop_after") => Outcome::Transport("connection_lost"),
                _ => {
                    self.issued += 1;
                    let token = format!("rt_{}", self.issued);
                    self.tokens
                        .insert(token.clone(), (at + self.token_life as f64, false));
                    Outcome::Response {
                        status: 200,
                        headers: vec![("Cache-Control".into(), "no-store".into())],
                        body: json!({"access_token": token, "token_type": "Bearer", "expires_in": self.token_life,
                                     "scope": "exports:read exports:write"})
                        .to_string()
                        .into_bytes(),
                    }
                }
            };
        }
        if !self.bearer_ok(r, at) {
            return Outcome::status(401, Vec::new());
        }
        match fault {
            Some("503") => {
                let h = if self.rng.chance(0.5) {
                    self.retry_after(&op, at)
                } else {
                    Vec::new()
                };
                return Outcome::status(503, h);
            }
            Some("429") => {
                let h = self.retry_after(&op, at);
                return Outcome::status(429, h);
            }
            Some("drop_before") => {
                return Outcome::Transport(if self.rng.chance(0.5) {
                    "connect_failed"
                } else {
                    "connection_lost"
                })
            }
            Some("401") => {
                self.revoke(r);
                return Outcome::status(401, Vec::new());
            }
            Some("redirect") => {
                return Outcome::status(
                    307,
                    vec![("Location".into(), "https://evil.example/steal".into())],
                )
            }
            _ => {}
        }
        let applied = self.apply(r, at, fault);
        match fault {
            Some("drop_after") => Outcome::Transport(if self.rng.chance(0.5) {
                "timeout"
            } else {
                "connection_lost"
            }),
            Some("500_after") => Outcome::status(500, Vec::new()),
            _ => applied,
        }
    }

    fn page(&mut self, query: &BTreeMap<String, String>, at: f64) -> Outcome {
        let mut listed: Vec<&Export> = self
            .exports
            .iter()
            .filter(|e| e.visible_at <= at)
            .filter(|e| {
                ["export_class", "format"].iter().all(|f| {
                    query
                        .get(*f)
                        .is_none_or(|v| e.body.get(*f) == Some(&Value::String(v.clone())))
                })
            })
            .collect();
        if self.newest_first {
            listed.reverse();
        }
        let start = match query.get("cursor") {
            None => 0,
            Some(c) => match listed.iter().position(|e| e.id == *c) {
                Some(p) => p + 1,
                None => return Outcome::json(400, &json!({"message": "unknown cursor"})),
            },
        };
        let limit: usize = query
            .get("limit")
            .and_then(|l| l.parse().ok())
            .unwrap_or(50);
        let size = limit.min(self.page_cap);
        let items: Vec<Value> = listed
            .iter()
            .skip(start)
            .take(size)
            .map(|e| {
                let mut v = if self.echo {
                    e.body.clone()
                } else {
                    Map::new()
                };
                v.insert("id".into(), json!(e.id));
                v.insert("status".into(), json!(e.state()));
                Value::Object(v)
            })
            .collect();
        let more = start + items.len() < listed.len();
        let next = more.then(|| listed[start + items.len() - 1].id.clone());
        if self.shape == 2 && !more && items.len() == limit {
            self.undecidable = true;
        }
        let array = Value::Array(items);
        let page = match (self.shape, self.cursor_style) {
            (2, _) if !more => array,
            (_, style) => {
                let key = if self.shape == 1 { "items" } else { "data" };
                match style {
                    0 | 2 if !more => json!({key: array}),
                    0 => json!({key: array, "next_cursor": next}),
                    1 => json!({key: array, "meta": {"next_cursor": next}}),
                    2 => {
                        json!({key: array, "links": {"next": format!("/api/platform/v1/exports?limit={limit}&cursor={}", next.unwrap_or_default())}})
                    }
                    3 => json!({key: array, "has_more": more, "next_cursor": next}),
                    _ => json!({key: array, "pagination": {"nextCursor": next}}),
                }
            }
        };
        Outcome::json(200, &page)
    }

    fn apply(&mut self, r: &RequestDescriptor, at: f64, fault: Option<&str>) -> Outcome {
        let query: BTreeMap<String, String> = r
            .query
            .split('&')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| {
                (
                    k.to_owned(),
                    percent_encoding::percent_decode_str(v)
                        .decode_utf8_lossy()
                        .into_owned(),
                )
            })
            .collect();
        let id = r.path.split('/').nth(5).unwrap_or("").to_owned();
        match r.operation_id.as_str() {
            "listPlatformExports" => self.page(&query, at),
            "createPlatformExport" => {
                let key = r
                    .headers
                    .iter()
                    .find(|(n, _)| n == "Idempotency-Key")
                    .map(|(_, v)| v.clone());
                if let Some(existing) = key.as_ref().and_then(|k| self.keys.get(k)) {
                    let e = self.exports.iter().find(|e| e.id == *existing).unwrap();
                    return Outcome::json(201, &json!({"id": e.id, "status": e.state()}));
                }
                let body: Map<String, Value> =
                    serde_json::from_slice(r.body.as_deref().unwrap_or(b"{}")).unwrap();
                let id = self.add(body, at, true);
                if let Some(k) = key {
                    self.keys.insert(k, id.clone());
                }
                Outcome::json(201, &json!({"id": id, "status": "queued"}))
            }
            "getPlatformExport" => match self.exports.iter_mut().find(|e| e.id == id) {
                None => Outcome::json(404, &json!({"message": "Resource not found"})),
                Some(e) => {
                    e.reads += 1;
                    let mut v = e.body.clone();
                    v.insert("id".into(), json!(e.id));
                    v.insert("status".into(), json!(e.state()));
                    Outcome::json(200, &Value::Object(v))
                }
            },
            "downloadPlatformExport" => match self.exports.iter().find(|e| e.id == id) {
                None => Outcome::json(404, &json!({"message": "Resource not found"})),
                Some(e) if e.state() != "ready" => {
                    Outcome::json(409, &json!({"message": "Export is not ready"}))
                }
                Some(_) => {
                    let whole = self.artifact.clone();
                    let len = whole.len().to_string();
                    match fault {
                        Some("206") => Outcome::Response {
                            status: 206,
                            headers: vec![("Content-Range".into(), format!("bytes 0-4/{len}"))],
                            body: whole[..5.min(whole.len())].to_vec(),
                        },
                        Some("truncate") => Outcome::Response {
                            status: 200,
                            headers: vec![("Content-Length".into(), len)],
                            body: whole[..whole.len() / 2].to_vec(),
                        },
                        _ => Outcome::Response {
                            status: 200,
                            headers: vec![
                                ("Content-Type".into(), "text/csv".into()),
                                ("Content-Length".into(), len),
                            ],
                            body: whole,
                        },
                    }
                }
            },
            other => Outcome::json(404, &json!({"message": format!("{other} is not modelled")})),
        }
    }
}

/// Drives a token exchange to its end for the host: the token and when to refresh it, or why
/// not. Returns the time it ended.
pub fn exchange<F: FnMut(&RequestDescriptor, f64) -> (Outcome, f64)>(
    request: RequestDescriptor,
    seed: u64,
    mut now: f64,
    mut send: F,
    mut parse: impl FnMut(
        u16,
        &[(String, String)],
        &[u8],
        f64,
    ) -> Result<(royaltykit::token::BearerToken, Option<f64>), String>,
) -> Result<
    (
        f64,
        Result<(royaltykit::token::BearerToken, Option<f64>), String>,
    ),
    Violation,
> {
    let mut call = Call::exchange(
        request,
        CallOptions {
            seed,
            ..CallOptions::default()
        },
    )
    .unwrap();
    for _ in 0..100 {
        match call.next(now, None).unwrap() {
            Step::Send { request } => {
                check_request(&request)?;
                let (outcome, at) = send(&request, now);
                now = at;
                report(&mut call, &outcome, now);
            }
            Step::Wait { seconds } => now += seconds,
            Step::Done { response, .. } => {
                return Ok((
                    now,
                    parse(response.status, &response.headers, &response.body, now),
                ))
            }
            Step::Fail { failure, .. } => return Ok((now, Err(failure.reason))),
            other => {
                return Err(Violation::new(
                    "a token exchange ends",
                    format!("{other:?}"),
                ))
            }
        }
    }
    Err(Violation::new(
        "every run ends within its budget",
        "a token exchange did not end in 100 steps",
    ))
}

/// When a send's outcome reaches the host: after the round trip, or the client's timeout.
pub fn arrival(rng: &mut Rng, now: f64, outcome: &Outcome) -> (f64, f64) {
    let there = now + rng.between(0.001, 0.1);
    let back = match outcome {
        Outcome::Transport("timeout") => now + TIMEOUT,
        _ => there + rng.between(0.001, 0.1),
    };
    (there, back)
}

pub fn run(seed: u64) -> Result<(), Violation> {
    let mut rng = Rng::new(seed);
    let body: Map<String, Value> = match rng.range(0, 3) {
        0 => serde_json::from_str(r#"{"export_class":"statements","format":"csv"}"#).unwrap(),
        1 => serde_json::from_str(
            r#"{"export_class":"statements","format":"csv","period":"2026-10"}"#,
        )
        .unwrap(),
        _ => serde_json::from_str(r#"{"report":"ledger"}"#).unwrap(),
    };
    let mut server = Reports::new(&mut rng, &body);
    let keyed = rng.chance(0.3);
    let options = ExportJobOptions {
        tenant_id: TENANT.into(),
        body: Value::Object(body.clone()).to_string().into_bytes(),
        idempotency_header: keyed.then(|| "Idempotency-Key".to_owned()),
        request_id: keyed.then(|| format!("job-{seed}")),
        max_polls: Some(30),
        call: CallOptions {
            seed: rng.u64(),
            ..CallOptions::default()
        },
        ..ExportJobOptions::default()
    };
    let mut rec = Recorder::new("reports", TENANT, Value::Null, T0);
    rec.machine(json!({"kind": "export_job", "options": {
        "tenant_id": TENANT, "body": String::from_utf8_lossy(&options.body), "seed": options.call.seed,
        "idempotency_header": options.idempotency_header, "request_id": options.request_id, "max_polls": 30}}));
    let mut job = ExportJob::new(options.clone()).unwrap();
    let mut session = Session::new(None);
    // The process dies now and then (Ctrl-C, a deploy, the OOM killer): the host resumes the job
    // from its last checkpoint (`checkpoint()`: before each send and wait) in a new process, on a new session,
    // after a gap. The request in flight may or may not have reached the service.
    let crashy = rng.chance(0.35);
    let mut crashes = 0u32;
    let mut checkpoint: Option<String> = None;
    let foreign_at = rng.chance(0.15).then(|| T0 + rng.between(0.0, 40.0));
    let foreign_same = rng.chance(0.2);
    let mut foreign_done = false;
    let mut now = T0;
    let healthy = server.fault_p == 0.0;
    // Processes killed with a create out: each is a create that may have been applied.
    let mut creates_killed = 0u32;
    let mut outcome_step = None;
    let (mut pages_seen, mut creates_seen, mut last_was_list) = (false, 0u32, false);
    // The export ids creates answered with (an adopted export is one no create answered with).
    let mut answered: Vec<String> = Vec::new();
    for _ in 0..5000 {
        if let (Some(at), false) = (foreign_at, foreign_done) {
            if now >= at {
                server.foreign(&body, at, foreign_same);
                foreign_done = true;
            }
        }
        let step = job.next_in(now, &mut session).unwrap();
        // As the clients do: the checkpoint the job gives (before each send and each wait, so a
        // Retry-After, a backoff or a poll interval the job holds survives the process).
        let given = job.checkpoint();
        let pending = matches!(step, Step::Send { .. } | Step::Wait { .. });
        // Before a send or a wait the host holds the job's state as it is (given now, or given
        // before and unchanged); at any other step nothing is given, and never the same text twice.
        if (pending && given.as_ref().or(checkpoint.as_ref()) != Some(&job.save()))
            || (!pending && given.is_some())
            || (given.is_some() && given == checkpoint)
        {
            return Err(Violation::new(
                "a checkpoint is kept before each send and each wait, and only then",
                format!(
                    "at {}: given {}, the same text as the last {}",
                    job_view(&step),
                    given.is_some(),
                    given.is_some() && given == checkpoint
                ),
            ));
        }
        if let Some(text) = given {
            checkpoint = Some(text);
        }
        if crashy && crashes < 3 && rng.chance(0.06) {
            crashes += 1;
            crate::seen::count("processes killed mid-job and resumed", 1);
            if let Step::Send { request } = &step {
                if request.operation_id == "createPlatformExport" {
                    creates_killed += 1;
                }
                if rng.chance(0.5) {
                    // it reached the service; its answer is lost with the process
                    crate::seen::count("requests applied by a killed process", 1);
                    let _ = server.handle(request, now);
                    // Its answer died with the process: a Retry-After in it reached no one, so
                    // the resumed job cannot be held to it.
                    server.not_before.remove(&request.operation_id);
                }
            }
            now += rng.between(1.0, 7200.0);
            // the last checkpoint (saved before the last send or wait), else the job from the start
            job = match &checkpoint {
                Some(saved) => ExportJob::resume(saved).unwrap(),
                None => ExportJob::new(options.clone()).unwrap(),
            };
            session = Session::new(None);
            continue;
        }
        let view = job_view(&step);
        if let Step::Send { request } = &step {
            if request.operation_id == "listPlatformExports" && request.query.contains("cursor=") {
                pages_seen = true;
            }
            if request.operation_id == "createPlatformExport" && creates_seen > 0 && last_was_list {
                crate::seen::count("second creates after proving none", 1);
            }
            if request.operation_id == "createPlatformExport" {
                creates_seen += 1;
            }
            last_was_list = request.operation_id == "listPlatformExports";
        }
        if let Step::Wait { .. } = &step {
            if last_was_list && creates_seen > 0 && job.export_id().is_none() {
                crate::seen::count("grace looks", 1);
            }
        }
        rec.next(0, now, view);
        match step {
            Step::Send { request } => {
                check_request(&request)?;
                let streamed = false;
                let probe = server.handle(&request, now);
                let (_, back) = arrival(&mut rng, now, &probe);
                now = back;
                rec.respond(0, now, &probe, streamed);
                if let (
                    true,
                    Outcome::Response {
                        status: 200..=299,
                        body,
                        ..
                    },
                ) = (request.operation_id == "createPlatformExport", &probe)
                {
                    if let Some(id) = serde_json::from_slice::<Value>(body)
                        .ok()
                        .and_then(|v| v["id"].as_str().map(str::to_owned))
                    {
                        answered.push(id);
                    }
                }
                report(&mut job, &probe, now);
            }
            Step::Wait { seconds } => now += seconds,
            Step::Reserve { .. } => {
                return Err(Violation::new(
                    "only a fleet's job reserves",
                    "a job on a plain session",
                ))
            }
            Step::RefreshToken { .. } => {
                let request =
                    royaltykit::token::build_token_request::<&str>("cid", "csecret", TENANT, &[])
                        .unwrap();
                let (at, got) = exchange(
                    request,
                    rng.u64(),
                    now,
                    |r, t| {
                        let o = server.handle(r, t);
                        let (_, back) = arrival(&mut rng, t, &o);
                        (o, back)
                    },
                    |status, headers, body, t| match royaltykit::token::parse_token_response::<
                        _,
                        &str,
                    >(
                        i64::from(status),
                        headers,
                        body,
                        &[],
                        TENANT,
                        t.floor() as i64,
                    )
                    .unwrap()
                    {
                        Ok(token) => Ok((token.bearer(), Some(token.refresh_at as f64))),
                        Err(e) => Err(e.to_string()),
                    },
                )?;
                now = at;
                match got {
                    Ok((token, refresh_at)) => {
                        rec.token(now, token.value(), refresh_at);
                        session.store_token(token, refresh_at);
                    }
                    Err(reason) => {
                        rec.exchange_failed(now, &reason);
                        session.exchange_failed(&reason);
                        outcome_step = Some(format!("the token exchange failed: {reason}"));
                        break;
                    }
                }
            }
            Step::AwaitToken { .. } => {
                return Err(Violation::new(
                    "a machine alone on its session never waits for another's exchange",
                    "AwaitToken",
                ))
            }
            end @ (Step::Done { .. } | Step::Reconcile { .. } | Step::Fail { .. }) => {
                let mine = server.mine();
                crate::seen::count(
                    match &end {
                        Step::Done { .. } => "jobs done",
                        Step::Reconcile { .. } => "jobs reconcile",
                        _ => "jobs failed",
                    },
                    1,
                );
                crate::seen::count("listings of 2+ pages", u64::from(pages_seen));
                crate::seen::count("token exchanges", session.exchanges());
                if let Step::Done {
                    export_id: Some(export_id),
                    ..
                } = &end
                {
                    if mine.contains(&export_id.as_str()) && !answered.contains(export_id) {
                        crate::seen::count("lost creates adopted", 1);
                    }
                }
                let problem = match &end {
                    _ if mine.len() > 1 => Some((
                        "at most one export per job",
                        format!("{} exports created: {mine:?}", mine.len()),
                    )),
                    Step::Done {
                        export_id,
                        response,
                        ..
                    } => {
                        let export_id = export_id.as_deref().unwrap_or_default();
                        let artifact = &response.body;
                        let e = server.exports.iter().find(|e| e.id == export_id);
                        match e {
                            None => Some(("a job ends with an export of its own", format!("done with unknown export {export_id}"))),
                            // Another process's export the list cannot tell from the job's own
                            // (no member repeated, no filter) is adopted by the rule; never one
                            // the list shows to differ.
                            Some(e) if e.body != body && !server.foreign_same => Some(("a job ends with an export of its own", format!("adopted {export_id}, whose body differs"))),
                            Some(_) if *artifact != server.artifact => Some(("an artifact is delivered whole", format!("{} of {} bytes", artifact.len(), server.artifact.len()))),
                            Some(e) if !e.mine && !server.foreign_same => Some(("a job ends with an export of its own", format!("adopted another process's export {export_id} while its own is {mine:?}"))),
                            _ => None,
                        }
                    }
                    Step::Fail { failure, .. }
                        if failure.rule == "creates_exhausted" && !mine.is_empty() =>
                    {
                        Some((
                            "a job never loses track of the export it created",
                            format!("creates_exhausted although {mine:?} exists"),
                        ))
                    }
                    // Killed with an unkeyed create out MAX_CREATES times: each of those
                    // creates may have been applied and none was found, so the job rightly
                    // ends rather than risk a second export (a keyed create is sent again
                    // with its key, and never counts so).
                    Step::Fail { failure, .. }
                        if failure.rule == "creates_exhausted"
                            && !keyed
                            && creates_killed >= royaltykit::machine::MAX_CREATES =>
                    {
                        None
                    }
                    _ if healthy && !server.foreign_same && !server.undecidable => Some((
                        "a run with no fault injected succeeds",
                        format!("{}", job_view(&end)),
                    )),
                    _ => None,
                };
                if let Some((invariant, detail)) = problem {
                    let mut v = Violation::new(
                        invariant,
                        format!("{detail} (process restarts from a checkpoint: {crashes})"),
                    );
                    // a transcript replays one process; a resumed run is not one
                    v.transcript = (crashes == 0).then(|| {
                        rec.transcript(&format!("simulated seed {seed}"), session.exchanges())
                    });
                    return Err(v);
                }
                if let Some(v) = server.violations.pop() {
                    let mut v = v;
                    v.transcript = Some(
                        rec.transcript(&format!("simulated seed {seed}"), session.exchanges()),
                    );
                    return Err(v);
                }
                return Ok(());
            }
        }
        if now > T0 + 12.0 * 3600.0 {
            break;
        }
    }
    if let Some(reason) = outcome_step {
        // The exchange failed: a run with faults may end so, a healthy one never does.
        if healthy {
            return Err(Violation::new(
                "a run with no fault injected succeeds",
                reason,
            ));
        }
        if server.mine().len() > 1 {
            return Err(Violation::new(
                "at most one export per job",
                "after a failed exchange",
            ));
        }
        return server.violations.pop().map_or(Ok(()), Err);
    }
    let mut v = Violation::new(
        "every run ends within its budget",
        format!("the job was still running at +{:.0} s", now - T0),
    );
    v.transcript = Some(rec.transcript(&format!("simulated seed {seed}"), session.exchanges()));
    Err(v)
}
