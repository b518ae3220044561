"""Delivery recovery (issue 43 point 3): ``recover_deliveries`` on the enterprise clients against the
shared fake API (tests/fakeapi/server.py) over real loopback HTTP with each HTTP library, and a real
receiver of this package: a subscription is created with the client, its endpoint a
``WebhookReceiver`` on this machine, to which the fake sends its signed deliveries and replays.
Lost deliveries are replayed and each event is handled exactly once; a second run replays nothing;
pending replays are not sent again; a refused replay is reported and the run goes on. Then
``state()`` of every built-in store: read-only, never a claim.

The core refuses a subscription endpoint on a loopback address, a local name or plain http, as the
service would, so the subscription names a public HTTPS ``endpoint_url`` (``ENDPOINT_URL``) and the
fake's route (``POST /_fake/route``) sends its deliveries to the receiver, served over plain http
on 127.0.0.1, as DNS would: no certificate, no host-name lookup, nothing skipped."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests

import royaltykit as rk
from royaltykit.client import AsyncEnterpriseClient, EnterpriseClient
from royaltykit.stores import AsyncPostgresDedupStore, PostgresDedupStore, SqliteDedupStore
from resp import AsyncResp, Resp
from test_client import KINDS, Fake

NAMESPACE = "org-1/recovery"
EVENT = "ddex.delivery.failed"
# The subscription's public endpoint, as the service takes it; the fake routes it to the receiver.
ENDPOINT_URL = "https://hooks.example.com/royaltykit"


class Endpoint:
    """A ``WebhookReceiver`` over plain http on 127.0.0.1 (``url``), where the fake's route sends
    the deliveries of ``ENDPOINT_URL``. ``serve`` puts a receiver behind it; each handler run
    records the event's resource."""

    def __init__(self) -> None:
        self.receiver: rk.WebhookReceiver | None = None
        self.handled: list[str] = []
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver = endpoint.receiver
                if receiver is None:
                    status, reply = 503, b"{}"
                else:
                    receipt = receiver.receive(list(self.headers.items()), body)
                    status, reply = receipt.status, receipt.body
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/webhooks"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def record(self, delivery: rk.VerifiedWebhook) -> None:
        with self.lock:
            self.handled.append(delivery.event.resource_reference)

    def serve(self, secrets: list[rk.WebhookSecret], store: Any, handler: Any = None) -> None:
        self.handled = []
        self.receiver = rk.WebhookReceiver(secrets, namespace=NAMESPACE, handler=handler or self.record, store=store)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def endpoint():
    e = Endpoint()
    yield e
    e.close()


class AsyncStates:
    """A store whose ``state`` is a coroutine (as ``AsyncRedisDedupStore``'s): the async client awaits it."""

    def __init__(self, store: Any) -> None:
        self.store = store

    async def state(self, key: str) -> str:
        await asyncio.sleep(0)
        return str(self.store.state(key))


def client_run(kind: str, fake: Fake, method: str, *args: Any, events: list[dict] | None = None, **kw: Any) -> Any:
    """``method`` of an enterprise client over each HTTP library (its result)."""
    common: dict[str, Any] = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1", clock=fake.clock,
                                  on_event=None if events is None else events.append)
    if kind == "async":
        async def main() -> Any:
            async with httpx.AsyncClient() as http:
                client = AsyncEnterpriseClient(http, sleep=fake.asleep, **common)
                return await getattr(client, method)(*args, **kw)
        return asyncio.run(main())
    with httpx.Client() if kind == "httpx" else requests.Session() as http:
        return getattr(EnterpriseClient(http, sleep=fake.sleep, **common), method)(*args, **kw)


def route(fake: Fake, endpoint_url: str, to: str) -> None:
    """The fake's deliveries to ``endpoint_url`` go to ``to`` from now on (until its next reset)."""
    assert fake.control("route", {"from": endpoint_url, "to": to})["routes"][endpoint_url] == to


