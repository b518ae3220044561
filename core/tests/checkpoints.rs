//! Checkpoints an export job saved (`ExportJob::save`), kept in `tests/vectors/checkpoints.json`
//! as an earlier build wrote them: every language's client resumes them (`resume=`), so an export
//! started in one language is finished in another. Here: each still resumes, keeps its export id,
//! and goes on with the request the file names, never a second create on a guess.
//!
//! `ROYALTYKIT_WRITE_CHECKPOINTS=1 cargo test -p royaltykit --test checkpoints` writes the file
//! again (only when the saved format changes on purpose: old checkpoints must keep resuming).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use royaltykit::machine::{CallOptions, ExportJob, ExportJobOptions, Step};
use royaltykit::token::BearerToken;
use serde_json::{json, Value};

const TENANT: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
const BODY: &str = r#"{"export_class":"sales","format":"csv"}"#;
const T0: f64 = 1_798_761_600.0;
const JSON: [(&str, &str); 1] = [("Content-Type", "application/json")];

fn path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/checkpoints.json")
}

fn job(keyed: bool) -> ExportJob {
    let mut job = ExportJob::new(ExportJobOptions {
        tenant_id: TENANT.into(),
        body: BODY.as_bytes().to_vec(),
        idempotency_header: keyed.then(|| "Idempotency-Key".into()),
        request_id: Some("etl-2026-11".into()),
        call: CallOptions {
            seed: 11,
            ..CallOptions::default()
        },
        ..ExportJobOptions::default()
    })
    .unwrap();
    job.token(BearerToken::reports("tok_checkpoint", TENANT), None);
    job
}

/// The next request the job sends from `now` on (waits are waited), with the time it is sent.
fn next_send(job: &mut ExportJob, mut now: f64) -> (royaltykit::request::RequestDescriptor, f64) {
    loop {
        match job.next(now, None).unwrap() {
            Step::Send { request } => return (request, now),
            Step::Wait { seconds } => now += seconds,
            Step::RefreshToken { .. } => {
                job.token(BearerToken::reports("tok_checkpoint", TENANT), None)
            }
            other => panic!("unexpected step {other:?}"),
        }
    }
}

/// The checkpoints, as the current build saves them.
fn written() -> Value {
    let mut out = Vec::new();
    // A: a keyed create in flight.
    let mut a = job(true);
    let (create, _) = next_send(&mut a, T0);
    assert_eq!(create.operation_id, "createPlatformExport");
    out.push(json!({
        "comment": "saved as the create (with its idempotency key) was sent: resumed, the create is sent again with the same key",
        "keyed": true, "export_id": null, "checkpoint": a.save(),
        "next": {"method": "POST", "path": "/api/platform/v1/exports", "idempotency_key": create.idempotency_key},
    }));
    // B: the export is known and queued; a read is in flight.
    let (_, now) = next_send(&mut a, T0);
    a.response(
        201,
        &JSON,
        br#"{"id":"7c9e6679-7425-40de-944b-e07072fc6b14","status":"queued"}"#,
        now,
    )
    .unwrap();
    let (read, _) = next_send(&mut a, now);
    assert_eq!(read.operation_id, "getPlatformExport");
    out.push(json!({
        "comment": "saved while polling the created export: resumed, it reads the same export, never creates one",
        "keyed": true, "export_id": "7c9e6679-7425-40de-944b-e07072fc6b14", "checkpoint": a.save(),
        "next": {"method": "GET", "path": read.path},
    }));
    // C: an unkeyed create in flight, after the listing of the exports before it.
    let mut c = job(false);
    let (list, now) = next_send(&mut c, T0);
    assert_eq!(list.operation_id, "listPlatformExports");
    c.response(200, &JSON, br#"{"data":[]}"#, now).unwrap();
    let (create, _) = next_send(&mut c, now);
    assert_eq!(create.operation_id, "createPlatformExport");
    out.push(json!({
        "comment": "saved as a create without an idempotency key was sent: resumed, the exports are listed to find it, never created blindly",
        "keyed": false, "export_id": null, "checkpoint": c.save(),
        "next": {"method": "GET", "path": "/api/platform/v1/exports"},
    }));
    json!({
        "description": "checkpoints an export job saved (ExportJob::save); every client resumes them. Written by core/tests/checkpoints.rs",
        "tenant_id": TENANT, "body": BODY, "start": T0,
        "checkpoints": out,
    })
}

#[test]
fn saved_checkpoints_resume_and_go_on_without_a_second_create() {
    if std::env::var_os("ROYALTYKIT_WRITE_CHECKPOINTS").is_some() {
        let text = serde_json::to_string_pretty(&written()).unwrap();
        std::fs::write(path(), text + "\n").unwrap();
    }
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path()).unwrap()).unwrap();
    let checkpoints = file["checkpoints"].as_array().unwrap();
    assert_eq!(checkpoints.len(), 3);
    for c in checkpoints {
        let mut job = ExportJob::resume(c["checkpoint"].as_str().unwrap()).unwrap();
        assert_eq!(job.export_id(), c["export_id"].as_str(), "{}", c["comment"]);
        // resumed in another process, later: a request in flight counts as lost
        let (request, _) = next_send(&mut job, file["start"].as_f64().unwrap() + 3_600.0);
        let next = &c["next"];
        assert_eq!(
            request.method,
            next["method"].as_str().unwrap(),
            "{}",
            c["comment"]
        );
        assert_eq!(
            request.path,
            next["path"].as_str().unwrap(),
            "{}",
            c["comment"]
        );
        if let Some(key) = next["idempotency_key"].as_str() {
            assert_eq!(request.idempotency_key.as_deref(), Some(key));
        }
        // never a token in a checkpoint
        assert!(!c["checkpoint"].as_str().unwrap().contains("tok_checkpoint"));
    }
}
