"""Every receiver integration, as a user runs it: a real server of each framework (two processes
of it, sharing one real redis-server on 127.0.0.1) receiving real HTTP deliveries.

Integrations: Node's royaltykit/express, royaltykit/fastify and the fetch handler (with
node-redis and ioredis); Python's royaltykit.asgi (Starlette, FastAPI), royaltykit.flask (sync and
async handlers) and royaltykit.django (WSGI with a sync handler, ASGI with an async one); the
JVM's WebhookReceiver in com.sun.net.httpserver. Each app (bindings-*/test*-receivers) has the
same handler: "slow…" references take 0.6 s, "fail-once…" ones fail their first attempt,
"commit-fails-once…" ones make the next commit fail once, and every effect is a line in a file
both processes append to, so effects are counted exactly. Each app has three secrets: the
current, the previous, and one rotated out long ago (validUntil 1,700,000,000).

Deliveries are signed here with Python's hmac, independently of royaltykit. Run by
scripts/test-receivers.sh (make test), which installs the apps and tells this file how to start
them (RECEIVER_APPS, JSON: name -> [argv, env]).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

APPS: dict[str, list] = json.loads(os.environ["RECEIVER_APPS"])
CURRENT, PREVIOUS, ROTATED_OUT = "whsec_current", "whsec_previous", "whsec_rotated_out"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """redis-server on a free loopback port, with an append-only file fsynced on every write, so
    a restart keeps every committed key (as a production dedup store must)."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.dir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.dir),
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()  # SIGTERM: redis flushes the AOF and exits
            self.proc.wait(timeout=10)
            self.proc = None


