"""A webhook receiver for make soak's PostgreSQL run: the standard library's ThreadingHTTPServer,
a royaltykit WebhookReceiver on a PostgresDedupStore, and a handler writing one effect row per
delivery in the receipt's transaction. Prints its URL on stdout. Killed (SIGKILL) and restarted
by soak_pg.py while deliveries arrive."""

import os
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import royaltykit as rk
from royaltykit.stores import PostgresDedupStore

store = PostgresDedupStore(os.environ["SOAK_PG_DSN"], table="soak_dedup", lease_seconds=3, create_table=False)


def handler(delivery: rk.VerifiedWebhook, connection) -> None:
    connection.execute("INSERT INTO soak_effects (delivery_id, pid) VALUES (%s, %s)", (delivery.delivery_id, os.getpid()))


receiver = rk.WebhookReceiver(os.environ["SOAK_SECRET"], namespace="org-soak/pg", handler=handler, store=store,
                              on_error=lambda e, d: None)


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        r = receiver.receive(self.headers.items(), body)
        self.send_response(r.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(r.body)))
        self.end_headers()
        self.wfile.write(r.body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Receiver)
server.daemon_threads = True
print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
