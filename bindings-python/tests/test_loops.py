"""The retry loop and the receiver as users write them, over real HTTP on 127.0.0.1: no blind
second create; a failed delivery is processed on redelivery, exactly once."""

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import royaltykit as rk

TENANT = "0f8fad5b-d9cb-469f-a165-70867728950e"


def serve(handler_cls):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def export_server():
    """POST /api/platform/v1/exports: the first request is applied but answered too late; a
    known Idempotency-Key is a replay."""
    state = {"calls": 0, "exports": [], "by_key": {}}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            key = self.headers.get("Idempotency-Key")
            with lock:
                state["calls"] += 1
                first = state["calls"] == 1
                if not (key and key in state["by_key"]):
                    state["exports"].append(f"exp_{len(state['exports']) + 1}")
                    if key:
                        state["by_key"][key] = state["exports"][-1]
            if first:
                time.sleep(1.5)  # applied, but the answer comes after the client gave up
            try:
                self.send_response(201)
                self.end_headers()
                self.wfile.write(json.dumps({"status": "queued"}).encode())
            except OSError:
                pass

    server, base = serve(Handler)
    return server, base, state


def create_export(base, **params):
    """The documented retry loop for a create: send, and on failure do what decide_retry says."""
    op = rk.operation("createPlatformExport")
    d = rk.build_request("createPlatformExport", body={"export_class": "statements", "format": "csv"}, token=rk.BearerToken.reports("t", TENANT), tenant_id=TENANT, **params)
    attempt = 0
    while True:
        attempt += 1
        req = urllib.request.Request(d.url(base), data=d.body, method=d.method, headers=dict(d.headers))
        try:
            with urllib.request.urlopen(req, timeout=0.5) as res:
                return f"created {res.status}", None, attempt
        except (TimeoutError, socket.timeout, urllib.error.URLError) as e:
            if isinstance(e, urllib.error.URLError) and not isinstance(e.reason, (TimeoutError, socket.timeout)):
                raise
            decision = rk.decide_retry(op.retry_class, attempt=attempt, transport="timeout", random=0.0,
                                       idempotency_key_sent=d.idempotency_key_sent)
            if decision.action != "retry":
                return decision.action, decision.reconcile, attempt


def test_a_timed_out_create_without_its_key_is_reconciled_not_sent_twice():
    server, base, state = export_server()
    try:
        assert create_export(base) == ("reconcile", "lookup_by_sent_data", 1)
        time.sleep(1.6)
        assert state["calls"] == 1 and state["exports"] == ["exp_1"]
    finally:
        server.shutdown()


def test_with_the_key_sent_the_retry_is_safe_and_one_export_exists():
    server, base, state = export_server()
    try:
        assert create_export(base, idempotency_header="Idempotency-Key") == ("created 201", None, 2)
        time.sleep(1.6)
        assert state["calls"] == 2 and state["exports"] == ["exp_1"]
    finally:
        server.shutdown()


def test_a_receiver_processes_a_failed_delivery_once_and_a_late_redelivery_is_a_duplicate():
    secret = "whsec_loop"
    world = {"clock": 1_795_320_000, "db_up": False}  # injected clock (Unix seconds)
    stored = []
    seen = rk.DedupWindow(1000)  # default TTL: the whole redelivery schedule

    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status):
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            now = world["clock"]
            try:
                v = rk.verify_webhook(self.headers.items(), body, secret, now=now)
            except rk.RoyaltyKitError as e:
                return self.answer(e.http_status)
            key = rk.delivery_key("org-1", v.delivery_id)
            claim = seen.claim(key, now)
            if claim != "new":
                return self.answer(200 if claim == "done" else 503)
            try:
                if not world["db_up"]:
                    raise ConnectionError("DB down")
                stored.append(v.delivery_id)
            except ConnectionError:
                seen.release(key, now)
                return self.answer(500)
            seen.commit(key, now)
            self.answer(200)

    server, base = serve(Receiver)
    body = b'{"event":"ddex.delivery.failed","resource":{"type":"ddex_message","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}'

    def deliver():
        headers = rk.sign_webhook(secret, body, timestamp=world["clock"], delivery_id="dlv_1")
        try:
            with urllib.request.urlopen(urllib.request.Request(base + "/webhooks", data=body, headers=headers, method="POST")) as res:
                return res.status
        except urllib.error.HTTPError as e:
            return e.code

    try:
        assert deliver() == 500  # DB down: released
        world["db_up"] = True
        world["clock"] += 30  # the service's first redelivery delay
        assert deliver() == 200
        world["clock"] += 6 * 3600  # a late redelivery, re-signed at its own time
        assert deliver() == 200
        assert stored == ["dlv_1"]  # exactly one effect
    finally:
        server.shutdown()
