"""``royaltykit.flask``: a Flask view receiving webhook deliveries. It reads the raw body
itself (whatever the content type, at most the receiver's limit + 1 bytes)::

    @app.post("/webhooks")
    @webhook_view(secrets, namespace="org-1", store=RedisDedupStore(redis.Redis()))
    def on_delivery(delivery):
        save(delivery.event)

An ``async def`` handler gives an async view (Flask's ``flask[async]``), with an async store.
With an inbox (:mod:`royaltykit.stores`: SQL, or ``RedisInbox``/``AsyncRedisInbox`` on a Redis
stream), the view persists each delivery and answers at once; the handler runs in the inbox's
worker::

    inbox = PostgresInbox(dsn)  # or RedisInbox(redis.Redis())
    view = inbox_view(secrets, namespace="org-1", inbox=inbox)
    app.add_url_rule("/webhooks", view_func=view, methods=["POST"])
    # elsewhere: inbox.run_worker(on_event)

Every view this module returns carries the :class:`~royaltykit.WebhookReceiver` it built as
``view.receiver`` (a :class:`WebhookView`): after a secret rotation, give it the new secrets with
``view.receiver.use_secrets(rotated.secrets(previous=current))`` — the live view verifies with them
from the next delivery on, no new view or route.

Flask is imported only by this module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

from flask import Response, request

from ._native import WebhookSecret
from .receiver import InboxStore, Receipt, WebhookReceiver, _awaits

__all__ = ["WebhookView", "inbox_view", "webhook_view"]


class WebhookView(Protocol):
    """A Flask view of this module (sync, or async for an async handler or inbox): call it as
    Flask does. ``receiver`` is the :class:`~royaltykit.WebhookReceiver` it answers with, so that
    a secret rotation reaches the live view (``view.receiver.use_secrets(...)``)."""

    receiver: WebhookReceiver
    __name__: str

    def __call__(self) -> Any: ...


def _view(view: Callable[[], Any], receiver: WebhookReceiver, name: str) -> WebhookView:
    """``view`` named ``name`` (Flask's endpoint) and carrying ``receiver``."""
    view.__name__ = name
    setattr(view, "receiver", receiver)
    return cast(WebhookView, view)


def _response(r: Receipt) -> Response:
    return Response(r.body, status=r.status, content_type="application/json")


def _route() -> str | None:
    """The view's URL rule (``/webhooks``), for the telemetry's span name."""
    rule = request.url_rule
    return rule.rule if rule is not None else None


def webhook_view(secrets: str | WebhookSecret | Iterable[str | WebhookSecret], **options: Any) -> Callable[[Callable[..., Any]], WebhookView]:
    """Turns a handler ``(delivery) -> None`` (``(delivery, connection)`` with a store from
    :mod:`royaltykit.stores`), or an :class:`~royaltykit.EventRouter` (``webhook_view(...)(router)``,
    once its handlers are registered), into a Flask view; ``options`` are
    :class:`WebhookReceiver`'s (``namespace`` is required). The view's ``receiver`` is the
    receiver it built (``view.receiver.use_secrets(...)`` after a rotation)."""

    if "inbox" in options:
        raise TypeError("with an inbox the handler runs in the inbox's worker, not in the view: build the view with "
                        "inbox_view(secrets, inbox=..., namespace=...)")

    def decorate(handler: Callable[..., Any]) -> WebhookView:
        receiver = WebhookReceiver(secrets, handler=handler, **options)
        limit = receiver.max_body_bytes + 1

        if _awaits(handler):
            async def async_view() -> Response:
                return _response(await receiver.areceive(request.headers.items(), request.stream.read(limit),
                                                         route=_route()))
            return _view(async_view, receiver, _name(handler))

        def view() -> Response:
            return _response(receiver.receive(request.headers.items(), request.stream.read(limit), route=_route()))
        return _view(view, receiver, _name(handler))

    return decorate


def _name(handler: Callable[..., Any]) -> str:
    """The view's name: the handler's (an :class:`EventRouter` has none: ``webhooks``)."""
    name = getattr(handler, "__name__", None)
    return name if isinstance(name, str) else "webhooks"


def inbox_view(secrets: str | WebhookSecret | Iterable[str | WebhookSecret], *, inbox: InboxStore,
               **options: Any) -> WebhookView:
    """A Flask view persisting each verified delivery in ``inbox`` (``royaltykit.stores``: a SQL
    inbox, ``RedisInbox`` or ``AsyncRedisInbox``) and answering 200 at once (``queued``, or
    ``duplicate``); the handler runs in the inbox's worker (``inbox.run_worker(handler)``). An
    inbox whose ``enqueue`` is a coroutine (``AsyncPostgresInbox``, ``AsyncRedisInbox``) gives an
    async view. ``options`` are :class:`WebhookReceiver`'s (``namespace`` is required). The view's
    ``receiver`` is the receiver it built (``view.receiver.use_secrets(...)`` after a rotation)."""
    receiver = WebhookReceiver(secrets, inbox=inbox, **options)
    limit = receiver.max_body_bytes + 1

    if inspect.iscoroutinefunction(getattr(inbox, "enqueue", None)):
        async def async_view() -> Response:
            return _response(await receiver.areceive(request.headers.items(), request.stream.read(limit),
                                                     route=_route()))
        return _view(async_view, receiver, "webhooks")

    def view() -> Response:
        return _response(receiver.receive(request.headers.items(), request.stream.read(limit), route=_route()))
    return _view(view, receiver, "webhooks")
