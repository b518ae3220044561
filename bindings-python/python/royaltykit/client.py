"""Clients of both APIs over the HTTP library you already use: httpx (``httpx.Client``,
``httpx.AsyncClient``) or requests (``requests.Session``).

Every rule is the core's: each request is a ``Call`` machine (retries, ``Retry-After``, token
refresh, idempotency key, rate budget) and an export is an ``ExportJob`` (create, poll, download;
a create that may have been applied is looked up, never sent twice), a list read page after page
(``paginate``) is a ``Pages`` walk with one ``Call`` per page, a subscription's delivery recovery
(``recover_deliveries``) is a ``Recovery`` run with one ``Call`` per page and per replay, a
webhook subscription's reveal-once secret (``create_subscription``, ``rotate_secret``) is read
from the raw 2xx body by ``revealed_secret``, and the calls of one client share its ``Session``
(the token, one token exchange at a time, the rate budget) — with ``fleet=`` (``RedisFleet``,
``AsyncRedisFleet``), the processes of one API client share them through Redis: each request is
reserved in the fleet's budget (``CallStep.Reserve``) and a token refresh is a ``FleetToken`` (one
exchange for the fleet). This module only performs the steps:
it sends (never following a redirect, whatever the HTTP client is set to do), sleeps, exchanges
tokens, wakes the calls waiting for one, and tells the machine which transport failure happened,
mapping each HTTP library's exceptions:

- ``connect_failed`` only when nothing can have been sent (a refused connection, a connect or
  pool timeout);
- ``timeout`` when the response did not come in time (the request may have been applied);
- ``connection_lost`` for every other broken connection (reset, closed early, truncated body).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any, AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence, TypeVar, cast

from ._native import (
    Call,
    CallStep,
    ExportJob,
    Fleet,
    FleetToken,
    FleetTokenStep,
    Pages,
    PagesStep,
    RateBudget,
    Recovery,
    RecoveryReport,
    RecoveryStep,
    RequestDescriptor,
    RevealedSecret,
    Session,
    build_enterprise_token_request,
    build_token_request,
    check_base_url,
    client_timeouts,
    parse_enterprise_token_response,
    parse_token_response,
    revealed_secret,
)
from .errors import ExportInterrupted, RoyaltyKitError
from .receiver import _text
from .telemetry import ClientTelemetry, OperationScope

if TYPE_CHECKING:
    from .receiver import AsyncDeliveryStates, DeliveryStates

_T = TypeVar("_T")

__all__ = ["ReportsClient", "AsyncReportsClient", "EnterpriseClient", "AsyncEnterpriseClient", "ExportResult", "Response",
           "RedisFleet", "AsyncRedisFleet"]

# progress(received bytes, total bytes or None), called as an artifact arrives
Progress = Callable[[int, "int | None"], None]
# on_event(event): each of the machines' events (the core's MachineEvent, as a dict; a download's
# progress events carry received_bytes and total_bytes)
OnEvent = Callable[[dict[str, Any]], None]
# on_checkpoint(text): the export job saved (ExportJob.save(), portable JSON without the token),
# given before each of the job's requests goes out and before each of its pauses, when it changed
# since the last one given or the one resumed from (ExportJob.checkpoint()): persist it to resume the job.
OnCheckpoint = Callable[[str], object]

_log = logging.getLogger("royaltykit")
# ROYALTYKIT_LOG=debug|info: the clients' events on stderr, for a job run by hand.
if os.environ.get("ROYALTYKIT_LOG", "").lower() in ("debug", "info") and not _log.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    _log.addHandler(_handler)
    _log.setLevel(logging.DEBUG if os.environ["ROYALTYKIT_LOG"].lower() == "debug" else logging.INFO)

# Each event says its level (the core's: debug, info, warning) and its one log line.
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


@dataclass(frozen=True)
class ExportResult:
    """A finished export: its id, where the artifact was written (``path``, when ``to`` was a
    path), its size, and its bytes when no ``to`` was given."""

    export_id: str
    size: int
    path: str | None = None
    data: bytes | None = None


@dataclass(frozen=True)
class Response:
    """A 2xx response, whole (``request_raw``): its ``status``, its ``headers`` as received (in
    order, repeated names kept), the ``body`` bytes, and ``data``: what ``request`` returns (the
    parsed JSON, the bytes of an artifact, or None)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    data: Any

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or None."""
        lower = name.lower()
        return next((v for k, v in self.headers if k.lower() == lower), None)


# ---- the transports: one send per HTTP library, and its exceptions as transport failures -----------

def _own_path(e: OSError, path: str) -> OSError:
    """``e`` naming the user's ``path`` instead of the temporary file beside it."""
    return type(e)(e.errno, e.strerror, path) if e.errno is not None else e


def _create_beside(path: str) -> tuple[int, str]:
    """A new temporary file in ``path``'s folder, created with mode 0644 less the umask (the mode
    of the artifact once renamed, the same in every language): its descriptor and name."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(100):
        tmp = os.path.join(folder, ".royaltykit-" + os.urandom(8).hex())
        try:
            return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644), tmp
        except FileExistsError:
            continue
        except OSError as e:
            raise _own_path(e, path) from e
    raise FileExistsError(f"no free temporary name beside {path}")


class _Sink:
    """Where a streamed artifact goes as it arrives: a temporary file next to ``to`` (renamed over
    it when the artifact is whole; mode 0644 less the umask), else an anonymous temporary file
    (copied into ``to`` or read into memory at the end). Each attempt of the download starts it
    afresh. Errors of the disk name ``to``, never the temporary file. ``report`` (set by the
    steps for the attempt being streamed) tells the machine each piece's progress, before the
    user's ``progress`` callback is called."""

    def __init__(self, to: str | os.PathLike[str] | IO[bytes] | None, progress: Progress | None) -> None:
        self.to, self.progress, self.length = to, progress, 0
        self.total: int | None = None
        self.report: Progress | None = None
        self.path: str | None = None
        self.tmp: str | None = None
        if to is not None and not hasattr(to, "write"):
            self.path = os.fspath(to)
            fd, self.tmp = _create_beside(self.path)
            self.file: IO[bytes] = os.fdopen(fd, "w+b")
        else:
            self.file = tempfile.TemporaryFile()

    def start(self, content_length: str | None) -> None:
        self.file.seek(0)
        self.file.truncate()
        self.length = 0
        self.total = int(content_length) if content_length and content_length.isdigit() else None

    def write(self, chunk: bytes) -> None:
        try:
            self.file.write(chunk)
        except OSError as e:
            if self.path is None:
                raise
            raise _own_path(e, self.path) from e
        self.length += len(chunk)
        if self.report is not None:
            self.report(self.length, self.total)
        if self.progress:
            self.progress(self.length, self.total)

    def finish(self, export_id: str) -> ExportResult:
        """The artifact is whole: moved or copied to where it belongs."""
        self.file.flush()
        if self.path is not None and self.tmp is not None:
            try:
                os.fsync(self.file.fileno())
                self.file.close()
                os.replace(self.tmp, self.path)
            except OSError as e:
                raise _own_path(e, self.path) from e
            self.tmp = None
            return ExportResult(export_id, self.length, path=self.path)
        self.file.seek(0)
        if self.to is None:
            return ExportResult(export_id, self.length, data=self.file.read())
        shutil.copyfileobj(self.file, cast(IO[bytes], self.to))
        return ExportResult(export_id, self.length)

    def close(self) -> None:
        """Leaves nothing behind: the temporary file goes unless it was renamed."""
        self.file.close()
        if self.tmp is not None:
            os.unlink(self.tmp)
            self.tmp = None


# A response as a transport reports it: (status, headers, body bytes), or (status, headers, length)
# when the machine said to stream the body into the sink; a _Failed is a transport failure.
Stream = Callable[[int], "_Sink | None"]


class _Failed:
    """A send (or a fleet command) that got no response: the core's transport failure and the
    HTTP library's error."""

    __slots__ = ("kind", "error")

    def __init__(self, kind: str, error: BaseException) -> None:
        self.kind, self.error = kind, error


def _outcome(result: Any) -> Any:
    """What the machines' ``report`` is told of a send's or a fleet command's result: the result
    itself, or ``("no_response", kind)`` for a ``_Failed``."""
    return ("no_response", result.kind) if isinstance(result, _Failed) else result


def _describe(e: BaseException) -> str:
    """The HTTP library's error as one line: its class and the text of the deepest error under it
    that has one, led by the system error's meaning when one is under it and the text does not
    say it (``ConnectError: Connection refused ([Errno 111] Connect call failed (...))``)."""
    text, depth, errno = str(e), 0, None
    inner: BaseException | None = e
    while inner is not None and depth < 8:
        if str(inner):
            text = str(inner)
        if isinstance(inner, OSError) and inner.errno:
            errno = inner.errno
        inner, depth = inner.__cause__ or inner.__context__, depth + 1
    if errno is not None and os.strerror(errno).lower() not in text.lower():
        text = f"{os.strerror(errno)} ({text})"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


class _Transport:
    """One HTTP library: ``connect`` bounds making the connection (TCP and TLS), ``read`` the wait
    for the response's headers and then each wait between two pieces of its body (seconds)."""

    def __init__(self, http: Any, base_url: str, connect: float, read: float) -> None:
        self.http, self.base, self.connect, self.read = http, base_url, connect, read

    @staticmethod
    def failure(e: Exception) -> str | None:
        raise NotImplementedError

    def failed(self, e: Exception) -> _Failed:
        """The transport failure ``e`` is; anything else is not ours to map, and is raised."""
        kind = self.failure(e)
        if kind is None:
            raise e
        return _Failed(kind, e)


