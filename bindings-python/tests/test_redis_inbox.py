"""The inbox on a Redis stream (issue 43 point 1, royaltykit.stores: RedisInbox, AsyncRedisInbox)
against a real ``redis-server`` (the ``redis_port`` fixture) with redis-py, through the installed
wheel: enqueue and duplicates, ``state(key)``; three workers draining fifty entries, each effect
once; a failing handler retried on the core's backoff (injected clock), poisoned, listed with the
core's ``handler_error_text``, put back by an operator and processed; a claim whose lease ran out
taken again with one more attempt while the first worker's mark is refused; a worker process
SIGKILLed mid-handler whose entries a new worker processes after the lease (nothing lost: at least
once); a real HTTP receiver in inbox mode answering at once while the worker's handler sleeps, and
503 when Redis is down; ``recover_deliveries`` over a Redis inbox through the fake API's route;
the async inbox under ``areceive``, its async worker, and ``royaltykit.asgi`` over both inboxes."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio
from redis.backoff import NoBackoff
from redis.retry import Retry

import royaltykit as rk
from royaltykit.asgi import WebhookApp
from royaltykit.stores import AsyncRedisInbox, PoisonedEntry, RedisInbox, WorkerReport
from resp import free_port, start_redis
from test_client import Fake
from test_inbox import NAMESPACE, NOW, SECRET, Receiver, signed
from test_recovery import NAMESPACE as RECOVERY_NAMESPACE
from test_recovery import ENDPOINT_URL, EVENT, actions, client_run, deliver, delivered_replays, recover, route

CHILD = Path(__file__).with_name("redis_inbox_child.py")


def prefix() -> str:
    """A prefix of one test's own (a Cluster hash tag, as the default is)."""
    return "{t" + uuid.uuid4().hex[:10] + "}:"


@pytest.fixture()
def client(redis_port: int) -> Any:
    c = redis.Redis(host="127.0.0.1", port=redis_port)
    yield c
    c.close()


class Effects:
    """The handler's effects, in this process: each resource in the order applied (thread-safe)."""

    def __init__(self) -> None:
        self.applied: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, event: rk.WebhookEvent, client: Any) -> None:
        with self.lock:
            self.applied.append(event.resource_reference)


def enqueue_one(inbox: Any, name: str, now: int = NOW) -> tuple[str, str]:
    headers, body, did = signed(name, now=now)
    r = rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox).receive(headers, body, now=now)
    assert json.loads(r.body) == {"result": "queued"}, r.body
    return rk.delivery_key(NAMESPACE, did), "res_" + did


def entry_field(client: Any, inbox: RedisInbox, key: str, field: str) -> str | None:
    value = client.execute_command("HGET", f"{inbox.protocol.prefix}e:{key}", field)
    return value.decode() if isinstance(value, bytes) else value


# ---- enqueue, duplicates, state ---------------------------------------------------------------------


def test_enqueue_then_a_duplicate_and_the_state_of_an_entry(client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix())
    key = rk.delivery_key(NAMESPACE, "dlv_state")
    assert inbox.state(key) == "new"
    body = json.dumps({"event": EVENT, "resource": {"type": "release", "reference": "res_state",
                                                    "url": "/api/v1/releases/res_state"},
                       "occurred_at": "2026-11-22T04:05:06Z"})
    assert inbox.enqueue(key, "dlv_state", EVENT, body) is True
    assert inbox.enqueue(key, "dlv_state", EVENT, body) is False, "a duplicate is not added"
    assert inbox.state(key) == "in_progress" and inbox.counts() == {"pending": 1}
    effects = Effects()
    assert inbox.drain(effects) == WorkerReport(1, 0, 0)
    assert effects.applied == ["res_state"]
    assert inbox.state(key) == "done" and inbox.counts() == {"done": 1}
    assert inbox.enqueue(key, "dlv_state", EVENT, body) is False, "a done entry is the delivery's dedup record"
    assert inbox.drain(effects) == WorkerReport(0, 0, 0) and effects.applied == ["res_state"]
    with pytest.raises(rk.InvalidArgumentError):
        inbox.state("")
    with pytest.raises(rk.InvalidArgumentError, match="limit"):
        inbox.poisoned(0)
    assert repr(inbox) == f"RedisInbox(prefix={inbox.protocol.prefix!r})"


