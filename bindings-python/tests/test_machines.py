"""The protocol machines' transcripts (tests/vectors/machines.json) against the installed wheel:
each machine is driven the way a host drives it — ``match`` on the step, do it against the
script, report the outcome — and every step is compared with the transcript's."""

import collections
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
    assert min(counts.values()) >= 8 and sum(counts.values()) >= 190, counts


def receipt_view(step):
    """A step that takes an answer, in the transcripts' rendered form."""
    match step:
        case rk.ReceiptStep.Claim(key=key):
            return {"step": "claim", "key": key}
        case rk.ReceiptStep.Release(key=key):
            return {"step": "release", "key": key}
        case rk.ReceiptStep.Enqueue(key=key):
            return {"step": "enqueue", "key": key}
        case rk.ReceiptStep.Commit(key=key, attempt=attempt):
            return {"step": "commit", "key": key, "attempt": attempt}
        case rk.ReceiptStep.Wait(seconds=seconds):
            return {"step": "wait", "seconds": seconds}
        case rk.ReceiptStep.RunHandler():
            return {"step": "run_handler"}
        case rk.ReceiptStep.CommitTransaction():
            return {"step": "commit_transaction"}
    return {"step": type(step).__name__.lower()}  # Begin, Rollback


def receipt(i):
    secrets = [rk.WebhookSecret(s["secret"], valid_until=s.get("valid_until")) for s in i["secrets"]]
    verifier = rk.WebhookVerifier(secrets)
    r = verifier.receipt([tuple(h) for h in i["headers"]], body_bytes(i["body"]), namespace=i["namespace"], now=i["now"],
                         transactional=i.get("transactional", False), claim_content_key=i.get("claim_content_key", False),
                         inbox=i.get("inbox", False))
    answers = collections.deque(i["answers"])
    steps = []
    transactional = i.get("transactional", False)
    while True:
        step = r.next()
        if isinstance(step, rk.ReceiptStep.Reply):
            reply = {k: v for k, v in json.loads(step.body).items() if k != "message"}
            steps.append({"step": "reply", "status": step.status, **reply})
            assert r.finished
            return {"steps": steps}
        steps.append(receipt_view(step))
        if isinstance(step, rk.ReceiptStep.RunHandler):
            assert r.delivery is not None
        # every answer through the receipt's one input, report; "cancel": the host was cancelled
        # while the step was in flight (a Wait takes an answer only then)
        cancel = bool(answers) and answers[0] == "cancel"
        a = "ok" if isinstance(step, rk.ReceiptStep.Wait) and not cancel else answers.popleft()
        commit = isinstance(step, rk.ReceiptStep.Commit)
        r.report("cancelled" if a == "cancel" else
                 ("claimed", a) if isinstance(step, rk.ReceiptStep.Claim) and a != "store_down" else
                 ("enqueued", a == "new") if isinstance(step, rk.ReceiptStep.Enqueue) and a in ("new", "dup") else
                 ("marked", a == "ok") if commit and (a == "lost" or a == "ok" and transactional) else
                 "done" if a == "ok" else "failed")


def request_view(req):
    auth = dict(req.headers).get("Authorization")
    return {"step": "send", "method": req.method, "target": req.path_and_query,
            "token": auth.removeprefix("Bearer ") if auth else None,
            "idempotency_key": req.idempotency_key if req.idempotency_key_sent else None}


def report(machine, e, now):
    """A send's outcome event, reported: a response (maybe streamed into the host's sink) or a transport failure."""
    if "transport" in e:
        machine.report(("no_response", e["transport"]), now)
        return
    r = e["response"]
    headers = [tuple(h) for h in r["headers"]]
    if "streamed" in e:
        assert machine.streams(r["status"]) is e["streamed"]
    if e.get("streamed"):
        machine.report((r["status"], headers, len(r["body"].encode())), now)
    else:
        machine.report((r["status"], headers, r["body"].encode()), now)


def bearer(value, api, tenant):
    """A token event's token: a reporting one bound to the transcript's tenant."""
    return rk.BearerToken.reports(value, tenant) if api == "reports" else rk.BearerToken.enterprise(value)


def reserve_view(command):
    """A fleet reservation: its keys and arguments (the script's text left out)."""
    return {"step": "reserve", "command": list(command[2:])}