class _Httpx(_Transport):
    def _args(self, r: RequestDescriptor) -> dict[str, Any]:
        # follow_redirects=False on every request: a client built to follow them would carry the
        # API key and secret (or the bearer token) to another origin.
        import httpx

        # The write of the request is bounded like a read, and waiting for a pooled connection
        # like making one.
        timeout = httpx.Timeout(connect=self.connect, read=self.read, write=self.read, pool=self.connect)
        return {"method": r.method, "url": r.url(self.base), "headers": r.headers, "content": r.body,
                "follow_redirects": False, "timeout": timeout}

    def _stream(self, r: RequestDescriptor) -> Any:
        return self.http.stream(**self._args(r))

    @staticmethod
    def failure(e: Exception) -> str | None:
        import httpx

        # ConnectTimeout is a TimeoutException, but nothing was sent: test it first.
        if isinstance(e, (httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ConnectError)):
            return "connect_failed"
        if isinstance(e, httpx.TimeoutException):
            return "timeout"
        if isinstance(e, httpx.TransportError):
            return "connection_lost"
        return None

    def send(self, r: RequestDescriptor, stream: Stream | None) -> Any:
        try:
            if stream is None:  # nothing to stream: the whole body, read as httpx reads it
                resp = self.http.request(**self._args(r))
                return resp.status_code, list(resp.headers.multi_items()), resp.content
            with self._stream(r) as resp:
                headers = list(resp.headers.multi_items())
                sink = stream(resp.status_code)
                if sink is None:
                    return resp.status_code, headers, resp.read()
                sink.start(resp.headers.get("Content-Length"))
                for chunk in resp.iter_bytes():
                    sink.write(chunk)
                return resp.status_code, headers, sink.length
        except Exception as e:  # noqa: BLE001 (only the library's transport errors are mapped)
            return self.failed(e)


class _AsyncHttpx(_Httpx):
    async def send(self, r: RequestDescriptor, stream: Stream | None) -> Any:
        try:
            if stream is None:  # nothing to stream: the whole body, read as httpx reads it
                resp = await self.http.request(**self._args(r))
                return resp.status_code, list(resp.headers.multi_items()), resp.content
            async with self._stream(r) as resp:
                headers = list(resp.headers.multi_items())
                sink = stream(resp.status_code)
                if sink is None:
                    return resp.status_code, headers, await resp.aread()
                sink.start(resp.headers.get("Content-Length"))
                async for chunk in resp.aiter_bytes():
                    sink.write(chunk)
                return resp.status_code, headers, sink.length
        except Exception as e:  # noqa: BLE001
            return self.failed(e)


class _Requests(_Transport):
    @staticmethod
    def failure(e: Exception) -> str | None:
        from requests import exceptions as rx
        from urllib3.exceptions import NewConnectionError

        # ConnectTimeout is both a Timeout and a ConnectionError: nothing was sent.
        if isinstance(e, rx.ConnectTimeout):
            return "connect_failed"
        if isinstance(e, rx.Timeout):
            return "timeout"
        if isinstance(e, rx.ConnectionError):
            # requests raises ConnectionError for a refused connection and for a dropped one
            # alike; only urllib3's NewConnectionError means nothing was sent.
            reason = getattr(e.args[0], "reason", None) if e.args else None
            return "connect_failed" if isinstance(reason, NewConnectionError) else "connection_lost"
        if isinstance(e, rx.ChunkedEncodingError):
            return "connection_lost"
        return None

    def send(self, r: RequestDescriptor, stream: Stream | None) -> Any:
        try:
            # Streamed only when there is a sink: otherwise requests reads the whole body itself.
            with self.http.request(r.method, r.url(self.base), headers=dict(r.headers), data=r.body,
                                   timeout=(self.connect, self.read), stream=stream is not None,
                                   allow_redirects=False) as resp:
                headers = list(resp.headers.items())
                sink = stream(resp.status_code) if stream else None
                if sink is None:
                    return resp.status_code, headers, resp.content
                sink.start(resp.headers.get("Content-Length"))
                for chunk in resp.iter_content(64 * 1024):
                    sink.write(chunk)
                return resp.status_code, headers, sink.length
        except Exception as e:  # noqa: BLE001
            return self.failed(e)


def _transport(http: Any, base_url: str, timeouts: tuple[float, float], asynchronous: bool) -> Any:
    module = type(http).__module__.split(".")[0]
    if module == "httpx":
        import httpx

        if asynchronous != isinstance(http, httpx.AsyncClient):
            raise TypeError("use httpx.AsyncClient with the Async clients and httpx.Client with the others")
        return (_AsyncHttpx if asynchronous else _Httpx)(http, base_url, *timeouts)
    if module == "requests" and not asynchronous:
        return _Requests(http, base_url, *timeouts)
    raise TypeError(f"http must be an httpx.Client, httpx.AsyncClient or requests.Session, not {type(http).__name__}")


# ---- the fleet: the processes of one API client sharing its token and budget through Redis ------

class RedisFleet:
    """The processes of one API client sharing one token and one rate budget through Redis, with
    a redis-py client (``redis.Redis``): give one to the client of every process
    (``EnterpriseClient(..., fleet=RedisFleet(redis.Redis(...)))``, or ``ReportsClient``). The
    client's session is then the fleet's (``session``): each request is reserved in the fleet's
    budget before it is sent (the spec's per-minute limits hold per API client, across
    processes), and the fleet makes one token exchange, whose token every process adopts.
    ``prefix`` names the fleet's keys (default ``DEFAULT_FLEET_PREFIX``; give each API client its
    own, and on Redis Cluster one with a hash tag, ``"{fleet-a}:"``), checked here
    (``InvalidArgumentError``). The token is stored in Redis: protect that Redis as you protect
    the API secret. When Redis cannot be reached a request waits and reserves again each second
    (it is never sent uncounted), and a token refresh exchanges on its own. The hosts' clocks
    must agree to within a second. Thread-safe as the Redis client is."""

    def __init__(self, client: Any, *, prefix: str | None = None) -> None:
        if not callable(getattr(client, "execute_command", None)):
            raise TypeError(f"client must be a Redis client with execute_command (redis.Redis), "
                            f"not {type(client).__name__}")
        self._client = client
        self.fleet: Fleet = Fleet(prefix)

    @property
    def prefix(self) -> str:
        """The key prefix of the fleet."""
        return self.fleet.prefix

    def session(self, budget: RateBudget | None = None) -> Session:
        """A new session of the fleet (``Fleet.session``): its token and ``budget``'s windows are
        the fleet's. The client given this fleet makes its own; make one to share between several
        clients of one process (``session=`` with ``fleet=``)."""
        return self.fleet.session(budget)

    def send(self, command: list[str]) -> str | None:
        """Sends one of the core's commands to Redis as it is: its reply as text (None for nil).
        Raises what the Redis client raises (the clients report it as Redis unreachable)."""
        return _text(self._client.execute_command(*command))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(prefix={self.prefix!r})"


class AsyncRedisFleet(RedisFleet):
    """:class:`RedisFleet` with redis-py's asyncio client (``redis.asyncio.Redis``), for
    ``AsyncEnterpriseClient`` and ``AsyncReportsClient``."""

    async def send(self, command: list[str]) -> str | None:  # type: ignore[override]
        """See ``RedisFleet.send``."""
        return _text(await self._client.execute_command(*command))


def _fleet_session(fleet: RedisFleet | None, session: Session | None, budget: RateBudget | None,
                   asynchronous: bool) -> Session | None:
    """The session of a client given ``fleet``: the one given (a session of that fleet), else a
    new one of the fleet with ``budget``; None without a fleet (and a fleet's session refused)."""
    if fleet is None:
        if session is not None and session.fleet is not None:
            raise TypeError("a fleet's session needs its Redis: give fleet=RedisFleet(...) with it")
        return session
    if not isinstance(fleet, RedisFleet):
        raise TypeError(f"fleet must be a RedisFleet or an AsyncRedisFleet, not {type(fleet).__name__}")
    if asynchronous != isinstance(fleet, AsyncRedisFleet):
        raise TypeError("use AsyncRedisFleet (redis.asyncio) with the Async clients and RedisFleet with the others")
    if session is None:
        return fleet.session(budget)
    if session.fleet != fleet.fleet:
        raise TypeError("session must be a session of this fleet (fleet.session(budget))")
    return session


# ---- the steps, written once for sync and async --------------------------------------------------

class _Unset:
    """The default of ``with_options``' arguments: keep this client's value."""


_UNSET = _Unset()
_C = TypeVar("_C", bound="_Base")


def _limits(max_attempts: int | None = None, max_elapsed_seconds: float | None = None) -> dict[str, Any]:
    """The bounds given, as the machines' keyword arguments (the core checks them)."""
    out: dict[str, Any] = {}
    if max_attempts is not None:
        out["max_attempts"] = max_attempts
    if max_elapsed_seconds is not None:
        out["max_elapsed_seconds"] = max_elapsed_seconds
    return out


def _timeouts(connect_timeout: float | None, read_timeout: float | None, timeout: float | None) -> tuple[float, float]:
    """(connect, read) seconds: the ones given, checked by the core, else its defaults; ``timeout``
    is the older name of ``read_timeout``."""
    if timeout is not None and read_timeout is not None:
        raise TypeError("give read_timeout or timeout (its older name), not both")
    return client_timeouts(connect_timeout, read_timeout if read_timeout is not None else timeout)


