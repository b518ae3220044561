"""Routing deliveries by event name (issue 43 point 6) from the installed wheel: an EventRouter as
the handler of a WebhookReceiver (receive, areceive) and of the ASGI app (royaltykit.asgi, over
HTTP through httpx's ASGI transport), with deliveries signed by sign_webhook. The handlers of a
name run in order, then the on_any handlers, then the fallback only when no handler named the
event; an unknown name is kept as sent; a delivery no handler takes is acknowledged; a handler
that raises fails the delivery (500) and the redelivery runs the handlers again. The typed names
are the core's."""

from __future__ import annotations

import asyncio
import json
import time
import typing
import warnings
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import royaltykit as rk
from royaltykit.asgi import WebhookApp

SECRET = "whsec_router_tests_0123456789abcdef"


def delivery(did: str, event: str) -> tuple[list[tuple[str, str]], bytes]:
    body = json.dumps({"event": event,
                       "resource": {"type": "ddex_delivery", "reference": did, "url": "/api/v1/ddex/deliveries/" + did},
                       "occurred_at": "2026-11-22T04:05:06Z"}).encode()
    # signed now: the receivers check the timestamp against their clock, and the suite may run
    # longer than the 300 s tolerance before this file
    return list(rk.sign_webhook(SECRET, body, timestamp=int(time.time()), delivery_id=did).items()), body


class Post:
    """Delivers through one of the three ways a receiver is driven: ``receive``, ``areceive``, or
    the ASGI app over HTTP. Returns the status."""

    def __init__(self, how: str, receiver: rk.WebhookReceiver) -> None:
        self.how, self.receiver = how, receiver

    def __call__(self, did: str, event: str) -> int:
        headers, body = delivery(did, event)
        if self.how == "receive":
            return self.receiver.receive(headers, body).status
        if self.how == "areceive":
            return asyncio.run(self.receiver.areceive(headers, body)).status

        async def over_http() -> int:
            transport = httpx.ASGITransport(app=WebhookApp(self.receiver))
            async with httpx.AsyncClient(transport=transport, base_url="http://receiver.test") as http:
                return (await http.post("/webhooks", headers=headers, content=body)).status_code

        return asyncio.run(over_http())


WAYS = ["receive", "areceive", "asgi"]


def recorder(ran: list[tuple[str, str, str]], tag: str, *, asynchronous: bool = False) -> Callable[..., Any]:
    """A handler recording ``(tag, delivery id, event name)``; a coroutine function when asked."""
    def record(d: rk.VerifiedWebhook) -> None:
        ran.append((tag, d.delivery_id, d.event.name))

    async def record_async(d: rk.VerifiedWebhook) -> None:
        await asyncio.sleep(0)  # gives the loop a turn: the order still holds
        ran.append((tag, d.delivery_id, d.event.name))

    return record_async if asynchronous else record


@pytest.mark.parametrize("how", WAYS)
def test_each_delivery_goes_to_the_handlers_of_its_event_name(how: str) -> None:
    ran: list[tuple[str, str, str]] = []
    # Async handlers only where the receiver awaits (areceive and the ASGI app).
    mixed = how != "receive"
    router = rk.EventRouter()

    @router.on("ddex.delivery.failed")
    def first(d: rk.VerifiedWebhook) -> None:
        ran.append(("first", d.delivery_id, d.event.name))

    router.on("ddex.delivery.failed", recorder(ran, "second", asynchronous=mixed))
    router.on("ddex.import.completed", recorder(ran, "imported"))
    router.on_any(recorder(ran, "audit", asynchronous=mixed))
    seen: list[rk.WebhookEvent] = []

    @router.otherwise
    def fallback(d: rk.VerifiedWebhook) -> None:
        seen.append(d.event)
        ran.append(("fallback", d.delivery_id, d.event.name))

    assert router.is_async is mixed
    post = Post(how, rk.WebhookReceiver(SECRET, namespace="org-1", handler=router))

    assert post("dlv_failed", "ddex.delivery.failed") == 200
    assert ran == [("first", "dlv_failed", "ddex.delivery.failed"), ("second", "dlv_failed", "ddex.delivery.failed"),
                   ("audit", "dlv_failed", "ddex.delivery.failed")]
    ran.clear()
    assert post("dlv_imported", "ddex.import.completed") == 200
    assert ran == [("imported", "dlv_imported", "ddex.import.completed"), ("audit", "dlv_imported", "ddex.import.completed")]
    ran.clear()
    # A name the spec does not list: kept as sent, the on_any handler and the fallback get it.
    assert post("dlv_retried", "ddex.delivery.retried") == 200
    assert ran == [("audit", "dlv_retried", "ddex.delivery.retried"), ("fallback", "dlv_retried", "ddex.delivery.retried")]
    assert [(e.name, e.is_known) for e in seen] == [("ddex.delivery.retried", False)]
    ran.clear()
    # A known name nobody registered: on_any, then the fallback.
    assert post("dlv_degraded", "ddex.connection.degraded") == 200
    assert [tag for tag, _, _ in ran] == ["audit", "fallback"]
    ran.clear()
    # Every handler ran once per delivery: a duplicate is acknowledged and runs nothing.
    assert post("dlv_failed", "ddex.delivery.failed") == 200
    assert ran == []


