"""OpenTelemetry spans (royaltykit.otel, issue 42 point 4) with the SDK's in-memory exporter,
from the installed wheel: a faulty call (a 503, a 401 and its token refresh, a dropped
connection) and export jobs give the operation span and one child per request with its resend
count; receivers give one server span per delivery with its outcome; no secret anywhere."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest
import requests
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import royaltykit as rk
from fakeexports import ARTIFACT, ExportsApi
from royaltykit.asgi import WebhookApp
from royaltykit.client import AsyncReportsClient, ReportsClient
from royaltykit.otel import OpenTelemetry
from royaltykit.receiver import WebhookReceiver

TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
BODY = {"export_class": "statements", "format": "csv", "period": "2026-10"}
CLIENT_SECRET = "cs_otel_test_secret_4711"
WEBHOOK_SECRET = "whsec_otel_tests_0123456789abcdef"


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter, OpenTelemetry(tracer_provider=provider)
    provider.shutdown()


@pytest.fixture
def api():
    a = ExportsApi(pending=1)
    yield a
    a.close()


class Clock:
    """A clock the client's sleeps move forward: the backoff passes in no time."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def sleep(self, seconds: float) -> None:
        self.offset += seconds

    async def asleep(self, seconds: float) -> None:
        self.offset += seconds


def client(kind: str, http: Any, api: ExportsApi, telemetry: OpenTelemetry, **kw: Any):
    cls = AsyncReportsClient if kind == "async" else ReportsClient
    clock = Clock()
    return cls(http, base_url=api.url, client_id="cid", client_secret=CLIENT_SECRET, tenant_id=TENANT,
               telemetry=telemetry, clock=clock, sleep=clock.asleep if kind == "async" else clock.sleep, **kw)


def call(kind: str, api: ExportsApi, telemetry: OpenTelemetry, method: str, *args: Any, **kw: Any) -> Any:
    options = kw.pop("options", {})
    if kind == "async":
        async def main() -> Any:
            async with httpx.AsyncClient() as http:
                return await getattr(client(kind, http, api, telemetry, **options), method)(*args, **kw)

        return asyncio.run(main())
    with httpx.Client() if kind == "httpx" else requests.Session() as http:
        return getattr(client(kind, http, api, telemetry, **options), method)(*args, **kw)


def no_secret(finished: list[Any], secrets: list[str]) -> None:
    """Every name, attribute, event and status text of every span: no secret in any."""
    texts = []
    for s in finished:
        texts += [s.name, str(s.status.description or "")]
        texts += [f"{k}={v}" for k, v in s.attributes.items()]
        for e in s.events:
            texts += [e.name] + [f"{k}={v}" for k, v in e.attributes.items()]
    blob = "\n".join(texts)
    for secret in secrets:
        assert secret not in blob, secret
    assert "Authorization" not in blob and "Bearer" not in blob and "Basic" not in blob


def by_start(finished: list[Any]) -> list[Any]:
    return sorted(finished, key=lambda s: s.start_time)


@pytest.mark.parametrize("kind", ["httpx", "async", "requests"])
def test_a_faulty_call_is_one_operation_span_with_a_child_per_request(kind, api, spans):
    exporter, telemetry = spans
    # token; list 503; list 401 (the token is dead); token again; list dropped; list 200
    api.faults = {2: "503", 3: "401", 5: "drop"}
    assert call(kind, api, telemetry, "request", "listPlatformExports")["data"] == []
    assert api.ops() == ["token", "list", "list", "token", "list", "list"]
    finished = exporter.get_finished_spans()
    (op,) = [s for s in finished if s.kind == SpanKind.INTERNAL]
    children = by_start([s for s in finished if s.kind == SpanKind.CLIENT])
    assert len(finished) == 7 and op.name == "listPlatformExports"
    assert op.attributes["royaltykit.operation"] == "listPlatformExports" and op.attributes["royaltykit.attempts"] == 6
    assert op.status.status_code == StatusCode.UNSET and "error.type" not in op.attributes
    assert all(c.parent.span_id == op.context.span_id and c.context.trace_id == op.context.trace_id for c in children)
    port = int(api.url.rsplit(":", 1)[1])
    token_url, list_url = api.url + "/api/platform/v1/oauth/token", api.url + "/api/platform/v1/exports"
    got = [(c.name, c.attributes["url.full"], c.attributes.get("http.response.status_code"),
            c.attributes.get("http.request.resend_count"), c.attributes.get("error.type"), c.status.status_code)
           for c in children]
    assert got == [
        ("POST", token_url, 200, None, None, StatusCode.UNSET),
        ("GET", list_url, 503, None, "503", StatusCode.ERROR),
        ("GET", list_url, 401, 1, "401", StatusCode.UNSET),
        ("POST", token_url, 200, None, None, StatusCode.UNSET),
        ("GET", list_url, None, 2, "connection_lost", StatusCode.ERROR),
        ("GET", list_url, 200, 3, None, StatusCode.UNSET),
    ], got
    for c in children:
        assert c.attributes["http.request.method"] == c.name
        assert (c.attributes["server.address"], c.attributes["server.port"]) == ("127.0.0.1", port)
    events = [(e.name, dict(e.attributes)) for e in op.events]
    assert [(name, a.get("royaltykit.rule")) for name, a in events] == [
        ("refresh_token", None), ("retry", "server_error_retry"), ("retry", "unauthorized_refresh"),
        ("refresh_token", None), ("retry", "maybe_sent_retry")], events
    retry = events[1][1]
    assert retry["royaltykit.wait_seconds"] > 0 and retry["royaltykit.reason"].startswith("503")
    no_secret(finished, [CLIENT_SECRET, *api.tokens, base64.b64encode(f"cid:{CLIENT_SECRET}".encode()).decode()])


