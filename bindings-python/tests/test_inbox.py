"""The inbox (issue 43 point 1, royaltykit.stores: SqliteInbox, PostgresInbox, AsyncPostgresInbox)
against real databases — SQLite files and the PostgreSQL that scripts/test-python.sh starts
(ROYALTYKIT_PG_DSN) — through the installed wheel: a real HTTP receiver in inbox mode answers at
once while the worker's handler sleeps; redeliveries are duplicates, never processed twice; a
handler failing is retried on the core's backoff, then poisoned, listed and retried by an
operator; ``state(key)`` for delivery recovery, and ``recover_deliveries`` over an inbox through
the fake API's route; cancellation rolls back; and a worker process SIGKILLed at random moments
still applies every effect exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import royaltykit as rk
from royaltykit.stores import AsyncPostgresInbox, PoisonedEntry, PostgresInbox, SqliteInbox, WorkerReport
from test_client import Fake
from test_recovery import NAMESPACE as RECOVERY_NAMESPACE
from test_recovery import ENDPOINT_URL, EVENT, actions, client_run, deliver, delivered_replays, recover, route

SECRET = "whsec_inbox_tests_0123456789abcdef"
NAMESPACE = "org-7/inbox"
NOW = 1_763_900_000
CHILD = Path(__file__).with_name("inbox_child.py")


def dsn() -> str:
    value = os.environ.get("ROYALTYKIT_PG_DSN")
    if not value:
        raise RuntimeError("ROYALTYKIT_PG_DSN is not set: run the suite with scripts/test-python.sh")
    return value


class Db:
    """One database for a test: an inbox table of its own and an effects table whose resource is
    UNIQUE (an effect applied twice fails its insert)."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.table = "inbox_" + uuid.uuid4().hex[:12]
        self.effects = "effects_" + self.table
        self.ph = "%s" if kind == "postgres" else "?"
        self.target = dsn() if kind == "postgres" else str(tmp_path / "app.sqlite")
        c = self.connect()
        c.execute(f"CREATE TABLE {self.effects} (resource TEXT PRIMARY KEY)")
        c.close()

    def connect(self) -> Any:
        if self.kind == "postgres":
            import psycopg

            return psycopg.connect(self.target, autocommit=True)
        return sqlite3.connect(self.target, isolation_level=None)

    def inbox(self, **kw: Any) -> Any:
        cls = PostgresInbox if self.kind == "postgres" else SqliteInbox
        return cls(self.target, table=self.table, **kw)

    def query(self, sql: str, args: list[Any] | None = None) -> list[tuple[Any, ...]]:
        c = self.connect()
        rows = c.execute(sql, args or []).fetchall()
        c.close()
        return [tuple(r) for r in rows]

    def effects_rows(self) -> list[str]:
        return [r for (r,) in self.query(f"SELECT resource FROM {self.effects} ORDER BY resource")]

    def row(self, key: str) -> tuple[str, int, int, str | None]:
        (row,) = self.query(f"SELECT state, attempts, due_at, last_error FROM {self.table} WHERE inbox_key = {self.ph}",
                            [key])
        return row[0], int(row[1]), int(row[2]), row[3]

    def effect(self, event: rk.WebhookEvent, connection: Any) -> None:
        """The handler's effect, written in the worker's transaction."""
        connection.execute(f"INSERT INTO {self.effects} (resource) VALUES ({self.ph})", [event.resource_reference])


