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
import contextlib
import inspect
import logging
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any, Protocol, cast

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
from ._ops import Command as _Command
from ._ops import Ops as _Ops
from ._ops import T as _T
from ._ops import aperform as _aperform
from ._ops import perform as _perform
from .receiver import EventRouter, _close, _maybe, _text, _Tokens

if TYPE_CHECKING:
    from ._native import _InboxOutcome

__all__ = ["AsyncPostgresDedupStore", "AsyncPostgresInbox", "AsyncRedisInbox", "PoisonedEntry", "PostgresDedupStore",
           "PostgresInbox", "RedisInbox", "SqliteDedupStore", "SqliteInbox", "StopSignal", "WorkerReport"]

_log = logging.getLogger("royaltykit")


# ---- the operations, written once for the blocking and the asyncio stores -------------------------
#
# Each store operation is one generator of the I/O it needs (royaltykit._ops): the SQL actions
# below, or a Redis `_Command`. A blocking store performs them in the calling thread (`_perform`),
# an asyncio store awaits them (`_aperform`). The statements, and what their results mean, are the
# core's; a driver only runs statements and keeps connections.


@dataclass(frozen=True)
class _Auto:
    """A statement on a connection of its own, outside any transaction: its rows (``want``
    ``"rows"``) or its count of changed rows (``"count"``). ``schema``: one of the table's
    creation statements (an asyncio store creates the table before any other statement)."""

    statement: SqlStatement | str
    want: str
    schema: bool = False


@dataclass(frozen=True)
class _Begin:
    """A transaction opened with ``statement`` (the core's) on a connection it keeps until it
    ends: that connection."""

    statement: str


@dataclass(frozen=True)
class _Exec:
    """A statement inside the transaction of ``connection``: its count of changed rows."""

    connection: Any
    statement: SqlStatement


@dataclass(frozen=True)
class _End:
    """The transaction of ``connection`` ended with ``statement`` (the core's COMMIT or ROLLBACK),
    then its connection kept for the next operations; a connection whose statement failed is
    closed instead (the database rolls back a transaction whose connection is gone), and the
    failure raised unless ``quiet`` (an interrupted run's rollback)."""

    connection: Any
    statement: str
    quiet: bool = False


class _Pool:
    """A few idle connections of one database, each used by one delivery (or one worker step) at a
    time: a transaction keeps its connection from ``begin`` to the commit or rollback, so work in
    other threads or coroutines never runs a statement inside it. Performs the operations' actions
    in the calling thread."""

    _IDLE = 8

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._idle: list[Any] = []
        self._lock = threading.Lock()

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

    @staticmethod
    def _drop(connection: Any) -> None:
        try:
            connection.close()
        except Exception:  # already broken
            pass

    @staticmethod
    def _execute(connection: Any, statement: SqlStatement | str) -> Any:
        if isinstance(statement, str):
            return connection.execute(statement)
        return connection.execute(statement.sql, statement.args)

    def _run(self, ops: _Ops[_T]) -> _T:
        return _perform(ops, self._do)

    def _do(self, action: Any) -> Any:
        if isinstance(action, _Exec):
            return max(self._execute(action.connection, action.statement).rowcount, 0)
        if isinstance(action, _End):
            try:
                action.connection.execute(action.statement)
            except BaseException:
                self._drop(action.connection)
                if action.quiet:
                    return None
                raise
            self._give(action.connection)
            return None
        c = self._take()
        try:
            if isinstance(action, _Begin):
                c.execute(action.statement)
                return c
            cursor = self._execute(c, action.statement)
            result = cursor.fetchall() if action.want == "rows" else max(cursor.rowcount, 0)
        except BaseException:
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