@pytest.mark.parametrize("how", WAYS)
def test_a_delivery_no_handler_takes_is_acknowledged(how: str) -> None:
    ran: list[tuple[str, str, str]] = []
    router = rk.EventRouter()
    router.on("ddex.delivery.failed", recorder(ran, "failed"))
    router.on("ddex.delivery.retried", recorder(ran, "retried"))  # a name the spec does not list is accepted
    post = Post(how, rk.WebhookReceiver(SECRET, namespace="org-1", handler=router))
    assert post("dlv_degraded", "ddex.connection.degraded") == 200  # known, nobody registered, no fallback
    assert post("dlv_unknown", "ddex.something.new") == 200
    assert ran == []
    assert post("dlv_retried", "ddex.delivery.retried") == 200
    assert ran == [("retried", "dlv_retried", "ddex.delivery.retried")]


@pytest.mark.parametrize("how", WAYS)
def test_a_handler_that_raises_fails_the_delivery_and_the_redelivery_runs_every_handler_again(how: str) -> None:
    ran: list[tuple[str, str, str]] = []
    errors: list[BaseException] = []
    attempts = {"n": 0}
    asynchronous = how != "receive"

    async def flaky_async(d: rk.VerifiedWebhook) -> None:
        flaky(d)

    def flaky(d: rk.VerifiedWebhook) -> None:
        attempts["n"] += 1
        ran.append(("flaky", d.delivery_id, d.event.name))
        if attempts["n"] == 1:
            raise RuntimeError("the database is down (first attempt)")

    router = rk.EventRouter()
    router.on("ddex.delivery.failed", recorder(ran, "first"))
    router.on("ddex.delivery.failed", flaky_async if asynchronous else flaky)
    router.on("ddex.delivery.failed", recorder(ran, "after", asynchronous=asynchronous))
    router.on_any(recorder(ran, "audit"))
    receiver = rk.WebhookReceiver(SECRET, namespace="org-1", handler=router, on_error=lambda e, d: errors.append(e))
    post = Post(how, receiver)

    assert post("dlv_1", "ddex.delivery.failed") == 500
    assert [tag for tag, _, _ in ran] == ["first", "flaky"]  # the handlers after it did not run
    assert [str(e) for e in errors] == ["the database is down (first attempt)"]
    ran.clear()
    assert post("dlv_1", "ddex.delivery.failed") == 200  # the service's redelivery: the claim was released
    assert [tag for tag, _, _ in ran] == ["first", "flaky", "after", "audit"]
    ran.clear()
    assert post("dlv_1", "ddex.delivery.failed") == 200  # done: a duplicate
    assert ran == []


def test_the_synchronous_receive_refuses_an_async_handler_rather_than_skip_it() -> None:
    ran: list[tuple[str, str, str]] = []
    errors: list[BaseException] = []
    router = rk.EventRouter()
    router.on("ddex.delivery.failed", recorder(ran, "sync"))
    router.on("ddex.delivery.failed", recorder(ran, "async", asynchronous=True))
    router.on("ddex.delivery.failed", recorder(ran, "after"))
    receiver = rk.WebhookReceiver(SECRET, namespace="org-1", handler=router, on_error=lambda e, d: errors.append(e))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no coroutine is left never awaited
        assert receiver.receive(*delivery("dlv_1", "ddex.delivery.failed")).status == 500
        assert [tag for tag, _, _ in ran] == ["sync"]
        assert len(errors) == 1 and isinstance(errors[0], TypeError) and "areceive" in str(errors[0])
        # A plain async handler likewise: 500, so the delivery is sent again, never a 200 with its work undone.
        plain = rk.WebhookReceiver(SECRET, namespace="org-1", handler=recorder(ran, "plain", asynchronous=True),
                                   on_error=lambda e, d: errors.append(e))
        assert plain.receive(*delivery("dlv_2", "ddex.delivery.failed")).status == 500
    assert [tag for tag, _, _ in ran] == ["sync"] and isinstance(errors[1], TypeError)
    # The same router, awaited: every handler in order.
    ran.clear()
    assert asyncio.run(receiver.areceive(*delivery("dlv_1", "ddex.delivery.failed"))).status == 200
    assert [tag for tag, _, _ in ran] == ["sync", "async", "after"]


