"""Dedup stores that commit in your own database transaction: exactly-once effects.

With :class:`PostgresDedupStore` (psycopg 3) or :class:`SqliteDedupStore` (the standard
library's ``sqlite3``), a :class:`~royaltykit.WebhookReceiver` claims a delivery with a row (its
own short statement, with a lease), opens a transaction, runs your handler with that
transaction's connection, marks the row done **inside** the same transaction, and commits: the
mark and your effect commit
together or not at all. A crash, a killed process or a failed commit at any point leaves either
nothing (the redelivery processes the event once) or both (the redelivery is acknowledged as a
duplicate). The Redis and in-memory stores can only promise at least once.

The handler is called as ``handler(delivery, connection)``: write the effect with
``connection`` and do not commit or roll back yourself. Every statement, and what its result
means, is the Rust core's (:class:`~royaltykit.SqlDedupProtocol`); this module runs them.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from os import PathLike
from typing import Any, cast

from ._native import SqlDedupProtocol, SqlStatement
from .receiver import _Tokens

__all__ = ["AsyncPostgresDedupStore", "PostgresDedupStore", "SqliteDedupStore"]


class _SqlStore:
    """What the two stores share: the protocol, claim tokens, a clock, and a few idle connections.

    A connection is used by one delivery at a time: a transaction keeps its connection from
    ``begin`` to the commit or rollback, so deliveries in other threads or coroutines (``areceive``)
    never run a statement inside it."""

    transactional = True
    _IDLE = 8

    def __init__(self, protocol: SqlDedupProtocol, clock: Callable[[], float]) -> None:
        self.protocol = protocol
        self._clock = clock
        self._tokens = _Tokens()
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._marked: dict[int, list[str]] = {}  # keys marked in each open transaction (by connection)

    def _now(self) -> int:
        return int(self._clock())

    def _open(self) -> Any:
        raise NotImplementedError

    def _usable(self, connection: Any) -> bool:
        return True

    def _take(self) -> Any:
        """An idle connection still usable, or a new one (autocommit)."""
        with self._lock:
            while self._idle:
                c = self._idle.pop()
                if self._usable(c):
                    return c
        return self._open()

    def _give(self, connection: Any) -> None:
        with self._lock:
            if len(self._idle) < self._IDLE:
                self._idle.append(connection)
                return
        connection.close()

    def _drop(self, connection: Any) -> None:
        try:
            connection.close()
        except Exception:  # already broken
            pass

    @staticmethod
    def _run(connection: Any, statement: SqlStatement) -> Any:
        return connection.execute(statement.sql, statement.args)

    def _autocommit(self, work: Callable[[Any], Any]) -> Any:
        """``work`` on a connection of its own outside any transaction; a connection that failed
        is dropped."""
        c = self._take()
        try:
            result = work(c)
        except Exception:
            self._drop(c)
            raise
        self._give(c)
        return result

    def create_table(self) -> None:
        """Creates the table and its index when missing (idempotent)."""
        def create(c: Any) -> None:
            for sql in self.protocol.schema():
                c.execute(sql)
        self._autocommit(create)

    def claim(self, key: str) -> str:
        """``"new"``, ``"in_progress"`` or ``"done"`` (its own statement, outside any transaction)."""
        token = SqlDedupProtocol.new_token()

        def claim(c: Any) -> str:
            rows = self._run(c, self.protocol.claim(key, token, self._now())).fetchall()
            if SqlDedupProtocol.claim_reply(len(rows)) == "new":
                self._tokens.hold(key, token)
                return "new"
            row = self._run(c, self.protocol.state(key)).fetchone()
            return SqlDedupProtocol.state_reply(row[0] if row else None)
        return cast(str, self._autocommit(claim))

    def state(self, key: str) -> str:
        """What the table holds of ``key``, without claiming it (its own statement, outside any
        transaction; :class:`~royaltykit.DeliveryStates`): ``"new"``, ``"in_progress"`` or
        ``"done"``."""
        statement = self.protocol.lookup(key, self._now())

        def state(c: Any) -> str:
            row = self._run(c, statement).fetchone()
            return SqlDedupProtocol.lookup_reply(row[0] if row else None)
        return cast(str, self._autocommit(state))

    def begin(self) -> Any:
        """Opens the handler's transaction on a connection it keeps until the commit or rollback;
        returns that connection."""
        c = self._take()
        try:
            c.execute(self.protocol.begin())
        except Exception:
            self._drop(c)
            raise
        return c

    def mark_done(self, connection: Any, key: str) -> bool:
        """Marks ``key`` done inside the transaction: False when the claim was lost (its lease ran
        out and another worker took the key)."""
        cursor = self._run(connection, self.protocol.mark_done(key, self._tokens.get(key), self._now()))
        with self._lock:
            self._marked.setdefault(id(connection), []).append(key)
        return SqlDedupProtocol.guarded_reply(max(cursor.rowcount, 0))

    def _marked_in(self, connection: Any) -> list[str]:
        with self._lock:
            return self._marked.pop(id(connection), [])

    def commit_transaction(self, connection: Any) -> None:
        """Commits the mark and the effect together. A connection whose commit failed is closed
        (the database rolls back what did not commit)."""
        marked = self._marked_in(connection)
        try:
            connection.execute("COMMIT")
        except Exception:
            self._drop(connection)
            raise
        for key in marked:  # done: the claim tokens are no longer needed
            self._tokens.drop(key)
        self._give(connection)

    def rollback(self, connection: Any) -> None:
        """Rolls the transaction back (a broken connection is closed: the database rolls back a
        transaction whose connection is gone)."""
        self._marked_in(connection)  # the releases that follow still need their tokens
        try:
            connection.execute("ROLLBACK")
        except Exception:
            self._drop(connection)
            raise
        self._give(connection)

    def release(self, key: str) -> bool:
        """Gives up this worker's claim (never another worker's, never a committed row)."""
        statement = self.protocol.release(key, self._tokens.get(key))
        try:
            rows: int = self._autocommit(lambda c: self._run(c, statement).rowcount)
            return SqlDedupProtocol.guarded_reply(max(rows, 0))
        finally:
            self._tokens.drop(key)

    def purge(self) -> int:
        """Deletes the rows expired now (claims whose lease ran out, deliveries past the TTL);
        returns how many. Run it now and then; correctness never depends on it."""
        statement = self.protocol.purge(self._now())
        rows: int = self._autocommit(lambda c: self._run(c, statement).rowcount)
        return max(rows, 0)

    def close(self) -> None:
        """Closes the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            self._drop(c)