def _poll_bounds(min_poll_interval_seconds: float | None, max_poll_interval_seconds: float | None) -> dict[str, Any]:
    """The poll-interval bounds given, as ``ExportJob``'s keyword arguments, checked by the core now
    (``InvalidArgumentError`` naming the bound), not when a job starts."""
    out: dict[str, Any] = {}
    if min_poll_interval_seconds is not None:
        out["min_poll_interval_seconds"] = min_poll_interval_seconds
    if max_poll_interval_seconds is not None:
        out["max_poll_interval_seconds"] = max_poll_interval_seconds
    if out:
        ExportJob(tenant_id="-", body=b"{}", **out)
    return out


class _Op:
    """One logical operation as it runs: its telemetry scope, and for an export job the job and
    where its checkpoints go (``on_checkpoint``)."""

    __slots__ = ("scope", "job", "on_checkpoint", "abandoned")

    def __init__(self, scope: OperationScope | None, job: ExportJob | None = None,
                 on_checkpoint: OnCheckpoint | None = None) -> None:
        self.scope, self.job, self.on_checkpoint = scope, job, on_checkpoint
        # The fleet's commands releasing the exchange lock of a refresh cancelled mid-exchange:
        # sent once the steps are closed (a generator being closed cannot yield them).
        self.abandoned: list[list[str]] = []

    def event(self, e: dict[str, Any]) -> None:
        if self.scope is not None:
            try:
                self.scope.event(e)
            except Exception:  # noqa: BLE001 (telemetry never changes what a call does)
                _log.warning("telemetry failed on an event", exc_info=True)

    def end(self, error: BaseException | None) -> None:
        if self.scope is not None:
            scope, self.scope = self.scope, None
            try:
                scope.end(error)
            except Exception:  # noqa: BLE001
                _log.warning("telemetry failed at the end of an operation", exc_info=True)

    def checkpoint(self, machine: Any) -> object:
        """Before the step just given is performed: the checkpoint the job gives, if any (the
        core's rule: before each send and pause, when the state changed), given to
        ``on_checkpoint``; what it returned (an awaitable, from an ``async def``, is awaited by the
        asyncio client before the step is performed)."""
        if self.on_checkpoint is not None and self.job is not None and machine is self.job:
            text = self.job.checkpoint()
            if text is not None:
                return self.on_checkpoint(text)
        return None

    def failed(self, e: BaseException) -> BaseException:
        """Ends the operation on ``e`` and returns what to raise: for an export job, Ctrl-C
        (``KeyboardInterrupt``) becomes ``ExportInterrupted`` with its export id and checkpoint;
        a cancelled task's own ``CancelledError`` goes on unchanged (``asyncio.timeout``,
        ``wait_for`` and ``TaskGroup`` compare its type), carrying the job
        (``royaltykit.export_interruption(e)``); anything else is ``e``."""
        if self.job is not None and isinstance(e, KeyboardInterrupt):
            err = self.interrupted(ExportInterrupted)
            self.end(err)
            return err
        if self.job is not None and isinstance(e, asyncio.CancelledError):
            left = self.interrupted(ExportInterrupted)
            e._royaltykit_export = left  # type: ignore[attr-defined]
            e.add_note(f"{left} (royaltykit.export_interruption(e).checkpoint resumes it)")
            self.end(left)
            return e
        self.end(e)
        return e

    def interrupted(self, cls: Any) -> BaseException:
        """The export job's interruption error: its export id and checkpoint, as saved now."""
        job = cast(ExportJob, self.job)
        return cast(BaseException, cls(job.export_id, job.save()))


