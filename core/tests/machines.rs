//! Runs the protocol machines' transcripts (tests/vectors/machines.json, written by
//! gen_machine_vectors.py from the specs, never from this crate) the way every host drives them:
//! ask for the next step, perform it against the script, report the outcome.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::result_large_err
)]

use royaltykit::catalog;
use royaltykit::dedup::ClaimState;
use royaltykit::machine::{
    Call, CallFailure, CallOptions, ExportJob, ExportJobOptions, Fleet, FleetOutcome, FleetToken,
    FleetTokenStep, InboxEntry, InboxOptions, InboxOutcome, InboxStep, InboxWorker, Pages,
    PagesOptions, PagesStep, ReceiptOutcome, ReceiptStep, Recovery, RecoveryOptions,
    RecoveryOutcome, RecoveryStep, Session, Step, StepOutcome, WebhookReceiver, PUBLISH_SCRIPT,
    RESERVE_SCRIPT, UNLOCK_SCRIPT,
};
use royaltykit::request::{RequestDescriptor, RequestParams};
use royaltykit::retry::{RateBudget, TransportFailure};
use royaltykit::token::BearerToken;

/// A token as the transcript's events give it: a reporting one bound to the transcript's tenant.
fn bearer_token_for(api: catalog::Api, value: &str, tenant: Option<&str>) -> BearerToken {
    match (api, tenant) {
        (catalog::Api::Reports, Some(t)) => BearerToken::reports(value, t),
        _ => BearerToken::new(api, value),
    }
}
use royaltykit::webhook::{VerifyOptions, WebhookSecret};
use serde_json::{json, Value};

mod common;
use common::{bytes, pairs, run, Outcome};

