"""A webhook receiver with the standard library's ThreadingHTTPServer and royaltykit, for make
soak: verify the raw body, dedup on the delivery key and the content key, apply each event once.
Prints its URL on stdout."""

import json
import os
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import royaltykit as rk

NAMESPACE = "org-demo/sub-1"
verifier = rk.WebhookVerifier([os.environ["SOAK_SECRET"]])
deliveries = rk.DedupWindow(int(os.environ["SOAK_CAPACITY"]), 3600)


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body are written separately: without this, Nagle's algorithm and delayed
        # ACKs add about 40 ms to every keep-alive response.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _answer(self, status, decision):
        data = json.dumps({"decision": decision}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            v = verifier.verify(self.headers.items(), body)
        except rk.WebhookVerificationError as e:
            return self._answer(e.http_status, f"rejected: {e.code}")
        new_delivery = deliveries.check_and_insert(rk.delivery_key(NAMESPACE, v.delivery_id))
        new_content = deliveries.check_and_insert(v.content_key)
        if not new_delivery:
            return self._answer(200, "duplicate delivery id, skipped")
        if not new_content:
            return self._answer(200, "same signed content under a new id, skipped")
        return self._answer(200, "accepted")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
server.daemon_threads = True
print(f"http://127.0.0.1:{server.server_address[1]}/webhooks", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
