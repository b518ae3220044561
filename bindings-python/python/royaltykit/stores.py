"""Dedup stores that commit in your own database transaction (exactly-once effects), and the
inboxes (on SQL, exactly once; on a Redis stream, at least once).

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

The inboxes (:class:`SqliteInbox`, :class:`PostgresInbox`, :class:`AsyncPostgresInbox`) are the
spec's "persist and return success", then process: a receiver given ``inbox=`` verifies a
delivery, inserts it in the inbox table and answers 200 at once, however long the handler takes;
a worker (``inbox.run_worker(handler)``, or ``inbox.drain(handler)`` until nothing is due) claims
each entry, runs ``handler(event, connection)`` and marks the entry done **inside the
transaction that holds the effect**, so an effect commits exactly once even when a worker is
killed at any step. A failed handler is tried again later (the core's backoff), and after
``max_attempts`` set aside as poison (``poisoned()``, ``retry(key)``). The sequence is the core's
:class:`~royaltykit.InboxWorker` and the statements its :class:`~royaltykit.SqlInboxProtocol`.

:class:`RedisInbox` (redis-py's ``redis.Redis``) and :class:`AsyncRedisInbox`
(``redis.asyncio.Redis``) keep the inbox on a Redis stream instead (Redis 6.2 or later, with
persistence): the same receiver, the same worker and the same operator calls, each step one
atomic script of the core's :class:`~royaltykit.RedisInboxProtocol`. Redis shares no transaction
with the handler's effects, so there they are **at least once**: a worker killed after the effect
and before the mark runs the handler again once the lease runs out. Make the handler idempotent,
or use a SQL inbox for exactly once.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from os import PathLike
from typing import Any, Protocol, cast

from ._native import (
    DEFAULT_POISON_LISTED,
    InboxEntry,
    InboxPoisonEntry,
    InboxStep,
    InboxWorker,
    RedisInboxProtocol,
    SqlDedupProtocol,
    SqlInboxProtocol,
    SqlStatement,
    WebhookEvent,
    detect_sql_dialect,
    handler_error_text,
    parse_webhook_event,
)
from .receiver import EventRouter, _close, _maybe, _text, _Tokens

__all__ = ["AsyncPostgresDedupStore", "AsyncPostgresInbox", "AsyncRedisInbox", "PoisonedEntry", "PostgresDedupStore",
           "PostgresInbox", "RedisInbox", "SqliteDedupStore", "SqliteInbox", "StopSignal", "WorkerReport"]

_log = logging.getLogger("royaltykit")


class _Pool:
    """A few idle connections of one database, each used by one delivery (or one worker step) at a
    time: a transaction keeps its connection from ``begin`` to the commit or rollback, so work in
    other threads or coroutines never runs a statement inside it."""

    _IDLE = 8

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._idle: list[Any] = []
        self._lock = threading.Lock()

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

    def close(self) -> None:
        """Closes the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            self._drop(c)


