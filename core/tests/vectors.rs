//! Runs every shared vector file in tests/vectors/ (the same files the Node, Python and Kotlin
//! suites run) through the generic runner in `common`. Expected values come from the stdlib
//! generators in tests/vectors/, never from this crate. This file is only the adapter table:
//! how each `function` a group names is called, and the JSON view of what it returns.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::result_large_err
)]

use royaltykit::request::{RequestDescriptor, RequestParams};
use royaltykit::webhook::SigningSecret;
use royaltykit::{api_error, catalog, dedup, export, receiver, retry, token, webhook, Error};
use serde_json::{json, Value};

mod common;
use common::{bytes, pairs, run, strings, Outcome};

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap()
}
fn opt_int(v: &Value) -> Option<i64> {
    v.as_i64()
}
fn text(v: &Value) -> &str {
    v.as_str().unwrap()
}
fn opt_text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}
/// The JSON view of a result the core serializes itself (camelCase records, wire-name enums).
fn view<T: serde::Serialize, E: Into<Error>>(r: Result<T, E>) -> Outcome {
    r.map(|v| serde_json::to_value(v).unwrap())
        .map_err(Into::into)
}

/// HMAC-SHA256 keyed afresh per call from the secret bytes: a stand-in for a host primitive.
struct ExternalMac<'a>(&'a [webhook::WebhookSecret]);

impl webhook::SignatureMac for ExternalMac<'_> {
    fn mac(&mut self, secret_index: usize, timestamp: &str, body: &[u8]) -> Option<[u8; 32]> {
        use hmac::{KeyInit, Mac};
        let key = self.0.get(secret_index)?.secret_bytes();
        let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).ok()?;
        m.update(timestamp.as_bytes());
        m.update(b".");
        m.update(body);
        Some(m.finalize().into_bytes().into())
    }
}

/// A vector's secrets: strings (no end of validity) or `{secret, valid_until}`.
fn secrets(v: &Value) -> Vec<webhook::WebhookSecret> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| match s {
            Value::String(s) => webhook::WebhookSecret::new(s.as_str(), None),
            o => webhook::WebhookSecret::new(text(&o["secret"]), o["valid_until"].as_i64()),
        })
        .collect()
}

/// `webhook::verify`; the reusable verifier and both with the MAC delegated to another HMAC
/// implementation (what the Node binding does with node:crypto) must give the same outcome.
fn verify_webhook(i: &Value) -> Outcome {
    let (headers, body, secrets) = (
        pairs(&i["headers"]),
        bytes(&i["body"]),
        secrets(&i["secrets"]),
    );
    let now = int(&i["now"]);
    let opts = webhook::VerifyOptions::with_defaults(
        opt_int(&i["tolerance"]),
        opt_int(&i["max_body_bytes"]),
    )?;
    let got = webhook::verify(&headers, &body, &secrets, now, opts);
    let code = |r: &Result<webhook::VerifiedWebhook, webhook::WebhookError>| {
        r.as_ref()
            .map(|v| v.content_key.clone())
            .map_err(|e| e.code())
    };
    let mut external = ExternalMac(&secrets);
    let delegated = webhook::verify_with_mac(&headers, &body, &secrets, now, opts, &mut external);
    assert_eq!(code(&delegated), code(&got), "verify_with_mac disagrees");
    if let Ok(verifier) = webhook::WebhookVerifier::new(&secrets, opts) {
        assert_eq!(
            code(&verifier.verify(&headers, &body, now)),
            code(&got),
            "WebhookVerifier disagrees"
        );
        let again = verifier.verify_with_mac(&headers, &body, now, &mut external);
        assert_eq!(
            code(&again),
            code(&got),
            "WebhookVerifier::verify_with_mac disagrees"
        );
    }
    view(got)
}

fn descriptor(d: &RequestDescriptor) -> Value {
    assert!(
        !format!("{d:?}").contains("tok_ABC") && !format!("{d:?}").contains("sec_1"),
        "Debug hides credentials"
    );
    json!({
        "method": d.method, "path": d.path, "query": d.query,
        "headers": d.headers.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>(),
        "body": d.body.as_ref().map(|b| json!({"utf8": String::from_utf8_lossy(b)})),
        "idempotency_key": d.idempotency_key, "idempotency_key_sent": d.idempotency_key_sent,
    })
}