def view(step):
    """A step as the transcripts write it, and whether the machine is over."""
    match step:
        case rk.CallStep.Send(request=request):
            return request_view(request), False
        case rk.CallStep.Wait(seconds=seconds):
            return {"step": "wait", "seconds": seconds}, False
        case rk.CallStep.RefreshToken():
            return {"step": "refresh_token"}, False
        case rk.CallStep.Reserve(command=command):
            return reserve_view(command), True
        case rk.CallStep.AwaitToken(seconds=seconds):
            return {"step": "await_token", "seconds": seconds}, False
        case rk.CallStep.Reconcile(reconcile=what, candidates=candidates):
            return {"step": "reconcile", "reconcile": what, "candidates": list(candidates)}, True
        case rk.CallStep.Done(status=status, body=body, export_id=export_id):
            return ({"step": "done", "status": status, "body": body.decode()} if export_id is None
                    else {"step": "done", "export_id": export_id, "artifact": body.decode()}), True
        case rk.CallStep.Fail() as f:
            assert f.error is None or isinstance(f.error, rk.RoyaltyKitError)
            return {"step": "fail", "rule": f.rule, "status": f.status, "code": f.error.code if f.error else None,
                    "transport": f.transport, "retry_after_seconds": f.retry_after_seconds, "stage": f.stage,
                    "export_id": f.export_id}, True
    raise AssertionError(f"unknown step {step!r}")


def drive(machine, i, api, tenant=None):
    """The host loop of a Call or an ExportJob over a scripted transport and clock."""
    now = float(i["start"])
    events = iter(i["events"])
    budget = rk.RateBudget([tuple(w) for w in i["budget"]]) if i.get("budget") else None
    steps = []
    for _ in range(200):
        step = machine.next(now, budget)
        v, over = view(step)
        # the host keeps the checkpoint an export job gives before performing the step
        if isinstance(machine, rk.ExportJob) and machine.checkpoint() is not None:
            v["checkpoint"] = True
        steps.append(v)
        if over:
            return {"steps": steps}
        match step:
            case rk.CallStep.Send():
                e = next(events)
                now += e.get("after", 0)
                report(machine, e, now)
            case rk.CallStep.Wait(seconds=seconds):
                now += seconds
            case rk.CallStep.RefreshToken():
                e = next(events)
                machine.token(bearer(e["token"], api, tenant), None if e["valid_for"] is None else now + e["valid_for"])
            case _:
                raise AssertionError(f"a machine alone never waits for another: {step!r}")
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
    return drive(c, i, rk.operation(i["operation"]).api, p.get("tenant_id"))


def new_call(m):
    p, o = m["params"], m["options"]
    return rk.Call(m["operation"], path=[tuple(x) for x in p.get("path", [])], tenant_id=p.get("tenant_id"), seed=o["seed"])


def new_job(o):
    return rk.ExportJob(tenant_id=o["tenant_id"], body=o["body"].encode(), idempotency_header=o.get("idempotency_header"),
                        request_id=o.get("request_id"), max_polls=o.get("max_polls"), seed=o["seed"],
                        id_field=o.get("id_field"), state_field=o.get("state_field"),
                        max_poll_seconds=o.get("max_poll_seconds"), reconcile_grace_seconds=o.get("reconcile_grace_seconds"),
                        min_poll_interval_seconds=o.get("min_poll_interval_seconds"),
                        max_poll_interval_seconds=o.get("max_poll_interval_seconds"))


def export_job(i):
    return drive(new_job(i["options"]), i, "reports", i["options"]["tenant_id"])


def session(i):
    """Several machines on one Session, played by the transcript's script (gen_machine_vectors.py, SPEC_S)."""
    budget = rk.RateBudget([tuple(w) for w in i["budget"]]) if i.get("budget") else None
    s = rk.Fleet(i["fleet"]).session(budget) if isinstance(i.get("fleet"), str) else rk.Session(budget)
    machines = [new_call(m) if m["kind"] == "call" else new_job(m["options"]) for m in i["machines"]]
    now = float(i["start"])
    steps = []
    for a in i["script"]:
        if "next" in a:
            v, _ = view(machines[a["next"]].next(now, session=s))
            steps.append({**v, "machine": a["next"]})
        elif "respond" in a:
            now += a.get("after", 0)
            report(machines[a["respond"]], a, now)
        elif "token" in a:
            s.store_token(bearer(a["token"], i["api"], i["tenant_id"]), None if a["valid_for"] is None else now + a["valid_for"])
        elif "exchange_failed" in a:
            s.exchange_failed(a["exchange_failed"])
        elif a.get("abandon"):
            s.abandon_exchange()
        elif "advance" in a:
            now += a["advance"]
        elif "reserved" in a:
            machines[a["machine"]].report(("reply", a["reserved"]), now)
        elif "reserve_failed" in a:
            machines[a["reserve_failed"]].report(("no_response", "connect_failed"), now)
        else:
            raise AssertionError(f"unknown script action {a}")
    return {"steps": steps, "exchanges": s.exchanges}