class _AsyncPool:
    """:class:`_Pool` with psycopg 3's ``AsyncConnection``: the actions awaited, and the table
    created when missing before the first statement (unless ``create_table`` was False)."""

    _IDLE = 8

    def __init__(self, conninfo: str, clock: Callable[[], float], create_table: bool) -> None:
        import psycopg  # noqa: F401 (the extra royaltykit[postgres]: missing, this fails here, not later)

        self._conninfo, self._clock = conninfo, clock
        self._idle: list[Any] = []
        # Whether the table is known to exist (one creation at a time: concurrent CREATE TABLE IF
        # NOT EXISTS can collide in PostgreSQL; a failure is tried again by the next statement).
        self._table_ready = not create_table
        self._table_lock: asyncio.Lock | None = None

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

    def _create(self) -> _Ops[None]:
        raise NotImplementedError

    async def create_table(self) -> None:
        """Creates the table and its index when missing (idempotent)."""
        await self._run(self._create())

    async def _ready(self) -> None:
        if not self._table_ready:
            if self._table_lock is None:
                self._table_lock = asyncio.Lock()
            async with self._table_lock:
                if not self._table_ready:
                    await self.create_table()
                    self._table_ready = True

    async def _run(self, ops: _Ops[_T]) -> _T:
        return await _aperform(ops, self._do)

    async def _do(self, action: Any) -> Any:
        if isinstance(action, _Exec):
            st = action.statement
            return max((await action.connection.execute(st.sql, st.args)).rowcount, 0)
        if isinstance(action, _End):
            try:
                await action.connection.execute(action.statement)
            except BaseException:
                await self._drop(action.connection)
                if action.quiet:
                    return None
                raise
            await self._give(action.connection)
            return None
        if not (isinstance(action, _Auto) and action.schema):
            await self._ready()
        c = await self._take()
        try:
            if isinstance(action, _Begin):
                await c.execute(action.statement)
                return c
            st = action.statement
            cursor = await (c.execute(st) if isinstance(st, str) else c.execute(st.sql, st.args))
            result = await cursor.fetchall() if action.want == "rows" else max(cursor.rowcount, 0)
        except BaseException:
            await self._drop(c)
            raise
        await self._give(c)
        return result

    async def close(self) -> None:
        """Closes the idle connections."""
        idle, self._idle = self._idle, []
        for c in idle:
            await self._drop(c)


class _DedupOps:
    """The transactional dedup store's operations, once for both drivers: the core's statements
    (:class:`~royaltykit.SqlDedupProtocol`), this process's claim tokens, and the keys marked in
    each open transaction (their tokens dropped once it commits)."""

    transactional = True
    _clock: Callable[[], float]

    def __init__(self, protocol: SqlDedupProtocol) -> None:
        self.protocol = protocol
        self._tokens = _Tokens()
        self._marked: dict[int, list[str]] = {}  # keys marked in each open transaction (by connection)
        self._marked_lock = threading.Lock()

    def _now(self) -> int:
        return int(self._clock())

    def _create(self) -> _Ops[None]:
        for sql in self.protocol.schema():
            yield _Auto(sql, "count", schema=True)

    def _claim(self, key: str) -> _Ops[str]:
        token = SqlDedupProtocol.new_token()
        rows = yield _Auto(self.protocol.claim(key, token, self._now()), "rows")
        if SqlDedupProtocol.claim_reply(len(rows)) == "new":
            self._tokens.hold(key, token)
            return "new"
        rows = yield _Auto(self.protocol.state(key), "rows")
        return SqlDedupProtocol.state_reply(rows[0][0] if rows else None)

    def _state(self, key: str) -> _Ops[str]:
        rows = yield _Auto(self.protocol.lookup(key, self._now()), "rows")
        return SqlDedupProtocol.lookup_reply(rows[0][0] if rows else None)

    def _begin(self) -> _Ops[Any]:
        return (yield _Begin(self.protocol.begin()))

    def _mark_done(self, connection: Any, key: str) -> _Ops[bool]:
        changed = yield _Exec(connection, self.protocol.mark_done(key, self._tokens.get(key), self._now()))
        with self._marked_lock:
            self._marked.setdefault(id(connection), []).append(key)
        return SqlDedupProtocol.guarded_reply(changed)

    def _marked_in(self, connection: Any) -> list[str]:
        with self._marked_lock:
            return self._marked.pop(id(connection), [])

    def _commit(self, connection: Any) -> _Ops[None]:
        marked = self._marked_in(connection)
        yield _End(connection, self.protocol.commit())
        for key in marked:  # done: the claim tokens are no longer needed
            self._tokens.drop(key)

    def _rollback(self, connection: Any) -> _Ops[None]:
        self._marked_in(connection)  # the releases that follow still need their tokens
        yield _End(connection, self.protocol.rollback())

    def _release(self, key: str) -> _Ops[bool]:
        try:
            changed = yield _Auto(self.protocol.release(key, self._tokens.get(key)), "count")
            return SqlDedupProtocol.guarded_reply(changed)
        finally:
            self._tokens.drop(key)

    def _purge(self) -> _Ops[int]:
        return cast(int, (yield _Auto(self.protocol.purge(self._now()), "count")))


