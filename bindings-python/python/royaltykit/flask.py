"""``royaltykit.flask``: a Flask view receiving webhook deliveries. It reads the raw body
itself (whatever the content type, at most the receiver's limit + 1 bytes)::

    @app.post("/webhooks")
    @webhook_view(secrets, namespace="org-1", store=RedisDedupStore(redis.Redis()))
    def on_delivery(delivery):
        save(delivery.event)

An ``async def`` handler gives an async view (Flask's ``flask[async]``), with an async store.
With an inbox (:mod:`royaltykit.stores`), the view persists each delivery and answers at once;
the handler runs in the inbox's worker::

    inbox = PostgresInbox(dsn)
    app.add_url_rule("/webhooks", view_func=inbox_view(secrets, namespace="org-1", inbox=inbox),
                     methods=["POST"])
    # elsewhere: inbox.run_worker(on_event)

Flask is imported only by this module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from flask import Response, request

from ._native import WebhookSecret
from .receiver import InboxStore, Receipt, WebhookReceiver, _awaits

__all__ = ["inbox_view", "webhook_view"]


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

    if "inbox" in options:
        raise TypeError("with an inbox the handler runs in the inbox's worker, not in the view: build the view with "
                        "inbox_view(secrets, inbox=..., namespace=...)")

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


def inbox_view(secrets: str | WebhookSecret | Iterable[str | WebhookSecret], *, inbox: InboxStore,
               **options: Any) -> Callable[..., Any]:
    """A Flask view persisting each verified delivery in ``inbox`` (``royaltykit.stores``) and
    answering 200 at once (``queued``, or ``duplicate``); the handler runs in the inbox's worker
    (``inbox.run_worker(handler)``). An inbox whose ``enqueue`` is a coroutine
    (``AsyncPostgresInbox``) gives an async view. ``options`` are :class:`WebhookReceiver`'s
    (``namespace`` is required)."""
    receiver = WebhookReceiver(secrets, inbox=inbox, **options)
    limit = receiver.max_body_bytes + 1

    if inspect.iscoroutinefunction(getattr(inbox, "enqueue", None)):
        async def async_view() -> Response:
            return _response(await receiver.areceive(request.headers.items(), request.stream.read(limit),
                                                     route=_route()))
        async_view.__name__ = "webhooks"
        return async_view

    def view() -> Response:
        return _response(receiver.receive(request.headers.items(), request.stream.read(limit), route=_route()))
    view.__name__ = "webhooks"
    return view
