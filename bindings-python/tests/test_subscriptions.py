"""Webhook subscriptions and their reveal-once secrets (issue 43 point 5): ``revealed_secret`` on
its own, and ``create_subscription`` / ``rotate_secret`` on the enterprise clients against the
shared fake API (tests/fakeapi/server.py) over real loopback HTTP with each HTTP library. The
secret equals the server's, shows in no repr, str, event, log line, telemetry or error; a lost
create is sent again with its Idempotency-Key; a lost rotation is never sent again."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest
import requests

import royaltykit as rk
from royaltykit.client import AsyncEnterpriseClient, EnterpriseClient
from test_client import KINDS, Fake

EVENTS = ["ddex.delivery.failed", "ddex.import.completed"]
DELIVERY = (b'{"event":"ddex.delivery.failed","resource":{"type":"delivery","reference":"d_1",'
            b'"url":"/api/v1/ddex/deliveries/d_1"},"occurred_at":"2026-11-27T10:00:00Z"}')


class Recorder:
    """A telemetry that keeps everything it is given, as text."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def operation(self, name: str, base_url: str) -> Recorder:
        self.seen.append(f"operation {name} {base_url}")
        return self

    def event(self, event: Any) -> None:
        self.seen.append(json.dumps(event, default=repr))

    def end(self, error: BaseException | None = None) -> None:
        self.seen.append(f"end {error!r} {error}")


def run(kind: str, fake: Fake, method: str, *args: Any, events: list[dict] | None = None,
        telemetry: Recorder | None = None, **kw: Any) -> Any:
    """``method`` of an enterprise client over each HTTP library: its result, or the exception it
    raised (returned, so each kind's can be checked the same way)."""
    common: dict[str, Any] = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1", clock=fake.clock,
                                  on_event=None if events is None else events.append, telemetry=telemetry)
    try:
        if kind == "async":
            async def main() -> Any:
                async with httpx.AsyncClient() as http:
                    client = AsyncEnterpriseClient(http, sleep=fake.asleep, **common)
                    return await getattr(client, method)(*args, **kw)
            return asyncio.run(main())
        with httpx.Client() if kind == "httpx" else requests.Session() as http:
            return getattr(EnterpriseClient(http, sleep=fake.sleep, **common), method)(*args, **kw)
    except rk.RoyaltyKitError as e:
        return e


def printed(*values: Any) -> str:
    """Everything a user could print of ``values``: repr, str, and the repr of their parts."""
    out = []
    for v in values:
        out += [repr(v), str(v), repr(getattr(v, "__dict__", ""))]
        if isinstance(v, rk.RevealedSecret):
            out += [repr(v.secret), str(v.secret), v.record, repr(v.secrets()), repr(v.secrets("whsec_prev"))]
    return "\n".join(out)


# ---- revealed_secret on its own --------------------------------------------------------------------


def test_a_create_answer_reveals_its_secret_and_keeps_the_rest_in_the_record():
    body = b'{"data": {"reference": "wh_9", "name": "ops", "secret": "whsec_unit_1", "active": true}}'
    for given in (body, bytearray(body), memoryview(body), body.decode()):
        r = rk.revealed_secret(given)
        assert isinstance(r, rk.RevealedSecret) and isinstance(r.secret, rk.WebhookSecret)
        assert r.secret.secret == "whsec_unit_1" and r.secret.valid_until is None
        assert (r.reference, r.previous_valid_until) == ("wh_9", None)
        assert json.loads(r.record) == {"data": {"reference": "wh_9", "name": "ops", "active": True}}
        assert [s.secret for s in r.secrets()] == ["whsec_unit_1"]
        assert [s.secret for s in r.secrets("whsec_prev")] == ["whsec_unit_1"], "a create keeps no previous"
    assert "whsec_unit_1" not in printed(r)
    assert repr(r) == "RevealedSecret(secret=WebhookSecret('[redacted]'), previous_valid_until=None, reference=\"wh_9\")"


def test_a_rotation_answer_gives_the_secrets_a_receiver_takes():
    r = rk.revealed_secret(b'{"new_secret": "whsec_new", "previous_secret_valid_until": "2026-11-27T10:05:00Z"}')
    assert (r.previous_valid_until, r.reference) == (1_795_773_900, None)
    new, old = r.secrets(previous="whsec_old")
    assert (new.secret, new.valid_until, old.secret, old.valid_until) == ("whsec_new", None, "whsec_old", 1_795_773_900)
    assert len(r.secrets(None)) == 1
    text = printed(r)
    assert "whsec_new" not in text and "whsec_old" not in text
    assert "previous_valid_until=1795773900" in repr(r)


@pytest.mark.parametrize("body", [b'{"data": {"token_like": "hunter2"}}', b'["hunter2"]', b"secret=hunter2",
                                  b'{"secret": "hunter2", "previous_secret_valid_until": "soon"}', b'{"secret": ""}'])
