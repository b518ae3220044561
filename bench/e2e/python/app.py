"""The Python receivers of the end-to-end benchmark (bench/e2e, issue 44 point 2):

    python app.py asgi     Starlette + royaltykit.asgi.WebhookApp, under uvicorn (uvloop, httptools)
    python app.py flask    Flask + royaltykit.flask.webhook_view, under gunicorn (one worker, one thread)
    python app.py django   Django + royaltykit.django.webhook_view, under gunicorn (one worker, one thread)

Env (bench/e2e contract): PORT, BENCH_IMPL (royaltykit | hand), BENCH_STORE (memory | redis |
postgres), REDIS_URL, PG_DSN, BENCH_SECRET. One process serving POST /webhook on 127.0.0.1:PORT;
prints ``ready PORT`` once it serves. ``royaltykit`` is the integration as the README shows it,
with the library's store (the in-memory window, RedisDedupStore, the transactional
PostgresDedupStore; their async twins under ASGI) and a handler that does nothing; ``hand`` is
hand.py in the same framework with the same client library (redis-py, psycopg 3), sync or async
alike.
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hand  # noqa: E402

INTEGRATION = sys.argv[1] if len(sys.argv) > 1 else ""
PORT = int(os.environ["PORT"])
IMPL = os.environ.get("BENCH_IMPL", "royaltykit")
STORE = os.environ.get("BENCH_STORE", "memory")
SECRET = os.environ.get("BENCH_SECRET", "whsec_bench_secret_0123456789")
KEY = SECRET.encode()
NAMESPACE = "bench"
if IMPL not in ("royaltykit", "hand") or STORE not in ("memory", "redis", "postgres"):
    sys.exit(f"unknown BENCH_IMPL {IMPL!r} or BENCH_STORE {STORE!r}")


def ready() -> None:
    print(f"ready {PORT}", flush=True)


# --- stores ---

def sync_store() -> Any:
    """The royaltykit store for BENCH_STORE, or None: the receiver's default in-memory window."""
    if STORE == "redis":
        import redis

        from royaltykit import RedisDedupStore

        return RedisDedupStore(redis.Redis.from_url(os.environ["REDIS_URL"]))
    if STORE == "postgres":
        from royaltykit.stores import PostgresDedupStore

        return PostgresDedupStore(os.environ["PG_DSN"])  # creates its table
    return None


def sync_hand_store() -> Any:
    if STORE == "redis":
        import redis

        return hand.RedisSetNx(redis.Redis.from_url(os.environ["REDIS_URL"]))
    if STORE == "postgres":
        return hand.PostgresInsert(os.environ["PG_DSN"])  # creates its table
    return hand.MemorySet()


def handler(delivery: Any, connection: Any = None) -> None:
    """Does nothing (with the PostgreSQL store it is called with the transaction's connection)."""


async def async_handler(delivery: Any, connection: Any = None) -> None:
    """Does nothing."""


# --- ASGI: Starlette under uvicorn ---

def asgi_app() -> Any:
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    tables: list[Any] = []  # stores whose table is created at start (in the server's event loop)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        for store in tables:
            await store.create_table()
        yield

    if IMPL == "royaltykit":
        from royaltykit import AsyncRedisDedupStore, WebhookReceiver
        from royaltykit.asgi import WebhookApp

        store: Any = None
        if STORE == "redis":
            import redis.asyncio

            store = AsyncRedisDedupStore(redis.asyncio.Redis.from_url(os.environ["REDIS_URL"]))
        elif STORE == "postgres":
            from royaltykit.stores import AsyncPostgresDedupStore

            store = AsyncPostgresDedupStore(os.environ["PG_DSN"])
            tables.append(store)
        receiver = WebhookReceiver(SECRET, namespace=NAMESPACE, store=store, handler=async_handler)
        return Starlette(routes=[Route("/webhook", WebhookApp(receiver), methods=["POST"])], lifespan=lifespan)

    if STORE == "redis":
        import redis.asyncio

        hstore: Any = hand.AsyncRedisSetNx(redis.asyncio.Redis.from_url(os.environ["REDIS_URL"]))
    elif STORE == "postgres":
        hstore = hand.AsyncPostgresInsert(os.environ["PG_DSN"])
        tables.append(hstore)
    else:
        hstore = hand.AsyncMemorySet()

    async def webhook(request: Request) -> Response:
        status, body = await hand.areceive(request.headers.get, await request.body(), KEY, hstore)
        return Response(body, status_code=status, media_type="application/json")

    return Starlette(routes=[Route("/webhook", webhook, methods=["POST"])], lifespan=lifespan)