class _SqlStore(_DedupOps, _Pool):
    """What the two blocking dedup stores share: :class:`_DedupOps` on a :class:`_Pool`."""

    def __init__(self, protocol: SqlDedupProtocol, clock: Callable[[], float]) -> None:
        _Pool.__init__(self, clock)
        _DedupOps.__init__(self, protocol)

    def create_table(self) -> None:
        """Creates the table and its index when missing (idempotent)."""
        self._run(self._create())

    def claim(self, key: str) -> str:
        """``"new"``, ``"in_progress"`` or ``"done"`` (its own statement, outside any transaction)."""
        return self._run(self._claim(key))

    def state(self, key: str) -> str:
        """What the table holds of ``key``, without claiming it (its own statement, outside any
        transaction; :class:`~royaltykit.DeliveryStates`): ``"new"``, ``"in_progress"`` or
        ``"done"``."""
        return self._run(self._state(key))

    def begin(self) -> Any:
        """Opens the handler's transaction on a connection it keeps until the commit or rollback;
        returns that connection."""
        return self._run(self._begin())

    def mark_done(self, connection: Any, key: str) -> bool:
        """Marks ``key`` done inside the transaction: False when the claim was lost (its lease ran
        out and another worker took the key)."""
        return self._run(self._mark_done(connection, key))

    def commit_transaction(self, connection: Any) -> None:
        """Commits the mark and the effect together. A connection whose commit failed is closed
        (the database rolls back what did not commit)."""
        self._run(self._commit(connection))

    def rollback(self, connection: Any) -> None:
        """Rolls the transaction back (a broken connection is closed: the database rolls back a
        transaction whose connection is gone)."""
        self._run(self._rollback(connection))

    def release(self, key: str) -> bool:
        """Gives up this worker's claim (never another worker's, never a committed row)."""
        return self._run(self._release(key))

    def purge(self) -> int:
        """Deletes the rows expired now (claims whose lease ran out, deliveries past the TTL);
        returns how many. Run it now and then; correctness never depends on it."""
        return self._run(self._purge())


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


class AsyncPostgresDedupStore(_DedupOps, _AsyncPool):
    """:class:`PostgresDedupStore` with psycopg 3's ``AsyncConnection``, for
    :meth:`~royaltykit.WebhookReceiver.areceive` (ASGI, async Django): the handler gets the
    transaction's ``psycopg.AsyncConnection``. The table and its index are created when missing
    (idempotent DDL) before the first statement, unless ``create_table=False`` (then call ``await
    store.create_table()``). A transaction keeps its connection from ``begin`` to the commit or
    rollback; a few idle connections are kept for the next deliveries. The same operations as
    :class:`PostgresDedupStore`, awaited."""

    def __init__(self, conninfo: str, *, table: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, clock: Callable[[], float] = time.time,
                 create_table: bool = True) -> None:
        _AsyncPool.__init__(self, conninfo, clock, create_table)
        _DedupOps.__init__(self, SqlDedupProtocol("postgres", param_style="format", table=table,
                                                  ttl_seconds=ttl_seconds, lease_seconds=lease_seconds))

    async def claim(self, key: str) -> str:
        """``"new"``, ``"in_progress"`` or ``"done"`` (outside any transaction). The first
        statement creates the table when missing; a failure is tried again on the next one."""
        return await self._run(self._claim(key))

    async def state(self, key: str) -> str:
        """What the table holds of ``key``, without claiming it (outside any transaction;
        :class:`~royaltykit.AsyncDeliveryStates`): ``"new"``, ``"in_progress"`` or ``"done"``."""
        return await self._run(self._state(key))

    async def begin(self) -> Any:
        """Opens the handler's transaction on a connection of its own; returns it."""
        return await self._run(self._begin())

    async def mark_done(self, connection: Any, key: str) -> bool:
        """Marks ``key`` done inside the transaction: False when the claim was lost."""
        return await self._run(self._mark_done(connection, key))

    async def commit_transaction(self, connection: Any) -> None:
        """Commits the mark and the effect together (a connection whose commit failed is closed)."""
        await self._run(self._commit(connection))

    async def rollback(self, connection: Any) -> None:
        """Rolls the transaction back (a broken connection is closed)."""
        await self._run(self._rollback(connection))

    async def release(self, key: str) -> bool:
        """Gives up this worker's claim (never another worker's, never a committed row)."""
        return await self._run(self._release(key))

    async def purge(self) -> int:
        """Deletes the rows expired now; returns how many."""
        return await self._run(self._purge())

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
    result)`` or ``(False, exception)``, which the core is told (``report``). Every decision is
    the core's :class:`InboxWorker`; a worker made ``transactional=False`` (the Redis inbox)
    never asks for ``Begin``, ``Commit`` or ``Rollback``, and its handler gets ``context`` (the
    Redis client) where a transactional one gets the transaction's connection."""
    clock: Callable[[], float] = inbox._clock
    while True:
        step = worker.next()
        if isinstance(step, InboxStep.Drained) or isinstance(step, (InboxStep.Claim, InboxStep.Idle)) and stopped():
            return WorkerReport(worker.processed, worker.retried, worker.poisoned)
        now = clock()  # a claim's one reading: its lease and the worker's backoff start at the same instant
        ok, value = yield _worker_action(inbox, step, run.tx, handler, context, now)
        if isinstance(step, (InboxStep.Commit, InboxStep.Rollback)) or ok and isinstance(step, InboxStep.Begin):
            run.tx = value if isinstance(step, InboxStep.Begin) else None  # committed, or its connection closed
        worker.report(_worker_outcome(inbox, step, ok, value, on_error),
                      now if isinstance(step, InboxStep.Claim) else clock())


