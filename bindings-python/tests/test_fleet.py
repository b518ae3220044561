"""Fleets (issue 43 point 7): the processes of one API client sharing one token and one rate budget
through one real ``redis-server`` (``RedisFleet``, ``AsyncRedisFleet``), against the shared fake
API (tests/fakeapi/server.py) over real loopback HTTP. Four child processes (fleet_child.py, each an
``EnterpriseClient`` or ``AsyncEnterpriseClient`` of the installed package) make one token exchange
between them and keep one per-minute budget together; Redis out of reach holds the requests (never
sent uncounted) until it is back. Real clocks: the fake's rolling minute is the real one here."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

import royaltykit as rk
from resp import AsyncResp, Resp, free_port, have_redis, start_redis
from royaltykit.client import AsyncEnterpriseClient, AsyncRedisFleet, EnterpriseClient, RedisFleet, ReportsClient
from test_client import BODY, TENANT, Fake

HERE = Path(__file__).resolve().parent


class Child:
    """One process of the fleet (fleet_child.py): ``go(n)`` makes n requests at once in it."""

    def __init__(self, kind: str, fake: Fake, port: int, prefix: str, budget: list[list[Any]] | None) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE / "fleet_child.py"), kind, fake.url, str(port), prefix,
                                      json.dumps(budget)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=HERE)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put("")  # the process ended

    def line(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer from the fleet's process in {timeout} s") from None
        assert line, f"the fleet's process ended (exit {self.proc.wait()})"
        return line

    def go(self, n: int) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"go {n}\n")
        self.proc.stdin.flush()

    def result(self, timeout: float) -> dict[str, Any]:
        return dict(json.loads(self.line(timeout)))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Counting:
    """A Redis client that counts the reservations granted (``ok``) through it."""

    def __init__(self, inner: Resp) -> None:
        self.inner, self.granted = inner, 0

    def execute_command(self, *args: Any) -> Any:
        reply = self.inner.execute_command(*args)
        if args[1:2] == (rk.RESERVE_SCRIPT,) and reply in (b"ok", "ok"):
            self.granted += 1
        return reply


def fleet(fake: Fake, port: int, budget: list[list[Any]] | None = None,
          kinds: tuple[str, ...] = ("httpx", "async", "requests", "async")) -> tuple[list[Child], str]:
    """The fleet's processes, each with its client built (``ready``), under a prefix of their own."""
    prefix = f"test:{uuid.uuid4().hex[:8]}:"
    children = [Child(kind, fake, port, prefix, budget) for kind in kinds]
    try:
        for c in children:
            assert c.line(60) == "ready"
    except BaseException:
        for c in children:
            c.close()
        raise
    return children, prefix


def together(children: list[Child], n: int, timeout: float) -> list[dict[str, Any]]:
    """``go(n)`` in every process at once, then each one's result."""
    for c in children:
        c.go(n)
    return [c.result(timeout) for c in children]


def test_four_processes_make_one_token_exchange_between_them(fake: Fake, redis_port: int) -> None:
    """Every exchange takes 0.5 s, so the processes' first calls overlap it: one exchange for all."""
    fake.reset(token_delay=0.5)
    children, _ = fleet(fake, redis_port)
    try:
        results = together(children, 10, 120)
    finally:
        for c in children:
            c.close()
    assert results == [{"ok": 10, "errors": []}] * 4, results
    stats = fake.stats()
    assert stats["requests"]["listEnterpriseReleases"] == 40, stats["requests"]
    assert stats["tokens_issued"] == 1 and stats["requests"]["exchangeEnterpriseToken"] == 1, stats
    assert stats["unauthorized"] == 0, stats


def test_the_fleet_keeps_a_per_minute_limit_across_processes(fake: Fake, redis_port: int) -> None:
    """12 a minute for the fleet, 4 processes x 5 requests: 12 go at once (the exchange counted),
    the rest wait for the window (about a minute, real time) — never more than 12 in any rolling
    minute at the service, and every request done."""
    fake.reset()
    children, _ = fleet(fake, redis_port, budget=[["api_client", 12, 60]])
    try:
        results = together(children, 5, 150)
    finally:
        for c in children:
            c.close()
    assert results == [{"ok": 5, "errors": []}] * 4, results
    stats = fake.stats()
    assert stats["requests"]["listEnterpriseReleases"] == 20 and stats["tokens_issued"] == 1, stats
    assert stats["max_per_minute"] <= 12, stats