def test_the_client_may_decode_replies_and_the_default_prefix_is_the_core_s(redis_port: int) -> None:
    c = redis.Redis(host="127.0.0.1", port=redis_port, decode_responses=True)
    try:
        inbox = RedisInbox(c)
        assert inbox.protocol.prefix == rk.RedisInboxProtocol.DEFAULT_PREFIX == "{royaltykit:inbox}:"
        key, resource = enqueue_one(inbox, "decoded")
        effects = Effects()
        assert inbox.drain(effects) == WorkerReport(1, 0, 0) and effects.applied == [resource]
        assert inbox.state(key) == "done"
    finally:
        c.close()
    with pytest.raises(TypeError, match="execute_command"):
        RedisInbox(object())
    with pytest.raises(rk.InvalidArgumentError, match="prefix"):
        RedisInbox(redis.Redis(port=free_port()), prefix="")


def test_inbox_mode_takes_the_redis_inbox_and_refuses_a_handler(client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix())
    with pytest.raises(TypeError, match="worker"):
        rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox, handler=lambda d: None)

    async def coroutine(event: rk.WebhookEvent, client: Any) -> None:
        pass

    with pytest.raises(TypeError, match="async"):
        inbox.drain(coroutine)
    with pytest.raises(rk.InvalidArgumentError, match="max_attempts"):
        inbox.drain(lambda e, c: None, max_attempts=0)


# ---- three workers, fifty entries ---------------------------------------------------------------------