def _worker_action(inbox: Any, step: Any, tx: Any, handler: Callable[..., object], context: Any,
                   now: float) -> Any:
    """What performs the worker's `step` at `now`: the inbox's statement on its connection (`tx`:
    the open transaction's), the handler's call, or an :class:`_Idle`."""
    match step:
        case InboxStep.Claim():
            return lambda: inbox._run(inbox._claim(int(now)))
        case InboxStep.Idle(seconds=seconds):
            return _Idle(seconds)
        case InboxStep.Begin():
            return lambda: inbox._run(inbox._begin())
        case InboxStep.RunHandler(entry=entry):
            # The body was verified when it was received; a body that no longer parses fails
            # the attempt like a handler's raise (and ends as poison).
            connection = tx if tx is not None else context
            return lambda: handler(parse_webhook_event(entry.body), connection)
        case InboxStep.MarkDone(key=key, attempts=attempts):
            return lambda: inbox._run(inbox._mark(tx, key, attempts, int(now)))
        case InboxStep.Commit():
            return lambda: inbox._run(inbox._commit(tx))
        case InboxStep.Rollback():  # none open: nothing to roll back
            return (lambda: inbox._run(inbox._rollback(tx))) if tx is not None else (lambda: None)
        case InboxStep.Settle(key=key, attempts=attempts, poison=poison, retry_at=retry_at, error=error):
            return lambda: inbox._run(inbox._settle(key, attempts, poison, retry_at, error))
    raise AssertionError(f"an inbox step this worker does not know: {step!r}")


# The worker's steps whose failure is the store's, by the name of their class and as logged.
_WORKER_STORE_STEPS = {"Claim": "claim", "Begin": "begin", "MarkDone": "mark_done", "Commit": "commit",
                       "Settle": "settle"}


def _worker_outcome(inbox: Any, step: Any, ok: bool, value: Any,
                    on_error: Callable[[BaseException, InboxEntry], None]) -> _InboxOutcome:
    """The outcome of the performed `step` as the worker takes it (the core decides what a
    failure means). A handler's failure goes to `on_error`; a store's is logged, never silently
    (the worker waits, then claims again); a failed rollback is fine (the database rolls back)."""
    match ok, step:
        case True, InboxStep.Claim():
            return ("claimed", value)
        case True, InboxStep.MarkDone():
            return ("marked", bool(value))
        case True, _:
            return "done"
        case False, InboxStep.RunHandler(entry=entry):
            try:
                on_error(value, entry)
            except Exception:  # noqa: BLE001 (the attempt still fails: rolled back, settled)
                _log.error("on_error raised for inbox entry %s", entry.key, exc_info=True)
    what = _WORKER_STORE_STEPS.get(type(step).__name__)
    if what is not None:
        _log.error("inbox %s failed on %s: the worker waits, then claims again", type(inbox).__name__, what,
                   exc_info=value)
    return ("failed", _entry_error(value))


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
            inbox._run(inbox._discard(run.tx))
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
                    with contextlib.suppress(asyncio.TimeoutError):  # the idle wait is over, unstopped
                        await asyncio.wait_for(stop.wait(), action.seconds)
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
            await inbox._run(inbox._discard(run.tx))
        raise


