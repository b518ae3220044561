"""``royaltykit.django``: a Django view receiving webhook deliveries (CSRF-exempt: the signature
authenticates the sender). It reads the raw body itself, at most the receiver's limit + 1 bytes::

    @webhook_view(secrets, namespace="org-1", store=RedisDedupStore(redis.Redis()))
    def on_delivery(delivery):
        Event.objects.create(...)

    urlpatterns = [path("webhooks", on_delivery)]

An ``async def`` handler gives an async view (under ASGI), with an async store. With an inbox
(:mod:`royaltykit.stores`), the view persists each delivery and answers at once; the handler runs
in the inbox's worker::

    urlpatterns = [path("webhooks", inbox_view(secrets, namespace="org-1", inbox=PostgresInbox(dsn)))]

Django is imported only by this module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.views.decorators.csrf import csrf_exempt

from ._native import WebhookSecret
from .receiver import InboxStore, Receipt, WebhookReceiver, _awaits

__all__ = ["inbox_view", "webhook_view"]


def _response(r: Receipt) -> HttpResponse:
    return HttpResponse(r.body, status=r.status, content_type="application/json")


def _route(request: HttpRequest) -> str | None:
    """The URL pattern that matched (``webhooks``, as Django writes it, made ``/webhooks``), for
    the telemetry's span name."""
    match = getattr(request, "resolver_match", None)
    route = getattr(match, "route", None)
    return "/" + route.lstrip("/") if isinstance(route, str) and route else None


def webhook_view(secrets: str | WebhookSecret | Iterable[str | WebhookSecret], **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Turns a handler ``(delivery) -> None`` (``(delivery, connection)`` with a store from
    :mod:`royaltykit.stores`), or an :class:`~royaltykit.EventRouter` (``webhook_view(...)(router)``,
    once its handlers are registered), into a Django view (POST only); ``options`` are
    :class:`WebhookReceiver`'s (``namespace`` is required)."""

    if "inbox" in options:
        raise TypeError("with an inbox the handler runs in the inbox's worker, not in the view: build the view with "
                        "inbox_view(secrets, inbox=..., namespace=...)")

    def decorate(handler: Callable[..., Any]) -> Callable[..., Any]:
        receiver = WebhookReceiver(secrets, handler=handler, **options)
        limit = receiver.max_body_bytes + 1

        if _awaits(handler):
            async def async_view(request: HttpRequest) -> HttpResponse:
                if request.method != "POST":
                    return HttpResponseNotAllowed(["POST"])
                return _response(await receiver.areceive(request.headers.items(), request.read(limit),
                                                         route=_route(request)))
            async_view.__name__ = _name(handler)
            exempt_async: Callable[..., Any] = csrf_exempt(async_view)
            return exempt_async

        def view(request: HttpRequest) -> HttpResponse:
            if request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            return _response(receiver.receive(request.headers.items(), request.read(limit), route=_route(request)))
        view.__name__ = _name(handler)
        exempt: Callable[..., Any] = csrf_exempt(view)
        return exempt

    return decorate


def _name(handler: Callable[..., Any]) -> str:
    """The view's name: the handler's (an :class:`EventRouter` has none: ``webhooks``)."""
    name = getattr(handler, "__name__", None)
    return name if isinstance(name, str) else "webhooks"


def inbox_view(secrets: str | WebhookSecret | Iterable[str | WebhookSecret], *, inbox: InboxStore,
               **options: Any) -> Callable[..., Any]:
    """A Django view (POST only, CSRF-exempt) persisting each verified delivery in ``inbox``
    (``royaltykit.stores``) and answering 200 at once (``queued``, or ``duplicate``); the handler
    runs in the inbox's worker (``inbox.run_worker(handler)``). An inbox whose ``enqueue`` is a
    coroutine (``AsyncPostgresInbox``) gives an async view. ``options`` are
    :class:`WebhookReceiver`'s (``namespace`` is required)."""
    receiver = WebhookReceiver(secrets, inbox=inbox, **options)
    limit = receiver.max_body_bytes + 1

    if inspect.iscoroutinefunction(getattr(inbox, "enqueue", None)):
        async def async_view(request: HttpRequest) -> HttpResponse:
            if request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            return _response(await receiver.areceive(request.headers.items(), request.read(limit),
                                                     route=_route(request)))
        async_view.__name__ = "webhooks"
        exempt_async: Callable[..., Any] = csrf_exempt(async_view)
        return exempt_async

    def view(request: HttpRequest) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        return _response(receiver.receive(request.headers.items(), request.read(limit), route=_route(request)))
    view.__name__ = "webhooks"
    exempt: Callable[..., Any] = csrf_exempt(view)
    return exempt
