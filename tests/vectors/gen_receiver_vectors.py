#!/usr/bin/env python3
"""Writes tests/vectors/receiver.json: a webhook receiver's rules (which keys a verified delivery
is claimed under, what the claims' states mean) and the dedup contract's Redis commands. By default
only the delivery key is claimed ("deduplicate by Service-Webhook-Id"); the content key only when the
receiver opts in (`claim_content_key`).

Independent of royaltykit: keys come from keys.py (hashlib), signatures from hmac, and the
expectations from the rules written out below — DESIGN §2 (two-phase dedup; the delivery and
content keys are claimed, the event key never: "deduplicate by Service-Webhook-Id", "a replay gets
a new one"), the enterprise spec's test endpoint (`enterprise.webhook.test`:
acknowledge, act on nothing) and the Redis protocol documented in core/src/dedup/redis.rs.
"""
import json

from keys import content_key, delivery_key, event_key, mac
import shape

NOW = 1_763_800_000
SECRET = "whsec_receiver_current_0123456789"
NS = "org-7/sub-2"
REF = "5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b"


def event(name, occurred="2026-11-22T04:05:06Z", replay_of=None):
    e = {"event": name, "resource": {"type": "ddex_message", "reference": REF, "url": "/api/v1/ddex/messages/" + REF},
         "occurred_at": occurred}
    if replay_of:
        e["replay_of"] = replay_of
    return e


# ---- plan_receipt: a verified delivery -> acknowledge (test event) or the two keys to claim ----------

# A receiver tries each commit this many times, this many milliseconds apart, before answering 503
# (issue 24: the effect is stored, so a transient store failure is retried, not reprocessed).
COMMIT_ATTEMPTS, COMMIT_RETRY_DELAY_MS = 3, 100
SPEC_KEYS = ("enterprise spec, Delivery contract: \"deduplicate by Service-Webhook-Id\"; Webhook delivery: \"a replay has a new "
             "reference and retains replay_of\"; DESIGN §2: the content key (the id is not signed); the event key is never claimed")

plans = []


def plan(comment, e, did="dlv_0001", namespace=NS, error=None, ts=NOW, spec=SPEC_KEYS, content=False):
    body = json.dumps(e, separators=(",", ":")).encode()
    ts = str(ts)
    headers = [["Service-Webhook-Id", did], ["Service-Webhook-Timestamp", ts],
               ["Service-Webhook-Signature", "v1=" + mac(SECRET, ts, body).hex()]]
    case = {"comment": comment, "input": {"namespace": namespace, "headers": headers, "body": body.decode(),
                                          "secrets": [SECRET], "now": NOW, "claim_content_key": content}}
    if error:
        case["error"] = error
    elif e["event"] == "enterprise.webhook.test":
        case["expected"] = {"step": "acknowledge", "status": 200, "keys": [], "release": [],
                            "body": '{"result":"acknowledge"}', "commit_attempts": 0}
    else:
        keys = [delivery_key(namespace, did)] + ([content_key(SECRET, ts, body)] if content else [])
        case["expected"] = {"step": "process", "status": 200, "keys": keys, "release": [],
                            "body": '{"result":"processed"}', "commit_attempts": COMMIT_ATTEMPTS,
                            "commit_retry_delay_ms": COMMIT_RETRY_DELAY_MS}
    case["spec"] = spec
    plans.append(case)
    return case


plan("a delivery: its delivery key only, by default (never the event key)", event("ddex.delivery.acknowledged"))
plan("a receiver that opts in: the delivery and content keys, in that order", event("ddex.delivery.acknowledged"), content=True)
twin_a = plan("two changes of one resource in the same second, byte-identical body and timestamp (a twin): the first's delivery key",
              event("ddex.delivery.status_changed"), did="dlv_twin_a")
twin_b = plan("... and the second's: another key, so it is processed (deduplicate by Service-Webhook-Id)",
              event("ddex.delivery.status_changed"), did="dlv_twin_b")
assert twin_a["expected"]["keys"] != twin_b["expected"]["keys"]
replay = plan("an operator replay: its own delivery key, so it is processed (the spec: a replay gets a new "
              "Service-Webhook-Id; the consumer applies the resource's current state idempotently)",
              event("ddex.delivery.acknowledged", replay_of="dlv_0001"), did="dlv_0099")
