//! What the simulated host does and records: the outcome of a send, the checks every request
//! passes, and a transcript of the run in the form of tests/vectors/machines.json's `session`
//! group, so a failing seed replays in every language.

use crate::Violation;
use royaltykit::machine::{CallFailure, Step, StepOutcome};
use royaltykit::request::RequestDescriptor;
use royaltykit::retry::TransportFailure;
use serde_json::{json, Value};

/// What a send gave the host.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A response.
    Response {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// No response: `connect_failed`, `timeout` or `connection_lost`.
    Transport(&'static str),
}

impl Outcome {
    pub fn json(status: u16, body: &Value) -> Self {
        Self::Response {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub fn status(status: u16, headers: Vec<(String, String)>) -> Self {
        Self::Response {
            status,
            headers,
            body: br#"{"message":"simulated"}"#.to_vec(),
        }
    }
}

/// The bearer token a request carries (empty without one).
pub fn bearer_of(r: &RequestDescriptor) -> String {
    r.headers
        .iter()
        .find(|(n, _)| n == "Authorization")
        .map(|(_, v)| v.trim_start_matches("Bearer ").to_owned())
        .unwrap_or_default()
}

/// The machines a send's outcome is reported to (their one input after a step).
pub trait Reported {
    fn report(&mut self, outcome: StepOutcome<'_, [(String, String)]>, now: f64);
}

impl Reported for royaltykit::machine::Call {
    fn report(&mut self, outcome: StepOutcome<'_, [(String, String)]>, now: f64) {
        royaltykit::machine::Call::report(self, outcome, now).unwrap();
    }
}

impl Reported for royaltykit::machine::ExportJob {
    fn report(&mut self, outcome: StepOutcome<'_, [(String, String)]>, now: f64) {
        royaltykit::machine::ExportJob::report(self, outcome, now).unwrap();
    }
}

/// Reports a send's outcome to `machine`.
pub fn report<M: Reported>(machine: &mut M, outcome: &Outcome, now: f64) {
    match outcome {
        Outcome::Transport(kind) => machine.report(
            StepOutcome::NoResponse(TransportFailure::parse(kind).unwrap()),
            now,
        ),
        Outcome::Response {
            status,
            headers,
            body,
        } => machine.report(
            StepOutcome::Response {
                status: i64::from(*status),
                headers,
                body,
            },
            now,
        ),
    }
}

/// Every request the machines give the host: a path on the API's own origin (never a scheme or
/// an authority), the exchange's credentials only on the exchange, a bearer token everywhere
/// else and never in the query.
pub fn check_request(r: &RequestDescriptor) -> Result<(), Violation> {
    let target = r.path_and_query();
    if !r.path.starts_with("/api/") || r.path.starts_with("//") || r.path.contains("://") {
        return Err(Violation::new(
            "no request names another origin",
            format!("{} {target}", r.method),
        ));
    }
    let header = |name: &str| {
        r.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let exchange = r.operation_id.starts_with("exchange");
    let credentials = header("X-Api-Key").is_some()
        || header("X-Api-Secret").is_some()
        || header("Authorization").is_some_and(|a| a.starts_with("Basic "));
    let bearer = header("Authorization").is_some_and(|a| a.starts_with("Bearer "));
    if credentials != exchange || (exchange && bearer) {
        return Err(Violation::new(
            "credentials go only on the token exchange, a bearer token only on API calls",
            format!("{} {target} ({})", r.method, r.operation_id),
        ));
    }
    if r.query.to_ascii_lowercase().contains("token") {
        return Err(Violation::new(
            "tokens never go into a query string",
            target,
        ));
    }
    Ok(())
}

fn send_view(r: &RequestDescriptor) -> Value {
    let token = r
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Authorization"))
        .map(|(_, v)| v.trim_start_matches("Bearer ").to_owned());
    json!({"step": "send", "method": r.method, "target": r.path_and_query(), "token": token,
           "idempotency_key": if r.idempotency_key_sent { r.idempotency_key.clone() } else { None }})
}

fn fail_view(f: &CallFailure) -> Value {
    json!({"step": "fail", "rule": f.rule, "status": f.status,
           "code": f.error.as_ref().map(|e| e.code().to_owned()),
           "transport": f.transport.map(|t| t.as_str()), "retry_after_seconds": f.retry_after_seconds})
}

pub fn call_view(step: &Step) -> Value {
    match step {
        Step::Send { request } => send_view(request),
        Step::Wait { seconds } => json!({"step": "wait", "seconds": seconds}),
        Step::RefreshToken { .. } => json!({"step": "refresh_token"}),
        Step::AwaitToken { seconds } => json!({"step": "await_token", "seconds": seconds}),
        Step::Reserve { command } => json!({"step": "reserve", "keys": command.get(2)}),
        Step::Reconcile { reconcile, .. } => {
            json!({"step": "reconcile", "reconcile": reconcile.as_str()})
        }
        Step::Done { response, .. } => {
            json!({"step": "done", "status": response.status, "body": String::from_utf8_lossy(&response.body)})
        }
        Step::Fail { failure, .. } => fail_view(failure),
    }
}

pub fn job_view(step: &Step) -> Value {
    match step {
        Step::Send { request } => send_view(request),
        Step::Wait { seconds } => json!({"step": "wait", "seconds": seconds}),
        Step::RefreshToken { .. } => json!({"step": "refresh_token"}),
        Step::AwaitToken { seconds } => json!({"step": "await_token", "seconds": seconds}),
        Step::Reserve { command } => json!({"step": "reserve", "keys": command.get(2)}),
        Step::Done {
            export_id,
            response,
            ..
        } => {
            json!({"step": "done", "export_id": export_id.as_deref().unwrap_or_default(), "artifact": String::from_utf8_lossy(&response.body)})
        }
        Step::Reconcile {
            reconcile,
            candidates,
            ..
        } => {
            json!({"step": "reconcile", "reconcile": reconcile.as_str(), "candidates": candidates})
        }
        Step::Fail {
            stage,
            export_id,
            failure,
        } => {
            let mut v = fail_view(failure);
            v["stage"] = stage.as_deref().unwrap_or_default().into();
            v["export_id"] = export_id.clone().into();
            v
        }
    }
}

/// A run written down as a `session` transcript: the machines, the script the host played and
/// the steps it saw.
pub struct Recorder {
    api: &'static str,
    tenant: String,
    budget: Value,
    start: f64,
    now: f64,
    machines: Vec<Value>,
    script: Vec<Value>,
    steps: Vec<Value>,
}

impl Recorder {
    pub fn new(api: &'static str, tenant: &str, budget: Value, start: f64) -> Self {
        Self {
            api,
            tenant: tenant.to_owned(),
            budget,
            start,
            now: start,
            machines: Vec::new(),
            script: Vec::new(),
            steps: Vec::new(),
        }
    }

    pub fn machine(&mut self, spec: Value) {
        self.machines.push(spec);
    }

    fn at(&mut self, now: f64) {
        if now > self.now {
            self.script.push(json!({"advance": now - self.now}));
            self.now = now;
        }
    }

    pub fn next(&mut self, machine: usize, now: f64, mut view: Value) {
        self.at(now);
        self.script.push(json!({"next": machine}));
        view["machine"] = machine.into();
        self.steps.push(view);
    }

    pub fn respond(&mut self, machine: usize, now: f64, outcome: &Outcome, streamed: bool) {
        self.at(now);
        let mut e = match outcome {
            Outcome::Transport(kind) => json!({"transport": kind}),
            Outcome::Response {
                status,
                headers,
                body,
            } => {
                json!({"response": {"status": status, "headers": headers, "body": String::from_utf8_lossy(body)}})
            }
        };
        e["respond"] = machine.into();
        if streamed {
            e["streamed"] = true.into();
        }
        self.script.push(e);
    }

    pub fn token(&mut self, now: f64, value: &str, refresh_at: Option<f64>) {
        self.at(now);
        self.script
            .push(json!({"token": value, "valid_for": refresh_at.map(|r| r - now)}));
    }

    pub fn exchange_failed(&mut self, now: f64, reason: &str) {
        self.at(now);
        self.script.push(json!({"exchange_failed": reason}));
    }

    /// The run as a `session` transcript, with the session's count of exchanges.
    pub fn transcript(&self, comment: &str, exchanges: u64) -> Value {
        json!({
            "comment": comment,
            "spec": "DESIGN, Sessions, events and simulation (a simulated seed)",
            "input": {"api": self.api, "tenant_id": self.tenant, "budget": self.budget, "start": self.start,
                      "machines": self.machines, "script": self.script},
            "expected": {"steps": self.steps, "exchanges": exchanges},
        })
    }
}