def fleet_token_view(step):
    """A fleet token step as a transcript records it (a script's text as its name), as
    core/tests/machines.rs `fn fleet_token_view` does."""
    scripts = {rk.RESERVE_SCRIPT: "RESERVE_SCRIPT", rk.PUBLISH_SCRIPT: "PUBLISH_SCRIPT", rk.UNLOCK_SCRIPT: "UNLOCK_SCRIPT"}
    match step:
        case rk.FleetTokenStep.Command(command=command):
            return {"step": "command", "command": [scripts.get(a, a) for a in command]}
        case rk.FleetTokenStep.Exchange():
            return {"step": "exchange"}
        case rk.FleetTokenStep.Wait(seconds=seconds):
            return {"step": "wait", "seconds": seconds}
        case rk.FleetTokenStep.Done():
            return {"step": "done"}
        case rk.FleetTokenStep.Failed(reason=reason):
            return {"step": "failed", "reason": reason}
    raise AssertionError(f"unknown step {step!r}")


def fleet_token(i):
    """A fleet token refresh driven by the transcript's events, as core/tests/machines.rs `fn fleet_token` does."""
    api, tenant = i["api"], i.get("tenant_id")
    now = float(i["now"])
    s = rk.Fleet(i.get("prefix")).session()
    if isinstance(i.get("held"), str):
        s.store_token(bearer(i["held"], api, tenant))
    ft = rk.FleetToken(s, api, tenant_id=tenant, seed=i["seed"], now=now)
    steps = [fleet_token_view(ft.next())]
    for e in i["events"]:
        if "advance" in e:
            now += e["advance"]
            continue
        if "reply" in e:
            ft.replied(e["reply"], s, now)
        elif "redis_failed" in e:
            ft.redis_failed(s)
        elif isinstance(e.get("exchanged"), str):
            ft.exchanged(bearer(e["exchanged"], api, tenant), e.get("refresh_at"), now)
        elif isinstance(e.get("exchange_failed"), str):
            ft.exchange_failed(e["exchange_failed"])
        elif "waited" in e:
            ft.waited()
        else:
            raise AssertionError(f"unknown event {e}")
        steps.append(fleet_token_view(ft.next()))
    return {"steps": steps, "has_token": s.has_token}


def new_pages(i):
    o = i["options"]
    return rk.Pages(i["operation"], query=[tuple(x) for x in i["query"]], max_pages=o.get("max_pages"),
                    max_items=o.get("max_items"), page_size=o.get("page_size"), id_field=o.get("id_field"))


def pages(i):
    """A walk over pages fed the transcript's bodies, as core/tests/machines.rs `fn pages` does."""
    walk = new_pages(i)
    bodies = iter(i["pages"])
    steps = []
    while True:
        match walk.next():
            case rk.PagesStep.Fetch(query=query):
                steps.append({"step": "fetch", "query": [list(p) for p in query]})
                body = next(bodies, None)
                if body is None:
                    break  # a fetch the transcript did not script: the steps differ
                shown = walk.page(body.encode())
                steps.append({"step": "page", "items": None} if shown is None
                             else {"step": "page", "member": shown.member, "take": shown.take})
            case rk.PagesStep.Done(end=end, pages=n, items=items):
                assert (n, items) == (walk.pages, walk.items)
                steps.append({"step": "done", "end": end, "pages": n, "items": items})
                break
            case rk.PagesStep.Fail(error=error):
                assert isinstance(error, rk.PaginationError)
                steps.append({"step": "fail", "code": error.code, "family": _family(error)})
                break
    return {"steps": steps}


def _family(error):
    """The family of an error, by the class the error table gave it."""
    from royaltykit.errors import _FAMILIES

    return next(f for f, cls in _FAMILIES.items() if type(error) is cls)


def new_recovery(i):
    o = i["options"]
    return rk.Recovery(i["subscription"], i["namespace"], i["since"], i["now"], max_replays=o.get("max_replays"),
                       max_replays_per_delivery=o.get("max_replays_per_delivery"), max_entries=o.get("max_entries"))


def returns_next(run, step):
    """An input returns the step that follows: the one ``next()`` gives."""
    again = run.next()
    assert type(step) is type(again) and repr(step) == repr(again)