first = plan("a status change of the resource at 04:00:00Z", event("ddex.delivery.status_changed", occurred="2026-11-22T04:00:00Z"),
             did="dlv_0100", ts=NOW)
second = plan("a second, different change of the same resource stamped the same second: other keys, so it is processed too",
              event("ddex.delivery.status_changed", occurred="2026-11-22T04:00:00Z"), did="dlv_0101", ts=NOW + 1)
# The event key the old rule claimed would have been the same for both: the reason it is never claimed.
assert event_key(NS, "ddex.delivery.status_changed", "ddex_message", REF, "2026-11-22T04:00:00Z") not in first["expected"]["keys"] + second["expected"]["keys"]
assert not set(first["expected"]["keys"]) & set(second["expected"]["keys"])
plan("an unknown event name is processed like any other", event("ddex.something.new"))
plan("occurred_at with an offset: the event key takes the text as sent", event("ddex.delivery.failed", occurred="2026-11-22T06:05:06+02:00"))
plan("the test endpoint's event: acknowledged, nothing to claim", event("enterprise.webhook.test"))
plan("another namespace: other delivery and event keys, the same content key", event("ddex.delivery.acknowledged"), namespace="org-8/sub-1",
     content=True)
plan("an empty namespace is refused", event("ddex.delivery.acknowledged"), namespace="", error="invalid_argument")


# ---- decide_claims: the states of the claims made so far -> process, acknowledge or retry later -------

def reference_decision(states):
    """The rule, written out: every claim new -> process (answer 200 once committed); any claim
    in progress -> retry later (503: the service redelivers); otherwise (a key already done) ->
    acknowledge (200). Unless processing, the new claims are released. The body names the
    result: `processed` (answered once committed), `retry_later` or `acknowledge`."""
    fresh = [i for i, s in enumerate(states) if s == "new"]
    if all(s == "new" for s in states):
        return {"step": "process", "status": 200, "release": [], "body": '{"result":"processed"}',
                "commit_attempts": COMMIT_ATTEMPTS, "commit_retry_delay_ms": COMMIT_RETRY_DELAY_MS}
    if "in_progress" in states:
        return {"step": "retry_later", "status": 503, "release": fresh, "body": '{"result":"retry_later"}', "commit_attempts": 0}
    return {"step": "acknowledge", "status": 200, "release": fresh, "body": '{"result":"acknowledge"}', "commit_attempts": 0}


decisions = []
for comment, states in [
    ("both keys new: process, then commit (each commit tried up to three times)", ["new", "new"]),
    ("the delivery key is done: a redelivery, acknowledged", ["done"]),
    ("the delivery key is claimed elsewhere: retry later", ["in_progress"]),
    ("the same signed content under a new id: the content key is done, the new claim released", ["new", "done"]),
    ("the same signed content racing under another id: the content key is in progress", ["new", "in_progress"]),
    ("nothing claimed (no keys): process", []),
]:
    decisions.append({"comment": comment, "input": {"states": states}, "expected": reference_decision(states),
                      "spec": "DESIGN §2: claim -> new / in_progress / done; release when not processing; in_progress answers 503"})
decisions.append({"comment": "an unknown state is refused", "input": {"states": ["new", "maybe"]}, "error": "invalid_argument"})


# ---- redis_dedup: the commands of the dedup contract on Redis, and what replies mean -----------------

PREFIX = "royaltykit:dedup:"
TTL = 34_950 + 10 + 300  # the redelivery schedule, the attempt limit and the tolerance (DESIGN §2)
LEASE = 60
COMMIT = ("local v = redis.call('GET', KEYS[1]) if v == ARGV[1] or v == false then redis.call('SET', KEYS[1], 'done', "
          "'PX', ARGV[2]) return 1 end if v == 'done' then return 1 end return 0")
RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
TOKEN = "0123456789abcdef0123456789abcdef"
redis = []


