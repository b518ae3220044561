"""A receiver app for the shared receiver tests (tests/receivers): one framework (FRAMEWORK:
starlette, fastapi, flask, flask-async, django, django-async) on 127.0.0.1:PORT, deduplicating on
the Redis at REDIS_PORT, with the handler every language's app implements alike: a resource
reference starting with "slow" sleeps 0.6 s; one starting with "fail-once" fails its first
attempt (a marker file beside EFFECTS remembers it); then the reference is appended to the
EFFECTS file, one line per effect; after one starting with "commit-fails-once", the next commit
fails once (the store going away between the effect and the commit). Secrets: the current, the
previous (no end) and one rotated out long ago."""

import asyncio
import os
import sys
import threading
import time
from typing import Any

import redis
import redis.asyncio

from royaltykit import AsyncRedisDedupStore, RedisDedupStore, VerifiedWebhook, WebhookReceiver, WebhookSecret

FRAMEWORK, PORT, REDIS_PORT, EFFECTS = (os.environ[k] for k in ("FRAMEWORK", "PORT", "REDIS_PORT", "EFFECTS"))
SECRETS = ["whsec_current", "whsec_previous", WebhookSecret("whsec_rotated_out", valid_until=1_700_000_000)]
FAIL_NEXT_COMMIT = threading.Event()


class FlakyCommit:
    """The store, whose next commit fails once when FAIL_NEXT_COMMIT is set (sync or async)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def claim(self, key: str) -> Any:
        return self.store.claim(key)

    def release(self, key: str) -> Any:
        return self.store.release(key)

    def commit(self, key: str) -> Any:
        if FAIL_NEXT_COMMIT.is_set():
            FAIL_NEXT_COMMIT.clear()
            raise ConnectionError("Redis connection reset")
        return self.store.commit(key)
OPTIONS = {"namespace": "org-test", "on_error": lambda e, d: None}


def effect(delivery: VerifiedWebhook) -> None:
    ref = delivery.event.resource_reference
    if ref.startswith("commit-fails-once"):
        FAIL_NEXT_COMMIT.set()
    marker = f"{EFFECTS}.failed.{ref}"
    if ref.startswith("fail-once") and not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError("the database is down (first attempt)")
    with open(EFFECTS, "a") as f:
        f.write(ref + "\n")


def handler(delivery: VerifiedWebhook) -> None:
    if delivery.event.resource_reference.startswith("slow"):
        time.sleep(0.6)
    effect(delivery)


async def async_handler(delivery: VerifiedWebhook) -> None:
    if delivery.event.resource_reference.startswith("slow"):
        await asyncio.sleep(0.6)
    effect(delivery)


def sync_store() -> Any:
    return FlakyCommit(RedisDedupStore(redis.Redis(host="127.0.0.1", port=int(REDIS_PORT), socket_timeout=2)))


def async_store() -> Any:
    return FlakyCommit(AsyncRedisDedupStore(redis.asyncio.Redis(host="127.0.0.1", port=int(REDIS_PORT), socket_timeout=2)))


def serve_wsgi(app: object) -> None:
    from werkzeug.serving import make_server

    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = make_server("127.0.0.1", int(PORT), app, threaded=True)  # type: ignore[arg-type]
    print(f"ready {PORT}", flush=True)
    server.serve_forever()


def serve_asgi(app: object) -> None:
    import threading

    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=int(PORT), log_level="warning", lifespan="off")  # type: ignore[arg-type]
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started:
            time.sleep(0.02)
        print(f"ready {PORT}", flush=True)

    threading.Thread(target=announce, daemon=True).start()
    server.run()


def django_app(asynchronous: bool) -> object:
    import django
    from django.conf import settings

    settings.configure(DEBUG=False, ALLOWED_HOSTS=["127.0.0.1"], ROOT_URLCONF=__name__, SECRET_KEY="test",
                       MIDDLEWARE=["django.middleware.csrf.CsrfViewMiddleware"])
    django.setup()
    from django.urls import path

    from royaltykit.django import webhook_view

    store = async_store() if asynchronous else sync_store()
    view = webhook_view(SECRETS, store=store, **OPTIONS)(async_handler if asynchronous else handler)
    globals()["urlpatterns"] = [path("webhooks", view)]
    if asynchronous:
        from django.core.asgi import get_asgi_application

        return get_asgi_application()
    from django.core.wsgi import get_wsgi_application

    return get_wsgi_application()


def main() -> None:
    if FRAMEWORK in ("starlette", "fastapi"):
        from royaltykit.asgi import WebhookApp

        receiver = WebhookReceiver(SECRETS, store=async_store(), handler=async_handler, **OPTIONS)
        if FRAMEWORK == "starlette":
            from starlette.applications import Starlette
            from starlette.routing import Route

            app: object = Starlette(routes=[Route("/webhooks", WebhookApp(receiver), methods=["POST"])])
        else:
            from fastapi import FastAPI

            app = fastapi = FastAPI()
            fastapi.add_route("/webhooks", WebhookApp(receiver), methods=["POST"])
        serve_asgi(app)
    elif FRAMEWORK in ("flask", "flask-async"):
        from flask import Flask

        from royaltykit.flask import webhook_view

        flask = Flask(__name__)
        asynchronous = FRAMEWORK == "flask-async"
        view = webhook_view(SECRETS, store=sync_store(), **OPTIONS)(async_handler if asynchronous else handler)
        flask.add_url_rule("/webhooks", view_func=view, methods=["POST"])
        serve_wsgi(flask)
    elif FRAMEWORK == "django":
        serve_wsgi(django_app(asynchronous=False))
    elif FRAMEWORK == "django-async":
        serve_asgi(django_app(asynchronous=True))
    else:
        sys.exit(f"unknown FRAMEWORK {FRAMEWORK}")


if __name__ == "__main__":
    main()
