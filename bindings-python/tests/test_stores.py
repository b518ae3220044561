"""The transactional dedup stores (royaltykit.stores) against a real PostgreSQL (the throw-away
cluster scripts/test-python.sh starts: ROYALTYKIT_PG_DSN) and SQLite files: a receiver process
killed (SIGKILL) at every step, PostgreSQL restarted mid-delivery, two processes racing one
delivery. Whatever happens, the effect is applied exactly once."""

import json
import os
import subprocess
import sqlite3
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

import royaltykit as rk
from royaltykit.stores import PostgresDedupStore, SqliteDedupStore

CHILD = Path(__file__).with_name("store_child.py")
SECRET = "whsec_store_tests_0123456789abcdef"
LEASE = 5
NOW = 1_763_900_000


def dsn() -> str:
    value = os.environ.get("ROYALTYKIT_PG_DSN")
    if not value:
        raise RuntimeError("ROYALTYKIT_PG_DSN is not set: run the suite with scripts/test-python.sh, which starts "
                           "a PostgreSQL cluster (source scripts/postgres.sh; start_postgres)")
    return value


class Db:
    """One database for a test: a fresh table of its own and an `effects` table."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.table = "dedup_" + uuid.uuid4().hex[:12]
        if kind == "postgres":
            import psycopg

            self.target = dsn()
            self.effects = "effects_" + self.table
            self._connect = lambda: psycopg.connect(self.target, autocommit=True)
        else:
            import sqlite3

            self.target = str(tmp_path / "app.sqlite")
            self.effects = "effects"
            self._connect = lambda: sqlite3.connect(self.target, isolation_level=None)
        c = self._connect()
        c.execute(f"CREATE TABLE IF NOT EXISTS {self.effects} (delivery_id TEXT NOT NULL)")
        c.close()
        self.store(lambda: 0).create_table()

    def store(self, clock=time.time, **kw):
        cls = PostgresDedupStore if self.kind == "postgres" else SqliteDedupStore
        return cls(self.target, table=self.table, lease_seconds=LEASE, clock=clock, **kw)

    def effects_of(self, delivery_id: str) -> int:
        c = self._connect()
        ph = "%s" if self.kind == "postgres" else "?"
        (n,) = c.execute(f"SELECT count(*) FROM {self.effects} WHERE delivery_id = {ph}", [delivery_id]).fetchone()
        c.close()
        return int(n)

    def rows(self) -> list[tuple[str, str]]:
        c = self._connect()
        rows = c.execute(f"SELECT dedup_key, state FROM {self.table} ORDER BY dedup_key").fetchall()
        c.close()
        return [tuple(r) for r in rows]

    def handler(self, delivery, connection) -> None:
        ph = "%s" if self.kind == "postgres" else "?"
        connection.execute(f"INSERT INTO {self.effects} (delivery_id) VALUES ({ph})", [delivery.delivery_id])

    def receiver(self, clock=time.time, handler=None) -> rk.WebhookReceiver:
        return rk.WebhookReceiver(SECRET, namespace="org-7/stores", handler=handler or self.handler,
                                  store=self.store(clock))


def delivery(tmp_path: Path, db: Db, name: str) -> tuple[Path, dict]:
    did = f"dlv_{name}_{uuid.uuid4().hex[:8]}"
    body = json.dumps({"event": "enterprise.release.updated",
                       "resource": {"type": "release", "reference": did, "url": "/api/v1/releases/" + did},
                       "occurred_at": "2026-11-22T04:05:06Z"})
    headers = rk.sign_webhook(SECRET, body.encode(), timestamp=NOW, delivery_id=did)
    d = {"secret": SECRET, "headers": headers, "body": body, "now": NOW, "lease_seconds": LEASE, "id": did}
    # the child process uses the same table and effects table as this test
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(d))
    return path, d


def child(db: Db, delivery_file: Path, kill: str, start_at: float = 0.0) -> subprocess.Popen:
    env = {**os.environ, "STORE_TABLE": db.table, "STORE_EFFECTS": db.effects}
    return subprocess.Popen([sys.executable, str(CHILD), db.kind, db.target, str(delivery_file), kill, str(start_at)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def redeliver(db: Db, d: dict, later: float = 0.0) -> tuple[int, dict]:
    r = db.receiver(clock=lambda: time.time() + later).receive(d["headers"], d["body"].encode(), now=d["now"])
    return r.status, json.loads(r.body)


@pytest.fixture(params=["postgres", "sqlite"])
def db(request, tmp_path: Path) -> Db:
    return Db(request.param, tmp_path)


@pytest.mark.parametrize("point", ["after_claim", "after_mark", "after_effect"])
def test_a_receiver_killed_before_its_transaction_committed_leaves_nothing_and_the_redelivery_applies_it_once(
        db: Db, tmp_path: Path, point: str) -> None:
    f, d = delivery(tmp_path, db, point)
    p = child(db, f, point)
    out, err = p.communicate(timeout=60)
    assert p.returncode == -9, (out, err)
    assert db.effects_of(d["id"]) == 0  # the effect died with the transaction
    # inside the lease the claim still stands: the redelivery is told to come back
    assert redeliver(db, d)[0] == 503
    assert db.effects_of(d["id"]) == 0
    status, body = redeliver(db, d, later=LEASE + 1)
    assert (status, body["result"]) == (200, "processed")
    assert db.effects_of(d["id"]) == 1
    assert [s for _, s in db.rows()] == ["done"]  # its delivery key (the content key is opt-in)
    assert redeliver(db, d, later=LEASE + 2) == (200, {"result": "acknowledge"})
    assert db.effects_of(d["id"]) == 1


def test_a_receiver_killed_after_its_commit_left_the_effect_and_the_redelivery_is_a_duplicate(
        db: Db, tmp_path: Path) -> None:
    f, d = delivery(tmp_path, db, "after_commit")
    p = child(db, f, "after_commit")
    out, err = p.communicate(timeout=60)
    assert p.returncode == -9, (out, err)
    assert db.effects_of(d["id"]) == 1
    assert redeliver(db, d) == (200, {"result": "acknowledge"})
    assert redeliver(db, d, later=LEASE + 1) == (200, {"result": "acknowledge"})
    assert db.effects_of(d["id"]) == 1


def test_a_delivery_in_a_child_that_is_not_killed_is_processed(db: Db, tmp_path: Path) -> None:
    f, d = delivery(tmp_path, db, "none")
    p = child(db, f, "none")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert out.split()[0] == "200" and json.loads(out.split(" ", 1)[1])["result"] == "processed"
    assert db.effects_of(d["id"]) == 1


def test_two_processes_racing_one_delivery_apply_it_once(db: Db, tmp_path: Path) -> None:
    f, d = delivery(tmp_path, db, "race")
    start = time.time() + 1.0
    ps = [child(db, f, "slow", start) for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in ps]
    assert [p.returncode for p in ps] == [0, 0], outs
    statuses = sorted(int(o.split()[0]) for o, _ in outs)
    assert statuses[0] == 200 and statuses[1] in (200, 503), outs
    assert db.effects_of(d["id"]) == 1
    assert redeliver(db, d, later=LEASE + 1) == (200, {"result": "acknowledge"})
    assert db.effects_of(d["id"]) == 1


def test_a_failing_handler_rolls_its_effect_back_and_the_redelivery_applies_it_once(db: Db, tmp_path: Path) -> None:
    _, d = delivery(tmp_path, db, "fails")

    def failing(delivery, connection):
        db.handler(delivery, connection)
        raise RuntimeError("the handler failed after writing")

    r = db.receiver(handler=failing).receive(d["headers"], d["body"].encode(), now=d["now"])
    assert r.status == 500
    assert db.effects_of(d["id"]) == 0
    assert db.rows() == []  # released at once: the redelivery need not wait for the lease
    assert redeliver(db, d)[0] == 200
    assert db.effects_of(d["id"]) == 1


def test_an_on_error_that_raises_still_rolls_back_releases_and_answers_500(db: Db, tmp_path: Path, caplog) -> None:
    # on_error is told of the handler's failure; its own exception is logged and changes nothing:
    # the transaction is not left open, the claim is released, the delivery answered 500.
    _, d = delivery(tmp_path, db, "on_error")
    told = []

    def failing(delivery, connection):
        db.handler(delivery, connection)
        raise RuntimeError("the handler failed after writing")

    def on_error(e, delivery):
        told.append(str(e))
        raise ValueError("on_error itself failed")

    receiver = rk.WebhookReceiver(SECRET, namespace="org-7/stores", handler=failing, store=db.store(),
                                  on_error=on_error)
    with caplog.at_level("ERROR", logger="royaltykit"):
        r = receiver.receive(d["headers"], d["body"].encode(), now=d["now"])
    assert (r.status, json.loads(r.body)["error"]) == (500, "handler_failed")
    assert told == ["the handler failed after writing"]
    assert any("on_error raised" in m.getMessage() and m.exc_info for m in caplog.records)
    assert db.effects_of(d["id"]) == 0 and db.rows() == []
    assert redeliver(db, d)[0] == 200 and db.effects_of(d["id"]) == 1


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, SystemExit])
def test_an_interrupted_handler_rolls_back_releases_and_the_interruption_goes_on(
        db: Db, tmp_path: Path, interruption: type[BaseException]) -> None:
    _, d = delivery(tmp_path, db, "interrupted")

    def interrupted(delivery, connection):
        db.handler(delivery, connection)
        raise interruption()

    with pytest.raises(interruption):
        db.receiver(handler=interrupted).receive(d["headers"], d["body"].encode(), now=d["now"])
    assert db.effects_of(d["id"]) == 0  # the transaction was rolled back, not left open
    assert db.rows() == []  # the claim released at once: the redelivery need not wait for the lease
    assert redeliver(db, d)[0] == 200
    assert db.effects_of(d["id"]) == 1


def test_a_cancelled_async_delivery_rolls_back_releases_and_stays_cancelled(db: Db, tmp_path: Path) -> None:
    import asyncio

    _, d = delivery(tmp_path, db, "cancelled")
    receiver = db.receiver()

    async def main() -> None:
        started = asyncio.Event()

        async def slow(delivery, connection):
            db.handler(delivery, connection)
            started.set()
            await asyncio.sleep(3600)

        receiver.handler = slow
        task = asyncio.create_task(receiver.areceive(d["headers"], d["body"].encode(), now=d["now"]))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()

    asyncio.run(main())
    assert db.effects_of(d["id"]) == 0
    assert db.rows() == []
    assert redeliver(db, d)[0] == 200
    assert db.effects_of(d["id"]) == 1


def test_an_interrupted_handler_on_the_in_memory_window_is_released() -> None:
    seen = []

    def interrupted(delivery):
        seen.append(delivery.delivery_id)
        if len(seen) == 1:
            raise KeyboardInterrupt

    receiver = rk.WebhookReceiver(SECRET, namespace="org-7/window", handler=interrupted)
    body = json.dumps({"event": "enterprise.release.updated",
                       "resource": {"type": "release", "reference": "r1", "url": "/api/v1/releases/r1"},
                       "occurred_at": "2026-11-22T04:05:06Z"}).encode()
    headers = rk.sign_webhook(SECRET, body, timestamp=NOW, delivery_id="dlv_window_interrupted")
    with pytest.raises(KeyboardInterrupt):
        receiver.receive(headers, body, now=NOW)
    again = receiver.receive(headers, body, now=NOW)
    assert (again.status, json.loads(again.body)["result"]) == (200, "processed")
    assert seen == ["dlv_window_interrupted", "dlv_window_interrupted"]


def test_a_claim_lost_to_another_worker_rolls_the_effect_back(db: Db, tmp_path: Path) -> None:
    _, d = delivery(tmp_path, db, "lost")
    ran = []
    slow = db.store()
    # this worker claims, then stalls past its lease; another takes the key over and finishes
    taken = {}

    class Stalling(type(slow)):  # type: ignore[misc]
        def begin(self):
            taken["other"] = redeliver(db, d, later=LEASE + 1)
            return super().begin()

    store = Stalling(db.target, table=db.table, lease_seconds=LEASE)
    def handler(dl, c):
        ran.append(dl)
        db.handler(dl, c)

    r = rk.WebhookReceiver(SECRET, namespace="org-7/stores", store=store,
                           handler=handler).receive(d["headers"], d["body"].encode(), now=d["now"])
    assert taken["other"][0] == 200
    assert (r.status, json.loads(r.body)["result"]) == (503, "retry_later")
    assert len(ran) == 1  # it ran, and its mark found the key taken: its effect was rolled back
    assert db.effects_of(d["id"]) == 1


def test_postgres_restarted_mid_delivery_answers_503_and_loses_nothing(tmp_path: Path) -> None:
    db = Db("postgres", tmp_path)
    f, d = delivery(tmp_path, db, "restart")
    p = child(db, f, "restart")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert out.split()[0] == "503", out
    assert db.effects_of(d["id"]) == 0
    # the claims were released on a new connection: the redelivery is processed at once
    status, body = redeliver(db, d)
    assert (status, body["result"]) == (200, "processed")
    assert db.effects_of(d["id"]) == 1


def test_many_threads_share_one_store(db: Db, tmp_path: Path) -> None:
    deliveries = [delivery(tmp_path, db, f"t{i}")[1] for i in range(12)]
    receiver = db.receiver()
    statuses: list[int] = []

    def work(ds: list[dict]) -> None:
        for dd in ds:
            statuses.append(receiver.receive(dd["headers"], dd["body"].encode(), now=dd["now"]).status)

    threads = [threading.Thread(target=work, args=(deliveries[i::3] + deliveries[i::3],)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [db.effects_of(dd["id"]) for dd in deliveries] == [1] * 12
    assert statuses.count(200) >= 12 and set(statuses) <= {200, 503}
    assert receiver.store._tokens._held == {}  # no claim token outlives its delivery


def test_purge_removes_only_expired_rows(db: Db, tmp_path: Path) -> None:
    _, d = delivery(tmp_path, db, "purge")
    assert redeliver(db, d)[0] == 200
    assert db.store().purge() == 0
    assert len(db.rows()) == 1
    assert db.store(clock=lambda: time.time() + rk.DEFAULT_DEDUP_TTL_SECONDS + 1).purge() == 1
    assert db.rows() == []


def test_the_postgres_connection_string_never_shows(tmp_path: Path) -> None:
    store = PostgresDedupStore(dsn().replace("postgres@", "postgres:s3cret-pw@"), create_table=False)
    assert "s3cret" not in repr(store)


def test_concurrent_async_deliveries_on_postgres_each_apply_once(tmp_path: Path) -> None:
    import asyncio

    db = Db("postgres", tmp_path)
    ds = [delivery(tmp_path, db, f"a{i}")[1] for i in range(8)]

    async def handler(d, connection) -> None:
        db.handler(d, connection)
        await asyncio.sleep(0.02)  # other deliveries run meanwhile: none inside this transaction

    receiver = db.receiver(handler=handler)

    async def run() -> list[int]:
        replies = await asyncio.gather(*(receiver.areceive(d["headers"], d["body"].encode(), now=d["now"])
                                         for d in ds + ds))
        return [r.status for r in replies]

    statuses = asyncio.run(run())
    assert [db.effects_of(d["id"]) for d in ds] == [1] * 8
    assert statuses.count(200) >= 8 and set(statuses) <= {200, 503}


def test_async_receive_on_sqlite(db: Db, tmp_path: Path) -> None:
    import asyncio

    _, d = delivery(tmp_path, db, "async")
    receiver = db.receiver()
    first = asyncio.run(receiver.areceive(d["headers"], d["body"].encode(), now=d["now"]))
    again = asyncio.run(receiver.areceive(d["headers"], d["body"].encode(), now=d["now"]))
    assert (first.status, json.loads(first.body)["result"]) == (200, "processed")
    assert (again.status, json.loads(again.body)) == (200, {"result": "acknowledge"})
    assert db.effects_of(d["id"]) == 1


def test_a_store_that_fails_answers_503_and_logs_the_outage_with_its_cause(tmp_path: Path, caplog) -> None:
    class Down:
        def claim(self, key: str) -> str:
            raise ConnectionRefusedError("the store is down")

    _, d = delivery(tmp_path, None, "down")
    receiver = rk.WebhookReceiver(SECRET, namespace="org-7/stores", handler=lambda d: None, store=Down())
    with caplog.at_level("ERROR", logger="royaltykit"):
        r = receiver.receive(d["headers"], d["body"].encode(), now=d["now"])
    assert r.status == 503
    [record] = [x for x in caplog.records if x.name.startswith("royaltykit")]
    assert record.levelname == "ERROR" and "Down" in record.getMessage() and "claim" in record.getMessage()
    assert isinstance(record.exc_info[1], ConnectionRefusedError)
    assert SECRET not in caplog.text


def test_a_receiver_reports_each_delivery_outcome(tmp_path: Path, caplog) -> None:
    events: list[dict] = []
    _, d = delivery(tmp_path, None, "events")
    receiver = rk.WebhookReceiver(SECRET, namespace="org-7/events", handler=lambda d: None, on_event=events.append)
    with caplog.at_level("DEBUG", logger="royaltykit"):
        first = receiver.receive(d["headers"], d["body"].encode(), now=d["now"])
        again = receiver.receive(d["headers"], d["body"].encode(), now=d["now"])
        forged = receiver.receive(rk.sign_webhook("whsec_other_0123456789abcdef", d["body"].encode(), timestamp=NOW,
                                                  delivery_id="dlv_forged"), d["body"].encode(), now=d["now"])
    assert (first.status, again.status, forged.status) == (200, 200, 401)
    assert [e["outcome"] for e in events] == ["processed", "duplicate", "rejected"]
    assert events[0] == {"kind": "receipt", "outcome": "processed", "status": 200, "delivery_id": d["id"],
                         "event": "enterprise.release.updated"}
    assert events[2]["delivery_id"] is None
    assert sum("receipt" in r.getMessage() for r in caplog.records) == 3 and SECRET not in caplog.text


def test_the_async_postgres_store_under_areceive(tmp_path: Path) -> None:
    import asyncio

    from royaltykit.stores import AsyncPostgresDedupStore

    db = Db("postgres", tmp_path)
    ds = [delivery(tmp_path, db, f"as{i}")[1] for i in range(8)]

    async def handler(d, connection) -> None:
        await connection.execute(f"INSERT INTO {db.effects} (delivery_id) VALUES (%s)", [d.delivery_id])
        await asyncio.sleep(0.02)

    async def failing(d, connection) -> None:
        await handler(d, connection)
        raise RuntimeError("the handler failed after writing")

    async def run() -> tuple[list[int], int, int]:
        # No create_table(): the first claims create the table (16 deliveries at once)
        store = AsyncPostgresDedupStore(db.target, table=db.table, lease_seconds=LEASE)
        receiver = rk.WebhookReceiver(SECRET, namespace="org-7/stores", handler=handler, store=store)
        replies = await asyncio.gather(*(receiver.areceive(d["headers"], d["body"].encode(), now=d["now"])
                                         for d in ds + ds))
        _, f = delivery(tmp_path, db, "async_fails")
        failed = await rk.WebhookReceiver(SECRET, namespace="org-7/stores", handler=failing, store=store,
                                          on_error=lambda e, d: None).areceive(f["headers"], f["body"].encode(),
                                                                               now=f["now"])
        again = await receiver.areceive(f["headers"], f["body"].encode(), now=f["now"])
        await store.close()
        assert store._tokens._held == {}
        return [r.status for r in replies], failed.status, again.status

    statuses, failed, again = asyncio.run(run())
    assert [db.effects_of(d["id"]) for d in ds] == [1] * 8
    assert statuses.count(200) >= 8 and set(statuses) <= {200, 503}
    assert (failed, again) == (500, 200)
    assert "postgres@" not in repr(AsyncPostgresDedupStore(dsn()))


def test_the_dialect_comes_from_the_core_and_an_old_sqlite_is_refused() -> None:
    assert rk.detect_sql_dialect("PostgreSQL", "16.2") == "postgres"
    assert rk.detect_sql_dialect("SQLite", sqlite3.sqlite_version) == "sqlite"
    with pytest.raises(rk.InvalidArgumentError, match="3.35 or later"):
        rk.detect_sql_dialect("SQLite", "3.34.1")
    with pytest.raises(rk.InvalidArgumentError, match="PostgreSQL and SQLite"):
        rk.detect_sql_dialect("MySQL", "8.0")
