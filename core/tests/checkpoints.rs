//! Checkpoints an export job saved (`ExportJob::save`), kept in `tests/vectors/checkpoints.json`
//! as an earlier build wrote them: every language's client resumes them (`resume=`), so an export
//! started in one language is finished in another. Here: each still resumes, keeps its export id,
//! and goes on with the request the file names, never a second create on a guess. Also: when a
//! job gives its checkpoint (`ExportJob::checkpoint`).
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

/// A new job, without its token.
fn untokened(keyed: bool) -> ExportJob {
    ExportJob::new(ExportJobOptions {
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
    .unwrap()
}

fn job(keyed: bool) -> ExportJob {
    let mut job = untokened(keyed);
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

/// `ExportJob::checkpoint`: a text before each send and each wait, once per step, none at a
/// token refresh or an end, none when the state is the one last given or resumed from.
#[test]
fn the_job_gives_a_checkpoint_before_each_send_and_wait_once() {
    let mut j = untokened(true);
    assert_eq!(j.checkpoint(), None, "no step given yet");
    assert!(matches!(
        j.next(T0, None).unwrap(),
        Step::RefreshToken { .. }
    ));
    assert_eq!(j.checkpoint(), None, "a token refresh is not a send");
    j.token(BearerToken::reports("tok_checkpoint", TENANT), None);
    let Step::Send { request } = j.next(T0, None).unwrap() else {
        panic!("the create is sent");
    };
    assert_eq!(request.operation_id, "createPlatformExport");
    let before_create = j.checkpoint().expect("a checkpoint before the create");
    assert_eq!(before_create, j.save());
    assert!(!before_create.contains("tok_checkpoint"), "no token in it");
    assert_eq!(j.checkpoint(), None, "once per step");
    // The create rate limited: the pause is a step a checkpoint is kept before.
    j.response(429, &[("Retry-After", "5")], b"", T0).unwrap();
    assert_eq!(j.next(T0, None).unwrap(), Step::Wait { seconds: 5.0 });
    let before_pause = j.checkpoint().expect("a checkpoint before the pause");
    assert_ne!(before_pause, before_create);
    // Asked for the step again at the same moment: the same state, no new checkpoint.
    assert_eq!(j.next(T0, None).unwrap(), Step::Wait { seconds: 5.0 });
    assert_eq!(j.checkpoint(), None, "unchanged since the last one given");
    // Resumed from the pause's checkpoint at once: the same state, not given again.
    let mut same = ExportJob::resume(&before_pause).unwrap();
    assert_eq!(same.checkpoint(), None, "no step given yet");
    assert_eq!(same.next(T0, None).unwrap(), Step::Wait { seconds: 5.0 });
    assert_eq!(
        same.checkpoint(),
        None,
        "the text resumed from is not given again"
    );
    // Resumed 2 s later: the rest of the pause; its time budget starts again, a new state.
    let mut r = ExportJob::resume(&before_pause).unwrap();
    assert_eq!(r.next(T0 + 2.0, None).unwrap(), Step::Wait { seconds: 3.0 });
    let resumed = r.checkpoint().expect("the restarted time budget is kept");
    assert_eq!(
        ExportJob::resume(&resumed)
            .unwrap()
            .next(T0 + 2.0, None)
            .unwrap(),
        Step::Wait { seconds: 3.0 }
    );
    r.token(BearerToken::reports("tok_checkpoint", TENANT), None);
    let Step::Send { .. } = r.next(T0 + 5.0, None).unwrap() else {
        panic!("the create is sent again after the pause");
    };
    assert!(
        r.checkpoint().is_some(),
        "a checkpoint before the second create"
    );
    r.response(
        201,
        &JSON,
        br#"{"id":"exp_9","status":"ready","download_url":"https://example.test/a"}"#,
        T0 + 5.0,
    )
    .unwrap();
    let mut now = T0 + 5.0;
    for _ in 0..20 {
        let step = r.next(now, None).unwrap();
        let given = r.checkpoint();
        match step {
            Step::Send { .. } | Step::Wait { .. } => {
                assert_eq!(given.as_deref(), Some(r.save().as_str()), "before {step:?}")
            }
            Step::RefreshToken { .. } => {
                assert_eq!(given, None);
                r.token(BearerToken::reports("tok_checkpoint", TENANT), None);
                continue;
            }
            end => {
                assert_eq!(given, None, "no checkpoint at the end: {end:?}");
                return;
            }
        }
        match step {
            Step::Wait { seconds } => now += seconds,
            _ => r
                .response(
                    200,
                    &JSON,
                    br#"{"id":"exp_9","status":"ready","download_url":"https://example.test/a"}"#,
                    now,
                )
                .unwrap(),
        }
    }
    panic!("the job did not end");
}
