"""``royaltykit.django``: a Django view receiving webhook deliveries (CSRF-exempt: the signature
authenticates the sender). It reads the raw body itself, at most the receiver's limit + 1 bytes::

    @webhook_view(secrets, namespace="org-1", store=RedisDedupStore(redis.Redis()))
    def on_delivery(delivery):
        Event.objects.create(...)

    urlpatterns = [path("webhooks", on_delivery)]

An ``async def`` handler gives an async view (under ASGI), with an async store. With an inbox
(:mod:`royaltykit.stores`: SQL, or ``RedisInbox``/``AsyncRedisInbox`` on a Redis stream), the view
persists each delivery and answers at once; the handler runs in the inbox's worker::

    webhooks = inbox_view(secrets, namespace="org-1", inbox=PostgresInbox(dsn))  # or RedisInbox(redis.Redis())
    urlpatterns = [path("webhooks", webhooks)]

Every view this module returns carries the :class:`~royaltykit.WebhookReceiver` it built as
``view.receiver`` (a :class:`WebhookView`): after a secret rotation, give it the new secrets with
``webhooks.receiver.use_secrets(rotated.secrets(previous=current))`` — the live view verifies with
them from the next delivery on, no new view or URL pattern.

Django is imported only by this module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.views.decorators.csrf import csrf_exempt

from ._native import WebhookSecret
from .receiver import InboxStore, Receipt, WebhookReceiver, _awaits

__all__ = ["WebhookView", "inbox_view", "webhook_view"]


class WebhookView(Protocol):
    """A Django view of this module (POST only, CSRF-exempt; sync, or async for an async handler
    or inbox): call it as Django does. ``receiver`` is the :class:`~royaltykit.WebhookReceiver` it
    answers with, so that a secret rotation reaches the live view
    (``view.receiver.use_secrets(...)``)."""

    receiver: WebhookReceiver
    __name__: str

    def __call__(self, request: HttpRequest) -> Any: ...


def _view(view: Callable[[HttpRequest], Any], receiver: WebhookReceiver, name: str) -> WebhookView:
    """``view`` named ``name``, CSRF-exempt, carrying ``receiver``."""
    view.__name__ = name
    exempt: Callable[..., Any] = csrf_exempt(view)
    setattr(exempt, "receiver", receiver)
    return cast(WebhookView, exempt)


def _response(r: Receipt) -> HttpResponse:
    return HttpResponse(r.body, status=r.status, content_type="application/json")


def _route(request: HttpRequest) -> str | None:
    """The URL pattern that matched (``webhooks``, as Django writes it, made ``/webhooks``), for
    the telemetry's span name."""
    match = getattr(request, "resolver_match", None)
    route = getattr(match, "route", None)
    return "/" + route.lstrip("/") if isinstance(route, str) and route else None


def webhook_view(secrets: str | WebhookSecret | Iterable[str | WebhookSecret], **options: Any) -> Callable[[Callable[..., Any]], WebhookView]:
    """Turns a handler ``(delivery) -> None`` (``(delivery, connection)`` with a store from
    :mod:`royaltykit.stores`), or an :class:`~royaltykit.EventRouter` (``webhook_view(...)(router)``,
    once its handlers are registered), into a Django view (POST only); ``options`` are
    :class:`WebhookReceiver`'s (``namespace`` is required). The view's ``receiver`` is the
    receiver it built (``view.receiver.use_secrets(...)`` after a rotation)."""

    if "inbox" in options:
        raise TypeError("with an inbox the handler runs in the inbox's worker, not in the view: build the view with "
                        "inbox_view(secrets, inbox=..., namespace=...)")

    def decorate(handler: Callable[..., Any]) -> WebhookView:
        receiver = WebhookReceiver(secrets, handler=handler, **options)
        limit = receiver.max_body_bytes + 1

        if _awaits(handler):
            async def async_view(request: HttpRequest) -> HttpResponse:
                if request.method != "POST":
                    return HttpResponseNotAllowed(["POST"])
                return _response(await receiver.areceive(request.headers.items(), request.read(limit),
                                                         route=_route(request)))
            return _view(async_view, receiver, _name(handler))

        def view(request: HttpRequest) -> HttpResponse:
            if request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            return _response(receiver.receive(request.headers.items(), request.read(limit), route=_route(request)))
        return _view(view, receiver, _name(handler))

    return decorate


def _name(handler: Callable[..., Any]) -> str:
    """The view's name: the handler's (an :class:`EventRouter` has none: ``webhooks``)."""
    name = getattr(handler, "__name__", None)
    return name if isinstance(name, str) else "webhooks"


def inbox_view(secrets: str | WebhookSecret | Iterable[str | WebhookSecret], *, inbox: InboxStore,
               **options: Any) -> WebhookView:
    """A Django view (POST only, CSRF-exempt) persisting each verified delivery in ``inbox``
    (``royaltykit.stores``: a SQL inbox, ``RedisInbox`` or ``AsyncRedisInbox``) and answering 200
    at once (``queued``, or ``duplicate``); the handler runs in the inbox's worker
    (``inbox.run_worker(handler)``). An inbox whose ``enqueue`` is a coroutine
    (``AsyncPostgresInbox``, ``AsyncRedisInbox``) gives an async view. ``options`` are
    :class:`WebhookReceiver`'s (``namespace`` is required). The view's ``receiver`` is the
    receiver it built (``view.receiver.use_secrets(...)`` after a rotation)."""
    receiver = WebhookReceiver(secrets, inbox=inbox, **options)
    limit = receiver.max_body_bytes + 1

    if inspect.iscoroutinefunction(getattr(inbox, "enqueue", None)):
        async def async_view(request: HttpRequest) -> HttpResponse:
            if request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            return _response(await receiver.areceive(request.headers.items(), request.read(limit),
                                                     route=_route(request)))
        return _view(async_view, receiver, "webhooks")

    def view(request: HttpRequest) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        return _response(receiver.receive(request.headers.items(), request.read(limit), route=_route(request)))
    return _view(view, receiver, "webhooks")