@pytest.fixture(params=["postgres", "sqlite"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Db:
    return Db(request.param, tmp_path)


def signed(name: str, event: str = EVENT, now: int | None = None) -> tuple[dict[str, str], bytes, str]:
    """A signed delivery of one resource of its own: its headers, body and delivery id."""
    did = f"dlv_{name}_{uuid.uuid4().hex[:8]}"
    body = json.dumps({"event": event, "resource": {"type": "release", "reference": "res_" + did,
                                                    "url": "/api/v1/releases/" + did},
                       "occurred_at": "2026-11-22T04:05:06Z"}).encode()
    headers = rk.sign_webhook(SECRET, body, timestamp=now if now is not None else int(time.time()), delivery_id=did)
    return headers, body, did


class Receiver:
    """A ``WebhookReceiver`` in inbox mode (``receiver``) over plain http on 127.0.0.1, verifying with ``secrets``."""

    def __init__(self, inbox: Any, secrets: str | list[rk.WebhookSecret] = SECRET, namespace: str = NAMESPACE) -> None:
        self.receiver = receiver = rk.WebhookReceiver(secrets, namespace=namespace, inbox=inbox)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                r = receiver.receive(list(self.headers.items()), body)
                self.send_response(r.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(r.body)))
                self.end_headers()
                self.wfile.write(r.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/webhooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def post(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any], float]:
        """The reply's status, JSON body, and how long it took from the connection to the last byte."""
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={**headers, "Content-Type": "application/json"})
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                status, reply = answer.status, answer.read()
        except urllib.error.HTTPError as e:
            status, reply = e.code, e.read()
        return status, json.loads(reply), time.perf_counter() - started

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---- a receiver in inbox mode: the reply never waits for the handler --------------------------------


def test_the_reply_arrives_at_once_while_the_worker_s_handler_sleeps_on_postgres(tmp_path: Path) -> None:
    db = Db("postgres", tmp_path)
    inbox = db.inbox()
    receiver = Receiver(inbox)
    runs: list[str] = []
    slow = [2.0]
    started = threading.Event()

    def handler(event: rk.WebhookEvent, connection: Any) -> None:
        runs.append(event.resource_reference)
        db.effect(event, connection)
        started.set()
        time.sleep(slow[0])  # the handler outlives the reply, in the worker's open transaction

    stop = threading.Event()
    reports: list[WorkerReport] = []
    worker = threading.Thread(target=lambda: reports.append(inbox.run_worker(handler, stop=stop, poll_seconds=0.05)))
    worker.start()
    try:
        deliveries = [signed(f"pg{i}") for i in range(5)]
        status, body, took = receiver.post(*deliveries[0][:2])
        assert (status, body) == (200, {"result": "queued"}) and took < 0.05, took
        assert started.wait(5), "the worker took the first delivery"
        times = []
        for headers, payload, _ in deliveries[1:]:  # while the handler sleeps, its transaction open
            status, body, took = receiver.post(headers, payload)
            assert (status, body) == (200, {"result": "queued"})
            times.append(took)
        for headers, payload, _ in deliveries[:3]:  # redeliveries: one pending, one in the worker
            status, body, took = receiver.post(headers, payload)
            assert (status, body) == (200, {"result": "duplicate"})
            times.append(took)
        assert max(times) < 0.05, times
        assert len(runs) == 1, "the handler runs in the worker, never in the request"
    finally:
        stop.set()
        worker.join(10)
        receiver.close()
    assert not worker.is_alive() and reports and reports[0].processed >= 1
    slow[0] = 0.0
    report = inbox.drain(handler)
    assert reports[0].processed + report.processed == 5 and report.retried == report.poisoned == 0
    assert sorted(runs) == sorted(set(runs)) and len(runs) == 5, "each delivery processed once"
    assert db.effects_rows() == sorted("res_" + did for _, _, did in deliveries)
    assert inbox.counts() == {"done": 5}
    inbox.close()


def test_the_reply_arrives_at_once_on_sqlite_and_the_drain_processes_each_delivery_once(tmp_path: Path) -> None:
    # SQLite has one writer: a worker's open transaction would hold the receiver's insert, so the
    # worker runs after the deliveries here (PostgreSQL's receiver never waits: the test above).
    db = Db("sqlite", tmp_path)
    inbox = db.inbox()
    receiver = Receiver(inbox)
    runs: list[str] = []

    def handler(event: rk.WebhookEvent, connection: Any) -> None:
        runs.append(event.resource_reference)
        db.effect(event, connection)

    deliveries = [signed(f"lite{i}") for i in range(4)]
    try:
        times = []
        for headers, payload, _ in deliveries + deliveries[1:3]:
            status, body, took = receiver.post(headers, payload)
            assert status == 200 and body["result"] in ("queued", "duplicate")
            times.append(took)
        assert max(times) < 0.05, times
        assert runs == []
    finally:
        receiver.close()
    assert inbox.counts() == {"pending": 4}
    assert inbox.drain(handler) == WorkerReport(processed=4, retried=0, poisoned=0)
    assert db.effects_rows() == sorted("res_" + did for _, _, did in deliveries) and len(runs) == 4
    assert inbox.drain(handler) == WorkerReport(0, 0, 0) and inbox.counts() == {"done": 4}