def test_an_answer_without_a_secret_is_secret_not_revealed_and_never_echoed(body):
    with pytest.raises(rk.WebhookVerificationError) as raised:
        rk.revealed_secret(body)
    e = raised.value
    assert e.code == "secret_not_revealed" and e.http_status == 500 and isinstance(e, rk.RoyaltyKitError)
    assert "hunter2" not in printed(e) and "hunter2" not in repr(e.args)


def test_a_body_over_one_mib_is_refused():
    body = b'{"secret": "whsec_big", "pad": "' + b"x" * (1024 * 1024) + b'"}'
    with pytest.raises(rk.WebhookVerificationError, match="1 MiB") as raised:
        rk.revealed_secret(body)
    assert "whsec_big" not in str(raised.value)


def test_the_revealed_secret_signs_and_verifies_as_given():
    r = rk.revealed_secret(b'{"secret": "whsec_roundtrip"}')
    headers = rk.sign_webhook(r.secret, DELIVERY, timestamp=1_795_000_000, delivery_id="dlv_1")
    assert headers == rk.sign_webhook("whsec_roundtrip", DELIVERY, timestamp=1_795_000_000, delivery_id="dlv_1")
    assert rk.verify_webhook(headers, DELIVERY, r.secrets(), now=1_795_000_000).delivery_id == "dlv_1"


def test_revealed_secrets_cannot_be_built_or_changed():
    with pytest.raises(TypeError):
        rk.RevealedSecret()
    r = rk.revealed_secret(b'{"secret": "s"}')
    with pytest.raises(AttributeError):
        r.reference = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        rk.revealed_secret(42)  # type: ignore[arg-type]


def test_use_secrets_rotates_a_live_receiver():
    """A receiver built with secret A takes ``rotated.secrets(previous=A)``: deliveries signed with
    A or with the new B verify until the overlap ends (the injected ``now``), then only B's."""
    old = "whsec_live_a"
    handled: list[str] = []
    receiver = rk.WebhookReceiver(old, namespace="org-1/rotation", handler=lambda d: handled.append(d.delivery_id))
    rotated = rk.revealed_secret(b'{"secret": "whsec_live_b", "previous_secret_valid_until": "2026-11-27T10:05:00Z"}')
    until = 1_795_773_900
    assert rotated.previous_valid_until == until
    now = until - 300  # the rotation: A stays valid for 300 s

    def status(secret: str | rk.WebhookSecret, delivery_id: str, at: int) -> int:
        headers = rk.sign_webhook(secret, DELIVERY, timestamp=at, delivery_id=delivery_id)
        return receiver.receive(headers, DELIVERY, now=at).status

    assert (status(old, "dlv_a0", now), status(rotated.secret, "dlv_b0", now)) == (200, 401), "before: A only"
    verifier = receiver.verifier
    receiver.use_secrets(rotated.secrets(previous=old))
    assert receiver.verifier is not verifier and receiver.max_body_bytes == verifier.max_body_bytes
    assert (status(old, "dlv_a1", now), status(rotated.secret, "dlv_b1", now)) == (200, 200), "the overlap: both"
    assert (status(old, "dlv_a2", until), status(rotated.secret, "dlv_b2", until)) == (200, 200), "its last second"
    assert (status(old, "dlv_a3", until + 1), status(rotated.secret, "dlv_b3", until + 1)) == (401, 200), "then B only"
    assert handled == ["dlv_a0", "dlv_a1", "dlv_b1", "dlv_a2", "dlv_b2", "dlv_b3"]
    # the constructor's validation (invalid_secret); a refused list changes nothing
    for bad in ["", [], [rk.WebhookSecret("whsec_live_b"), ""]]:
        with pytest.raises(rk.WebhookVerificationError) as raised:
            receiver.use_secrets(bad)
        assert raised.value.code == "invalid_secret"
    assert status(rotated.secret, "dlv_b4", until + 1) == 200
    receiver.use_secrets(s for s in ["whsec_live_c"])  # any iterable, as the constructor
    assert (status(rotated.secret, "dlv_b5", until + 1), status("whsec_live_c", "dlv_c", until + 1)) == (401, 200)