@pytest.mark.parametrize("kind", ["httpx", "async"])
def test_an_export_job_is_one_run_export_span_with_its_polls(kind, api, spans, tmp_path):
    exporter, telemetry = spans
    result = call(kind, api, telemetry, "run_export", BODY, to=tmp_path / "out.csv",
                  options={"idempotency_header": "Idempotency-Key", "min_poll_interval_seconds": 0.01,
                           "max_poll_interval_seconds": 0.01})
    finished = exporter.get_finished_spans()
    (op,) = [s for s in finished if s.kind == SpanKind.INTERNAL]
    children = by_start([s for s in finished if s.kind == SpanKind.CLIENT])
    assert op.name == "runExport" and op.attributes["royaltykit.attempts"] == 5 == len(children)
    assert [c.name for c in children] == ["POST", "POST", "GET", "GET", "GET"]
    assert children[-1].attributes["url.full"] == f"{api.url}/api/platform/v1/exports/{result.export_id}/download"
    polls = [e for e in op.events if e.name == "poll"]
    assert [e.attributes["royaltykit.state"] for e in polls] == ["queued", "queued", "ready"]  # created, then read
    # the download's progress: span events after the polls, a few (never one per piece), the last whole
    progress = [e for e in op.events if e.name == "progress"]
    size = result.size
    assert size == len(ARTIFACT) and 1 <= len(progress) <= 11, [dict(e.attributes) for e in progress]
    got = [e.attributes["royaltykit.received_bytes"] for e in progress]
    assert got == sorted(set(got)) and got[-1] == size, got
    assert all(e.attributes["royaltykit.total_bytes"] == size for e in progress)
    names = [e.name for e in op.events]
    assert names.index("progress") > len(names) - 1 - names[::-1].index("poll"), names
    no_secret(finished, [CLIENT_SECRET, *api.tokens])


def test_failed_operations_say_their_error_type(api, spans, tmp_path):
    exporter, telemetry = spans
    with httpx.Client() as http:
        c = client("httpx", http, api, telemetry, max_attempts=2)
        with pytest.raises(rk.ApiError):
            c.request("getPlatformExport", path={"export": "4b3f5c1e-0000-4000-8000-000000000000"})
        api.faults = {n: "drop" for n in range(3, 10)}
        with pytest.raises(rk.CallFailedError):
            c.request("listPlatformExports")
        api.faults = {}

        def interrupt(got: int, total: int | None) -> None:
            raise KeyboardInterrupt

        with pytest.raises(rk.ExportInterrupted):
            c.run_export(BODY, to=tmp_path / "out.csv", progress=interrupt, min_poll_interval_seconds=0.01,
                         max_poll_interval_seconds=0.01)
    ops = {s.name: s for s in exporter.get_finished_spans() if s.kind == SpanKind.INTERNAL}
    assert ops["getPlatformExport"].attributes["error.type"] == "not_found"
    assert ops["listPlatformExports"].attributes["error.type"] == "call_failed"
    assert ops["listPlatformExports"].attributes["royaltykit.attempts"] == 2
    assert ops["runExport"].attributes["error.type"] == "export_interrupted"
    for s in ops.values():
        assert s.status.status_code == StatusCode.ERROR
    # the download in flight when it was interrupted ends with the operation
    download = [s for s in exporter.get_finished_spans() if s.attributes.get("url.full", "").endswith("/download")]
    assert download and download[-1].attributes["error.type"] == "export_interrupted"


def test_a_telemetry_that_raises_changes_nothing(api):
    class Broken:
        def operation(self, name: str, base_url: str) -> Any:
            raise RuntimeError("collector down")

    with httpx.Client() as http:
        c = ReportsClient(http, base_url=api.url, client_id="cid", client_secret=CLIENT_SECRET, tenant_id=TENANT,
                          telemetry=Broken())
        assert c.request("listPlatformExports")["data"] == []
        with pytest.raises(TypeError, match="telemetry"):
            ReportsClient(http, base_url=api.url, client_id="cid", client_secret="s", tenant_id=TENANT,
                          telemetry=object())  # type: ignore[arg-type]