class _SqlStore(_Pool):
    """What the two dedup stores share: the protocol, claim tokens, a clock, and a few idle
    connections (:class:`_Pool`)."""

    transactional = True

    def __init__(self, protocol: SqlDedupProtocol, clock: Callable[[], float]) -> None:
        super().__init__(clock)
        self.protocol = protocol
        self._tokens = _Tokens()
        self._marked: dict[int, list[str]] = {}  # keys marked in each open transaction (by connection)

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
            connection.execute(self.protocol.commit())
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
            connection.execute(self.protocol.rollback())
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
        # the core refuses an SQLite older than 3.35 (no RETURNING): InvalidArgumentError
        super().__init__(SqlDedupProtocol(detect_sql_dialect("sqlite", sqlite3.sqlite_version), param_style="qmark", table=table, ttl_seconds=ttl_seconds,
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
            await connection.execute(self.protocol.commit())
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
            await connection.execute(self.protocol.rollback())
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


# ---- the inbox ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoisonedEntry:
    """An inbox entry set aside as poison (``inbox.poisoned()``): its delivery ``key``, its
    ``delivery_id`` (``Service-Webhook-Id``), its ``event`` name, the handler ``attempts`` started,
    the ``last_error`` and when it was received (``received_at``, Unix seconds). Once the cause is
    fixed, ``inbox.retry(key)`` puts it back."""

    key: str
    delivery_id: str
    event: str
    attempts: int
    last_error: str | None
    received_at: int


@dataclass(frozen=True)
class WorkerReport:
    """What one ``run_worker`` or ``drain`` did (the core's counters): entries ``processed``
    (their effect committed), failed attempts ``retried`` (settled to be tried again later) and
    entries ``poisoned`` (set aside after their last attempt)."""

    processed: int
    retried: int
    poisoned: int


class StopSignal(Protocol):
    """What stops a worker: a ``threading.Event`` (``run_worker``), checked before each claim and
    waited on while idle."""

    def is_set(self) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


@dataclass(frozen=True)
class _Idle:
    """An ``Idle`` step: wait ``seconds`` or until stopped, whichever the driver is."""

    seconds: float


class _Run:
    """One worker run's open transaction (its connection), so that an interrupted run rolls it
    back."""

    __slots__ = ("tx",)

    def __init__(self) -> None:
        self.tx: Any = None


def _entry_error(e: BaseException) -> str:
    """A failed attempt's ``last_error``, the same text in every language (the core's
    :func:`~royaltykit.handler_error_text`): ``"ClassName: message"``, the class name alone for
    an empty message."""
    return handler_error_text(type(e).__name__, str(e))


def _log_handler_error(e: BaseException, entry: InboxEntry) -> None:
    _log.error("inbox handler failed for %s (attempt %d): the entry is tried again later, or set aside as poison",
               entry.delivery_id, entry.attempts, exc_info=e)


def _worker(max_attempts: int | None, poll_seconds: float | None, drain: bool, seed: int | None,
            transactional: bool = True) -> InboxWorker:
    return InboxWorker(max_attempts=max_attempts, poll_seconds=poll_seconds, drain=drain, seed=seed,
                       transactional=transactional)


def _check_handler(handler: Any, asynchronous: bool) -> None:
    if not callable(handler):
        raise TypeError(f"handler must be callable: handler(event, connection), not {type(handler).__name__}")
    if not asynchronous and (inspect.iscoroutinefunction(handler)
                             or (isinstance(handler, EventRouter) and handler.is_async)):
        raise TypeError("an async handler needs an async worker: AsyncPostgresInbox's or AsyncRedisInbox's "
                        "`await inbox.run_worker(...)`")


def _worker_steps(inbox: Any, worker: InboxWorker, run: _Run, handler: Callable[..., object],
                  on_error: Callable[[BaseException, InboxEntry], None],
                  stopped: Callable[[], bool], context: Any = None) -> Generator[Any, tuple[bool, Any], WorkerReport]:
    """The worker's loop, once for both drivers and every inbox: yields each action to perform (a
    callable whose result may be awaitable, or an :class:`_Idle`) and is sent back ``(True,
    result)`` or ``(False, exception)``. Every decision is the core's :class:`InboxWorker`; a
    worker made ``transactional=False`` (the Redis inbox) never asks for ``Begin``, ``Commit`` or
    ``Rollback``, and its handler gets ``context`` (the Redis client) where a transactional one
    gets the transaction's connection."""
    clock: Callable[[], float] = inbox._clock

    def store_failed(what: str, e: Any) -> None:
        _log.error("inbox %s failed on %s: the worker waits, then claims again", type(inbox).__name__, what,
                   exc_info=e)
        worker.store_failed()

    while True:
        match worker.next():
            case InboxStep.Claim():
                if stopped():
                    break
                now = clock()
                ok, row = yield lambda: inbox._claim(int(now))
                if ok:
                    worker.claimed(row, now)
                else:
                    store_failed("claim", row)
            case InboxStep.Idle(seconds=seconds):
                if stopped():
                    break
                yield _Idle(seconds)
                worker.waited()
            case InboxStep.Drained():
                break
            case InboxStep.Begin():
                ok, tx = yield inbox._begin
                if ok:
                    run.tx = tx
                    worker.began()
                else:
                    store_failed("begin", tx)
            case InboxStep.RunHandler(entry=entry):
                connection = run.tx if run.tx is not None else context
                # The body was verified when it was received; a body that no longer parses fails
                # the attempt like a handler's raise (and ends as poison).
                ok, e = yield lambda: handler(parse_webhook_event(entry.body), connection)
                if ok:
                    worker.handler_succeeded()
                else:
                    on_error(e, entry)
                    worker.handler_failed(_entry_error(e), clock())
            case InboxStep.MarkDone(key=key, attempts=attempts):
                connection = run.tx
                ok, changed = yield lambda: inbox._mark(connection, key, attempts, int(clock()))
                if ok:
                    worker.marked(bool(changed))
                else:
                    store_failed("mark_done", changed)
            case InboxStep.Commit():
                connection = run.tx
                ok, e = yield lambda: inbox._commit(connection)
                run.tx = None  # committed, or its connection closed (the database rolled it back)
                if ok:
                    worker.committed()
                else:
                    store_failed("commit", e)
            case InboxStep.Rollback():  # a failed rollback is fine: the database rolls back
                connection, run.tx = run.tx, None
                if connection is not None:
                    yield lambda: inbox._rollback(connection)
                worker.rolled_back()
            case InboxStep.Settle(key=key, attempts=attempts, poison=poison, retry_at=retry_at, error=error):
                ok, e = yield lambda: inbox._settle(key, attempts, poison, retry_at, error)
                if ok:
                    worker.settled()
                else:
                    store_failed("settle", e)
    return WorkerReport(worker.processed, worker.retried, worker.poisoned)


def _drive(inbox: Any, handler: Callable[..., object], stop: StopSignal | None, worker: InboxWorker,
           on_error: Callable[[BaseException, InboxEntry], None] | None, context: Any = None) -> WorkerReport:
    """Runs :func:`_worker_steps` in this thread (the synchronous inboxes' ``run_worker`` and
    ``drain``)."""
    run = _Run()
    steps = _worker_steps(inbox, worker, run, handler, on_error or _log_handler_error,
                          (lambda: stop.is_set()) if stop is not None else (lambda: False), context)
    outcome = cast(Any, None)  # None starts the generator
    try:
        while True:
            action = steps.send(outcome)
            if isinstance(action, _Idle):
                if stop is not None:
                    stop.wait(action.seconds)
                else:
                    time.sleep(action.seconds)
                outcome = (True, None)
                continue
            try:
                outcome = (True, _not_awaitable(action()))
            except Exception as e:
                outcome = (False, e)
    except StopIteration as done:
        return cast(WorkerReport, done.value)
    except BaseException:
        # interrupted (KeyboardInterrupt, SystemExit): never settled as a failure
        if run.tx is not None:
            inbox._discard(run.tx)
        raise


async def _adrive(inbox: Any, handler: Callable[..., object], stop: asyncio.Event | None, worker: InboxWorker,
                  on_error: Callable[[BaseException, InboxEntry], None] | None, context: Any = None) -> WorkerReport:
    """Runs :func:`_worker_steps` with ``await`` (the async inboxes' ``run_worker`` and ``drain``):
    a step's result and the handler's are awaited when awaitable."""
    run = _Run()
    steps = _worker_steps(inbox, worker, run, handler, on_error or _log_handler_error,
                          (lambda: stop.is_set()) if stop is not None else (lambda: False), context)
    outcome = cast(Any, None)  # None starts the generator
    try:
        while True:
            action = steps.send(outcome)
            if isinstance(action, _Idle):
                if stop is None:
                    await asyncio.sleep(action.seconds)
                else:
                    try:
                        await asyncio.wait_for(stop.wait(), action.seconds)
                    except asyncio.TimeoutError:
                        pass
                outcome = (True, None)
                continue
            try:
                outcome = (True, await _maybe(action()))
            except Exception as e:
                outcome = (False, e)
    except StopIteration as done:
        return cast(WorkerReport, done.value)
    except BaseException:
        # cancelled (CancelledError), interrupted: never settled as a failure
        if run.tx is not None:
            await inbox._discard(run.tx)
        raise


def _not_awaitable(value: Any) -> Any:
    """A step's result in the synchronous worker, which cannot await: an awaitable (an async
    handler) fails the attempt rather than leave its work undone behind a commit."""
    if inspect.isawaitable(value):
        _close(value)
        raise TypeError("the handler returned an awaitable in the synchronous worker, which cannot await it: use "
                        "AsyncPostgresInbox or AsyncRedisInbox and `await inbox.run_worker(...)`")
    return value


class _SqlInbox(_Pool):
    """What the two synchronous inboxes share: the core's statements, run on a few connections
    (:class:`_Pool`), and the synchronous worker loop."""

    def __init__(self, protocol: SqlInboxProtocol, clock: Callable[[], float]) -> None:
        super().__init__(clock)
        self.protocol = protocol

    def create_table(self) -> None:
        """Creates the inbox table and its index when missing (idempotent)."""
        def create(c: Any) -> None:
            for sql in self.protocol.schema():
                c.execute(sql)
        self._autocommit(create)

    def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
        """Persists a verified delivery (its own statement, autocommit): ``key`` its delivery key,
        ``delivery_id`` its ``Service-Webhook-Id``, ``event`` its event name, ``body`` its raw
        JSON body as text. True for a new entry, False for one already in the inbox (a
        redelivery). The receiver calls it (``WebhookReceiver(..., inbox=)``)."""
        statement = self.protocol.enqueue(key, delivery_id, event, body, self._now())
        rows: int = self._autocommit(lambda c: self._run(c, statement).rowcount)
        return SqlInboxProtocol.enqueue_reply(max(rows, 0))

    def state(self, key: str) -> str:
        """What the inbox holds of ``key``, without claiming it (:class:`~royaltykit.DeliveryStates`,
        for ``recover_deliveries``): ``"new"`` (never received), ``"in_progress"`` (received, not
        yet processed, or poison) or ``"done"``."""
        statement = self.protocol.lookup(key)

        def state(c: Any) -> str:
            row = self._run(c, statement).fetchone()
            return SqlInboxProtocol.lookup_reply(row[0] if row else None)
        return cast(str, self._autocommit(state))

    def poisoned(self, limit: int = DEFAULT_POISON_LISTED) -> list[PoisonedEntry]:
        """The entries set aside as poison, oldest first, at most ``limit`` (1 to
        ``SqlInboxProtocol.MAX_POISON_LISTED``; default the core's ``DEFAULT_POISON_LISTED``)."""
        statement = self.protocol.poisoned(limit)
        rows = self._autocommit(lambda c: self._run(c, statement).fetchall())
        return [PoisonedEntry(r[0], r[1], r[2], int(r[3]), r[4], int(r[5])) for r in rows]

    def retry(self, key: str) -> bool:
        """Puts the poison entry ``key`` back to pending, due now, with no attempts counted (once
        its cause is fixed): True when it was a poison entry, False otherwise."""
        statement = self.protocol.retry(key, self._now())
        rows: int = self._autocommit(lambda c: self._run(c, statement).rowcount)
        return SqlInboxProtocol.guarded_reply(max(rows, 0))

    def counts(self) -> dict[str, int]:
        """The number of entries in each state (``pending``, ``done``, ``poison``); a state with
        none is absent."""
        statement = self.protocol.counts()
        rows = self._autocommit(lambda c: self._run(c, statement).fetchall())
        return {str(state): int(n) for state, n in rows}

    def purge(self) -> int:
        """Deletes the done entries past their time-to-live; returns how many. Run it now and
        then; correctness never depends on it."""
        statement = self.protocol.purge(self._now())
        rows: int = self._autocommit(lambda c: self._run(c, statement).rowcount)
        return max(rows, 0)

    # ---- the worker's statements --------------------------------------------------------------

    def _claim(self, now: int) -> tuple[Any, ...] | None:
        statement = self.protocol.claim(now)
        rows = self._autocommit(lambda c: self._run(c, statement).fetchall())
        return tuple(rows[0]) if rows else None

    def _begin(self) -> Any:
        c = self._take()
        try:
            c.execute(self.protocol.begin())
        except Exception:
            self._drop(c)
            raise
        return c

    def _mark(self, connection: Any, key: str, attempts: int, now: int) -> bool:
        cursor = self._run(connection, self.protocol.mark_done(key, attempts, now))
        return SqlInboxProtocol.guarded_reply(max(cursor.rowcount, 0))

    def _commit(self, connection: Any) -> None:
        try:
            connection.execute(self.protocol.commit())
        except BaseException:
            self._drop(connection)
            raise
        self._give(connection)

    def _rollback(self, connection: Any) -> None:
        try:
            connection.execute(self.protocol.rollback())
        except BaseException:
            self._drop(connection)
            raise
        self._give(connection)

    def _discard(self, connection: Any) -> None:
        """An interrupted run's transaction: rolled back, or its connection closed."""
        try:
            connection.execute(self.protocol.rollback())
        except BaseException:
            self._drop(connection)
            return
        self._give(connection)

    def _settle(self, key: str, attempts: int, poison: bool, retry_at: int, error: str) -> None:
        statement = self.protocol.settle(key, attempts, poison, retry_at, error)
        self._autocommit(lambda c: self._run(c, statement))

    # ---- the worker ---------------------------------------------------------------------------

    def run_worker(self, handler: Callable[[WebhookEvent, Any], object], *, stop: StopSignal | None = None,
                   max_attempts: int | None = None, poll_seconds: float | None = None, seed: int | None = None,
                   on_error: Callable[[BaseException, InboxEntry], None] | None = None) -> WorkerReport:
        """Runs the inbox's worker in this thread until ``stop`` (a ``threading.Event``) is set
        (checked before each claim; an idle wait ends at once), and returns what it did. For each
        due entry: claim it (the attempt counts before the handler runs), open a transaction, call
        ``handler(event, connection)`` — ``event`` the delivery's :class:`~royaltykit.WebhookEvent`,
        ``connection`` the transaction's: write the effect with it, do not commit or roll back —
        then mark the entry done and commit, effect and mark together. A handler that raises is
        rolled back, given to ``on_error(exception, entry)`` (default: logged) and tried again
        after the core's backoff; after ``max_attempts`` (default 5) the entry is set aside as
        poison. Nothing due: it waits ``poll_seconds`` (default 1). A store outage is logged and
        waited out. ``KeyboardInterrupt`` (or any ``BaseException``) rolls back the open
        transaction and is raised. Keep the handler shorter than the lease (``lease_seconds``):
        past it, another worker may claim the entry, and this one's mark then rolls back."""
        _check_handler(handler, asynchronous=False)
        return self._work(handler, stop, _worker(max_attempts, poll_seconds, False, seed), on_error)

    def drain(self, handler: Callable[[WebhookEvent, Any], object], *, stop: StopSignal | None = None,
              max_attempts: int | None = None, seed: int | None = None,
              on_error: Callable[[BaseException, InboxEntry], None] | None = None) -> WorkerReport:
        """:meth:`run_worker` until the first claim that finds nothing due (an entry waiting for
        its retry or for a dead worker's lease is not due yet), then returns what it did."""
        _check_handler(handler, asynchronous=False)
        return self._work(handler, stop, _worker(max_attempts, None, True, seed), on_error)

    def _work(self, handler: Callable[..., object], stop: StopSignal | None, worker: InboxWorker,
              on_error: Callable[[BaseException, InboxEntry], None] | None) -> WorkerReport:
        return _drive(self, handler, stop, worker, on_error)


class SqliteInbox(_SqlInbox):
    """The inbox on an SQLite file (``sqlite3``, SQLite 3.35 or later): the handler gets the
    transaction's ``sqlite3.Connection`` inside ``BEGIN IMMEDIATE``. Creates the table on first
    use unless ``create_table=False``. Thread-safe; several processes may share the file.

    SQLite has one writer at a time: while a worker's handler runs, its transaction holds the
    write lock, and a receiver's insert waits for it (at most ``timeout`` seconds, then the
    delivery is answered 503 and sent again). Keep handlers short on SQLite, or use
    :class:`PostgresInbox`, where the receiver never waits for a worker."""

    def __init__(self, database: str | PathLike[str], *, table: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, timeout: float = 5.0, create_table: bool = True,
                 clock: Callable[[], float] = time.time) -> None:
        # the core refuses an SQLite older than 3.35 (no RETURNING): InvalidArgumentError
        super().__init__(SqlInboxProtocol(detect_sql_dialect("sqlite", sqlite3.sqlite_version), param_style="qmark", table=table, ttl_seconds=ttl_seconds,
                                          lease_seconds=lease_seconds), clock)
        self._database, self._timeout = database, timeout
        if create_table:
            self.create_table()

    def _open(self) -> sqlite3.Connection:
        # used by one step at a time, whichever thread: never two at once
        return sqlite3.connect(self._database, timeout=self._timeout, isolation_level=None, check_same_thread=False)

    def __repr__(self) -> str:
        return f"SqliteInbox(table={self.protocol.table!r})"


class PostgresInbox(_SqlInbox):
    """The inbox on PostgreSQL with psycopg 3 (``pip install royaltykit[postgres]``): the handler
    gets the transaction's ``psycopg.Connection``. ``conninfo`` is a libpq connection string or
    URL. Creates the table on first use unless ``create_table=False``. Thread-safe; any number of
    workers, in any processes, share one inbox (a claim skips the entries other workers hold)."""

    def __init__(self, conninfo: str, *, table: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, create_table: bool = True,
                 clock: Callable[[], float] = time.time) -> None:
        import psycopg  # noqa: F401 (the extra royaltykit[postgres]: missing, this fails here, not later)

        super().__init__(SqlInboxProtocol("postgres", param_style="format", table=table, ttl_seconds=ttl_seconds,
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
        return f"PostgresInbox(table={self.protocol.table!r})"


class AsyncPostgresInbox:
    """:class:`PostgresInbox` with psycopg 3's ``AsyncConnection``, for receivers that ``await``
    (:meth:`~royaltykit.WebhookReceiver.areceive`, ASGI) and an async worker (``await
    inbox.run_worker(handler)``, whose handler may be a coroutine function and gets the
    transaction's ``psycopg.AsyncConnection``). The table is created when missing before the
    first statement, unless ``create_table=False``. Cancelling the worker's task rolls back the
    open transaction and raises ``CancelledError``."""

    _IDLE = 8

    def __init__(self, conninfo: str, *, table: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, create_table: bool = True,
                 clock: Callable[[], float] = time.time) -> None:
        import psycopg  # noqa: F401 (the extra royaltykit[postgres])

        self.protocol = SqlInboxProtocol("postgres", param_style="format", table=table, ttl_seconds=ttl_seconds,
                                         lease_seconds=lease_seconds)
        self._conninfo, self._clock = conninfo, clock
        self._table_ready = not create_table
        self._table_lock: asyncio.Lock | None = None
        self._idle: list[Any] = []

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

    async def _autocommit(self, statement: SqlStatement | str, fetch: bool, ready: bool = True) -> Any:
        """The statement on a connection of its own outside any transaction (the table created
        first when missing, unless ``ready`` is False): its rows, or its count of changed rows. A
        connection that failed is closed."""
        if ready:
            await self._ready()
        c = await self._take()
        try:
            if isinstance(statement, str):
                cursor = await c.execute(statement)
            else:
                cursor = await c.execute(statement.sql, statement.args)
            result = await cursor.fetchall() if fetch else cursor.rowcount
        except BaseException:
            await self._drop(c)
            raise
        await self._give(c)
        return result

    async def create_table(self) -> None:
        """Creates the inbox table and its index when missing (idempotent)."""
        for sql in self.protocol.schema():
            await self._autocommit(sql, False, ready=False)

    async def _ready(self) -> None:
        """The table exists: created when missing by the first statement (one creation at a time:
        concurrent CREATE TABLE IF NOT EXISTS can collide in PostgreSQL; a failure is tried again
        by the next statement)."""
        if not self._table_ready:
            if self._table_lock is None:
                self._table_lock = asyncio.Lock()
            async with self._table_lock:
                if not self._table_ready:
                    await self.create_table()
                    self._table_ready = True

    async def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
        """See :meth:`PostgresInbox.enqueue`."""
        rows: int = await self._autocommit(self.protocol.enqueue(key, delivery_id, event, body, self._now()), False)
        return SqlInboxProtocol.enqueue_reply(max(rows, 0))

    async def state(self, key: str) -> str:
        """See :meth:`PostgresInbox.state` (:class:`~royaltykit.AsyncDeliveryStates`)."""
        rows = await self._autocommit(self.protocol.lookup(key), True)
        return SqlInboxProtocol.lookup_reply(rows[0][0] if rows else None)

    async def poisoned(self, limit: int = DEFAULT_POISON_LISTED) -> list[PoisonedEntry]:
        """See :meth:`PostgresInbox.poisoned`."""
        rows = await self._autocommit(self.protocol.poisoned(limit), True)
        return [PoisonedEntry(r[0], r[1], r[2], int(r[3]), r[4], int(r[5])) for r in rows]

    async def retry(self, key: str) -> bool:
        """See :meth:`PostgresInbox.retry`."""
        rows: int = await self._autocommit(self.protocol.retry(key, self._now()), False)
        return SqlInboxProtocol.guarded_reply(max(rows, 0))

    async def counts(self) -> dict[str, int]:
        """See :meth:`PostgresInbox.counts`."""
        rows = await self._autocommit(self.protocol.counts(), True)
        return {str(state): int(n) for state, n in rows}

    async def purge(self) -> int:
        """See :meth:`PostgresInbox.purge`."""
        rows: int = await self._autocommit(self.protocol.purge(self._now()), False)
        return max(rows, 0)

    async def close(self) -> None:
        """Closes the idle connections."""
        idle, self._idle = self._idle, []
        for c in idle:
            await self._drop(c)

    # ---- the worker's statements --------------------------------------------------------------

    async def _claim(self, now: int) -> tuple[Any, ...] | None:
        rows = await self._autocommit(self.protocol.claim(now), True)
        return tuple(rows[0]) if rows else None

    async def _begin(self) -> Any:
        await self._ready()
        c = await self._take()
        try:
            await c.execute(self.protocol.begin())
        except BaseException:
            await self._drop(c)
            raise
        return c

    async def _mark(self, connection: Any, key: str, attempts: int, now: int) -> bool:
        st = self.protocol.mark_done(key, attempts, now)
        cursor = await connection.execute(st.sql, st.args)
        return SqlInboxProtocol.guarded_reply(max(cursor.rowcount, 0))

    async def _commit(self, connection: Any) -> None:
        try:
            await connection.execute(self.protocol.commit())
        except BaseException:
            await self._drop(connection)
            raise
        await self._give(connection)

    async def _rollback(self, connection: Any) -> None:
        try:
            await connection.execute(self.protocol.rollback())
        except BaseException:
            await self._drop(connection)
            raise
        await self._give(connection)

    async def _discard(self, connection: Any) -> None:
        try:
            await connection.execute(self.protocol.rollback())
        except BaseException:
            await self._drop(connection)
            return
        await self._give(connection)

    async def _settle(self, key: str, attempts: int, poison: bool, retry_at: int, error: str) -> None:
        await self._autocommit(self.protocol.settle(key, attempts, poison, retry_at, error), False)

    # ---- the worker ---------------------------------------------------------------------------

    async def run_worker(self, handler: Callable[[WebhookEvent, Any], object | Awaitable[object]], *,
                         stop: asyncio.Event | None = None, max_attempts: int | None = None,
                         poll_seconds: float | None = None, seed: int | None = None,
                         on_error: Callable[[BaseException, InboxEntry], None] | None = None) -> WorkerReport:
        """:meth:`PostgresInbox.run_worker` with ``await``: the handler may be a coroutine
        function (awaited), ``stop`` is an ``asyncio.Event``, and cancelling the task rolls back
        the open transaction and raises ``CancelledError`` (never settled as a failure)."""
        _check_handler(handler, asynchronous=True)
        return await self._work(handler, stop, _worker(max_attempts, poll_seconds, False, seed), on_error)

    async def drain(self, handler: Callable[[WebhookEvent, Any], object | Awaitable[object]], *,
                    stop: asyncio.Event | None = None, max_attempts: int | None = None, seed: int | None = None,
                    on_error: Callable[[BaseException, InboxEntry], None] | None = None) -> WorkerReport:
        """:meth:`run_worker` until the first claim that finds nothing due."""
        _check_handler(handler, asynchronous=True)
        return await self._work(handler, stop, _worker(max_attempts, None, True, seed), on_error)

    async def _work(self, handler: Callable[..., object], stop: asyncio.Event | None, worker: InboxWorker,
                    on_error: Callable[[BaseException, InboxEntry], None] | None) -> WorkerReport:
        return await _adrive(self, handler, stop, worker, on_error)

    def __repr__(self) -> str:
        return f"AsyncPostgresInbox(table={self.protocol.table!r})"


# ---- the inbox on a Redis stream ------------------------------------------------------------------


def _poisoned_entry(e: InboxPoisonEntry) -> PoisonedEntry:
    return PoisonedEntry(e.key, e.delivery_id, e.event, e.attempts, e.last_error, e.received_at)


def _counts(reply: str | None) -> dict[str, int]:
    """A counts reply in the SQL inboxes' shape: a state with no entry is absent."""
    c = RedisInboxProtocol.counts_reply(reply)
    return {state: n for state, n in (("pending", c.pending), ("done", c.done), ("poison", c.poison)) if n}


class _RedisInboxBase:
    """What the two Redis inboxes share: the client, the core's commands and a clock."""

    def __init__(self, client: Any, *, prefix: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, clock: Callable[[], float] = time.time) -> None:
        if not callable(getattr(client, "execute_command", None)):
            raise TypeError(f"client must be a redis-py client (execute_command), not {type(client).__name__}")
        self.client = client
        self.protocol = RedisInboxProtocol(prefix=prefix, ttl_seconds=ttl_seconds, lease_seconds=lease_seconds)
        self._clock = clock

    def _now(self) -> int:
        return int(self._clock())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(prefix={self.protocol.prefix!r})"


class RedisInbox(_RedisInboxBase):
    """The inbox on a Redis stream with a redis-py client (``redis.Redis``; ``pip install
    royaltykit[redis]``), for receivers and workers that share a Redis rather than a SQL database:
    a receiver given ``inbox=RedisInbox(client)`` persists each verified delivery and answers 200
    at once; ``run_worker(handler)`` (or ``drain``) claims each entry, calls ``handler(event,
    client)`` — ``event`` the delivery's :class:`~royaltykit.WebhookEvent`, ``client`` the Redis
    client given here — and marks the entry done. Every key lives under ``prefix`` (default
    ``{royaltykit:inbox}:``, a Redis Cluster hash tag: give a prefix of your own a ``{…}`` tag
    too); done entries are kept ``ttl_seconds`` as the deliveries' dedup records; a claim holds an
    entry ``lease_seconds`` (a worker that died is replaced after it: keep the handler shorter).
    Each step is one atomic script of the core's :class:`~royaltykit.RedisInboxProtocol`; any
    number of workers, in any processes, share one inbox. Thread-safe when the client is (redis-py's
    is). Needs Redis 6.2 or later (``XAUTOCLAIM``), with persistence (AOF or RDB): a Redis restarted
    without it loses the inbox.

    **Effects are at least once.** Redis shares no transaction with the handler's own effects: a
    worker killed (or a handler outliving the lease) after the effect and before the mark runs the
    handler again; make the handler idempotent, or use a SQL inbox (:class:`PostgresInbox`) for
    exactly once. The client is yours: the inbox never closes it."""

    def _send(self, command: list[str]) -> str | None:
        return _text(self.client.execute_command(*command))

    def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
        """Persists a verified delivery (one atomic script): ``key`` its delivery key,
        ``delivery_id`` its ``Service-Webhook-Id``, ``event`` its event name, ``body`` its raw JSON
        body as text. True for a new entry, False for one already in the inbox (a redelivery).
        The receiver calls it (``WebhookReceiver(..., inbox=)``)."""
        command = self.protocol.enqueue_command(key, delivery_id, event, body, self._now())
        return RedisInboxProtocol.added_reply(self._send(command))

    def state(self, key: str) -> str:
        """What the inbox holds of ``key``, without claiming it (:class:`~royaltykit.DeliveryStates`,
        for ``recover_deliveries``): ``"new"`` (never received, or done and past its TTL),
        ``"in_progress"`` (received, not yet processed, or poison) or ``"done"``."""
        return RedisInboxProtocol.lookup_reply(self._send(self.protocol.lookup_command(key)))

    def poisoned(self, limit: int = DEFAULT_POISON_LISTED) -> list[PoisonedEntry]:
        """The entries set aside as poison, oldest first, at most ``limit`` (1 to
        ``RedisInboxProtocol.MAX_POISON_LISTED``; default the core's ``DEFAULT_POISON_LISTED``)."""
        reply = self._send(self.protocol.poisoned_command(limit))
        return [_poisoned_entry(e) for e in RedisInboxProtocol.poisoned_reply(reply)]

    def retry(self, key: str) -> bool:
        """Puts the poison entry ``key`` back to pending, due now, with no attempts counted (once
        its cause is fixed): True when it was a poison entry, False otherwise."""
        return RedisInboxProtocol.added_reply(self._send(self.protocol.retry_command(key)))

    def counts(self) -> dict[str, int]:
        """The number of entries in each state (``pending``, ``done``, ``poison``); a state with
        none is absent (as the SQL inboxes' counts)."""
        return _counts(self._send(self.protocol.counts_command(self._now())))

    def purge(self) -> int:
        """Forgets the done entries past their time-to-live (their hashes expire by themselves);
        returns how many. Run it now and then; correctness never depends on it."""
        return int(self._send(self.protocol.purge_command(self._now())) or 0)

    # ---- the worker's commands ----------------------------------------------------------------

    def _claim(self, now: int) -> InboxEntry | None:
        return RedisInboxProtocol.claim_reply(self._send(self.protocol.claim_command(now)))

    def _mark(self, connection: Any, key: str, attempts: int, now: int) -> bool:
        return RedisInboxProtocol.added_reply(self._send(self.protocol.mark_done_command(key, attempts, now)))

    def _settle(self, key: str, attempts: int, poison: bool, retry_at: int, error: str) -> bool:
        command = self.protocol.settle_command(key, attempts, poison, retry_at, error)
        return RedisInboxProtocol.added_reply(self._send(command))

    # ---- the worker ---------------------------------------------------------------------------

    def run_worker(self, handler: Callable[[WebhookEvent, Any], object], *, stop: StopSignal | None = None,
                   max_attempts: int | None = None, poll_seconds: float | None = None, seed: int | None = None,
                   on_error: Callable[[BaseException, InboxEntry], None] | None = None) -> WorkerReport:
        """Runs the inbox's worker in this thread until ``stop`` (a ``threading.Event``) is set
        (checked before each claim; an idle wait ends at once), and returns what it did. For each
        due entry: claim it (the attempt counts before the handler runs), call ``handler(event,
        client)``, then mark the entry done (guarded by the claim: a mark after another worker
        took the entry is refused). A handler that raises is given to ``on_error(exception,
        entry)`` (default: logged) and tried again after the core's backoff; after
        ``max_attempts`` (default 5) the entry is set aside as poison, its ``last_error``
        ``"ClassName: message"``. Nothing due: it waits ``poll_seconds`` (default 1). A Redis
        outage is logged and waited out. ``KeyboardInterrupt`` (or any ``BaseException``) is
        raised, never settled: the entry is claimed again once its lease runs out. The same
        worker as the SQL inboxes' (the core's :class:`~royaltykit.InboxWorker`), without a
        transaction: effects are at least once."""
        _check_handler(handler, asynchronous=False)
        worker = _worker(max_attempts, poll_seconds, False, seed, transactional=False)
        return _drive(self, handler, stop, worker, on_error, self.client)

    def drain(self, handler: Callable[[WebhookEvent, Any], object], *, stop: StopSignal | None = None,
              max_attempts: int | None = None, seed: int | None = None,
              on_error: Callable[[BaseException, InboxEntry], None] | None = None) -> WorkerReport:
        """:meth:`run_worker` until the first claim that finds nothing due (an entry waiting for
        its retry or for a dead worker's lease is not due yet), then returns what it did."""
        _check_handler(handler, asynchronous=False)
        worker = _worker(max_attempts, None, True, seed, transactional=False)
        return _drive(self, handler, stop, worker, on_error, self.client)

class AsyncRedisInbox(_RedisInboxBase):
    """:class:`RedisInbox` with redis-py's asyncio client (``redis.asyncio.Redis``), for
    receivers that ``await`` (:meth:`~royaltykit.WebhookReceiver.areceive`, :mod:`royaltykit.asgi`,
    the async Flask and Django views) and an async worker (``await inbox.run_worker(handler)``,
    whose handler may be a coroutine function and gets the asyncio client). Effects are at least
    once, as on :class:`RedisInbox`. Cancelling the worker's task raises ``CancelledError`` and
    never settles the entry (claimed again once its lease runs out)."""

    async def _asend(self, command: list[str]) -> str | None:
        return _text(await self.client.execute_command(*command))

    async def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
        """See :meth:`RedisInbox.enqueue`."""
        command = self.protocol.enqueue_command(key, delivery_id, event, body, self._now())
        return RedisInboxProtocol.added_reply(await self._asend(command))

    async def state(self, key: str) -> str:
        """See :meth:`RedisInbox.state` (:class:`~royaltykit.AsyncDeliveryStates`)."""
        return RedisInboxProtocol.lookup_reply(await self._asend(self.protocol.lookup_command(key)))

    async def poisoned(self, limit: int = DEFAULT_POISON_LISTED) -> list[PoisonedEntry]:
        """See :meth:`RedisInbox.poisoned`."""
        reply = await self._asend(self.protocol.poisoned_command(limit))
        return [_poisoned_entry(e) for e in RedisInboxProtocol.poisoned_reply(reply)]

    async def retry(self, key: str) -> bool:
        """See :meth:`RedisInbox.retry`."""
        return RedisInboxProtocol.added_reply(await self._asend(self.protocol.retry_command(key)))

    async def counts(self) -> dict[str, int]:
        """See :meth:`RedisInbox.counts`."""
        return _counts(await self._asend(self.protocol.counts_command(self._now())))

    async def purge(self) -> int:
        """See :meth:`RedisInbox.purge`."""
        return int(await self._asend(self.protocol.purge_command(self._now())) or 0)

    async def _claim(self, now: int) -> InboxEntry | None:
        return RedisInboxProtocol.claim_reply(await self._asend(self.protocol.claim_command(now)))

    async def _mark(self, connection: Any, key: str, attempts: int, now: int) -> bool:
        return RedisInboxProtocol.added_reply(await self._asend(self.protocol.mark_done_command(key, attempts, now)))

    async def _settle(self, key: str, attempts: int, poison: bool, retry_at: int,
                      error: str) -> bool:
        command = self.protocol.settle_command(key, attempts, poison, retry_at, error)
        return RedisInboxProtocol.added_reply(await self._asend(command))

    async def run_worker(self, handler: Callable[[WebhookEvent, Any], object | Awaitable[object]], *,
                         stop: asyncio.Event | None = None, max_attempts: int | None = None,
                         poll_seconds: float | None = None, seed: int | None = None,
                         on_error: Callable[[BaseException, InboxEntry], None] | None = None) -> WorkerReport:
        """:meth:`RedisInbox.run_worker` with ``await``: the handler may be a coroutine function
        (awaited; it gets the asyncio client), ``stop`` is an ``asyncio.Event``, and cancelling
        the task raises ``CancelledError`` (never settled as a failure)."""
        _check_handler(handler, asynchronous=True)
        worker = _worker(max_attempts, poll_seconds, False, seed, transactional=False)
        return await _adrive(self, handler, stop, worker, on_error, self.client)

    async def drain(self, handler: Callable[[WebhookEvent, Any], object | Awaitable[object]], *,
                    stop: asyncio.Event | None = None, max_attempts: int | None = None, seed: int | None = None,
                    on_error: Callable[[BaseException, InboxEntry], None] | None = None) -> WorkerReport:
        """:meth:`run_worker` until the first claim that finds nothing due."""
        _check_handler(handler, asynchronous=True)
        worker = _worker(max_attempts, None, True, seed, transactional=False)
        return await _adrive(self, handler, stop, worker, on_error, self.client)