class _Waker:
    """Wakes the calls waiting for one session's token exchange, in every client on that session
    (a session may be shared: ``session=``): threads through a condition, tasks through their
    futures, each set on its own event loop."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self._waiters: set[asyncio.Future[None]] = set()

    def wake(self) -> None:
        with self.changed:
            self.changed.notify_all()
            waiters = list(self._waiters)
        for f in waiters:
            try:
                f.get_loop().call_soon_threadsafe(_settle, f)
            except RuntimeError:  # its loop is closed: nobody waits on it any more
                pass

    async def wait(self, session: Session, version: int, seconds: float) -> None:
        """Until ``session.version`` differs from ``version``, or ``seconds`` pass."""
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self.changed:
            self._waiters.add(woken)
        try:
            if session.version == version:
                await asyncio.wait_for(woken, seconds)
        except asyncio.TimeoutError:
            pass
        finally:
            with self.changed:
                self._waiters.discard(woken)


def _settle(f: asyncio.Future[None]) -> None:
    if not f.done():
        f.set_result(None)


# Each session's waker, shared by the clients on it, gone with the session.
_wakers: weakref.WeakKeyDictionary[Session, _Waker] = weakref.WeakKeyDictionary()
_wakers_lock = threading.Lock()


def _waker(session: Session) -> _Waker:
    with _wakers_lock:
        waker = _wakers.get(session)
        if waker is None:
            waker = _wakers[session] = _Waker()
        return waker


class _Base:
    """What both APIs' clients share: the machines' loop, as a generator whose yields are the I/O
    (``("send", request, stream)`` → the outcome, ``("sleep", seconds)``, ``("await", seconds,
    version)`` until the session changes, ``("redis", command)`` → the fleet's reply or a
    ``_Failed``), run by ``_run`` (blocking) or ``_arun`` (asyncio)."""

    _async = False
    # The API of the client's token (a fleet's token refresh names it), and its tenant.
    _api = ""
    _tenant: str | None = None

    def __init__(self, http: Any, base_url: str, *, budget: RateBudget | None, timeout: float | None,
                 clock: Callable[[], float], sleep: Callable[[float], Any] | None, seed: Callable[[], int] | None,
                 session: Session | None = None, allow_insecure_http: bool = False,
                 max_attempts: int | None = None, max_elapsed_seconds: float | None = None,
                 on_event: OnEvent | None = None, connect_timeout: float | None = None,
                 read_timeout: float | None = None, telemetry: ClientTelemetry | None = None,
                 fleet: RedisFleet | None = None) -> None:
        asynchronous = self._async
        if on_event is not None and not callable(on_event):
            raise TypeError("on_event must be callable: on_event(event)")
        if telemetry is not None and not callable(getattr(telemetry, "operation", None)):
            raise TypeError("telemetry must have operation(name, base_url) (royaltykit.telemetry.ClientTelemetry)")
        self._on_event = on_event
        self._telemetry = telemetry
        # A wrong base URL or timeout fails here, before any request, not after a minute of retries.
        self._transport = _transport(http, check_base_url(base_url, allow_insecure_http),
                                     _timeouts(connect_timeout, read_timeout, timeout), asynchronous)
        if session is not None and budget is not None:
            raise TypeError("give budget or session, not both: a session keeps its own budget")
        # The calls of this client share one session: one token exchange at a time, one budget;
        # with a fleet, the fleet's session: one exchange and one budget for every process.
        session = _fleet_session(fleet, session, budget, asynchronous)
        self._fleet = fleet
        self.session: Session = session if session is not None else Session(budget)
        # Each request's bounds (None: the core's defaults, 5 attempts and 300 s).
        self._limits = _limits(max_attempts, max_elapsed_seconds)
        # Each export job's poll-interval bounds (none: the core's).
        self._poll: dict[str, Any] = {}
        self._clock = clock
        self._sleep: Callable[[float], Any] = sleep or (asyncio.sleep if asynchronous else time.sleep)
        self._seed = seed or (lambda: int.from_bytes(os.urandom(8), "little"))
        # Wakes the calls waiting for the session's token exchange, in every client on it.
        self._waker = _waker(self.session)

    @property
    def timeouts(self) -> tuple[float, float]:
        """The ``(connect, read)`` timeouts in seconds this client's requests use."""
        return self._transport.connect, self._transport.read

    def with_options(self: _C, *, max_attempts: int | None | _Unset = _UNSET,
                     max_elapsed_seconds: float | None | _Unset = _UNSET,
                     timeout: float | None | _Unset = _UNSET, connect_timeout: float | None | _Unset = _UNSET,
                     read_timeout: float | None | _Unset = _UNSET,
                     min_poll_interval_seconds: float | None | _Unset = _UNSET,
                     max_poll_interval_seconds: float | None | _Unset = _UNSET) -> _C:
        """This client with other options for the calls made through the copy; each one not given
        keeps this client's value, ``None`` restores the core's default: the most attempts of each
        request (5), the most seconds of its retries (300), the connect and read timeouts (10 s,
        30 s; ``timeout`` is the older name of ``read_timeout``), and (reporting clients) the
        poll-interval bounds of export jobs. Checked here, as at construction. The copy shares the
        HTTP client, the credentials, the telemetry and the session (the token, its one exchange,
        the budget)::

            client.with_options(max_attempts=2, read_timeout=5).request("listPlatformExports")
        """
        other = copy.copy(self)
        limits = dict(self._limits)
        if not isinstance(max_attempts, _Unset):
            limits.pop("max_attempts", None)
            limits.update(_limits(max_attempts=max_attempts))
        if not isinstance(max_elapsed_seconds, _Unset):
            limits.pop("max_elapsed_seconds", None)
            limits.update(_limits(max_elapsed_seconds=max_elapsed_seconds))
        other._limits = limits
        if not isinstance(timeout, _Unset) and not isinstance(read_timeout, _Unset):
            raise TypeError("give read_timeout or timeout (its older name), not both")
        read = read_timeout if not isinstance(read_timeout, _Unset) else timeout
        if not isinstance(connect_timeout, _Unset) or not isinstance(read, _Unset):
            connect, read_seconds = client_timeouts(
                self._transport.connect if isinstance(connect_timeout, _Unset) else connect_timeout,
                self._transport.read if isinstance(read, _Unset) else read)
            other._transport = copy.copy(self._transport)
            other._transport.connect, other._transport.read = connect, read_seconds
        if not isinstance(min_poll_interval_seconds, _Unset) or not isinstance(max_poll_interval_seconds, _Unset):
            if not isinstance(self, _Reports):
                raise TypeError("min_poll_interval_seconds and max_poll_interval_seconds bound export jobs: "
                                "reporting clients only")
            poll = dict(self._poll)
            for name, value in (("min_poll_interval_seconds", min_poll_interval_seconds),
                                ("max_poll_interval_seconds", max_poll_interval_seconds)):
                if not isinstance(value, _Unset):
                    poll.pop(name, None)
                    if value is not None:
                        poll[name] = value
            other._poll = _poll_bounds(poll.get("min_poll_interval_seconds"), poll.get("max_poll_interval_seconds"))
        return other

    def _op(self, name: str, job: ExportJob | None = None, on_checkpoint: OnCheckpoint | None = None) -> _Op:
        """A new operation: its telemetry scope opened (when the client has telemetry)."""
        scope = None
        if self._telemetry is not None:
            try:
                scope = self._telemetry.operation(name, self._transport.base)
            except Exception:  # noqa: BLE001 (telemetry never changes what a call does)
                _log.warning("telemetry failed to open an operation", exc_info=True)
        return _Op(scope, job, on_checkpoint)

    def _level(self, op: _Op) -> str | None:
        """The lowest level of event anyone listens to: all (None) for ``on_event`` or telemetry,
        else what the ``royaltykit`` logger shows now (the core drops the others unbuilt)."""
        if op.scope is not None or self._on_event is not None or _log.isEnabledFor(logging.DEBUG):
            return None
        return "info" if _log.isEnabledFor(logging.INFO) else "warning"

    def _emit(self, machine: Any, op: _Op) -> None:
        """The machine's events since the last step (those anyone listens to, ``_level``)."""
        self._deliver(machine.take_events(self._level(op)), op)

    def _deliver(self, events: list[dict[str, Any]], op: _Op) -> None:
        """Events to the ``royaltykit`` logger, ``on_event`` and the operation's telemetry."""
        for e in events:
            level = _LEVELS.get(e["level"], logging.INFO)
            if _log.isEnabledFor(level):
                _log.log(level, "%s", e["message"])
            op.event(e)
            if self._on_event is not None:
                self._on_event(e)

    def _wake(self) -> None:
        """The session changed: every call waiting on it asks again, in every client on it."""
        self._waker.wake()

    def _token_request(self) -> RequestDescriptor:
        raise NotImplementedError

    def _parse_token(self, status: int, headers: list[tuple[str, str]], body: bytes) -> Any:
        raise NotImplementedError

    def _steps(self, machine: Any, op: _Op, operation_id: str | None = None,
               sink: _Sink | None = None) -> Generator[Any, Any, Any]:
        """Drives ``machine`` to its end: returns the ``Done`` step, raises for the others. A body
        the machine says to stream goes into ``sink``; every outcome is the machine's ``report``."""
        session, stream = self.session, None if sink is None else self._stream(machine, op, sink)
        cause: BaseException | None = None  # the HTTP library's error when the last send got no response
        while True:
            version = session.version
            step, events = machine.advance(self._clock(), session=session, min_level=self._level(op))
            self._deliver(events, op)
            if inspect.isawaitable(saved := op.checkpoint(machine)):
                yield ("checkpoint", saved)
            match step:
                case CallStep.Send(request=request):
                    outcome = yield ("send", request, stream)
                    cause = outcome.error if isinstance(outcome, _Failed) else None
                    machine.report(_outcome(outcome), self._clock())
                case CallStep.Reserve(command=command):  # a fleet's: counted in its budget first
                    machine.report(_outcome((yield ("redis", command))), self._clock())
                case CallStep.Wait(seconds=seconds):
                    yield ("sleep", seconds)
                case CallStep.AwaitToken(seconds=seconds):
                    yield ("await", seconds, version)
                case CallStep.RefreshToken():
                    yield from self._refresh(op)
                case CallStep.Done():
                    return step
                case CallStep.Reconcile() | CallStep.Fail():  # the core's error: ReconcileRequired, CallFailedError, …
                    raise step.exception(operation_id or "call", self._transport.base,
                                         None if cause is None else _describe(cause)) from cause

    def _stream(self, machine: Any, op: _Op, sink: _Sink) -> Callable[[int], _Sink | None]:
        """What the transport asks of a response's status: ``sink`` when the machine streams its
        body, its progress reported to the machine as it arrives (the core's ``progress`` events,
        at each tenth of the body and when whole, delivered at once)."""

        def report(received: int, total: int | None) -> None:
            machine.progress(received, total)
            self._emit(machine, op)

        def stream(status: int) -> _Sink | None:
            if not machine.streams(status):
                return None
            sink.report = report
            return sink

        return stream

    def _refresh(self, op: _Op) -> Generator[Any, Any, None]:
        """This call leads the session's one token exchange (a fleet's: the fleet's one exchange,
        through Redis); the others wait for it. Its outcome reaches the session: the token, the
        failure (raised), or an abandoned exchange when cancelled, interrupted or closed."""
        session = self.session
        try:
            if session.fleet is None:
                try:
                    session.store_token((yield from self._exchange(op)))
                except Exception as e:
                    session.exchange_failed(str(e))
                    raise
            else:
                yield from self._fleet_token(op)
        except Exception:
            raise
        except BaseException:
            session.abandon_exchange()
            raise
        finally:
            self._wake()

    def _exchange(self, op: _Op) -> Generator[Any, Any, Any]:
        """The client's token exchange (a ``Call.exchange`` driven to its end): the token parsed."""
        exchange = Call.exchange(self._token_request(), seed=self._seed(), **self._limits)
        done = yield from self._steps(exchange, op, "token exchange")
        return self._parse_token(done.status, done.headers, done.body)

    def _fleet_token(self, op: _Op) -> Generator[Any, Any, None]:
        """A fleet session's token refresh: the ``FleetToken`` driven to its end (``_fleet_steps``).
        Every outcome reaches the session (a failure the core did not record is recorded here).
        Cancelled, interrupted or closed mid-refresh: the fleet's lock this process holds is
        released by the driver (best effort), so the other processes need not wait out its
        lease; the caller abandons the session's exchange."""
        session, refresh = self.session, cast(FleetToken | None, None)
        try:
            refresh = FleetToken(session, self._api, tenant_id=self._tenant, seed=self._seed(), now=self._clock())
            yield from self._fleet_steps(refresh, op)
        except Exception as e:
            if session.exchanging:
                session.exchange_failed(str(e))
            raise
        except BaseException:
            if refresh is not None and (unlock := refresh.abandon_command()) is not None:
                op.abandoned.append(unlock)
            raise

    def _fleet_steps(self, refresh: FleetToken, op: _Op) -> Generator[Any, Any, None]:
        """``refresh``'s steps: the token another process published adopted, or this process's
        exchange run and published; raises the exchange's error when it failed."""
        session, error = self.session, cast(Exception | None, None)
        while True:
            match refresh.next():
                case FleetTokenStep.Command(command=command):
                    reply = yield ("redis", command)
                    if isinstance(reply, _Failed):
                        refresh.redis_failed(session)
                    else:
                        refresh.replied(reply[1], session, self._clock())
                case FleetTokenStep.Exchange():
                    try:
                        token = yield from self._exchange(op)
                    except Exception as e:
                        error = e
                        refresh.exchange_failed(str(e))
                    else:
                        refresh.exchanged(token, now=self._clock())
                case FleetTokenStep.Wait(seconds=seconds):
                    yield ("sleep", seconds)
                    refresh.waited()
                case FleetTokenStep.Done():
                    return
                case FleetTokenStep.Failed(reason=reason):  # recorded by the core: the session's waiting calls fail with it
                    raise error if error is not None else RoyaltyKitError("token_exchange_failed", reason)

    def _redis(self, command: list[str]) -> Any:
        """One of the fleet's commands sent: the machines' outcome ``("reply", text)``, or a
        ``_Failed`` when Redis cannot be reached (logged with its cause, never with the command: a
        publish carries the token)."""
        try:
            return ("reply", cast(RedisFleet, self._fleet).send(command))
        except Exception as e:  # noqa: BLE001 (any failure of the Redis client: unreachable)
            return self._redis_failed(e)

    async def _aredis(self, command: list[str]) -> Any:
        """``_redis`` with the fleet's asyncio client."""
        try:
            return ("reply", await cast(AsyncRedisFleet, self._fleet).send(command))
        except Exception as e:  # noqa: BLE001
            return self._redis_failed(e)

    def _release(self, op: _Op) -> None:
        """Best effort, once an operation's steps are closed: the fleet's exchange lock of a
        refresh abandoned mid-exchange released (a failure is logged, never raised)."""
        while op.abandoned:
            self._redis(op.abandoned.pop())

    async def _arelease(self, op: _Op) -> None:
        """``_release`` with the fleet's asyncio client, bounded to a few seconds."""
        while op.abandoned:
            try:
                await asyncio.wait_for(self._aredis(op.abandoned.pop()), 5)
            except asyncio.TimeoutError:
                _log.warning("the fleet's Redis did not answer the release of its exchange lock")

    @staticmethod
    def _redis_failed(e: Exception) -> _Failed:
        _log.warning("the fleet's Redis could not be reached: %s", _describe(e))
        return _Failed("connect_failed", e)

    # An operation's end, blocking or on an event loop: its telemetry scope ended with the error
    # raised; an export job interrupted by KeyboardInterrupt raises ExportInterrupted with its
    # export id and checkpoint, from the original; a cancelled task's CancelledError carries them.
    # The steps are closed first, so the temporary file is gone by then; a fleet's exchange lock
    # held by a refresh abandoned on the way is then released (best effort).
    def _run(self, op: _Op, steps: Generator[Any, Any, _T]) -> _T:
        try:
            result = self._drive(steps)
        except BaseException as e:
            self._release(op)
            raised = op.failed(e)
            if raised is e:
                raise
            raise raised from e
        op.end(None)
        return result

    async def _arun(self, op: _Op, steps: Generator[Any, Any, _T]) -> _T:
        try:
            result = await self._adrive(steps)
        except BaseException as e:
            await self._arelease(op)
            raised = op.failed(e)
            if raised is e:
                raise
            raise raised from e
        op.end(None)
        return result

    # Both close the steps on the way out, so an export's temporary file goes at once when a
    # send raises (a disk error, a progress callback's exception, an interruption).
    def _drive(self, steps: Generator[Any, Any, _T]) -> _T:
        waker, session = self._waker, self.session
        try:
            action = next(steps)
            while True:
                match action:
                    case ("sleep", seconds):
                        self._sleep(seconds)
                        result = None
                    case ("await", seconds, version):
                        with waker.changed:
                            waker.changed.wait_for(lambda: session.version != version, timeout=seconds)
                        result = None
                    case ("redis", command):
                        result = self._redis(command)
                    case ("checkpoint", saved):
                        if inspect.iscoroutine(saved):
                            saved.close()
                        raise TypeError("on_checkpoint returned an awaitable, which a blocking client cannot await: "
                                        "give a plain function, or use the asyncio client")
                    case _:
                        result = self._transport.send(action[1], action[2])
                action = steps.send(result)
        except StopIteration as end:
            return cast(_T, end.value)
        finally:
            steps.close()

    async def _adrive(self, steps: Generator[Any, Any, _T]) -> _T:
        session = self.session
        try:
            action = next(steps)
            while True:
                match action:
                    case ("sleep", seconds):
                        await self._sleep(seconds)
                        result = None
                    case ("await", seconds, version):
                        await self._waker.wait(session, version, seconds)
                        result = None
                    case ("redis", command):
                        result = await self._aredis(command)
                    case ("checkpoint", saved):
                        result = await saved
                    case _:
                        result = await self._transport.send(action[1], action[2])
                action = steps.send(result)
        except StopIteration as end:
            return cast(_T, end.value)
        finally:
            steps.close()

    def _done(self, op: _Op, operation_id: str, params: Mapping[str, Any]) -> Generator[Any, Any, Any]:
        """One operation's ``Call`` driven to its ``Done`` step (status, headers, raw body)."""
        call = Call(operation_id, seed=self._seed(), **self._limits, **params)
        return (yield from self._steps(call, op, operation_id))

    def _call(self, op: _Op, operation_id: str, params: Mapping[str, Any], raw: bool = False
              ) -> Generator[Any, Any, Any]:
        done = yield from self._done(op, operation_id, params)
        if raw:
            return Response(done.status, list(done.headers), bytes(done.body), _parsed(done))
        return _parsed(done)

    def _request_steps(self, operation_id: str, params: dict[str, Any], raw: bool = False
                       ) -> tuple[_Op, Generator[Any, Any, Any]]:
        op = self._op(operation_id)
        return op, self._call(op, operation_id, params, raw)

    def _reveal_steps(self, operation_id: str, params: dict[str, Any]
                      ) -> tuple[_Op, Generator[Any, Any, RevealedSecret]]:
        """One request whose 2xx body reveals a secret: that raw body goes to ``revealed_secret``
        alone, never parsed here, never in an event, a log line or telemetry."""
        op = self._op(operation_id)

        def steps() -> Generator[Any, Any, RevealedSecret]:
            done = yield from self._done(op, operation_id, params)
            return revealed_secret(done.body)

        return op, steps()

    # ---- every page of a list: a Pages walk, each page one request() (one operation) ----

    @staticmethod
    def _walk(operation_id: str, params: dict[str, Any], max_pages: int | None, max_items: int | None,
              page_size: int | None) -> Pages:
        """The walk over ``operation_id``'s pages from the caller's ``query`` (taken out of
        ``params``: the walk gives each page's query), checked now, before any request."""
        return Pages(operation_id, query=params.pop("query", None), max_pages=max_pages, max_items=max_items,
                     page_size=page_size)

    def _page_steps(self, operation_id: str, params: dict[str, Any], query: list[tuple[str, str]]
                    ) -> tuple[_Op, Generator[Any, Any, Any]]:
        """One page's request: the caller's params with the page's query, as ``request_raw``."""
        return self._request_steps(operation_id, {**params, "query": query}, raw=True)

    def _pages(self, walk: Pages, operation_id: str, params: dict[str, Any]) -> Iterator[Any]:
        """The walk's items, blocking; a page is requested when the items before it are taken."""
        while True:
            match walk.next():
                case PagesStep.Fetch(query=query):
                    page = cast(Response, self._run(*self._page_steps(operation_id, params, query)))
                    yield from _page_items(walk, page)
                case PagesStep.Fail(error=error):
                    raise error
                case _:
                    return

    async def _apages(self, walk: Pages, operation_id: str, params: dict[str, Any]) -> AsyncIterator[Any]:
        """``_pages`` on an event loop."""
        while True:
            match walk.next():
                case PagesStep.Fetch(query=query):
                    page = cast(Response, await self._arun(*self._page_steps(operation_id, params, query)))
                    for item in _page_items(walk, page):
                        yield item
                case PagesStep.Fail(error=error):
                    raise error
                case _:
                    return