def recovery(i):
    """A recovery run fed the transcript's log pages, store states and replay answers, as
    core/tests/machines.rs `fn recovery` does: a key's state is ``input.states[key]`` ("new" when
    absent); a replay answer ``{"failed": code}`` is ``replay_failed``, else ``replayed(body)``."""
    run = new_recovery(i)
    bodies = iter(i["pages"])
    replays = iter(i["replays"])
    steps = []
    while True:
        match run.next():
            case rk.RecoveryStep.Fetch(query=query):
                steps.append({"step": "fetch", "query": [list(p) for p in query]})
                body = next(bodies, None)
                if body is None:
                    break  # a fetch the transcript did not script: the steps differ
                returns_next(run, run.page(body.encode()))
            case rk.RecoveryStep.Check(keys=keys):
                steps.append({"step": "check", "keys": keys})
                returns_next(run, run.checked([i["states"].get(k, "new") for k in keys]))
            case rk.RecoveryStep.Replay(delivery=delivery):
                steps.append({"step": "replay", "delivery": delivery})
                answer = next(replays, None)
                if answer is None:
                    break
                if "failed" in answer:
                    returns_next(run, run.replay_failed(answer["failed"]))
                else:
                    returns_next(run, run.replayed(answer["body"].encode()))
            case rk.RecoveryStep.Done(report=report):
                assert isinstance(report, rk.RecoveryReport)
                steps.append({"step": "done", "report": {
                    "entries": report.entries, "considered": report.considered, "before_since": report.before_since,
                    "skipped": report.skipped, "replayed": report.replayed, "end": report.end,
                    "deliveries": [{"reference": d.reference, "event": d.event, "status": d.status,
                                    "created_at": d.created_at, "replays": d.replays, "action": d.action,
                                    "replay": d.replay, "error": d.error} for d in report.deliveries]}})
                break
            case rk.RecoveryStep.Fail(error=error):
                assert isinstance(error, rk.PaginationError)
                steps.append({"step": "fail", "code": error.code, "family": _family(error)})
                break
    return {"steps": steps}


def inbox_view(step):
    """An inbox worker's step as the transcripts write it (core/tests/machines.rs `fn inbox_view`)."""
    match step:
        case rk.InboxStep.Claim():
            return {"step": "claim"}
        case rk.InboxStep.Idle(seconds=seconds):
            return {"step": "idle", "seconds": seconds}
        case rk.InboxStep.Drained():
            return {"step": "drained"}
        case rk.InboxStep.Begin():
            return {"step": "begin"}
        case rk.InboxStep.RunHandler(entry=entry):
            assert isinstance(entry, rk.InboxEntry)
            return {"step": "run_handler", "key": entry.key, "attempts": entry.attempts}
        case rk.InboxStep.MarkDone(key=key, attempts=attempts):
            return {"step": "mark_done", "key": key, "attempts": attempts}
        case rk.InboxStep.Commit():
            return {"step": "commit"}
        case rk.InboxStep.Rollback():
            return {"step": "rollback"}
        case rk.InboxStep.Settle(key=key, attempts=attempts, poison=poison, retry_at=retry_at, error=error):
            return {"step": "settle", "key": key, "attempts": attempts, "poison": poison, "retry_at": retry_at,
                    "error": error}
    raise AssertionError(f"unknown step {step!r}")


def inbox(i):
    """An inbox worker fed the transcript's events, as core/tests/machines.rs `fn inbox` does; a
    claimed entry is reported as the claim's row (its five columns), as a store's driver returns it."""
    o = i["options"]
    w = rk.InboxWorker(max_attempts=o.get("max_attempts"), poll_seconds=o.get("poll_seconds"),
                       transactional=o.get("transactional"), drain=o.get("drain"), seed=i["seed"])
    steps = [inbox_view(w.next())]
    for e in i["events"]:  # every event through the worker's one input, report
        if "claimed" in e:
            c = e["claimed"]
            row = None if c is None else (c["key"], c["delivery_id"], c["event"], c["body"], c["attempts"])
            s = w.report(("claimed", row), e["now"])
        elif isinstance(e.get("handler_failed"), str):
            s = w.report(("failed", e["handler_failed"]), e["now"])
        elif isinstance(e.get("marked"), bool):
            s = w.report(("marked", e["marked"]))
        elif "store_failed" in e:
            s = w.report(("failed", "the store could not be reached"))
        elif any(k in e for k in ("waited", "began", "handler", "committed", "rolled_back", "settled")):
            s = w.report("done")
        else:
            raise AssertionError(f"unknown event {e}")
        # Each input returns the step that follows, the one next() gives.
        assert inbox_view(s) == inbox_view(w.next())
        steps.append(inbox_view(s))
    return {"steps": steps, "counts": {"processed": w.processed, "retried": w.retried, "poisoned": w.poisoned}}


MACHINES = {"receipt": receipt, "call": call, "export_job": export_job, "session": session, "pages": pages,
            "recovery": recovery, "inbox": inbox, "fleet_token": fleet_token}
# The machines refused when they are built, before any step.
BUILD = {"pages": new_pages, "recovery": new_recovery}


@pytest.mark.parametrize("function,case", CASES)
def test_transcript(function, case):
    if case["result"] == "invalid":
        with pytest.raises(rk.RoyaltyKitError) as e:
            # a walk or a recovery run is refused when it is built, before any step
            BUILD.get(function, MACHINES[function])(case["input"])
        problem = mismatch(case["error"], e.value)
        assert problem is None, f"{problem} ({e.value})"
        return
    assert case["result"] == "valid"
    got = MACHINES[function](case["input"])
    problem = mismatch(case["expected"], got)
    assert problem is None, problem