def post(port: int, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
    """POSTs a delivery to /webhooks; the status and the JSON answer."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/webhooks", data=body, method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=15) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


class Receiver:
    """One receiver process of an integration, ready once it prints `ready <port>`."""

    def __init__(self, name: str, redis_port: int, effects: Path) -> None:
        argv, env = APPS[name]
        self.port = free_port()
        self.proc = subprocess.Popen(
            argv, env={**os.environ, **env, "PORT": str(self.port), "REDIS_PORT": str(redis_port), "EFFECTS": str(effects)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            self.proc.kill()
            raise RuntimeError(f"{name} did not start: {line}{self.proc.stderr.read() if self.proc.stderr else ''}")

    def post(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        return post(self.port, headers, body)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Pair:
    """Two processes of one integration sharing a Redis and an effects file."""

    def __init__(self, name: str, redis: RedisServer, effects: Path) -> None:
        self.name, self.redis, self.effects = name, redis, effects
        self.a = Receiver(name, redis.port, effects)
        self.b = Receiver(name, redis.port, effects)

    def effects_of(self, ref: str) -> int:
        return self.effects.read_text().splitlines().count(ref) if self.effects.exists() else 0


def event(ref: str, *, name: str = "ddex.delivery.acknowledged", replay_of: str | None = None,
          occurred_at: str = "2026-11-22T04:00:00Z") -> bytes:
    e: dict[str, object] = {"event": name, "resource": {"type": "ddex_message", "reference": ref, "url": f"/api/v1/ddex/messages/{ref}"},
                            "occurred_at": occurred_at}
    if replay_of:
        e["replay_of"] = replay_of
    return json.dumps(e).encode()


def sign(body: bytes, *, secret: str = CURRENT, timestamp: int | None = None, delivery_id: str | None = None) -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    mac = hmac.new(secret.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    return {"Service-Webhook-Id": delivery_id or str(uuid.uuid4()), "Service-Webhook-Timestamp": ts,
            "Service-Webhook-Signature": f"v1={mac}"}


def ref(prefix: str = "ref") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module", params=sorted(APPS))
def pair(request: pytest.FixtureRequest, redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    p = Pair(request.param, redis, tmp_path_factory.mktemp(request.param) / "effects.txt")
    yield p
    p.a.stop()
    p.b.stop()


def test_valid_delivery_is_processed_once(pair: Pair) -> None:
    r = ref()
    body = event(r)
    assert pair.a.post(sign(body), body) == (200, {"result": "processed"})
    assert pair.effects_of(r) == 1


def test_tampered_delivery_is_refused(pair: Pair) -> None:
    r = ref()
    body = event(r)
    status, reply = pair.a.post(sign(body), body.replace(b"acknowledged", b"rejected"))
    assert (status, reply["error"]) == (401, "no_matching_signature")
    # the answer to an unauthenticated sender says nothing of this receiver's configuration
    assert not re.search(r"\d+ secret|\d+ v1|in force|valid_until", reply.get("message", "")), reply
    assert pair.effects_of(r) == 0


def test_stale_delivery_is_refused(pair: Pair) -> None:
    r = ref()
    body = event(r)
    status, reply = pair.a.post(sign(body, timestamp=int(time.time()) - 600), body)
    assert (status, reply["error"]) == (400, "timestamp_too_old")
    assert pair.effects_of(r) == 0


def test_rotated_secret_is_accepted(pair: Pair) -> None:
    r = ref()
    body = event(r)
    assert pair.b.post(sign(body, secret=PREVIOUS), body) == (200, {"result": "processed"})
    assert pair.effects_of(r) == 1


def test_a_secret_past_its_valid_until_is_refused(pair: Pair) -> None:
    """Enterprise spec: after rotate-secret, both signatures for five minutes, "afterwards only
    the new one"; a secret past its validUntil never verifies."""
    r = ref()
    body = event(r)
    status, reply = pair.a.post(sign(body, secret=ROTATED_OUT), body)
    assert (status, reply["error"]) == (401, "no_matching_signature")
    assert pair.effects_of(r) == 0


def test_redelivery_to_the_other_process_is_acknowledged(pair: Pair) -> None:
    r = ref()
    body = event(r)
    headers = sign(body)
    assert pair.a.post(headers, body) == (200, {"result": "processed"})
    assert pair.b.post(headers, body) == (200, {"result": "acknowledge"})
    # the service's redelivery is signed anew: same id and body, new timestamp
    assert pair.b.post(sign(body, delivery_id=headers["Service-Webhook-Id"]), body) == (200, {"result": "acknowledge"})
    assert pair.effects_of(r) == 1


def test_failed_processing_is_redelivered_and_processed_once(pair: Pair) -> None:
    r = ref("fail-once")
    body = event(r)
    headers = sign(body)
    assert pair.a.post(headers, body) == (500, {"error": "handler_failed"})
    assert pair.effects_of(r) == 0
    redelivery = sign(body, delivery_id=headers["Service-Webhook-Id"])
    assert pair.b.post(redelivery, body) == (200, {"result": "processed"})
    assert pair.a.post(redelivery, body) == (200, {"result": "acknowledge"})
    assert pair.effects_of(r) == 1


def test_two_processes_receiving_the_same_delivery_at_once_apply_it_once(pair: Pair) -> None:
    r = ref("slow")
    body = event(r)
    headers = sign(body)
    results: dict[str, tuple[int, dict[str, str]]] = {}
    threads = [threading.Thread(target=lambda n=n, p=p: results.__setitem__(n, p.post(headers, body)))
               for n, p in (("a", pair.a), ("b", pair.b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [(200, {"result": "processed"}), (503, {"result": "retry_later"})]
    assert pair.b.post(sign(body, delivery_id=headers["Service-Webhook-Id"]), body) == (200, {"result": "acknowledge"})
    assert pair.effects_of(r) == 1


def test_test_event_is_acknowledged_without_processing(pair: Pair) -> None:
    r = ref()
    body = event(r, name="enterprise.webhook.test")
    assert pair.a.post(sign(body), body) == (200, {"result": "acknowledge"})
    assert pair.effects_of(r) == 0


def test_operator_replay_of_an_applied_event_is_processed(pair: Pair) -> None:
    """Enterprise spec: "deduplicate by Service-Webhook-Id"; a replay gets a new one and the
    consumer applies the resource's current state idempotently."""
    r = ref()
    original = event(r)
    headers = sign(original)
    assert pair.a.post(headers, original) == (200, {"result": "processed"})
    replay = event(r, replay_of=headers["Service-Webhook-Id"])
    assert pair.b.post(sign(replay), replay) == (200, {"result": "processed"})
    assert pair.effects_of(r) == 2


def test_two_changes_of_one_resource_in_the_same_second_are_both_processed(pair: Pair) -> None:
    r = ref()
    body = event(r, name="ddex.delivery.status_changed", occurred_at="2026-11-22T04:00:00Z")
    now = int(time.time())
    assert pair.a.post(sign(body, timestamp=now), body) == (200, {"result": "processed"})
    assert pair.b.post(sign(body, timestamp=now + 1), body) == (200, {"result": "processed"})
    assert pair.effects_of(r) == 2


def test_byte_identical_twins_with_two_ids_are_both_processed(pair: Pair) -> None:
    """Two changes stamped the same second can carry the very same body and timestamp: the spec
    dedups by Service-Webhook-Id, so both are processed (the content key is opt-in)."""
    r = ref()
    body = event(r, name="ddex.delivery.status_changed", occurred_at="2026-11-22T04:00:00Z")
    now = int(time.time())
    assert pair.a.post(sign(body, timestamp=now), body) == (200, {"result": "processed"})
    assert pair.b.post(sign(body, timestamp=now), body) == (200, {"result": "processed"})
    assert pair.effects_of(r) == 2


def test_a_commit_failing_once_is_retried_and_answered_200_with_one_effect(pair: Pair) -> None:
    r = ref("commit-fails-once")
    body = event(r)
    headers = sign(body)
    assert pair.a.post(headers, body) == (200, {"result": "processed"})
    assert pair.effects_of(r) == 1
    # committed: the redelivery to either process is a duplicate
    assert pair.b.post(sign(body, delivery_id=headers["Service-Webhook-Id"]), body) == (200, {"result": "acknowledge"})
    assert pair.effects_of(r) == 1


def test_a_large_genuine_delivery_is_processed(pair: Pair) -> None:
    """150 KB: over Express's and body-parser's 100 KB default, under the 256 KiB limit."""
    r = ref()
    e = json.loads(event(r))
    e["data"] = "x" * 150_000
    body = json.dumps(e).encode()
    assert pair.a.post(sign(body), body) == (200, {"result": "processed"})
    assert pair.effects_of(r) == 1


def test_any_content_type_is_read_raw(pair: Pair) -> None:
    for content_type in ("text/plain", "application/octet-stream", "application/x-www-form-urlencoded"):
        r = ref()
        body = event(r)
        assert post(pair.a.port, {**sign(body), "Content-Type": content_type}, body) == (200, {"result": "processed"}), content_type
        assert pair.effects_of(r) == 1


def test_a_body_over_the_limit_is_refused(pair: Pair) -> None:
    body = event(ref()) + b" " * (256 * 1024)
    status, _ = pair.a.post(sign(body), body)
    assert status == 413


def test_redis_restarted_mid_run_answers_503_then_recovers_losing_nothing(pair: Pair, redis: RedisServer) -> None:
    done = ref()
    done_body = event(done)
    done_headers = sign(done_body)
    assert pair.a.post(done_headers, done_body) == (200, {"result": "processed"})
    redis.stop()
    try:
        r = ref()
        body = event(r)
        headers = sign(body)
        assert pair.a.post(headers, body) == (503, {"error": "store_unavailable"})
        assert pair.effects_of(r) == 0
    finally:
        redis.start()

    def until_recovered(receiver: Receiver, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        """The service redelivering while the receiver's Redis client reconnects."""
        deadline = time.monotonic() + 10
        while (result := receiver.post(headers, body)) == (503, {"error": "store_unavailable"}) and time.monotonic() < deadline:
            time.sleep(0.2)
        return result

    assert until_recovered(pair.b, sign(body, delivery_id=headers["Service-Webhook-Id"]), body) == (200, {"result": "processed"})
    assert pair.effects_of(r) == 1
    # the delivery committed before the restart is still known as done
    assert until_recovered(pair.a, sign(done_body, delivery_id=done_headers["Service-Webhook-Id"]), done_body) == (200, {"result": "acknowledge"})
    assert pair.effects_of(done) == 1


def test_nothing_is_left_claimed(pair: Pair, redis: RedisServer) -> None:
    """After every scenario, no key of this pair is still claimed (every claim was committed or
    released), which a lost release would show."""
    assert shutil.which("redis-cli")
    keys = subprocess.run(["redis-cli", "-p", str(redis.port), "--scan", "--pattern", "royaltykit:dedup:*"],
                          capture_output=True, text=True, check=True).stdout.split()
    values = subprocess.run(["redis-cli", "-p", str(redis.port), "MGET", *keys], capture_output=True, text=True,
                            check=True).stdout.split() if keys else []
    assert [v for v in values if v != "done"] == []
