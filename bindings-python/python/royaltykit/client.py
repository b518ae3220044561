"""Clients of both APIs over the HTTP library you already use: httpx (``httpx.Client``,
``httpx.AsyncClient``) or requests (``requests.Session``).

Every rule is the core's: each request is a ``Call`` machine (retries, ``Retry-After``, token
refresh, idempotency key, rate budget) and an export is an ``ExportJob`` (create, poll, download;
a create that may have been applied is looked up, never sent twice), and the calls of one client
share its ``Session`` (the token, one token exchange at a time, the rate budget). This module only
performs the steps: it sends (never following a redirect, whatever the HTTP client is set to do),
sleeps, exchanges tokens, wakes the calls waiting for one, and tells the machine which transport
failure happened, mapping each HTTP library's exceptions:

- ``connect_failed`` only when nothing can have been sent (a refused connection, a connect or
  pool timeout);
- ``timeout`` when the response did not come in time (the request may have been applied);
- ``connection_lost`` for every other broken connection (reset, closed early, truncated body).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO, Any, Callable, Generator, Mapping, TypeVar, cast

from ._native import (
    Call,
    CallStep,
    ExportJob,
    RateBudget,
    RequestDescriptor,
    Session,
    build_enterprise_token_request,
    build_token_request,
    call_failed_message,
    check_base_url,
    parse_enterprise_token_response,
    parse_token_response,
)
from .errors import CallFailedError, ReconcileRequired

_T = TypeVar("_T")

__all__ = ["ReportsClient", "AsyncReportsClient", "EnterpriseClient", "AsyncEnterpriseClient", "ExportResult", "Response"]

# progress(received bytes, total bytes or None), called as an artifact arrives
Progress = Callable[[int, "int | None"], None]
# on_event(event): each of the machines' events (the core's MachineEvent, as a dict)
OnEvent = Callable[[dict[str, Any]], None]

_log = logging.getLogger("royaltykit")
# ROYALTYKIT_LOG=debug|info: the clients' events on stderr, for a job run by hand.
if os.environ.get("ROYALTYKIT_LOG", "").lower() in ("debug", "info") and not _log.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    _log.addHandler(_handler)
    _log.setLevel(logging.DEBUG if os.environ["ROYALTYKIT_LOG"].lower() == "debug" else logging.INFO)

# The level each event is logged at: the requests themselves at DEBUG, what a person running a
# job wants to see (waits, retries, token refreshes, polls, a lost create looked up) at INFO, a
# call that failed and a deprecated operation at WARNING (a failure's exception follows, unless
# an export job recovers).
_LEVELS = {"send": logging.DEBUG, "response": logging.DEBUG, "done": logging.DEBUG, "fail": logging.WARNING,
           "notice": logging.WARNING}


def _event_text(e: dict[str, Any]) -> str:
    """One line for a log: ``retry listPlatformExports #1: 503, wait 2.1 s (server_error_retry)``."""
    parts = [f"{e['kind']} {e['operation']} #{e['attempt']}"]
    details = [str(v) for v in (e.get("method"), e.get("path"), e.get("status"), e.get("transport"), e.get("state"))
               if v is not None]
    if e.get("wait_seconds") is not None:
        details.append(f"wait {e['wait_seconds']:.3g} s")
    if e.get("rule"):
        details.append(f"({e['rule']})")
    if e["kind"] == "notice" and e.get("reason"):
        details.append(e["reason"])
    return parts[0] + (": " + " ".join(details) if details else "")


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
    afresh. Errors of the disk name ``to``, never the temporary file."""

    def __init__(self, to: str | os.PathLike[str] | IO[bytes] | None, progress: Progress | None) -> None:
        self.to, self.progress, self.length = to, progress, 0
        self.total: int | None = None
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
    """A send that got no response: the core's transport failure and the HTTP library's error."""

    __slots__ = ("kind", "error")

    def __init__(self, kind: str, error: BaseException) -> None:
        self.kind, self.error = kind, error


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
    def __init__(self, http: Any, base_url: str, timeout: float | None) -> None:
        self.http, self.base, self.timeout = http, base_url, timeout

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
    def _stream(self, r: RequestDescriptor) -> Any:
        # follow_redirects=False on every request: a client built to follow them would carry the
        # API key and secret (or the bearer token) to another origin.
        kw: dict[str, Any] = {"headers": r.headers, "content": r.body, "follow_redirects": False}
        if self.timeout is not None:
            kw["timeout"] = self.timeout
        return self.http.stream(r.method, r.url(self.base), **kw)

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
            with self._stream(r) as resp:
                headers = list(resp.headers.multi_items())
                sink = stream(resp.status_code) if stream else None
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
            async with self._stream(r) as resp:
                headers = list(resp.headers.multi_items())
                sink = stream(resp.status_code) if stream else None
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
            with self.http.request(r.method, r.url(self.base), headers=dict(r.headers), data=r.body,
                                   timeout=self.timeout, stream=True, allow_redirects=False) as resp:
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


def _transport(http: Any, base_url: str, timeout: float | None, asynchronous: bool) -> Any:
    module = type(http).__module__.split(".")[0]
    if module == "httpx":
        import httpx

        if asynchronous != isinstance(http, httpx.AsyncClient):
            raise TypeError("use httpx.AsyncClient with the Async clients and httpx.Client with the others")
        return (_AsyncHttpx if asynchronous else _Httpx)(http, base_url, timeout)
    if module == "requests" and not asynchronous:
        return _Requests(http, base_url, timeout)
    raise TypeError(f"http must be an httpx.Client, httpx.AsyncClient or requests.Session, not {type(http).__name__}")


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


class _Base:
    """What both APIs' clients share: the machines' loop, as a generator whose yields are the I/O
    (``("send", request, stream)`` → the outcome, ``("sleep", seconds)``, ``("await", seconds,
    version)`` until the session changes), run by ``_run`` (blocking) or ``_arun`` (asyncio)."""

    _async = False

    def __init__(self, http: Any, base_url: str, *, budget: RateBudget | None, timeout: float | None,
                 clock: Callable[[], float], sleep: Callable[[float], Any] | None, seed: Callable[[], int] | None,
                 session: Session | None = None, allow_insecure_http: bool = False,
                 max_attempts: int | None = None, max_elapsed_seconds: float | None = None,
                 on_event: OnEvent | None = None) -> None:
        asynchronous = self._async
        if on_event is not None and not callable(on_event):
            raise TypeError("on_event must be callable: on_event(event)")
        self._on_event = on_event
        # A wrong base URL fails here, before any request, not after a minute of retries.
        self._transport = _transport(http, check_base_url(base_url, allow_insecure_http), timeout, asynchronous)
        if session is not None and budget is not None:
            raise TypeError("give budget or session, not both: a session keeps its own budget")
        # The calls of this client share one session: one token exchange at a time, one budget.
        self.session: Session = session if session is not None else Session(budget)
        # Each request's bounds (None: the core's defaults, 5 attempts and 300 s).
        self._limits = _limits(max_attempts, max_elapsed_seconds)
        self._clock = clock
        self._sleep: Callable[[float], Any] = sleep or (asyncio.sleep if asynchronous else time.sleep)
        self._seed = seed or (lambda: int.from_bytes(os.urandom(8), "little"))
        # Wakes the calls waiting for the session's token exchange: a condition for threads, the
        # waiting tasks' futures on an event loop.
        self._changed = threading.Condition()
        self._waiters: set[asyncio.Future[None]] = set()

    def with_options(self: _C, *, max_attempts: int | None | _Unset = _UNSET,
                     max_elapsed_seconds: float | None | _Unset = _UNSET,
                     timeout: float | None | _Unset = _UNSET) -> _C:
        """This client with other bounds for the calls made through the copy (``None``: the core's
        default): the most attempts of each request (5), the most seconds of its retries (300),
        the seconds to wait for a response. The copy shares the HTTP client, the credentials and
        the session (the token, its one exchange, the budget)::

            client.with_options(max_attempts=2, timeout=5).request("listPlatformExports")
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
        if not isinstance(timeout, _Unset):
            other._transport = copy.copy(self._transport)
            other._transport.timeout = timeout
        return other

    def _emit(self, machine: Any) -> None:
        """The machine's events since the last step: to the ``royaltykit`` logger and ``on_event``."""
        for e in machine.take_events():
            level = _LEVELS.get(e["kind"], logging.INFO)
            if _log.isEnabledFor(level):
                _log.log(level, "%s", _event_text(e))
            if self._on_event is not None:
                self._on_event(e)

    def _wake(self) -> None:
        """The session changed: every call waiting on it asks again."""
        with self._changed:
            self._changed.notify_all()
        for f in self._waiters:
            if not f.done():
                f.set_result(None)

    def _token_request(self) -> RequestDescriptor:
        raise NotImplementedError

    def _parse_token(self, status: int, headers: list[tuple[str, str]], body: bytes) -> Any:
        raise NotImplementedError

    def _steps(self, machine: Any, operation_id: str | None = None,
               sink: _Sink | None = None) -> Generator[Any, Any, Any]:
        """Drives ``machine`` to its end: returns the ``Done`` step, raises for the others. A body
        the machine says to stream goes into ``sink``."""

        def stream(status: int) -> _Sink | None:
            return sink if sink is not None and machine.streams(status) else None

        session = self.session
        # The HTTP library's error of the last send when it got no response: the cause of a
        # CallFailedError.
        cause: BaseException | None = None
        while True:
            version = session.version
            step = machine.next(self._clock(), session=session)
            self._emit(machine)
            match step:
                case CallStep.Send(request=request):
                    outcome = yield ("send", request, stream)
                    cause = outcome.error if isinstance(outcome, _Failed) else None
                    if cause is not None:
                        machine.transport_failure(outcome.kind, self._clock())
                    elif isinstance(outcome[2], int):
                        machine.streamed_response(*outcome, self._clock())
                    else:
                        machine.response(*outcome, self._clock())
                case CallStep.Wait(seconds=seconds):
                    yield ("sleep", seconds)
                case CallStep.AwaitToken(seconds=seconds):
                    yield ("await", seconds, version)
                case CallStep.RefreshToken():
                    # This call leads the session's one exchange; the others wait for it.
                    try:
                        exchange = Call.exchange(self._token_request(), seed=self._seed(), **self._limits)
                        done = yield from self._steps(exchange, "token exchange")
                        session.store_token(self._parse_token(done.status, done.headers, done.body))
                    except Exception as e:
                        session.exchange_failed(str(e))
                        raise
                    except BaseException:  # cancelled, interrupted, or the steps closed
                        session.abandon_exchange()
                        raise
                    finally:
                        self._wake()
                case CallStep.Done():
                    return step
                case CallStep.Reconcile(reconcile=hint, reason=reason, candidates=candidates, stage=stage):
                    raise ReconcileRequired("reconcile_required", reason, reconcile=hint, operation_id=operation_id,
                                            reason=reason, candidates=list(candidates), stage=stage)
                case CallStep.Fail() as f:
                    if f.error is not None:
                        raise f.error
                    message = call_failed_message(operation_id or "call", self._transport.base, f.reason, f.attempts,
                                                  None if cause is None else _describe(cause))
                    raise CallFailedError("call_failed", message, rule=f.rule, reason=f.reason, transport=f.transport,
                                          status=f.status, retry_after_seconds=f.retry_after_seconds,
                                          operation_id=operation_id, stage=f.stage, export_id=f.export_id,
                                          attempts=f.attempts) from cause

    # Both close the steps on the way out, so an export's temporary file goes at once when a
    # send raises (a disk error, a progress callback's exception, a cancellation).
    def _run(self, steps: Generator[Any, Any, _T]) -> _T:
        changed, session = self._changed, self.session
        try:
            action = next(steps)
            while True:
                match action:
                    case ("sleep", seconds):
                        self._sleep(seconds)
                        result = None
                    case ("await", seconds, version):
                        with changed:
                            changed.wait_for(lambda: session.version != version, timeout=seconds)
                        result = None
                    case _:
                        result = self._transport.send(action[1], action[2])
                action = steps.send(result)
        except StopIteration as end:
            return cast(_T, end.value)
        finally:
            steps.close()

    async def _arun(self, steps: Generator[Any, Any, _T]) -> _T:
        session = self.session
        try:
            action = next(steps)
            while True:
                match action:
                    case ("sleep", seconds):
                        await self._sleep(seconds)
                        result = None
                    case ("await", seconds, version):
                        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                        self._waiters.add(woken)
                        try:
                            if session.version == version:
                                await asyncio.wait_for(woken, seconds)
                        except asyncio.TimeoutError:
                            pass
                        finally:
                            self._waiters.discard(woken)
                        result = None
                    case _:
                        result = await self._transport.send(action[1], action[2])
                action = steps.send(result)
        except StopIteration as end:
            return cast(_T, end.value)
        finally:
            steps.close()

    def _call(self, operation_id: str, params: Mapping[str, Any], raw: bool = False) -> Generator[Any, Any, Any]:
        call = Call(operation_id, seed=self._seed(), **self._limits, **params)
        done = yield from self._steps(call, operation_id)
        if raw:
            return Response(done.status, list(done.headers), bytes(done.body), _parsed(done))
        return _parsed(done)

    def _request_steps(self, operation_id: str, params: dict[str, Any], raw: bool = False) -> Generator[Any, Any, Any]:
        return self._call(operation_id, params, raw)