def test_a_saved_job_resumes_without_a_second_create():
    tenant = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
    job = rk.ExportJob(tenant_id=tenant, body={"format": "csv"}, token=rk.BearerToken.reports("secret-bearer-9", tenant), seed=1)
    assert isinstance(job.next(0), rk.CallStep.Send)
    job.report((200, {}, b"[]"), 0)
    step = job.next(0)
    assert isinstance(step, rk.CallStep.Send) and step.request.method == "POST"
    saved = job.save()  # the create is in flight when the process dies
    assert "secret-bearer-9" not in saved
    job = rk.ExportJob.resume(saved)
    job.token(rk.BearerToken.reports("secret-bearer-10", tenant))
    step = job.next(5)
    assert isinstance(step, rk.CallStep.Send) and step.request.method == "GET", "reconciled, never created twice"


def test_inputs_out_of_turn_are_refused_with_a_reason():
    c = rk.Call("listEnterpriseCountries", seed=1)
    with pytest.raises(rk.InvalidArgumentError, match="no request is in flight"):
        c.report((200, {}, b"{}"))


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
    step = first.report("done")
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
    step = r.report("failed")
    assert isinstance(step, rk.ReceiptStep.Reply) and step.status == 500
    redelivery = verifier.receipt(headers, body, namespace="org_1", now=now + 30, window=window)
    assert redelivery.next() == rk.ReceiptStep.RunHandler()


def test_inputs_return_the_next_step():
    headers, body = signed("dlv_w3")
    r = rk.WebhookVerifier("whsec_window").receipt(headers, body, namespace="org_1", now=1_763_784_000)
    assert isinstance(r.next(), rk.ReceiptStep.Claim)
    step = r.report(("claimed", "new"))
    assert step == r.next() and isinstance(step, rk.ReceiptStep.RunHandler), "only the delivery key, by default"
    opted = rk.WebhookVerifier("whsec_window").receipt(headers, body, namespace="org_1", now=1_763_784_000,
                                                       claim_content_key=True)
    opted.report(("claimed", "new"))
    assert isinstance(opted.next(), rk.ReceiptStep.Claim), "the content key after the delivery key, when asked"


def test_same_second_twins_are_both_processed_unless_the_content_key_is_claimed():
    """Two changes of one resource in the same second: byte-identical body and timestamp, two ids."""
    verifier, now = rk.WebhookVerifier("whsec_window"), 1_763_784_000
    for claim_content_key, handled in ((False, 2), (True, 1)):
        window, runs = rk.DedupWindow(100), 0
        for did in ("dlv_twin_a", "dlv_twin_b"):
            headers, body = signed(did)
            r = verifier.receipt(headers, body, namespace="org_1", now=now, window=window,
                                 claim_content_key=claim_content_key)
            if r.next() == rk.ReceiptStep.RunHandler():
                runs += 1
                assert r.report("done").status == 200
            else:
                assert r.next().status == 200 and "acknowledge" in r.next().body
        assert runs == handled, (claim_content_key, runs)


def test_a_machine_on_a_session_takes_the_session_budget_only():
    s = rk.Session(rk.RateBudget([("api_client", 1, 60)]))
    with pytest.raises(rk.InvalidArgumentError, match="budget"):
        rk.Call("listEnterpriseCountries", seed=1).next(0, rk.RateBudget([("w", 1, 60)]), session=s)
    s.store_token(rk.BearerToken.enterprise("secret-session-token-7"))
    assert isinstance(rk.Call("listEnterpriseCountries", seed=1).next(0, session=s), rk.CallStep.Send)
    assert isinstance(rk.Call("listEnterpriseCountries", seed=2).next(0, session=s), rk.CallStep.Wait), "one budget"
    assert "secret-session-token-7" not in repr(s) and s.has_token and s.exchanges == 0


def test_a_page_without_items_fails_the_walk_with_a_pagination_error_to_raise():
    walk = rk.Pages("listPlatformExports", query={"format": "csv"}, page_size=10)
    step = walk.next()
    assert isinstance(step, rk.PagesStep.Fetch) and step.query == [("limit", "10"), ("format", "csv")]
    assert walk.next().query == step.query, "the same step until a page is reported"
    assert walk.page(b'{"message": "not a list"}') is None
    step = walk.next()
    assert isinstance(step, rk.PagesStep.Fail) and "page_unreadable" in repr(step)
    error = step.error
    assert isinstance(error, rk.PaginationError) and isinstance(error, rk.RoyaltyKitError)
    assert error.code == "page_unreadable" and error.http_status == 500 and "listPlatformExports" in str(error)
    with pytest.raises(rk.PaginationError, match="no array of items"):
        raise step.error
    with pytest.raises(rk.InvalidArgumentError, match="the walk is over"):
        walk.page(b"[]")
    assert (walk.pages, walk.items) == (0, 0)