class SqliteDedupStore(_SqlStore):
    """The transactional dedup store on an SQLite file (``sqlite3``, SQLite 3.35 or later): the
    handler gets the transaction's ``sqlite3.Connection`` inside ``BEGIN IMMEDIATE``. Creates the
    table on first use unless ``create_table=False``. Thread-safe, and safe under ``areceive``
    (a transaction keeps its connection); several processes may share the file (``timeout`` is
    how long a writer waits for the lock).
    """

    def __init__(self, database: str | PathLike[str], *, table: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, timeout: float = 5.0, create_table: bool = True,
                 clock: Callable[[], float] = time.time) -> None:
        if sqlite3.sqlite_version_info < (3, 35, 0):
            raise RuntimeError(f"SQLite {sqlite3.sqlite_version} is too old: the store needs 3.35 (RETURNING)")
        super().__init__(SqlDedupProtocol("sqlite", param_style="qmark", table=table, ttl_seconds=ttl_seconds,
                                          lease_seconds=lease_seconds), clock)
        self._database, self._timeout = database, timeout
        if create_table:
            self.create_table()

    def _open(self) -> sqlite3.Connection:
        # used by one delivery at a time, whichever thread: never two at once
        return sqlite3.connect(self._database, timeout=self._timeout, isolation_level=None, check_same_thread=False)


class PostgresDedupStore(_SqlStore):
    """The transactional dedup store on PostgreSQL with psycopg 3 (``pip install
    royaltykit[postgres]``): the handler gets the transaction's ``psycopg.Connection``.
    ``conninfo`` is a libpq connection string or URL. Creates the table on first use unless
    ``create_table=False``. Thread-safe, and safe under ``areceive`` (a transaction keeps its
    connection; a few idle connections are kept, and one the server dropped is opened again)."""

    def __init__(self, conninfo: str, *, table: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, create_table: bool = True,
                 clock: Callable[[], float] = time.time) -> None:
        import psycopg  # noqa: F401 (the extra royaltykit[postgres]: missing, this fails here, not later)

        super().__init__(SqlDedupProtocol("postgres", param_style="format", table=table, ttl_seconds=ttl_seconds,
                                          lease_seconds=lease_seconds), clock)
        self._conninfo = conninfo
        if create_table:
            self.create_table()

    def _open(self) -> Any:
        import psycopg

        return psycopg.connect(self._conninfo, autocommit=True)

    def _usable(self, connection: Any) -> bool:
        return not (connection.closed or connection.broken)

    def __repr__(self) -> str:
        # the connection string may hold a password: never shown
        return f"PostgresDedupStore(table={self.protocol.table!r})"