def _not_awaitable(value: Any) -> Any:
    """A step's result in the synchronous worker, which cannot await: an awaitable (an async
    handler) fails the attempt rather than leave its work undone behind a commit."""
    if inspect.isawaitable(value):
        _close(value)
        raise TypeError("the handler returned an awaitable in the synchronous worker, which cannot await it: use "
                        "AsyncPostgresInbox or AsyncRedisInbox and `await inbox.run_worker(...)`")
    return value


class _InboxOps:
    """The SQL inbox's operations, once for both drivers: the core's statements
    (:class:`~royaltykit.SqlInboxProtocol`). The worker's (``_claim`` to ``_settle``) are run by
    :func:`_worker_steps` through the store's ``_run``."""

    _clock: Callable[[], float]

    def __init__(self, protocol: SqlInboxProtocol) -> None:
        self.protocol = protocol

    def _now(self) -> int:
        return int(self._clock())

    def _create(self) -> _Ops[None]:
        for sql in self.protocol.schema():
            yield _Auto(sql, "count", schema=True)

    def _enqueue(self, key: str, delivery_id: str, event: str, body: str) -> _Ops[bool]:
        rows = yield _Auto(self.protocol.enqueue(key, delivery_id, event, body, self._now()), "count")
        return SqlInboxProtocol.enqueue_reply(rows)

    def _state(self, key: str) -> _Ops[str]:
        rows = yield _Auto(self.protocol.lookup(key), "rows")
        return SqlInboxProtocol.lookup_reply(rows[0][0] if rows else None)

    def _poisoned(self, limit: int) -> _Ops[list[PoisonedEntry]]:
        rows = yield _Auto(self.protocol.poisoned(limit), "rows")
        return [PoisonedEntry(r[0], r[1], r[2], int(r[3]), r[4], int(r[5])) for r in rows]

    def _retry(self, key: str) -> _Ops[bool]:
        rows = yield _Auto(self.protocol.retry(key, self._now()), "count")
        return SqlInboxProtocol.guarded_reply(rows)

    def _counts(self) -> _Ops[dict[str, int]]:
        rows = yield _Auto(self.protocol.counts(), "rows")
        return {str(state): int(n) for state, n in rows}

    def _purge(self) -> _Ops[int]:
        return cast(int, (yield _Auto(self.protocol.purge(self._now()), "count")))

    # ---- the worker's statements --------------------------------------------------------------

    def _claim(self, now: int) -> _Ops[tuple[Any, ...] | None]:
        rows = yield _Auto(self.protocol.claim(now), "rows")
        return tuple(rows[0]) if rows else None

    def _begin(self) -> _Ops[Any]:
        return (yield _Begin(self.protocol.begin()))

    def _mark(self, connection: Any, key: str, attempts: int, now: int) -> _Ops[bool]:
        rows = yield _Exec(connection, self.protocol.mark_done(key, attempts, now))
        return SqlInboxProtocol.guarded_reply(rows)

    def _commit(self, connection: Any) -> _Ops[None]:
        yield _End(connection, self.protocol.commit())

    def _rollback(self, connection: Any) -> _Ops[None]:
        yield _End(connection, self.protocol.rollback())

    def _discard(self, connection: Any) -> _Ops[None]:
        """An interrupted run's transaction: rolled back, or its connection closed."""
        yield _End(connection, self.protocol.rollback(), quiet=True)

    def _settle(self, key: str, attempts: int, poison: bool, retry_at: int, error: str) -> _Ops[None]:
        yield _Auto(self.protocol.settle(key, attempts, poison, retry_at, error), "count")