def test_a_page_that_is_not_json_is_unreadable():
    walk = rk.Pages("listEnterpriseSubscriptions")
    assert walk.next().query == [("page", "1")], "the service's default size: none sent"
    assert walk.page("<html>") is None
    assert walk.next().error.code == "page_unreadable"


def test_a_cut_page_gives_its_first_items_and_says_where():
    walk = rk.Pages("listEnterpriseSubscriptions", page_size=3, max_items=2)
    assert walk.next().query == [("page", "1"), ("size", "3")]
    shown = walk.page(b'{"data": [{"r": 1}, {"r": 2}, {"r": 3}], "meta": {"current_page": 1, "last_page": 4}}')
    assert shown is not None and (shown.member, shown.take) == ("data", 2)
    step = walk.next()
    assert isinstance(step, rk.PagesStep.Done) and (step.end, step.pages, step.items) == ("max_items", 1, 2)
    assert "max_items" in repr(step) and "Pages(pages=1, items=2)" == repr(walk)


@pytest.mark.parametrize("kw", [{"max_pages": 0}, {"max_items": -1}, {"page_size": -5}, {"page_size": 101},
                                {"page_size": 2**40}])
def test_bounds_out_of_range_are_refused_at_construction(kw):
    with pytest.raises(rk.InvalidArgumentError):
        rk.Pages("listPlatformExports", **kw)


def test_only_a_list_operation_walks():
    with pytest.raises(rk.InvalidArgumentError, match="does not list anything"):
        rk.Pages("createPlatformExport")
    with pytest.raises(rk.RoyaltyKitError):
        rk.Pages("noSuchOperation")
    with pytest.raises(TypeError, match="query must be a mapping"):
        rk.Pages("listPlatformExports", query=3)


def test_a_fail_or_reconcile_step_gives_the_core_error_of_its_family():
    """The clients raise what ``CallStep.exception`` gives: the core's error table, the same
    codes, members and message in every language (Node and Kotlin: ``callStepError``)."""
    fail = rk.CallStep.Fail("attempts_exhausted", "would retry, but 3 of 3 attempts are used", None, "timeout",
                            None, None, "poll", "exp_9", 3)
    e = fail.exception("getPlatformExport", "https://api.example.com/base", "ReadTimeout:\nslow")
    assert type(e) is rk.CallFailedError and e.code == "call_failed" and e.http_status == 500
    assert str(e) == ("getPlatformExport to api.example.com: would retry, but 3 of 3 attempts are used "
                      "(3 attempts made); last failure: ReadTimeout: slow")
    assert (e.rule, e.transport, e.status, e.attempts, e.operation_id, e.stage, e.export_id) == (
        "attempts_exhausted", "timeout", None, 3, "getPlatformExport", "poll", "exp_9")
    reconcile = rk.CallStep.Reconcile("lookup_by_sent_data", "the create may have been applied", ["exp_1"], "reconcile")
    r = reconcile.exception("createPlatformExport", "https://api.example.com")
    assert type(r) is rk.ReconcileRequired and r.code == "reconcile_required"
    assert (str(r), r.reconcile, r.candidates, r.stage, r.operation_id) == (
        "the create may have been applied", "lookup_by_sent_data", ["exp_1"], "reconcile", "createPlatformExport")
    api = rk.parse_api_error("reports", 404, [], b'{"message":"Export not found"}')
    assert rk.CallStep.Fail("client_error", "404", 404, None, None, api, None, None, 1).exception("op", "https://h") is api
    assert rk.CallStep.Wait(1.0).exception("op", "https://h") is None


def _failing_call():
    """A call whose two attempts get a 503: its events carry every level (a send is ``debug``,
    a retry ``info``, the failure ``warning``)."""
    tenant = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
    call = rk.Call("listPlatformExports", seed=7, max_attempts=2, tenant_id=tenant)
    session = rk.Session()
    session.store_token(rk.BearerToken.reports("tok_events", tenant))
    now = 1_000.0
    for _ in range(10):
        match call.next(now, session=session):
            case rk.CallStep.Send():
                call.report((503, [("Retry-After", "1")], b""), now)
            case rk.CallStep.Wait(seconds=seconds):
                now += seconds
            case rk.CallStep.Fail():
                return call
    raise AssertionError("the call did not end")


def test_events_below_the_hosts_level_are_dropped_and_the_rest_kept_in_order():
    everything = _failing_call().take_events()
    assert {e["level"] for e in everything} == {"debug", "info", "warning"}
    for min_level, kept in [(None, {"debug", "info", "warning"}), ("debug", {"debug", "info", "warning"}),
                            ("info", {"info", "warning"}), ("warning", {"warning"})]:
        call = _failing_call()
        assert call.take_events(min_level) == [e for e in everything if e["level"] in kept], min_level
        assert call.take_events() == [], f"{min_level}: the dropped events are gone too"
    with pytest.raises(rk.InvalidArgumentError, match="min_level"):
        _failing_call().take_events("error")  # type: ignore[arg-type]


