#!/usr/bin/env python3
"""A fake reporting + enterprise API for the clients' tests, one implementation for every language.

Run ``python3 tests/fakeapi/server.py``: it listens on 127.0.0.1 (a free port), prints
``listening <port>`` on stdout, and serves until stdin closes or it is killed. Standard library
only, so every suite can start it.

What it serves (from ``../shared/spec``):
- reporting: ``POST /api/platform/v1/oauth/token`` (Basic client id/secret, ``X-Tenant-ID``,
  ``grant_type`` client_credentials → access_token, token_type, expires_in, scope), and the
  machine export routes: list (``data`` page), create (200, queued), get, download (one complete
  artifact), cancel (only while queued);
- enterprise: ``POST /api/v1/token`` (``X-Api-Key``/``X-Api-Secret`` → token, expires_at) and
  ``GET /api/v1/releases``, ``GET /api/v1/countries``, ``GET /api/v1/subscriptions`` (numbered
  pages), ``GET /api/v1/releases/{uuid}`` (a release's current state, the canonical fetch of an
  event's ``resource.url``; ``acting_for`` echoes ``X-User-Id``), ``POST /api/v1/webhooks``
  (a subscription with its reveal-once ``secret`` under ``data``; a repeated ``Idempotency-Key``
  gets the first answer again) and ``POST /api/v1/webhooks/{reference}/rotate-secret`` (the new
  ``secret`` and ``previous_secret_valid_until``, five minutes on), ``GET
  /api/v1/webhooks/{reference}/deliveries`` (``data``: the subscription's delivery log, oldest
  first, one page: ``reference`` ``dlv_…``, ``subscription``, ``event``, ``status`` pending,
  delivered or failed, ``created_at``, ``attempts``, ``replay_of`` on replays) and ``POST
  /api/v1/webhooks/{reference}/deliveries/{deliveryReference}/replay`` (201, ``data``: the new
  ``reference``, ``replay_of``, ``status`` pending; sent once answered, in the background, with the
  original's payload plus ``replay_of``). ``/_fake/stats`` shows ``webhooks`` (each subscription
  with its current and previous secret), ``webhooks_created``, ``idempotent_replays``,
  ``rotations``, ``deliveries`` (every log entry, with ``answer_ms``: how long its POST took) and
  ``replays``.

A delivery is POSTed to the subscription's ``endpoint_url`` (10 s timeout, redirects not followed)
as the spec says: the event payload (``event``, ``resource`` a ``ddex_message`` with its
``/api/v1/releases/<uuid>`` url, ``occurred_at``) with ``Service-Webhook-Id``, ``-Timestamp`` and
``-Signature`` (``v1=<hex>``, two during a rotation's overlap, current first); any 2xx makes it
delivered, anything else failed. No lock is held while sending: the receiver may call back.

Its clock is the real one plus an offset that tests move with ``POST /_fake/advance``
(``{"seconds": s}``), so a client whose sleep is injected can wait minutes in no time while the
server still checks every wait. Control (JSON):
- ``POST /_fake/reset``: forget everything; ``{"scenario": "etl" | "readme"}`` (below), and/or
  ``{"faults": [...], "states": [...], "artifact": "...",
  "token_expires_in": 3600}`` sets the script (``states``: what successive reads of an export
  show, the last one repeated; an export is created ``queued``).
- A fault: ``{"op": <operation id>, "nth": <the op's nth request, from 1>, "do": <what>, ...}``
  with ``do`` one of ``status`` (``status``, optional ``retry_after``), ``expire_token`` (401: the
  token presented is dead from now on), ``drop_after_apply`` / ``drop_before_apply`` (the
  connection closes without a response, after or before the create is applied), ``reset``
  (a TCP reset instead of a response), ``stall`` (no response for ``seconds`` real seconds, then
  closed; ``apply`` says whether the create was applied), ``partial`` (206 with Content-Range),
  ``truncate`` (200 announcing the whole artifact, half sent, connection closed), ``trickle``
  (the whole artifact in 10 pieces over ``seconds`` real seconds: slow, never idle for long).
- ``"list"``: how the export list behaves — ``page_size`` (the most items a page holds,
  whatever ``limit`` asks; default 100), ``echo`` (items repeat the create's members; default
  true, false: only ``id`` and ``status``), ``lag_reads`` (a new export is missing from that many
  list requests after its create; default 0), ``cursor`` (how a page names the next: ``next_cursor``,
  ``meta``, ``links`` or ``none``), ``order`` (``oldest`` or ``newest`` first). Pages are keyset:
  the cursor is the last item's id (a UUID, as the spec's list cursor is).
- ``"existing": {"count": n, "body": {...}}``: exports that exist before the job.
- ``"subscriptions": n``: the organization's webhook subscriptions (``reference`` ``sub_001``, …)
  that ``GET /api/v1/subscriptions`` lists by ``page`` (default 1) and ``size`` (default 10, as
  the spec says), in ``data`` with ``meta.current_page`` and ``meta.last_page``.
- ``"deprecated": [<operation id>, ...]``: those operations' responses carry ``Deprecation``,
  ``Sunset`` (2027-09-01) and a successor ``Link``, as an operation going away does.
- ``"token_delay"``: seconds each token exchange takes (real ones), so concurrent callers overlap.
- ``"enterprise_expires_at"``: the form of the enterprise token's ``expires_at`` — ``rfc3339``
  (default), ``offset`` (``+0000``), ``basic`` (``20261127T030000Z``), ``past`` (a minute behind
  the server's clock while the server honours the token for an hour), ``null``.
- A create fault with ``"also_created_by_another": 1`` also applies an export of the same data as
  if another process had created it at the same moment (not counted in ``exports_created``).
- A ``redirect`` fault answers 307 with a ``Location`` on another origin: the ``evil`` listener
  of this process, which records whatever reaches it (``evil_requests``, ``evil_credentials``).
- ``"replays": "hold"``: replays stay pending (never sent).
- ``"routes": {endpoint_url: url}`` (or ``POST /_fake/route`` with ``{"from": endpoint_url, "to": url}``): where
  deliveries to a subscription's ``endpoint_url`` really go, as DNS would send them — the clients refuse a loopback
  or plain-http ``endpoint_url`` (the spec: HTTPS, public addresses), so a test subscribes
  ``https://hooks.example/…`` and routes it to its loopback receiver.
- ``POST /_fake/deliver`` (``{"reference": <webhook>, "event": "ddex.delivery.failed", "lose": false}``):
  logs a delivery to that subscription and sends it now → ``delivery``, ``status``, ``answer_ms``;
  ``lose``: never sent, failed at once (the receiver unreachable for the whole retry schedule);
  with ``"status"``, the log gives that status instead of ``failed`` (say, one the spec does not name).
- ``GET /_fake/artifact``: the artifact a complete download serves.
- ``GET /_fake/stats``: what it applied and saw: ``exports_created``, ``tokens_issued``,
  ``requests`` by operation, ``retry_after_violations`` (a request of an operation earlier than
  the ``Retry-After`` it was given), ``unauthorized`` (requests with a dead or missing token),
  ``max_per_minute`` (the most protected requests of one client in any rolling 60 s; token exchanges not counted), ``downloads`` (whole
  artifacts served), ``max_concurrent_exchanges`` (token exchanges in progress at once),
  ``evil_requests`` and ``evil_credentials`` (what reached the other origin).
"""
from __future__ import annotations

