"""Connect and read timeouts and poll-interval bounds, per client and per call (issue 42, point 5),
from the installed wheel: the defaults are the core's, the values reach the HTTP library, a
server that never answers is a ``timeout``, a listener that never accepts is ``connect_failed``,
and each wait between two reads of a pending export is clamped."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx
import pytest
import requests
from requests.adapters import BaseAdapter

import royaltykit as rk
from fakeexports import ExportsApi
from royaltykit.client import AsyncReportsClient, EnterpriseClient, ReportsClient

TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
BODY = {"export_class": "statements", "format": "csv", "period": "2026-10"}
TOKEN = b'{"access_token":"tok","token_type":"Bearer","expires_in":3600}'


def reports(http, base_url: str = "http://127.0.0.1:9", cls=ReportsClient, **kw):
    return cls(http, base_url=base_url, client_id="cid", client_secret="csecret", tenant_id=TENANT, **kw)


class Seen:
    """What the HTTP library was told, per request: httpx's timeout extension or requests' timeout."""

    def __init__(self) -> None:
        self.timeouts: list[object] = []

    def httpx(self, request: httpx.Request) -> httpx.Response:
        self.timeouts.append(request.extensions["timeout"])
        if request.url.path.endswith("/oauth/token"):
            return httpx.Response(200, content=TOKEN, headers={"Content-Type": "application/json"})
        return httpx.Response(200, json={"data": [], "next_cursor": None})

    def requests_session(self) -> requests.Session:
        seen = self

        class Adapter(BaseAdapter):
            def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):  # type: ignore[override]
                seen.timeouts.append(timeout)
                r = requests.Response()
                r.status_code, r.request, r.url = 200, request, request.url
                r.headers["Content-Type"] = "application/json"
                import io

                r.raw = io.BytesIO(TOKEN if request.url.endswith("/oauth/token") else b'{"data":[],"next_cursor":null}')
                return r

            def close(self) -> None:
                pass

        s = requests.Session()
        s.mount("http://", Adapter())
        return s


def as_httpx(connect: float, read: float) -> dict[str, float]:
    return {"connect": connect, "read": read, "write": read, "pool": connect}


def test_the_defaults_are_the_core_s_and_reach_httpx_and_requests():
    connect, read = rk.client_timeouts()
    seen = Seen()
    with httpx.Client(transport=httpx.MockTransport(seen.httpx)) as http:
        client = reports(http)
        assert client.timeouts == (connect, read)
        client.request("listPlatformExports")
    assert seen.timeouts == [as_httpx(connect, read)] * 2  # the token exchange and the list
    seen = Seen()
    client = reports(seen.requests_session())
    client.request("listPlatformExports")
    assert seen.timeouts == [(connect, read)] * 2


def test_connect_and_read_per_client_and_per_call_with_timeout_as_the_read_s_older_name():
    seen = Seen()
    with httpx.Client(transport=httpx.MockTransport(seen.httpx)) as http:
        client = reports(http, connect_timeout=2.5, read_timeout=7.0)
        client.request("listPlatformExports")
        copy = client.with_options(connect_timeout=0.5)
        copy.request("listPlatformExports")
        assert copy.session is client.session and client.timeouts == (2.5, 7.0) and copy.timeouts == (0.5, 7.0)
        client.with_options(timeout=3.0).request("listPlatformExports")
        client.with_options(read_timeout=None).request("listPlatformExports")  # None: the core's default
        assert reports(http, timeout=4.0).timeouts == (rk.client_timeouts()[0], 4.0)
    assert seen.timeouts == [as_httpx(2.5, 7.0)] * 2 + [as_httpx(0.5, 7.0), as_httpx(2.5, 3.0),
                                                         as_httpx(2.5, rk.client_timeouts()[1])]
    seen = Seen()
    client = reports(seen.requests_session(), connect_timeout=1.5, read_timeout=6.0)
    client.with_options(read_timeout=2.0).request("listPlatformExports")
    assert seen.timeouts == [(1.5, 2.0)] * 2


@pytest.mark.parametrize("option", ["connect_timeout", "read_timeout", "timeout"])
@pytest.mark.parametrize("value", [0, -1.0, 86401.0, float("nan")])
def test_a_bad_timeout_fails_at_construction_naming_it(option, value):
    seen = Seen()
    with httpx.Client(transport=httpx.MockTransport(seen.httpx)) as http:
        with pytest.raises(rk.InvalidArgumentError) as info:
            reports(http, **{option: value})
        assert info.value.argument == ("connect_timeout" if option == "connect_timeout" else "read_timeout")
        with pytest.raises(rk.InvalidArgumentError):
            reports(http).with_options(**{option: value})
        with pytest.raises(TypeError, match="not both"):
            reports(http, timeout=1.0, read_timeout=2.0)
        with pytest.raises(TypeError, match="not both"):
            reports(http).with_options(timeout=1.0, read_timeout=2.0)
    assert seen.timeouts == []  # before any request


class Silent:
    """A loopback server that accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self.accepted = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            self.accepted += 1

    def close(self) -> None:
        self.sock.close()
        for c in self.held:
            c.close()