# ---- create_subscription ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_create_reveals_the_server_s_secret_and_never_shows_it(kind, fake, caplog):
    fake.reset()
    events: list[dict] = []
    telemetry = Recorder()
    with caplog.at_level(logging.DEBUG, logger="royaltykit"):
        created = run(kind, fake, "create_subscription", "ops", "https://hooks.example/rk", EVENTS,
                      events=events, telemetry=telemetry)
    assert isinstance(created, rk.RevealedSecret), created
    stats = fake.stats()
    assert stats["webhooks_created"] == 1 and stats["requests"]["createEnterpriseWebhook"] == 1
    assert created.reference == "wh_001"
    server = stats["webhooks"]["wh_001"]
    secret = server["secret"]
    assert created.secret.secret == secret and created.secret.valid_until is None
    assert (server["name"], server["endpoint_url"], server["events"]) == ("ops", "https://hooks.example/rk", EVENTS)
    assert json.loads(created.record) == {"data": {"reference": "wh_001", "name": "ops",
                                                   "endpoint_url": "https://hooks.example/rk", "events": EVENTS,
                                                   "active": True}}
    assert [s.secret for s in created.secrets()] == [secret]
    assert any(e["kind"] == "send" and e["operation"] == "createEnterpriseWebhook" for e in events)
    assert any(s.startswith("operation createEnterpriseWebhook") for s in telemetry.seen)
    assert telemetry.seen[-1] == "end None None"
    seen = "\n".join([printed(created), json.dumps(events, default=repr), "\n".join(telemetry.seen), caplog.text])
    assert secret not in seen


@pytest.mark.parametrize("kind", KINDS)
def test_a_lost_create_is_sent_again_with_its_key_and_makes_one_subscription(kind, fake):
    fake.reset(faults=[{"op": "createEnterpriseWebhook", "nth": 1, "do": "drop_after_apply"}])
    events: list[dict] = []
    created = run(kind, fake, "create_subscription", "ops", "https://hooks.example/rk", EVENTS, events=events)
    assert isinstance(created, rk.RevealedSecret), created
    stats = fake.stats()
    assert stats["webhooks_created"] == 1 and stats["idempotent_replays"] == 1, stats
    assert stats["requests"]["createEnterpriseWebhook"] == 2
    assert created.reference == "wh_001" and created.secret.secret == stats["webhooks"]["wh_001"]["secret"]
    assert any(e["kind"] == "retry" for e in events), "the second send is the Call's retry"
    assert stats["webhooks"]["wh_001"]["secret"] not in json.dumps(events, default=repr)


@pytest.mark.parametrize("kind", KINDS)
def test_a_request_id_makes_the_same_create_in_another_process(kind, fake):
    fake.reset()
    first = run(kind, fake, "create_subscription", "ops", "https://hooks.example/rk", EVENTS, request_id="sub-ops-1")
    again = run(kind, fake, "create_subscription", "ops", "https://hooks.example/rk", EVENTS, request_id="sub-ops-1")
    other = run(kind, fake, "create_subscription", "ops", "https://hooks.example/rk", EVENTS, request_id="sub-ops-2")
    stats = fake.stats()
    assert stats["webhooks_created"] == 2 and stats["idempotent_replays"] == 1, stats
    assert (first.reference, again.reference, other.reference) == ("wh_001", "wh_001", "wh_002")
    assert first.secret.secret == again.secret.secret == stats["webhooks"]["wh_001"]["secret"]
    # the key is derived under the organization's API key, as in every language: the same request
    # sent by hand with rk.idempotency_key(api key, operation, request_id) is a replay too
    key = rk.idempotency_key("key-1", "createEnterpriseWebhook", "sub-ops-1")
    by_hand = run(kind, fake, "request_raw", "createEnterpriseWebhook", idempotency_key=key,
                  body={"name": "ops", "endpoint_url": "https://hooks.example/rk", "events": EVENTS})
    assert rk.revealed_secret(by_hand.body).secret.secret == first.secret.secret
    assert fake.stats()["idempotent_replays"] == 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("url", ["http://hooks.example/rk", "https://127.0.0.1/rk", "https://user:pw@hooks.example/rk",
                                 "https://localhost/rk"])
def test_an_endpoint_the_core_refuses_is_never_sent(kind, url, fake):
    fake.reset()
    e = run(kind, fake, "create_subscription", "ops", url, EVENTS)
    assert isinstance(e, rk.RequestBuildError) and e.code == "invalid_endpoint_url", e
    assert e.parameter == "body.endpoint_url"
    assert "createEnterpriseWebhook" not in fake.stats()["requests"], "the create is never sent"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [("ops", "https://hooks.example/rk", "ddex.delivery.failed"),
                                  ("ops", "https://hooks.example/rk", [1]),
                                  (None, "https://hooks.example/rk", EVENTS),
                                  ("ops", b"https://hooks.example/rk", EVENTS)])
def test_wrong_arguments_are_type_errors_before_any_request(kind, args, fake):
    fake.reset()
    with pytest.raises(TypeError):
        run(kind, fake, "create_subscription", *args)
    with pytest.raises(TypeError):
        run(kind, fake, "rotate_secret", 7)
    assert fake.stats()["requests"] == {}


# ---- rotate_secret ----------------------------------------------------------------------------------