def test_rejected_deliveries_and_test_events_are_never_enqueued(db: Db) -> None:
    inbox = db.inbox()
    receiver = rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox)
    headers, body, _ = signed("forged")
    forged = rk.sign_webhook("whsec_someone_else_0123456789", body, delivery_id="dlv_forged")
    assert receiver.receive(forged, body).status == 401
    headers, body, _ = signed("test", event="enterprise.webhook.test")
    r = receiver.receive(headers, body)
    assert r.status == 200 and b"queued" not in r.body
    assert inbox.counts() == {}


def test_an_unreachable_inbox_answers_503_so_the_delivery_is_sent_again(caplog: pytest.LogCaptureFixture) -> None:
    class Down:
        def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
            raise ConnectionError("inbox down")

    receiver = rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=Down())
    headers, body, _ = signed("down")
    with caplog.at_level("ERROR", logger="royaltykit"):
        r = receiver.receive(headers, body)
    assert r.status == 503 and json.loads(r.body)["error"] == "store_unavailable"
    assert "Down failed on enqueue" in caplog.text


@pytest.mark.parametrize("answer", [None, 1, "true"])
def test_an_inbox_whose_enqueue_answers_no_boolean_is_a_failed_store_never_a_duplicate(answer: object) -> None:
    # None is not "already in the inbox": the delivery would be answered 200 and never processed.
    class Vague:
        def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> object:
            return answer

    receiver = rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=Vague())  # type: ignore[arg-type]
    headers, body, _ = signed("vague")
    r = receiver.receive(headers, body)
    assert r.status == 503 and json.loads(r.body)["error"] == "store_unavailable"


def test_an_async_receiver_and_worker_on_postgres(tmp_path: Path) -> None:
    db = Db("postgres", tmp_path)

    async def main() -> None:
        inbox = AsyncPostgresInbox(db.target, table=db.table)
        receiver = rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox)
        deliveries = [signed(f"async{i}") for i in range(3)]
        replies = [await receiver.areceive(h, b) for h, b, _ in deliveries + deliveries[:1]]
        assert [json.loads(r.body)["result"] for r in replies] == ["queued"] * 3 + ["duplicate"]
        assert await inbox.state(rk.delivery_key(NAMESPACE, deliveries[0][2])) == "in_progress"

        async def handler(event: rk.WebhookEvent, connection: Any) -> None:
            await asyncio.sleep(0)
            await connection.execute(f"INSERT INTO {db.effects} (resource) VALUES (%s)", [event.resource_reference])

        assert await inbox.drain(handler) == WorkerReport(3, 0, 0)
        assert await inbox.counts() == {"done": 3}
        assert await inbox.state(rk.delivery_key(NAMESPACE, deliveries[0][2])) == "done"
        await inbox.close()

    asyncio.run(main())
    assert len(db.effects_rows()) == 3


def test_inbox_mode_is_checked_when_the_receiver_is_built(tmp_path: Path) -> None:
    inbox = SqliteInbox(tmp_path / "checks.sqlite")
    with pytest.raises(TypeError, match="store= or inbox="):
        rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox, store=rk.DedupWindow(10))
    with pytest.raises(TypeError, match="worker"):
        rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox, handler=lambda d: None)
    with pytest.raises(TypeError, match="handler is required"):
        rk.WebhookReceiver(SECRET, namespace=NAMESPACE)
    with pytest.raises(TypeError, match="enqueue"):
        rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="inbox=True"):
        rk.WebhookVerifier(SECRET).receipt({}, b"{}", namespace=NAMESPACE, inbox=True, transactional=True)

    async def coroutine(event: rk.WebhookEvent, connection: Any) -> None:
        pass

    with pytest.raises(TypeError, match="async"):
        inbox.drain(coroutine)
    with pytest.raises(rk.InvalidArgumentError, match="max_attempts"):
        inbox.drain(lambda e, c: None, max_attempts=0)
    with pytest.raises(rk.InvalidArgumentError, match="limit"):
        inbox.poisoned(0)


# ---- the worker: retries on the core's backoff, poison, an operator's retry ---------------------------