import base64
import calendar
import hashlib
import hmac
import json
import re
import socket
import struct
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Loopback scheduling jitter allowed between when a client sends and when this server reads a request
# line, when counting a rolling minute (5 ms). The clients keep a request's place in a window one
# second longer than the truncation to whole seconds needs (RATE_MARGIN_SECONDS), so a request that
# reaches this server up to a second late never makes a minute count one too many.
JITTER = 0.005
CLIENTS = {"cid": "csecret"}  # reporting client credentials
TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
API_KEYS = {"key-1": "secret-1"}  # enterprise key and secret
P = "/api/platform/v1"
ROUTES = [
    ("POST", re.compile(rf"^{P}/oauth/token$"), "exchangePlatformClientCredential"),
    ("GET", re.compile(rf"^{P}/exports$"), "listPlatformExports"),
    ("POST", re.compile(rf"^{P}/exports$"), "createPlatformExport"),
    ("GET", re.compile(rf"^{P}/exports/([^/]+)$"), "getPlatformExport"),
    ("GET", re.compile(rf"^{P}/exports/([^/]+)/download$"), "downloadPlatformExport"),
    ("POST", re.compile(rf"^{P}/exports/([^/]+)/cancel$"), "cancelPlatformExport"),
    ("POST", re.compile(r"^/api/v1/token$"), "exchangeEnterpriseToken"),
    ("GET", re.compile(r"^/api/v1/releases$"), "listEnterpriseReleases"),
    ("GET", re.compile(r"^/api/v1/countries$"), "listEnterpriseCountries"),
    ("GET", re.compile(r"^/api/v1/subscriptions$"), "listEnterpriseSubscriptions"),
    ("GET", re.compile(r"^/api/v1/releases/([^/]+)$"), "fetchEnterpriseResource"),
    ("POST", re.compile(r"^/api/v1/webhooks$"), "createEnterpriseWebhook"),
    ("POST", re.compile(r"^/api/v1/webhooks/([^/]+)/rotate-secret$"), "rotateEnterpriseWebhookSecret"),
    ("GET", re.compile(r"^/api/v1/webhooks/([^/]+)/deliveries$"), "listEnterpriseWebhookDeliveries"),
    ("POST", re.compile(r"^/api/v1/webhooks/([^/]+)/deliveries/([^/]+)/replay$"), "replayEnterpriseWebhookDelivery"),
]