def test_with_a_transactional_store_each_handler_gets_the_connection(tmp_path: Any) -> None:
    import sqlite3

    from royaltykit.stores import SqliteDedupStore

    database = str(tmp_path / "app.sqlite")
    sqlite3.connect(database).execute("CREATE TABLE effects (tag TEXT, delivery_id TEXT)").connection.close()
    router = rk.EventRouter()

    def effect(tag: str) -> Callable[[rk.VerifiedWebhook, sqlite3.Connection], None]:
        return lambda d, connection: connection.execute("INSERT INTO effects VALUES (?, ?)", (tag, d.delivery_id)) and None

    router.on("ddex.import.completed", effect("named"))
    router.on_any(effect("any"))
    router.on_any(lambda d, connection: effect("failing")(d, connection) or (d.delivery_id == "dlv_fails" and 1 / 0))
    receiver = rk.WebhookReceiver(SECRET, namespace="org-1", handler=router, store=SqliteDedupStore(database),
                                  on_error=lambda e, d: None)
    assert receiver.receive(*delivery("dlv_tx", "ddex.import.completed")).status == 200
    # A handler that raises rolls back the effects of the handlers before it, in the same transaction.
    assert receiver.receive(*delivery("dlv_fails", "ddex.import.completed")).status == 500
    rows = sqlite3.connect(database).execute("SELECT tag, delivery_id FROM effects").fetchall()
    assert rows == [("named", "dlv_tx"), ("any", "dlv_tx"), ("failing", "dlv_tx")]


def test_an_invalid_name_is_refused_at_registration() -> None:
    router = rk.EventRouter()
    for name in ["", "ddex delivery failed", "ddex.delivery.failed\n", "a" * 257]:
        with pytest.raises(rk.InvalidArgumentError) as refused:
            router.on(name, lambda d: None)
        assert refused.value.code == "invalid_argument" and isinstance(refused.value, ValueError)
        with pytest.raises(rk.InvalidArgumentError):
            router.on(name)  # the decorator form: at once, before any handler is given
    with pytest.raises(TypeError):
        router.on(42, lambda d: None)
    with pytest.raises(TypeError, match="callable"):
        router.on("ddex.delivery.failed", "not a handler")
    with pytest.raises(TypeError, match="callable"):
        router.on_any(None)
    # Nothing was registered by the refusals: a delivery of any name runs nothing.
    assert repr(router) == 'EventRouter { names: [], any: 0, fallback: false }'
    assert router.on("a" * 256, len) is len  # the longest name accepted; the handler is returned
    assert router.on("ddex.new.event")(len) is len


def test_the_typed_names_are_the_cores() -> None:
    # EventName is one Literal per name (a Union at run time): together, the core's list, in order.
    assert tuple(name for literal in typing.get_args(rk.EventName) for name in typing.get_args(literal)) == rk.KNOWN_EVENT_NAMES
    assert isinstance(rk.KNOWN_EVENT_NAMES, tuple) and len(rk.KNOWN_EVENT_NAMES) == 9
    assert "ddex.delivery.failed" in rk.KNOWN_EVENT_NAMES and "enterprise.webhook.test" in rk.KNOWN_EVENT_NAMES
    route = rk.EventRoutes().route("ddex.delivery.failed")
    assert (route.named, route.any, route.fallback) == ([], False, False)


def test_a_later_fallback_replaces_the_earlier_one() -> None:
    ran: list[tuple[str, str, str]] = []
    router = rk.EventRouter()
    router.otherwise(recorder(ran, "earlier"))
    router.otherwise(recorder(ran, "later"))
    receiver = rk.WebhookReceiver(SECRET, namespace="org-1", handler=router)
    assert receiver.receive(*delivery("dlv_1", "ddex.import.failed")).status == 200
    assert [tag for tag, _, _ in ran] == ["later"]
