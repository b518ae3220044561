"""make soak, PostgreSQL run: SOAK_DELIVERIES signed deliveries (default 100,000) over real HTTP to
two receiver processes (soak_pg_receiver.py) sharing one PostgreSQL, while a killer SIGKILLs a
random receiver every SOAK_KILL_EVERY seconds (default 1.5) and starts it again on the same port.
The sender behaves like the service: each delivery is sent until it is answered 2xx (a refused
or dropped connection, a 503 or a 500 is sent again), 10% of deliveries are also sent a second
time at once, concurrently, to the other receiver. At the end every delivery must have exactly
one effect row: none lost, none doubled.

    python soak_pg.py <python with royaltykit> <receiver script>   (ROYALTYKIT_PG_DSN set)
"""

import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg

import royaltykit as rk
from royaltykit.stores import PostgresDedupStore

PYTHON, RECEIVER = sys.argv[1:3]
DSN = os.environ["ROYALTYKIT_PG_DSN"]
N = int(os.environ.get("SOAK_DELIVERIES", "100000"))
KILL_EVERY = float(os.environ.get("SOAK_KILL_EVERY", "1.5"))
MAX_SECONDS = float(os.environ.get("SOAK_MAX_SECONDS", "1800"))
SECRET = "whsec_soak_pg_0123456789abcdef"
THREADS = 24

with psycopg.connect(DSN, autocommit=True) as c:
    c.execute("DROP TABLE IF EXISTS soak_effects, soak_dedup")
    c.execute("CREATE TABLE soak_effects (delivery_id TEXT NOT NULL, pid INT NOT NULL)")
PostgresDedupStore(DSN, table="soak_dedup").close()  # creates the dedup table


class Receivers:
    """Two receiver processes on fixed ports; `kill_one` SIGKILLs one and starts it again."""

    def __init__(self) -> None:
        self.env = {**os.environ, "SOAK_PG_DSN": DSN, "SOAK_SECRET": SECRET}
        self.procs: list[subprocess.Popen] = []
        self.ports: list[int] = []
        self.kills = 0
        self.lock = threading.Lock()
        for _ in range(2):
            p, url = self._start(0)
            self.procs.append(p)
            self.ports.append(int(url.rsplit(":", 1)[1]))

    def _start(self, port: int) -> tuple[subprocess.Popen, str]:
        for _ in range(100):
            # stderr dropped: a killed peer's reset connections are expected here
            p = subprocess.Popen([PYTHON, RECEIVER, str(port)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 env=self.env, text=True)
            url = p.stdout.readline().strip() if p.stdout else ""
            if url:
                return p, url
            p.wait()
            time.sleep(0.05)  # the port is not free yet
        raise RuntimeError("a receiver would not start")

    def kill_one(self) -> None:
        i = random.randrange(2)
        with self.lock:
            self.procs[i].send_signal(signal.SIGKILL)
            self.procs[i].wait()
            self.kills += 1
            self.procs[i], _ = self._start(self.ports[i])

    def stop(self) -> None:
        for p in self.procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


receivers = Receivers()
stop = threading.Event()
counts = {"requests": 0, "retries": 0, "ok": 0}
counts_lock = threading.Lock()


def killer() -> None:
    while not stop.wait(KILL_EVERY):
        receivers.kill_one()


def send(body: bytes, headers: dict[str, str], first: int) -> None:
    """Sends until answered 2xx, alternating receivers, as the service redelivers."""
    attempt = 0
    while True:
        port = receivers.ports[(first + attempt) % 2]
        attempt += 1
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("POST", "/", body=body, headers={**headers, "Content-Type": "application/json"})
            status = conn.getresponse().status
            conn.close()
        except (OSError, http.client.HTTPException):
            status = 0
        with counts_lock:
            counts["requests"] += 1
            counts["retries"] += attempt > 1
        if 200 <= status < 300:
            return
        if time.time() - started > MAX_SECONDS:
            raise RuntimeError("SOAK_MAX_SECONDS passed")
        time.sleep(0.02 * min(attempt, 10))


def deliver(i: int) -> None:
    did = f"dlv_soak_{i:07d}"
    body = json.dumps({"event": "enterprise.release.updated", "occurred_at": "2026-11-22T04:05:06Z",
                       "resource": {"type": "release", "reference": did, "url": "/api/v1/releases/" + did}}).encode()
    headers = rk.sign_webhook(SECRET, body, delivery_id=did)
    if i % 10 == 0:  # a redelivery racing the first attempt, to the other receiver
        t = threading.Thread(target=send, args=(body, headers, 1))
        t.start()
        send(body, headers, 0)
        t.join()
    else:
        send(body, headers, i % 2)


started = time.time()
kt = threading.Thread(target=killer, daemon=True)
kt.start()
try:
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(deliver, range(N), chunksize=64))
finally:
    stop.set()
    kt.join()
    receivers.stop()
elapsed = time.time() - started

with psycopg.connect(DSN, autocommit=True) as c:
    total, distinct = c.execute("SELECT count(*), count(DISTINCT delivery_id) FROM soak_effects").fetchone()
    doubled = c.execute("SELECT count(*) FROM (SELECT delivery_id FROM soak_effects GROUP BY delivery_id "
                        "HAVING count(*) > 1) d").fetchone()[0]
lost = N - distinct
print(f"soak (PostgreSQL, transactional store): {N} deliveries, {counts['requests']} requests "
      f"({counts['retries']} sent again) in {elapsed:.0f} s, {receivers.kills} receiver processes SIGKILLed; "
      f"{total} effects: {lost} lost, {doubled} doubled")
if lost or doubled or total != N:
    sys.exit(1)