def command(comment, op, key, token=TOKEN, prefix=None, ttl=None, lease=None, error=None):
    inp = {"op": op, "key": key, "token": token}
    for k, v in (("prefix", prefix), ("ttl_seconds", ttl), ("lease_seconds", lease)):
        if v is not None:
            inp[k] = v
    case = {"comment": comment, "input": inp, "spec": "core/src/dedup/redis.rs: the Redis protocol"}
    if error:
        case["error"] = error
    else:
        k = (PREFIX if prefix is None else prefix) + key
        ttl_ms, lease_ms = str((ttl or TTL) * 1000), str((lease or min(LEASE, ttl or TTL)) * 1000)
        case["expected"] = {
            "claim": ["SET", k, "claim:" + token, "NX", "PX", lease_ms],
            "state": ["GET", k],
            "commit": ["EVAL", COMMIT, "1", k, "claim:" + token, ttl_ms],
            "release": ["EVAL", RELEASE, "1", k, "claim:" + token],
        }[op]
    redis.append(case)


command("claim: SET NX with the lease (default 60 s)", "claim", "dlv_1")
command("claim with a prefix and a lease", "claim", "dlv_1", prefix="app:", lease=30, ttl=3600)
command("state after a taken claim: GET", "state", "dlv_1")
command("commit: the guarded script with the TTL (default: the whole redelivery schedule plus the tolerance)", "commit", "cnt_2")
command("commit with a TTL", "commit", "cnt_2", ttl=7200)
command("release: the guarded script", "release", "evt_3")
command("the default lease is at most the TTL", "claim", "k", ttl=45)
command("a token too short is refused", "claim", "k", token="short", error="invalid_argument")
command("a token with other characters is refused", "claim", "k", token="0123456789abcdef:", error="invalid_argument")
command("an empty key is refused", "claim", "", error="invalid_argument")
command("a lease over the TTL is refused", "claim", "k", ttl=60, lease=61, error="invalid_argument")
command("a TTL of 0 is refused", "commit", "k", ttl=0, error="invalid_argument")

replies = []
for comment, op, reply, state in [
    ("SET answered OK: the claim is new", "claim", "OK", "new"),
    ("SET answered nil: the key is taken, read its state", "claim", None, None),
    ("the key is done", "state", "done", "done"),
    ("another worker's claim", "state", "claim:fedcba9876543210", "in_progress"),
    ("the claim expired in between: in progress (the next redelivery decides)", "state", None, "in_progress"),
    ("the guarded commit answered 1: this claim is done", "commit", "1", True),
    ("the guarded commit answered 0: another worker claimed the key after this lease ran out", "commit", "0", False),
    ("the guarded release answered 1: released", "release", "1", True),
    ("the guarded release answered 0: the key no longer holds this claim", "release", "0", False),
    ("the guarded release answered nil: not released", "release", None, False),
]:
    replies.append({"comment": comment, "input": {"op": op, "reply": reply}, "expected": state,
                    "spec": "core/src/dedup/redis.rs: what replies mean"})


# ---- redis_inbox: the inbox on a Redis stream (core/src/dedup/redis_inbox.rs) --------------------------
# The Lua scripts are read from the core's source (their text is the protocol's definition; what these
# vectors pin is every key, argument and its order, and what each reply means).
import pathlib as _pathlib
import re as _re

_SRC = (_pathlib.Path(__file__).resolve().parents[2] / "core/src/dedup/redis_inbox.rs").read_text()


def _script(name):
    m = _re.search(r"pub const " + name + r': &str =\s*"(.*?)";\n', _SRC, _re.S)
    return m.group(1).replace("\\\n", "").replace('\\"', '"')


INBOX_PREFIX = "{royaltykit:inbox}:"
inbox_commands = []