def test_advance_and_respond_answer_as_next_response_and_take_events():
    """The one-call inputs: ``advance`` is ``next`` + ``take_events``, ``respond`` (deprecated,
    warns) is ``report`` + ``advance``, step for step and event for event, on twin calls."""
    tenant = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"

    def twins():
        session = rk.Session()
        session.store_token(rk.BearerToken.reports("tok_twins", tenant))
        return session, rk.Call("listPlatformExports", seed=3, max_attempts=2, tenant_id=tenant)

    (s1, one), (s2, other) = twins(), twins()
    now, answers = 1_000.0, [(503, [("Retry-After", "2")]), (200, [("Content-Type", "application/json")])]
    for min_level in [None, "info", None, "warning"]:
        step = one.next(now, session=s1)
        advanced = other.advance(now, session=s2, min_level=min_level)
        assert (repr(advanced[0]), advanced[1]) == (repr(step), one.take_events(min_level))
        match step:
            case rk.CallStep.Send():
                status, headers = answers.pop(0)
                one.report((status, headers, b'{"data":[]}'), now)
                with pytest.warns(DeprecationWarning, match="respond\\(\\) is deprecated"):  # kept for one release
                    given = other.respond(status, headers, b'{"data":[]}', now, session=s2, min_level=min_level)
                assert (repr(given[0]), given[1]) == (repr(one.next(now, session=s1)), one.take_events(min_level))
                if isinstance(given[0], rk.CallStep.Wait):
                    now += given[0].seconds
            case rk.CallStep.Done():
                break
    assert answers == [] and isinstance(one.next(now, session=s1), rk.CallStep.Done)


def test_report_takes_each_outcome_of_the_pending_step_and_refuses_the_rest():
    """``report`` is the one input after ``Send`` and ``Reserve``: a response (whole or streamed),
    no response, or a reservation's reply; a shape it cannot read is a ``TypeError``, an outcome
    the pending step cannot have an ``InvalidArgumentError`` (the machine unchanged)."""
    tenant = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
    call = rk.Call("listPlatformExports", seed=3, max_attempts=3, tenant_id=tenant)
    session = rk.Session()
    session.store_token(rk.BearerToken.reports("tok_report", tenant))
    for shape in [b"200", (200, []), ("reply",), ("sent", "ok"), (200, [], 1.5), ("no_response", 3)]:
        with pytest.raises(TypeError):
            call.report(shape, 1_000.0)  # type: ignore[arg-type]
    assert isinstance(call.next(1_000.0, session=session), rk.CallStep.Send)
    with pytest.raises(rk.InvalidArgumentError, match="transport"):
        call.report(("no_response", "dns"), 1_000.0)  # type: ignore[arg-type]
    with pytest.raises(rk.InvalidArgumentError):
        call.report(("reply", "ok"), 1_000.0)
    call.report(("no_response", "connect_failed"), 1_000.0)
    assert isinstance(call.next(1_000.0, session=session), rk.CallStep.Wait)
    events = [e["kind"] for e in call.take_events()]
    assert "transport_failure" in events and "retry" in events, events
    assert isinstance(call.next(1_100.0, session=session), rk.CallStep.Send)
    call.report((200, {"Content-Type": "application/json"}, '{"data":[]}'), 1_100.0)
    done = call.next(1_100.0, session=session)
    assert isinstance(done, rk.CallStep.Done) and (done.status, bytes(done.body)) == (200, b'{"data":[]}')
    with pytest.raises(rk.InvalidArgumentError):
        call.report((200, [], b"{}"), 1_100.0)


@pytest.mark.parametrize("old, args", [("response", (200, [], b"{}")), ("streamed_response", (200, [], 2)),
                                       ("transport_failure", ("timeout",)), ("reserved", ("ok",)),
                                       ("reserve_failed", ())])
def test_the_inputs_report_replaced_still_work_for_one_release_and_warn(old, args):
    call = rk.Call("listEnterpriseCountries", seed=1)
    with pytest.warns(DeprecationWarning, match=f"{old}\\(\\) is deprecated .*report"), pytest.raises(rk.InvalidArgumentError):
        getattr(call, old)(*args, 1_000.0)  # nothing pending: refused as report refuses it