def _parsed(done: Any) -> Any:
    """A 2xx body: parsed when the core calls it JSON, else the bytes (an artifact); None when empty."""
    if not done.body:
        return None
    return json.loads(done.body) if done.json else done.body


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
    def __init__(self, http: Any, *, base_url: str, client_id: str, client_secret: str, tenant_id: str,
                 scopes: list[str] | None = None, idempotency_header: str | None = None, budget: RateBudget | None = None,
                 timeout: float | None = 30.0, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] | None = None, seed: Callable[[], int] | None = None,
                 session: Session | None = None, allow_insecure_http: bool = False, max_attempts: int | None = None,
                 max_elapsed_seconds: float | None = None, on_event: OnEvent | None = None) -> None:
        super().__init__(http, base_url, budget=budget, timeout=timeout, clock=clock, sleep=sleep, seed=seed,
                         session=session, allow_insecure_http=allow_insecure_http, max_attempts=max_attempts,
                         max_elapsed_seconds=max_elapsed_seconds, on_event=on_event)
        self._credentials = (client_id, client_secret)
        self.tenant_id = tenant_id
        self._scopes = scopes
        self._idempotency_header = idempotency_header

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tenant_id={self.tenant_id!r})"

    def _token_request(self) -> RequestDescriptor:
        return build_token_request(*self._credentials, self.tenant_id, self._scopes)

    def _parse_token(self, status: int, headers: list[tuple[str, str]], body: bytes) -> Any:
        return parse_token_response(status, headers, body, tenant_id=self.tenant_id, requested_scopes=self._scopes,
                                    now=self._clock())

    def _request_steps(self, operation_id: str, params: dict[str, Any], raw: bool = False) -> Generator[Any, Any, Any]:
        params.setdefault("tenant_id", self.tenant_id)
        if self._idempotency_header is not None:
            params.setdefault("idempotency_header", self._idempotency_header)
        return self._call(operation_id, params, raw)

    def _export_steps(self, body: Mapping[str, Any] | bytes, to: Any, request_id: str | None, max_polls: int | None,
                      progress: Progress | bool | None, max_poll_seconds: float | None = None
                      ) -> Generator[Any, Any, ExportResult]:
        job = ExportJob(tenant_id=self.tenant_id, body=body, request_id=request_id, max_poll_seconds=max_poll_seconds,
                        idempotency_header=self._idempotency_header, max_polls=max_polls, seed=self._seed(),
                        **self._limits)
        sink = _Sink(to, _progress(progress))
        try:
            done = yield from self._steps(job, "export job", sink)
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
    and ``max_elapsed_seconds`` bound each request's retries (default: the core's, 5 and 300 s);
    ``timeout`` is the seconds to wait for a response (30); ``with_options`` changes them for
    the calls made through a copy. Each send, response, retry (its rule and wait), token
    refresh, rate-budget wait, poll and end is an event (the core's ``MachineEvent``, as a
    dict): logged to the ``royaltykit`` logger (``ROYALTYKIT_LOG=debug|info`` prints them) and
    given to ``on_event``; never a token, a credential, a header or a body.
    ``clock``, ``sleep`` and ``seed`` are for tests. Blocking: use it off your event loop."""

    def request(self, operation_id: str, **params: Any) -> Any:
        """Performs one operation (``path=``, ``query=``, ``body=``, ``request_id=``, … as for
        ``Call``): the parsed JSON body, the bytes of an artifact, or None. Raises ``ApiError``
        for an error response that retrying cannot fix, ``ReconcileRequired`` when a request
        may have been applied, ``CallFailedError`` when the attempts ran out without a response."""
        return self._run(self._request_steps(operation_id, params))

    def request_raw(self, operation_id: str, **params: Any) -> Response:
        """``request``, returning the whole ``Response``: status, headers, body and the parsed data."""
        return cast(Response, self._run(self._request_steps(operation_id, params, raw=True)))

    def run_export(self, body: Mapping[str, Any] | bytes, *, to: str | os.PathLike[str] | IO[bytes] | None = None,
                   request_id: str | None = None, max_polls: int | None = None,
                   progress: Progress | bool | None = None, max_poll_seconds: float | None = None) -> ExportResult:
        """Creates an export from ``body`` (the CreateExportRequest), waits for it and downloads
        the complete artifact to ``to`` (a path, written whole or not at all, or a binary file),
        or into ``ExportResult.data``. The artifact is streamed to a temporary file as it
        arrives (never held in memory when ``to`` is a path); only a whole one reaches ``to``.
        ``progress(received, total)`` is called as bytes arrive; ``progress=True`` draws a bar
        on stderr when it is a terminal.
        A create that may have been applied is looked up, never sent twice: when the list cannot
        tell, ``ReconcileRequired`` is raised with the ``candidates`` that may be the job's own.
        ``max_polls`` and ``max_poll_seconds`` bound the polling (reads, seconds)."""
        return self._run(self._export_steps(body, to, request_id, max_polls, progress, max_poll_seconds))


class AsyncReportsClient(_Reports):
    """``ReportsClient`` for ``httpx.AsyncClient``: the same rules, ``await``-ed."""

    _async = True

    async def request(self, operation_id: str, **params: Any) -> Any:
        """See ``ReportsClient.request``."""
        return await self._arun(self._request_steps(operation_id, params))

    async def request_raw(self, operation_id: str, **params: Any) -> Response:
        """See ``ReportsClient.request_raw``."""
        return cast(Response, await self._arun(self._request_steps(operation_id, params, raw=True)))

    async def run_export(self, body: Mapping[str, Any] | bytes, *, to: str | os.PathLike[str] | IO[bytes] | None = None,
                         request_id: str | None = None, max_polls: int | None = None,
                         progress: Progress | bool | None = None, max_poll_seconds: float | None = None) -> ExportResult:
        """See ``ReportsClient.run_export``."""
        return await self._arun(self._export_steps(body, to, request_id, max_polls, progress, max_poll_seconds))


class _Enterprise(_Base):
    def __init__(self, http: Any, *, base_url: str, api_key: str, api_secret: str, budget: RateBudget | None = None,
                 timeout: float | None = 30.0, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] | None = None, seed: Callable[[], int] | None = None,
                 session: Session | None = None, allow_insecure_http: bool = False, max_attempts: int | None = None,
                 max_elapsed_seconds: float | None = None, on_event: OnEvent | None = None) -> None:
        if session is None and budget is None:
            budget = RateBudget.preset("enterprise")
        super().__init__(http, base_url, budget=budget, timeout=timeout, clock=clock, sleep=sleep, seed=seed,
                         session=session, allow_insecure_http=allow_insecure_http, max_attempts=max_attempts,
                         max_elapsed_seconds=max_elapsed_seconds, on_event=on_event)
        self._credentials = (api_key, api_secret)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def _token_request(self) -> RequestDescriptor:
        return build_enterprise_token_request(*self._credentials)

    def _parse_token(self, status: int, headers: list[tuple[str, str]], body: bytes) -> Any:
        return parse_enterprise_token_response(status, headers, body, now=self._clock())


class EnterpriseClient(_Enterprise):
    """The enterprise organization API over ``httpx.Client`` or ``requests.Session``: the key and
    secret exchanged for a token, the spec's rolling one-minute limits kept (``budget``, default
    ``RateBudget.preset("enterprise")``), retries and ``Retry-After`` as the spec says. Its calls
    share its ``session`` (one token exchange at a time, one budget); give the clients of one API
    key one ``Session(RateBudget.preset("enterprise"))`` with ``session=``. Blocking."""

    def request(self, operation_id: str, **params: Any) -> Any:
        """See ``ReportsClient.request``."""
        return self._run(self._request_steps(operation_id, params))

    def request_raw(self, operation_id: str, **params: Any) -> Response:
        """See ``ReportsClient.request_raw``."""
        return cast(Response, self._run(self._request_steps(operation_id, params, raw=True)))


class AsyncEnterpriseClient(_Enterprise):
    """``EnterpriseClient`` for ``httpx.AsyncClient``."""

    _async = True

    async def request(self, operation_id: str, **params: Any) -> Any:
        """See ``ReportsClient.request``."""
        return await self._arun(self._request_steps(operation_id, params))

    async def request_raw(self, operation_id: str, **params: Any) -> Response:
        """See ``ReportsClient.request_raw``."""
        return cast(Response, await self._arun(self._request_steps(operation_id, params, raw=True)))