@pytest.mark.parametrize("kind", ["httpx", "async", "requests"])
def test_a_server_that_never_answers_is_a_read_timeout_retried_then_reported(kind):
    silent = Silent()
    try:
        kw = dict(read_timeout=0.2, max_attempts=2)
        if kind == "async":
            async def main() -> None:
                async with httpx.AsyncClient() as http:
                    await reports(http, silent.url, cls=AsyncReportsClient, **kw).request("listPlatformExports")

            with pytest.raises(rk.CallFailedError) as info:
                asyncio.run(main())
        else:
            with httpx.Client() if kind == "httpx" else requests.Session() as http:
                with pytest.raises(rk.CallFailedError) as info:
                    reports(http, silent.url, **kw).request("listPlatformExports")
    finally:
        silent.close()
    e = info.value
    # The token exchange never got an answer: sent twice, both timed out.
    assert (e.transport, e.attempts, e.rule) == ("timeout", 2, "attempts_exhausted"), vars(e)
    assert e.__cause__ is not None and "timeout" in type(e.__cause__).__name__.lower() + str(e.__cause__).lower()
    assert silent.accepted >= 1


def test_a_listener_that_never_accepts_is_a_connect_timeout():
    # A listener with a full backlog that never accepts: Linux drops the next SYN, so the connect
    # itself times out (nothing was sent: connect_failed).
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    fillers = []
    try:
        for _ in range(4):  # fill the accept queue
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(server.getsockname())
            fillers.append(s)
        time.sleep(0.1)  # let the handshakes complete (not an assert: only fills the queue)
        probe = socket.socket()
        probe.settimeout(0.3)
        try:
            probe.connect(server.getsockname())
            pytest.skip("this kernel completes connects beyond the backlog")  # never counted as passed
        except (TimeoutError, socket.timeout):
            pass
        finally:
            probe.close()
        with httpx.Client() as http:
            client = reports(http, url, connect_timeout=0.2, read_timeout=30.0, max_attempts=1)
            with pytest.raises(rk.CallFailedError) as info:
                client.request("listPlatformExports")
        assert info.value.transport == "connect_failed" and isinstance(info.value.__cause__, httpx.ConnectTimeout)
    finally:
        for s in fillers:
            s.close()
        server.close()


# ---- poll-interval bounds ------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.offset, self.waits = 0.0, []

    def __call__(self) -> float:
        return time.time() + self.offset

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.offset += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


@pytest.mark.parametrize("kind", ["httpx", "async"])
def test_each_wait_between_two_reads_is_clamped_by_the_client_s_bounds_or_the_call_s(kind, tmp_path):
    api = ExportsApi(pending=3)
    try:
        def export(client_kw: dict, call_kw: dict) -> list[float]:
            clock = Clock()
            kw = dict(clock=clock, sleep=clock.asleep if kind == "async" else clock.sleep, **client_kw)
            if kind == "async":
                async def main() -> None:
                    async with httpx.AsyncClient() as http:
                        await reports(http, api.url, cls=AsyncReportsClient, **kw).run_export(BODY, **call_kw)

                asyncio.run(main())
            else:
                with httpx.Client() as http:
                    reports(http, api.url, **kw).run_export(BODY, **call_kw)
            api.exports.clear()
            return clock.waits

        free = export({}, {})
        assert len(free) >= 3  # the core's own intervals between the reads of a pending export
        slow = export({"min_poll_interval_seconds": 45.0, "max_poll_interval_seconds": 45.0}, {})
        assert slow == [45.0] * len(slow) and len(slow) >= 3
        fast = export({"min_poll_interval_seconds": 45.0, "max_poll_interval_seconds": 45.0},
                      {"min_poll_interval_seconds": 0.25, "max_poll_interval_seconds": 0.25})
        assert fast == [0.25] * len(fast) and len(fast) >= 3
        floor = export({"min_poll_interval_seconds": 30.0}, {})
        assert floor and min(floor) >= 30.0
        ceiling = export({}, {"max_poll_interval_seconds": 0.5})
        assert ceiling and max(ceiling) <= 0.5
    finally:
        api.close()


def test_bad_poll_bounds_fail_at_construction_and_only_reporting_clients_take_them():
    with httpx.Client(transport=httpx.MockTransport(Seen().httpx)) as http:
        with pytest.raises(rk.InvalidArgumentError) as info:
            reports(http, min_poll_interval_seconds=10.0, max_poll_interval_seconds=1.0)
        assert info.value.argument == "min_poll_interval_seconds"
        with pytest.raises(rk.InvalidArgumentError):
            reports(http, max_poll_interval_seconds=-1.0)
        client = reports(http, max_poll_interval_seconds=5.0)
        with pytest.raises(rk.InvalidArgumentError):
            client.with_options(min_poll_interval_seconds=6.0)
        assert client.with_options(min_poll_interval_seconds=2.0)._poll == {  # noqa: SLF001
            "min_poll_interval_seconds": 2.0, "max_poll_interval_seconds": 5.0}
        enterprise = EnterpriseClient(http, base_url="http://127.0.0.1:9", api_key="k", api_secret="s")
        with pytest.raises(TypeError, match="reporting clients"):
            enterprise.with_options(max_poll_interval_seconds=1.0)
        with pytest.raises(TypeError):
            EnterpriseClient(http, base_url="http://127.0.0.1:9", api_key="k", api_secret="s",
                             min_poll_interval_seconds=1.0)  # type: ignore[call-arg]