def inbox_command(comment, op, prefix=None, ttl=None, lease=None, refused=None, **args):
    inp = {"op": op, **args}
    for k, v in (("prefix", prefix), ("ttl_seconds", ttl), ("lease_seconds", lease)):
        if v is not None:
            inp[k] = v
    case = {"comment": comment, "input": inp, "spec": "core/src/dedup/redis_inbox.rs: the Redis stream inbox"}
    if refused:
        case["error"] = refused
        inbox_commands.append(case)
        return
    p = INBOX_PREFIX if prefix is None else prefix
    ttl_s = ttl or TTL
    lease_s = lease or min(LEASE, ttl_s)
    key = args.get("key", "")

    def ev(name, keys, argv):
        return ["EVAL", _script(name), str(len(keys)), *keys, *argv]

    entry, stream = p + "e:" + key, p + "stream"
    case["expected"] = {
        "enqueue": lambda: ev("ENQUEUE_SCRIPT", [entry, stream, p + "pending"],
                              [args.get("delivery_id", "")[:1024], args.get("event", "")[:1024], args.get("body", ""),
                               str(args.get("now")), "workers", key]),
        "claim": lambda: ev("CLAIM_SCRIPT", [stream, p + "delayed"],
                            [p, str(args.get("now")), str(lease_s * 1000), "workers", "100"]),
        "mark_done": lambda: ev("MARK_SCRIPT", [entry, stream, p + "pending", p + "done"],
                                [str(args.get("attempts")), "workers", str(args.get("now") + ttl_s), str(ttl_s * 1000), key]),
        "settle": lambda: ev("SETTLE_SCRIPT", [entry, stream, p + "delayed", p + "pending", p + "poison"],
                             [str(args.get("attempts")), "workers", "poison" if args.get("poison") else "retry",
                              str(args.get("retry_at")), args.get("error", "").encode()[:1024].decode("utf-8", "ignore"), key]),
        "poisoned": lambda: ev("POISONED_SCRIPT", [p + "poison"], [p, str(args.get("limit"))]),
        "retry": lambda: ev("RETRY_SCRIPT", [entry, stream, p + "pending", p + "poison"], ["workers", key]),
        "lookup": lambda: ["HGET", entry, "state"],
        "counts": lambda: ev("COUNTS_SCRIPT", [p + "pending", p + "done", p + "poison"], [str(args.get("now"))]),
        "purge": lambda: ev("PURGE_SCRIPT", [p + "done"], [str(args.get("now"))]),
    }[op]()
    inbox_commands.append(case)


inbox_command("enqueue: the entry's hash, the stream and the pending set under the default prefix", "enqueue",
              key="dlv_1", delivery_id="d-1", event="ddex.delivery.failed", body='{"a":1}', now=1700000000)
inbox_command("enqueue under a prefix of one's own", "enqueue", prefix="{app}:", key="dlv_2", delivery_id="d-2",
              event="e", body="{}", now=5)
inbox_command("claim: the lease in milliseconds (default 60 s), 100 delayed entries moved at most", "claim", now=1700000010)
inbox_command("claim with a lease", "claim", lease=15, ttl=3600, now=42)
inbox_command("mark done: guarded by the claim's attempts; kept for the TTL (default: the redelivery schedule and tolerance)",
              "mark_done", key="dlv_1", attempts=2, now=1700000020)
inbox_command("mark done with a TTL", "mark_done", ttl=7200, key="dlv_1", attempts=1, now=100)
inbox_command("settle: due again at the backoff", "settle", key="dlv_1", attempts=1, poison=False, retry_at=1700000022,
              error="TimeoutError: upstream")
inbox_command("settle: poison after the last attempt", "settle", key="dlv_1", attempts=5, poison=True, retry_at=0,
              error="ValueError: bad")
inbox_command("settle: an error is cut to 1024 bytes", "settle", key="k", attempts=1, poison=False, retry_at=9,
              error="x" * 1500)
inbox_command("poisoned: the oldest first, at most the limit", "poisoned", limit=100)
inbox_command("retry: a poison entry back to pending", "retry", key="dlv_1")
inbox_command("lookup: the entry's state, read-only", "lookup", key="dlv_1")
inbox_command("counts: expired done entries dropped first", "counts", now=1700000100)
inbox_command("purge: done entries past their TTL", "purge", now=1700000100)
inbox_command("an empty key is refused", "lookup", key="", refused="invalid_argument")
inbox_command("an empty delivery id is refused", "enqueue", key="k", delivery_id="", event="e", body="{}", now=1,
              refused="invalid_argument")
inbox_command("a body over 256 KiB is refused", "enqueue", key="k", delivery_id="d", event="e",
              body="x" * (256 * 1024 + 1), now=1, refused="invalid_argument")