class Flaky:
    """A handler failing its first ``failures`` runs, then writing the effect."""

    def __init__(self, db: Db, failures: int) -> None:
        self.db, self.failures, self.runs = db, failures, 0

    def __call__(self, event: rk.WebhookEvent, connection: Any) -> None:
        self.runs += 1
        self.db.effect(event, connection)  # rolled back with the failure
        if self.runs <= self.failures:
            raise RuntimeError(f"upstream 503 (run {self.runs})")


def enqueue_one(db: Db, inbox: Any, name: str) -> tuple[str, str]:
    headers, body, did = signed(name, now=NOW)
    r = rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox).receive(headers, body, now=NOW)
    assert json.loads(r.body) == {"result": "queued"}
    return rk.delivery_key(NAMESPACE, did), "res_" + did


def test_a_handler_failing_twice_is_processed_after_two_retries_on_the_core_s_backoff(db: Db) -> None:
    now = [float(NOW)]
    inbox = db.inbox(clock=lambda: now[0])
    key, resource = enqueue_one(db, inbox, "flaky")
    handler = Flaky(db, failures=2)
    errors: list[tuple[str, int]] = []

    def on_error(e: BaseException, entry: rk.InboxEntry) -> None:
        errors.append((str(e), entry.attempts))

    assert inbox.drain(handler, on_error=on_error) == WorkerReport(processed=0, retried=1, poisoned=0)
    state, attempts, first_retry, error = db.row(key)
    assert (state, attempts, error) == ("pending", 1, "RuntimeError: upstream 503 (run 1)"), "handler_error_text"
    assert first_retry > NOW, "settled to be due after the backoff"
    assert inbox.drain(handler) == WorkerReport(0, 0, 0), "not due yet: the drain ends"
    assert handler.runs == 1 and inbox.state(key) == "in_progress"
    now[0] = first_retry
    assert inbox.drain(handler, on_error=on_error) == WorkerReport(0, 1, 0)
    state, attempts, second_retry, error = db.row(key)
    assert (state, attempts, error) == ("pending", 2, "RuntimeError: upstream 503 (run 2)")
    assert second_retry > first_retry, "the retry moved forward"
    assert second_retry - now[0] > first_retry - NOW, "the backoff grows"
    now[0] = second_retry
    assert inbox.drain(handler) == WorkerReport(1, 0, 0)
    assert handler.runs == 3 and errors == [("upstream 503 (run 1)", 1), ("upstream 503 (run 2)", 2)]
    state, attempts, _, error = db.row(key)
    assert (state, attempts, error) == ("done", 3, None)
    assert db.effects_rows() == [resource], "the failed runs' effects rolled back"
    assert inbox.state(key) == "done"
    inbox.close()


def test_an_on_error_that_raises_changes_nothing_the_attempt_is_rolled_back_and_settled(db: Db, caplog) -> None:
    inbox = db.inbox(clock=lambda: float(NOW))
    key, resource = enqueue_one(db, inbox, "hook")

    def on_error(e: BaseException, entry: rk.InboxEntry) -> None:
        raise ValueError("on_error itself failed")

    with caplog.at_level("ERROR", logger="royaltykit"):
        assert inbox.drain(Flaky(db, failures=1), on_error=on_error) == WorkerReport(processed=0, retried=1, poisoned=0)
    state, attempts, _, error = db.row(key)
    assert (state, attempts, error) == ("pending", 1, "RuntimeError: upstream 503 (run 1)")
    assert db.effects_rows() == [] and any("on_error raised" in r.getMessage() for r in caplog.records)
    inbox.close()


