"""A small reporting API in the test process (ThreadingHTTPServer on 127.0.0.1:0) for the
interrupt/resume, timeout and telemetry tests: token exchange, list, create (replayed for a known
idempotency key), read (``pending`` reads say ``queued``, then ``ready``), download. It logs every
request, can hold the k-th one (its effect applied, its response not sent, half of a download's
body sent) until the test releases it, and can answer a request by its number with a fault
(``503``, ``401`` and the token dead, ``drop``: the connection closed without a response,
``429``: rate limited with ``Retry-After: 2``)."""

from __future__ import annotations

import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

P = "/api/platform/v1"
ARTIFACT = b"statement_id,amount\n" + b"".join(b"%d,%d.00\n" % (i, i % 97) for i in range(4000))


class ExportsApi:
    def __init__(self, pending: int = 1) -> None:
        self.lock = threading.Lock()
        self.pending = pending
        self.log: list[dict] = []  # {"n", "op", "method", "path", "key"}
        self.exports: dict[str, dict] = {}
        self.keys: dict[str, str] = {}  # idempotency key -> export id
        self.tokens: set[str] = set()
        self.dead: set[str] = set()
        self.faults: dict[int, str] = {}
        self.hold_at: int | None = None
        self.reached = threading.Event()
        self.release = threading.Event()
        self.on_request = None  # called with each logged entry (in the handler's thread)
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                api.handle(self, "GET")

            def do_POST(self) -> None:
                api.handle(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    # ---- what the tests read ------------------------------------------------------------------
    def ops(self) -> list[str]:
        return [e["op"] for e in self.log]

    def creates(self) -> list[dict]:
        return [e for e in self.log if e["op"] == "create"]

    def add_export(self, body: dict, export_id: str | None = None, key: str | None = None) -> str:
        e = {"id": export_id or str(uuid.uuid4()), "status": "queued", **body, "_reads": 0}
        self.exports[e["id"]] = e
        if key is not None:
            self.keys[key] = e["id"]
        return e["id"]

    # ---- the API ------------------------------------------------------------------------------
    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        path = h.path.partition("?")[0]
        n = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(n) if n else b""
        op = {("POST", f"{P}/oauth/token"): "token", ("GET", f"{P}/exports"): "list",
              ("POST", f"{P}/exports"): "create"}.get((method, path))
        m = re.fullmatch(rf"{P}/exports/([^/]+)(/download)?", path)
        if op is None and m and method == "GET":
            op = "download" if m.group(2) else "read"
        with self.lock:
            entry = {"n": len(self.log) + 1, "op": op, "method": method, "path": path,
                     "key": h.headers.get("Idempotency-Key"), "auth": h.headers.get("Authorization")}
            self.log.append(entry)
            hold = self.hold_at == entry["n"]
            fault = self.faults.get(entry["n"])
        if self.on_request is not None:
            self.on_request(entry)
        if fault == "drop":
            h.close_connection = True
            return
        if fault == "503":
            return self.send(h, 503, {"message": "try again"})
        if fault == "429":
            return self.send(h, 429, {"message": "slow down"}, headers=[("Retry-After", "2")])
        token = (h.headers.get("Authorization") or "").removeprefix("Bearer ")
        if fault == "401":
            self.dead.add(token)
        if op != "token" and (token not in self.tokens or token in self.dead):
            return self.send(h, 401, {"message": "token expired"})
        status, payload, raw = self.apply(op, m.group(1) if m else None, body, entry["key"])
        if hold and op == "download" and raw is not None:
            # Half the body sent: the client is streaming it into its temporary file.
            h.send_response(200)
            h.send_header("Content-Type", "text/csv")
            h.send_header("Content-Length", str(len(raw)))
            h.end_headers()
            h.wfile.write(raw[: len(raw) // 2])
            h.wfile.flush()
            self.reached.set()
            self.release.wait(60)
            h.close_connection = True
            return
        if hold:
            self.reached.set()
            self.release.wait(60)
        try:
            self.send(h, status, payload, raw)
        except OSError:
            h.close_connection = True

    def apply(self, op: str | None, export_id: str | None, body: bytes, key: str | None):
        with self.lock:
            if op == "token":
                token = "rt_" + uuid.uuid4().hex
                self.tokens.add(token)
                return 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600,
                             "scope": "exports:read exports:write"}, None
            if op == "list":
                return 200, {"data": [self.view(e) for e in self.exports.values()], "next_cursor": None}, None
            if op == "create":
                if key is not None and key in self.keys:
                    return 200, self.view(self.exports[self.keys[key]]), None
                eid = self.add_export(json.loads(body), key=key)
                return 200, self.view(self.exports[eid]), None
            e = self.exports.get(export_id or "")
            if e is None:
                return 404, {"message": "Resource not found"}, None
            if op == "read":
                e["_reads"] += 1
                e["status"] = "ready" if e["_reads"] > self.pending else "queued"
                return 200, self.view(e), None
            if op == "download":
                if e["status"] != "ready":
                    return 409, {"message": "Export is not ready"}, None
                return 200, None, ARTIFACT
            return 404, {"message": "Resource not found"}, None

    @staticmethod
    def view(e: dict) -> dict:
        return {k: v for k, v in e.items() if not k.startswith("_")}

    @staticmethod
    def send(h: BaseHTTPRequestHandler, status: int, payload=None, raw: bytes | None = None,
             headers: list[tuple[str, str]] = []) -> None:  # noqa: B006 (never mutated)
        data = raw if raw is not None else json.dumps(payload).encode()
        h.send_response(status)
        for name, value in headers:
            h.send_header(name, value)
        h.send_header("Content-Type", "text/csv" if raw is not None else "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