class _SqlInbox(_InboxOps, _Pool):
    """What the two synchronous inboxes share: :class:`_InboxOps` on a :class:`_Pool`, and the
    synchronous worker loop."""

    def __init__(self, protocol: SqlInboxProtocol, clock: Callable[[], float]) -> None:
        _Pool.__init__(self, clock)
        _InboxOps.__init__(self, protocol)

    def create_table(self) -> None:
        """Creates the inbox table and its index when missing (idempotent)."""
        self._run(self._create())

    def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
        """Persists a verified delivery (its own statement, autocommit): ``key`` its delivery key,
        ``delivery_id`` its ``Service-Webhook-Id``, ``event`` its event name, ``body`` its raw
        JSON body as text. True for a new entry, False for one already in the inbox (a
        redelivery). The receiver calls it (``WebhookReceiver(..., inbox=)``)."""
        return self._run(self._enqueue(key, delivery_id, event, body))

    def state(self, key: str) -> str:
        """What the inbox holds of ``key``, without claiming it (:class:`~royaltykit.DeliveryStates`,
        for ``recover_deliveries``): ``"new"`` (never received), ``"in_progress"`` (received, not
        yet processed, or poison) or ``"done"``."""
        return self._run(self._state(key))

    def poisoned(self, limit: int = DEFAULT_POISON_LISTED) -> list[PoisonedEntry]:
        """The entries set aside as poison, oldest first, at most ``limit`` (1 to
        ``SqlInboxProtocol.MAX_POISON_LISTED``; default the core's ``DEFAULT_POISON_LISTED``)."""
        return self._run(self._poisoned(limit))

    def retry(self, key: str) -> bool:
        """Puts the poison entry ``key`` back to pending, due now, with no attempts counted (once
        its cause is fixed): True when it was a poison entry, False otherwise."""
        return self._run(self._retry(key))

    def counts(self) -> dict[str, int]:
        """The number of entries in each state (``pending``, ``done``, ``poison``); a state with
        none is absent."""
        return self._run(self._counts())

    def purge(self) -> int:
        """Deletes the done entries past their time-to-live; returns how many. Run it now and
        then; correctness never depends on it."""
        return self._run(self._purge())

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