def test_three_concurrent_workers_drain_fifty_entries_each_effect_once(client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix())
    resources = [enqueue_one(inbox, f"many{i}")[1] for i in range(50)]
    assert inbox.counts() == {"pending": 50}
    effects = Effects()
    handled_by: dict[str, int] = {}

    def worker(n: int) -> WorkerReport:
        def handler(event: rk.WebhookEvent, c: Any) -> None:
            assert c is client, "the handler gets the inbox's client"
            effects(event, c)
            handled_by[event.resource_reference] = n
            time.sleep(0.002)
        return inbox.drain(handler)

    reports: list[WorkerReport] = []
    threads = [threading.Thread(target=lambda n=n: reports.append(worker(n))) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(reports) == 3
    assert sum(r.processed for r in reports) == 50 and all(r.retried == r.poisoned == 0 for r in reports)
    assert sorted(effects.applied) == sorted(resources), "every effect exactly once"
    assert len(set(handled_by.values())) > 1, "the workers shared the entries"
    assert inbox.counts() == {"done": 50}


# ---- a failing handler: backoff, poison, an operator's retry ------------------------------------------


class Flaky:
    """A handler failing its first ``failures`` runs (after its effect: at least once)."""

    def __init__(self, failures: int) -> None:
        self.failures, self.runs, self.effects = failures, 0, Effects()

    def __call__(self, event: rk.WebhookEvent, client: Any) -> None:
        self.runs += 1
        self.effects(event, client)
        if self.runs <= self.failures:
            raise RuntimeError(f"upstream 503 (run {self.runs})")


def test_a_failing_handler_is_retried_on_the_core_s_backoff_then_poison_then_retried_by_an_operator(
        client: Any) -> None:
    now = [float(NOW)]
    inbox = RedisInbox(client, prefix=prefix(), clock=lambda: now[0])
    key, resource = enqueue_one(inbox, "flaky")
    delayed = f"{inbox.protocol.prefix}delayed"
    broken = Flaky(failures=1_000)
    errors: list[tuple[str, int]] = []

    def on_error(e: BaseException, entry: rk.InboxEntry) -> None:
        errors.append((str(e), entry.attempts))

    assert inbox.drain(broken, max_attempts=3, on_error=on_error) == WorkerReport(processed=0, retried=1, poisoned=0)
    first_retry = int(client.execute_command("ZSCORE", delayed, key))
    assert first_retry > NOW, "settled to be due after the backoff"
    assert entry_field(client, inbox, key, "last_error") == "RuntimeError: upstream 503 (run 1)"
    assert entry_field(client, inbox, key, "attempts") == "1"
    assert inbox.drain(broken, max_attempts=3) == WorkerReport(0, 0, 0), "not due yet: the drain ends"
    assert broken.runs == 1 and inbox.state(key) == "in_progress" and inbox.counts() == {"pending": 1}
    now[0] = first_retry
    assert inbox.drain(broken, max_attempts=3, on_error=on_error) == WorkerReport(0, 1, 0)
    second_retry = int(client.execute_command("ZSCORE", delayed, key))
    assert second_retry - now[0] > first_retry - NOW, "the backoff grows"
    now[0] = second_retry
    assert inbox.drain(broken, max_attempts=3, on_error=on_error) == WorkerReport(0, 0, 1), "poison after 3 runs"
    assert errors == [(f"upstream 503 (run {n})", n) for n in (1, 2, 3)]
    assert inbox.counts() == {"poison": 1} and inbox.state(key) == "in_progress", "received, not processed"
    now[0] += 3600
    assert inbox.drain(broken, max_attempts=3) == WorkerReport(0, 0, 0), "poison is never claimed"
    (entry,) = inbox.poisoned()
    assert isinstance(entry, PoisonedEntry)
    assert (entry.key, entry.event, entry.attempts, entry.received_at) == (key, EVENT, 3, NOW)
    assert entry.last_error == rk.handler_error_text("RuntimeError", "upstream 503 (run 3)")
    assert entry.last_error == "RuntimeError: upstream 503 (run 3)"
    assert entry.delivery_id == resource.removeprefix("res_")
    assert inbox.poisoned(limit=rk.DEFAULT_POISON_LISTED) == [entry]
    assert inbox.retry(key) is True and inbox.retry(key) is False, "only a poison entry is retried"
    assert inbox.retry(rk.delivery_key(NAMESPACE, "dlv_unknown")) is False
    assert inbox.poisoned() == [] and inbox.counts() == {"pending": 1}
    fixed = Flaky(failures=0)
    assert inbox.drain(fixed) == WorkerReport(1, 0, 0)
    assert entry_field(client, inbox, key, "attempts") == "1", "retried with no attempts counted"
    assert entry_field(client, inbox, key, "last_error") is None
    assert broken.effects.applied == [resource] * 3 and fixed.effects.applied == [resource]
    assert inbox.state(key) == "done"
    now[0] += 10 * 365 * 86400  # past the done entry's time-to-live
    assert inbox.purge() == 1 and inbox.counts() == {}


def test_a_body_that_no_longer_parses_ends_as_poison_with_the_core_s_error_text(client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix())
    assert inbox.enqueue(rk.delivery_key(NAMESPACE, "dlv_corrupt"), "dlv_corrupt", EVENT, "{not json")
    assert inbox.drain(Flaky(0), max_attempts=1, on_error=lambda e, entry: None) == WorkerReport(0, 0, 1)
    (entry,) = inbox.poisoned()
    assert entry.last_error is not None and entry.last_error.startswith("WebhookVerificationError: ")
    assert "payload" in entry.last_error


def test_an_interrupted_worker_never_settles_the_interruption(client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix())
    key, _ = enqueue_one(inbox, "interrupted")

    def interrupted(event: rk.WebhookEvent, c: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        inbox.run_worker(interrupted)
    assert entry_field(client, inbox, key, "state") == "pending"
    assert entry_field(client, inbox, key, "attempts") == "1" and entry_field(client, inbox, key, "last_error") is None


# ---- the lease -----------------------------------------------------------------------------------------


def test_a_claim_past_its_lease_is_taken_again_and_the_first_mark_is_refused(client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix(), lease_seconds=1)
    key, resource = enqueue_one(inbox, "lease", now=int(time.time()))
    first = inbox._run(inbox._claim(int(time.time())))
    assert first is not None and (first.key, first.attempts) == (key, 1)
    assert inbox._run(inbox._claim(int(time.time()))) is None, "held for the lease"
    time.sleep(1.2)
    second = inbox._run(inbox._claim(int(time.time())))
    assert second is not None and (second.key, second.attempts) == (key, 2), "claimed again, one more attempt"
    assert inbox._run(inbox._mark(None, key, first.attempts, int(time.time()))) is False, "the first claim's mark is refused"
    assert inbox._run(inbox._settle(key, first.attempts, False, 0, "late")) is False, "and so is its settle"
    assert inbox._run(inbox._mark(None, key, second.attempts, int(time.time()))) is True
    assert inbox.state(key) == "done" and inbox.counts() == {"done": 1}


def test_a_worker_stopped_mid_handler_past_the_lease_loses_its_mark_to_the_next_worker(client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix(), lease_seconds=1)
    key, resource = enqueue_one(inbox, "stalled", now=int(time.time()))
    started, resume = threading.Event(), threading.Event()
    effects = Effects()

    def stalled(event: rk.WebhookEvent, c: Any) -> None:
        effects(event, c)
        started.set()
        assert resume.wait(20)

    reports: list[WorkerReport] = []
    first = threading.Thread(target=lambda: reports.append(inbox.drain(stalled)))
    first.start()
    assert started.wait(10)
    time.sleep(1.2)  # the first worker's lease runs out mid-handler
    assert inbox.drain(effects) == WorkerReport(1, 0, 0), "the next worker takes the entry"
    assert entry_field(client, inbox, key, "attempts") == "2"
    resume.set()
    first.join(20)
    assert reports == [WorkerReport(0, 0, 0)], "the first worker's mark was refused: not counted as processed"
    assert effects.applied == [resource, resource], "at least once: the handler ran for each claim"
    assert inbox.counts() == {"done": 1} and inbox.state(key) == "done"


# ---- SIGKILL: nothing lost ------------------------------------------------------------------------------


def test_a_worker_sigkilled_mid_handler_loses_nothing(client: Any, redis_port: int, tmp_path: Path) -> None:
    p = prefix()
    inbox = RedisInbox(client, prefix=p, lease_seconds=1)
    resources = [enqueue_one(inbox, f"kill{i}", now=int(time.time()))[1] for i in range(20)]
    effects_key = p + "effects"

    def start(mode: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, str(CHILD), str(redis_port), p, effects_key, mode],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.stderr and proc.stderr.read()
        return proc

    def applied() -> list[str]:
        return [v.decode() for v in client.execute_command("LRANGE", effects_key, 0, -1)]

    rng = random.Random()
    mid_handler = 0
    for _ in range(6):
        worker = start("work")
        # Killed while its handler sleeps after an effect (the child prints each effect).
        assert worker.stdout is not None and worker.stdout.readline().startswith("effect ")
        time.sleep(rng.uniform(0.0, 0.1))
        worker.send_signal(signal.SIGKILL)
        worker.communicate(timeout=30)
        assert worker.returncode == -signal.SIGKILL
        mid_handler += 1
    before = applied()
    assert inbox.counts().get("pending", 0) > 0, "the kills left entries claimed, not done"
    final = start("final")
    out, err = final.communicate(timeout=120)
    assert final.returncode == 0 and "done" in out, (out, err)
    effects = applied()
    assert set(effects) == set(resources), "nothing lost: every entry's effect happened"
    assert len(effects) >= len(resources) and len(before) >= mid_handler
    assert inbox.counts() == {"done": 20}, "every entry done, none poison"
    attempts = [int(entry_field(client, inbox, rk.delivery_key(NAMESPACE, r.removeprefix("res_")), "attempts") or 0)
                for r in resources]
    assert sum(attempts) > 20, "the entries killed mid-handler were claimed again after their lease"


# ---- a receiver in inbox mode over HTTP -------------------------------------------------------------------


def test_the_reply_arrives_at_once_while_the_worker_s_handler_sleeps(client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix())
    receiver = Receiver(inbox)
    effects = Effects()
    started = threading.Event()
    slow = [2.0]

    def handler(event: rk.WebhookEvent, c: Any) -> None:
        effects(event, c)
        started.set()
        time.sleep(slow[0])

    stop = threading.Event()
    reports: list[WorkerReport] = []
    worker = threading.Thread(target=lambda: reports.append(inbox.run_worker(handler, stop=stop, poll_seconds=0.05)))
    worker.start()
    deliveries = [signed(f"http{i}") for i in range(5)]
    try:
        status, body, _ = receiver.post(*deliveries[0][:2])
        assert (status, body) == (200, {"result": "queued"})
        assert started.wait(5), "the worker took the first delivery"
        times = []
        for headers, payload, _ in deliveries[1:]:
            status, body, took = receiver.post(headers, payload)
            assert (status, body) == (200, {"result": "queued"})
            times.append(took)
        for headers, payload, _ in deliveries[:3]:
            status, body, took = receiver.post(headers, payload)
            assert (status, body) == (200, {"result": "duplicate"})
            times.append(took)
        assert max(times) < 1.0, times  # the handler sleeps 2 s: the replies never wait for it
        assert len(effects.applied) == 1, "the handler runs in the worker, never in the request"
    finally:
        stop.set()
        worker.join(10)
        receiver.close()
    slow[0] = 0.0
    report = inbox.drain(handler)
    assert reports[0].processed + report.processed == 5
    assert sorted(effects.applied) == sorted("res_" + did for _, _, did in deliveries)
    assert inbox.counts() == {"done": 5}


def test_redis_down_answers_503_so_the_delivery_is_sent_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A Redis of its own, stopped between two deliveries: the second is answered 503 (the
    service sends it again), and taken once Redis is back."""
    port = free_port()
    server = start_redis(port, tmp_path)
    c = redis.Redis(host="127.0.0.1", port=port, retry=Retry(NoBackoff(), 0))  # no client retries: fail at once
    inbox = RedisInbox(c)
    receiver = Receiver(inbox)
    first, second = signed("before"), signed("down")
    try:
        assert receiver.post(*first[:2])[:2] == (200, {"result": "queued"})
        server.terminate()
        server.wait(timeout=10)
        with caplog.at_level("ERROR", logger="royaltykit"):
            status, reply, _ = receiver.post(*second[:2])
        assert (status, reply["error"]) == (503, "store_unavailable")
        assert "RedisInbox failed on enqueue" in caplog.text
        server = start_redis(port, tmp_path)  # no persistence here: the redelivery is all that counts
        assert receiver.post(*second[:2])[:2] == (200, {"result": "queued"})
    finally:
        receiver.close()
        server.terminate()
        server.wait(timeout=10)
        c.close()


# ---- delivery recovery over a Redis inbox -----------------------------------------------------------------


def test_recover_deliveries_checks_a_redis_inbox(fake: Fake, client: Any) -> None:
    inbox = RedisInbox(client, prefix=prefix())
    fake.reset()
    created = client_run("httpx", fake, "create_subscription", "redis inbox", ENDPOINT_URL, [EVENT])
    assert isinstance(created, rk.RevealedSecret) and created.reference
    receiver = Receiver(inbox, created.secrets(), RECOVERY_NAMESPACE)
    effects = Effects()
    try:
        route(fake, ENDPOINT_URL, receiver.url)
        lost = [True, False, True]
        references = deliver(fake, created.reference, lost)
        assert inbox.counts() == {"pending": 1}
        report = recover("requests", fake, created.reference, inbox)
        assert actions(report) == {r: "replayed" if gone else "in_progress" for r, gone in zip(references, lost)}
        delivered_replays(fake, 2)
        assert inbox.counts() == {"pending": 3}
        assert inbox.drain(effects) == WorkerReport(3, 0, 0) and len(set(effects.applied)) == 3
        again = recover("httpx", fake, created.reference, inbox)
        assert actions(again) == {r: "processed_by_replay" if gone else "processed"
                                  for r, gone in zip(references, lost)}
        assert again.replayed == 0 and fake.stats()["replays"] == 2
    finally:
        receiver.close()


# ---- async: areceive, the async worker, royaltykit.asgi ---------------------------------------------------


def test_an_async_receiver_and_worker_on_redis(redis_port: int) -> None:
    async def main() -> None:
        c = redis.asyncio.Redis(host="127.0.0.1", port=redis_port)
        inbox = AsyncRedisInbox(c, prefix=prefix())
        receiver = rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox)
        deliveries = [signed(f"async{i}") for i in range(3)]
        replies = [await receiver.areceive(h, b) for h, b, _ in deliveries + deliveries[:1]]
        assert [json.loads(r.body)["result"] for r in replies] == ["queued"] * 3 + ["duplicate"]
        key = rk.delivery_key(NAMESPACE, deliveries[0][2])
        assert await inbox.state(key) == "in_progress" and await inbox.counts() == {"pending": 3}
        applied: list[str] = []

        async def handler(event: rk.WebhookEvent, client: Any) -> None:
            assert client is c
            await client.execute_command("PING")
            applied.append(event.resource_reference)

        assert await inbox.drain(handler) == WorkerReport(3, 0, 0)
        assert sorted(applied) == sorted("res_" + did for _, _, did in deliveries)
        assert await inbox.counts() == {"done": 3} and await inbox.state(key) == "done"
        # poison and an operator's retry, with await
        bad = rk.delivery_key(NAMESPACE, "dlv_async_bad")
        assert await inbox.enqueue(bad, "dlv_async_bad", EVENT, "{not json")
        assert await inbox.drain(handler, max_attempts=1, on_error=lambda e, entry: None) == WorkerReport(0, 0, 1)
        (entry,) = await inbox.poisoned()
        assert entry.key == bad and entry.last_error and entry.last_error.startswith("WebhookVerificationError: ")
        assert await inbox.retry(bad) is True and await inbox.counts() == {"pending": 1, "done": 3}
        assert await inbox.purge() == 0
        stop = asyncio.Event()
        stop.set()
        assert await inbox.run_worker(handler, stop=stop) == WorkerReport(0, 0, 0), "stopped before any claim"
        await c.aclose()

    asyncio.run(main())


def test_a_cancelled_async_worker_is_never_settled(redis_port: int) -> None:
    async def main() -> None:
        c = redis.asyncio.Redis(host="127.0.0.1", port=redis_port)
        inbox = AsyncRedisInbox(c, prefix=prefix())
        headers, body, did = signed("cancelled")
        assert json.loads((await rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox).areceive(
            headers, body)).body) == {"result": "queued"}
        inside = asyncio.Event()

        async def handler(event: rk.WebhookEvent, client: Any) -> None:
            inside.set()
            await asyncio.Event().wait()  # never set: the task is cancelled here

        task = asyncio.create_task(inbox.run_worker(handler))
        await asyncio.wait_for(inside.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        entry = f"{inbox.protocol.prefix}e:{rk.delivery_key(NAMESPACE, did)}"
        assert await c.execute_command("HGET", entry, "state") == b"pending"
        assert await c.execute_command("HGET", entry, "last_error") is None
        await c.aclose()

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_the_asgi_app_in_inbox_mode_on_redis(kind: str, redis_port: int) -> None:
    """``royaltykit.asgi.WebhookApp`` over a receiver whose inbox is a Redis one (the asyncio
    client, or the blocking one), through httpx's ASGI transport; then the worker; then the app's
    receiver takes the rotated secrets."""

    async def main() -> None:
        if kind == "async":
            c: Any = redis.asyncio.Redis(host="127.0.0.1", port=redis_port)
            inbox: Any = AsyncRedisInbox(c, prefix=prefix())
        else:
            c = redis.Redis(host="127.0.0.1", port=redis_port)
            inbox = RedisInbox(c, prefix=prefix())
        app = WebhookApp(rk.WebhookReceiver(SECRET, namespace=NAMESPACE, inbox=inbox), route="/webhooks")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
            deliveries = [signed(f"asgi{kind}{i}") for i in range(3)]
            results = []
            for headers, body, _ in deliveries + deliveries[:1]:
                r = await http.post("/webhooks", content=body, headers=headers)
                assert r.status_code == 200, r.text
                results.append(r.json()["result"])
            assert results == ["queued"] * 3 + ["duplicate"]
            # a rotation reaches the live app
            new = "whsec_asgi_rotated_0123456789abcdef"
            app.receiver.use_secrets(new)
            headers, body, did = signed(f"asgi{kind}old")
            assert (await http.post("/webhooks", content=body, headers=headers)).status_code == 401
            body2 = body.replace(did.encode(), (did + "n").encode())
            signed_new = rk.sign_webhook(new, body2, delivery_id=did + "n")
            assert (await http.post("/webhooks", content=body2, headers=signed_new)).json() == {"result": "queued"}
        applied: list[str] = []
        if kind == "async":
            assert await inbox.drain(lambda event, client: applied.append(event.resource_reference)) == WorkerReport(4, 0, 0)
            assert await inbox.counts() == {"done": 4}
            await c.aclose()
        else:
            assert inbox.drain(lambda event, client: applied.append(event.resource_reference)) == WorkerReport(4, 0, 0)
            assert inbox.counts() == {"done": 4}
            c.close()
        assert len(applied) == 4

    asyncio.run(main())