def _parsed(done: Any) -> Any:
    """A 2xx body: parsed when the core calls it JSON, else the bytes (an artifact); None when empty."""
    if not done.body:
        return None
    return json.loads(done.body) if done.json else done.body


def _page_items(walk: Pages, page: Response) -> list[Any]:
    """The items a fetched page gives: the first ``take`` of them, where the walk says they are
    (the page itself, or its member); none when the page has no items array (the walk's next
    step is then ``Fail``)."""
    shown = walk.page(page.body)
    if shown is None or shown.take == 0:
        return []
    # The walk read the body as JSON: parse it here too when its Content-Type did not say so.
    data = page.data if not isinstance(page.data, (bytes, type(None))) else json.loads(page.body)
    items = data if shown.member is None else data[shown.member]
    return list(items[: shown.take])


def _state_now(state: Any) -> Any:
    """A store's state in the blocking client, which cannot await: an awaitable (an async store's
    ``state``) is refused rather than reported as a state."""
    if inspect.isawaitable(state):
        if inspect.iscoroutine(state):
            state.close()  # never started
        raise TypeError("the store's state() returned an awaitable in the blocking client, which cannot await it: "
                        "use AsyncEnterpriseClient.recover_deliveries with an async store")
    return state


def _progress(progress: Progress | bool | None) -> Progress | None:
    """``progress=True``: a bar on stderr when it is a terminal (nothing otherwise)."""
    if progress is not True:
        return progress or None
    stream = sys.stderr
    if not stream.isatty():
        return None

    def bar(got: int, total: int | None) -> None:
        if total:
            filled = min(30, got * 30 // total)
            stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {min(100, got * 100 // total):3d}% {got}/{total} bytes")
        else:
            stream.write(f"\r{got} bytes")
        if total is not None and got >= total:
            stream.write("\n")
        stream.flush()

    return bar


class _Reports(_Base):
    _api = "reports"

    def __init__(self, http: Any, *, base_url: str, client_id: str, client_secret: str, tenant_id: str,
                 scopes: list[str] | None = None, idempotency_header: str | None = None, budget: RateBudget | None = None,
                 timeout: float | None = None, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] | None = None, seed: Callable[[], int] | None = None,
                 session: Session | None = None, allow_insecure_http: bool = False, max_attempts: int | None = None,
                 max_elapsed_seconds: float | None = None, on_event: OnEvent | None = None,
                 connect_timeout: float | None = None, read_timeout: float | None = None,
                 min_poll_interval_seconds: float | None = None, max_poll_interval_seconds: float | None = None,
                 telemetry: ClientTelemetry | None = None, fleet: RedisFleet | None = None) -> None:
        super().__init__(http, base_url, budget=budget, timeout=timeout, clock=clock, sleep=sleep, seed=seed,
                         session=session, allow_insecure_http=allow_insecure_http, max_attempts=max_attempts,
                         max_elapsed_seconds=max_elapsed_seconds, on_event=on_event, connect_timeout=connect_timeout,
                         read_timeout=read_timeout, telemetry=telemetry, fleet=fleet)
        self._poll = _poll_bounds(min_poll_interval_seconds, max_poll_interval_seconds)
        self._credentials = (client_id, client_secret)
        self.tenant_id = self._tenant = tenant_id
        self._scopes = scopes
        self._idempotency_header = idempotency_header

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tenant_id={self.tenant_id!r})"

    def _token_request(self) -> RequestDescriptor:
        return build_token_request(*self._credentials, self.tenant_id, self._scopes)

    def _parse_token(self, status: int, headers: list[tuple[str, str]], body: bytes) -> Any:
        return parse_token_response(status, headers, body, tenant_id=self.tenant_id, requested_scopes=self._scopes,
                                    now=self._clock())

    def _request_steps(self, operation_id: str, params: dict[str, Any], raw: bool = False
                       ) -> tuple[_Op, Generator[Any, Any, Any]]:
        params.setdefault("tenant_id", self.tenant_id)
        if self._idempotency_header is not None:
            params.setdefault("idempotency_header", self._idempotency_header)
        return super()._request_steps(operation_id, params, raw)

    def _export(self, body: Mapping[str, Any] | bytes | None, resume: str | None, on_checkpoint: OnCheckpoint | None,
                to: Any, progress: Progress | bool | None, **options: Any) -> tuple[_Op, Generator[Any, Any, ExportResult]]:
        """The export job (new from ``body``, or resumed from a checkpoint) and its steps."""
        if (body is None) == (resume is None):
            raise TypeError("give body (the CreateExportRequest of a new export) or resume= (a checkpoint of "
                            "on_checkpoint or of ExportInterrupted.checkpoint), not both" if body is not None else
                            "give body (the CreateExportRequest of a new export) or resume= (a checkpoint to finish)")
        if on_checkpoint is not None and not callable(on_checkpoint):
            raise TypeError("on_checkpoint must be callable: on_checkpoint(text)")
        if not self._async and inspect.iscoroutinefunction(on_checkpoint):
            raise TypeError("on_checkpoint is an async function, which a blocking client cannot await: give a plain "
                            "function, or use the asyncio client")
        if resume is not None:
            given = sorted(name for name, value in options.items() if value is not None)
            if given:
                raise TypeError(f"a resumed job keeps the options of its checkpoint: do not give {', '.join(given)}")
            job = ExportJob.resume(resume)
        else:
            poll = dict(self._poll)
            for name in ("min_poll_interval_seconds", "max_poll_interval_seconds"):
                value = options.pop(name)
                if value is not None:
                    poll[name] = value
            job = ExportJob(tenant_id=self.tenant_id, body=cast(Any, body), idempotency_header=self._idempotency_header,
                            seed=self._seed(), **self._limits, **poll, **options)
        op = self._op("runExport", job, on_checkpoint)
        return op, self._export_steps(job, op, to, progress)

    def _export_steps(self, job: ExportJob, op: _Op, to: Any, progress: Progress | bool | None
                      ) -> Generator[Any, Any, ExportResult]:
        sink = _Sink(to, _progress(progress))
        try:
            done = yield from self._steps(job, op, "export job", sink)
            return sink.finish(done.export_id)
        finally:
            sink.close()


class ReportsClient(_Reports):
    """The reporting API's machine surface (``/api/platform/v1/``) over ``httpx.Client`` or
    ``requests.Session``: obtains and refreshes the bearer token (client credentials), retries as
    the specs say, honours ``Retry-After``, and paces requests by ``budget`` when given (the
    reporting API shows no rate limits, so by default only 429 and ``Retry-After`` pace it).
    ``base_url`` is the API's origin (``https://…``; plain ``http`` only to a loopback host, or
    anywhere with ``allow_insecure_http=True``, since the credentials would travel in clear),
    checked here: a mistake raises ``InvalidArgumentError`` before any request. ``max_attempts``
    and ``max_elapsed_seconds`` bound each request's retries (default: the core's, 5 and 300 s).
    ``connect_timeout`` bounds making a connection (TCP and TLS), ``read_timeout`` the wait for
    the response's headers and then each wait between two pieces of its body (seconds; default:
    the core's ``client_timeouts()``, 10 and 30; a connect timeout is ``connect_failed``, a read
    timeout ``timeout``); ``timeout`` is the older name of ``read_timeout`` (give one of them).
    ``min_poll_interval_seconds`` / ``max_poll_interval_seconds`` clamp each wait between two
    reads of a pending export (``run_export``'s own arguments win). All are checked here
    (``InvalidArgumentError`` naming the option); ``with_options`` changes them for the calls
    made through a copy. Each send, response, retry (its rule and wait), token refresh,
    rate-budget wait, poll, download ``progress`` (``received_bytes`` of ``total_bytes``, at each
    tenth of the artifact and when it is whole, never per piece), ``notice`` (a deprecated or
    sunset operation: once per operation per client, at WARNING) and end is an event (the core's
    ``MachineEvent``, as a dict, at its ``level``): logged
    to the ``royaltykit`` logger (``ROYALTYKIT_LOG=debug|info`` prints them), given to
    ``on_event`` and to ``telemetry`` (:mod:`royaltykit.telemetry`; OpenTelemetry spans with
    :class:`royaltykit.otel.OpenTelemetry`); never a token, a credential, a header or a body.
    ``fleet=RedisFleet(redis.Redis(...))`` makes the processes of one API client share the token
    (one exchange for all) and ``budget`` through Redis (:class:`RedisFleet`).
    ``clock``, ``sleep`` and ``seed`` are for tests. Blocking: use it off your event loop."""

    def request(self, operation_id: str, **params: Any) -> Any:
        """Performs one operation (``path=``, ``query=``, ``body=``, ``request_id=``, … as for
        ``Call``): the parsed JSON body, the bytes of an artifact, or None. Raises ``ApiError``
        for an error response that retrying cannot fix, ``ReconcileRequired`` when a request
        may have been applied, ``CallFailedError`` when the attempts ran out without a response."""
        return self._run(*self._request_steps(operation_id, params))

    def request_raw(self, operation_id: str, **params: Any) -> Response:
        """``request``, returning the whole ``Response``: status, headers, body and the parsed data."""
        return cast(Response, self._run(*self._request_steps(operation_id, params, raw=True)))

    def paginate(self, operation_id: str, *, max_pages: int | None = None, max_items: int | None = None,
                 page_size: int | None = None, **params: Any) -> Iterator[Any]:
        """Every item of the list operation ``operation_id`` (a GET: the export list, the analytics
        and mapping review lists; on ``EnterpriseClient``, the subscriptions, …), one by one, page
        after page as the core's ``Pages`` walk says. Lazy: a page is requested only when the
        items before it have been taken (stop iterating, and no further page is asked for), each
        through ``request``'s own path (the session's token, retries, ``Retry-After``, rate budget,
        events and telemetry; one operation per page). ``query=`` is where the walk starts (its
        ``cursor``, ``page``, ``limit`` or ``size``); the other params (``path=``,
        ``user_id=``, …) go with every page. ``page_size`` is the ``limit`` or ``size`` asked
        for (default: the query's, else 100 for a reporting list, else the service's);
        ``max_pages`` and ``max_items`` bound the walk (no item past ``max_items`` is given, no
        page past either bound is requested). Never loops, never gives an item twice.
        ``InvalidArgumentError`` at once, before any request, for an operation that lists
        nothing or a bound out of range; while iterating, ``request``'s errors, and
        ``PaginationError`` when a page cannot be read or followed (the items given so far
        stand)."""
        walk = self._walk(operation_id, params, max_pages, max_items, page_size)
        return self._pages(walk, operation_id, params)

    def run_export(self, body: Mapping[str, Any] | bytes | None = None, *,
                   to: str | os.PathLike[str] | IO[bytes] | None = None, request_id: str | None = None,
                   max_polls: int | None = None, progress: Progress | bool | None = None,
                   max_poll_seconds: float | None = None, min_poll_interval_seconds: float | None = None,
                   max_poll_interval_seconds: float | None = None, on_checkpoint: OnCheckpoint | None = None,
                   resume: str | None = None) -> ExportResult:
        """Creates an export from ``body`` (the CreateExportRequest), waits for it and downloads
        the complete artifact to ``to`` (a path, written whole or not at all, or a binary file),
        or into ``ExportResult.data``. The artifact is streamed to a temporary file as it
        arrives (never held in memory when ``to`` is a path); only a whole one reaches ``to``.
        ``progress(received, total)`` is called as bytes arrive; ``progress=True`` draws a bar
        on stderr when it is a terminal. Whatever ``progress`` is, the download also gives
        ``progress`` events (logger at INFO, ``on_event``, telemetry) at each tenth of the
        artifact and when it is whole; a download that starts again counts from 0.
        A create that may have been applied is looked up, never sent twice: when the list cannot
        tell, ``ReconcileRequired`` is raised with the ``candidates`` that may be the job's own.
        ``max_polls`` and ``max_poll_seconds`` bound the polling (reads, seconds);
        ``min_poll_interval_seconds`` / ``max_poll_interval_seconds`` clamp each wait between two
        reads (each one given replaces the client's).

        Interrupt and resume: ``on_checkpoint(text)`` is given the job's checkpoint (portable
        JSON, no token) before each of its requests goes out and before each of its pauses (a
        poll interval, a backoff, a Retry-After), when it changed since the last one given (or
        the one resumed from); persist it (an exception it
        raises stops the job before that request or pause, and is raised). A job resumed during
        a pause waits out the rest of it. A
        ``KeyboardInterrupt`` (Ctrl-C) removes the temporary file and raises
        :class:`ExportInterrupted` (a ``KeyboardInterrupt``) with the ``export_id`` (None before
        the service named it) and the ``checkpoint`` at that moment. ``resume=checkpoint``, in
        place of ``body``, finishes that job (from any process, any language's client): a request
        that was in flight counts as lost, so a keyed create is sent again with the same key and
        an unkeyed one is looked up in the list, never a second export. A resumed job keeps the
        options of its checkpoint (give none of ``request_id``, ``max_polls``,
        ``max_poll_seconds`` and the poll-interval bounds), and its time budgets start again."""
        return self._run(*self._export(body, resume, on_checkpoint, to, progress, request_id=request_id,
                                       max_polls=max_polls, max_poll_seconds=max_poll_seconds,
                                       min_poll_interval_seconds=min_poll_interval_seconds,
                                       max_poll_interval_seconds=max_poll_interval_seconds))


class AsyncReportsClient(_Reports):
    """``ReportsClient`` for ``httpx.AsyncClient``: the same rules, ``await``-ed (a fleet:
    ``AsyncRedisFleet``)."""

    _async = True

    async def request(self, operation_id: str, **params: Any) -> Any:
        """See ``ReportsClient.request``."""
        return await self._arun(*self._request_steps(operation_id, params))

    async def request_raw(self, operation_id: str, **params: Any) -> Response:
        """See ``ReportsClient.request_raw``."""
        return cast(Response, await self._arun(*self._request_steps(operation_id, params, raw=True)))

    def paginate(self, operation_id: str, *, max_pages: int | None = None, max_items: int | None = None,
                 page_size: int | None = None, **params: Any) -> AsyncIterator[Any]:
        """See ``ReportsClient.paginate``: the same walk, as an async iterator (``async for``);
        a cancelled task stops it (no further page is requested)."""
        walk = self._walk(operation_id, params, max_pages, max_items, page_size)
        return self._apages(walk, operation_id, params)

    async def run_export(self, body: Mapping[str, Any] | bytes | None = None, *,
                         to: str | os.PathLike[str] | IO[bytes] | None = None, request_id: str | None = None,
                         max_polls: int | None = None, progress: Progress | bool | None = None,
                         max_poll_seconds: float | None = None, min_poll_interval_seconds: float | None = None,
                         max_poll_interval_seconds: float | None = None, on_checkpoint: OnCheckpoint | None = None,
                         resume: str | None = None) -> ExportResult:
        """See ``ReportsClient.run_export``. A cancelled task (``asyncio.CancelledError``, which is
        how ``asyncio.run`` passes on Ctrl-C, and how ``asyncio.timeout`` and ``wait_for`` end
        it) removes the temporary file and lets the task's own ``CancelledError`` go on
        unchanged, so asyncio's timeouts and task groups behave as ever; it carries the job:
        ``royaltykit.export_interruption(e)`` (also on the ``TimeoutError`` raised from it) gives
        the ``export_id`` and the ``checkpoint`` to resume from, and a note on it says so.
        ``on_checkpoint`` may be an ``async def``: each checkpoint is awaited before the request
        or pause it precedes."""
        return await self._arun(*self._export(body, resume, on_checkpoint, to, progress, request_id=request_id,
                                              max_polls=max_polls, max_poll_seconds=max_poll_seconds,
                                              min_poll_interval_seconds=min_poll_interval_seconds,
                                              max_poll_interval_seconds=max_poll_interval_seconds))


class _Enterprise(_Base):
    _api = "enterprise"

    def __init__(self, http: Any, *, base_url: str, api_key: str, api_secret: str, budget: RateBudget | None = None,
                 timeout: float | None = None, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] | None = None, seed: Callable[[], int] | None = None,
                 session: Session | None = None, allow_insecure_http: bool = False, max_attempts: int | None = None,
                 max_elapsed_seconds: float | None = None, on_event: OnEvent | None = None,
                 connect_timeout: float | None = None, read_timeout: float | None = None,
                 telemetry: ClientTelemetry | None = None, fleet: RedisFleet | None = None) -> None:
        if session is None and budget is None:
            budget = RateBudget.preset("enterprise")
        super().__init__(http, base_url, budget=budget, timeout=timeout, clock=clock, sleep=sleep, seed=seed,
                         session=session, allow_insecure_http=allow_insecure_http, max_attempts=max_attempts,
                         max_elapsed_seconds=max_elapsed_seconds, on_event=on_event, connect_timeout=connect_timeout,
                         read_timeout=read_timeout, telemetry=telemetry, fleet=fleet)
        self._credentials = (api_key, api_secret)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def _token_request(self) -> RequestDescriptor:
        return build_enterprise_token_request(*self._credentials)

    def _parse_token(self, status: int, headers: list[tuple[str, str]], body: bytes) -> Any:
        return parse_enterprise_token_response(status, headers, body, now=self._clock())

    @staticmethod
    def _resource_params(resource: Any, user_id: str | None) -> dict[str, Any]:
        """The canonical fetch's params: the event's ``resource_url`` (from a ``VerifiedWebhook``,
        a ``WebhookEvent`` or the URL itself), checked by the core when the request is built."""
        event = getattr(resource, "event", resource)
        url = getattr(event, "resource_url", event)
        if not isinstance(url, str):
            raise TypeError("fetch_resource takes a VerifiedWebhook, a WebhookEvent or its resource_url (a str)")
        params: dict[str, Any] = {"path": {"resource": url}}
        if user_id is not None:
            params["user_id"] = user_id
        return params

    def _subscription_params(self, name: str, endpoint_url: str, events: Sequence[str], request_id: str | None
                             ) -> dict[str, Any]:
        """``createEnterpriseWebhook``'s params: the JSON body ``{"name", "endpoint_url",
        "events"}`` and, given ``request_id``, the id its idempotency key is derived from, scoped
        to the organization, named by the client's API key (hashed into the key by the core,
        never sent as it is): every process and language holding that key derives the same
        ``Idempotency-Key`` for the same ``request_id``."""
        for argument, value in (("name", name), ("endpoint_url", endpoint_url)):
            if not isinstance(value, str):
                raise TypeError(f"{argument} must be a str, not {type(value).__name__}")
        if isinstance(events, (str, bytes)):
            raise TypeError("events must be a sequence of event names (str), not one str")
        names = list(events)
        if not all(isinstance(e, str) for e in names):
            raise TypeError("events must be a sequence of event names (str)")
        params: dict[str, Any] = {"body": {"name": name, "endpoint_url": endpoint_url, "events": names}}
        if request_id is not None:
            params.update(request_id=request_id, key_namespace=self._credentials[0])
        return params

    @staticmethod
    def _rotation_params(reference: str) -> dict[str, Any]:
        """``rotateEnterpriseWebhookSecret``'s params: the subscription's ``reference``."""
        if not isinstance(reference, str):
            raise TypeError(f"reference must be a str, not {type(reference).__name__}")
        return {"path": {"reference": reference}}

    # ---- delivery recovery: a Recovery run, each page and each replay one request() ----

    def _recovery(self, subscription: str, store: Any, namespace: str, since: float | datetime,
                  now: float | datetime | None, max_replays: int | None, max_replays_per_delivery: int | None,
                  max_entries: int | None) -> Recovery:
        """The run, checked now (before any request); ``now`` defaults to the client's clock."""
        if not callable(getattr(store, "state", None)):
            raise TypeError("store must have state(key) (royaltykit.DeliveryStates): the store the receiver uses, "
                            "such as a DedupWindow, a RedisDedupStore or a store of royaltykit.stores")
        return Recovery(subscription, namespace, since, self._clock() if now is None else now,
                        max_replays=max_replays, max_replays_per_delivery=max_replays_per_delivery,
                        max_entries=max_entries)

    @staticmethod
    def _recovery_steps(run: Recovery, subscription: str) -> Generator[Any, Any, RecoveryReport]:
        """The run's loop, once for both clients: yields ``("request", operation_id, params)`` (sent
        back the ``Response``, or its exception thrown in) and ``("state", key)`` (sent back the
        store's state). Every decision is the run's; a replay's request that raised the library's
        own error is reported to it and the run goes on, anything else is raised."""
        path = {"reference": subscription}
        while True:
            match run.next():
                case RecoveryStep.Fetch(query=query):
                    page = yield ("request", Recovery.LIST_DELIVERIES, {"path": path, "query": query})
                    run.page(page.body)
                case RecoveryStep.Check(keys=keys):
                    states = []
                    for key in keys:
                        states.append((yield ("state", key)))
                    run.checked(states)
                case RecoveryStep.Replay(delivery=delivery):
                    try:
                        answer = yield ("request", Recovery.REPLAY_DELIVERY,
                                        {"path": {**path, "deliveryReference": delivery}})
                    except RoyaltyKitError as e:
                        run.replay_failed(e.code)
                    else:
                        run.replayed(answer.body)
                case RecoveryStep.Done(report=report):
                    return report
                case RecoveryStep.Fail(error=error):
                    raise error


