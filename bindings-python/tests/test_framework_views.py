"""The Flask and Django views (royaltykit.flask, royaltykit.django) through each framework's own
request handling (Flask's test client; Django's request factories, sync and async): each view
carries the receiver it built as ``view.receiver``, so a secret rotation reaches the live view
(``view.receiver.use_secrets(rotated.secrets(previous=...))``: the previous secret verifies until
the rotation's overlap ends, and never once it is dropped); and ``inbox_view`` over the Redis
inboxes (``RedisInbox``: a sync view; ``AsyncRedisInbox``: an async view) against a real
``redis-server``, whose worker then processes each delivery once."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from datetime import datetime, timezone
from typing import Any

import django
import flask
import pytest
import redis
from django.conf import settings

import royaltykit as rk
import royaltykit.django as rk_django
import royaltykit.flask as rk_flask
from royaltykit.stores import AsyncRedisInbox, RedisInbox, WorkerReport
from resp import AsyncResp, Resp

if not settings.configured:
    settings.configure(DEBUG=False, ALLOWED_HOSTS=["*"], SECRET_KEY="royaltykit-tests", ROOT_URLCONF=__name__,
                       USE_TZ=True)
    django.setup()
urlpatterns: list[Any] = []  # ROOT_URLCONF: the views are called directly

from django.test import AsyncRequestFactory, RequestFactory  # noqa: E402 (after settings)

OLD = "whsec_views_old_0123456789abcdef"
NEW = "whsec_views_new_0123456789abcdef"
NAMESPACE = "org-7/views"
EVENT = "ddex.delivery.failed"


def signed(secret: str, name: str) -> tuple[dict[str, str], bytes, str]:
    did = f"dlv_{name}_{uuid.uuid4().hex[:8]}"
    body = json.dumps({"event": EVENT, "resource": {"type": "release", "reference": "res_" + did,
                                                    "url": "/api/v1/releases/" + did},
                       "occurred_at": "2026-11-22T04:05:06Z"}).encode()
    return rk.sign_webhook(secret, body, timestamp=int(time.time()), delivery_id=did), body, did


def rotation() -> list[rk.WebhookSecret]:
    """What a receiver takes after ``rotate_secret``: NEW, then OLD until the overlap ends (an hour)."""
    until = datetime.fromtimestamp(int(time.time()) + 3600, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rotated = rk.revealed_secret(json.dumps({"new_secret": NEW, "previous_secret_valid_until": until}).encode())
    return rotated.secrets(previous=OLD)


def rotate_through(receiver: rk.WebhookReceiver, post: Any) -> None:
    """Before the rotation OLD verifies and NEW does not; during the overlap both do; once OLD is
    dropped only NEW does. ``post(headers, body)`` answers the status."""
    assert post(*signed(OLD, "before")[:2]) == 200
    assert post(*signed(NEW, "early")[:2]) == 401
    receiver.use_secrets(rotation())
    assert post(*signed(NEW, "after")[:2]) == 200
    assert post(*signed(OLD, "overlap")[:2]) == 200, "the previous secret verifies until the overlap ends"
    receiver.use_secrets(NEW)
    assert post(*signed(OLD, "dropped")[:2]) == 401
    assert post(*signed(NEW, "later")[:2]) == 200


@pytest.fixture()
def prefix() -> str:
    return "{v" + uuid.uuid4().hex[:10] + "}:"


# ---- Flask ------------------------------------------------------------------------------------------


def flask_post(app: flask.Flask) -> Any:
    client = app.test_client()

    def post(headers: dict[str, str], body: bytes) -> int:
        return client.post("/webhooks", data=body, headers={**headers, "Content-Type": "application/json"}).status_code
    return post


def test_a_flask_webhook_view_rotates_through_its_receiver() -> None:
    handled: list[str] = []
    app = flask.Flask("rotation")

    @app.post("/webhooks")
    @rk_flask.webhook_view(OLD, namespace=NAMESPACE)
    def on_delivery(delivery: rk.VerifiedWebhook) -> None:
        handled.append(delivery.delivery_id)

    assert isinstance(on_delivery.receiver, rk.WebhookReceiver) and on_delivery.__name__ == "on_delivery"
    rotate_through(on_delivery.receiver, flask_post(app))
    assert len(handled) == 4


def test_a_flask_inbox_view_on_redis_rotates_through_its_receiver(redis_port: int, prefix: str) -> None:
    client = redis.Redis(host="127.0.0.1", port=redis_port)
    inbox = RedisInbox(client, prefix=prefix)
    app = flask.Flask("inbox")
    view = rk_flask.inbox_view(OLD, namespace=NAMESPACE, inbox=inbox)
    assert not asyncio.iscoroutinefunction(view), "a sync inbox gives a sync view"
    app.add_url_rule("/webhooks", view_func=view, methods=["POST"])
    post = flask_post(app)
    headers, body, did = signed(OLD, "dup")
    replies = [app.test_client().post("/webhooks", data=body, headers=headers) for _ in range(2)]
    assert [(r.status_code, r.get_json()) for r in replies] == [(200, {"result": "queued"}), (200, {"result": "duplicate"})]
    rotate_through(view.receiver, post)
    applied: list[str] = []
    assert inbox.drain(lambda event, c: applied.append(event.resource_reference)) == WorkerReport(5, 0, 0)
    assert len(set(applied)) == 5 and inbox.counts() == {"done": 5}
    client.close()


def test_an_async_flask_inbox_view_on_an_async_redis_inbox(redis_port: int, prefix: str) -> None:
    sync = Resp(redis_port)
    inbox = AsyncRedisInbox(AsyncResp(sync), prefix=prefix)  # redis.asyncio's execute_command, loop-free
    app = flask.Flask("async-inbox")
    view = rk_flask.inbox_view(OLD, namespace=NAMESPACE, inbox=inbox)
    assert asyncio.iscoroutinefunction(view), "an async inbox gives an async view"
    app.add_url_rule("/webhooks", view_func=view, methods=["POST"])
    rotate_through(view.receiver, flask_post(app))

    async def drain() -> WorkerReport:
        return await inbox.drain(lambda event, c: None)
    assert asyncio.run(drain()) == WorkerReport(4, 0, 0)
    sync.close()


# ---- Django ------------------------------------------------------------------------------------------


def django_post(view: Any) -> Any:
    factory = RequestFactory()

    def post(headers: dict[str, str], body: bytes) -> int:
        request = factory.post("/webhooks", data=body, content_type="application/json", headers=headers)
        return int(view(request).status_code)
    return post


def django_apost(view: Any) -> Any:
    factory = AsyncRequestFactory()

    def post(headers: dict[str, str], body: bytes) -> int:
        request = factory.post("/webhooks", data=body, content_type="application/json", headers=headers)
        return int(asyncio.run(view(request)).status_code)
    return post


def test_a_django_webhook_view_rotates_through_its_receiver() -> None:
    handled: list[str] = []

    @rk_django.webhook_view(OLD, namespace=NAMESPACE)
    def on_delivery(delivery: rk.VerifiedWebhook) -> None:
        handled.append(delivery.delivery_id)

    assert isinstance(on_delivery.receiver, rk.WebhookReceiver) and getattr(on_delivery, "csrf_exempt", False)
    assert on_delivery(RequestFactory().get("/webhooks")).status_code == 405
    rotate_through(on_delivery.receiver, django_post(on_delivery))
    assert len(handled) == 4


def test_an_async_django_webhook_view_rotates_through_its_receiver() -> None:
    handled: list[str] = []

    @rk_django.webhook_view(OLD, namespace=NAMESPACE)
    async def on_delivery(delivery: rk.VerifiedWebhook) -> None:
        handled.append(delivery.delivery_id)

    assert asyncio.iscoroutinefunction(on_delivery)
    rotate_through(on_delivery.receiver, django_apost(on_delivery))
    assert len(handled) == 4


def test_a_django_inbox_view_on_redis_rotates_through_its_receiver(redis_port: int, prefix: str) -> None:
    client = redis.Redis(host="127.0.0.1", port=redis_port)
    inbox = RedisInbox(client, prefix=prefix)
    view = rk_django.inbox_view(OLD, namespace=NAMESPACE, inbox=inbox)
    assert not asyncio.iscoroutinefunction(view)
    headers, body, _ = signed(OLD, "dup")
    replies = [view(RequestFactory().post("/webhooks", data=body, content_type="application/json", headers=headers))
               for _ in range(2)]
    assert [json.loads(r.content) for r in replies] == [{"result": "queued"}, {"result": "duplicate"}]
    rotate_through(view.receiver, django_post(view))
    assert inbox.drain(lambda event, c: None) == WorkerReport(5, 0, 0) and inbox.counts() == {"done": 5}
    client.close()


def test_an_async_django_inbox_view_on_an_async_redis_inbox(redis_port: int, prefix: str) -> None:
    sync = Resp(redis_port)
    inbox = AsyncRedisInbox(AsyncResp(sync), prefix=prefix)
    view = rk_django.inbox_view(OLD, namespace=NAMESPACE, inbox=inbox)
    assert asyncio.iscoroutinefunction(view), "an async inbox gives an async view"
    rotate_through(view.receiver, django_apost(view))

    async def drain() -> WorkerReport:
        return await inbox.drain(lambda event, c: None)
    assert asyncio.run(drain()) == WorkerReport(4, 0, 0)
    sync.close()