def test_a_handler_always_failing_is_poison_then_an_operator_retries_it(db: Db) -> None:
    now = [float(NOW)]
    inbox = db.inbox(clock=lambda: now[0])
    key, resource = enqueue_one(db, inbox, "poison")
    broken = Flaky(db, failures=1_000)
    assert inbox.drain(broken, max_attempts=2, on_error=lambda e, entry: None) == WorkerReport(0, 1, 0)
    now[0] = db.row(key)[2]
    assert inbox.drain(broken, max_attempts=2, on_error=lambda e, entry: None) == WorkerReport(0, 0, 1)
    assert inbox.counts() == {"poison": 1} and inbox.state(key) == "in_progress", "received, not processed"
    now[0] += 3600
    assert inbox.drain(broken, max_attempts=2) == WorkerReport(0, 0, 0), "poison is never claimed"
    (entry,) = inbox.poisoned()
    assert isinstance(entry, PoisonedEntry)
    assert (entry.key, entry.event, entry.attempts, entry.last_error, entry.received_at) == (
        key, EVENT, 2, rk.handler_error_text("RuntimeError", "upstream 503 (run 2)"), NOW)
    assert entry.delivery_id == resource.removeprefix("res_")
    assert inbox.retry(key) is True and inbox.retry(key) is False, "only a poison entry is retried"
    assert inbox.retry(rk.delivery_key(NAMESPACE, "dlv_unknown")) is False
    assert inbox.poisoned() == [] and inbox.counts() == {"pending": 1}
    fixed = Flaky(db, failures=0)
    assert inbox.drain(fixed) == WorkerReport(1, 0, 0)
    assert db.row(key)[:2] == ("done", 1), "retried with no attempts counted"
    assert db.effects_rows() == [resource]
    now[0] += 10 * 365 * 86400  # past the done row's time-to-live
    assert inbox.purge() == 1 and inbox.counts() == {}
    inbox.close()


def test_an_event_router_is_a_worker_s_handler(db: Db) -> None:
    inbox = db.inbox()
    key, resource = enqueue_one(db, inbox, "routed")
    seen: list[tuple[str, bool]] = []
    router = rk.EventRouter()

    @router.on(EVENT)
    def on_failed(event: rk.WebhookEvent, connection: Any) -> None:
        seen.append((event.name, isinstance(event, rk.WebhookEvent)))
        db.effect(event, connection)

    router.on("ddex.import.completed", lambda event, connection: seen.append(("other", False)))
    assert inbox.drain(router) == WorkerReport(1, 0, 0)
    assert seen == [(EVENT, True)] and db.effects_rows() == [resource]


def test_a_body_that_no_longer_parses_fails_its_attempts_and_ends_as_poison(db: Db) -> None:
    now = [float(NOW)]
    inbox = db.inbox(clock=lambda: now[0])
    assert inbox.enqueue(rk.delivery_key(NAMESPACE, "dlv_corrupt"), "dlv_corrupt", EVENT, "{not json")
    assert inbox.drain(Flaky(db, 0), max_attempts=1, on_error=lambda e, entry: None) == WorkerReport(0, 0, 1)
    (entry,) = inbox.poisoned()
    assert entry.last_error is not None and "payload" in entry.last_error
    assert db.effects_rows() == []


def test_an_interrupted_worker_rolls_back_and_never_settles_the_interruption(db: Db) -> None:
    inbox = db.inbox()
    key, _ = enqueue_one(db, inbox, "interrupted")

    def interrupted(event: rk.WebhookEvent, connection: Any) -> None:
        db.effect(event, connection)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        inbox.run_worker(interrupted)
    assert db.effects_rows() == [], "rolled back"
    state, attempts, _, error = db.row(key)
    assert (state, attempts, error) == ("pending", 1, None), "not settled: claimed again once the lease runs out"
    inbox.close()