def test_a_receipts_report_takes_each_outcome_of_the_pending_step_and_refuses_the_rest():
    """A receipt's one input, ``report``: a name, or a (name, value) pair; a shape it cannot
    read is a ``TypeError``, a name or state the core does not know or an outcome the pending
    step cannot have an ``InvalidArgumentError`` (the receipt unchanged)."""
    verifier, now = rk.WebhookVerifier("whsec_window"), 1_763_784_000
    headers, body = signed("dlv_r1")
    r = verifier.receipt(headers, body, namespace="org_1", now=now, transactional=True)
    assert isinstance(r.next(), rk.ReceiptStep.Claim)
    for shape in [None, 1, b"done", ("claimed",), ("claimed", "new", 1), ("claimed", 1), ["claimed", "new"]]:
        with pytest.raises(TypeError):
            r.report(shape)  # type: ignore[arg-type]
    for wrong in ["Done", "claimed", ("claimed", "gone"), ("claimed", True), ("marked", "yes"), ("done", True)]:
        with pytest.raises(rk.InvalidArgumentError, match="outcome|claim"):
            r.report(wrong)  # type: ignore[arg-type]
    with pytest.raises(rk.InvalidArgumentError, match="waiting"):
        r.report("done")  # a claim is answered with the key's state
    assert isinstance(r.report(("claimed", "new")), rk.ReceiptStep.Begin)
    assert isinstance(r.report("done"), rk.ReceiptStep.RunHandler)
    assert isinstance(r.report("done"), rk.ReceiptStep.Commit)
    with pytest.raises(rk.InvalidArgumentError):
        r.report(("enqueued", True))  # no enqueue is pending
    assert isinstance(r.report(("marked", False)), rk.ReceiptStep.Rollback), "the claim was lost"
    assert isinstance(r.report("failed"), rk.ReceiptStep.Release), "a failed rollback counts as done"
    assert isinstance(r.report("failed"), rk.ReceiptStep.Reply), "a failed release counts as done"
    assert r.outcome == "claim_lost" and r.next().status == 503


def test_an_inbox_workers_report_takes_each_outcome_of_the_pending_step_and_refuses_the_rest():
    """An inbox worker's one input, ``report``: ``"done"`` or a (name, value) pair; a shape it
    cannot read is a ``TypeError``, a name the value does not fit or an outcome the pending step
    cannot have an ``InvalidArgumentError`` (the worker unchanged)."""
    w = rk.InboxWorker(max_attempts=2, poll_seconds=5, transactional=True, drain=False, seed=7)
    assert isinstance(w.next(), rk.InboxStep.Claim)
    for shape in [None, 1, b"done", ("claimed",), ("claimed", None, 1), ["done"], ("claimed", 5), ("claimed", ("k",))]:
        with pytest.raises(TypeError):
            w.report(shape, 100.0)  # type: ignore[arg-type]
    for wrong in ["claimed", "Done", ("done", True), ("marked", "yes"), ("failed", True), ("claimed", "row"), ("done", None)]:
        with pytest.raises(rk.InvalidArgumentError):
            w.report(wrong, 100.0)  # type: ignore[arg-type]
    with pytest.raises(rk.InvalidArgumentError, match="waiting"):
        w.report("done", 100.0)  # a claim is answered with what it claimed
    assert isinstance(w.report(("claimed", None), 100.0), rk.InboxStep.Idle)
    with pytest.raises(rk.InvalidArgumentError):
        w.report(("failed", "no"), 100.0)  # a wait cannot fail
    assert isinstance(w.report("done", 105.0), rk.InboxStep.Claim)
    assert isinstance(w.report(("claimed", ("k", "d", "ping", "{}", 1)), 105.0), rk.InboxStep.Begin)
    assert isinstance(w.report("done"), rk.InboxStep.RunHandler)
    assert isinstance(w.report(("failed", "E: the handler failed"), 105.0), rk.InboxStep.Rollback)
    settle = w.report(("failed", "the connection is gone"))  # as good as rolled back
    assert isinstance(settle, rk.InboxStep.Settle) and settle.error == "E: the handler failed" and not settle.poison
    w.report("done")
    assert (w.processed, w.retried, w.poisoned) == (0, 1, 0)


@pytest.mark.parametrize("machine, old, args", [("receipt", "claimed", ("new",)), ("receipt", "store_failed", ()),
                                                ("worker", "claimed", (None, 0.0)), ("worker", "store_failed", ())])
def test_the_inputs_a_receipts_and_a_workers_report_replaced_still_work_for_one_release_and_warn(machine, old, args):
    if machine == "receipt":
        headers, body = signed("dlv_old")
        m = rk.WebhookVerifier("whsec_window").receipt(headers, body, namespace="org_1", now=1_763_784_000)
        assert isinstance(m.next(), rk.ReceiptStep.Claim)
    else:
        m = rk.InboxWorker(transactional=True, drain=True, seed=1)
        assert isinstance(m.next(), rk.InboxStep.Claim)
    name = "WebhookReceipt" if machine == "receipt" else "InboxWorker"
    with pytest.warns(DeprecationWarning, match=rf"{name}\.{old}\(\) is deprecated \(kept for one release\): use report"):
        step = getattr(m, old)(*args)
    assert step == m.next() and not isinstance(step, (rk.ReceiptStep.Claim, rk.InboxStep.Claim)), "it still works"
