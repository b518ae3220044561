"""The hand-written receiver the royaltykit integrations are compared with (bench/e2e, issue 44):
what a user writes without the library, with the same client libraries.

Read the raw body; check ``Service-Webhook-Timestamp`` within 300 s and
``Service-Webhook-Signature`` (``v1=<hex>`` HMAC-SHA256 over ``<timestamp>.<body>``, compared in
constant time); parse the JSON body; dedup by ``Service-Webhook-Id`` (a set in memory, ``SET key 1
NX EX 86400`` on Redis, ``INSERT … ON CONFLICT DO NOTHING`` inside BEGIN/COMMIT on PostgreSQL);
answer what royaltykit answers: 200 ``{"result":"processed"}`` for a new delivery, 200
``{"result":"acknowledge"}`` for a duplicate, 4xx for a refused one, 503 when the store fails.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

TOLERANCE = 300
PROCESSED = b'{"result":"processed"}'
DUPLICATE = b'{"result":"acknowledge"}'
UNAVAILABLE = b'{"error":"store_unavailable"}'
TABLE = "bench_dedup"
CREATE = f"CREATE TABLE IF NOT EXISTS {TABLE} (id text PRIMARY KEY)"
INSERT = f"INSERT INTO {TABLE}(id) VALUES (%s) ON CONFLICT DO NOTHING"
REDIS_PREFIX = "bench-hand:"


def _refused(code: str) -> bytes:
    return b'{"error":"' + code.encode() + b'"}'


def verify(header: Callable[[str], str | None], body: bytes, key: bytes) -> tuple[int, bytes] | str:
    """The delivery id of a genuine delivery, or the refusal ``(status, body)``. ``header`` looks
    a header up by name (any case: every framework's headers object does)."""
    delivery_id = header("Service-Webhook-Id")
    timestamp = header("Service-Webhook-Timestamp")
    signatures = header("Service-Webhook-Signature")
    if not delivery_id or not timestamp or not signatures:
        return 400, _refused("missing_header")
    try:
        ts = int(timestamp)
    except ValueError:
        return 400, _refused("invalid_timestamp")
    if abs(time.time() - ts) > TOLERANCE:
        return 400, _refused("timestamp_outside_tolerance")
    expected = hmac.new(key, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    if not any(s.startswith("v1=") and hmac.compare_digest(s[3:], expected) for s in signatures.split()):
        return 401, _refused("no_matching_signature")
    try:
        event = json.loads(body)
    except ValueError:
        return 400, _refused("invalid_body")
    if not isinstance(event, dict) or not isinstance(event.get("event"), str) or not isinstance(event.get("resource"), dict):
        return 400, _refused("invalid_body")
    return delivery_id


# --- synchronous stores (Flask, Django under gunicorn): add(id) is True for a new delivery ---

class MemorySet:
    def __init__(self) -> None:
        self.seen: set[str] = set()

    def add(self, delivery_id: str) -> bool:
        if delivery_id in self.seen:
            return False
        self.seen.add(delivery_id)
        return True


class RedisSetNx:
    def __init__(self, client: Any) -> None:
        self.client = client

    def add(self, delivery_id: str) -> bool:
        return bool(self.client.set(REDIS_PREFIX + delivery_id, 1, nx=True, ex=86400))


class PostgresInsert:
    """One connection (a sync worker serves one request at a time), autocommit outside BEGIN."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self.conn = psycopg.connect(dsn, autocommit=True)
        self.conn.execute(CREATE)

    def add(self, delivery_id: str) -> bool:
        c = self.conn
        try:
            c.execute("BEGIN")
            inserted = c.execute(INSERT, (delivery_id,)).rowcount == 1
            c.execute("COMMIT")
        except Exception:
            c.rollback()
            raise
        return inserted


def receive(header: Callable[[str], str | None], body: bytes, key: bytes, store: Any) -> tuple[int, bytes]:
    verified = verify(header, body, key)
    if not isinstance(verified, str):
        return verified
    try:
        new = store.add(verified)
    except Exception:
        return 503, UNAVAILABLE
    return (200, PROCESSED) if new else (200, DUPLICATE)


# --- asynchronous stores (ASGI) ---

class AsyncMemorySet(MemorySet):
    async def aadd(self, delivery_id: str) -> bool:
        return self.add(delivery_id)


class AsyncRedisSetNx:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def aadd(self, delivery_id: str) -> bool:
        return bool(await self.client.set(REDIS_PREFIX + delivery_id, 1, nx=True, ex=86400))


class AsyncPostgresInsert:
    """psycopg's AsyncConnection, kept as royaltykit's AsyncPostgresDedupStore keeps its own: a
    connection per transaction in flight, opened when none is idle, up to 8 kept idle."""

    IDLE = 8

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.idle: list[Any] = []

    async def _take(self) -> Any:
        import psycopg

        while self.idle:
            c = self.idle.pop()
            if not (c.closed or c.broken):
                return c
        return await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)

    async def _give(self, c: Any) -> None:
        if len(self.idle) < self.IDLE:
            self.idle.append(c)
        else:
            await c.close()

    async def create_table(self) -> None:
        c = await self._take()
        await c.execute(CREATE)
        await self._give(c)

    async def aadd(self, delivery_id: str) -> bool:
        c = await self._take()
        try:
            await c.execute("BEGIN")
            inserted = (await c.execute(INSERT, (delivery_id,))).rowcount == 1
            await c.execute("COMMIT")
        except Exception:
            await c.close()
            raise
        await self._give(c)
        return inserted


async def areceive(header: Callable[[str], str | None], body: bytes, key: bytes, store: Any) -> tuple[int, bytes]:
    verified = verify(header, body, key)
    if not isinstance(verified, str):
        return verified
    try:
        new = await store.aadd(verified)
    except Exception:
        return 503, UNAVAILABLE
    return (200, PROCESSED) if new else (200, DUPLICATE)