def subscribe(kind: str, fake: Fake, endpoint: Endpoint, store: Any, handler: Any = None) -> str:
    """A subscription created with the client on ``ENDPOINT_URL``, routed to the receiver (with its
    revealed secret)."""
    created = client_run(kind, fake, "create_subscription", "recovery", ENDPOINT_URL, [EVENT])
    assert isinstance(created, rk.RevealedSecret) and created.reference
    route(fake, ENDPOINT_URL, endpoint.url)
    endpoint.serve(created.secrets(), store, handler)
    return created.reference


def deliver(fake: Fake, subscription: str, lost: list[bool]) -> list[str]:
    """One event per entry of ``lost``, sent now by the fake (or lost: never sent, failed)."""
    references = []
    for lose in lost:
        answer = fake.control("deliver", {"reference": subscription, "event": EVENT, "lose": lose})
        assert answer["status"] == ("failed" if lose else "delivered"), answer
        references.append(answer["delivery"])
    return references


def recover(kind: str, fake: Fake, subscription: str, store: Any, events: list[dict] | None = None,
            **kw: Any) -> rk.RecoveryReport:
    since = datetime.now(timezone.utc) - timedelta(hours=1)
    if kind == "async" and not isinstance(store, AsyncStates):
        store = AsyncStates(store)
    report = client_run(kind, fake, "recover_deliveries", subscription, store=store, namespace=NAMESPACE,
                        since=since, events=events, **kw)
    assert isinstance(report, rk.RecoveryReport), report
    return report


def delivered_replays(fake: Fake, count: int) -> list[dict]:
    """The fake's replays once ``count`` of them were delivered (they are sent in the background)."""
    deadline = time.monotonic() + 15
    while True:
        replays = [d for d in fake.stats()["deliveries"] if d.get("replay_of")]
        if len(replays) == count and all(d["status"] == "delivered" for d in replays):
            return replays
        assert time.monotonic() < deadline, f"the replays were not delivered: {replays}"
        time.sleep(0.05)


def actions(report: rk.RecoveryReport) -> dict[str, str]:
    return {d.reference: d.action for d in report.deliveries}


@pytest.mark.parametrize("kind", KINDS)
def test_now_decides_when_a_delivery_in_an_unknown_state_has_ended(kind: str, fake: Fake,
                                                                   endpoint: Endpoint) -> None:
    """A status the spec does not name may still be attempted within the redelivery schedule: the
    run at the real time leaves it alone; the same log read at ``now`` thirty days on replays it
    (Node's ``now`` and Kotlin's ``now`` are tested the same way)."""
    fake.reset()
    window = rk.DedupWindow(1000)
    subscription = subscribe(kind, fake, endpoint, window)
    answer = fake.control("deliver", {"reference": subscription, "event": EVENT, "lose": True, "status": "abandoned"})
    assert answer["status"] == "abandoned", answer
    today = recover(kind, fake, subscription, window)
    assert actions(today) == {answer["delivery"]: "in_flight"} and today.replayed == 0
    assert [d.status for d in today.deliveries] == ["abandoned"], "an unknown status is kept as sent"
    later = recover(kind, fake, subscription, window, now=fake.clock() + 30 * 86_400)
    assert actions(later) == {answer["delivery"]: "replayed"} and later.replayed == 1
    delivered_replays(fake, 1)
    assert len(endpoint.handled) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_lost_deliveries_are_replayed_and_every_event_is_handled_once(kind: str, fake: Fake,
                                                                      endpoint: Endpoint) -> None:
    fake.reset()
    window = rk.DedupWindow(1000)
    subscription = subscribe(kind, fake, endpoint, window)
    lost = [False, True, False, True, False]
    references = deliver(fake, subscription, lost)
    assert len(endpoint.handled) == 3
    events: list[dict] = []
    report = recover(kind, fake, subscription, window, events=events)
    assert actions(report) == {r: "replayed" if gone else "processed" for r, gone in zip(references, lost)}
    assert (report.entries, report.considered, report.before_since, report.skipped, report.replayed, report.end) == (
        5, 5, 0, 0, 2, "last")
    replays = delivered_replays(fake, 2)
    assert {d.replay for d in report.deliveries if d.action == "replayed"} == {r["reference"] for r in replays}
    assert {r["replay_of"] for r in replays} == {r for r, gone in zip(references, lost) if gone}
    # every event's handler ran exactly once: five distinct resources
    assert len(endpoint.handled) == 5 and len(set(endpoint.handled)) == 5, endpoint.handled
    sent = [e["operation"] for e in events if e["kind"] == "send"]
    assert sent.count("listEnterpriseWebhookDeliveries") == 1 and sent.count("replayEnterpriseWebhookDelivery") == 2

    again = recover(kind, fake, subscription, window)
    assert actions(again) == {r: "processed_by_replay" if gone else "processed" for r, gone in zip(references, lost)}
    assert again.replayed == 0 and again.entries == 7 and again.considered == 5
    by_original = {r["replay_of"]: r["reference"] for r in replays}
    assert all(d.replays == ([by_original[d.reference]] if d.reference in by_original else []) for d in again.deliveries)
    stats = fake.stats()
    assert stats["replays"] == 2 and stats["requests"]["replayEnterpriseWebhookDelivery"] == 2
    assert len(endpoint.handled) == 5