class EnterpriseClient(_Enterprise):
    """The enterprise organization API over ``httpx.Client`` or ``requests.Session``: the key and
    secret exchanged for a token, the spec's rolling one-minute limits kept (``budget``, default
    ``RateBudget.preset("enterprise")``), retries and ``Retry-After`` as the spec says. Its calls
    share its ``session`` (one token exchange at a time, one budget); give the clients of one API
    key one ``Session(RateBudget.preset("enterprise"))`` with ``session=``. Across processes, give
    each process's client ``fleet=RedisFleet(redis.Redis(...))`` (one Redis): its session is then
    the fleet's (``fleet.session(budget)``), so the processes keep the per-minute limits together
    and make one token exchange for all (see :class:`RedisFleet`). Blocking."""

    def request(self, operation_id: str, **params: Any) -> Any:
        """See ``ReportsClient.request``."""
        return self._run(*self._request_steps(operation_id, params))

    def request_raw(self, operation_id: str, **params: Any) -> Response:
        """See ``ReportsClient.request_raw``."""
        return cast(Response, self._run(*self._request_steps(operation_id, params, raw=True)))

    def paginate(self, operation_id: str, *, max_pages: int | None = None, max_items: int | None = None,
                 page_size: int | None = None, **params: Any) -> Iterator[Any]:
        """See ``ReportsClient.paginate`` (the enterprise subscriptions: numbered pages)."""
        walk = self._walk(operation_id, params, max_pages, max_items, page_size)
        return self._pages(walk, operation_id, params)

    def fetch_resource(self, resource: Any, *, user_id: str | None = None) -> Any:
        """The canonical fetch of the consumer workflow: the current state of the resource a
        webhook event names (``resource``: a ``VerifiedWebhook``, a ``WebhookEvent`` or its
        ``resource_url``), with the client's bearer token and, given ``user_id``, ``X-User-Id``.
        The core checks that the URL is a path under the enterprise API and raises
        ``RequestBuildError`` ``invalid_resource_url`` before any request otherwise, so the token
        goes nowhere else. Returns the parsed 2xx body, as ``request`` does."""
        return self.request("fetchEnterpriseResource", **self._resource_params(resource, user_id))

    def create_subscription(self, name: str, endpoint_url: str, events: Sequence[str], *,
                            request_id: str | None = None) -> RevealedSecret:
        """Creates a webhook subscription (``createEnterpriseWebhook``, one operation through
        ``request``'s path: the session's token, retries, ``Retry-After``, rate budget, events
        and telemetry) with the JSON body ``{"name", "endpoint_url", "events"}``, and returns its
        signing secret as a ``RevealedSecret`` (``reference``, ``record``: the answer without
        the secret). The service shows the secret once, in this answer only: store
        ``.secret.secret`` now (a secret lost can only be replaced by ``rotate_secret``);
        ``.secrets()`` is what the receiver verifies with. The core checks ``endpoint_url``
        before the create is sent (HTTPS, no user-info, no private or loopback address:
        ``RequestBuildError`` ``invalid_endpoint_url`` otherwise). The create carries an
        ``Idempotency-Key`` (one per call, the same on its retries; given ``request_id``, derived
        from it and the client's API key, so the same in every process and language): a create
        whose answer was lost is sent again with that key and the service answers with the same
        subscription and secret, never a second one. The raw 2xx body goes to
        ``revealed_secret`` alone: the secret is in no event, log line, telemetry or error.
        Raises as ``request`` does, and ``WebhookVerificationError`` (``secret_not_revealed``)
        when the answer names no secret (the subscription exists then: rotate its secret)."""
        return self._run(*self._reveal_steps("createEnterpriseWebhook", self._subscription_params(
            name, endpoint_url, events, request_id)))

    def rotate_secret(self, reference: str) -> RevealedSecret:
        """Rotates the signing secret of the subscription ``reference``
        (``rotateEnterpriseWebhookSecret``, one operation through ``request``'s path) and returns
        the new one as a ``RevealedSecret`` whose ``previous_valid_until`` says until when the
        service also signs deliveries with the previous secret. The new secret is shown once:
        store ``.secret.secret`` now, and give the receiver ``.secrets(previous=<the secret held
        until now>)``, which stops accepting the previous one at ``previous_valid_until``. A
        rotation that may have been applied (a timeout, a lost connection, a 5xx after it was
        sent) is never sent again: ``ReconcileRequired`` with ``reconcile == "rotate_again"``
        (its secret was shown once and is lost: rotate again at once, keeping the current secret
        until then). The raw 2xx body goes to ``revealed_secret`` alone: the secret is in no
        event, log line, telemetry or error. Raises as ``request`` does, and
        ``WebhookVerificationError`` (``secret_not_revealed``) when the answer names no secret."""
        return self._run(*self._reveal_steps("rotateEnterpriseWebhookSecret", self._rotation_params(reference)))

    def recover_deliveries(self, subscription: str, *, store: DeliveryStates, namespace: str,
                           since: float | datetime, now: float | datetime | None = None,
                           max_replays: int | None = None, max_replays_per_delivery: int | None = None,
                           max_entries: int | None = None) -> RecoveryReport:
        """Delivery recovery for the webhook subscription ``subscription`` ("keep periodic
        reconciliation until event delivery is proven"): reads its delivery log
        (``listEnterpriseWebhookDeliveries``), looks each delivery from ``since`` on up in
        ``store`` — the store your receiver uses, with the receiver's ``namespace`` — without
        claiming it (``store.state(key)``: :class:`~royaltykit.DeliveryStates`; every built-in store
        has it), and replays (``replayEnterpriseWebhookDelivery``) those never processed; the
        receiver then processes each replay as a new delivery. Safe to run periodically: a
        delivery processed (or whose replay was), being processed, still attempted by the service,
        or whose replay is still pending is left alone; one the service delivered but the store
        does not know is reported ``unrecorded``, never replayed. Every decision is the core's
        ``Recovery`` (see ``RecoveredDelivery.action``); each page and each replay is one request
        through ``request``'s own path (the session's token, retries, ``Retry-After``, rate budget,
        events and telemetry). A replay is an unsafe create: one that may have been applied is
        never sent again (its ``ReconcileRequired``), and a replay that raised the library's own
        error (``CallFailedError``, ``ReconcileRequired``, an ``ApiError`` such as 404) is reported
        ``replay_failed`` with that error's ``code`` while the run goes on; the next run looks
        again. ``since`` and ``now`` are Unix seconds or aware datetimes (``now`` defaults to the
        client's clock); ``max_replays`` bounds the replays sent (default
        ``Recovery.DEFAULT_MAX_REPLAYS``; the rest are ``deferred``), ``max_replays_per_delivery``
        the failed replays of one delivery before it is left alone (``replay_limit``), and
        ``max_entries`` the log entries read (``report.end == "max_items"`` when it cut the log).
        Returns the ``RecoveryReport``. ``InvalidArgumentError`` before any request for an empty
        subscription or namespace, a bad ``since``/``now`` or a bound of 0; ``TypeError`` for a
        store without ``state``; ``request``'s errors while the log is read, and
        ``PaginationError`` when it cannot be read on (nothing was replayed then); a store's own
        exception is raised as is. Interruption (``KeyboardInterrupt``) stops the run at once."""
        steps = self._recovery_steps(self._recovery(subscription, store, namespace, since, now, max_replays,
                                                    max_replays_per_delivery, max_entries), subscription)
        try:
            action = next(steps)
            while True:
                try:
                    if action[0] == "state":
                        result = _state_now(store.state(action[1]))
                    else:
                        result = self._run(*self._request_steps(action[1], action[2], raw=True))
                except Exception as e:  # noqa: BLE001 (the run says which it reports; the rest is raised)
                    action = steps.throw(e)
                else:
                    action = steps.send(result)
        except StopIteration as end:
            return cast(RecoveryReport, end.value)
        finally:
            steps.close()