fn build_request(i: &Value) -> Outcome {
    let p = &i["params"];
    let path = p["path"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), text(v).into()))
        .collect();
    let params = RequestParams {
        path,
        query: pairs(&p["query"]),
        body: p["body"].is_object().then(|| bytes(&p["body"])),
        token: p["token"].is_object().then(|| {
            let value = text(&p["token"]["value"]);
            let t = match text(&p["token"]["api"]) {
                "enterprise" => token::BearerToken::enterprise(value),
                _ => token::BearerToken::new(royaltykit::catalog::Api::Reports, value),
            };
            match opt_text(&p["token"]["tenant_id"]) {
                Some(tenant) => t.for_tenant(tenant),
                None => t,
            }
        }),
        tenant_id: opt_text(&p["tenant_id"]),
        user_id: opt_text(&p["user_id"]),
        idempotency_key: opt_text(&p["idempotency_key"]),
        idempotency_header: opt_text(&p["idempotency_header"]),
        request_id: opt_text(&p["request_id"]),
        key_namespace: opt_text(&p["key_namespace"]),
        key_random: p["key_random"]
            .as_str()
            .map(|h| bytes(&json!({ "hex": h })).try_into().unwrap()),
    };
    Ok(descriptor(&royaltykit::request::build_request(
        text(&i["operation_id"]),
        &params,
    )?))
}

fn parse_token_response(i: &Value) -> Outcome {
    let got = token::parse_token_response(
        int(&i["status"]),
        &pairs(&i["headers"]),
        &bytes(&i["body"]),
        &strings(&i["requested_scopes"]),
        text(&i["tenant_id"]),
        int(&i["now"]),
    )??;
    assert!(
        !format!("{got:?}").contains(&got.access_token),
        "Debug hides the token"
    );
    Ok(json!({
        "access_token": got.access_token, "token_type": got.token_type, "expires_in": got.expires_in,
        "expires_at": got.expires_at, "refresh_at": got.refresh_at, "scopes": got.scopes,
        "missing_scopes": got.missing_scopes, "warnings": got.warnings, "tenant_id": got.tenant_id,
    }))
}

fn parse_enterprise_token_response(i: &Value) -> Outcome {
    let got = token::parse_enterprise_token_response(
        int(&i["status"]),
        &pairs(&i["headers"]),
        &bytes(&i["body"]),
        int(&i["now"]),
    )??;
    Ok(json!({"token": got.token, "expires_at": got.expires_at, "refresh_at": got.refresh_at}))
}

fn decide_retry(i: &Value) -> Outcome {
    let input = retry::RetryInput {
        status: opt_int(&i["status"]),
        transport: i["transport"]
            .as_str()
            .map(retry::TransportFailure::parse)
            .transpose()?,
        elapsed_seconds: i["elapsed_seconds"].as_f64().unwrap(),
        token_refreshed: i["token_refreshed"].as_bool().unwrap(),
        idempotency_key_sent: i["idempotency_key_sent"].as_bool().unwrap_or(false),
        random: i["random"].as_f64(),
        now: Some(int(&i["now"])),
        max_attempts: opt_int(&i["max_attempts"]),
        max_elapsed_seconds: i["max_elapsed_seconds"].as_f64(),
        ..retry::RetryInput::new(
            retry::RetryClass::parse(text(&i["retry_class"]))?,
            int(&i["attempt"]),
        )
    };
    view(input.decide(&pairs(&i["headers"]), f64::NAN, 0))
}