fn receipt(i: &Value) -> Outcome {
    let secrets: Vec<WebhookSecret> = i["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| WebhookSecret::new(s["secret"].as_str().unwrap(), s["valid_until"].as_i64()))
        .collect();
    let receiver = WebhookReceiver::new(
        &secrets,
        VerifyOptions::default(),
        i["namespace"].as_str().unwrap(),
    )?
    .claiming_content_key(i["claim_content_key"].as_bool() == Some(true));
    let mut r = receiver.receive(
        &pairs(&i["headers"]),
        &bytes(&i["body"]),
        i["now"].as_i64().unwrap(),
    );
    if i["transactional"].as_bool() == Some(true) {
        r = r.transactional();
    }
    if i["inbox"].as_bool() == Some(true) {
        r = r.inbox();
    }
    let mut answers = i["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .peekable();
    let mut steps = Vec::new();
    for _ in 0..100 {
        let step = r.next();
        steps.push(match &step {
            ReceiptStep::Reply { status, body } => {
                let mut v: Value = serde_json::from_str(body).unwrap();
                v["step"] = "reply".into();
                v["status"] = (*status).into();
                v.as_object_mut().unwrap().remove("message");
                v
            }
            other => serde_json::to_value(other).unwrap(),
        });
        // "cancel": the host was cancelled while this step was in flight (a Wait takes an
        // answer only then).
        if !matches!(step, ReceiptStep::Reply { .. }) && answers.next_if_eq(&"cancel").is_some() {
            r.cancelled()?;
            continue;
        }
        // every answer through the receipt's one input, `report`
        let answer = match step {
            ReceiptStep::Reply { .. } => return Ok(json!({ "steps": steps })),
            ReceiptStep::Wait { .. } => "ok",
            _ => answers.next().unwrap(),
        };
        r.report(match (step, answer) {
            (ReceiptStep::Claim { .. }, "store_down") => ReceiptOutcome::Failed,
            (ReceiptStep::Claim { .. }, state) => {
                ReceiptOutcome::Claimed(ClaimState::parse(state)?)
            }
            (ReceiptStep::Enqueue { .. }, "new") => ReceiptOutcome::Enqueued(true),
            (ReceiptStep::Enqueue { .. }, "dup") => ReceiptOutcome::Enqueued(false),
            (ReceiptStep::Commit { .. }, "ok") if r.is_transactional() => {
                ReceiptOutcome::Marked(true)
            }
            (ReceiptStep::Commit { .. }, "lost") => ReceiptOutcome::Marked(false),
            (_, "ok") => ReceiptOutcome::Done,
            _ => ReceiptOutcome::Failed,
        })?;
    }
    panic!("no reply after 100 steps: {steps:?}")
}

fn params(p: &Value) -> RequestParams {
    RequestParams {
        path: pairs(&p["path"]),
        query: pairs(&p["query"]),
        body: p["body"].as_str().map(|b| b.as_bytes().to_vec()),
        tenant_id: p["tenant_id"].as_str().map(str::to_owned),
        idempotency_key: p["idempotency_key"].as_str().map(str::to_owned),
        idempotency_header: p["idempotency_header"].as_str().map(str::to_owned),
        request_id: p["request_id"].as_str().map(str::to_owned),
        ..RequestParams::default()
    }
}

fn options(o: &Value) -> CallOptions {
    CallOptions {
        max_attempts: o["max_attempts"].as_i64(),
        max_elapsed_seconds: o["max_elapsed_seconds"].as_f64(),
        seed: o["seed"].as_u64().unwrap_or(0),
    }
}

fn budget(b: &Value) -> Option<RateBudget> {
    let windows: Vec<(String, i64, Option<i64>)> = b
        .as_array()?
        .iter()
        .map(|w| {
            (
                w[0].as_str().unwrap().to_owned(),
                w[1].as_i64().unwrap(),
                w[2].as_i64(),
            )
        })
        .collect();
    Some(RateBudget::new(&windows).unwrap())
}

fn send_view(r: &RequestDescriptor) -> Value {
    let header = |name: &str| {
        r.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    json!({
        "step": "send",
        "method": r.method,
        "target": r.path_and_query(),
        "token": header("Authorization").map(|v| v.trim_start_matches("Bearer ").to_owned()),
        "idempotency_key": if r.idempotency_key_sent { r.idempotency_key.clone() } else { None },
    })
}

fn failure_view(f: &CallFailure) -> Value {
    json!({
        "step": "fail",
        "rule": f.rule,
        "status": f.status,
        "code": f.error.as_ref().map(|e| e.code().to_owned()),
        "transport": f.transport.map(|t| t.as_str()),
        "retry_after_seconds": f.retry_after_seconds,
    })
}

/// What a host does for a step that needs an outcome: the next event of the script.
trait Driven {
    fn report(&mut self, outcome: StepOutcome<'_, [(String, String)]>, now: f64);
    fn streams(&self, status: i64) -> bool;
    fn token(&mut self, value: &str, refresh_at: Option<f64>, tenant: Option<&str>);
}

impl Driven for Call {
    fn report(&mut self, outcome: StepOutcome<'_, [(String, String)]>, now: f64) {
        Call::report(self, outcome, now).unwrap()
    }
    fn streams(&self, status: i64) -> bool {
        Call::streams(self, status)
    }
    fn token(&mut self, value: &str, refresh_at: Option<f64>, tenant: Option<&str>) {
        let api = catalog::operation(self.operation_id()).unwrap().api;
        Call::token(self, bearer_token_for(api, value, tenant), refresh_at)
    }
}

impl Driven for ExportJob {
    fn report(&mut self, outcome: StepOutcome<'_, [(String, String)]>, now: f64) {
        ExportJob::report(self, outcome, now).unwrap()
    }
    fn streams(&self, status: i64) -> bool {
        ExportJob::streams(self, status)
    }
    fn token(&mut self, value: &str, refresh_at: Option<f64>, tenant: Option<&str>) {
        ExportJob::token(
            self,
            bearer_token_for(catalog::Api::Reports, value, tenant),
            refresh_at,
        )
    }
}

/// The common loop: `next` gives the rendered step and whether it needs an event
/// (`Some(true)` a send, `Some(false)` a token), a wait's seconds, or the end.
enum Kind {
    Send,
    Token,
    Wait(f64),
    End,
}

fn drive<M: Driven>(
    machine: &mut M,
    i: &Value,
    tenant: Option<&str>,
    mut next: impl FnMut(&mut M, f64) -> (Value, Kind),
) -> Outcome {
    let mut now = i["start"].as_f64().unwrap();
    let mut events = i["events"].as_array().unwrap().iter();
    let mut steps = Vec::new();
    for _ in 0..200 {
        let (view, kind) = next(machine, now);
        steps.push(view);
        match kind {
            Kind::End => return Ok(json!({ "steps": steps })),
            Kind::Wait(s) => now += s,
            Kind::Token => {
                let e = events.next().expect("a token event");
                let refresh_at = e["valid_for"].as_f64().map(|v| now + v);
                machine.token(e["token"].as_str().unwrap(), refresh_at, tenant);
            }
            Kind::Send => {
                let e = events.next().expect("an outcome event");
                now += e["after"].as_f64().unwrap_or(0.0);
                report(machine, e, now)?;
            }
        }
    }
    panic!("no end after 200 steps: {steps:?}")
}

/// Reports a send's outcome event (a response, maybe streamed, or a transport failure).
fn report<M: Driven>(machine: &mut M, e: &Value, now: f64) -> Result<(), royaltykit::Error> {
    if let Some(kind) = e["transport"].as_str() {
        machine.report(StepOutcome::NoResponse(TransportFailure::parse(kind)?), now);
    } else {
        let r = &e["response"];
        let body = r["body"].as_str().unwrap().as_bytes();
        let status = r["status"].as_i64().unwrap();
        let streamed = e["streamed"].as_bool();
        if let Some(flag) = streamed {
            assert_eq!(machine.streams(status), flag, "streams({status})");
        }
        let headers = pairs(&r["headers"]);
        let headers = headers.as_slice();
        machine.report(
            if streamed == Some(true) {
                let length = body.len() as u64;
                StepOutcome::Streamed {
                    status,
                    headers,
                    length,
                }
            } else {
                StepOutcome::Response {
                    status,
                    headers,
                    body,
                }
            },
            now,
        );
    }
    Ok(())
}

/// A token exchange's request, from the token module.
fn exchange_request(x: &Value) -> RequestDescriptor {
    let s = |k: &str| x[k].as_str().unwrap();
    if s("api") == "reports" {
        royaltykit::token::build_token_request::<&str>(
            s("client_id"),
            s("client_secret"),
            s("tenant_id"),
            &[],
        )
        .unwrap()
    } else {
        royaltykit::token::build_enterprise_token_request(s("api_key"), s("api_secret")).unwrap()
    }
}

fn call(i: &Value) -> Outcome {
    let mut call = if i["exchange"].is_object() {
        Call::exchange(exchange_request(&i["exchange"]), options(&i["options"]))?
    } else {
        Call::new(
            i["operation"].as_str().unwrap(),
            params(&i["params"]),
            options(&i["options"]),
        )?
    };
    let mut budget = budget(&i["budget"]);
    let tenant = i["params"]["tenant_id"].as_str();
    drive(&mut call, i, tenant, |c, now| {
        call_view(c.next(now, budget.as_mut()).unwrap())
    })
}

/// A fleet reservation: its keys and arguments (the script's text left out).
fn reserve_view(command: &[String]) -> Value {
    json!({"step": "reserve", "command": command.get(2..).unwrap_or_default()})
}

fn call_view(step: Step) -> (Value, Kind) {
    match step {
        Step::Send { request } => (send_view(&request), Kind::Send),
        Step::Wait { seconds } => (
            json!({"step": "wait", "seconds": seconds}),
            Kind::Wait(seconds),
        ),
        Step::RefreshToken { .. } => (json!({"step": "refresh_token"}), Kind::Token),
        Step::Reserve { command } => (reserve_view(&command), Kind::End),
        Step::AwaitToken { seconds } => (
            json!({"step": "await_token", "seconds": seconds}),
            Kind::End,
        ),
        Step::Reconcile { reconcile, .. } => (
            json!({"step": "reconcile", "reconcile": reconcile.as_str()}),
            Kind::End,
        ),
        Step::Done { response, .. } => (
            json!({"step": "done", "status": response.status, "body": String::from_utf8_lossy(&response.body)}),
            Kind::End,
        ),
        Step::Fail { failure, .. } => (failure_view(&failure), Kind::End),
    }
}

fn job_view(step: Step) -> (Value, Kind) {
    match step {
        Step::Send { request } => (send_view(&request), Kind::Send),
        Step::Wait { seconds } => (
            json!({"step": "wait", "seconds": seconds}),
            Kind::Wait(seconds),
        ),
        Step::RefreshToken { .. } => (json!({"step": "refresh_token"}), Kind::Token),
        Step::Reserve { command } => (reserve_view(&command), Kind::End),
        Step::AwaitToken { seconds } => (
            json!({"step": "await_token", "seconds": seconds}),
            Kind::End,
        ),
        Step::Done {
            export_id,
            response,
            json,
        } => {
            // an artifact is bytes, never parsed
            assert!(!json, "an export job's artifact is marked JSON");
            (
                json!({"step": "done", "export_id": export_id, "artifact": String::from_utf8_lossy(&response.body)}),
                Kind::End,
            )
        }
        Step::Reconcile {
            reconcile,
            candidates,
            stage,
            ..
        } => (
            json!({"step": "reconcile", "reconcile": reconcile.as_str(), "stage": stage, "candidates": candidates}),
            Kind::End,
        ),
        Step::Fail {
            stage,
            export_id,
            failure,
        } => {
            let mut v = failure_view(&failure);
            v["stage"] = stage.into();
            v["export_id"] = export_id.into();
            (v, Kind::End)
        }
    }
}

fn job_options(o: &Value) -> ExportJobOptions {
    ExportJobOptions {
        tenant_id: o["tenant_id"].as_str().unwrap().to_owned(),
        body: o["body"].as_str().unwrap().as_bytes().to_vec(),
        idempotency_header: o["idempotency_header"].as_str().map(str::to_owned),
        request_id: o["request_id"].as_str().map(str::to_owned),
        max_polls: o["max_polls"].as_i64(),
        max_poll_seconds: o["max_poll_seconds"].as_f64(),
        reconcile_grace_seconds: o["reconcile_grace_seconds"].as_f64(),
        min_poll_interval_seconds: o["min_poll_interval_seconds"].as_f64(),
        max_poll_interval_seconds: o["max_poll_interval_seconds"].as_f64(),
        call: options(o),
        id_field: o["id_field"].as_str().map(str::to_owned),
        state_field: o["state_field"].as_str().map(str::to_owned),
    }
}

fn export_job(i: &Value) -> Outcome {
    let o = &i["options"];
    let mut job = ExportJob::new(job_options(o))?;
    let mut budget = budget(&i["budget"]);
    drive(&mut job, i, o["tenant_id"].as_str(), |j, now| {
        let (mut view, kind) = job_view(j.next(now, budget.as_mut()).unwrap());
        // the host keeps the checkpoint the job gives before performing the step
        if j.checkpoint().is_some() {
            view["checkpoint"] = true.into();
        }
        (view, kind)
    })
}

/// A machine of a session transcript.
#[allow(clippy::large_enum_variant)]
enum OnSession {
    Call(Call),
    Job(Box<ExportJob>),
}

/// Several machines on one Session, played by the transcript's script (see gen_machine_vectors.py).
fn session(i: &Value) -> Outcome {
    let api = catalog::Api::parse(i["api"].as_str().unwrap())?;
    let tenant = i["tenant_id"].as_str();
    let mut session = match i["fleet"].as_str() {
        Some(prefix) => Fleet::new(Some(prefix))?.session(budget(&i["budget"])),
        None => Session::new(budget(&i["budget"])),
    };
    let mut machines: Vec<OnSession> = i["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match m["kind"].as_str().unwrap() {
            "call" => OnSession::Call(
                Call::new(
                    m["operation"].as_str().unwrap(),
                    params(&m["params"]),
                    options(&m["options"]),
                )
                .unwrap(),
            ),
            _ => OnSession::Job(Box::new(
                ExportJob::new(job_options(&m["options"])).unwrap(),
            )),
        })
        .collect();
    let mut now = i["start"].as_f64().unwrap();
    let mut steps = Vec::new();
    for action in i["script"].as_array().unwrap() {
        if let Some(m) = action["next"].as_u64() {
            let (mut view, _) = match &mut machines[m as usize] {
                OnSession::Call(c) => call_view(c.next_in(now, &mut session)?),
                OnSession::Job(j) => job_view(j.next_in(now, &mut session)?),
            };
            view["machine"] = m.into();
            steps.push(view);
        } else if let Some(m) = action["respond"].as_u64() {
            now += action["after"].as_f64().unwrap_or(0.0);
            match &mut machines[m as usize] {
                OnSession::Call(c) => report(c, action, now)?,
                OnSession::Job(j) => report(j.as_mut(), action, now)?,
            }
        } else if let Some(value) = action["token"].as_str() {
            let refresh_at = action["valid_for"].as_f64().map(|v| now + v);
            session.store_token(bearer_token_for(api, value, tenant), refresh_at);
        } else if let Some(reason) = action["exchange_failed"].as_str() {
            session.exchange_failed(reason);
        } else if action["abandon"].as_bool() == Some(true) {
            session.abandon_exchange();
        } else if let Some(s) = action["advance"].as_f64() {
            now += s;
        } else if let Some(reply) = action.get("reserved") {
            let m = action["machine"].as_u64().unwrap() as usize;
            match &mut machines[m] {
                OnSession::Call(c) => c.report(reply_of(reply.as_str()), now)?,
                OnSession::Job(j) => j.report(reply_of(reply.as_str()), now)?,
            }
        } else if let Some(m) = action["reserve_failed"].as_u64() {
            match &mut machines[m as usize] {
                OnSession::Call(c) => c.report(UNREACHABLE, now)?,
                OnSession::Job(j) => j.report(UNREACHABLE, now)?,
            }
        } else {
            panic!("unknown script action {action}");
        }
    }
    Ok(json!({ "steps": steps, "exchanges": session.exchanges() }))
}

/// The fleet's reply to a `Reserve`, as a call's outcome.
fn reply_of(reply: Option<&str>) -> StepOutcome<'_, [(String, String)]> {
    StepOutcome::Reply(reply)
}

/// The fleet's Redis unreachable for a `Reserve` (a transport failure of any kind).
const UNREACHABLE: StepOutcome<'static, [(String, String)]> =
    StepOutcome::NoResponse(TransportFailure::ConnectFailed);

/// A fleet token step as a transcript records it (a script's text as its name).
fn fleet_token_view(step: FleetTokenStep) -> Value {
    match step {
        FleetTokenStep::Command { command } => {
            let shown: Vec<String> = command
                .into_iter()
                .map(|a| match a.as_str() {
                    s if s == RESERVE_SCRIPT => "RESERVE_SCRIPT".to_owned(),
                    s if s == PUBLISH_SCRIPT => "PUBLISH_SCRIPT".to_owned(),
                    s if s == UNLOCK_SCRIPT => "UNLOCK_SCRIPT".to_owned(),
                    _ => a,
                })
                .collect();
            json!({"step": "command", "command": shown})
        }
        FleetTokenStep::Exchange {} => json!({"step": "exchange"}),
        FleetTokenStep::Wait { seconds } => json!({"step": "wait", "seconds": seconds}),
        FleetTokenStep::Done {} => json!({"step": "done"}),
        FleetTokenStep::Failed { reason } => json!({"step": "failed", "reason": reason}),
    }
}

/// A fleet token refresh driven by the transcript's events.
fn fleet_token(i: &Value) -> Outcome {
    let api = catalog::Api::parse(i["api"].as_str().unwrap())?;
    let tenant = i["tenant_id"].as_str();
    let mut now = i["now"].as_f64().unwrap();
    let mut session = Fleet::new(i["prefix"].as_str())?.session(None);
    if let Some(held) = i["held"].as_str() {
        session.store_token(bearer_token_for(api, held, tenant), None);
    }
    let mut ft = FleetToken::new(&session, api, tenant, i["seed"].as_u64().unwrap(), now)?;
    let mut steps = vec![fleet_token_view(ft.next())];
    for e in i["events"].as_array().unwrap() {
        if let Some(s) = e["advance"].as_f64() {
            now += s;
            continue;
        }
        // every answer through the refresh's one input, `report`
        let outcome = if let Some(reply) = e.get("reply") {
            FleetOutcome::Reply(reply.as_str())
        } else if e.get("redis_failed").is_some() {
            FleetOutcome::NoResponse
        } else if let Some(value) = e["exchanged"].as_str() {
            FleetOutcome::Token(
                bearer_token_for(api, value, tenant),
                e["refresh_at"].as_f64(),
            )
        } else if let Some(reason) = e["exchange_failed"].as_str() {
            FleetOutcome::Failed(reason)
        } else if e.get("waited").is_some() {
            FleetOutcome::Done
        } else {
            panic!("unknown event {e}");
        };
        ft.report(outcome, &mut session, now)?;
        steps.push(fleet_token_view(ft.next()));
    }
    Ok(json!({"steps": steps, "has_token": session.has_token()}))
}

/// A walk over pages, fed the transcript's bodies (see gen_machine_vectors.py).
fn pages(i: &Value) -> Outcome {
    let o = &i["options"];
    let options = PagesOptions {
        max_pages: o["max_pages"].as_u64().map(|n| u32::try_from(n).unwrap()),
        max_items: o["max_items"].as_u64(),
        page_size: o["page_size"].as_u64().map(|n| u32::try_from(n).unwrap()),
        id_field: o["id_field"].as_str().map(str::to_owned),
    };
    let mut walk = Pages::new(
        i["operation"].as_str().unwrap(),
        pairs(&i["query"]),
        options,
    )?;
    let mut bodies = i["pages"].as_array().unwrap().iter();
    let mut steps = Vec::new();
    loop {
        match walk.next() {
            PagesStep::Fetch { query } => {
                steps.push(json!({"step": "fetch", "query": query}));
                let Some(body) = bodies.next().and_then(Value::as_str) else {
                    break; // a fetch the transcript did not script: the steps differ
                };
                steps.push(match walk.page(body.as_bytes())? {
                    Some(items) => {
                        json!({"step": "page", "member": items.member, "take": items.take})
                    }
                    None => json!({"step": "page", "items": null}),
                });
            }
            PagesStep::Done { end, pages, items } => {
                steps.push(
                    json!({"step": "done", "end": end.as_str(), "pages": pages, "items": items}),
                );
                break;
            }
            PagesStep::Fail { error } => {
                steps.push(json!({"step": "fail", "code": error.code(), "family": error.family().as_str()}));
                break;
            }
        }
    }
    Ok(json!({ "steps": steps }))
}

/// The JSON of an inbox worker's step (see gen_machine_vectors.py).
fn inbox_view(step: InboxStep) -> Value {
    match step {
        InboxStep::Claim {} => json!({"step": "claim"}),
        InboxStep::Idle { seconds } => json!({"step": "idle", "seconds": seconds}),
        InboxStep::Drained {} => json!({"step": "drained"}),
        InboxStep::Begin {} => json!({"step": "begin"}),
        InboxStep::RunHandler { entry } => {
            json!({"step": "run_handler", "key": entry.key, "attempts": entry.attempts})
        }
        InboxStep::MarkDone { key, attempts } => {
            json!({"step": "mark_done", "key": key, "attempts": attempts})
        }
        InboxStep::Commit {} => json!({"step": "commit"}),
        InboxStep::Rollback {} => json!({"step": "rollback"}),
        InboxStep::Settle {
            key,
            attempts,
            poison,
            retry_at,
            error,
        } => json!({"step": "settle", "key": key, "attempts": attempts, "poison": poison,
            "retry_at": retry_at, "error": error}),
    }
}

/// An inbox worker fed the transcript's events.
fn inbox(i: &Value) -> Outcome {
    let o = &i["options"];
    let options = InboxOptions {
        max_attempts: o["max_attempts"]
            .as_u64()
            .map(|n| u32::try_from(n).unwrap()),
        poll_seconds: o["poll_seconds"].as_f64(),
        transactional: o["transactional"].as_bool(),
        drain: o["drain"].as_bool(),
    };
    let mut w = InboxWorker::new(&options, i["seed"].as_u64().unwrap())?;
    let mut steps = vec![inbox_view(w.next())];
    for e in i["events"].as_array().unwrap() {
        if let Some(c) = e.get("claimed") {
            let entry = c.as_object().map(|_| InboxEntry {
                key: c["key"].as_str().unwrap().to_owned(),
                delivery_id: c["delivery_id"].as_str().unwrap().to_owned(),
                event: c["event"].as_str().unwrap().to_owned(),
                body: c["body"].as_str().unwrap().to_owned(),
                attempts: u32::try_from(c["attempts"].as_u64().unwrap()).unwrap(),
            });
            w.report(InboxOutcome::Claimed(entry), e["now"].as_f64().unwrap())?;
        } else if let Some(m) = e["handler_failed"].as_str() {
            w.report(InboxOutcome::Failed(m.into()), e["now"].as_f64().unwrap())?;
        } else if let Some(b) = e["marked"].as_bool() {
            w.report(InboxOutcome::Marked(b), 0.0)?;
        } else if e.get("store_failed").is_some() {
            w.report(
                InboxOutcome::Failed("the store could not be reached".into()),
                0.0,
            )?;
        } else if [
            "waited",
            "began",
            "handler",
            "committed",
            "rolled_back",
            "settled",
        ]
        .iter()
        .any(|k| e.get(*k).is_some())
        {
            // every other answer is the pending step done, through the worker's one input
            w.report(InboxOutcome::Done, 0.0)?;
        } else {
            panic!("unknown event {e}");
        }
        steps.push(inbox_view(w.next()));
    }
    Ok(
        json!({"steps": steps, "counts": {"processed": w.processed(), "retried": w.retried(),
        "poisoned": w.poisoned()}}),
    )
}

/// A recovery run, fed the transcript's pages, store states and replay answers.
fn recovery(i: &Value) -> Outcome {
    let o = &i["options"];
    let options = RecoveryOptions {
        max_replays: o["max_replays"].as_u64().map(|n| u32::try_from(n).unwrap()),
        max_replays_per_delivery: o["max_replays_per_delivery"]
            .as_u64()
            .map(|n| u32::try_from(n).unwrap()),
        max_entries: o["max_entries"].as_u64(),
    };
    let mut run = Recovery::new(
        i["subscription"].as_str().unwrap(),
        i["namespace"].as_str().unwrap(),
        i["since"].as_f64().unwrap(),
        i["now"].as_f64().unwrap(),
        options,
    )?;
    let mut bodies = i["pages"].as_array().unwrap().iter();
    let mut replays = i["replays"].as_array().unwrap().iter();
    let mut steps = Vec::new();
    loop {
        match run.next() {
            RecoveryStep::Fetch { query } => {
                steps.push(json!({"step": "fetch", "query": query}));
                let Some(body) = bodies.next().and_then(Value::as_str) else {
                    break;
                };
                run.report(RecoveryOutcome::Page(body.as_bytes()))?;
            }
            RecoveryStep::Check { keys } => {
                let states: Vec<ClaimState> = keys
                    .iter()
                    .map(|k| ClaimState::parse(i["states"][k].as_str().unwrap_or("new")).unwrap())
                    .collect();
                steps.push(json!({"step": "check", "keys": keys}));
                run.report(RecoveryOutcome::Checked(&states))?;
            }
            RecoveryStep::Replay { delivery } => {
                steps.push(json!({"step": "replay", "delivery": delivery}));
                let Some(answer) = replays.next() else { break };
                run.report(match answer["failed"].as_str() {
                    Some(code) => RecoveryOutcome::ReplayFailed(code),
                    None => RecoveryOutcome::Replayed(answer["body"].as_str().unwrap().as_bytes()),
                })?;
            }
            RecoveryStep::Done { report } => {
                let deliveries: Vec<Value> = report
                    .deliveries
                    .iter()
                    .map(|d| {
                        json!({"reference": d.reference, "event": d.event, "status": d.status,
                            "created_at": d.created_at, "replays": d.replays,
                            "action": d.action.as_str(), "replay": d.replay, "error": d.error})
                    })
                    .collect();
                steps.push(json!({"step": "done", "report": {
                    "entries": report.entries, "considered": report.considered,
                    "before_since": report.before_since, "skipped": report.skipped,
                    "replayed": report.replayed, "end": report.end.as_str(),
                    "deliveries": deliveries}}));
                break;
            }
            RecoveryStep::Fail { error } => {
                steps.push(json!({"step": "fail", "code": error.code(), "family": error.family().as_str()}));
                break;
            }
        }
    }
    Ok(json!({ "steps": steps }))
}

#[test]
fn machine_transcripts() {
    let n = run("machines.json", |function, i| match function {
        "receipt" => Some(receipt(i)),
        "call" => Some(call(i)),
        "export_job" => Some(export_job(i)),
        "session" => Some(session(i)),
        "pages" => Some(pages(i)),
        "recovery" => Some(recovery(i)),
        "inbox" => Some(inbox(i)),
        "fleet_token" => Some(fleet_token(i)),
        _ => None,
    });
    assert!(n >= 120, "{n} transcripts");
}

#[test]
fn a_token_exchange_is_never_saved_with_its_credentials() {
    let request = exchange_request(
        &json!({"api": "enterprise", "api_key": "key-1", "api_secret": "secret-1"}),
    );
    let mut call = Call::exchange(request, CallOptions::default()).unwrap();
    assert!(matches!(call.next(1.0e9, None).unwrap(), Step::Send { .. }));
    let saved = call.save();
    assert!(
        !saved.contains("secret-1") && !saved.contains("key-1"),
        "{saved}"
    );
    let mut resumed = Call::resume(&saved).unwrap();
    // the request in flight counts as lost, and it cannot be built again without the credentials
    let mut step = resumed.next(1.0e9, None).unwrap();
    if let Step::Wait { seconds } = step {
        step = resumed.next(1.0e9 + seconds, None).unwrap();
    }
    match step {
        Step::Fail { failure, .. } => assert_eq!(failure.rule, "invalid_request"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_a_token_exchange_is_a_call_exchange() {
    let read = royaltykit::request::build_request(
        "listEnterpriseReleases",
        &RequestParams {
            token: Some(BearerToken::enterprise("t")),
            ..RequestParams::default()
        },
    )
    .unwrap();
    let e = Call::exchange(read, CallOptions::default()).unwrap_err();
    assert_eq!(e.name, "request");
    assert!(Call::new(
        "exchangeEnterpriseToken",
        RequestParams::default(),
        CallOptions::default()
    )
    .is_err());
}

#[test]
fn a_final_step_gives_the_error_a_client_raises() {
    // a call that runs out of attempts on a refused connection
    let params = RequestParams {
        token: Some(BearerToken::enterprise("t")),
        ..RequestParams::default()
    };
    let options = CallOptions {
        max_attempts: Some(1),
        ..CallOptions::default()
    };
    let mut call = Call::new("listEnterpriseReleases", params, options).unwrap();
    let send = call.next(1.0e9, None).unwrap();
    assert!(!send.is_final());
    assert!(send
        .error("listEnterpriseReleases", "https://h", None)
        .is_none());
    call.transport_failure(TransportFailure::ConnectFailed, 1.0e9)
        .unwrap();
    let end = call.next(1.0e9, None).unwrap();
    assert!(end.is_final(), "{end:?}");
    match end.error(
        "listEnterpriseReleases",
        "https://api.example.com/v1",
        Some("ConnectError: refused"),
    ) {
        Some(royaltykit::Error::CallFailed {
            code,
            detail,
            attempts,
            stage,
            transport,
            ..
        }) => {
            assert_eq!(code, "call_failed");
            assert!(
                detail.starts_with("listEnterpriseReleases to api.example.com: ")
                    && detail.ends_with("(1 attempt made); last failure: ConnectError: refused"),
                "{detail}"
            );
            assert_eq!((attempts, stage), (1, None));
            assert_eq!(transport, Some(TransportFailure::ConnectFailed));
        }
        other => panic!("{other:?}"),
    }
    // an export job's reconcile names its stage and candidates
    let reconcile = Step::Reconcile {
        reconcile: royaltykit::retry::Reconcile::LookupBySentData,
        reason: "two exports match".to_owned(),
        candidates: vec!["exp_1".to_owned(), "exp_2".to_owned()],
        stage: Some("reconcile".to_owned()),
    };
    match reconcile.error("createPlatformExport", "https://h", None) {
        Some(royaltykit::Error::ReconcileRequired {
            code,
            detail,
            operation_id,
            candidates,
            stage,
            ..
        }) => {
            assert_eq!(code, "reconcile_required");
            assert_eq!(detail, "two exports match");
            assert_eq!(operation_id, "createPlatformExport");
            assert_eq!(candidates, ["exp_1", "exp_2"]);
            assert_eq!(stage.as_deref(), Some("reconcile"));
        }
        other => panic!("{other:?}"),
    }
}

/// The names the receipt and the receiver had before they were given their name in every
/// language (`WebhookReceipt`, `WebhookReceiver`) still build and drive the same machine.
#[test]
#[allow(deprecated)]
fn the_old_names_of_the_receipt_and_the_receiver_still_work() {
    use royaltykit::machine::{Receipt, Receiver};
    let body = br#"{"event":"ddex.import.completed","resource":{"type":"ddex_message","reference":"m1","url":"/api/v1/ddex/messages/m1"},"occurred_at":"2026-11-22T04:00:00Z"}"#;
    let signed = royaltykit::webhook::sign(&["whsec_old"], body, 1_763_784_000, "dlv_old").unwrap();
    let receiver: Receiver = Receiver::new(
        &[WebhookSecret::new("whsec_old", None)],
        VerifyOptions::default(),
        "ns",
    )
    .unwrap();
    let r: Receipt = receiver.receive(&signed.pairs(), body, 1_763_784_000);
    let again = Receipt::new("ns", Ok(r.delivery().unwrap().clone()), false).unwrap();
    for mut r in [r, again] {
        assert!(matches!(r.next(), ReceiptStep::Claim { .. }));
        r.claimed(ClaimState::Done).unwrap();
        assert!(matches!(r.next(), ReceiptStep::Reply { status: 200, .. }));
        assert_eq!(r.outcome(), Some("duplicate"));
    }
}

/// The steps the bindings derive from the core cross to JavaScript as this JSON (lib.cjs reads
/// these members; index.d.ts is tsify's type of them): tagged by `step`, variants snake_case,
/// fields camelCase.
#[test]
fn derived_steps_cross_to_javascript_tagged_with_camel_case_fields() {
    let settle = InboxStep::Settle {
        key: "k".into(),
        attempts: 2,
        poison: false,
        retry_at: 1_700_000_060,
        error: "E: no".into(),
    };
    assert_eq!(
        serde_json::to_value(&settle).expect("json"),
        json!({"step": "settle", "key": "k", "attempts": 2, "poison": false, "retryAt": 1_700_000_060_i64, "error": "E: no"})
    );
    let run = InboxStep::RunHandler {
        entry: InboxEntry {
            key: "k".into(),
            delivery_id: "msg_1".into(),
            event: "ping".into(),
            body: "{}".into(),
            attempts: 1,
        },
    };
    assert_eq!(
        serde_json::to_value(&run).expect("json"),
        json!({"step": "run_handler", "entry": {"key": "k", "deliveryId": "msg_1", "event": "ping", "body": "{}", "attempts": 1}})
    );
    assert_eq!(
        serde_json::to_value(InboxStep::Claim {}).expect("json"),
        json!({"step": "claim"})
    );
    let wait = FleetTokenStep::Wait { seconds: 0.25 };
    assert_eq!(
        serde_json::to_value(&wait).expect("json"),
        json!({"step": "wait", "seconds": 0.25})
    );
    // Printed, a command shows its name and first key only (a publish carries the token).
    let set = FleetTokenStep::Command {
        command: vec!["SET".into(), "p:lock".into(), "owner-1".into(), "NX".into()],
    };
    let eval = FleetTokenStep::Command {
        command: ["EVAL", "script", "2", "p:token", "p:lock", "the-token"]
            .map(String::from)
            .to_vec(),
    };
    let (set, eval) = (format!("{set:?}"), format!("{eval:?}"));
    assert!(
        set.contains("\"p:lock\"") && !set.contains("owner-1") && !set.contains("NX"),
        "{set}"
    );
    assert!(
        eval.contains("\"p:token\"") && !eval.contains("the-token") && !eval.contains("script"),
        "{eval}"
    );
    let failed = FleetTokenStep::Failed {
        reason: "no".into(),
    };
    assert_eq!(
        serde_json::to_value(&failed).expect("json"),
        json!({"step": "failed", "reason": "no"})
    );
}

/// `report` takes what the pending step can have become, nothing else: a reply to a `Send`,
/// a response to a `Reserve`, or any outcome with nothing pending is `invalid_argument`, and
/// the machine goes on as if it had not been given.
#[test]
fn report_takes_only_the_pending_steps_outcome() {
    let now = 1_763_900_000.0;
    let budget = RateBudget::new(&[("api_client", 2, Some(60))]).unwrap();
    let mut session = Fleet::new(Some("rk:t:")).unwrap().session(Some(budget));
    session.store_token(BearerToken::enterprise("tok-1"), None);
    let mut call = Call::new(
        "listEnterpriseCountries",
        RequestParams::default(),
        CallOptions::default(),
    )
    .unwrap();
    let none: &[(String, String)] = &[];
    let response = StepOutcome::Response {
        status: 200,
        headers: none,
        body: b"[]",
    };
    let invalid = |r: Result<(), royaltykit::ArgumentError>| {
        let e = royaltykit::Error::from(r.expect_err("refused"));
        assert_eq!(e.code(), "invalid_argument", "{e}");
    };
    invalid(call.report(response, now)); // nothing pending yet
    assert!(matches!(
        call.next_in(now, &mut session).unwrap(),
        Step::Reserve { .. }
    ));
    invalid(call.report(response, now));
    call.report(reply_of(Some("ok")), now).unwrap();
    assert!(matches!(
        call.next_in(now, &mut session).unwrap(),
        Step::Send { .. }
    ));
    invalid(call.report(reply_of(Some("ok")), now));
    call.report(response, now).unwrap();
    assert!(matches!(
        call.next_in(now, &mut session).unwrap(),
        Step::Done { .. }
    ));
}

/// An outcome's `Debug` shows what it is, never the body or the headers (a token exchange's
/// response carries the token).
#[test]
fn an_outcome_prints_no_body_and_no_header() {
    let headers = [("Set-Cookie".to_owned(), "s=secret".to_owned())];
    let body = br#"{"access_token":"tok_x"}"#;
    let shown = |o: StepOutcome<'_, [(String, String)]>| format!("{o:?}");
    assert_eq!(
        shown(StepOutcome::Response {
            status: 200,
            headers: &headers,
            body
        }),
        "Response { status: 200, body_bytes: 24, .. }"
    );
    assert_eq!(
        shown(StepOutcome::Streamed {
            status: 200,
            headers: &headers,
            length: 7
        }),
        "Streamed { status: 200, length: 7, .. }"
    );
    assert_eq!(shown(UNREACHABLE), "NoResponse(ConnectFailed)");
    assert_eq!(shown(reply_of(None)), "Reply(None)");
}

/// A receipt's `report` takes what the pending step can have become and refuses the rest (the
/// receipt unchanged): a `Done` for a claim, a mark in a plain receipt, a failed wait.
#[test]
fn a_receipt_reports_only_the_pending_steps_outcome() {
    let body = br#"{"event":"ddex.import.completed","resource":{"type":"ddex_message","reference":"m1","url":"/api/v1/ddex/messages/m1"},"occurred_at":"2026-11-22T04:00:00Z"}"#;
    let signed =
        royaltykit::webhook::sign(&["whsec_report"], body, 1_763_784_000, "dlv_r").unwrap();
    let delivery = WebhookReceiver::new(
        &[WebhookSecret::new("whsec_report", None)],
        VerifyOptions::default(),
        "ns",
    )
    .unwrap()
    .receive(&signed.pairs(), body, 1_763_784_000)
    .delivery()
    .unwrap()
    .clone();
    let mut plain =
        royaltykit::machine::WebhookReceipt::new("ns", Ok(delivery.clone()), false).unwrap();
    refused(plain.report(ReceiptOutcome::Done)); // a claim is answered with its state
    plain
        .report(ReceiptOutcome::Claimed(ClaimState::New))
        .unwrap();
    assert!(matches!(plain.next(), ReceiptStep::RunHandler {}));
    plain.report(ReceiptOutcome::Done).unwrap();
    refused(plain.report(ReceiptOutcome::Marked(true))); // a plain receipt's commit is no mark
    plain.report(ReceiptOutcome::Failed).unwrap(); // the store is down: wait, then again
    assert!(matches!(plain.next(), ReceiptStep::Wait { .. }));
    refused(plain.report(ReceiptOutcome::Failed));
    plain.report(ReceiptOutcome::Done).unwrap();
    plain.report(ReceiptOutcome::Done).unwrap();
    assert!(matches!(
        plain.next(),
        ReceiptStep::Reply { status: 200, .. }
    ));
    assert_eq!(plain.outcome(), Some("processed"));

    let mut tx = royaltykit::machine::WebhookReceipt::new("ns", Ok(delivery), false)
        .unwrap()
        .transactional();
    for (outcome, step) in [
        (ReceiptOutcome::Claimed(ClaimState::New), "begin"),
        (ReceiptOutcome::Done, "run_handler"),
        (ReceiptOutcome::Done, "commit"),
    ] {
        tx.report(outcome).unwrap();
        assert_eq!(serde_json::to_value(tx.next()).unwrap()["step"], step);
    }
    refused(tx.report(ReceiptOutcome::Done)); // the mark says whether it changed a row
    tx.report(ReceiptOutcome::Marked(false)).unwrap(); // the claim was lost: roll back, release
    tx.report(ReceiptOutcome::Failed).unwrap(); // a failed rollback is as good as done
    assert!(matches!(tx.next(), ReceiptStep::Release { .. }));
    tx.report(ReceiptOutcome::Failed).unwrap();
    assert!(matches!(tx.next(), ReceiptStep::Reply { status: 503, .. }));
    assert_eq!(tx.outcome(), Some("claim_lost"));
}

/// That an input was refused as `invalid_argument`.
fn refused<T: std::fmt::Debug>(r: Result<T, royaltykit::ArgumentError>) {
    assert_eq!(
        royaltykit::Error::from(r.expect_err("refused")).code(),
        "invalid_argument"
    );
}

/// A receipt's outcome as Python names it: each form the core reads, and the rest
/// refused (an unknown name, a value its name does not take or lacks, an unknown state).
#[test]
fn a_receipt_outcome_is_read_from_its_parts() {
    use ReceiptOutcome as O;
    let read = |kind, state, flag| O::from_parts(kind, state, flag).ok();
    assert_eq!(read("done", None, None), Some(O::Done));
    assert_eq!(read("failed", None, None), Some(O::Failed));
    assert_eq!(read("cancelled", None, None), Some(O::Cancelled));
    assert_eq!(
        read("claimed", Some("in_progress"), None),
        Some(O::Claimed(ClaimState::InProgress))
    );
    assert_eq!(read("marked", None, Some(false)), Some(O::Marked(false)));
    assert_eq!(read("enqueued", None, Some(true)), Some(O::Enqueued(true)));
    for (kind, state, flag) in [
        ("Done", None, None),
        ("", None, None),
        ("done", Some("new"), None),
        ("failed", None, Some(true)),
        ("claimed", None, None),
        ("claimed", Some("gone"), None),
        ("claimed", None, Some(true)),
        ("marked", None, None),
        ("marked", Some("true"), None),
        ("enqueued", Some("new"), Some(true)),
    ] {
        refused(O::from_parts(kind, state, flag));
    }
}

/// A receipt's outcome as Node gives it, in JSON: each form the core reads, and the rest
/// refused, with a refusal that never echoes the text.
#[test]
fn a_receipt_outcome_is_read_from_its_json() {
    use ReceiptOutcome as O;
    let read = |json| O::from_json(json).ok();
    assert_eq!(read(r#""done""#), Some(O::Done));
    assert_eq!(read(r#""failed""#), Some(O::Failed));
    assert_eq!(read(r#""cancelled""#), Some(O::Cancelled));
    assert_eq!(
        read(r#"{"claimed":"new"}"#),
        Some(O::Claimed(ClaimState::New))
    );
    assert_eq!(
        read(r#"{"claimed":"in_progress"}"#),
        Some(O::Claimed(ClaimState::InProgress))
    );
    assert_eq!(read(r#"{"marked":false}"#), Some(O::Marked(false)));
    assert_eq!(read(r#"{"enqueued":true}"#), Some(O::Enqueued(true)));
    for json in [
        r#""Done""#,
        "\"\"",
        r#"{"claimed":"gone"}"#,
        r#"{"claimed":null}"#,
        r#"{"marked":"true"}"#,
        r#"{"marked":true,"enqueued":true}"#,
        r#"{"enqueued":1}"#,
        r#"{}"#,
        "[]",
        "not json",
    ] {
        let e = O::from_json(json).expect_err(json);
        assert!(!e.to_string().contains("gone"), "{e}");
        refused(Err::<O, _>(e));
    }
}

/// An inbox worker's `report` takes what the pending step can have become and refuses the
/// rest (the worker unchanged): a `Done` for a claim, a failed idle wait.
#[test]
fn an_inbox_worker_reports_only_the_pending_steps_outcome() {
    let options = InboxOptions {
        max_attempts: Some(2),
        poll_seconds: Some(5.0),
        transactional: Some(true),
        drain: Some(false),
    };
    let mut w = InboxWorker::new(&options, 7).unwrap();
    refused(w.report(InboxOutcome::Done, 100.0)); // a claim is answered with what it claimed
    w.report(InboxOutcome::Claimed(None), 100.0).unwrap();
    assert!(matches!(w.next(), InboxStep::Idle { .. }));
    refused(w.report(InboxOutcome::Failed("no".into()), 100.0)); // a wait cannot fail
    w.report(InboxOutcome::Done, 105.0).unwrap();
    let entry = InboxEntry {
        key: "k".into(),
        delivery_id: "d".into(),
        event: "ping".into(),
        body: "{}".into(),
        attempts: 1,
    };
    w.report(InboxOutcome::Claimed(Some(entry)), 105.0).unwrap();
    w.report(InboxOutcome::Done, 105.0).unwrap(); // the transaction is open
    w.report(InboxOutcome::Failed("E: the handler failed".into()), 105.0)
        .unwrap();
    assert!(matches!(w.next(), InboxStep::Rollback {}));
    w.report(InboxOutcome::Failed("the connection is gone".into()), 105.0)
        .unwrap(); // as good as rolled back
    match w.next() {
        InboxStep::Settle { poison, error, .. } => {
            assert!(!poison);
            assert_eq!(error, "E: the handler failed");
        }
        other => panic!("{other:?}"),
    }
    w.report(InboxOutcome::Done, 105.0).unwrap();
    assert_eq!((w.processed(), w.retried(), w.poisoned()), (0, 1, 0));
}

/// A fleet token refresh's `report` refuses what the pending step cannot have become (the
/// refresh unchanged): a wait over or a token while a command is pending.
#[test]
fn a_fleet_refresh_reports_only_the_pending_steps_outcome() {
    let mut session = Fleet::new(Some("rk:r:")).unwrap().session(None);
    let mut ft = FleetToken::new(&session, catalog::Api::Enterprise, None, 9, 1_000.0).unwrap();
    assert!(matches!(ft.next(), FleetTokenStep::Command { .. }));
    refused(ft.report(FleetOutcome::Done, &mut session, 1_000.0));
    let token = BearerToken::enterprise("t");
    refused(ft.report(FleetOutcome::Token(token, None), &mut session, 1_000.0));
    ft.report(FleetOutcome::NoResponse, &mut session, 1_000.0)
        .unwrap(); // on its own, then
    assert!(matches!(ft.next(), FleetTokenStep::Exchange {}));
}

/// A recovery run's `report` refuses what the pending step cannot have become (the run
/// unchanged): a check's states or a replay's answer while a page is fetched.
#[test]
fn a_recovery_run_reports_only_the_pending_steps_outcome() {
    let mut run =
        Recovery::new("sub_1", "ns", 1_000.0, 2_000.0, RecoveryOptions::default()).unwrap();
    assert!(matches!(run.next(), RecoveryStep::Fetch { .. }));
    refused(run.report(RecoveryOutcome::Checked(&[ClaimState::New])));
    refused(run.report(RecoveryOutcome::Replayed(b"{}")));
    refused(run.report(RecoveryOutcome::ReplayFailed("call_failed")));
    run.report(RecoveryOutcome::Page(
        br#"{"data":[],"meta":{"current_page":1,"last_page":1}}"#,
    ))
    .unwrap();
    assert!(matches!(run.next(), RecoveryStep::Check { keys } if keys.is_empty()));
    refused(run.report(RecoveryOutcome::Page(b"{}"))); // a page while the check is pending
    run.report(RecoveryOutcome::Checked(&[])).unwrap();
    assert!(matches!(run.next(), RecoveryStep::Done { .. }));
}