def test_a_cancelled_async_worker_rolls_back_and_raises(tmp_path: Path) -> None:
    db = Db("postgres", tmp_path)

    async def main() -> None:
        inbox = AsyncPostgresInbox(db.target, table=db.table, clock=lambda: NOW)
        key, _ = enqueue_one(db, PostgresInbox(db.target, table=db.table, clock=lambda: NOW), "cancelled")
        inside = asyncio.Event()

        async def handler(event: rk.WebhookEvent, connection: Any) -> None:
            await connection.execute(f"INSERT INTO {db.effects} (resource) VALUES (%s)", [event.resource_reference])
            inside.set()
            await asyncio.Event().wait()  # never set: the task is cancelled here

        task = asyncio.create_task(inbox.run_worker(handler))
        await asyncio.wait_for(inside.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert db.effects_rows() == []
        assert db.row(key)[0::3] == ("pending", None) and db.row(key)[1] == 1
        stop = asyncio.Event()
        stop.set()
        assert await inbox.run_worker(handler, stop=stop) == WorkerReport(0, 0, 0), "stopped before any claim"
        await inbox.close()

    asyncio.run(main())


# ---- state(key) for delivery recovery --------------------------------------------------------------


def test_the_state_of_an_inbox_entry(db: Db) -> None:
    inbox = db.inbox()
    unknown = rk.delivery_key(NAMESPACE, "dlv_never_received")
    assert inbox.state(unknown) == "new"
    key, _ = enqueue_one(db, inbox, "state")
    assert inbox.state(key) == "in_progress", "received, not yet processed"
    assert inbox.drain(db.effect) == WorkerReport(1, 0, 0)
    assert inbox.state(key) == "done"
    with pytest.raises(rk.InvalidArgumentError):
        inbox.state("")
    inbox.close()


def test_recover_deliveries_checks_an_inbox(fake: Fake, tmp_path: Path) -> None:
    """The fake's deliveries to the subscription's public endpoint are routed to a loopback
    receiver in inbox mode; the lost ones are replayed into the inbox, and the drain applies each
    event once."""
    db = Db("sqlite", tmp_path)
    inbox = db.inbox()
    fake.reset()
    created = client_run("httpx", fake, "create_subscription", "inbox", ENDPOINT_URL, [EVENT])
    assert isinstance(created, rk.RevealedSecret) and created.reference
    receiver = Receiver(inbox, created.secrets(), RECOVERY_NAMESPACE)  # the namespace `recover` checks
    try:
        route(fake, ENDPOINT_URL, receiver.url)
        lost = [False, True, False, True]
        references = deliver(fake, created.reference, lost)
        assert inbox.counts() == {"pending": 2}
        report = recover("httpx", fake, created.reference, inbox)
        assert actions(report) == {r: "replayed" if gone else "in_progress" for r, gone in zip(references, lost)}
        delivered_replays(fake, 2)
        assert inbox.counts() == {"pending": 4}
        assert inbox.drain(db.effect) == WorkerReport(4, 0, 0)
        assert len(db.effects_rows()) == 4
        again = recover("requests", fake, created.reference, inbox)
        assert actions(again) == {r: "processed_by_replay" if gone else "processed"
                                  for r, gone in zip(references, lost)}
        assert again.replayed == 0 and fake.stats()["replays"] == 2
    finally:
        receiver.close()
    inbox.close()


# ---- a worker process killed at random moments: every effect exactly once ---------------------------


def test_a_worker_sigkilled_at_random_moments_applies_every_effect_exactly_once(tmp_path: Path) -> None:
    db = Db("postgres", tmp_path)
    inbox = db.inbox(lease_seconds=1)
    receiver = rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox)
    resources = []
    for i in range(30):
        headers, body, did = signed(f"kill{i}")
        assert json.loads(receiver.receive(headers, body).body) == {"result": "queued"}
        resources.append("res_" + did)
    log = tmp_path / "workers.log"

    def start(mode: str) -> subprocess.Popen[str]:
        p = subprocess.Popen([sys.executable, str(CHILD), db.target, db.table, db.effects, str(log), mode],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline().strip() == "ready", p.stderr and p.stderr.read()
        return p

    rng = random.Random()
    kills, progress = 0, []
    for _ in range(10):
        p = start("work")
        time.sleep(rng.uniform(0.0, 0.6))  # anywhere: a claim, the handler, the mark, the commit, idle
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=30)
        assert p.returncode == -signal.SIGKILL, "killed, never a duplicate-key exit"
        kills += 1
        progress.append(len(db.effects_rows()))
    final = start("final")
    out, err = final.communicate(timeout=120)
    assert final.returncode == 0 and "done" in out, (out, err)
    text = log.read_text()
    assert "DUPLICATE" not in text, text
    assert kills >= 8
    effects = db.effects_rows()
    assert effects == sorted(resources), "exactly one effect row per entry"
    assert inbox.counts() == {"done": 30}, "every entry done, none poison"
    attempts = [int(a) for (a,) in db.query(f"SELECT attempts FROM {db.table}")]
    # Kills landed mid-entry (after a claim counted an attempt, before its commit): those entries were
    # claimed again once their lease ran out. Effects by killed workers that never committed are gone.
    assert sum(attempts) > 30 and max(attempts) < 20, (attempts, progress)
    assert progress[0] < 30, progress
    inbox.close()