class AsyncEnterpriseClient(_Enterprise):
    """``EnterpriseClient`` for ``httpx.AsyncClient`` (and ``fleet=AsyncRedisFleet(redis.asyncio.Redis(...))``)."""

    _async = True

    async def request(self, operation_id: str, **params: Any) -> Any:
        """See ``ReportsClient.request``."""
        return await self._arun(*self._request_steps(operation_id, params))

    async def request_raw(self, operation_id: str, **params: Any) -> Response:
        """See ``ReportsClient.request_raw``."""
        return cast(Response, await self._arun(*self._request_steps(operation_id, params, raw=True)))

    def paginate(self, operation_id: str, *, max_pages: int | None = None, max_items: int | None = None,
                 page_size: int | None = None, **params: Any) -> AsyncIterator[Any]:
        """See ``AsyncReportsClient.paginate``."""
        walk = self._walk(operation_id, params, max_pages, max_items, page_size)
        return self._apages(walk, operation_id, params)

    async def fetch_resource(self, resource: Any, *, user_id: str | None = None) -> Any:
        """See ``EnterpriseClient.fetch_resource``."""
        return await self.request("fetchEnterpriseResource", **self._resource_params(resource, user_id))

    async def create_subscription(self, name: str, endpoint_url: str, events: Sequence[str], *,
                                  request_id: str | None = None) -> RevealedSecret:
        """See ``EnterpriseClient.create_subscription``: the secret is shown once (store it now);
        a create whose answer was lost is sent again with the same ``Idempotency-Key``, never a
        second subscription."""
        return await self._arun(*self._reveal_steps("createEnterpriseWebhook", self._subscription_params(
            name, endpoint_url, events, request_id)))

    async def rotate_secret(self, reference: str) -> RevealedSecret:
        """See ``EnterpriseClient.rotate_secret``: the new secret is shown once (store it now;
        the receiver takes ``secrets(previous=...)``); a rotation that may have been applied
        raises ``ReconcileRequired`` (``rotate_again``) and is never sent again."""
        return await self._arun(*self._reveal_steps("rotateEnterpriseWebhookSecret",
                                                    self._rotation_params(reference)))

    async def recover_deliveries(self, subscription: str, *, store: DeliveryStates | AsyncDeliveryStates,
                                 namespace: str, since: float | datetime, now: float | datetime | None = None,
                                 max_replays: int | None = None, max_replays_per_delivery: int | None = None,
                                 max_entries: int | None = None) -> RecoveryReport:
        """See ``EnterpriseClient.recover_deliveries``: the same run; ``store.state`` may be a
        coroutine (:class:`~royaltykit.AsyncRedisDedupStore`,
        :class:`~royaltykit.stores.AsyncPostgresDedupStore`), and is awaited. A cancelled task
        stops the run at once (its ``CancelledError`` goes on unchanged)."""
        steps = self._recovery_steps(self._recovery(subscription, store, namespace, since, now, max_replays,
                                                    max_replays_per_delivery, max_entries), subscription)
        try:
            action = next(steps)
            while True:
                try:
                    if action[0] == "state":
                        result = store.state(action[1])
                        if inspect.isawaitable(result):
                            result = await result
                    else:
                        result = await self._arun(*self._request_steps(action[1], action[2], raw=True))
                except Exception as e:  # noqa: BLE001 (the run says which it reports; the rest is raised)
                    action = steps.throw(e)
                else:
                    action = steps.send(result)
        except StopIteration as end:
            return cast(RecoveryReport, end.value)
        finally:
            steps.close()