def serve_asgi() -> None:
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)  # the lifespan's startup, then the socket bound
            if self.started:
                ready()

    Server(uvicorn.Config(asgi_app(), host="127.0.0.1", port=PORT, loop="uvloop", http="httptools", lifespan="on",
                          log_level="warning", access_log=False)).run()


# --- WSGI: Flask and Django under gunicorn, one worker with one thread ---

def flask_app() -> Any:
    from flask import Flask, Response, request

    app = Flask(__name__)
    if IMPL == "royaltykit":
        from royaltykit.flask import webhook_view

        @app.post("/webhook")
        @webhook_view(SECRET, namespace=NAMESPACE, store=sync_store())
        def on_delivery(delivery: Any, connection: Any = None) -> None:
            handler(delivery, connection)
        return app

    store = sync_hand_store()

    @app.post("/webhook")
    def webhook() -> Response:
        status, body = hand.receive(request.headers.get, request.get_data(), KEY, store)
        return Response(body, status=status, content_type="application/json")
    return app


urlpatterns: list[Any] = []  # Django's ROOT_URLCONF is this module


def django_app() -> Any:
    import django
    from django.conf import settings

    settings.configure(
        DEBUG=False, ALLOWED_HOSTS=["127.0.0.1", "localhost"], ROOT_URLCONF=__name__, SECRET_KEY="bench-e2e",
        # startproject's middleware that needs no database (no sessions, auth or messages apps)
        MIDDLEWARE=["django.middleware.security.SecurityMiddleware", "django.middleware.common.CommonMiddleware",
                    "django.middleware.csrf.CsrfViewMiddleware",
                    "django.middleware.clickjacking.XFrameOptionsMiddleware"],
        USE_TZ=True)
    django.setup()
    from django.core.wsgi import get_wsgi_application
    from django.http import HttpRequest, HttpResponse
    from django.urls import path
    from django.views.decorators.csrf import csrf_exempt
    from django.views.decorators.http import require_POST

    if IMPL == "royaltykit":
        from royaltykit.django import webhook_view

        @webhook_view(SECRET, namespace=NAMESPACE, store=sync_store())
        def on_delivery(delivery: Any, connection: Any = None) -> None:
            handler(delivery, connection)
        view: Any = on_delivery
    else:
        store = sync_hand_store()

        @csrf_exempt
        @require_POST
        def webhook(request: HttpRequest) -> HttpResponse:
            status, body = hand.receive(request.headers.get, request.body, KEY, store)
            return HttpResponse(body, status=status, content_type="application/json")
        view = webhook
    urlpatterns[:] = [path("webhook", view)]
    return get_wsgi_application()


def serve_wsgi(build: Any) -> None:
    from gunicorn.app.base import BaseApplication

    class Gunicorn(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            # one worker, one thread: a sync worker's one request at a time, but with HTTP keep-alive
            # (the sync worker closes every connection: the load generator would time connects)
            for k, v in {"bind": f"127.0.0.1:{PORT}", "workers": 1, "worker_class": "gthread", "threads": 1,
                         "accesslog": None, "loglevel": "warning", "post_worker_init": lambda worker: ready()}.items():
                self.cfg.set(k, v)

        def load(self) -> Any:
            return build()  # in the worker, after the fork: its own Redis/PostgreSQL connections

    Gunicorn().run()


if __name__ == "__main__":
    if INTEGRATION == "asgi":
        serve_asgi()
    elif INTEGRATION == "flask":
        serve_wsgi(flask_app)
    elif INTEGRATION == "django":
        serve_wsgi(django_app)
    else:
        sys.exit("usage: app.py asgi|flask|django")