fn backoff_delay(i: &Value) -> Outcome {
    let (attempt, random) = (int(&i["attempt"]), i["random"].as_f64().unwrap());
    let Some(p) = i.get("policy") else {
        return view(retry::backoff_delay(attempt, random));
    };
    let steps = p["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    let band = |k: usize| p["band"].as_array().map(|b| b[k].as_f64().unwrap());
    let jitter = p["jitter"].as_str().map(retry::Jitter::parse).transpose()?;
    let policy = retry::BackoffPolicy::from_parts(
        steps,
        band(0),
        band(1),
        jitter,
        p["cap_seconds"].as_f64().unwrap(),
    )?;
    view(policy.delay(attempt, random))
}

/// A new budget, then `try_acquire` per op (`repeat` times, each giving the same decision).
fn rate_budget(i: &Value) -> Outcome {
    let mut budget = match i["preset"].as_str() {
        Some(p) => retry::RateBudget::preset(p)?,
        None => {
            let w: Vec<(String, i64, Option<i64>)> = i["windows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| (text(&w[0]).into(), int(&w[1]), opt_int(&w[2])))
                .collect();
            retry::RateBudget::new(&w)?
        }
    };
    let mut out = Vec::new();
    for op in i["ops"].as_array().unwrap() {
        let decisions: Vec<Value> = (0..op.get("repeat").map_or(1, int))
            .map(|_| serde_json::to_value(budget.try_acquire(int(&op["now"]))).unwrap())
            .collect();
        assert!(
            decisions.windows(2).all(|w| w[0] == w[1]),
            "repeats differ: {decisions:?}"
        );
        out.push(decisions[0].clone());
    }
    Ok(Value::Array(out))
}

/// A new window (absent TTL and lease: the core's defaults), then claim / commit / release.
fn dedup_claims(i: &Value) -> Outcome {
    let (ttl, lease) = (opt_int(&i["ttl_seconds"]), opt_int(&i["lease_seconds"]));
    let mut w = dedup::DedupWindow::with_defaults(int(&i["capacity"]), ttl, lease, [42; 16])?;
    let mut out = Vec::new();
    for op in i["ops"].as_array().unwrap() {
        let (key, now) = (text(&op["key"]), int(&op["now"]));
        out.push(match text(&op["op"]) {
            "claim" => json!(w.claim(key, now)?.as_str()),
            "commit" => json!(w.commit(key, now)?),
            _ => json!(w.release(key, now)?),
        });
    }
    Ok(Value::Array(out))
}

/// A new window, then `check_and_insert` per op.
fn dedup_window(i: &Value) -> Outcome {
    let mut w = dedup::DedupWindow::new(int(&i["capacity"]), int(&i["ttl_seconds"]), [42; 16])?;
    let ops = i["ops"].as_array().unwrap().iter();
    Ok(json!(ops
        .map(|op| w
            .check_and_insert(text(&op["key"]), int(&op["now"]))
            .unwrap())
        .collect::<Vec<_>>()))
}

/// A `parse_api_error` vector's input, parsed.
fn parse_api_error(i: &Value) -> Result<api_error::ApiError, Error> {
    let api = catalog::Api::parse(text(&i["api"]))?;
    Ok(api_error::parse_api_error(
        api,
        int(&i["status"]),
        &pairs(&i["headers"]),
        &bytes(&i["body"]),
        i["operation_id"].as_str(),
        int(&i["now"]),
    )?)
}

fn export_call(function: &str, i: &Value) -> Option<Outcome> {
    let state = || export::ExportState::parse(text(&i["state"]));
    Some(match function {
        "export_state" => view(Ok::<_, Error>(export::export_state_info(text(&i["state"])))),
        "validate_export_command" => (|| {
            let cmd = export::ExportCommand::parse(text(&i["command"]))?;
            Ok(json!(
                export::validate_export_command(&state(), cmd)?.as_str()
            ))
        })(),
        "export_poll_decision" => view(export::export_poll_decision(
            &state(),
            int(&i["attempt"]),
            i["random"].as_f64().unwrap(),
            opt_int(&i["max_polls"]),
        )),
        "check_export_download" => (|| {
            export::check_export_download(
                int(&i["status"]),
                &pairs(&i["headers"]),
                &bytes(&i["body"]),
                0,
            )??;
            Ok(json!("ok"))
        })(),
        "validate_export_list_query" => {
            view(export::validate_export_list_query(&pairs(&i["query"])))
        }
        "step_up_satisfies" => (|| {
            let r = catalog::StepUp::parse(text(&i["requirement"]))?;
            let k = export::StepUpKind::parse(text(&i["kind"]))?;
            view(export::step_up_satisfies(
                r,
                k,
                int(&i["at"]),
                int(&i["now"]),
                int(&i["max_age_seconds"]),
            ))
        })(),
        _ => return None,
    })
}

fn adapter(function: &str, i: &Value) -> Option<Outcome> {
    Some(match function {
        "verify_webhook" => verify_webhook(i),
        "resource_path" => view(
            webhook::resource_path(text(&i["resource_url"])).map(|p| serde_json::json!({"path": p})),
        ),
        "active_secrets" => view(
            webhook::active_secrets(
                text(&i["current"]),
                opt_text(&i["previous"]).as_deref(),
                i["previous_valid_until"].as_i64(),
                int(&i["now"]),
            )
            .map(|secrets| {
                secrets
                    .iter()
                    .map(|s| serde_json::json!({"secret": String::from_utf8_lossy(s.secret()), "valid_until": s.valid_until()}))
                    .collect::<Vec<_>>()
            }),
        ),
        "route_event" => (|| {
            let mut router = webhook::EventRouter::new();
            for r in i["registrations"].as_array().unwrap() {
                if let Some(name) = r["on"].as_str() {
                    router.on(name)?;
                } else if r["on_any"].as_bool() == Some(true) {
                    router.on_any();
                } else {
                    router.otherwise();
                }
            }
            view(Ok::<_, Error>(router.route(text(&i["event"]))))
        })(),
        "revealed_secret" => view(webhook::revealed_secret(&bytes(&i["body"])).map(|r| {
            let secrets: Vec<Value> = r
                .secrets(opt_text(&i["previous"]).as_deref())
                .iter()
                .map(|s| serde_json::json!({"secret": String::from_utf8_lossy(s.secret()), "valid_until": s.valid_until()}))
                .collect();
            serde_json::json!({
                "secrets": secrets,
                "previous_valid_until": r.previous_valid_until,
                "reference": r.reference,
                "record": serde_json::from_str::<Value>(&r.record).unwrap(),
            })
        })),
        "delivery_key" => view(dedup::delivery_key(
            text(&i["namespace"]),
            text(&i["delivery_id"]),
        )),
        "event_key" => view(dedup::event_key_parts(
            text(&i["namespace"]),
            text(&i["name"]),
            text(&i["resource_type"]),
            text(&i["resource_reference"]),
            text(&i["occurred_at"]),
        )),
        "content_key" => view(dedup::content_key(
            text(&i["secret"]),
            text(&i["timestamp"]),
            &bytes(&i["body"]),
        )),
        "idempotency_key" => view(dedup::idempotency_key(
            text(&i["namespace"]),
            text(&i["operation_id"]),
            text(&i["request_id"]),
        )),
        "dedup_window" => dedup_window(i),
        "dedup_claims" => dedup_claims(i),
        "decide_retry" => decide_retry(i),
        "webhook_retry_schedule" => Ok(json!(retry::webhook_retry_schedule())),
        "webhook_next_attempt_at" => view(retry::webhook_next_attempt_at(
            int(&i["first_attempt_at"]),
            int(&i["attempts_made"]),
        )),
        "webhook_gives_up_at" => Ok(json!(retry::webhook_gives_up_at(int(
            &i["first_attempt_at"]
        )))),
        "backoff_delay" => backoff_delay(i),
        "parse_retry_after" => Ok(json!(retry::parse_retry_after(
            text(&i["value"]),
            int(&i["now"])
        ))),
        "rate_budget" => rate_budget(i),
        "parse_api_error" => parse_api_error(i).and_then(|e| view(Ok::<_, Error>(e))),
        // the message an API error is thrown with: the core's sentence
        "api_error_message" => parse_api_error(i).map(|e| json!(Error::from(e).to_string())),
        "build_request" => build_request(i),
        "call_failed_message" => Ok(json!(royaltykit::machine::call_failed_message(
            text(&i["operation"]),
            text(&i["base_url"]),
            text(&i["reason"]),
            int(&i["attempts"]),
            i["cause"].as_str(),
        ))),
        "export_interrupted_message" => Ok(json!(
            royaltykit::machine::export_interrupted_message(i["export_id"].as_str())
        )),
        "client_timeouts" => view(royaltykit::request::client_timeouts(
            i["connect_timeout"].as_f64(),
            i["read_timeout"].as_f64(),
        )),
        "check_base_url" => view(royaltykit::request::check_base_url(
            text(&i["base_url"]),
            i["allow_insecure_http"].as_bool().unwrap_or(false),
        )),
        "build_token_request" => token::build_token_request(
            text(&i["client_id"]),
            text(&i["client_secret"]),
            text(&i["tenant_id"]),
            &strings(&i["scopes"]),
        )
        .map(|d| descriptor(&d))
        .map_err(Into::into),
        "build_enterprise_token_request" => {
            token::build_enterprise_token_request(text(&i["api_key"]), text(&i["api_secret"]))
                .map(|d| descriptor(&d))
                .map_err(Into::into)
        }
        "parse_token_response" => parse_token_response(i),
        "parse_enterprise_token_response" => parse_enterprise_token_response(i),
        "parse_api_session" => (|| {
            let (status, headers, body) =
                (int(&i["status"]), pairs(&i["headers"]), bytes(&i["body"]));
            view(token::parse_api_session(
                status,
                &headers,
                &body,
                int(&i["now"]),
            )?)
        })(),
        "missing_scopes" => view(token::missing_scopes(
            &strings(&i["granted"]),
            text(&i["operation_id"]),
        )),
        "response_notices" => view(Ok::<_, Error>(token::response_notices(&pairs(
            &i["headers"],
        )))),
        "operation" => view(catalog::operation(text(&i["operation_id"]))),
        "plan_receipt" => (|| {
            let opts = webhook::VerifyOptions::default();
            let v = webhook::verify(
                &pairs(&i["headers"]),
                &bytes(&i["body"]),
                &strings(&i["secrets"]),
                int(&i["now"]),
                opts,
            )?;
            view(receiver::plan_receipt(
                text(&i["namespace"]),
                &v,
                i["claim_content_key"].as_bool() == Some(true),
            ))
        })(),
        "decide_claims" => (|| {
            let states = strings(&i["states"])
                .iter()
                .map(|s| dedup::ClaimState::parse(s))
                .collect::<Result<Vec<_>, _>>()?;
            view(Ok::<_, Error>(receiver::decide_claims(&states)))
        })(),
        "redis_dedup_command" => (|| {
            let p = dedup::RedisDedup::new(
                i["prefix"].as_str(),
                opt_int(&i["ttl_seconds"]),
                opt_int(&i["lease_seconds"]),
            )?;
            let (key, token) = (text(&i["key"]), text(&i["token"]));
            view(match text(&i["op"]) {
                "claim" => p.claim_command(key, token),
                "state" => p.state_command(key),
                "commit" => p.commit_command(key, token),
                _ => p.release_command(key, token),
            })
        })(),
        "redis_dedup_reply" => Ok(match text(&i["op"]) {
            "claim" => json!(dedup::RedisDedup::claim_reply(i["reply"].as_str())),
            "state" => json!(dedup::RedisDedup::state_reply(i["reply"].as_str())),
            _ => json!(dedup::RedisDedup::guarded_reply(i["reply"].as_str())),
        }),
        "redis_inbox_command" => (|| {
            let p = dedup::RedisInbox::new(
                i["prefix"].as_str(),
                opt_int(&i["ttl_seconds"]),
                opt_int(&i["lease_seconds"]),
            )?;
            let key = i["key"].as_str().unwrap_or_default();
            let now = i["now"].as_i64().unwrap_or_default();
            let attempts = i["attempts"].as_u64().unwrap_or_default() as u32;
            view(match text(&i["op"]) {
                "enqueue" => p.enqueue_command(
                    key,
                    text(&i["delivery_id"]),
                    text(&i["event"]),
                    &String::from_utf8(bytes(&i["body"])).unwrap(),
                    now,
                ),
                "claim" => Ok(p.claim_command(now)),
                "mark_done" => p.mark_done_command(key, attempts, now),
                "settle" => p.settle_command(
                    key,
                    attempts,
                    i["poison"].as_bool() == Some(true),
                    int(&i["retry_at"]),
                    text(&i["error"]),
                ),
                "poisoned" => p.poisoned_command(int(&i["limit"]) as u32),
                "retry" => p.retry_command(key),
                "lookup" => p.lookup_command(key),
                "counts" => Ok(p.counts_command(now)),
                _ => Ok(p.purge_command(now)),
            })
        })(),
        "redis_inbox_reply" => {
            let reply = i["reply"].as_str();
            match text(&i["op"]) {
                "claim" => view(dedup::RedisInbox::claim_reply(reply)),
                "poisoned" => view(dedup::RedisInbox::poisoned_reply(reply)),
                "counts" => view(dedup::RedisInbox::counts_reply(reply)),
                "added" => Ok(json!(dedup::RedisInbox::added_reply(reply))),
                _ => Ok(json!(dedup::RedisInbox::lookup_reply(reply))),
            }
        }
        _ => return export_call(function, i),
    })
}

#[test]
fn webhook_vectors() {
    assert!(run("webhook.json", adapter) >= 100);
}

#[test]
fn dedup_vectors() {
    run("dedup.json", adapter);
}

#[test]
fn retry_vectors() {
    assert!(run("retry.json", adapter) >= 200);
}

#[test]
fn export_vectors() {
    run("export.json", adapter);
}

#[test]
fn api_error_vectors() {
    assert!(run("api_error.json", adapter) >= 60);
}

#[test]
fn request_vectors() {
    assert!(run("requests.json", adapter) >= 40);
}

#[test]
fn token_vectors() {
    run("token.json", adapter);
}

#[test]
fn receiver_vectors() {
    run("receiver.json", adapter);
}
