"""The protocol machines' transcripts (tests/vectors/machines.json) against the installed wheel:
each machine is driven the way a host drives it — ``match`` on the step, do it against the
script, report the outcome — and every step is compared with the transcript's."""

import json

import pytest
import royaltykit as rk
from conftest import body_bytes, load
from test_vectors import mismatch

DATA = load("machines.json")
CASES = [pytest.param(g["function"], t, id=f"{t['tcId']}-{g['function']}") for g in DATA["testGroups"] for t in g["tests"]]


def test_every_transcript_is_counted():
    counts = {g["function"]: len(g["tests"]) for g in DATA["testGroups"]}
    assert sum(counts.values()) == DATA["numberOfTests"]
    assert min(counts.values()) >= 40, counts


def receipt(i):
    secrets = [rk.WebhookSecret(s["secret"], valid_until=s.get("valid_until")) for s in i["secrets"]]
    verifier = rk.WebhookVerifier(secrets)
    r = verifier.receipt([tuple(h) for h in i["headers"]], body_bytes(i["body"]), namespace=i["namespace"], now=i["now"],
                         transactional=i.get("transactional", False))
    answers = iter(i["answers"])
    steps = []
    while True:
        step = r.next()
        match step:
            case rk.ReceiptStep.Claim(key=key):
                steps.append({"step": "claim", "key": key})
                a = next(answers)
                r.store_failed() if a == "store_down" else r.claimed(a)
            case rk.ReceiptStep.Release(key=key):
                steps.append({"step": "release", "key": key})
                next(answers)
                r.released()
            case rk.ReceiptStep.RunHandler():
                steps.append({"step": "run_handler"})
                assert r.delivery is not None
                r.handler_succeeded() if next(answers) == "ok" else r.handler_failed()
            case rk.ReceiptStep.Commit(key=key, attempt=attempt):
                steps.append({"step": "commit", "key": key, "attempt": attempt})
                a = next(answers)
                r.committed() if a == "ok" else r.claim_lost() if a == "lost" else r.store_failed()
            case rk.ReceiptStep.Begin():
                steps.append({"step": "begin"})
                r.began() if next(answers) == "ok" else r.store_failed()
            case rk.ReceiptStep.CommitTransaction():
                steps.append({"step": "commit_transaction"})
                r.transaction_committed() if next(answers) == "ok" else r.store_failed()
            case rk.ReceiptStep.Rollback():
                steps.append({"step": "rollback"})
                next(answers)
                r.rolled_back()
            case rk.ReceiptStep.Wait(seconds=seconds):
                steps.append({"step": "wait", "seconds": seconds})
                r.waited()
            case rk.ReceiptStep.Reply(status=status, body=body):
                reply = {k: v for k, v in json.loads(body).items() if k != "message"}
                steps.append({"step": "reply", "status": status, **reply})
                assert r.finished
                return {"steps": steps}


def request_view(req):
    auth = dict(req.headers).get("Authorization")
    return {"step": "send", "method": req.method, "target": req.path_and_query,
            "token": auth.removeprefix("Bearer ") if auth else None,
            "idempotency_key": req.idempotency_key if req.idempotency_key_sent else None}


def drive(machine, i, api):
    """The host loop of a Call or an ExportJob over a scripted transport and clock."""
    now = float(i["start"])
    events = iter(i["events"])
    budget = rk.RateBudget([tuple(w) for w in i["budget"]]) if i.get("budget") else None
    steps = []
    for _ in range(200):
        match machine.next(now, budget):
            case rk.CallStep.Send(request=request):
                steps.append(request_view(request))
                e = next(events)
                now += e.get("after", 0)
                if "transport" in e:
                    machine.transport_failure(e["transport"], now)
                else:
                    r = e["response"]
                    headers = [tuple(h) for h in r["headers"]]
                    if "streamed" in e:
                        assert machine.streams(r["status"]) is e["streamed"]
                    if e.get("streamed"):
                        machine.streamed_response(r["status"], headers, len(r["body"].encode()), now)
                    else:
                        machine.response(r["status"], headers, r["body"].encode(), now)
            case rk.CallStep.Wait(seconds=seconds):
                steps.append({"step": "wait", "seconds": seconds})
                now += seconds
            case rk.CallStep.RefreshToken():
                steps.append({"step": "refresh_token"})
                e = next(events)
                token = rk.BearerToken.reports(e["token"]) if api == "reports" else rk.BearerToken.enterprise(e["token"])
                machine.token(token, None if e["valid_for"] is None else now + e["valid_for"])
            case rk.CallStep.Reconcile(reconcile=what):
                steps.append({"step": "reconcile", "reconcile": what})
                return {"steps": steps}
            case rk.CallStep.Done(status=status, body=body, export_id=export_id):
                steps.append({"step": "done", "status": status, "body": body.decode()} if export_id is None
                             else {"step": "done", "export_id": export_id, "artifact": body.decode()})
                return {"steps": steps}
            case rk.CallStep.Fail() as f:
                assert f.error is None or isinstance(f.error, rk.RoyaltyKitError)
                steps.append({"step": "fail", "rule": f.rule, "status": f.status, "code": f.error.code if f.error else None,
                              "transport": f.transport, "retry_after_seconds": f.retry_after_seconds, "stage": f.stage,
                              "export_id": f.export_id})
                return {"steps": steps}
    raise AssertionError(f"no end after 200 steps: {steps}")


