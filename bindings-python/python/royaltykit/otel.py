"""OpenTelemetry spans for the clients and receivers (``pip install royaltykit[otel]``, over
``opentelemetry-api``; nothing else in royaltykit imports OpenTelemetry)::

    from royaltykit.otel import OpenTelemetry

    telemetry = OpenTelemetry()  # the global tracer provider, or OpenTelemetry(tracer_provider=...)
    client = ReportsClient(http, ..., telemetry=telemetry)
    receiver = WebhookReceiver(secrets, namespace="org-1", handler=on_delivery, telemetry=telemetry)

The spans, the same in every language:

- one INTERNAL span per operation, named after it (``listPlatformExports``, ``runExport``):
  ``royaltykit.operation``, ``royaltykit.attempts`` (the requests sent, token exchanges
  included); on failure status ERROR and ``error.type`` (the error's ``code``, an ``ApiError``'s
  ``kind``, ``export_interrupted``, else the exception's class). Its retries, rate-budget waits,
  token refreshes, polls, download progress, notices and reconciliations are span events
  (named after the event's kind: ``royaltykit.rule``, ``royaltykit.reason``,
  ``royaltykit.wait_seconds``, ``royaltykit.state``, ``royaltykit.received_bytes``,
  ``royaltykit.total_bytes`` when the event has them);
- one CLIENT child span per request sent, named after its method: ``http.request.method``,
  ``url.full`` (the base URL and the path, never the query), ``server.address``,
  ``server.port``, ``http.response.status_code``, ``http.request.resend_count`` (from the second
  attempt on), ``error.type`` (the transport failure, or the status of an error response);
  status ERROR on a transport failure or a 5xx;
- one SERVER span per webhook delivery, ``POST`` (``POST /webhooks`` when the framework gives
  the route): ``http.request.method``, ``http.response.status_code``, ``royaltykit.outcome``,
  ``royaltykit.delivery_id`` once verified; status ERROR when the handler or the store failed.

No token, credential, header or body is ever in a span.
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import urlsplit

__all__ = ["OpenTelemetry"]

# The machine events that become events of the operation's span (the others shape its children).
_SPAN_EVENTS = frozenset({"retry", "rate_limited", "refresh_token", "poll", "progress", "notice", "reconcile"})
_EVENT_FIELDS = (("rule", "royaltykit.rule"), ("reason", "royaltykit.reason"),
                 ("wait_seconds", "royaltykit.wait_seconds"), ("state", "royaltykit.state"),
                 ("received_bytes", "royaltykit.received_bytes"), ("total_bytes", "royaltykit.total_bytes"))
# Receipt outcomes that mean the receiver failed (the sender will deliver again).
_FAILED_OUTCOMES = frozenset({"handler_failed", "store_unavailable"})


def error_type(error: BaseException) -> str:
    """What ``error.type`` says for ``error``: an ``ApiError``'s ``kind``, any other royaltykit
    error's ``code`` (``call_failed``, ``reconcile_required``, ``export_interrupted``, …), else
    the exception's class (``module.Class``, builtins unqualified)."""
    from .errors import ApiError

    if isinstance(error, ApiError):
        return str(error.kind)
    code = getattr(error, "code", None)
    if isinstance(code, str) and code:
        return code
    cls = type(error)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


class OpenTelemetry:
    """The telemetry of clients and receivers as OpenTelemetry spans (a ``ClientTelemetry`` and a
    ``ReceiverTelemetry``, :mod:`royaltykit.telemetry`). ``tracer_provider``: where the spans
    go (default: the global one, ``opentelemetry.trace.get_tracer_provider()``); or give a
    ``tracer`` of your own. Thread-safe; one object can serve every client and receiver."""

    def __init__(self, tracer_provider: Any = None, *, tracer: Any = None) -> None:
        from opentelemetry import trace  # only here: royaltykit itself never needs OpenTelemetry

        from . import __version__

        self._trace: Any = trace
        self._tracer: Any = tracer if tracer is not None else trace.get_tracer(
            "royaltykit", __version__, tracer_provider=tracer_provider)

    def operation(self, name: str, base_url: str) -> _OperationSpan:
        """The span of one client operation ``name`` against ``base_url``."""
        return _OperationSpan(self, name, base_url)

    def receipt(self, route: str | None = None) -> _ReceiptSpan:
        """The span of one webhook delivery (``route``: the framework's, when known)."""
        return _ReceiptSpan(self, route)