@pytest.mark.parametrize("kind", KINDS)
def test_a_replay_still_pending_is_not_sent_again(kind: str, fake: Fake, endpoint: Endpoint) -> None:
    fake.reset(replays="hold")
    window = rk.DedupWindow(1000)
    subscription = subscribe(kind, fake, endpoint, window)
    lost = [True, False, True]
    references = deliver(fake, subscription, lost)
    first = recover(kind, fake, subscription, window)
    assert first.replayed == 2
    second = recover(kind, fake, subscription, window)
    assert actions(second) == {r: "replay_pending" if gone else "processed" for r, gone in zip(references, lost)}
    assert second.replayed == 0 and all(d.replay is None for d in second.deliveries)
    stats = fake.stats()
    assert stats["replays"] == 2 and stats["requests"]["replayEnterpriseWebhookDelivery"] == 2
    assert len(endpoint.handled) == 1, "held replays are never sent"


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_replay_is_reported_and_the_run_goes_on(kind: str, fake: Fake, endpoint: Endpoint) -> None:
    fake.reset(faults=[{"op": "replayEnterpriseWebhookDelivery", "nth": 1, "do": "status", "status": 404}])
    window = rk.DedupWindow(1000)
    subscription = subscribe(kind, fake, endpoint, window)
    refused, replayed = deliver(fake, subscription, [True, True])
    report = recover(kind, fake, subscription, window)
    assert actions(report) == {refused: "replay_failed", replayed: "replayed"}
    failed = report.deliveries[0]
    assert (failed.error, failed.replay) == ("api_error", None), "the ApiError's code"
    assert report.replayed == 1 and report.deliveries[1].error is None
    delivered_replays(fake, 1)
    # the next run replays the refused one; the other was processed through its replay
    again = recover(kind, fake, subscription, window)
    assert actions(again) == {refused: "replayed", replayed: "processed_by_replay"}
    delivered_replays(fake, 2)
    assert len(endpoint.handled) == 2 and len(set(endpoint.handled)) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_replay_that_may_have_been_applied_is_never_sent_again(kind: str, fake: Fake, endpoint: Endpoint) -> None:
    # The service applies the replay, then the connection drops: an unsafe create is not retried.
    fake.reset(faults=[{"op": "replayEnterpriseWebhookDelivery", "nth": 1, "do": "drop_after_apply"}])
    window = rk.DedupWindow(1000)
    subscription = subscribe(kind, fake, endpoint, window)
    (reference,) = deliver(fake, subscription, [True])
    report = recover(kind, fake, subscription, window)
    assert actions(report) == {reference: "replay_failed"} and report.deliveries[0].error == "reconcile_required"
    assert fake.stats()["requests"]["replayEnterpriseWebhookDelivery"] == 1
    delivered_replays(fake, 1)
    again = recover(kind, fake, subscription, window)
    assert actions(again) == {reference: "processed_by_replay"}
    stats = fake.stats()
    assert stats["replays"] == 1 and stats["requests"]["replayEnterpriseWebhookDelivery"] == 1
    assert len(endpoint.handled) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_recovery_with_the_sqlite_store_applies_every_effect_once(kind: str, fake: Fake, endpoint: Endpoint,
                                                                  tmp_path: Path) -> None:
    fake.reset()
    database = tmp_path / "app.sqlite"
    setup = sqlite3.connect(database, isolation_level=None)
    setup.execute("CREATE TABLE effects (resource TEXT NOT NULL)")
    setup.close()
    store = SqliteDedupStore(database)

    def handler(delivery: rk.VerifiedWebhook, connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO effects (resource) VALUES (?)", [delivery.event.resource_reference])

    subscription = subscribe(kind, fake, endpoint, store, handler)
    lost = [True, False, False, True, False]
    references = deliver(fake, subscription, lost)
    report = recover(kind, fake, subscription, store)
    assert actions(report) == {r: "replayed" if gone else "processed" for r, gone in zip(references, lost)}
    assert report.replayed == 2
    delivered_replays(fake, 2)
    check = sqlite3.connect(database)
    resources = [r for (r,) in check.execute("SELECT resource FROM effects")]
    check.close()
    assert len(resources) == 5 and len(set(resources)) == 5, resources
    again = recover(kind, fake, subscription, store)
    assert actions(again) == {r: "processed_by_replay" if gone else "processed" for r, gone in zip(references, lost)}
    assert again.replayed == 0 and fake.stats()["replays"] == 2
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_refused_before_any_request(kind: str, fake: Fake) -> None:
    fake.reset()
    window = rk.DedupWindow(10)
    since = datetime.now(timezone.utc) - timedelta(hours=1)
    with pytest.raises(TypeError, match="state"):
        client_run(kind, fake, "recover_deliveries", "wh_001", store=object(), namespace=NAMESPACE, since=since)
    for bad in [dict(namespace="", since=since), dict(namespace=NAMESPACE, since=datetime(2026, 11, 27)),
                dict(namespace=NAMESPACE, since=since, max_replays=0),
                dict(namespace=NAMESPACE, since=float("nan"))]:
        with pytest.raises(rk.InvalidArgumentError):
            client_run(kind, fake, "recover_deliveries", "wh_001", store=window, **bad)
    with pytest.raises(rk.InvalidArgumentError) as raised:
        client_run(kind, fake, "recover_deliveries", "", store=window, namespace=NAMESPACE, since=since)
    assert raised.value.argument == "subscription"
    assert fake.stats()["requests"] == {}, "nothing was sent"


def test_an_unknown_subscription_raises_the_api_error(fake: Fake) -> None:
    fake.reset()
    with pytest.raises(rk.ApiError) as raised:
        client_run("httpx", fake, "recover_deliveries", "wh_missing", store=rk.DedupWindow(10), namespace=NAMESPACE,
                   since=0)
    assert raised.value.status == 404


def test_the_blocking_client_refuses_a_coroutine_state(fake: Fake, endpoint: Endpoint) -> None:
    fake.reset()
    window = rk.DedupWindow(100)
    subscription = subscribe("httpx", fake, endpoint, window)
    deliver(fake, subscription, [True])
    with pytest.raises(TypeError, match="AsyncEnterpriseClient"):
        client_run("httpx", fake, "recover_deliveries", subscription, store=AsyncStates(window), namespace=NAMESPACE,
                   since=0)
    assert fake.stats()["replays"] == 0


def test_a_store_failure_is_raised_as_it_is(fake: Fake, endpoint: Endpoint) -> None:
    class Down:
        def state(self, key: str) -> str:
            raise ConnectionError("store down")

    fake.reset()
    subscription = subscribe("requests", fake, endpoint, rk.DedupWindow(10))
    deliver(fake, subscription, [True])
    with pytest.raises(ConnectionError, match="store down"):
        client_run("requests", fake, "recover_deliveries", subscription, store=Down(), namespace=NAMESPACE, since=0)
    assert fake.stats()["replays"] == 0


# ---- state() of every built-in store: new -> claim -> in_progress -> commit -> done, never a claim --


def test_the_window_state_reads_without_claiming() -> None:
    window, key, now = rk.DedupWindow(10), rk.delivery_key(NAMESPACE, "dlv_1"), 1_700_000_000
    assert window.state(key, now) == "new"
    assert window.claim(key, now) == "new", "state claimed nothing"
    assert window.state(key, now + 1) == "in_progress"
    window.commit(key, now + 1)
    assert window.state(key, now + 2) == "done" and window.state(key) == "new", "the system clock: long expired"
    with pytest.raises(rk.InvalidArgumentError):
        window.state("")


def lifecycle(store: Any, commit: Any) -> None:
    key = rk.delivery_key(NAMESPACE, "dlv_" + uuid.uuid4().hex)
    assert store.state(key) == "new"
    assert store.claim(key) == "new", "state claimed nothing"
    assert store.state(key) == "in_progress"
    commit(key)
    assert store.state(key) == "done"
    assert store.claim(key) == "done"


def sql_commit(store: Any) -> Any:
    def commit(key: str) -> None:
        connection = store.begin()
        assert store.mark_done(connection, key)
        store.commit_transaction(connection)
    return commit


def test_the_sqlite_store_state(tmp_path: Path) -> None:
    store = SqliteDedupStore(tmp_path / "state.sqlite")
    lifecycle(store, sql_commit(store))
    store.close()


def test_a_sql_claim_past_its_lease_and_a_key_past_its_ttl_read_new(tmp_path: Path) -> None:
    now = [1_700_000_000.0]
    store = SqliteDedupStore(tmp_path / "expiry.sqlite", lease_seconds=5, ttl_seconds=60, clock=lambda: now[0])
    crashed, processed = rk.delivery_key(NAMESPACE, "dlv_crashed"), rk.delivery_key(NAMESPACE, "dlv_processed")
    assert store.claim(crashed) == "new" and store.claim(processed) == "new"
    sql_commit(store)(processed)
    assert (store.state(crashed), store.state(processed)) == ("in_progress", "done")
    now[0] += 10  # the crashed worker's lease ran out: nobody holds the key
    assert (store.state(crashed), store.state(processed)) == ("new", "done")
    now[0] += 60  # past the TTL: forgotten
    assert store.state(processed) == "new"
    store.close()


def pg_dsn() -> str:
    value = os.environ.get("ROYALTYKIT_PG_DSN")
    if not value:
        raise RuntimeError("ROYALTYKIT_PG_DSN is not set: run the suite with scripts/test-python.sh")
    return value


def test_the_postgres_store_state() -> None:
    store = PostgresDedupStore(pg_dsn(), table="recovery_" + uuid.uuid4().hex[:12])
    lifecycle(store, sql_commit(store))
    store.close()


def test_the_async_postgres_store_state() -> None:
    async def main() -> None:
        store = AsyncPostgresDedupStore(pg_dsn(), table="recovery_" + uuid.uuid4().hex[:12])
        key = rk.delivery_key(NAMESPACE, "dlv_async")
        assert await store.state(key) == "new", "the table is created by the first lookup"
        assert await store.claim(key) == "new"
        assert await store.state(key) == "in_progress"
        connection = await store.begin()
        assert await store.mark_done(connection, key)
        await store.commit_transaction(connection)
        assert await store.state(key) == "done"
        await store.close()
    asyncio.run(main())


def test_the_redis_store_state(redis_port: int) -> None:
    client = Resp(redis_port)
    store = rk.RedisDedupStore(client, prefix="recovery-test")
    lifecycle(store, store.commit)
    client.close()


def test_the_async_redis_store_state(redis_port: int) -> None:
    client = Resp(redis_port)
    store = rk.AsyncRedisDedupStore(AsyncResp(client), prefix="recovery-async")

    async def main() -> None:
        key = rk.delivery_key(NAMESPACE, "dlv_async_redis")
        assert await store.state(key) == "new"
        assert await store.claim(key) == "new"
        assert await store.state(key) == "in_progress"
        assert await store.commit(key)
        assert await store.state(key) == "done"
    asyncio.run(main())
    client.close()
