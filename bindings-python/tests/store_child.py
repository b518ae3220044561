"""A receiver process for test_stores.py: receives one delivery on a transactional store and
SIGKILLs itself at the step it is told, as a crash would.

    python store_child.py <postgres|sqlite> <dsn-or-path> <delivery.json> <kill point> [<start at>]

Kill points: none, after_claim, after_mark, after_effect, after_commit; `restart` runs the
cluster's restart command (ROYALTYKIT_PG_RESTART) after the effect is written; `slow` holds the
transaction 0.5 s after the effect (for races). Prints the reply's status and body.
"""

import json
import os
import signal
import subprocess
import sys
import time

import royaltykit as rk
from royaltykit.stores import PostgresDedupStore, SqliteDedupStore

kind, target, delivery_file, kill = sys.argv[1:5]
start_at = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
d = json.load(open(delivery_file))


def die(point: str) -> None:
    if kill == point:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


class Store(PostgresDedupStore if kind == "postgres" else SqliteDedupStore):  # type: ignore[misc]
    def claim(self, key):
        state = super().claim(key)
        die("after_claim")
        return state

    def mark_done(self, connection, key):
        mine = super().mark_done(connection, key)
        die("after_mark")
        return mine

    def commit_transaction(self, connection):
        super().commit_transaction(connection)
        die("after_commit")


def handler(delivery, connection):
    placeholder = "%s" if kind == "postgres" else "?"
    connection.execute(f"INSERT INTO {os.environ['STORE_EFFECTS']} (delivery_id) VALUES ({placeholder})",
                       [delivery.delivery_id])
    die("after_effect")
    if kill == "restart":
        subprocess.run(os.environ["ROYALTYKIT_PG_RESTART"], shell=True, check=True)
    if kill == "slow":
        time.sleep(0.5)


store = Store(target, table=os.environ["STORE_TABLE"], lease_seconds=d["lease_seconds"], create_table=False)
receiver = rk.WebhookReceiver(d["secret"], namespace="org-7/stores", handler=handler, store=store)
while time.time() < start_at:
    time.sleep(0.001)
reply = receiver.receive(d["headers"], d["body"].encode(), now=d["now"])
print(reply.status, reply.body.decode())