class AsyncPostgresInbox(_InboxOps, _AsyncPool):
    """:class:`PostgresInbox` with psycopg 3's ``AsyncConnection``, for receivers that ``await``
    (:meth:`~royaltykit.WebhookReceiver.areceive`, ASGI) and an async worker (``await
    inbox.run_worker(handler)``, whose handler may be a coroutine function and gets the
    transaction's ``psycopg.AsyncConnection``). The table is created when missing before the
    first statement, unless ``create_table=False``. Cancelling the worker's task rolls back the
    open transaction and raises ``CancelledError``. The same operations as
    :class:`PostgresInbox`, awaited."""

    def __init__(self, conninfo: str, *, table: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None, create_table: bool = True,
                 clock: Callable[[], float] = time.time) -> None:
        _AsyncPool.__init__(self, conninfo, clock, create_table)
        _InboxOps.__init__(self, SqlInboxProtocol("postgres", param_style="format", table=table,
                                                  ttl_seconds=ttl_seconds, lease_seconds=lease_seconds))

    async def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
        """See :meth:`PostgresInbox.enqueue`."""
        return await self._run(self._enqueue(key, delivery_id, event, body))

    async def state(self, key: str) -> str:
        """See :meth:`PostgresInbox.state` (:class:`~royaltykit.AsyncDeliveryStates`)."""
        return await self._run(self._state(key))

    async def poisoned(self, limit: int = DEFAULT_POISON_LISTED) -> list[PoisonedEntry]:
        """See :meth:`PostgresInbox.poisoned`."""
        return await self._run(self._poisoned(limit))

    async def retry(self, key: str) -> bool:
        """See :meth:`PostgresInbox.retry`."""
        return await self._run(self._retry(key))

    async def counts(self) -> dict[str, int]:
        """See :meth:`PostgresInbox.counts`."""
        return await self._run(self._counts())

    async def purge(self) -> int:
        """See :meth:`PostgresInbox.purge`."""
        return await self._run(self._purge())
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
    """What the two Redis inboxes share: the client, the core's commands (each operation once, as
    for the SQL inboxes: :class:`_InboxOps`) and a clock."""

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

    def _enqueue(self, key: str, delivery_id: str, event: str, body: str) -> _Ops[bool]:
        reply = yield _Command(self.protocol.enqueue_command(key, delivery_id, event, body, self._now()))
        return RedisInboxProtocol.added_reply(reply)

    def _state(self, key: str) -> _Ops[str]:
        return RedisInboxProtocol.lookup_reply((yield _Command(self.protocol.lookup_command(key))))

    def _poisoned(self, limit: int) -> _Ops[list[PoisonedEntry]]:
        reply = yield _Command(self.protocol.poisoned_command(limit))
        return [_poisoned_entry(e) for e in RedisInboxProtocol.poisoned_reply(reply)]

    def _retry(self, key: str) -> _Ops[bool]:
        return RedisInboxProtocol.added_reply((yield _Command(self.protocol.retry_command(key))))

    def _counts(self) -> _Ops[dict[str, int]]:
        return _counts((yield _Command(self.protocol.counts_command(self._now()))))

    def _purge(self) -> _Ops[int]:
        return int((yield _Command(self.protocol.purge_command(self._now()))) or 0)

    # ---- the worker's commands ----------------------------------------------------------------

    def _claim(self, now: int) -> _Ops[InboxEntry | None]:
        return RedisInboxProtocol.claim_reply((yield _Command(self.protocol.claim_command(now))))

    def _mark(self, connection: Any, key: str, attempts: int, now: int) -> _Ops[bool]:
        return RedisInboxProtocol.added_reply((yield _Command(self.protocol.mark_done_command(key, attempts, now))))

    def _settle(self, key: str, attempts: int, poison: bool, retry_at: int, error: str) -> _Ops[bool]:
        command = self.protocol.settle_command(key, attempts, poison, retry_at, error)
        return RedisInboxProtocol.added_reply((yield _Command(command)))


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

    def _run(self, ops: _Ops[_T]) -> _T:
        return _perform(ops, lambda action: _text(self.client.execute_command(*action.command)))

    def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
        """Persists a verified delivery (one atomic script): ``key`` its delivery key,
        ``delivery_id`` its ``Service-Webhook-Id``, ``event`` its event name, ``body`` its raw JSON
        body as text. True for a new entry, False for one already in the inbox (a redelivery).
        The receiver calls it (``WebhookReceiver(..., inbox=)``)."""
        return self._run(self._enqueue(key, delivery_id, event, body))

    def state(self, key: str) -> str:
        """What the inbox holds of ``key``, without claiming it (:class:`~royaltykit.DeliveryStates`,
        for ``recover_deliveries``): ``"new"`` (never received, or done and past its TTL),
        ``"in_progress"`` (received, not yet processed, or poison) or ``"done"``."""
        return self._run(self._state(key))

    def poisoned(self, limit: int = DEFAULT_POISON_LISTED) -> list[PoisonedEntry]:
        """The entries set aside as poison, oldest first, at most ``limit`` (1 to
        ``RedisInboxProtocol.MAX_POISON_LISTED``; default the core's ``DEFAULT_POISON_LISTED``)."""
        return self._run(self._poisoned(limit))

    def retry(self, key: str) -> bool:
        """Puts the poison entry ``key`` back to pending, due now, with no attempts counted (once
        its cause is fixed): True when it was a poison entry, False otherwise."""
        return self._run(self._retry(key))

    def counts(self) -> dict[str, int]:
        """The number of entries in each state (``pending``, ``done``, ``poison``); a state with
        none is absent (as the SQL inboxes' counts)."""
        return self._run(self._counts())

    def purge(self) -> int:
        """Forgets the done entries past their time-to-live (their hashes expire by themselves);
        returns how many. Run it now and then; correctness never depends on it."""
        return self._run(self._purge())
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
    never settles the entry (claimed again once its lease runs out). The same operations as
    :class:`RedisInbox`, awaited."""

    async def _run(self, ops: _Ops[_T]) -> _T:
        return await _aperform(ops, self._send)

    async def _send(self, action: _Command) -> str | None:
        return _text(await self.client.execute_command(*action.command))

    async def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> bool:
        """See :meth:`RedisInbox.enqueue`."""
        return await self._run(self._enqueue(key, delivery_id, event, body))

    async def state(self, key: str) -> str:
        """See :meth:`RedisInbox.state` (:class:`~royaltykit.AsyncDeliveryStates`)."""
        return await self._run(self._state(key))

    async def poisoned(self, limit: int = DEFAULT_POISON_LISTED) -> list[PoisonedEntry]:
        """See :meth:`RedisInbox.poisoned`."""
        return await self._run(self._poisoned(limit))

    async def retry(self, key: str) -> bool:
        """See :meth:`RedisInbox.retry`."""
        return await self._run(self._retry(key))

    async def counts(self) -> dict[str, int]:
        """See :meth:`RedisInbox.counts`."""
        return await self._run(self._counts())

    async def purge(self) -> int:
        """See :meth:`RedisInbox.purge`."""
        return await self._run(self._purge())
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