inbox_command("a limit of 0 is refused", "poisoned", limit=0, refused="invalid_argument")
inbox_command("a limit over 1000 is refused", "poisoned", limit=1001, refused="invalid_argument")
inbox_command("an empty prefix is refused", "claim", prefix="", now=1, refused="invalid_argument")
inbox_command("a lease over the TTL is refused", "claim", ttl=60, lease=61, now=1, refused="invalid_argument")

inbox_replies = []
for comment, op, reply, expected in [
    ("claim: nil, nothing due", "claim", None, None),
    ("claim: the entry as a JSON array, its attempts a number", "claim",
     '["dlv_1","d-1","ddex.delivery.failed","{\\"a\\":\\"x\\/y\\"}",3]',
     {"key": "dlv_1", "delivery_id": "d-1", "event": "ddex.delivery.failed", "body": '{"a":"x/y"}', "attempts": 3}),
    ("claim: a reply of another shape", "claim", '["dlv_1","d-1"]', "invalid_argument"),
    ("claim: attempts not a count", "claim", '["dlv_1","d-1","e","{}",-1]', "invalid_argument"),
    ("claim: not JSON", "claim", "OK", "invalid_argument"),
    ("poisoned: one array per entry (attempts and arrival as Redis keeps them, text), no error as false", "poisoned",
     '[["k1","d1","e","5","ValueError: bad","1700000000"],["k2","d2","e","5",false,"1700000001"]]',
     [{"key": "k1", "delivery_id": "d1", "event": "e", "attempts": 5, "last_error": "ValueError: bad", "received_at": 1700000000},
      {"key": "k2", "delivery_id": "d2", "event": "e", "attempts": 5, "last_error": None, "received_at": 1700000001}]),
    ("poisoned: none", "poisoned", "[]", []),
    ("poisoned: none, as Lua's JSON encodes an empty table", "poisoned", "{}", []),
    ("poisoned: an entry of another shape", "poisoned", '[["k1","d1"]]', "invalid_argument"),
    ("counts: pending, done, poison", "counts", "[2,7,1]", {"pending": 2, "done": 7, "poison": 1}),
    ("counts: a reply of another shape", "counts", "[2]", "invalid_argument"),
    ("added: 1", "added", "1", True),
    ("added: 0 (a duplicate, or not this claim)", "added", "0", False),
    ("added: nil", "added", None, False),
    ("lookup: never received", "lookup", None, "new"),
    ("lookup: processed", "lookup", "done", "done"),
    ("lookup: waiting for a worker", "lookup", "pending", "in_progress"),
    ("lookup: poison (received: a replay would not help)", "lookup", "poison", "in_progress"),
]:
    case = {"comment": comment, "input": {"op": op, "reply": reply},
            "spec": "core/src/dedup/redis_inbox.rs: what replies mean"}
    if expected == "invalid_argument":
        case["error"] = expected
    else:
        case["expected"] = expected
    inbox_replies.append(case)

shape.write("receiver.json", "A webhook receiver's rules and the dedup contract on Redis (see gen_receiver_vectors.py)",
            "tests/vectors/gen_receiver_vectors.py (stdlib only)", [
                shape.group("plan_receipt", plans, comment="verify the signed delivery (headers, body, secrets, now), then plan_receipt(namespace, delivery)"),
                shape.group("decide_claims", decisions),
                shape.group("redis_dedup_command", redis, comment="RedisDedup(prefix, ttl_seconds, lease_seconds), then <op>_command(key, token) (state: state_command(key))"),
                shape.group("redis_dedup_reply", replies, comment="claim: claim_reply(reply) (null: send the state command); state: state_reply(reply); commit, release: guarded_reply(reply)"),
                shape.group("redis_inbox_command", inbox_commands, comment="RedisInbox(prefix, ttl_seconds, lease_seconds), then <op>_command(...) with the input's arguments (claim, counts, purge: now; enqueue: key, delivery_id, event, body, now; mark_done: key, attempts, now; settle: key, attempts, poison, retry_at, error; poisoned: limit; retry, lookup: key)"),
                shape.group("redis_inbox_reply", inbox_replies, comment="claim: claim_reply (null: nothing due); poisoned: poisoned_reply; counts: counts_reply; added: added_reply; lookup: lookup_reply (each reply is one string or null: arrays come as JSON text)"),
            ])