# The scripted runs every language's suite makes, kept here once. "etl": the production job —
# a 503 on the token exchange, a 429 with Retry-After, a create whose connection drops after it was
# applied, an expired token, a 503 on a read, an unknown intermediate state, a read that times out,
# a 206 and a truncated download. "readme": the README's job run as written, with real sleeps, so
# with short waits only.
ARTIFACT = "statement_id,amount\n" + "".join(f"{i},{i}.25\n" for i in range(4000))
SCENARIOS = {
    "etl": {
        "faults": [
            {"op": "exchangePlatformClientCredential", "nth": 1, "do": "status", "status": 503},
            {"op": "listPlatformExports", "nth": 1, "do": "status", "status": 429, "retry_after": 30},
            {"op": "createPlatformExport", "nth": 1, "do": "drop_after_apply"},
            {"op": "getPlatformExport", "nth": 1, "do": "expire_token"},
            {"op": "getPlatformExport", "nth": 2, "do": "status", "status": 503},
            {"op": "getPlatformExport", "nth": 4, "do": "stall", "seconds": 2.5},
            {"op": "downloadPlatformExport", "nth": 1, "do": "partial"},
            {"op": "downloadPlatformExport", "nth": 2, "do": "truncate"},
        ],
        "states": ["queued", "processing", "processing", "ready"],
        "artifact": ARTIFACT,
    },
    "readme": {
        "faults": [
            {"op": "listPlatformExports", "nth": 1, "do": "status", "status": 429, "retry_after": 1},
            {"op": "createPlatformExport", "nth": 1, "do": "drop_after_apply"},
            {"op": "getPlatformExport", "nth": 1, "do": "expire_token"},
            {"op": "downloadPlatformExport", "nth": 1, "do": "partial"},
        ],
        "states": ["processing", "ready"],
        "artifact": ARTIFACT,
    },
}


