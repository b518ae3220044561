"""An inbox worker process for test_inbox.py's SIGKILL test: it runs the installed package's
worker on a PostgreSQL inbox whose handler inserts the effect row (its resource UNIQUE), then
sleeps a random 0 to 300 ms, while the test kills it (SIGKILL) at random moments.

    python inbox_child.py <dsn> <inbox table> <effects table> <log file> <work|final>

``work`` runs the worker until it is killed; ``final`` drains until no entry is pending, then
exits 0. It prints ``ready`` once its inbox is open. A duplicate-key error from the effect insert
(an effect applied twice) is written to the log as ``DUPLICATE <resource>`` and ends the process
with exit code 3.
"""

import os
import random
import sys
import time

import psycopg

from royaltykit.stores import PostgresInbox

dsn, table, effects, log_path, mode = sys.argv[1:6]
log = open(log_path, "a", buffering=1)


def handler(event, connection) -> None:
    try:
        connection.execute(f"INSERT INTO {effects} (resource) VALUES (%s)", [event.resource_reference])
    except psycopg.errors.UniqueViolation:
        log.write(f"DUPLICATE {event.resource_reference}\n")
        log.flush()
        os._exit(3)
    log.write(f"effect {os.getpid()} {event.resource_reference}\n")
    time.sleep(random.uniform(0, 0.3))


inbox = PostgresInbox(dsn, table=table, lease_seconds=1, create_table=False)
inbox.counts()  # the connection is open
print("ready", flush=True)
if mode == "work":
    inbox.run_worker(handler, max_attempts=20, poll_seconds=0.05)
else:
    while inbox.counts().get("pending", 0):
        inbox.drain(handler, max_attempts=20)
        time.sleep(0.1)  # entries a killed worker held are due once their lease runs out
    print("done", flush=True)