def test_a_401_in_one_process_makes_one_more_exchange_for_the_fleet(fake: Fake, redis_port: int) -> None:
    """The token is refused (401) mid-run and dead for every process: the fleet exchanges once
    more (the refused token published in Redis is never adopted again), not once per process."""
    fake.reset(faults=[{"op": "listEnterpriseReleases", "nth": 5, "do": "expire_token"}])
    children, _ = fleet(fake, redis_port)
    try:
        # one token for the fleet first (one process, then the others adopt it)
        assert together(children[:1], 1, 60) == [{"ok": 1, "errors": []}]
        assert together(children[1:], 1, 60) == [{"ok": 1, "errors": []}] * 3
        assert fake.stats()["tokens_issued"] == 1
        # the 5th request is refused (401) and its token dead for every process
        results = together(children, 3, 120)
    finally:
        for c in children:
            c.close()
    assert results == [{"ok": 3, "errors": []}] * 4, results
    stats = fake.stats()
    assert stats["tokens_issued"] == 2, stats  # one more exchange for the fleet, not one per process
    assert stats["requests"]["listEnterpriseReleases"] - stats["unauthorized"] == 16, stats


def test_redis_out_of_reach_holds_the_request_until_it_is_back(fake: Fake, tmp_path: Path) -> None:
    """Redis is down: the token exchange goes on alone, but no request is sent uncounted — each
    reservation that fails waits a second (``rate_limited``) and reserves again; Redis comes back
    at the first wait and the request goes, reserved."""
    if not have_redis():
        pytest.skip("redis-server is missing (make setup installs it)")
    fake.reset()
    port = free_port()
    started: list[subprocess.Popen[bytes]] = []

    class Reconnecting:
        """A Redis client that connects for each command (as a pool does after an outage)."""

        def execute_command(self, *args: Any) -> Any:
            c = Resp(port)
            try:
                return c.execute_command(*args)
            finally:
                c.close()

    def sleep(seconds: float) -> None:
        time.sleep(seconds)
        if not started:  # Redis comes back after the first wait
            started.append(start_redis(port, tmp_path))

    events: list[dict[str, Any]] = []
    prefix = f"test:{uuid.uuid4().hex[:8]}:"
    try:
        with httpx.Client() as http:
            client = EnterpriseClient(http, base_url=fake.url, api_key="key-1", api_secret="secret-1", sleep=sleep,
                                      fleet=RedisFleet(Reconnecting(), prefix=prefix), on_event=events.append)
            assert client.request("listEnterpriseReleases")["data"]
        counted = Resp(port).execute_command("ZCARD", prefix + "rate:api_client")
    finally:
        for p in started:
            p.terminate()
            p.wait(timeout=10)
    down = [e for e in events if e["kind"] == "rate_limited" and "Redis could not be reached" in (e["reason"] or "")]
    assert down and down[0]["wait_seconds"] == 1.0, events
    sends = [i for i, e in enumerate(events) if e["kind"] == "send"]
    assert sends and sends[0] > events.index(down[0]), "nothing was sent before a reservation held"
    stats = fake.stats()
    assert stats["requests"]["listEnterpriseReleases"] == 1 and stats["tokens_issued"] == 1, stats
    # every request the service saw (the exchange and the call) was reserved (a reservation whose
    # second turned before its send is made again: never fewer than the sends)
    assert counted >= stats["requests"]["listEnterpriseReleases"] + stats["requests"]["exchangeEnterpriseToken"]


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_a_cancelled_fleet_exchange_is_abandoned_and_its_lock_released(kind: str, fake: Fake, redis_port: int) -> None:
    """A task cancelled (a thread interrupted) while it exchanges for the fleet: the fleet's
    exchange lock is released at once (the other processes need not wait out its lease), the
    session's exchange is abandoned (the next call leads anew) and the cancellation goes on."""
    fake.reset(token_delay=1.5)
    prefix = f"test:{uuid.uuid4().hex[:8]}:"
    redis = Resp(redis_port)
    common: dict[str, Any] = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1")
    locked: list[int] = []
    session: rk.Session

    if kind == "async":
        async def main() -> rk.Session:
            async with httpx.AsyncClient() as http:
                client = AsyncEnterpriseClient(http, fleet=AsyncRedisFleet(AsyncResp(redis), prefix=prefix), **common)
                task = asyncio.ensure_future(client.request("listEnterpriseReleases"))
                await asyncio.sleep(0.5)
                locked.append(redis.execute_command("EXISTS", prefix + "exchange"))
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                return client.session

        session = asyncio.run(main())
        # the fake finishes the exchange it was sent (its token unused) before the next test resets it
        deadline = time.monotonic() + 10
        while fake.stats()["tokens_issued"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    else:
        class Interrupt(BaseException):
            """What Ctrl-C is to the blocking client: not an Exception."""

        def on_event(e: dict[str, Any]) -> None:
            if e["kind"] == "send" and e["operation"] == "exchangeEnterpriseToken":
                locked.append(redis.execute_command("EXISTS", prefix + "exchange"))
                raise Interrupt

        with httpx.Client() as http:
            client = EnterpriseClient(http, fleet=RedisFleet(redis, prefix=prefix), on_event=on_event, **common)
            with pytest.raises(Interrupt):
                client.request("listEnterpriseReleases")
            session = client.session
    assert locked == [1], "the exchange ran under the fleet's lock"
    assert redis.execute_command("EXISTS", prefix + "exchange") == 0, "released, not left for its lease"
    assert session.exchanging is False and session.has_token is False
    redis.close()


def test_a_reporting_client_shares_its_token_and_budget_through_the_fleet(fake: Fake, redis_port: int) -> None:
    """The reporting client takes a fleet too: two clients (two sessions) adopt one token, and an
    export job's requests are reserved in the fleet's budget as a call's are."""
    fake.reset()
    prefix = f"test:{uuid.uuid4().hex[:8]}:"
    redis = Counting(Resp(redis_port))
    with httpx.Client() as http:
        clients = [ReportsClient(http, base_url=fake.url, client_id="cid", client_secret="csecret", tenant_id=TENANT,
                                 budget=rk.RateBudget([("api_client", 100, 60)]), clock=fake.clock, sleep=fake.sleep,
                                 fleet=RedisFleet(redis, prefix=prefix)) for _ in range(2)]
        assert clients[0].request("listPlatformExports")["data"] == []
        result = clients[1].run_export(BODY)
    assert clients[0].session is not clients[1].session
    assert result.data == fake.artifact()
    stats = fake.stats()
    assert stats["tokens_issued"] == 1 and stats["exports_created"] == 1, stats
    assert redis.granted >= sum(stats["requests"].values()) >= 5, "every request reserved before it was sent"


def test_the_fleet_is_checked_when_the_client_is_built(fake: Fake, redis_port: int) -> None:
    redis = Resp(redis_port)
    common: dict[str, Any] = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1")
    with httpx.Client() as http:
        with pytest.raises(TypeError, match="execute_command"):
            RedisFleet(object())
        with pytest.raises(rk.InvalidArgumentError, match="prefix"):
            RedisFleet(redis, prefix="has space")
        with pytest.raises(TypeError, match="AsyncRedisFleet"):
            EnterpriseClient(http, fleet=AsyncRedisFleet(AsyncResp(redis)), **common)
        with pytest.raises(TypeError, match="fleet must be"):
            EnterpriseClient(http, fleet=rk.Fleet(), **common)  # type: ignore[arg-type]
        mine = RedisFleet(redis, prefix="a:")
        with pytest.raises(TypeError, match="its Redis"):
            EnterpriseClient(http, session=mine.session(), **common)
        with pytest.raises(TypeError, match="session of this fleet"):
            EnterpriseClient(http, fleet=mine, session=RedisFleet(redis, prefix="b:").session(), **common)
        with pytest.raises(TypeError, match="budget or session"):
            EnterpriseClient(http, fleet=mine, session=mine.session(), budget=rk.RateBudget.preset("enterprise"),
                             **common)
        shared = mine.session(rk.RateBudget.preset("enterprise"))
        a, b = (EnterpriseClient(http, fleet=mine, session=shared, **common) for _ in range(2))
        assert a.session is shared and b.session is shared and shared.fleet == rk.Fleet("a:")
        own = EnterpriseClient(http, fleet=mine, **common)
        assert own.session.fleet == mine.fleet and own.session is not shared
        assert EnterpriseClient(http, **common).session.fleet is None
    with pytest.raises(TypeError, match="AsyncRedisFleet"):
        AsyncEnterpriseClient(httpx.AsyncClient(), fleet=mine, **common)
    assert repr(mine) == "RedisFleet(prefix='a:')" and mine.prefix == "a:"
    redis.close()


def test_the_fleet_machines_forwarded() -> None:
    assert rk.Fleet().prefix == rk.DEFAULT_FLEET_PREFIX == "royaltykit:fleet:"
    assert rk.FLEET_POLL_SECONDS > 0 and rk.MAX_FLEET_PREFIX_BYTES >= 64
    assert all(isinstance(s, str) and s for s in (rk.RESERVE_SCRIPT, rk.PUBLISH_SCRIPT, rk.UNLOCK_SCRIPT))
    with pytest.raises(rk.InvalidArgumentError):
        rk.Fleet("")
    with pytest.raises(rk.InvalidArgumentError, match="session"):
        rk.FleetToken(rk.Session(), "enterprise")  # not a fleet's session
    s = rk.Fleet("p:").session(rk.RateBudget([("api_client", 1, 60)]))
    assert repr(s).endswith('fleet="p:")')
    ft = rk.FleetToken(s, "enterprise", seed=1, now=1_763_900_000)
    assert ft.next() == ft.next() and isinstance(ft.next(), rk.FleetTokenStep.Command)
    ft.replied(None, s, 1_763_900_000)
    ft.replied("OK", s, 1_763_900_000)
    recheck = ft.next()  # the lock is ours: one more look before exchanging
    assert isinstance(recheck, rk.FleetTokenStep.Command) and recheck.command == ["GET", "p:token"]
    ft.replied(None, s, 1_763_900_000)
    assert isinstance(ft.next(), rk.FleetTokenStep.Exchange)
    ft.exchanged(rk.BearerToken.enterprise("secret-fleet-token-1"), 1_763_903_000.0, 1_763_900_000)
    publish = ft.next()
    assert isinstance(publish, rk.FleetTokenStep.Command) and "secret-fleet-token-1" in publish.command[5]
    assert "secret-fleet-token-1" not in repr(publish) and "secret-fleet-token-1" not in repr(ft)
    ft.replied("1", s, 1_763_900_000)
    assert isinstance(ft.next(), rk.FleetTokenStep.Done) and s.has_token
    # the call on the fleet's session reserves, then sends in that second
    c = rk.Call("listEnterpriseCountries", seed=3)
    step = c.next(1_763_900_000.5, session=s)
    assert isinstance(step, rk.CallStep.Reserve) and step.command[:3] == ["EVAL", rk.RESERVE_SCRIPT, "1"]
    assert "p:rate:api_client" in repr(step) and rk.RESERVE_SCRIPT not in repr(step)
    with pytest.raises(rk.InvalidArgumentError, match="reservation"):
        rk.Call("listEnterpriseCountries", seed=4).report(("reply", "ok"))  # none pending
    c.report(("reply", "ok"), 1_763_900_000.6)
    assert isinstance(c.next(1_763_900_000.7, session=s), rk.CallStep.Send)


@pytest.mark.skipif(os.environ.get("ROYALTYKIT_FLEET_SOAK") is None, reason="ROYALTYKIT_FLEET_SOAK=1 runs it")
def test_many_rounds(fake: Fake, redis_port: int) -> None:  # pragma: no cover (by hand)
    fake.reset(token_delay=0.2)
    children, _ = fleet(fake, redis_port)
    try:
        for _ in range(10):
            assert together(children, 10, 120) == [{"ok": 10, "errors": []}] * 4
    finally:
        for c in children:
            c.close()
    assert fake.stats()["tokens_issued"] == 1


def test_redis_py_clients_sync_and_asyncio(fake: Fake, redis_port: int) -> None:
    """The clients users give a fleet: redis-py's ``redis.Redis`` (bytes or decoded replies, SET's
    True) and ``redis.asyncio.Redis``, sharing one token."""
    redis_py = pytest.importorskip("redis")
    import redis.asyncio

    fake.reset(token_delay=0.3)
    prefix = f"test:{uuid.uuid4().hex[:8]}:"
    common: dict[str, Any] = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1")
    with httpx.Client() as http:
        for decode in (False, True):
            client = EnterpriseClient(http, fleet=RedisFleet(redis_py.Redis(port=redis_port, decode_responses=decode),
                                                             prefix=prefix), **common)
            assert client.request("listEnterpriseReleases")["data"]

    async def main() -> int:
        r = redis.asyncio.Redis(port=redis_port)
        async with httpx.AsyncClient() as http:
            client = AsyncEnterpriseClient(http, fleet=AsyncRedisFleet(r, prefix=prefix), **common)
            done = await asyncio.gather(*[client.request("listEnterpriseReleases") for _ in range(5)])
        await r.aclose()
        return len(done)

    assert asyncio.run(main()) == 5
    stats = fake.stats()
    assert stats["tokens_issued"] == 1 and stats["requests"]["listEnterpriseReleases"] == 7, stats