class World:
    """Everything the server knows, behind one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset({})

    def reset(self, script: dict) -> None:
        script = {**SCENARIOS.get(script.get("scenario", ""), {}), **script}
        self.offset = getattr(self, "offset", 0.0)
        self.faults = list(script.get("faults", []))
        self.states = list(script.get("states", ["queued", "ready"]))
        self.artifact = script.get("artifact", "statement_id,amount\n1,10.00\n2,5.50\n").encode()
        self.expires_in = int(script.get("token_expires_in", 3600))
        self.list = {"page_size": 100, "echo": True, "lag_reads": 0, "cursor": "next_cursor", "order": "oldest",
                     **script.get("list", {})}
        self.token_delay = float(script.get("token_delay", 0))
        self.deprecated = set(script.get("deprecated", []))
        self.webhooks: dict[str, dict] = {}  # reference -> {"secret", "previous", "previous_valid_until", ...}
        self.idempotent: dict[str, tuple] = {}  # Idempotency-Key -> the response it got
        self.deliveries: list[dict] = []  # the delivery log of every subscription, oldest first
        self.replays = script.get("replays", "send")  # "hold": replays stay pending
        self.routes: dict[str, str] = dict(script.get("routes", {}))  # endpoint_url -> where deliveries really go
        self.subscriptions = [{"reference": f"sub_{i:03d}", "name": f"hook {i}", "active": True}
                              for i in range(1, int(script.get("subscriptions", 0)) + 1)]
        self.enterprise_expires_at = script.get("enterprise_expires_at", "rfc3339")
        self.exchanging = 0
        self.evil_requests: list[dict] = getattr(self, "evil_requests", [])
        self.evil_requests.clear()
        self.tokens: dict[str, tuple[str, float]] = {}  # token -> (client, expires at)
        self.dead: set[str] = set()
        self.exports: dict[str, dict] = {}
        self.reads: dict[str, int] = defaultdict(int)
        self.count: dict[str, int] = defaultdict(int)
        self.not_before: dict[tuple[str, str], float] = {}
        self.seen: dict[str, deque] = defaultdict(deque)
        self.stats = {"exports_created": 0, "tokens_issued": 0, "requests": defaultdict(int), "retry_after_violations": 0,
                      "unauthorized": 0, "max_per_minute": 0, "downloads": 0, "cancelled": 0, "max_concurrent_exchanges": 0,
                      "webhooks_created": 0, "idempotent_replays": 0, "rotations": 0, "replays": 0}
        existing = script.get("existing")
        if existing:
            for _ in range(int(existing.get("count", 0))):
                e = {"id": str(uuid.uuid4()), "status": "ready", **existing.get("body", {})}
                e["_hidden_for"] = 0
                self.exports[e["id"]] = e

    def now(self) -> float:
        return time.time() + self.offset


WORLD = World()


def iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def log_delivery(hook: str, event: str, payload: dict, replay_of: str | None = None) -> dict:
    """A new pending entry of the delivery log (the lock held)."""
    w = WORLD
    entry = {"reference": "dlv_" + uuid.uuid4().hex, "subscription": hook, "event": event, "status": "pending",
             "created_at": iso(w.now()), "attempts": 0}
    if replay_of is not None:
        entry["replay_of"] = replay_of
    entry["_payload"] = payload
    w.deliveries.append(entry)
    return entry


def event_payload(event: str) -> dict:
    resource = str(uuid.uuid4())
    return {"event": event, "resource": {"type": "ddex_message", "reference": resource,
                                         "url": f"/api/v1/releases/{resource}"},
            "occurred_at": iso(WORLD.now())}


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):  # a 3xx is the receiver's answer, not followed
        return None


DELIVERY = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect)


def send_delivery(entry: dict) -> None:
    """One signed attempt of an entry to its subscription's endpoint: delivered on a 2xx, else failed. The lock is
    taken only to read the entry and record the outcome, never while POSTing (the receiver may call back)."""
    w = WORLD
    with w.lock:
        hook = w.webhooks.get(entry["subscription"])
        if hook is None:  # forgotten by a reset meanwhile
            return
        body = json.dumps(entry["_payload"]).encode()
        ts = str(int(w.now()))
        secrets = [hook["secret"]]
        until = hook.get("previous_valid_until")
        if hook.get("previous") and until and w.now() < calendar.timegm(time.strptime(until, "%Y-%m-%dT%H:%M:%SZ")):
            secrets.append(hook["previous"])  # the rotation's overlap: both sign
        signature = ",".join("v1=" + hmac.new(s.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
                             for s in secrets)
        url = w.routes.get(hook["endpoint_url"], hook["endpoint_url"])
        headers = {"Content-Type": "application/json", "Service-Webhook-Id": entry["reference"],
                   "Service-Webhook-Timestamp": ts, "Service-Webhook-Signature": signature}
    started = time.monotonic()
    try:
        request = urllib.request.Request(url, data=body, method="POST", headers=headers)
        with DELIVERY.open(request, timeout=10) as answer:
            answer.read()
            ok = 200 <= answer.status < 300
    except Exception:  # an HTTPError (non-2xx, a redirect) as much as a refused or timed-out connection
        ok = False
    elapsed = round((time.monotonic() - started) * 1000, 1)
    with w.lock:
        entry.update(status="delivered" if ok else "failed", attempts=entry["attempts"] + 1, _answer_ms=elapsed)


def public(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if not k.startswith("_")}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakeapi/1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall between

    def log_message(self, *args) -> None:  # quiet
        pass

    # ---- plumbing ----------------------------------------------------------------------------
    def body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send(self, status: int, payload=None, headers=(), raw: bytes | None = None) -> None:
        data = raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
        self.send_response(status)
        if getattr(self, "op", None) in WORLD.deprecated:
            # the lifecycle headers of an operation going away (Deprecation: RFC 9745; Sunset: RFC 8594)
            headers = [*headers, ("Deprecation", "@1798761600"), ("Sunset", "Wed, 01 Sep 2027 00:00:00 GMT"),
                       ("Link", '<https://reports.example/docs/exports-v2>; rel="successor-version"')]
        if raw is None:
            self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def drop(self, reset: bool = False) -> None:
        if reset:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR) if not reset else None
        except OSError:
            pass

    def stall(self, fault: dict) -> None:
        """No answer for the fault's seconds (real ones, the lock released meanwhile), then closed."""
        WORLD.lock.release()
        try:
            time.sleep(float(fault.get("seconds", 2)))
        finally:
            WORLD.lock.acquire()
        self.drop()

    def do_GET(self) -> None:
        self.route("GET")

    def do_POST(self) -> None:
        self.route("POST")

    # ---- control -----------------------------------------------------------------------------
    def control(self, path: str, body: bytes) -> None:
        w = WORLD
        if path == "/_fake/deliver":
            return self.deliver(json.loads(body or b"{}"))
        with w.lock:
            if path == "/_fake/reset":
                w.reset(json.loads(body or b"{}"))
                return self.send(200, {"ok": True})
            if path == "/_fake/route":
                request = json.loads(body)
                w.routes[request["from"]] = request["to"]
                return self.send(200, {"routes": w.routes})
            if path == "/_fake/advance":
                w.offset += float(json.loads(body)["seconds"])
                return self.send(200, {"now": w.now()})
            if path == "/_fake/artifact":
                return self.send(200, raw=w.artifact)
            if path == "/_fake/stats":
                return self.send(200, {**w.stats, "requests": dict(w.stats["requests"]), "now": w.now(),
                                       "exports": [self.view(e) for e in w.exports.values()],
                                       "evil_requests": len(w.evil_requests),
                                       "webhooks": w.webhooks,
                                       "deliveries": [{**public(d), "answer_ms": d.get("_answer_ms")} for d in w.deliveries],
                                       "evil_credentials": sorted({h for r in w.evil_requests for h in r["credentials"]})})
        self.send(404, {"message": "no such control"})

    def deliver(self, request: dict) -> None:
        """``/_fake/deliver``: logs an event's delivery to a subscription and sends it now (the lock released
        while sending), or loses it: failed without a request, as after a whole retry schedule unanswered."""
        w = WORLD
        with w.lock:
            reference = request.get("reference")
            if reference not in w.webhooks:
                return self.send(404, {"message": "no such webhook"})
            event = request.get("event") or "ddex.delivery.failed"
            entry = log_delivery(reference, event, event_payload(event))
            if request.get("lose"):
                # the first attempt and the spec's 7 retries, all unanswered; ``status`` logs another
                # value instead of ``failed`` (one the clients do not know, kept as sent)
                entry.update(status=request.get("status") or "failed", attempts=8)
                return self.send(200, {"delivery": entry["reference"], "status": entry["status"], "answer_ms": None})
        send_delivery(entry)
        with w.lock:
            answer = {"delivery": entry["reference"], "status": entry["status"], "answer_ms": entry["_answer_ms"]}
        self.send(200, answer)

    # ---- the API -----------------------------------------------------------------------------
    def route(self, method: str) -> None:
        path, _, query = self.path.partition("?")
        body = self.body()
        self.op: str | None = None  # a keep-alive connection's handler serves many requests
        if path.startswith("/_fake/"):
            return self.control(path, body)
        for m, pattern, op in ROUTES:
            match = pattern.match(path)
            if m == method and match:
                self.op = op
                return self.operation(op, match.groups(), query, body)
        self.send(404, {"message": "Resource not found"})

    def client_of(self, op: str) -> tuple[str | None, str | None]:
        """(client, None) for a caller the operation accepts, else (client or None, why not)."""
        w = WORLD
        if op == "exchangePlatformClientCredential":
            auth = self.headers.get("Authorization", "")
            try:
                cid, _, secret = base64.b64decode(auth.removeprefix("Basic ")).decode().partition(":")
            except Exception:
                return None, "bad basic"
            ok = auth.startswith("Basic ") and CLIENTS.get(cid) == secret and self.headers.get("X-Tenant-ID") == TENANT
            return cid, None if ok else "invalid client"
        if op == "exchangeEnterpriseToken":
            key = self.headers.get("X-Api-Key", "")
            return key, None if API_KEYS.get(key) == self.headers.get("X-Api-Secret") else "invalid key"
        token = self.headers.get("Authorization", "").removeprefix("Bearer ")
        holder = w.tokens.get(token)
        if holder is None or token in w.dead or holder[1] <= w.now():
            return (holder[0] if holder else None), "Missing bearer token" if holder is None else "token expired"
        if op.endswith("PlatformExports") or "PlatformExport" in op:
            if self.headers.get("X-Tenant-ID") != TENANT:
                return holder[0], "tenant"
        return holder[0], None

    def operation(self, op: str, args: tuple, query: str, body: bytes) -> None:
        self.after_send = None  # what apply() leaves to do once answered, outside the lock
        self.answer(op, args, query, body)
        if self.after_send is not None:
            self.after_send()

    def answer(self, op: str, args: tuple, query: str, body: bytes) -> None:
        w = WORLD
        with w.lock:
            now = w.now()
            w.stats["requests"][op] += 1
            w.count[op] += 1
            nth = w.count[op]
            client, refused = self.client_of(op)
            who = client or "anonymous"
            # the rolling minute of this client's protected requests (the spec's limits: "protected API
            # requests"; the token exchange has limits of its own)
            if op not in ("exchangePlatformClientCredential", "exchangeEnterpriseToken"):
                seen = w.seen[who]
                seen.append(now)
                while seen and seen[0] <= now - 60 + JITTER:
                    seen.popleft()
                w.stats["max_per_minute"] = max(w.stats["max_per_minute"], len(seen))
            wait_until = w.not_before.pop((who, op), None)
            if wait_until is not None and now < wait_until - 0.001:
                w.stats["retry_after_violations"] += 1
            fault = next((f for f in w.faults if f["op"] == op and f.get("nth", 1) == nth), None)
            if refused is not None:
                w.stats["unauthorized"] += 1
                status = 400 if refused == "tenant" else 401
                return self.send(status, {"success": False, "message": refused})
            if fault is not None:
                kind = fault["do"]
                if kind == "status":
                    headers = []
                    if "retry_after" in fault:
                        headers.append(("Retry-After", str(fault["retry_after"])))
                        w.not_before[(who, op)] = now + float(fault["retry_after"])
                    return self.send(fault["status"], {"message": f"scripted {fault['status']}"}, headers)
                if kind == "expire_token":
                    w.dead.add(self.headers.get("Authorization", "").removeprefix("Bearer "))
                    w.stats["unauthorized"] += 1
                    return self.send(401, {"message": "token expired"})
                if kind in ("drop_before_apply", "reset"):
                    return self.drop(reset=kind == "reset")
                if kind == "redirect":
                    target = f"http://127.0.0.1:{EVIL_PORT}{self.path}"
                    return self.send(fault.get("status", 307), {"message": "moved"}, [("Location", target)])
                if kind == "stall" and not fault.get("apply"):
                    return self.stall(fault)
            status, payload, headers, raw = self.apply(op, args, query, body, client, fault)
            if fault is not None and op == "createPlatformExport" and fault.get("also_created_by_another"):
                # another process of the tenant created an export of the same data at the same moment
                self.apply(op, args, query, body, client, None)
                w.stats["exports_created"] -= 1
            if fault is not None and fault["do"] == "drop_after_apply":
                return self.drop()
            if fault is not None and fault["do"] == "stall":
                return self.stall(fault)
            if fault is not None and fault["do"] == "truncate" and raw is not None:
                self.send_response(200)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw[: len(raw) // 2])
                self.wfile.flush()
                return self.drop()
            if fault is not None and fault["do"] == "trickle" and raw is not None:
                # the whole artifact, in 10 pieces spread over `seconds` real seconds
                self.send_response(200)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                step = -(-len(raw) // 10)
                for at in range(0, len(raw), step):
                    self.wfile.write(raw[at:at + step])
                    self.wfile.flush()
                    time.sleep(float(fault["seconds"]) / 10)
                return None
            if fault is not None and fault["do"] == "partial" and raw is not None:
                half = raw[: len(raw) // 2]
                return self.send(206, raw=half, headers=[("Content-Range", f"bytes 0-{len(half) - 1}/{len(raw)}")])
            self.send(status, payload, headers, raw)

    def apply(self, op: str, args: tuple, query: str, body: bytes, client: str | None, fault) -> tuple:
        """Performs an accepted request: (status, JSON payload, headers, raw bytes or None)."""
        w = WORLD
        no_store = [("Cache-Control", "no-store")]
        if op in ("exchangePlatformClientCredential", "exchangeEnterpriseToken") and w.token_delay:
            # a slow exchange (the lock released meanwhile), to see how many overlap
            w.exchanging += 1
            w.stats["max_concurrent_exchanges"] = max(w.stats["max_concurrent_exchanges"], w.exchanging)
            w.lock.release()
            try:
                time.sleep(w.token_delay)
            finally:
                w.lock.acquire()
                w.exchanging -= 1
        elif op in ("exchangePlatformClientCredential", "exchangeEnterpriseToken"):
            w.stats["max_concurrent_exchanges"] = max(w.stats["max_concurrent_exchanges"], 1)
        if op == "exchangePlatformClientCredential":
            if json.loads(body or b"{}").get("grant_type") != "client_credentials":
                return 400, {"message": "grant_type must be client_credentials"}, [], None
            token = "rt_" + uuid.uuid4().hex
            w.tokens[token] = (client or "", w.now() + w.expires_in)
            w.stats["tokens_issued"] += 1
            return 200, {"access_token": token, "token_type": "Bearer", "expires_in": w.expires_in,
                         "scope": "exports:read exports:write"}, no_store, None
        if op == "exchangeEnterpriseToken":
            token = "et_" + uuid.uuid4().hex
            w.tokens[token] = (client or "", w.now() + w.expires_in)
            w.stats["tokens_issued"] += 1
            return 200, {"token": token, "expires_at": enterprise_expiry(w.enterprise_expires_at, w.now(), w.expires_in)}, [], None
        if op == "listPlatformExports":
            return 200, self.page(dict(urllib.parse.parse_qsl(query))), [], None
        if op == "createPlatformExport":
            request = json.loads(body)
            export = {"id": str(uuid.uuid4()), "status": "queued",
                      **{k: v for k, v in request.items() if k not in ("id", "status")},
                      "_hidden_for": int(w.list["lag_reads"])}
            w.exports[export["id"]] = export
            w.stats["exports_created"] += 1
            return 200, self.view(export), [], None
        export = w.exports.get(args[0]) if args else None
        if op in ("getPlatformExport", "downloadPlatformExport", "cancelPlatformExport") and export is None:
            return 404, {"message": "Resource not found"}, [], None
        if op == "getPlatformExport":
            w.reads[export["id"]] += 1
            export["status"] = w.states[min(w.reads[export["id"]] - 1, len(w.states) - 1)]
            return 200, self.view(export), [], None
        if op == "downloadPlatformExport":
            if export["status"] != "ready":
                return 409, {"message": "Export is not ready"}, [], None
            if fault is None:
                w.stats["downloads"] += 1
            return 200, None, [("Content-Type", "text/csv")], w.artifact
        if op == "cancelPlatformExport":
            if export["status"] != "queued":
                return 409, {"message": "only a queued export can be cancelled"}, [], None
            export["status"] = "cancelled"
            w.stats["cancelled"] += 1
            return 200, self.view(export), [], None
        if op == "listEnterpriseReleases":
            return 200, {"data": [{"id": 1, "title": "First"}, {"id": 2, "title": "Second"}]}, [], None
        if op == "listEnterpriseSubscriptions":
            q = dict(urllib.parse.parse_qsl(query))
            page, size = int(q.get("page", 1)), int(q.get("size", 10))
            last = max(1, -(-len(w.subscriptions) // size))
            data = w.subscriptions[(page - 1) * size:page * size]
            return 200, {"data": data, "meta": {"current_page": page, "last_page": last, "per_page": size,
                                                "total": len(w.subscriptions)}}, [], None
        if op == "createEnterpriseWebhook":
            key = self.headers.get("Idempotency-Key")
            if key and key in w.idempotent:
                w.stats["idempotent_replays"] += 1
                return w.idempotent[key]
            request = json.loads(body or b"{}")
            reference = f"wh_{len(w.webhooks) + 1:03d}"
            hook = {"reference": reference, "name": request.get("name"), "endpoint_url": request.get("endpoint_url"),
                    "events": request.get("events", []), "active": True}
            w.webhooks[reference] = {**hook, "secret": "whsec_" + uuid.uuid4().hex, "previous": None,
                                     "previous_valid_until": None}
            w.stats["webhooks_created"] += 1
            answer = (201, {"data": {**hook, "secret": w.webhooks[reference]["secret"]}}, [], None)
            if key:
                w.idempotent[key] = answer
            return answer
        if op == "rotateEnterpriseWebhookSecret":
            hook = w.webhooks.get(urllib.parse.unquote(args[0]))
            if hook is None:
                return 404, {"message": "Resource not found"}, [], None
            until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(w.now()) + 300))
            hook.update(previous=hook["secret"], previous_valid_until=until, secret="whsec_" + uuid.uuid4().hex)
            w.stats["rotations"] += 1
            return 200, {"data": {"reference": hook["reference"], "secret": hook["secret"],
                                  "previous_secret_valid_until": until}}, [], None
        if op in ("listEnterpriseWebhookDeliveries", "replayEnterpriseWebhookDelivery"):
            reference = urllib.parse.unquote(args[0])
            if reference not in w.webhooks:
                return 404, {"message": "Resource not found"}, [], None
            if op == "listEnterpriseWebhookDeliveries":
                return 200, {"data": [public(d) for d in w.deliveries if d["subscription"] == reference]}, [], None
            wanted = urllib.parse.unquote(args[1])
            original = next((d for d in w.deliveries if d["reference"] == wanted and d["subscription"] == reference), None)
            if original is None:
                return 404, {"message": "Resource not found"}, [], None
            entry = log_delivery(reference, original["event"], {**original["_payload"], "replay_of": wanted}, wanted)
            w.stats["replays"] += 1
            if w.replays != "hold":
                self.after_send = threading.Thread(target=send_delivery, args=(entry,), daemon=True).start
            return 201, {"data": {"reference": entry["reference"], "replay_of": wanted, "status": "pending"}}, [], None
        if op == "fetchEnterpriseResource":
            # the canonical state of a release an event names; who asked (X-User-Id) is echoed
            return 200, {"data": {"uuid": urllib.parse.unquote(args[0]), "title": "Current title", "status": "live",
                                  "acting_for": self.headers.get("X-User-Id")}}, [], None
        if op == "listEnterpriseCountries":
            return 200, {"data": [{"code": "NL"}, {"code": "DE"}]}, [], None
        return 404, {"message": "Resource not found"}, [], None

    def page(self, query: dict) -> dict:
        """One page of the export list: filtered, ordered, keyset by the cursor (the last id of the page before);
        an export created moments ago is missing for its ``lag_reads``."""
        w = WORLD
        shown = []
        for e in w.exports.values():
            if e.get("_hidden_for", 0) > 0:
                e["_hidden_for"] -= 1
                continue
            if all(str(e.get(f)) == query[f] for f in ("export_class", "format", "status") if f in query):
                shown.append(e)
        if w.list["order"] == "newest":
            shown.reverse()
        start = 0
        if "cursor" in query:
            ids = [e["id"] for e in shown]
            start = ids.index(query["cursor"]) + 1 if query["cursor"] in ids else len(ids)
        size = min(int(query.get("limit", 50)), int(w.list["page_size"]))
        items = shown[start:start + size]
        more = start + len(items) < len(shown)
        nxt = items[-1]["id"] if more and items else None
        data = [self.view(e) if w.list["echo"] else {"id": e["id"], "status": e["status"]} for e in items]
        style = w.list["cursor"]
        if style == "meta":
            return {"data": data, "meta": {"next_cursor": nxt}}
        if style == "links":
            return {"data": data, "links": {"next": f"{P}/exports?cursor={nxt}" if nxt else None}}
        if style == "none":
            return {"data": data}
        return {"data": data, "next_cursor": nxt}

    @staticmethod
    def view(export: dict) -> dict:
        return {k: v for k, v in export.items() if not k.startswith("_")}


def enterprise_expiry(form: str, now: float, lifetime: int):
    """The enterprise token's expires_at in the form the script asks for."""
    if form == "null":
        return None
    at = time.gmtime(now - 60 if form == "past" else now + lifetime)
    if form == "offset":
        return time.strftime("%Y-%m-%dT%H:%M:%S+0000", at)
    if form == "basic":
        return time.strftime("%Y%m%dT%H%M%SZ", at)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", at)


class Evil(BaseHTTPRequestHandler):
    """Another origin: records what reaches it (never a credential, if the clients are right)."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def handle_any(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        names = ("Authorization", "X-Api-Key", "X-Api-Secret", "X-Tenant-ID")
        with WORLD.lock:
            WORLD.evil_requests.append({"path": self.path, "credentials": [h for h in names if self.headers.get(h)]})
        data = json.dumps({"token": "evil-token", "expires_at": None, "access_token": "evil-token", "token_type": "Bearer",
                           "expires_in": 3600, "scope": "exports:read exports:write"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = handle_any


EVIL_PORT = 0


def main() -> None:
    global EVIL_PORT
    evil = ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    evil.daemon_threads = True
    EVIL_PORT = evil.server_address[1]
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        sys.stdin.read()  # until the test closes our stdin (or kills us)
    except KeyboardInterrupt:
        pass
    server.shutdown()


if __name__ == "__main__":
    main()
