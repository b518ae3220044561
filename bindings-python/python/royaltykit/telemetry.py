"""What the clients and receivers report to a tracing system, as small interfaces with no
dependency: give an object with these methods as ``telemetry=``. :mod:`royaltykit.otel` is the
OpenTelemetry one (``pip install royaltykit[otel]``); any other system can be wired the same way.

A client opens one :class:`OperationScope` per logical operation (``request``/``request_raw``:
the operation id; ``run_export``: ``runExport``; a token exchange is part of the operation that
needed it), gives it each of the operation's events (the core's ``MachineEvent``, as the dict
``on_event`` gets: never a token, a credential, a header or a body) and ends it once, with the
exception that ended the operation or None. A receiver opens one :class:`ReceiptScope` per
delivery and ends it with the receipt's outcome. A telemetry object that raises is logged (the
``royaltykit`` logger, WARNING) and otherwise ignored: it never changes what the call does.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

__all__ = ["ClientTelemetry", "OperationScope", "ReceiptScope", "ReceiverTelemetry"]


class OperationScope(Protocol):
    """One logical operation of a client."""

    def event(self, event: Mapping[str, Any]) -> None:
        """One of the operation's events, in order (``send``, ``response``, ``transport_failure``,
        ``retry``, ``refresh_token``, ``rate_limited``, ``poll``, ``progress`` (a download's
        ``received_bytes`` of ``total_bytes``), ``notice``, ``reconcile``, ``done``, ``fail``)."""

    def end(self, error: BaseException | None = None) -> None:
        """The operation ended: ``error`` is what it raised (None when it succeeded)."""


class ClientTelemetry(Protocol):
    """What a client's ``telemetry=`` must have."""

    def operation(self, name: str, base_url: str) -> OperationScope:
        """A new operation ``name`` (``listPlatformExports``, ``runExport``, …) against
        ``base_url`` (the API's origin, as the client was given it)."""


class ReceiptScope(Protocol):
    """One webhook delivery received."""

    def end(self, outcome: str | None, http_status: int, error: BaseException | None = None,
            delivery_id: str | None = None) -> None:
        """The delivery was answered ``http_status``: ``outcome`` is the core's receipt outcome
        (``processed``, ``duplicate``, ``in_progress``, ``rejected``, ``acknowledged``,
        ``handler_failed``, ``store_unavailable``, ``claim_lost``), ``error`` the handler's or the
        store's exception when one ended it, ``delivery_id`` the verified delivery's id (None when
        it was rejected)."""


class ReceiverTelemetry(Protocol):
    """What a receiver's ``telemetry=`` must have."""

    def receipt(self, route: str | None = None) -> ReceiptScope:
        """A delivery arrives; ``route`` is the framework's route for it (``/webhooks``) when it
        tells one."""