# ---- receivers ----------------------------------------------------------------------------------


def delivery(did: str, secret: str = WEBHOOK_SECRET) -> tuple[list[tuple[bytes, bytes]], bytes]:
    body = json.dumps({"event": "enterprise.release.updated",
                       "resource": {"type": "release", "reference": did, "url": "/api/v1/releases/" + did},
                       "occurred_at": "2026-11-22T04:05:06Z"}).encode()
    # signed now: the receivers check it against their clock (the suite may outlast the 300 s tolerance)
    headers = rk.sign_webhook(secret, body, timestamp=int(time.time()), delivery_id=did)
    return [(k.lower().encode(), v.encode()) for k, v in headers.items()], body


async def post(app: WebhookApp, headers: list[tuple[bytes, bytes]], body: bytes) -> int:
    sent: list[dict] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    await app({"type": "http", "method": "POST", "path": "/webhooks", "headers": headers}, receive, send)
    return int(sent[0]["status"])


def test_each_delivery_is_one_server_span_with_its_outcome(spans):
    exporter, telemetry = spans

    def handler(d: rk.VerifiedWebhook) -> None:
        if d.delivery_id == "dlv_fails":
            raise ValueError("the handler's own fault")

    receiver = WebhookReceiver(WEBHOOK_SECRET, namespace="org-1", handler=handler, telemetry=telemetry,
                               on_error=lambda e, d: None)
    app = WebhookApp(receiver, route="/webhooks")

    async def main() -> list[int]:
        return [await post(app, *delivery("dlv_1")), await post(app, *delivery("dlv_1")),
                await post(app, *delivery("dlv_2", "whsec_someone_else_0123456789ab")),
                await post(app, *delivery("dlv_fails"))]

    statuses = asyncio.run(main())
    headers, body = delivery("dlv_3")
    plain = receiver.receive([(k.decode(), v.decode()) for k, v in headers], body)  # no route: "POST"
    assert plain.status == 200
    finished = by_start(exporter.get_finished_spans())
    assert [s.kind for s in finished] == [SpanKind.SERVER] * 5
    got = [(s.name, s.attributes["http.response.status_code"], s.attributes["royaltykit.outcome"],
            s.attributes.get("royaltykit.delivery_id"), s.status.status_code) for s in finished]
    assert got == [
        ("POST /webhooks", statuses[0], "processed", "dlv_1", StatusCode.UNSET),
        ("POST /webhooks", statuses[1], "duplicate", "dlv_1", StatusCode.UNSET),
        ("POST /webhooks", statuses[2], "rejected", None, StatusCode.UNSET),
        ("POST /webhooks", 500, "handler_failed", "dlv_fails", StatusCode.ERROR),
        ("POST", 200, "processed", "dlv_3", StatusCode.UNSET),
    ], got
    assert statuses[:3] == [200, 200, 401]
    assert all(s.attributes["http.request.method"] == "POST" for s in finished)
    no_secret(finished, [WEBHOOK_SECRET, "whsec_someone_else_0123456789ab"])


def test_a_store_outage_is_an_error_span(spans):
    exporter, telemetry = spans

    class Down:
        def claim(self, key: str) -> str:
            raise ConnectionError("redis is down")

        def commit(self, key: str) -> object:
            return None

        def release(self, key: str) -> object:
            return None

    receiver = WebhookReceiver(WEBHOOK_SECRET, namespace="org-1", handler=lambda d: None, store=Down(),
                               telemetry=telemetry)
    headers, body = delivery("dlv_down")
    r = receiver.receive([(k.decode(), v.decode()) for k, v in headers], body, route="/hooks")
    (span,) = exporter.get_finished_spans()
    assert (span.name, r.status, span.attributes["royaltykit.outcome"]) == ("POST /hooks", 503, "store_unavailable")
    assert span.status.status_code == StatusCode.ERROR and span.attributes["http.response.status_code"] == 503


def test_royaltykit_never_imports_opentelemetry_unless_asked():
    script = ("import sys, royaltykit, royaltykit.client, royaltykit.receiver, royaltykit.otel\n"
              "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'imported OpenTelemetry'\n")
    subprocess.run([sys.executable, "-c", script], check=True)
    # `import royaltykit` alone does not load asyncio either (cold start).
    script = ("import sys, royaltykit\n"
              "assert 'asyncio' not in sys.modules, 'import royaltykit loaded asyncio'\n"
              "assert royaltykit.export_interruption is royaltykit.errors.export_interruption\n"
              "assert issubclass(royaltykit.ExportInterrupted, KeyboardInterrupt)\n"
              "assert not issubclass(royaltykit.ExportInterrupted, Exception)\n")
    subprocess.run([sys.executable, "-c", script], check=True)
