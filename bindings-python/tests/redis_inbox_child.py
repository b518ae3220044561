"""An inbox worker process for test_redis_inbox.py's SIGKILL test: it runs the installed package's
worker on a Redis inbox (lease 1 s) whose handler appends the event's resource to a Redis list
(the effect), prints ``effect <resource>``, then sleeps 200 to 400 ms, while the test kills it
(SIGKILL) mid-handler.

    python redis_inbox_child.py <redis port> <prefix> <effects list key> <work|final>

``work`` runs the worker until it is killed; ``final`` drains until no entry is pending (the
entries killed workers held are due again once their lease runs out), then prints ``done`` and
exits 0. It prints ``ready`` once its client answers.
"""

import random
import sys
import time
from typing import Any

import redis

from royaltykit import WebhookEvent
from royaltykit.stores import RedisInbox

port, prefix, effects, mode = sys.argv[1:5]
client = redis.Redis(host="127.0.0.1", port=int(port))


def handler(event: WebhookEvent, c: Any) -> None:
    c.execute_command("RPUSH", effects, event.resource_reference)
    print(f"effect {event.resource_reference}", flush=True)
    time.sleep(random.uniform(0.2, 0.4))


inbox = RedisInbox(client, prefix=prefix, lease_seconds=1)
inbox.counts()  # the connection is open
print("ready", flush=True)
if mode == "work":
    inbox.run_worker(handler, max_attempts=20, poll_seconds=0.05)
else:
    while inbox.counts().get("pending", 0):
        inbox.drain(handler, max_attempts=20)
        time.sleep(0.1)
    print("done", flush=True)