class AsyncPostgresDedupStore:
    """:class:`PostgresDedupStore` with psycopg 3's ``AsyncConnection``, for
    :meth:`~royaltykit.WebhookReceiver.areceive` (ASGI, async Django): the handler gets the
    transaction's ``psycopg.AsyncConnection``. The table and its index are created when missing
    (idempotent DDL) before the first claim, unless ``create_table=False`` (then call ``await
    store.create_table()``). A transaction keeps its connection from ``begin`` to the commit or
    rollback; a few idle connections are kept for the next deliveries."""

    transactional = True
    _IDLE = 8

    def __init__(self, conninfo: str, *, table: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, clock: Callable[[], float] = time.time,
                 create_table: bool = True) -> None:
        import psycopg  # noqa: F401 (the extra royaltykit[postgres])

        # Whether the table is known to exist: the first claim creates it when missing (one
        # creation at a time: concurrent CREATE TABLE IF NOT EXISTS can collide in PostgreSQL).
        self._table_ready = not create_table
        self._table_lock: Any = None
        self.protocol = SqlDedupProtocol("postgres", param_style="format", table=table, ttl_seconds=ttl_seconds,
                                         lease_seconds=lease_seconds)
        self._conninfo, self._clock = conninfo, clock
        self._tokens = _Tokens()
        self._idle: list[Any] = []
        self._marked: dict[int, list[str]] = {}

    def _now(self) -> int:
        return int(self._clock())

    async def _take(self) -> Any:
        while self._idle:
            c = self._idle.pop()
            if not (c.closed or c.broken):
                return c
        import psycopg

        return await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)

    async def _give(self, connection: Any) -> None:
        if len(self._idle) < self._IDLE:
            self._idle.append(connection)
        else:
            await connection.close()

    @staticmethod
    async def _drop(connection: Any) -> None:
        try:
            await connection.close()
        except Exception:  # already broken
            pass

    async def _autocommit(self, sql: str, args: list[str], fetch: bool) -> Any:
        """The statement on a connection of its own outside any transaction: its rows, or its
        count of changed rows. A connection that failed is closed."""
        c = await self._take()
        try:
            cursor = await c.execute(sql, args)
            result = await cursor.fetchall() if fetch else cursor.rowcount
        except Exception:
            await self._drop(c)
            raise
        await self._give(c)
        return result

    async def create_table(self) -> None:
        """Creates the table and its index when missing (idempotent)."""
        for sql in self.protocol.schema():
            await self._autocommit(sql, [], False)

    async def _ready(self) -> None:
        """The table exists: created when missing by the first claim or lookup (a failure is
        tried again on the next one)."""
        if not self._table_ready:
            import asyncio

            if self._table_lock is None:
                self._table_lock = asyncio.Lock()
            async with self._table_lock:
                if not self._table_ready:
                    await self.create_table()
                    self._table_ready = True

    async def claim(self, key: str) -> str:
        """``"new"``, ``"in_progress"`` or ``"done"`` (outside any transaction). The first claim
        creates the table when missing; a failure is tried again on the next one."""
        await self._ready()
        token = SqlDedupProtocol.new_token()
        st = self.protocol.claim(key, token, self._now())
        rows = await self._autocommit(st.sql, st.args, True)
        if SqlDedupProtocol.claim_reply(len(rows)) == "new":
            self._tokens.hold(key, token)
            return "new"
        st = self.protocol.state(key)
        state = await self._autocommit(st.sql, st.args, True)
        return SqlDedupProtocol.state_reply(state[0][0] if state else None)

    async def state(self, key: str) -> str:
        """What the table holds of ``key``, without claiming it (outside any transaction;
        :class:`~royaltykit.AsyncDeliveryStates`): ``"new"``, ``"in_progress"`` or ``"done"``."""
        await self._ready()
        st = self.protocol.lookup(key, self._now())
        rows = await self._autocommit(st.sql, st.args, True)
        return SqlDedupProtocol.lookup_reply(rows[0][0] if rows else None)

    async def begin(self) -> Any:
        """Opens the handler's transaction on a connection of its own; returns it."""
        c = await self._take()
        try:
            await c.execute(self.protocol.begin())
        except Exception:
            await self._drop(c)
            raise
        return c

    async def mark_done(self, connection: Any, key: str) -> bool:
        """Marks ``key`` done inside the transaction: False when the claim was lost."""
        st = self.protocol.mark_done(key, self._tokens.get(key), self._now())
        cursor = await connection.execute(st.sql, st.args)
        self._marked.setdefault(id(connection), []).append(key)
        return SqlDedupProtocol.guarded_reply(max(cursor.rowcount, 0))

    async def commit_transaction(self, connection: Any) -> None:
        """Commits the mark and the effect together (a connection whose commit failed is closed)."""
        marked = self._marked.pop(id(connection), [])
        try:
            await connection.execute("COMMIT")
        except Exception:
            await self._drop(connection)
            raise
        for key in marked:
            self._tokens.drop(key)
        await self._give(connection)

    async def rollback(self, connection: Any) -> None:
        """Rolls the transaction back (a broken connection is closed)."""
        self._marked.pop(id(connection), None)
        try:
            await connection.execute("ROLLBACK")
        except Exception:
            await self._drop(connection)
            raise
        await self._give(connection)

    async def release(self, key: str) -> bool:
        """Gives up this worker's claim (never another worker's, never a committed row)."""
        try:
            st = self.protocol.release(key, self._tokens.get(key))
            rows: int = await self._autocommit(st.sql, st.args, False)
            return SqlDedupProtocol.guarded_reply(max(rows, 0))
        finally:
            self._tokens.drop(key)

    async def purge(self) -> int:
        """Deletes the rows expired now; returns how many."""
        st = self.protocol.purge(self._now())
        rows: int = await self._autocommit(st.sql, st.args, False)
        return max(rows, 0)

    async def close(self) -> None:
        """Closes the idle connections."""
        idle, self._idle = self._idle, []
        for c in idle:
            await self._drop(c)

    def __repr__(self) -> str:
        return f"AsyncPostgresDedupStore(table={self.protocol.table!r})"