class _OperationSpan:
    """An operation's span and the span of the request in flight."""

    def __init__(self, otel: OpenTelemetry, name: str, base_url: str) -> None:
        trace = otel._trace
        self._trace, self._tracer = trace, otel._tracer
        self._span: Any = self._tracer.start_span(name, kind=trace.SpanKind.INTERNAL,
                                                  attributes={"royaltykit.operation": name})
        self._context: Any = trace.set_span_in_context(self._span)
        self._base = base_url.rstrip("/")
        parts = urlsplit(self._base)
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._sends = 0
        self._send: Any = None

    def event(self, event: Mapping[str, Any]) -> None:
        """One machine event: a request's span starts on ``send`` and ends on its ``response`` or
        ``transport_failure``; the kinds that say why it waits or retries are span events."""
        kind = event.get("kind")
        if kind == "send":
            self._end_send("connection_lost")  # never left open, should a send have no outcome
            self._sends += 1
            method = str(event.get("method") or "GET")
            attributes: dict[str, Any] = {"http.request.method": method, "url.full": self._base + str(event.get("path") or ""),
                                          "server.address": self._host, "server.port": self._port}
            attempt = int(event.get("attempt") or 1)
            if attempt > 1:
                attributes["http.request.resend_count"] = attempt - 1
            self._send = self._tracer.start_span(method, context=self._context, kind=self._trace.SpanKind.CLIENT,
                                                 attributes=attributes)
        elif kind == "response" and self._send is not None:
            status = int(event.get("status") or 0)
            self._send.set_attribute("http.response.status_code", status)
            if status >= 400:
                self._send.set_attribute("error.type", str(status))
            if status >= 500:
                self._send.set_status(self._trace.Status(self._trace.StatusCode.ERROR))
            self._send.end()
            self._send = None
        elif kind == "transport_failure":
            self._end_send(str(event.get("transport") or "transport_failure"))
        elif kind in _SPAN_EVENTS:
            attributes = {name: event[field] for field, name in _EVENT_FIELDS if event.get(field) is not None}
            self._span.add_event(str(kind), attributes)

    def _end_send(self, error: str) -> None:
        if self._send is not None:
            self._send.set_attribute("error.type", error)
            self._send.set_status(self._trace.Status(self._trace.StatusCode.ERROR))
            self._send.end()
            self._send = None

    def end(self, error: BaseException | None = None) -> None:
        """The operation's end: its attempts, and ``error.type`` and status ERROR when it failed
        (a request still in flight, as on an interruption, ends with the same ``error.type``)."""
        if error is not None:
            kind = error_type(error)
            self._end_send(kind)
            self._span.set_attribute("error.type", kind)
            # The description is a royaltykit error's message (the core's, never a secret), else
            # only the class.
            from .errors import ExportInterrupted, RoyaltyKitError

            described = isinstance(error, (RoyaltyKitError, ExportInterrupted)) or kind == "export_interrupted"
            self._span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(error) if described else kind))
        self._span.set_attribute("royaltykit.attempts", self._sends)
        self._span.end()


class _ReceiptSpan:
    """A delivery's server span."""

    def __init__(self, otel: OpenTelemetry, route: str | None) -> None:
        self._trace = otel._trace
        self._span: Any = otel._tracer.start_span(f"POST {route}" if route else "POST",
                                                  kind=self._trace.SpanKind.SERVER,
                                                  attributes={"http.request.method": "POST"})

    def end(self, outcome: str | None, http_status: int, error: BaseException | None = None,
            delivery_id: str | None = None) -> None:
        """The answer: status, the core's receipt outcome, the delivery id once verified."""
        self._span.set_attribute("http.response.status_code", http_status)
        if outcome is not None:
            self._span.set_attribute("royaltykit.outcome", outcome)
        if delivery_id is not None:
            self._span.set_attribute("royaltykit.delivery_id", delivery_id)
        if outcome in _FAILED_OUTCOMES:
            self._span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, outcome))
        elif outcome is None and error is not None:  # the receiver itself raised (cancelled, …)
            self._span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, error_type(error)))
        self._span.end()