def exchange(i):
    x, o = i["exchange"], i["options"]
    if x["api"] == "reports":
        request = rk.build_token_request(x["client_id"], x["client_secret"], x["tenant_id"])
    else:
        request = rk.build_enterprise_token_request(x["api_key"], x["api_secret"])
    return drive(rk.Call.exchange(request, seed=o["seed"]), i, x["api"])


def call(i):
    if "exchange" in i:
        return exchange(i)
    p, o = i["params"], i["options"]
    body = p.get("body")
    c = rk.Call(i["operation"], path=[tuple(x) for x in p.get("path", [])], query=[tuple(x) for x in p.get("query", [])],
                body=body.encode() if body is not None else None, tenant_id=p.get("tenant_id"),
                idempotency_key=p.get("idempotency_key"), idempotency_header=p.get("idempotency_header"),
                request_id=p.get("request_id"), max_attempts=o.get("max_attempts"),
                max_elapsed_seconds=o.get("max_elapsed_seconds"), seed=o["seed"])
    return drive(c, i, rk.operation(i["operation"]).api)


def export_job(i):
    o = i["options"]
    job = rk.ExportJob(tenant_id=o["tenant_id"], body=o["body"].encode(), idempotency_header=o.get("idempotency_header"),
                       request_id=o.get("request_id"), max_polls=o.get("max_polls"), seed=o["seed"],
                       id_field=o.get("id_field"), state_field=o.get("state_field"))
    return drive(job, i, "reports")


@pytest.mark.parametrize("function,case", CASES)
def test_transcript(function, case):
    got = {"receipt": receipt, "call": call, "export_job": export_job}[function](case["input"])
    problem = mismatch(case["expected"], got)
    assert problem is None, problem


def test_a_saved_job_resumes_without_a_second_create():
    tenant = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
    job = rk.ExportJob(tenant_id=tenant, body={"format": "csv"}, token=rk.BearerToken.reports("secret-bearer-9"), seed=1)
    assert isinstance(job.next(0), rk.CallStep.Send)
    job.response(200, {}, b"[]", 0)
    step = job.next(0)
    assert isinstance(step, rk.CallStep.Send) and step.request.method == "POST"
    saved = job.save()  # the create is in flight when the process dies
    assert "secret-bearer-9" not in saved
    job = rk.ExportJob.resume(saved)
    job.token(rk.BearerToken.reports("secret-bearer-10"))
    step = job.next(5)
    assert isinstance(step, rk.CallStep.Send) and step.request.method == "GET", "reconciled, never created twice"


def test_inputs_out_of_turn_are_refused_with_a_reason():
    c = rk.Call("listEnterpriseCountries", seed=1)
    with pytest.raises(rk.InvalidArgumentError, match="no request is in flight"):
        c.response(200, {}, b"{}")


def signed(delivery_id, secret="whsec_window", now=1_763_784_000):
    body = json.dumps({"event": "ddex.import.completed",
                       "resource": {"type": "ddex_message", "reference": "m1", "url": "/api/v1/ddex/messages/m1"},
                       "occurred_at": "2026-11-22T04:00:00Z"}).encode()
    return rk.sign_webhook(secret, body, timestamp=now, delivery_id=delivery_id), body


def test_a_receipt_on_a_window_claims_and_commits_inside_the_core():
    verifier, window, now = rk.WebhookVerifier("whsec_window"), rk.DedupWindow(100), 1_763_784_000
    headers, body = signed("dlv_w1")
    first = verifier.receipt(headers, body, namespace="org_1", now=now, window=window)
    assert first.next() == rk.ReceiptStep.RunHandler(), "the claims were taken in the core"
    key = rk.delivery_key("org_1", "dlv_w1")
    assert window.claim(key, now=now) == "in_progress", "the window holds this receipt's claim"
    # The same delivery meanwhile: another worker holds it, so 503 (and its claim is not released).
    twin = verifier.receipt(headers, body, namespace="org_1", now=now, window=window)
    assert isinstance(twin.next(), rk.ReceiptStep.Reply) and twin.next().status == 503
    assert window.claim(key, now=now) == "in_progress"
    step = first.handler_succeeded()
    assert isinstance(step, rk.ReceiptStep.Reply) and step.status == 200 and "processed" in step.body
    assert window.claim(key, now=now) == "done", "committed in the window"
    again = verifier.receipt(headers, body, namespace="org_1", now=now + 60, window=window)
    assert isinstance(again.next(), rk.ReceiptStep.Reply) and again.next().status == 200
    assert "processed" not in again.next().body, "a duplicate is acknowledged without the handler"


def test_a_failed_handler_on_a_window_releases_so_the_redelivery_is_processed():
    verifier, window, now = rk.WebhookVerifier("whsec_window"), rk.DedupWindow(100), 1_763_784_000
    headers, body = signed("dlv_w2")
    r = verifier.receipt(headers, body, namespace="org_1", now=now, window=window)
    assert r.next() == rk.ReceiptStep.RunHandler()
    step = r.handler_failed()
    assert isinstance(step, rk.ReceiptStep.Reply) and step.status == 500
    redelivery = verifier.receipt(headers, body, namespace="org_1", now=now + 30, window=window)
    assert redelivery.next() == rk.ReceiptStep.RunHandler()


def test_inputs_return_the_next_step():
    headers, body = signed("dlv_w3")
    r = rk.WebhookVerifier("whsec_window").receipt(headers, body, namespace="org_1", now=1_763_784_000)
    assert isinstance(r.next(), rk.ReceiptStep.Claim)
    step = r.claimed("new")
    assert step == r.next() and isinstance(step, rk.ReceiptStep.Claim), "the event key after the delivery key"