def verifies(headers: dict, secrets: list[rk.WebhookSecret], now: int) -> bool:
    try:
        rk.verify_webhook(headers, DELIVERY, secrets, now=now)
        return True
    except rk.WebhookVerificationError as e:
        assert e.code == "no_matching_signature", e
        return False


@pytest.mark.parametrize("kind", KINDS)
def test_rotate_reveals_the_new_secret_and_the_receiver_takes_both_until_the_end(kind, fake, caplog):
    fake.reset()
    created = run(kind, fake, "create_subscription", "ops", "https://hooks.example/rk", EVENTS)
    old = created.secret.secret
    events: list[dict] = []
    telemetry = Recorder()
    with caplog.at_level(logging.DEBUG, logger="royaltykit"):
        rotated = run(kind, fake, "rotate_secret", created.reference, events=events, telemetry=telemetry)
    assert isinstance(rotated, rk.RevealedSecret), rotated
    stats = fake.stats()
    server = stats["webhooks"]["wh_001"]
    assert stats["rotations"] == 1 and stats["requests"]["rotateEnterpriseWebhookSecret"] == 1
    assert rotated.secret.secret == server["secret"] != old and server["previous"] == old
    until = rk.parse_timestamp(server["previous_valid_until"])
    assert until is not None and rotated.previous_valid_until == until and rotated.reference == "wh_001"
    assert json.loads(rotated.record) == {"data": {"reference": "wh_001",
                                                   "previous_secret_valid_until": server["previous_valid_until"]}}
    secrets = rotated.secrets(previous=old)
    assert len(secrets) == 2 and [s.valid_until for s in secrets] == [None, until]
    # deliveries signed with either secret verify until previous_valid_until; the old one not after it
    before, after = until - 60, until + 60
    with_old = rk.sign_webhook(old, DELIVERY, timestamp=before, delivery_id="dlv_old")
    with_new = rk.sign_webhook(rotated.secret, DELIVERY, timestamp=before, delivery_id="dlv_new")
    assert verifies(with_old, secrets, before) and verifies(with_new, secrets, before)
    late_old = rk.sign_webhook(old, DELIVERY, timestamp=after, delivery_id="dlv_old_late")
    late_new = rk.sign_webhook(rotated.secret, DELIVERY, timestamp=after, delivery_id="dlv_new_late")
    assert not verifies(late_old, secrets, after) and verifies(late_new, secrets, after)
    verifier = rk.WebhookVerifier(secrets)
    assert verifier.verify(with_old, DELIVERY, now=before).secret_index == 1
    seen = "\n".join([printed(rotated, verifier), json.dumps(events, default=repr), "\n".join(telemetry.seen),
                      caplog.text])
    assert server["secret"] not in seen and old not in seen


@pytest.mark.parametrize("kind", KINDS)
def test_a_lost_rotation_is_never_sent_again_and_says_rotate_again(kind, fake, caplog):
    fake.reset(faults=[{"op": "rotateEnterpriseWebhookSecret", "nth": 1, "do": "drop_after_apply"}])
    created = run(kind, fake, "create_subscription", "ops", "https://hooks.example/rk", EVENTS)
    events: list[dict] = []
    telemetry = Recorder()
    with caplog.at_level(logging.DEBUG, logger="royaltykit"):
        lost = run(kind, fake, "rotate_secret", created.reference, events=events, telemetry=telemetry)
    assert isinstance(lost, rk.ReconcileRequired), lost
    assert lost.code == "reconcile_required" and lost.reconcile == "rotate_again"
    assert lost.operation_id == "rotateEnterpriseWebhookSecret"
    assert "shown only once" in str(lost) and "rotate again" in str(lost)
    stats = fake.stats()
    assert stats["rotations"] == 1 and stats["requests"]["rotateEnterpriseWebhookSecret"] == 1, stats
    assert any(e["kind"] == "reconcile" for e in events)
    assert telemetry.seen[-1].startswith("end ReconcileRequired")
    server = stats["webhooks"]["wh_001"]
    seen = "\n".join([printed(lost), json.dumps(events, default=repr), "\n".join(telemetry.seen), caplog.text])
    assert server["secret"] not in seen and server["previous"] not in seen
    # rotating again at once gives a secret the server holds
    again = run(kind, fake, "rotate_secret", created.reference)
    assert again.secret.secret == fake.stats()["webhooks"]["wh_001"]["secret"]


@pytest.mark.parametrize("kind", KINDS)
def test_rotating_an_unknown_subscription_is_an_api_error(kind, fake):
    fake.reset()
    e = run(kind, fake, "rotate_secret", "wh_missing")
    assert isinstance(e, rk.ApiError) and e.kind == "not_found" and e.status == 404
    assert fake.stats()["rotations"] == 0
