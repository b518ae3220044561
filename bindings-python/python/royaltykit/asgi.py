"""``royaltykit.asgi``: an ASGI application receiving webhook deliveries, for Starlette, FastAPI
or any ASGI server. It reads the raw body itself (whatever the content type, at most the
receiver's limit + 1 bytes) and answers with :meth:`WebhookReceiver.areceive` — the store and the
handler may be async. No framework is imported::

    receiver = WebhookReceiver(secrets, namespace="org-1", store=store, handler=on_delivery)
    app = Starlette(routes=[Route("/webhooks", WebhookApp(receiver), methods=["POST"])])
    # FastAPI: app.add_route("/webhooks", WebhookApp(receiver), methods=["POST"])

The handler may be an :class:`~royaltykit.EventRouter` (``handler=router``): its handlers, sync
or async, run in order for each delivery. A receiver in inbox mode (``inbox=`` any inbox of
:mod:`royaltykit.stores`: ``AsyncPostgresInbox``, ``AsyncRedisInbox`` over ``redis.asyncio.Redis``,
or a synchronous one) persists each delivery and answers at once; its worker runs the handler::

    inbox = AsyncRedisInbox(redis.asyncio.Redis())
    app = WebhookApp(WebhookReceiver(secrets, namespace="org-1", inbox=inbox))
    # elsewhere: await inbox.run_worker(on_event)

After a secret rotation, ``app.receiver.use_secrets(rotated.secrets(previous=current))``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .receiver import WebhookReceiver

__all__ = ["WebhookApp"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]


class WebhookApp:
    """An ASGI app: POST deliveries to it; other methods get 405. ``route`` (``/webhooks``) names
    the receiver's telemetry spans (``POST /webhooks``); by default the route the framework puts
    in the ASGI scope (FastAPI), else none."""

    def __init__(self, receiver: WebhookReceiver, *, route: str | None = None) -> None:
        self.receiver = receiver
        self.route = route

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            await _respond(send, 405, b'{"error":"method_not_allowed"}', [(b"allow", b"POST")])
            return
        limit = self.receiver.max_body_bytes + 1
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            if len(body) < limit:  # past the limit the rest is read and dropped: the core answers 413
                body += message.get("body", b"")[: limit - len(body)]
            more = message.get("more_body", False)
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        route = self.route if self.route is not None else getattr(scope.get("route"), "path", None)
        r = await self.receiver.areceive(headers, bytes(body), route=route if isinstance(route, str) else None)
        await _respond(send, r.status, r.body)


async def _respond(send: Callable[[Message], Awaitable[None]], status: int, body: bytes,
                   headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
