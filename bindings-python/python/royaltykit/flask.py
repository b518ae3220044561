"""``royaltykit.flask``: a Flask view receiving webhook deliveries. It reads the raw body
itself (whatever the content type, at most the receiver's limit + 1 bytes)::

    @app.post("/webhooks")
    @webhook_view(secrets, namespace="org-1", store=RedisDedupStore(redis.Redis()))
    def on_delivery(delivery):
        save(delivery.event)

An ``async def`` handler gives an async view (Flask's ``flask[async]``), with an async store.
Flask is imported only by this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flask import Response, request

from ._native import WebhookSecret
from .receiver import Receipt, WebhookReceiver, _awaits

__all__ = ["webhook_view"]


def _response(r: Receipt) -> Response:
    return Response(r.body, status=r.status, content_type="application/json")


def _route() -> str | None:
    """The view's URL rule (``/webhooks``), for the telemetry's span name."""
    rule = request.url_rule
    return rule.rule if rule is not None else None


def webhook_view(secrets: str | WebhookSecret | Iterable[str | WebhookSecret], **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Turns a handler ``(delivery) -> None`` (``(delivery, connection)`` with a store from
    :mod:`royaltykit.stores`), or an :class:`~royaltykit.EventRouter` (``webhook_view(...)(router)``,
    once its handlers are registered), into a Flask view; ``options`` are
    :class:`WebhookReceiver`'s (``namespace`` is required)."""

    def decorate(handler: Callable[..., Any]) -> Callable[..., Any]:
        receiver = WebhookReceiver(secrets, handler=handler, **options)
        limit = receiver.max_body_bytes + 1

        if _awaits(handler):
            async def async_view() -> Response:
                return _response(await receiver.areceive(request.headers.items(), request.stream.read(limit),
                                                         route=_route()))
            async_view.__name__ = _name(handler)
            return async_view

        def view() -> Response:
            return _response(receiver.receive(request.headers.items(), request.stream.read(limit), route=_route()))
        view.__name__ = _name(handler)
        return view

    return decorate


def _name(handler: Callable[..., Any]) -> str:
    """The view's name: the handler's (an :class:`EventRouter` has none: ``webhooks``)."""
    name = getattr(handler, "__name__", None)
    return name if isinstance(name, str) else "webhooks"
