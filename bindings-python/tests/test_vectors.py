"""Shared vectors (tests/vectors/*.json) against the installed wheel."""

from types import SimpleNamespace

import pytest
import royaltykit as rk
from conftest import body_bytes, load

WEBHOOK = load("webhook.json")
DEDUP = load("dedup.json")
assert len(WEBHOOK["cases"]) >= 60


def _kwargs(i: dict) -> dict:
    kw = {"now": i["now"]}
    if "tolerance" in i:
        kw["tolerance"] = i["tolerance"]
    if "max_body_bytes" in i:
        kw["max_body_bytes"] = i["max_body_bytes"]
    return kw


@pytest.mark.parametrize("case", WEBHOOK["cases"], ids=lambda c: f"tc{c['tcId']}")
def test_webhook_vector(case):
    i = case["input"]
    headers = [tuple(p) for p in i["headers"]]
    run = lambda: rk.verify_webhook(headers, body_bytes(i["body"]), i["secrets"], **_kwargs(i))  # noqa: E731
    if case["result"] == "valid":
        v = run()
        e = case["expected"]
        ev = e["event"]
        assert (v.delivery_id, v.timestamp, v.secret_index, v.content_key) == (
            e["delivery_id"], e["timestamp"], e["secret_index"], e["content_key"])
        assert (v.event.name, v.event.resource_type, v.event.resource_reference, v.event.resource_url) == (
            ev["name"], ev["resource_type"], ev["resource_reference"], ev["resource_url"])
        assert (v.event.occurred_at, v.event.replay_of, v.event.is_test) == (
            ev["occurred_at"], ev["replay_of"], ev["is_test"])
    else:
        with pytest.raises(rk.RoyaltyKitError) as info:
            run()
        assert (info.value.code, info.value.http_status) == (case["error"], case["http_status"]), str(info.value)


@pytest.mark.parametrize("case", WEBHOOK["cases"], ids=lambda c: f"tc{c['tcId']}")
def test_verifier_object_agrees(case):
    i = case["input"]
    headers = [tuple(p) for p in i["headers"]]
    opts = {k: v for k, v in _kwargs(i).items() if k != "now"}

    def outcome(f):
        try:
            return f().content_key
        except rk.RoyaltyKitError as e:
            return e.code

    try:
        verifier = rk.WebhookVerifier(i["secrets"], **opts)
    except rk.WebhookVerificationError as e:
        assert e.code == "invalid_secret"
        return
    a = outcome(lambda: verifier.verify(headers, body_bytes(i["body"]), now=i["now"]))
    b = outcome(lambda: rk.verify_webhook(headers, body_bytes(i["body"]), i["secrets"], **_kwargs(i)))
    assert a == b


def _outcome(f):
    try:
        return {"value": f()}
    except rk.RoyaltyKitError as e:
        return {"error": e.code}


def _expect(c, got):
    assert got == ({"value": c["expected"]} if "expected" in c else {"error": c["error"]}), c["comment"]


@pytest.mark.parametrize("c", DEDUP["delivery_key"], ids=lambda c: c["comment"])
def test_delivery_key(c):
    _expect(c, _outcome(lambda: rk.delivery_key(c["input"]["namespace"], c["input"]["delivery_id"])))


@pytest.mark.parametrize("c", DEDUP["event_key"], ids=lambda c: c["comment"])
def test_event_key(c):
    i = c["input"]
    ev = SimpleNamespace(name=i["name"], resource_type=i["resource_type"],
                         resource_reference=i["resource_reference"], occurred_at_text=i["occurred_at"])
    _expect(c, _outcome(lambda: rk.event_key(i["namespace"], ev)))


@pytest.mark.parametrize("c", DEDUP["content_key"], ids=lambda c: c["comment"])
def test_content_key(c):
    i = c["input"]
    _expect(c, _outcome(lambda: rk.content_key(i["secret"], i["timestamp"], body_bytes(i["body"]))))


@pytest.mark.parametrize("c", DEDUP["idempotency_key"], ids=lambda c: c["comment"])
def test_idempotency_key(c):
    i = c["input"]
    _expect(c, _outcome(lambda: rk.idempotency_key(i["tenant"], i["operation_id"], body_bytes(i["body"]))))


@pytest.mark.parametrize("c", DEDUP["window"], ids=lambda c: c["comment"])
def test_dedup_window(c):
    if "error" in c:
        with pytest.raises(rk.InvalidArgumentError) as info:
            rk.DedupWindow(c["capacity"], c["ttl_seconds"])
        assert info.value.code == c["error"]
        return
    w = rk.DedupWindow(c["capacity"], c["ttl_seconds"])
    for op in c["ops"]:
        assert w.check_and_insert(op["key"], op["now"]) is op["expected"], op
