#!/usr/bin/env python3
"""Writes tests/vectors/machines.json: transcripts of the three protocol machines (DESIGN
"Protocol machines") — a scripted sequence of host outcomes and the exact steps expected.

Independent of royaltykit: keys from keys.py (hashlib), signatures from hmac, jitter from a
SplitMix64 written out below, and the expected steps from the rules of the specs written out in
each scenario:

- Receipt (DESIGN §2, the receiver's flow): claim the delivery key, then the content key, stopping
  at the first that is not new; release the new claims of a delivery not processed; run the
  handler; commit every key, each commit tried 3 times 0.1 s apart; 200 / 503 / 500.
- Call (enterprise "Errors → client behaviour by status", "Retry safety"; reporting "Errors"):
  reads retry on 408, 429, 5xx with 2, 5, 15, then 30–60 s; 429 waits at least Retry-After (and
  a 5xx the larger of the two); 401 refreshes the token once; a create that may have been
  applied is reconciled unless its idempotency key was sent; connect_failed is always safe; the
  budget of a call is 5 attempts and 300 s; a request-rate window holds the send back; an
  export download is one complete artifact (206 / Content-Range read again).
- ExportJob (reporting "Exports"): list once before a create that cannot carry its key, create,
  poll (unknown states like queued; cancelled/revoked end it; 100 reads), download; a create that
  may have been applied is looked up "by the data already sent" among the exports new since
  the job started; at most 3 creates.

How a runner drives a transcript (the same in every language): `now` starts at `start`; it asks
the machine for its next step at `now` and records it; a step that needs an answer takes the
next event of `events`: a Send takes {"response": {status, headers, body}} or {"transport": kind}
(with "after": seconds that pass before it arrives; with "streamed": true the runner asserts the
machine streams that status and reports the body by its length only, as a host writing the
artifact to a file does; with "streamed": false it asserts the machine does not and reports
the body whole), a RefreshToken takes {"token": value,
"valid_for": seconds|null} (refresh at now + valid_for); a Wait advances `now` by its seconds;
Receipt steps take the next answer of `answers` (a Wait only when that answer is "cancel"); the
answer "cancel" at any step means the host was cancelled while the step was in flight, reported
as `cancelled`. It stops at the final step. Steps are compared
in the rendered form below (waits to 1e-9).

Jitter: a machine's seed feeds SplitMix64 (state += 0x9E3779B97F4A7C15, then the usual mix; a
value in [0,1) is the output >> 11 over 2^53). A call draws one value per failed attempt; a job
forks one seed per request it starts and draws one value per read of the export's state.
"""
import datetime
import json
import math
from email.utils import formatdate

from keys import content_key, delivery_key, idempotency_key, mac
import shape

M64 = (1 << 64) - 1


class SplitMix:
    def __init__(self, seed):
        self.s = seed & M64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        return (z >> 11) / float(1 << 53)

    def fork(self):
        self.next()
        return self.s


def backoff(attempt, r):
    """The default client backoff: 2, 5, 15, then 30-60 s (enterprise spec, Client behaviour)."""
    return [2.0, 5.0, 15.0][attempt - 1] if attempt <= 3 else 30.0 + r * 30.0


# ---------------------------------------------------------------- Receipt -------------------------------

NOW = 1_763_800_000
SECRET = "whsec_machine_current_0123456789"
OLD = "whsec_machine_previous_9876543210"
NS = "org-7/machines"
REF = "5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
SPEC_R = ("DESIGN §2 (two-phase dedup; delivery and content keys; release what is not processed; commits "
          "retried 3 times 100 ms apart); enterprise spec, Delivery contract (2xx within 10 s or redelivered)")


def delivery(name="enterprise.release.updated", did="dlv_m_0001", ts=NOW, secret=SECRET, body=None, extra=None, first=SECRET):
    """Headers signed with `secret`, the body, and the two keys. The content key is the first
    configured secret's MAC, so the same content has one key whichever secret signed it (DESIGN §2)."""
    e = {"event": name, "resource": {"type": "release", "reference": REF, "url": "/api/v1/releases/" + REF},
         "occurred_at": "2026-11-22T04:05:06Z"}
    e.update(extra or {})
    b = body if body is not None else json.dumps(e, separators=(",", ":"))
    t = str(ts)
    headers = [["Service-Webhook-Id", did], ["Service-Webhook-Timestamp", t],
               ["Service-Webhook-Signature", "v1=" + mac(secret, t, b.encode()).hex()]]
    return headers, b, delivery_key(NS, did), content_key(first, t, b.encode())


def reply(status, **kv):
    return {"step": "reply", "status": status, **kv}


receipts = []


SPEC_T = ("DESIGN §2 (transactional stores: claim with a lease, mark done inside the handler's transaction, "
          "roll back on failure, then release; exactly once)")


def receipt(comment, answers, steps, secrets=None, headers=None, body=None, now=NOW, signed=None, transactional=False,
            content=True, inbox=False, **d):
    """`content`: the receiver opts in to claiming the content key (DESIGN §2: by default only the delivery key,
    "deduplicate by Service-Webhook-Id"); the scenarios written for both keys opt in."""
    h, b, dk, ck = delivery(body=signed, **d)
    i = {"namespace": NS, "secrets": secrets or [{"secret": SECRET}],
         "headers": headers if headers is not None else h, "body": body if body is not None else b,
         "now": now, "answers": answers}
    if transactional:
        i["transactional"] = True
    if inbox:
        i["inbox"] = True
    if content:
        i["claim_content_key"] = True
    receipts.append({"comment": comment, "spec": SPEC_T if transactional else SPEC_R, "input": i,
                     "expected": {"steps": steps(dk, ck) if callable(steps) else steps}})


PROCESSED = reply(200, result="processed")
ACK = reply(200, result="acknowledge")
LATER = reply(503, result="retry_later")
DOWN = reply(503, error="store_unavailable")
FAILED = reply(500, error="handler_failed")


def claim(k):
    return {"step": "claim", "key": k}


def release(k):
    return {"step": "release", "key": k}


def commit(k, attempt=1):
    return {"step": "commit", "key": k, "attempt": attempt}


RUN = {"step": "run_handler"}
PAUSE = {"step": "wait", "seconds": 0.1}

for name in ("enterprise.release.updated", "enterprise.ddex.delivery.failed", "enterprise.split.updated"):
    receipt(f"a new {name} delivery: both keys claimed, the handler run, both committed, 200",
            ["new", "new", "ok", "ok", "ok"],
            lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PROCESSED], name=name, did="dlv_" + name[11:20])
receipt("a replay (replay_of, new delivery id) is processed: the event key is never claimed",
        ["new", "new", "ok", "ok", "ok"], lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PROCESSED],
        did="dlv_replay_02", extra={"replay_of": "dlv_m_0001"})
receipt("a redelivery of a delivery already processed: 200 without running the handler", ["done"],
        lambda dk, ck: [claim(dk), ACK])
receipt("another worker holds the delivery: 503 so the service redelivers", ["in_progress"], lambda dk, ck: [claim(dk), LATER])
receipt("the same signed content under a new id (content key done): the new claim released, 200", ["new", "done", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), release(dk), ACK])
receipt("the same content in progress under another id: the new claim released, 503", ["new", "in_progress", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), release(dk), LATER])
receipt("a failed release changes nothing (the lease runs out)", ["new", "done", "store_down"],
        lambda dk, ck: [claim(dk), claim(ck), release(dk), ACK])
receipt("the store is down at the first claim: 503, nothing to release", ["store_down"], lambda dk, ck: [claim(dk), DOWN])
receipt("the store goes down at the second claim: the first released, 503", ["new", "store_down", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), release(dk), DOWN])
receipt("the store goes down at the second claim and the release fails too: 503", ["new", "store_down", "store_down"],
        lambda dk, ck: [claim(dk), claim(ck), release(dk), DOWN])
receipt("the handler fails: both claims released, 500 so the redelivery is processed", ["new", "new", "fail", "ok", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, release(dk), release(ck), FAILED])
receipt("the handler fails and the store is down for the releases: still 500", ["new", "new", "fail", "store_down", "store_down"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, release(dk), release(ck), FAILED])
receipt("the first commit fails once: paused 0.1 s, committed on the second attempt, 200",
        ["new", "new", "ok", "store_down", "ok", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), PAUSE, commit(dk, 2), commit(ck), PROCESSED])
receipt("the second commit fails twice, then succeeds on its third attempt",
        ["new", "new", "ok", "ok", "store_down", "store_down", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PAUSE, commit(ck, 2), PAUSE, commit(ck, 3), PROCESSED])
receipt("a commit failing three times: 503 (the effect stands; at-least-once)",
        ["new", "new", "ok", "store_down", "store_down", "store_down"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), PAUSE, commit(dk, 2), PAUSE, commit(dk, 3), DOWN])
receipt("the last commit failing three times: 503 after the first committed",
        ["new", "new", "ok", "ok", "store_down", "store_down", "store_down"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PAUSE, commit(ck, 2), PAUSE, commit(ck, 3), DOWN])
receipt("each commit fails once", ["new", "new", "ok", "store_down", "ok", "store_down", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), PAUSE, commit(dk, 2), commit(ck), PAUSE, commit(ck, 2), PROCESSED])
receipt("the test event (enterprise.webhook.test): acknowledged at once, nothing claimed", [], [ACK],
        name="enterprise.webhook.test", did="dlv_test_0001")
receipt("a delivery signed with the previous secret while both are configured: processed",
        ["new", "new", "ok", "ok", "ok"], lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PROCESSED],
        secrets=[{"secret": SECRET}, {"secret": OLD}], secret=OLD, did="dlv_rotated_1")
receipt("a delivery signed with a previous secret past its valid_until: 401, nothing claimed", [],
        [reply(401, error="no_matching_signature")], secrets=[{"secret": SECRET}, {"secret": OLD, "valid_until": NOW - 1}],
        secret=OLD, did="dlv_rotated_2")
receipt("a previous secret inside its valid_until still verifies", ["new", "new", "ok", "ok", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PROCESSED],
        secrets=[{"secret": SECRET}, {"secret": OLD, "valid_until": NOW + 3600}], secret=OLD, did="dlv_rotated_3")
receipt("a forged signature: 401 no_matching_signature, nothing claimed", [], [reply(401, error="no_matching_signature")],
        secret="whsec_attacker_guess_00000000000")
h, b, _, _ = delivery()
receipt("Service-Webhook-Id missing: 400 missing_header", [], [reply(400, error="missing_header")],
        headers=[x for x in h if x[0] != "Service-Webhook-Id"])
receipt("Service-Webhook-Signature missing: 400 missing_header", [], [reply(400, error="missing_header")],
        headers=[x for x in h if x[0] != "Service-Webhook-Signature"])
receipt("a timestamp 301 s old: 400 timestamp_too_old", [], [reply(400, error="timestamp_too_old")], now=NOW + 301)
receipt("a timestamp 301 s ahead: 400 timestamp_too_new", [], [reply(400, error="timestamp_too_new")], now=NOW - 301)
receipt("a timestamp 300 s old is inside the tolerance", ["done"], lambda dk, ck: [claim(dk), ACK], now=NOW + 300)
receipt("a body that is not the signed one: 401", [], [reply(401, error="no_matching_signature")],
        headers=h, body=b.replace("release", "releasX", 1))
receipt("a signed body that is not an event: 400 invalid_payload, nothing claimed", [], [reply(400, error="invalid_payload")],
        signed="[1,2,3]")
receipt("a signed body over 1 MiB: 413 payload_too_large", [], [reply(413, error="payload_too_large")],
        signed="{\"pad\":\"" + "x" * (1024 * 1024) + "\"}")
receipt("a malformed timestamp: 400 invalid_timestamp", [], [reply(400, error="invalid_timestamp")],
        headers=[[n, "17638OOOOO" if n == "Service-Webhook-Timestamp" else v] for n, v in h])
receipt("a signature header without v1: 400 invalid_signature_header", [], [reply(400, error="invalid_signature_header")],
        headers=[[n, "v2=abc" if n == "Service-Webhook-Signature" else v] for n, v in h])
for i, (states, steps) in enumerate([
    (["done"], lambda dk, ck: [claim(dk), ACK]),
    (["in_progress"], lambda dk, ck: [claim(dk), LATER]),
    (["new", "done", "ok"], lambda dk, ck: [claim(dk), claim(ck), release(dk), ACK]),
    (["new", "new", "ok", "ok", "ok"], lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PROCESSED]),
]):
    receipt(f"two workers race for one delivery: worker {i + 1}'s view ({', '.join(states[:2])})", states, steps,
            did="dlv_race_0001")
receipt("header names in another case are the same headers", ["new", "new", "ok", "ok", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PROCESSED],
        headers=[[n.lower(), v] for n, v in h])
receipt("two signatures, the second valid: processed", ["new", "new", "ok", "ok", "ok"],
        lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PROCESSED],
        headers=[[n, "v1=" + "0" * 64 + "," + v if n == "Service-Webhook-Signature" else v] for n, v in h])
receipt("a delivery processed after a handler failure on an earlier attempt (claims were released)",
        ["new", "new", "ok", "ok", "ok"], lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), PROCESSED],
        did="dlv_after_fail")
receipt("the store is down when claiming and the handler is never run", ["store_down"], lambda dk, ck: [claim(dk), DOWN],
        did="dlv_store_down_2")

# Inbox receipts (enterprise spec, Delivery contract: "persist and return success"): a verified delivery is enqueued
# under its delivery key (answers: "new", "dup" or "store_down") and answered at once; content keys are not claimed.
ENQ = lambda k: {"step": "enqueue", "key": k}  # noqa: E731
for comment, answers, steps in [
    ("inbox: a new delivery is persisted and answered 200 queued at once", ["new"],
     lambda dk, ck: [ENQ(dk), reply(200, result="queued")]),
    ("inbox: a redelivery already in the inbox: 200 duplicate", ["dup"],
     lambda dk, ck: [ENQ(dk), reply(200, result="duplicate")]),
    ("inbox: the inbox is unreachable: 503 store_unavailable (the service redelivers)", ["store_down"],
     lambda dk, ck: [ENQ(dk), DOWN]),
]:
    receipt(comment, answers, steps, inbox=True, did="dlv_inbox_0001")
receipt("inbox: a forged signature is rejected before anything is persisted: 401", [],
        [reply(401, error="no_matching_signature")], inbox=True, secrets=[{"secret": OLD}], did="dlv_inbox_0002")
receipt("inbox: a test event is acknowledged, never enqueued", [], [ACK], inbox=True, name="enterprise.webhook.test",
        did="dlv_inbox_0003")

# Transactional receipts (a dedup table in the handler's database): after the claims, Begin; the
# handler; the marks (commit steps) inside the transaction, never retried (a failed statement aborts
# it); CommitTransaction. Any failure: Rollback when a transaction is open, then every claim
# released (guarded by this claim's token and state, so nothing committed is undone).
BEGIN = {"step": "begin"}
COMMIT_TX = {"step": "commit_transaction"}
ROLLBACK = {"step": "rollback"}
for comment, answers, steps in [
    ("transactional: the handler runs inside the transaction, the keys are marked done in it, then it commits",
     ["new", "new", "ok", "ok", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, commit(dk), commit(ck), COMMIT_TX, PROCESSED]),
    ("transactional: the handler fails: rolled back (its effect with it), both claims released, 500",
     ["new", "new", "ok", "fail", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, ROLLBACK, release(dk), release(ck), FAILED]),
    ("transactional: the rollback and the releases fail too: still 500 (the database rolls back a lost connection)",
     ["new", "new", "ok", "fail", "store_down", "store_down", "store_down"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, ROLLBACK, release(dk), release(ck), FAILED]),
    ("transactional: the claim's lease ran out and another worker took the key: the effect rolled back, 503",
     ["new", "new", "ok", "ok", "lost", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, commit(dk), ROLLBACK, release(dk), release(ck), LATER]),
    ("transactional: the second key's claim was lost after the first was marked: all rolled back, 503",
     ["new", "new", "ok", "ok", "ok", "lost", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, commit(dk), commit(ck), ROLLBACK, release(dk), release(ck), LATER]),
    ("transactional: the database is down at begin: the claims released, 503, the handler never run",
     ["new", "new", "store_down", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, release(dk), release(ck), DOWN]),
    ("transactional: a mark fails: rolled back at once (never retried: the transaction is aborted), 503",
     ["new", "new", "ok", "ok", "ok", "store_down", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, commit(dk), commit(ck), ROLLBACK, release(dk), release(ck), DOWN]),
    ("transactional: the commit of the transaction fails: claims released (a committed row is never released), 503",
     ["new", "new", "ok", "ok", "ok", "ok", "store_down", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, commit(dk), commit(ck), COMMIT_TX, release(dk), release(ck), DOWN]),
    ("transactional: a redelivery of a processed delivery: 200, no transaction", ["done"], lambda dk, ck: [claim(dk), ACK]),
    ("transactional: another worker holds the delivery: 503, no transaction", ["in_progress"],
     lambda dk, ck: [claim(dk), LATER]),
    ("transactional: the same content under a new id: the new claim released, 200, no transaction",
     ["new", "done", "ok"], lambda dk, ck: [claim(dk), claim(ck), release(dk), ACK]),
    ("transactional: the store is down at the second claim: the first released, 503, no transaction",
     ["new", "store_down", "ok"], lambda dk, ck: [claim(dk), claim(ck), release(dk), DOWN]),
]:
    receipt(comment, answers, steps, transactional=True, did="dlv_tx_0001")
# By default a receiver claims only the delivery key (enterprise spec, consumer workflow: "deduplicate by
# Service-Webhook-Id"): every new id is processed, same-second twins included.
for comment, answers, steps, kw in [
    ("default: a new delivery claims its delivery key only, the handler runs, the key is committed, 200",
     ["new", "ok", "ok"], lambda dk, ck: [claim(dk), RUN, commit(dk), PROCESSED], {}),
    ("default: a twin (the same body and timestamp under another Service-Webhook-Id) is processed too",
     ["new", "ok", "ok"], lambda dk, ck: [claim(dk), RUN, commit(dk), PROCESSED], {"did": "dlv_twin_0002"}),
    ("default: a redelivery of a processed delivery: 200 without the handler", ["done"], lambda dk, ck: [claim(dk), ACK], {}),
    ("default: another worker holds it: 503", ["in_progress"], lambda dk, ck: [claim(dk), LATER], {}),
    ("default: the handler fails: the claim released, 500", ["new", "fail", "ok"],
     lambda dk, ck: [claim(dk), RUN, release(dk), FAILED], {}),
    ("default: the commit fails twice then succeeds", ["new", "ok", "store_down", "store_down", "ok"],
     lambda dk, ck: [claim(dk), RUN, commit(dk), PAUSE, commit(dk, 2), PAUSE, commit(dk, 3), PROCESSED], {}),
    ("default: the store is down at the claim: 503", ["store_down"], lambda dk, ck: [claim(dk), DOWN], {}),
    ("default, transactional: one key marked inside the transaction", ["new", "ok", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), BEGIN, RUN, commit(dk), COMMIT_TX, PROCESSED], {"transactional": True}),
    ("default, transactional: the handler fails: rolled back, the claim released, 500", ["new", "ok", "fail", "ok", "ok"],
     lambda dk, ck: [claim(dk), BEGIN, RUN, ROLLBACK, release(dk), FAILED], {"transactional": True}),
]:
    receipt(comment, answers, steps, content=False, **kw)
receipt("transactional: the test event is acknowledged at once", [], [ACK], transactional=True,
        name="enterprise.webhook.test", did="dlv_tx_test")
receipt("transactional: a forged signature: 401, nothing claimed", [], [reply(401, error="no_matching_signature")],
        transactional=True, did="dlv_tx_forged", secret="whsec_someone_else_0000000000")

# Cancellation (DESIGN, Protocol machines: a host loop's semantics are the same in every language): the host was
# cancelled while a step was in flight (Python CancelledError or KeyboardInterrupt, a JS AbortSignal, a Kotlin
# CancellationException or interrupt). No new work follows: only the rollback of an open transaction and the releases of
# the claims taken (never the claim in flight: a store that does not check could free another worker's), then 503
# cancelled; a plain receipt whose handler succeeded keeps its claims (the effect stands: the leases run out).
CANCELLED = reply(503, error="cancelled")
for comment, answers, steps, kw in [
    ("cancelled at the first claim: nothing released (the claim in flight runs out with its lease), 503 cancelled",
     ["cancel"], lambda dk, ck: [claim(dk), CANCELLED], {}),
    ("cancelled at the second claim: the first released, 503 cancelled", ["new", "cancel", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), release(dk), CANCELLED], {}),
    ("cancelled while the handler runs: both claims released, 503 cancelled", ["new", "new", "cancel", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), RUN, release(dk), release(ck), CANCELLED], {}),
    ("cancelled at a commit: nothing more (the effect stands, the leases run out), 503 cancelled",
     ["new", "new", "ok", "ok", "cancel"], lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), commit(ck), CANCELLED], {}),
    ("cancelled during the pause before a commit's next attempt: 503 cancelled", ["new", "new", "ok", "store_down", "cancel"],
     lambda dk, ck: [claim(dk), claim(ck), RUN, commit(dk), PAUSE, CANCELLED], {}),
    ("cancelled while releasing after a handler failure: the releases go on, 500 handler_failed",
     ["new", "new", "fail", "cancel", "ok"], lambda dk, ck: [claim(dk), claim(ck), RUN, release(dk), release(ck), FAILED], {}),
    ("transactional, cancelled at begin: rolled back (harmless if never opened), both released, 503 cancelled",
     ["new", "new", "cancel", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, ROLLBACK, release(dk), release(ck), CANCELLED], {"transactional": True}),
    ("transactional, cancelled while the handler runs: rolled back, both released, 503 cancelled",
     ["new", "new", "ok", "cancel", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, ROLLBACK, release(dk), release(ck), CANCELLED], {"transactional": True}),
    ("transactional, cancelled at a mark: rolled back, both released, 503 cancelled",
     ["new", "new", "ok", "ok", "cancel", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, commit(dk), ROLLBACK, release(dk), release(ck), CANCELLED],
     {"transactional": True}),
    ("transactional, cancelled at the commit of the transaction: rolled back (nothing if it committed), released, 503",
     ["new", "new", "ok", "ok", "ok", "ok", "cancel", "ok", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, commit(dk), commit(ck), COMMIT_TX, ROLLBACK, release(dk),
                     release(ck), CANCELLED], {"transactional": True}),
    ("transactional, cancelled during the rollback after a handler failure: the cleanup goes on, 500 handler_failed",
     ["new", "new", "ok", "fail", "cancel", "ok", "ok"],
     lambda dk, ck: [claim(dk), claim(ck), BEGIN, RUN, ROLLBACK, release(dk), release(ck), FAILED], {"transactional": True}),
]:
    receipt(comment, answers, steps, did="dlv_cancel_0001", **kw)
receipt("inbox, cancelled at the enqueue: 503 cancelled (the redelivery finds it queued or not)", ["cancel"],
        lambda dk, ck: [ENQ(dk), CANCELLED], inbox=True, did="dlv_cancel_0002")

# ---------------------------------------------------------------- Call ----------------------------------

TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
T0 = 1_763_900_000
SPEC_C = ("enterprise spec, Errors → Client behaviour by status and Retry safety; reporting spec, Errors (409, 503) "
          "and idem operations; DESIGN §3 (backoff 2, 5, 15, 30–60 s; Retry-After never shortened; budgets)")

calls = []


def resp(status, body="", headers=None, after=0):
    e = {"response": {"status": status, "headers": headers or [], "body": body}}
    if after:
        e["after"] = after
    return e


def transport(kind, after=0):
    e = {"transport": kind}
    if after:
        e["after"] = after
    return e


def tok(value="tok-1", valid_for=3600):
    return {"token": value, "valid_for": valid_for}


def send(method, target, token="tok-1", key=None):
    return {"step": "send", "method": method, "target": target, "token": token, "idempotency_key": key}


def wait(s):
    return {"step": "wait", "seconds": s}


REFRESH = {"step": "refresh_token"}


def budget_wait(s):
    """A wait for the host's rate budget, after the job's own pause: the job's state is unchanged."""
    return {**wait(s), "budget_only": True}


def done(status, body=""):
    return {"step": "done", "status": status, "body": body}


def fail(rule, status=None, code=None, transport=None, **kv):
    return {"step": "fail", "rule": rule, "status": status, "code": code, "transport": transport, **kv}


def reconcile(what="lookup_by_sent_data"):
    return {"step": "reconcile", "reconcile": what}


GET = ("GET", "/api/platform/v1/exports/exp_1")


def call(comment, events, steps, operation="getPlatformExport", params=None, options=None, budget=None, spec=SPEC_C):
    p = {"tenant_id": TENANT, "path": [["export", "exp_1"]]} if params is None else params
    calls.append({"comment": comment, "spec": spec,
                  "input": {"operation": operation, "params": p, "options": {"seed": 7, **(options or {})},
                            "budget": budget, "start": T0, "events": events},
                  "expected": {"steps": steps}})


def read_fail_then_ok(statuses, seed=7):
    """A read failing with each status (no Retry-After), then 200: the default backoff between."""
    r = SplitMix(seed)
    ev, st = [tok()], [REFRESH]
    for i, s in enumerate(statuses):
        ev.append(resp(s))
        st += [send(*GET), wait(backoff(i + 1, r.next()))]
    ev.append(resp(200, '{"id":"exp_1","status":"queued"}'))
    st += [send(*GET), done(200, '{"id":"exp_1","status":"queued"}')]
    return ev, st


call("a read answered 200 at once", [tok(), resp(200, "{}")], [REFRESH, send(*GET), done(200, "{}")])
for statuses in ([503], [500], [502, 504], [408], [500, 502, 503], [503, 503, 503, 503]):
    ev, st = read_fail_then_ok(statuses)
    call(f"a read failing with {statuses} then 200: waits 2, 5, 15, then 30–60 s with jitter", ev, st)
r = SplitMix(7)
ev, st = [tok()], [REFRESH]
for i in range(4):
    ev.append(resp(503))
    st += [send(*GET), wait(backoff(i + 1, r.next()))]
ev.append(resp(503, '{"message":"dependency unavailable"}'))
st += [send(*GET), fail("attempts_exhausted", 503, "api_error")]
call("five 503s: the fifth ends the call (5 attempts)", ev, st)
call("max_attempts 2: two 503s end it", [tok(), resp(503), resp(503)],
     [REFRESH, send(*GET), wait(2.0), send(*GET), fail("attempts_exhausted", 503, "api_error")], options={"max_attempts": 2})
call("429 with Retry-After 7: waits exactly 7 s, then sends again", [tok(), resp(429, "", [["Retry-After", "7"]]), resp(200, "{}")],
     [REFRESH, send(*GET), wait(7.0), send(*GET), done(200, "{}")])
call("429 without Retry-After: the backoff", [tok(), resp(429), resp(200, "{}")],
     [REFRESH, send(*GET), wait(2.0), send(*GET), done(200, "{}")])
call("429 with an HTTP-date 30 s ahead: waits 30 s", [tok(), resp(429, "", [["Retry-After", formatdate(T0 + 30, usegmt=True)]]), resp(200, "{}")],
     [REFRESH, send(*GET), wait(30.0), send(*GET), done(200, "{}")])
call("503 with Retry-After 10: the larger of backoff (2) and Retry-After", [tok(), resp(503, "", [["Retry-After", "10"]]), resp(200, "{}")],
     [REFRESH, send(*GET), wait(10.0), send(*GET), done(200, "{}")])
call("503 with Retry-After 1: the backoff (2) is longer", [tok(), resp(503, "", [["Retry-After", "1"]]), resp(200, "{}")],
     [REFRESH, send(*GET), wait(2.0), send(*GET), done(200, "{}")])
call("429 with Retry-After 400 passes the 300 s budget: stop with the wait, never shortened",
     [tok(), resp(429, "", [["Retry-After", "400"]])],
     [REFRESH, send(*GET), fail("retry_after_exceeds_budget", 429, "api_error", retry_after_seconds=400.0)])
call("the time budget: 503s until the next backoff passes max_elapsed_seconds 10",
     [tok(), resp(503), resp(503), resp(503)],
     [REFRESH, send(*GET), wait(2.0), send(*GET), wait(5.0), send(*GET), fail("time_budget_exhausted", 503, "api_error")],
     options={"max_elapsed_seconds": 10})
call("401: a new token, the request sent again at once with it", [tok(), resp(401), tok("tok-2"), resp(200, "{}")],
     [REFRESH, send(*GET), REFRESH, send(*GET, token="tok-2"), done(200, "{}")])
call("401 again after the refresh: stop", [tok(), resp(401), tok("tok-2"), resp(401, '{"message":"Unauthenticated."}')],
     [REFRESH, send(*GET), REFRESH, send(*GET, token="tok-2"), fail("unauthorized_after_refresh", 401, "api_error")])
call("a token due for refresh by the end of the backoff: the wait, then a new token just before the send",
     [tok(valid_for=3), resp(503, after=4), tok("tok-2"), resp(200, "{}")],
     [REFRESH, send(*GET), wait(2.0), REFRESH, send(*GET, token="tok-2"), done(200, "{}")])
# DESIGN "Sessions": a fresh token is used at least once, whatever its lifetime (expires_in 1, or an expires_at
# behind this clock), and refreshes count against the call's budget: every call ends.
call("a token due at once (valid for 0 s) is still used for the send it was obtained for",
     [tok(valid_for=0), resp(200, "{}")], [REFRESH, send(*GET), done(200, "{}")])
call("a token due at once on every attempt: one exchange per attempt, the call ends when its attempts are used",
     [tok(valid_for=0), resp(503), tok("tok-2", 0), resp(503), tok("tok-3", 0), resp(503)],
     [REFRESH, send(*GET), wait(2.0), REFRESH, send(*GET, token="tok-2"), wait(5.0), REFRESH, send(*GET, token="tok-3"),
      fail("attempts_exhausted", 503, "api_error")], options={"max_attempts": 3})
call("an enterprise token already expired (expires_at behind this clock): used once, refreshed once on 401, then stop",
     [tok(valid_for=-60), resp(401), tok("tok-2", -60), resp(401, '{"message":"Unauthenticated."}')],
     [REFRESH, send("GET", "/api/v1/countries"), REFRESH, send("GET", "/api/v1/countries", token="tok-2"),
      fail("unauthorized_after_refresh", 401, "api_error")], operation="listEnterpriseCountries", params={})
# Enterprise spec, Delivery contract: "Redirects are not followed"; "send key and secret only on the token exchange".
call("a 307 to another origin: the call stops, nothing is sent there",
     [tok(), resp(307, "", [["Location", "https://evil.example/steal?x=1"]])],
     [REFRESH, send(*GET), fail("redirect", 307)])
for status, rule in ((404, "client_error"), (400, "client_error"), (403, "client_error"), (409, "conflict"),
                     (422, "client_error")):
    call(f"{status}: stop ({rule}), the error parsed", [tok(), resp(status, '{"message":"no"}')],
         [REFRESH, send(*GET), fail(rule, status, "api_error")])
call("301: stop (redirect): no API error to show, the failure names where the Location points",
     [tok(), resp(301, '{"message":"no"}', [["Location", "/elsewhere"]])], [REFRESH, send(*GET), fail("redirect", 301)])
for kind in ("timeout", "connect_failed", "connection_lost"):
    call(f"a read after {kind}: safe to send again after 2 s", [tok(), transport(kind), resp(200, "{}")],
         [REFRESH, send(*GET), wait(2.0), send(*GET), done(200, "{}")])
call("a read timing out five times: stop with the transport failure", [tok()] + [transport("timeout")] * 5,
     [REFRESH] + sum([[send(*GET), wait(backoff(i + 1, r))] for i, r in zip(range(4), (lambda g: [g.next() for _ in range(4)])(SplitMix(7)))], [])
     + [send(*GET), fail("attempts_exhausted", transport="timeout")])
call("the rate budget (2 per 60 s) holds the third send until the window frees, 62 whole seconds after the first",
     [tok(), resp(503), resp(503), resp(200, "{}")],
     [REFRESH, send(*GET), wait(2.0), send(*GET), wait(5.0), wait(55.0), send(*GET), done(200, "{}")],
     budget=[["api_client", 2, 60]])
call("an idempotent path parameter that tries to climb: the request is refused before sending",
     [tok()], [REFRESH, fail("invalid_request", code="invalid_parameter")], params={"tenant_id": TENANT, "path": [["export", ".."]]})

CREATE = ("POST", "/api/platform/v1/exports")
BODY = '{"export_class":"statements","format":"csv"}'
KEYED = {"tenant_id": TENANT, "body": BODY, "idempotency_key": "key-0001", "idempotency_header": "Idempotency-Key"}
UNKEYED = {"tenant_id": TENANT, "body": BODY, "idempotency_key": "key-0001"}
CREATED = '{"id":"exp_9","status":"queued"}'
for kind in ("timeout", "connection_lost"):
    call(f"a create with its key sent, after {kind}: sent again with the same key", [tok(), transport(kind), resp(201, CREATED)],
         [REFRESH, send(*CREATE, key="key-0001"), wait(2.0), send(*CREATE, key="key-0001"), done(201, CREATED)],
         operation="createPlatformExport", params=KEYED)
    call(f"a create without its key on the wire, after {kind}: reconcile, never a blind retry", [tok(), transport(kind)],
         [REFRESH, send(*CREATE), reconcile()], operation="createPlatformExport", params=UNKEYED)
for status in (500, 503, 408):
    call(f"a create without its key, answered {status}: reconcile", [tok(), resp(status)],
         [REFRESH, send(*CREATE), reconcile()], operation="createPlatformExport", params=UNKEYED)
call("a keyed create answered 503: sent again with the same key", [tok(), resp(503), resp(201, CREATED)],
     [REFRESH, send(*CREATE, key="key-0001"), wait(2.0), send(*CREATE, key="key-0001"), done(201, CREATED)],
     operation="createPlatformExport", params=KEYED)
call("a create whose connection was refused (nothing sent): retried even without its key",
     [tok(), transport("connect_failed"), resp(201, CREATED)],
     [REFRESH, send(*CREATE), wait(2.0), send(*CREATE), done(201, CREATED)], operation="createPlatformExport", params=UNKEYED)
call("a create rate limited (429, nothing applied): waits Retry-After even without its key",
     [tok(), resp(429, "", [["Retry-After", "3"]]), resp(201, CREATED)],
     [REFRESH, send(*CREATE), wait(3.0), send(*CREATE), done(201, CREATED)], operation="createPlatformExport", params=UNKEYED)
call("a create answered 409 (state or idempotency conflict): stop", [tok(), resp(409)],
     [REFRESH, send(*CREATE, key="key-0001"), fail("conflict", 409, "api_error")], operation="createPlatformExport", params=KEYED)
HOOK = ("POST", "/api/v1/webhooks")
HOOK_BODY = '{"endpoint_url":"https://hooks.example.com/rk","events":["enterprise.release.updated"]}'
call("an enterprise webhook create (Idempotency-Key) after a lost connection: the same key again",
     [tok(), transport("connection_lost"), resp(201, "{}")],
     [REFRESH, send(*HOOK, key="hook-key-1"), wait(2.0), send(*HOOK, key="hook-key-1"), done(201, "{}")],
     operation="createEnterpriseWebhook", params={"body": HOOK_BODY, "idempotency_key": "hook-key-1"})
call("an enterprise webhook test (a create, no key) timing out: reconcile", [tok(), transport("timeout")],
     [REFRESH, send("POST", "/api/v1/webhooks/wh_1/test"), reconcile()],
     operation="testEnterpriseWebhook", params={"path": [["reference", "wh_1"]]})
call("a secret rotation timing out: never sent again; reconcile rotate_again (its secret was shown once: rotate again"
     " at once)", [tok(), transport("timeout")],
     [REFRESH, send("POST", "/api/v1/webhooks/wh_1/rotate-secret"), reconcile("rotate_again")],
     operation="rotateEnterpriseWebhookSecret", params={"path": [["reference", "wh_1"]]},
     spec="enterprise spec, Endpoints (rotate-secret: new secret (once) and previous_secret_valid_until) and Retry safety")
call("an enterprise read answered 502 then 200", [tok(), resp(502), resp(200, "[]")],
     [REFRESH, send("GET", "/api/v1/countries"), wait(2.0), send("GET", "/api/v1/countries"), done(200, "[]")],
     operation="listEnterpriseCountries", params={})
call("an enterprise safe update after a timeout: sent again", [tok(), transport("timeout"), resp(200, "{}")],
     [REFRESH, send("POST", "/api/v1/splits/" + REF), wait(2.0), send("POST", "/api/v1/splits/" + REF), done(200, "{}")],
     operation="updateEnterpriseSplit", params={"path": [["uuid", REF]], "body": '{"shares":[]}'})
DL = ("GET", "/api/platform/v1/exports/exp_1/download")
call("a download answered 206: read again, then the whole artifact", [tok(), resp(206, "a,b"), resp(200, "a,b\n1,2\n")],
     [REFRESH, send(*DL), wait(2.0), send(*DL), done(200, "a,b\n1,2\n")], operation="downloadPlatformExport")
call("a download 200 with Content-Range: not whole, read again", [tok(), resp(200, "a,b", [["Content-Range", "bytes 0-2/9"]]),
                                                                  resp(200, "a,b\n1,2\n")],
     [REFRESH, send(*DL), wait(2.0), send(*DL), done(200, "a,b\n1,2\n")], operation="downloadPlatformExport")
g = SplitMix(7)
call("five partial downloads: stop (partial_content)", [tok()] + [resp(206, "a")] * 5,
     [REFRESH] + sum([[send(*DL), wait(backoff(i + 1, g.next()))] for i in range(4)], [])
     + [send(*DL), fail("partial_content", 206, "partial_content_unsupported")], operation="downloadPlatformExport")
call("a download of an export not ready (409): stop", [tok(), resp(409, '{"message":"not ready"}')],
     [REFRESH, send(*DL), fail("conflict", 409, "api_error")], operation="downloadPlatformExport")

# A download body may be streamed to the host's sink (a file): only a 2xx to a download is, and
# the machine then checks the length it is told against Content-Length; Done carries no body.


def streamed(e, flag=True):
    return dict(e, streamed=flag)


CL8 = [["Content-Length", "8"]]
call("a download streamed to the host's file: done, the artifact is in the file", [tok(), streamed(resp(200, "a,b\n1,2\n", CL8))],
     [REFRESH, send(*DL), done(200, "")], operation="downloadPlatformExport")
call("a streamed download that ended early (3 of Content-Length 8 bytes): read again into a fresh file",
     [tok(), streamed(resp(200, "a,b", CL8)), streamed(resp(200, "a,b\n1,2\n", CL8))],
     [REFRESH, send(*DL), wait(2.0), send(*DL), done(200, "")], operation="downloadPlatformExport")
# A 206 is not the artifact: never streamed into the host's file (whose progress would show it
# whole), read whole and rejected.
call("a download's 206 is not streamed: read whole, read again, then the whole artifact",
     [tok(), streamed(resp(206, "a,b"), False), streamed(resp(200, "a,b\n1,2\n"))],
     [REFRESH, send(*DL), wait(2.0), send(*DL), done(200, "")], operation="downloadPlatformExport")
call("a streamed 200 with Content-Range: read again", [tok(), streamed(resp(200, "a,b", [["Content-Range", "bytes 0-2/8"]])),
                                                      streamed(resp(200, "a,b\n1,2\n", CL8))],
     [REFRESH, send(*DL), wait(2.0), send(*DL), done(200, "")], operation="downloadPlatformExport")
call("a download's 409 is not streamed: its error body is read whole", [tok(), streamed(resp(409, '{"message":"not ready"}'), False)],
     [REFRESH, send(*DL), fail("conflict", 409, "api_error")], operation="downloadPlatformExport")
call("a read's 200 is never streamed", [tok(), streamed(resp(200, "{}"), False)],
     [REFRESH, send("GET", "/api/platform/v1/exports/exp_1"), done(200, "{}")])

# A token exchange is a Call too (Call::exchange of the token module's request): safe to repeat
# (enterprise Retry safety: "reads and token exchange may be retried"; reporting: 503 declared on the
# exchange), never with a bearer token, and a 401 means the credentials are wrong.
SPEC_X = ("reporting spec, Authentication (token exchange: Basic client id and secret, X-Tenant-ID) and Errors (503 on "
          "token exchange); enterprise spec, Retry safety (token exchange may be retried)")
import base64
BASIC = "Basic " + base64.b64encode(b"cid:csecret").decode()
REPORTS_X = {"api": "reports", "client_id": "cid", "client_secret": "csecret", "tenant_id": TENANT}
ENTERPRISE_X = {"api": "enterprise", "api_key": "key-1", "api_secret": "secret-1"}
TOKEN_BODY = '{"access_token":"tok-9","token_type":"Bearer","expires_in":3600,"scope":"exports:read exports:write"}'
XR = ("POST", "/api/platform/v1/oauth/token")
XE = ("POST", "/api/v1/token")


def exchange(comment, x, events, steps):
    calls.append({"comment": comment, "spec": SPEC_X,
                  "input": {"exchange": x, "options": {"seed": 7}, "budget": None, "start": T0, "events": events},
                  "expected": {"steps": steps}})


def xsend(target, x):
    return send(*target, token=BASIC if x is REPORTS_X else None)


exchange("a token exchange answered 200 at once: no token asked for, none sent", REPORTS_X, [resp(200, TOKEN_BODY)],
         [xsend(XR, REPORTS_X), done(200, TOKEN_BODY)])
g = SplitMix(7)
exchange("a token exchange answered 503 twice (declared: dependency unavailable): safe to repeat, with backoff", REPORTS_X,
         [resp(503), resp(503), resp(200, TOKEN_BODY)],
         [xsend(XR, REPORTS_X), wait(backoff(1, g.next())), xsend(XR, REPORTS_X), wait(backoff(2, g.next())),
          xsend(XR, REPORTS_X), done(200, TOKEN_BODY)])
g = SplitMix(7)
exchange("a token exchange that timed out is sent again (token exchange may be retried)", REPORTS_X,
         [transport("timeout"), resp(200, TOKEN_BODY)],
         [xsend(XR, REPORTS_X), wait(backoff(1, g.next())), xsend(XR, REPORTS_X), done(200, TOKEN_BODY)])
exchange("a token exchange refused with 401: the credentials are wrong, no refresh and no retry", REPORTS_X,
         [resp(401, '{"message":"invalid client"}')], [xsend(XR, REPORTS_X), fail("token_exchange_unauthorized", 401, "api_error")])
exchange("a token exchange rate limited: waits the whole Retry-After", REPORTS_X,
         [resp(429, "", [["Retry-After", "9"]]), resp(200, TOKEN_BODY)],
         [xsend(XR, REPORTS_X), wait(9.0), xsend(XR, REPORTS_X), done(200, TOKEN_BODY)])
exchange("a malformed token exchange (400) stops", REPORTS_X, [resp(400)], [xsend(XR, REPORTS_X), fail("client_error", 400, "api_error")])
g = SplitMix(7)
exchange("the enterprise key-and-secret exchange answered 500 then 200", ENTERPRISE_X,
         [resp(500), resp(200, '{"token":"etok-1","expires_at":null}')],
         [xsend(XE, ENTERPRISE_X), wait(backoff(1, g.next())), xsend(XE, ENTERPRISE_X), done(200, '{"token":"etok-1","expires_at":null}')])

# ---------------------------------------------------------------- ExportJob -----------------------------

SPEC_J = ("reporting spec, Exports (create → queued → ready; cancel only while queued; revoke when ready; one complete "
          "artifact; the full status set not shown) and Errors; enterprise spec, Retry safety (a create that timed out: "
          "look up by the data already sent)")
# The job's listings filter by the create's export_class and format (the list's own filters) and read every page.
LIST = ("GET", "/api/platform/v1/exports?limit=100&export_class=statements&format=csv")
CURSOR1 = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
CURSOR2 = "9a8b7c6d-5e4f-4d3c-8b2a-1f0e9d8c7b6a"


def listed(cursor):
    return ("GET", LIST[1] + "&cursor=" + cursor)
EXP = ("GET", "/api/platform/v1/exports/exp_9")
EXPDL = ("GET", "/api/platform/v1/exports/exp_9/download")
ART = "statement_id,amount\n1,10.00\n2,5.50\n"
jobs = []


def state(s, i="exp_9"):
    return resp(200, json.dumps({"id": i, "status": s}, separators=(",", ":")))


def page(*items, shape="data", bare=False, **extra):
    """A list page; `bare`: items without the body's members (the spec promises only "safe lifecycle states")."""
    arr = [{"id": i, "status": "queued"} if bare else {"id": i, "status": "queued", "export_class": "statements", "format": f}
           for i, f in items]
    body = arr if shape == "array" else {shape: arr, **extra}
    return resp(200, json.dumps(body, separators=(",", ":")))


def job(comment, events, steps, keyed=False, options=None, budget=None, body=BODY):
    # The host keeps the checkpoint the job gives before each send and each wait (so a create in
    # flight is reconciled and a pause waited out after a resume), and at no other step.
    # A wait for the host's rate budget alone (`budget_wait`) changes nothing the job keeps: the
    # budget is the process's, so no new checkpoint.
    steps = [{k: v for k, v in s.items() if k != "budget_only"} if s.get("budget_only") else
             {**s, "checkpoint": True} if s["step"] in ("send", "wait") else s for s in steps]
    o = {"tenant_id": TENANT, "body": body, "seed": 11, **(options or {})}
    if keyed:
        o.update({"idempotency_header": "Idempotency-Key", "request_id": "etl-2026-11"})
    jobs.append({"comment": comment, "spec": SPEC_J,
                 "input": {"options": o, "budget": budget, "start": T0, "events": events},
                 "expected": {"steps": steps}})


KEY = idempotency_key(TENANT, "createPlatformExport", "etl-2026-11")


class Job:
    """Expected steps of a job: the job's jitter forks one seed per request and draws one value per read."""

    def __init__(self, seed=11, keyed=False):
        self.g = SplitMix(seed)
        self.steps = [REFRESH]
        self.events = [tok()]
        self.reads = 0
        self.keyed = keyed
        self.start()  # the first request: the list (unkeyed) or the create

    def start(self):
        return self.g.fork()

    def read(self):
        """The next poll delay after a non-final read."""
        self.reads += 1
        return backoff(self.reads, self.g.next())

    def create(self, *events):
        for e in events:
            self.steps.append(send(*CREATE, key=KEY if self.keyed else None))
            self.events.append(e)
        return self


def flow(keyed, states, final=None, download=(resp(200, ART),), created="queued", seed=11):
    """list (unkeyed) → create → reads → download; `states` are the reads after the create."""
    j = Job(seed, keyed)
    st, ev = j.steps, j.events
    if not keyed:
        st.append(send(*LIST))
        ev.append(page())
        j.start()  # the create's request
    st.append(send(*CREATE, key=KEY if keyed else None))
    ev.append(resp(201, json.dumps({"id": "exp_9", "status": created}, separators=(",", ":"))))
    seq = [created] + list(states)
    for i, s in enumerate(seq):
        if s in ("ready",):
            j.reads += 1
            j.g.next()
            j.start()
            for d in download:
                st.append(send(*EXPDL))
                ev.append(d)
            return j, st, ev
        if s in ("cancelled", "canceled", "revoked"):
            j.reads += 1
            j.g.next()
            st.append(final)
            return j, st, ev
        delay = j.read()
        j.start()
        if final is not None and i == len(seq) - 1:
            st.append(final)
            return j, st, ev
        st += [wait(delay), send(*EXP)]
        ev.append(state(seq[i + 1]) if i + 1 < len(seq) else state("queued"))
    return j, st, ev


for keyed in (True, False):
    j, st, ev = flow(keyed, ["ready"])
    job(f"create → queued → ready → download ({'key sent' if keyed else 'no key header: the exports listed first'})",
        ev, st + [{"step": "done", "export_id": "exp_9", "artifact": ART}], keyed=keyed)
for states in (["processing", "ready"], ["rendering", "packaging", "ready"], ["queued", "processing", "queued", "ready"],
               ["processing"] * 5 + ["ready"]):
    j, st, ev = flow(True, states)
    job(f"unknown intermediate states {states[:-1]} are polled like queued", ev,
        st + [{"step": "done", "export_id": "exp_9", "artifact": ART}], keyed=True)
j, st, ev = flow(True, [], created="ready")
job("the create answers ready: downloaded at once", ev, st + [{"step": "done", "export_id": "exp_9", "artifact": ART}], keyed=True)
for end in ("cancelled", "canceled", "revoked"):
    j, st, ev = flow(True, ["queued", end], final={"step": "fail", "stage": "poll", "rule": "poll_stopped", "export_id": "exp_9"})
    job(f"the export ends {end}: stop, nothing to download", ev, st, keyed=True)
for lo, hi in ((4.0, 10.0), (None, 3.0), (20.0, None)):
    j, st, ev = flow(True, ["queued", "processing", "queued", "ready"])
    # the backoff's waits between reads (2, 5, 15, 30–60 s), each held within the bounds given
    for k, step in enumerate(st):
        if step.get("step") == "wait":
            st[k] = wait(min(hi if hi is not None else float("inf"), max(lo or 0.0, step["seconds"])))
    opts = {k: v for k, v in (("min_poll_interval_seconds", lo), ("max_poll_interval_seconds", hi)) if v is not None}
    job(f"poll interval bounds {opts}: each wait between reads is held within them", ev,
        st + [{"step": "done", "export_id": "exp_9", "artifact": ART}], keyed=True, options=opts)
j, st, ev = flow(True, ["queued", "processing"], final={"step": "fail", "stage": "poll", "rule": "poll_stopped", "export_id": "exp_9"})
job("max_polls 3: still processing after 3 reads, stop with the budget", ev, st, keyed=True, options={"max_polls": 3})
j, st, ev = flow(True, ["ready"], download=(resp(206, "statement_id"), resp(200, ART)))
st.insert(len(st) - 1, wait(2.0))
job("a 206 download is read again, then the whole artifact", ev, st + [{"step": "done", "export_id": "exp_9", "artifact": ART}],
    keyed=True)
j, st, ev = flow(True, ["ready"], download=(transport("connection_lost"), resp(200, ART)))
st.insert(len(st) - 1, wait(2.0))
job("a download that loses its connection is read again", ev, st + [{"step": "done", "export_id": "exp_9", "artifact": ART}],
    keyed=True)
j, st, ev = flow(True, ["ready"], download=(resp(409, '{"message":"not ready"}'),))
job("a download answered 409: stop at the download stage", ev,
    st + [{"step": "fail", "stage": "download", "rule": "conflict", "export_id": "exp_9"}], keyed=True)

ART_LEN = [["Content-Length", str(len(ART.encode()))]]
j, st, ev = flow(True, ["ready"], download=(streamed(resp(200, ART, ART_LEN)),))
ev[2] = streamed(ev[2], False)  # the create's 201 is read whole
job("the download streamed to the host's file: done with an empty artifact", ev,
    st + [{"step": "done", "export_id": "exp_9", "artifact": ""}], keyed=True)
j, st, ev = flow(True, ["ready"], download=(streamed(resp(200, ART[:9], ART_LEN)), streamed(resp(200, ART, ART_LEN))))
st.insert(len(st) - 1, wait(2.0))
job("a streamed download cut short of its Content-Length is read again into a fresh file", ev,
    st + [{"step": "done", "export_id": "exp_9", "artifact": ""}], keyed=True)
j, st, ev = flow(True, ["ready"], download=(streamed(resp(206, "statement_id"), False), transport("connection_lost"),
                                            streamed(resp(200, ART))))
st.insert(len(st) - 2, wait(2.0))
st.insert(len(st) - 1, wait(5.0))
job("a 206 (not streamed), then a connection lost mid-body: read again each time", ev,
    st + [{"step": "done", "export_id": "exp_9", "artifact": ""}], keyed=True)

# A keyed create that times out is sent again with the same key (no list at all).
j = Job(keyed=True)
j.create(transport("timeout"))
j.steps.append(wait(2.0))
j.create(resp(201, CREATED))
d = j.read()
j.start()
j.steps += [wait(d), send(*EXP)]
j.events.append(state("ready"))
j.reads += 1
j.g.next()
j.steps += [send(*EXPDL), {"step": "done", "export_id": "exp_9", "artifact": ART}]
j.events.append(resp(200, ART))
job("a keyed create timing out is sent again with the same key: one export", j.events, j.steps, keyed=True)


def reconciled(listing, then, comment, kind="timeout", body=BODY, baseline=None, options=None):
    """An unkeyed create lost to `kind`, the exports listed again, then `then` (steps, events)."""
    j = Job()
    j.steps.append(send(*LIST))
    j.events.append(baseline or page(("exp_old", "csv")))
    j.start()
    j.steps.append(send(*CREATE))
    j.events.append(transport(kind) if isinstance(kind, str) else kind)
    j.start()
    j.steps.append(send(*LIST))
    j.events.append(listing)
    then(j)
    job(comment, j.events, j.steps, body=body, options=options)


GRACE = (2.0, 5.0)  # the default grace (7 s): looks again after 2 s and 5 s, the backoff's first delays


def look_again(j, listing, delays=GRACE):
    """Nothing new found: looks again after each grace delay (a new listing each time)."""
    for d in delays:
        j.start()
        j.steps += [wait(d), send(*LIST)]
        j.events.append(listing)


def adopt(j, i="exp_9"):
    d = j.read()
    j.start()
    j.steps += [wait(d), send("GET", "/api/platform/v1/exports/" + i)]
    j.events.append(state("ready", i))
    j.reads += 1
    j.g.next()
    j.start()
    j.steps += [send("GET", f"/api/platform/v1/exports/{i}/download"), {"step": "done", "export_id": i, "artifact": ART}]
    j.events.append(resp(200, ART))


def recreate(j, listing=None):
    look_again(j, listing or page(("exp_old", "csv")))
    j.start()
    j.steps.append(send(*CREATE))
    j.events.append(resp(201, CREATED))
    adopt(j)


for kind in ("timeout", "connection_lost"):
    reconciled(page(("exp_old", "csv"), ("exp_9", "csv")), adopt,
               f"an unkeyed create lost to {kind} had been applied: the new export carrying the data sent is adopted", kind)
for status in (500, 503):
    reconciled(page(("exp_9", "csv"), ("exp_old", "csv")), adopt,
               f"an unkeyed create answered {status} had been applied: found by the data sent and adopted", resp(status))
for shape_ in ("array", "items", "exports"):
    reconciled(page(("exp_old", "csv"), ("exp_9", "csv"), shape=shape_), adopt,
               f"the list page as {shape_!r}: the export found all the same")
reconciled(page(("exp_old", "csv")), recreate,
           "the create had not been applied (nothing new in three looks over 7 s): created again, once")
reconciled(page(("exp_old", "csv"), ("exp_x", "pdf")), lambda j: recreate(j, page(("exp_old", "csv"), ("exp_x", "pdf"))),
           "a new export with other data (pdf, not csv) is not ours: created again")
reconciled(page(("exp_old", "csv")), recreate,
           "an export with the same data that existed before the job is not adopted", baseline=page(("exp_old", "csv")))


def undecided(*candidates):
    def then(j):
        j.steps.append({"step": "reconcile", "reconcile": "lookup_by_sent_data", "candidates": list(candidates)})
    return then


reconciled(page(("exp_9", "csv"), ("exp_10", "csv")), undecided("exp_9", "exp_10"),
           "two new exports carry the data sent: the job cannot tell which is its own: Reconcile with both, no second create")


def exhausted(j):
    none = page(("exp_old", "csv"))
    look_again(j, none)
    for _ in range(2):
        j.start()
        j.steps.append(send(*CREATE))
        j.events.append(transport("timeout"))
        j.start()
        j.steps.append(send(*LIST))
        j.events.append(none)
        look_again(j, none)
    j.steps.append({"step": "fail", "stage": "reconcile", "rule": "creates_exhausted", "export_id": None})


reconciled(page(("exp_old", "csv")), exhausted, "three creates lost and none found in any look: stop (never a fourth create)")

# Reconciling never guesses (reporting spec: "page of safe lifecycle states", cursor and limit; enterprise spec:
# "look up or search by the data already sent before creating again").
reconciled(page(("exp_old", "csv"), ("exp_9", "csv"), bare=True), adopt,
           "list items that do not repeat the body's members: the one export new since the job started is adopted")
reconciled(page(("exp_old", "csv")), lambda j: (j.start(), j.steps.extend([wait(2.0), send(*LIST)]),
                                                 j.events.append(page(("exp_old", "csv"), ("exp_9", "csv"))), adopt(j)),
           "the new export shows up in the list one look late: adopted on the second look, never created twice")


def second_page(j, found=page(("exp_9", "csv"))):
    j.start()
    j.steps.append(send(*listed(CURSOR1)))
    j.events.append(found)
    adopt(j)


reconciled(page(("exp_old", "csv"), next_cursor=CURSOR1), second_page,
           "the lost create's export is on the list's second page (next_cursor): found there and adopted")
reconciled(page(("exp_old", "csv"), meta={"next_cursor": CURSOR1}), second_page,
           "a next cursor under meta is followed too")
reconciled(page(("exp_old", "csv"), links={"next": LIST[1] + "&cursor=" + CURSOR1}), second_page,
           "a next link's cursor parameter is followed too")
FULL = [("exp_p%03d" % i, "csv") for i in range(100)]
reconciled(page(*FULL), lambda j: j.steps.append({"step": "reconcile", "candidates_count": 100}),
           "a full page (100 items) without a next cursor: the list cannot decide: Reconcile, no second create")
reconciled(page(*FULL, has_more=False), lambda j: j.steps.append({"step": "reconcile", "candidates_count": 100}),
           "has_more false ends a full page: the 100 new candidates are ambiguous: Reconcile")


def cursor_loop(j):
    j.start()
    j.steps += [send(*listed(CURSOR1)), {"step": "reconcile", "candidates": []}]
    j.events.append(page(("exp_old2", "csv"), next_cursor=CURSOR1))


reconciled(page(("exp_old", "csv"), next_cursor=CURSOR1), cursor_loop,
           "a cursor the list gave before: it cannot end: Reconcile, no second create",
           baseline=page(("exp_old", "csv"), ("exp_old2", "csv")))
reconciled(resp(403, '{"message":"missing scope exports:read"}'), undecided(),
           "the reconciling list is refused (403): the create may have been applied: Reconcile, no second create")
reconciled(page(("exp_old", "csv"), ("exp_9", "csv")), undecided("exp_old", "exp_9"),
           "the exports listed before the create could not all be read (a full page, no cursor), then the create was lost:"
           " Reconcile with what is known", baseline=page(*FULL))
j = Job()
j.steps += [send(*LIST), send(*listed(CURSOR1))]
j.events += [page(("exp_old", "csv"), next_cursor=CURSOR1), page(("exp_old2", "csv"), next_cursor=None)]
j.start()
j.start()
j.create(resp(201, CREATED))
adopt(j)
job("the exports before the create span two pages: both read (next_cursor, then null), then the create", j.events, j.steps)
j = Job()
j.steps.append(send(*LIST))
j.events.append(page(*FULL))
j.start()
j.create(resp(201, CREATED))
adopt(j)
job("the list before the create cannot be read to its end (a full page, no cursor): a plain create still succeeds",
    j.events, j.steps)
# The spec's export list cursor is a UUID: after a full page that names no cursor, the next page is asked for with
# its last item's id (a service that ignores it answers the same page again, and the repeated cursor stops it).
UUIDS = [("00000000-0000-4000-8000-%012d" % i, "csv") for i in range(100)]
j = Job()
j.steps += [send(*LIST), send(*listed(UUIDS[-1][0]))]
j.events += [page(*UUIDS), page()]
j.start()
j.start()
j.create(resp(201, CREATED))
adopt(j)
job("a full page of UUID ids without a next cursor: the next page asked for with the last id, empty: then the create",
    j.events, j.steps)


def after_retry_after(j):
    """A lost create answered 503 with Retry-After 20: nothing found in three looks (0, 2, 7 s), then the next create
    still waits out the Retry-After (20 - 7 = 13 s)."""
    look_again(j, page(("exp_old", "csv")))
    j.start()
    j.steps += [wait(13.0), send(*CREATE)]
    j.events.append(resp(201, CREATED))
    adopt(j)


reconciled(page(("exp_old", "csv")), after_retry_after,
           "an unkeyed create answered 503 with Retry-After 20 and not found: the next create waits out the Retry-After",
           kind=resp(503, "", [["Retry-After", "20"]]))

j, st, ev = flow(True, ["ready"])
ev[1:1] = []
job_steps = [REFRESH, send(*CREATE, key=KEY), wait(5.0)]
j = Job(keyed=True)
j.steps.append(send(*CREATE, key=KEY))
j.events.append(resp(429, "", [["Retry-After", "5"]]))
j.steps.append(wait(5.0))
j.create(resp(201, CREATED))
adopt(j)
job("a create rate limited: waits Retry-After, sends again with the same key", j.events, j.steps, keyed=True)
j = Job(keyed=True)
j.create(resp(201, CREATED))
for d in (j.read(), j.read()):
    j.start()
    j.steps += [wait(d), send(*EXP)]
    j.events.append(state("queued"))
j.steps.append({"step": "fail", "stage": "poll", "rule": "poll_stopped", "export_id": "exp_9"})
job("max_poll_seconds 10: the next read (15 s on, 22 s into polling) would pass it: stop", j.events, j.steps, keyed=True,
    options={"max_poll_seconds": 10})
j = Job(keyed=True)
j.create(resp(422, '{"message":"invalid","errors":{"format":["unknown"]}}'))
j.steps.append({"step": "fail", "stage": "create", "rule": "client_error", "export_id": None})
job("a create refused (422): stop at the create stage", j.events, j.steps, keyed=True)
j = Job(keyed=True)
j.create(resp(201, '{"export":"exp_9"}'))
j.steps.append({"step": "fail", "stage": "create", "rule": "no_export_id", "export_id": None})
job("a create response without an id member: stop, saying which member to read", j.events, j.steps, keyed=True)
j = Job(keyed=True)
j.create(resp(201, '{"export_id":"exp_9","state":"queued"}'))
adopt(j)
j.events[-2] = resp(200, '{"export_id":"exp_9","state":"ready"}')
job("id_field and state_field name other members", j.events, j.steps, keyed=True,
    options={"id_field": "export_id", "state_field": "state"})
j = Job(keyed=True)
j.create(resp(201, CREATED))
d = j.read()
j.start()
j.steps += [wait(d), send(*EXP)]
j.events.append(resp(503))
j.steps += [wait(2.0), send(*EXP)]
j.events.append(state("ready"))
j.reads += 1
j.g.next()
j.start()
j.steps += [send(*EXPDL), {"step": "done", "export_id": "exp_9", "artifact": ART}]
j.events.append(resp(200, ART))
job("a read answered 503 is read again after the backoff", j.events, j.steps, keyed=True)
j = Job(keyed=True)
j.create(resp(201, CREATED))
d = j.read()
j.start()
j.steps += [wait(d), send(*EXP), REFRESH, send(*EXP, token="tok-2")]
j.events += [resp(401), tok("tok-2"), state("ready")]
j.reads += 1
j.g.next()
j.start()
j.steps += [send(*EXPDL, token="tok-2"), {"step": "done", "export_id": "exp_9", "artifact": ART}]
j.events.append(resp(200, ART))
job("a token refused (401) mid-job: refreshed once, the read sent again, the new token kept", j.events, j.steps, keyed=True)
j = Job(keyed=True)
j.events[0] = tok(valid_for=1)
j.create(resp(201, CREATED))
d = j.read()
j.start()
j.steps += [wait(d), REFRESH, send(*EXP, token="tok-2")]
j.events += [tok("tok-2"), state("ready")]
j.reads += 1
j.g.next()
j.start()
j.steps += [send(*EXPDL, token="tok-2"), {"step": "done", "export_id": "exp_9", "artifact": ART}]
j.events.append(resp(200, ART))
job("the token due for refresh mid-job: a new one before the next read", j.events, j.steps, keyed=True)
j = Job(keyed=True)
j.create(resp(201, CREATED))
d = j.read()
j.start()
j.steps += [wait(d), send(*EXP)]
j.events.append(resp(404, '{"message":"not found"}'))
j.steps.append({"step": "fail", "stage": "poll", "rule": "client_error", "export_id": "exp_9"})
job("the export vanishes (404) while polled: stop at the poll stage", j.events, j.steps, keyed=True)
j = Job(keyed=True)
j.create(resp(201, CREATED))
d = j.read()
j.start()
j.steps += [wait(d), budget_wait(60.0), send(*EXP)]
j.events.append(state("ready"))
j.reads += 1
j.g.next()
j.start()
j.steps += [wait(62.0), send(*EXPDL), {"step": "done", "export_id": "exp_9", "artifact": ART}]
j.events.append(resp(200, ART))
job("the rate budget (1 per 60 s) spaces the requests of the job", j.events, j.steps, keyed=True, budget=[["api_client", 1, 60]])

j, st, ev = flow(False, ["processing", "ready"])
job("no key header: listed first, then an unknown state polled like queued", ev,
    st + [{"step": "done", "export_id": "exp_9", "artifact": ART}])
j, st, ev = flow(True, [], final={"step": "fail", "stage": "poll", "rule": "poll_stopped", "export_id": "exp_9"})
job("max_polls 1: the create's own queued answer is the one read allowed, stop", ev, st, keyed=True, options={"max_polls": 1})
j = Job()
j.steps.append(send(*LIST))
j.events.append(page())
j.start()
j.steps += [send(*CREATE), wait(2.0), send(*CREATE)]
j.events += [transport("connect_failed"), resp(201, CREATED)]
adopt(j)
job("an unkeyed create whose connection was refused (nothing sent) is sent again without reconciling", j.events, j.steps)
j = Job(keyed=True)
j.create(resp(201, CREATED))
d = j.read()
j.start()
j.steps += [wait(d), send(*EXP), wait(9.0), send(*EXP)]
j.events += [resp(429, "", [["Retry-After", "9"]]), state("ready")]
j.reads += 1
j.g.next()
j.start()
j.steps += [send(*EXPDL), {"step": "done", "export_id": "exp_9", "artifact": ART}]
j.events.append(resp(200, ART))
job("a read rate limited (429, Retry-After 9): waits 9 s, reads again", j.events, j.steps, keyed=True)
j = Job()
j.steps += [send(*LIST), wait(2.0), send(*LIST)]
j.events += [resp(503), page()]
j.start()
j.create(resp(201, CREATED))
adopt(j)
job("the first list answered 503: listed again after 2 s, then the create", j.events, j.steps)

# ---------------------------------------------------------------- Session -----------------------------
# DESIGN "Sessions": the calls of one API client share a Session — the token, when to refresh it and the rate
# budget. One token exchange is in flight at a time (the others wait for it: the token exchange has "tighter
# credential and source limits"); a token is used at least once by every call that waited for it, whatever its
# lifetime; an exchange that failed fails the calls that waited for it; an exchange abandoned lets the next call
# lead; a token refused (401) is dropped for every call. A waiting call is told the longest wait: the exchange's
# lease, its own budget (300 s) and one timeout (30 s).
#
# A runner keeps one session and the machines listed, and plays `script`: {"next": i} asks machine i for its step
# at `now` (recorded with "machine": i), {"respond": i, ...} reports a response or transport failure to it (with
# "after": seconds that pass first), {"token": value, "valid_for": s} stores a token in the session (bound to
# the input's tenant for the reporting API), {"exchange_failed": reason}, {"abandon": true}, {"advance": s}. The
# session's count of exchanges started is compared at the end.
SPEC_S = ("DESIGN Sessions (one token exchange in flight per session; a fresh token used at least once; shared rate "
          "budgets); enterprise spec, Rate limits (token exchange: tighter credential and source limits)")
LEASE = 330.0
sessions = []
COUNTRIES = ("GET", "/api/v1/countries")


def countries():
    return {"kind": "call", "operation": "listEnterpriseCountries", "params": {}, "options": {"seed": 7}}


def session(comment, machines, script, steps, exchanges, budget=None, api="enterprise"):
    sessions.append({"comment": comment, "spec": SPEC_S,
                     "input": {"api": api, "tenant_id": TENANT, "budget": budget, "start": T0, "machines": machines,
                               "script": script},
                     "expected": {"steps": steps, "exchanges": exchanges}})


def at(i, step):
    return {"machine": i, **step}


def await_token(seconds=LEASE):
    return {"step": "await_token", "seconds": seconds}


OK = resp(200, "[]")
session("three calls on one session need a token: one exchange, the other two wait for it, all three send with it",
        [countries(), countries(), countries()],
        [{"next": 0}, {"next": 1}, {"next": 2}, tok(), {"next": 0}, {"next": 1}, {"next": 2},
         {"respond": 0, **OK}, {"respond": 1, **OK}, {"respond": 2, **OK}, {"next": 0}, {"next": 1}, {"next": 2}],
        [at(0, REFRESH), at(1, await_token()), at(2, await_token()), at(0, send(*COUNTRIES)), at(1, send(*COUNTRIES)),
         at(2, send(*COUNTRIES)), at(0, done(200, "[]")), at(1, done(200, "[]")), at(2, done(200, "[]"))], 1)
session("a token due at once (expires_in 1, or expires_at behind this clock) is used by every call that waited for it;"
        " a later call refreshes",
        [countries(), countries(), countries()],
        [{"next": 0}, {"next": 1}, {"advance": 0.5}, tok(valid_for=0), {"next": 0}, {"next": 1}, {"respond": 0, **OK},
         {"respond": 1, **OK}, {"next": 0}, {"next": 1}, {"next": 2}],
        [at(0, REFRESH), at(1, await_token()), at(0, send(*COUNTRIES)), at(1, send(*COUNTRIES)), at(0, done(200, "[]")),
         at(1, done(200, "[]")), at(2, REFRESH)], 2)
session("the exchange fails: the call that waited for it fails too (no second exchange for it); a later call tries anew",
        [countries(), countries(), countries()],
        [{"next": 0}, {"next": 1}, {"exchange_failed": "401 invalid_client"}, {"next": 1}, {"next": 2}],
        [at(0, REFRESH), at(1, await_token()), at(1, fail("token_exchange_failed")), at(2, REFRESH)], 2)
session("the shared token refused (401) on two calls: one exchange, both send again with the new token",
        [countries(), countries()],
        [tok(), {"next": 0}, {"next": 1}, {"respond": 0, **resp(401)}, {"next": 0}, {"respond": 1, **resp(401)},
         {"next": 1}, tok("tok-2"), {"next": 0}, {"next": 1}, {"respond": 0, **OK}, {"respond": 1, **OK}, {"next": 0},
         {"next": 1}],
        [at(0, send(*COUNTRIES)), at(1, send(*COUNTRIES)), at(0, REFRESH), at(1, await_token()),
         at(0, send(*COUNTRIES, token="tok-2")), at(1, send(*COUNTRIES, token="tok-2")), at(0, done(200, "[]")),
         at(1, done(200, "[]"))], 1)
session("the exchange's call is cancelled (abandoned): the waiting call leads a new one",
        [countries(), countries()],
        [{"next": 0}, {"next": 1}, {"abandon": True}, {"next": 1}, tok(), {"next": 1}, {"next": 0}],
        [at(0, REFRESH), at(1, await_token()), at(1, REFRESH), at(1, send(*COUNTRIES)), at(0, send(*COUNTRIES))], 2)
session("a waiting call is told the lease left: 330 s from the exchange's start",
        [countries(), countries()],
        [{"next": 0}, {"advance": 30}, {"next": 1}],
        [at(0, REFRESH), at(1, await_token(LEASE - 30))], 1)
session("one rate budget for the session (1 per 60 s): the second call waits until the window frees, 62 whole seconds on",
        [countries(), countries()],
        [tok(), {"next": 0}, {"next": 1}, {"respond": 0, **OK}, {"next": 0}, {"advance": 62}, {"next": 1},
         {"respond": 1, **OK}, {"next": 1}],
        [at(0, send(*COUNTRIES)), at(1, wait(62.0)), at(0, done(200, "[]")), at(1, send(*COUNTRIES)),
         at(1, done(200, "[]"))], 0, budget=[["api_client", 1, 60]])
session("an export job and a call of one reporting client share its token: one exchange",
        [{"kind": "export_job", "options": {"tenant_id": TENANT, "body": BODY, "seed": 11,
                                            "idempotency_header": "Idempotency-Key", "request_id": "etl-2026-11"}},
         {"kind": "call", "operation": "getPlatformExport", "params": {"tenant_id": TENANT, "path": [["export", "exp_1"]]},
          "options": {"seed": 7}}],
        [{"next": 0}, {"next": 1}, tok(), {"next": 0}, {"next": 1}, {"respond": 1, **resp(200, "{}")}, {"next": 1},
         {"respond": 0, **resp(201, CREATED)}, {"next": 0}],
        [at(0, REFRESH), at(1, await_token()), at(0, send(*CREATE, key=KEY)), at(1, send(*GET)), at(1, done(200, "{}")),
         at(0, wait(2.0))], 1, api="reports")

# Pages (DESIGN "Protocol machines"; reporting "Analytics"/"Exports" list queries: cursor, limit 1 to 100, default
# 50, the export cursor a UUID; enterprise subscription list: page default 1, size default 10). A runner builds
# Pages(operation, query, options); at each step it records `next()`; a fetch takes the next body of `pages` and
# records what `page(body)` points at: {"step": "page", "member": m, "take": n}, or {"step": "page", "items": null}
# when the page has no items array. Items are the page itself (an array) or its first array among data, items,
# exports, results, subscriptions, deliveries.
SPEC_P = ("reporting spec, Machine: analytics and exports (cursor; limit 1 to 100, default 50; the export cursor is a"
          " Uuid); enterprise spec, Subscription list query parameters (page default 1, size default 10)")
pages_tests = []


def pages(comment, operation, query, bodies, steps, options=None, error=None):
    case = {"comment": comment, "spec": SPEC_P,
            "input": {"operation": operation, "query": query, "options": options or {},
                      "pages": [b if isinstance(b, str) else json.dumps(b) for b in bodies]}}
    if error:
        case["error"] = error
    else:
        case["expected"] = {"steps": steps}
    pages_tests.append(case)


def fetch(*query):
    return {"step": "fetch", "query": [list(q) for q in query]}


def took(take, member="data"):
    return {"step": "page", "member": member, "take": take}


def pages_done(end, pages_read, items):
    return {"step": "done", "end": end, "pages": pages_read, "items": items}


def pages_fail(code):
    return {"step": "fail", "code": code, "family": "pagination"}


X1 = {"id": "exp_1", "status": "ready"}
X2 = {"id": "exp_2", "status": "queued"}
X3 = {"id": "exp_3", "status": "ready"}
ANALYTICS = [("currency", "EUR"), ("currency_basis", "reporting"), ("basis", "net"), ("dimension", "territory")]
U = ["6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a%02d" % i for i in range(3)]

pages("exports: a cursor page, then has_more false: two fetches at the spec's largest limit, every item given",
      "listPlatformExports", [["format", "csv"]],
      [{"data": [X1, X2], "next_cursor": "c-2"}, {"data": [X3], "has_more": False}],
      [fetch(("limit", "100"), ("format", "csv")), took(2),
       fetch(("limit", "100"), ("format", "csv"), ("cursor", "c-2")), took(1), pages_done("last", 2, 3)])
pages("analytics: the caller's limit 2 kept; the next cursor read from a `next` link (percent-decoded) under"
      " `links`; a short page is the last",
      "listPublishedAnalyticsBreakdown", [list(q) for q in ANALYTICS] + [["limit", "2"]],
      [{"items": [{"k": 1}, {"k": 2}], "links": {"next": "/api/platform/v1/analytics/breakdown?limit=2&cursor=abc%3D%3D"}},
       {"items": [{"k": 3}]}],
      [fetch(("limit", "2"), *ANALYTICS), took(2, "items"),
       fetch(("limit", "2"), *ANALYTICS, ("cursor", "abc==")), took(1, "items"), pages_done("last", 2, 3)])
pages("the caller's own cursor is where the walk starts",
      "listPublishedObservedRates", [list(q) for q in ANALYTICS] + [["cursor", "from-here"]],
      [{"data": [], "next_cursor": None}],
      [fetch(("limit", "100"), *ANALYTICS, ("cursor", "from-here")), took(0), pages_done("last", 1, 0)])
pages("max_items 2 cuts a page of 3: two given, done max_items",
      "listPlatformExports", [], [{"data": [X1, X2, X3], "next_cursor": "c-2"}],
      [fetch(("limit", "100")), took(2), pages_done("max_items", 1, 2)], options={"max_items": 2})
pages("max_items 2 cuts the last page (has_more false): done max_items, not last — the list was not all given"
      " (the simulator's find)",
      "listPlatformExports", [], [{"data": [X1, X2, X3], "has_more": False}],
      [fetch(("limit", "100")), took(2), pages_done("max_items", 1, 2)], options={"max_items": 2})
pages("a page that repeats one read two pages before (the service went back to the first): its items not given"
      " again, fail list_cursor_repeated",
      "listPlatformExports", [],
      [{"data": [X1], "next_cursor": "c-2"}, {"data": [X2], "next_cursor": "c-3"}, {"data": [X1], "next_cursor": "c-4"}],
      [fetch(("limit", "100")), took(1), fetch(("limit", "100"), ("cursor", "c-2")), took(1),
       fetch(("limit", "100"), ("cursor", "c-3")), took(0), pages_fail("list_cursor_repeated")])
pages("max_items reached exactly on the last page: done last",
      "listPlatformExports", [], [{"data": [X1, X2], "has_more": False}],
      [fetch(("limit", "100")), took(2), pages_done("last", 1, 2)], options={"max_items": 2})
pages("max_pages 1 with a next cursor: done max_pages after one page",
      "listPlatformExports", [], [{"data": [X1], "meta": {"next_cursor": "c-2"}}],
      [fetch(("limit", "10")), took(1), pages_done("max_pages", 1, 1)], options={"max_pages": 1, "page_size": 10})
pages("a cursor given twice: fail list_cursor_repeated after giving both pages' items",
      "listPlatformExports", [], [{"data": [X1], "next_cursor": "c-2"}, {"data": [X2], "next_cursor": "c-2"}],
      [fetch(("limit", "100")), took(1), fetch(("limit", "100"), ("cursor", "c-2")), took(1),
       pages_fail("list_cursor_repeated")])
pages("has_more true without a cursor: the page's items given, then fail next_page_unknown",
      "listPlatformExports", [], [{"data": [X1], "has_more": True}],
      [fetch(("limit", "100")), took(1), pages_fail("next_page_unknown")])
pages("a full page of UUID ids with no cursor (exports): the next page asked for with the last id",
      "listPlatformExports", [], [[{"id": u} for u in U[:2]], []],
      [fetch(("limit", "2")), took(2, None), fetch(("limit", "2"), ("cursor", U[1])), took(0, None),
       pages_done("last", 2, 2)], options={"page_size": 2})
pages("a full analytics page with no cursor (not a UUID list): fail next_page_unknown",
      "listPublishedObservedRates", [list(q) for q in ANALYTICS], [{"data": [{"k": 1}, {"k": 2}]}],
      [fetch(("limit", "2"), *ANALYTICS), took(2), pages_fail("next_page_unknown")], options={"page_size": 2})
pages("subscriptions: numbered pages of size 2; a short page is the last",
      "listEnterpriseSubscriptions", [["sort", "asc"]],
      [{"data": [{"reference": "s1"}, {"reference": "s2"}]}, {"data": [{"reference": "s3"}]}],
      [fetch(("sort", "asc"), ("page", "1"), ("size", "2")), took(2),
       fetch(("sort", "asc"), ("page", "2"), ("size", "2")), took(1), pages_done("last", 2, 3)],
      options={"page_size": 2})
pages("subscriptions: current_page reaching last_page ends the walk even on a full page; the caller's page 3 starts it",
      "listEnterpriseSubscriptions", [["page", "3"], ["size", "1"]],
      [{"data": [{"reference": "s3"}], "meta": {"current_page": 3, "last_page": 4}},
       {"data": [{"reference": "s4"}], "meta": {"current_page": 4, "last_page": 4}}],
      [fetch(("page", "3"), ("size", "1")), took(1), fetch(("page", "4"), ("size", "1")), took(1),
       pages_done("last", 2, 2)])
pages("subscriptions without a size: the spec's default 10 decides that a page of 3 is the last; no size sent",
      "listEnterpriseSubscriptions", [], [{"data": [{"reference": "s1"}, {"reference": "s2"}, {"reference": "s3"}]}],
      [fetch(("page", "1")), took(3), pages_done("last", 1, 3)])
pages("subscriptions: a page that repeats the one before (the page number ignored): its items not given again,"
      " fail list_cursor_repeated",
      "listEnterpriseSubscriptions", [["size", "1"]],
      [{"data": [{"reference": "s1"}]}, {"data": [{"reference": "s1"}]}],
      [fetch(("page", "1"), ("size", "1")), took(1), fetch(("page", "2"), ("size", "1")), took(0),
       pages_fail("list_cursor_repeated")])
pages("exports: a new cursor but the same page again (the cursor ignored): nothing given twice, fail"
      " list_cursor_repeated",
      "listPlatformExports", [], [{"data": [X1], "next_cursor": "c-2"}, {"data": [X1], "next_cursor": "c-3"}],
      [fetch(("limit", "100")), took(1), fetch(("limit", "100"), ("cursor", "c-2")), took(0),
       pages_fail("list_cursor_repeated")])
pages("subscriptions: an empty page ends the walk",
      "listEnterpriseSubscriptions", [["size", "1"]], [{"data": [{"reference": "s1"}]}, {"data": []}],
      [fetch(("page", "1"), ("size", "1")), took(1), fetch(("page", "2"), ("size", "1")), took(0),
       pages_done("last", 2, 1)])
pages("releases (no paging parameter): one page, a bare array",
      "listEnterpriseReleases", [], [[{"uuid": "r1"}, {"uuid": "r2"}]],
      [fetch(), took(2, None), pages_done("last", 1, 2)])
pages("deliveries (no paging parameter) whose page names a next cursor: its items given, then fail"
      " next_page_unknown rather than a list cut short in silence",
      "listEnterpriseWebhookDeliveries", [], [{"deliveries": [{"reference": "d1"}], "next_cursor": "more"}],
      [fetch(), took(1, "deliveries"), pages_fail("next_page_unknown")])
pages("a page that is not JSON: no items, fail page_unreadable",
      "listPlatformExports", [], ["<html>busy</html>"],
      [fetch(("limit", "100")), {"step": "page", "items": None}, pages_fail("page_unreadable")])
pages("a JSON page with no items array: no items, fail page_unreadable",
      "listPlatformExports", [], [{"count": 3}],
      [fetch(("limit", "100")), {"step": "page", "items": None}, pages_fail("page_unreadable")])
pages("a page size above the list's 100: invalid_argument before any request",
      "listPlatformExports", [], [], None, options={"page_size": 101}, error="invalid_argument")
pages("an operation that is not a list (a POST): invalid_argument",
      "createPlatformExport", [], [], None, error="invalid_argument")
pages("the query's limit and page_size differ: invalid_argument",
      "listPlatformExports", [["limit", "5"]], [], None, options={"page_size": 10}, error="invalid_argument")

# Recovery (enterprise spec: Delivery contract "keep periodic reconciliation until event delivery is proven";
# Endpoints: GET /api/v1/webhooks/{reference}/deliveries, POST …/deliveries/{deliveryReference}/replay, "new delivery
# with replay_of"; Lifecycle: a delivery attempt is pending, retrying, delivered or failed). A runner builds
# Recovery(subscription, namespace, since, now, options) and records each `next()`:
# - fetch: {"step": "fetch", "query": [...]}, answered with the next body of `pages` (`page(body)`);
# - check: {"step": "check", "keys": [...]}, answered with each key's state from `states` (key -> state; "new" when
#   absent) (`checked(states)`);
# - replay: {"step": "replay", "delivery": d}, answered with the next of `replays`: {"body": text} (`replayed`) or
#   {"failed": code} (`replay_failed`);
# - done: {"step": "done", "report": {entries, considered, before_since, skipped, replayed, end, deliveries: [
#   {reference, event, status, created_at, replays, action, replay, error}]}}; fail: {"step": "fail", "code", "family"}.
# Keys are delivery keys (keys.py, independent of the library) of the namespace.
SPEC_RC = ("enterprise spec, Delivery contract (deduplicate by Service-Webhook-Id; keep periodic reconciliation until"
          " event delivery is proven), Endpoints (delivery log; replay: new delivery with replay_of), Lifecycle"
          " (delivery attempt pending, retrying, delivered, failed)")
recovery_tests = []
NS = "org-1"
NOW = 1_800_000_000
T0_S = 1_800_000_000 - 3_600  # an hour before NOW
def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def dk(ref):
    return delivery_key(NS, ref)


def entry(ref, status, at=T0_S, event="ddex.delivery.failed", replay_of=None):
    e = {"reference": ref, "event": event, "status": status, "created_at": iso(at)}
    if replay_of:
        e["replay_of"] = replay_of
    return e


def recovered(ref, action, status, at=T0_S, replays=(), replay=None, error=None, event="ddex.delivery.failed"):
    return {"reference": ref, "event": event, "status": status, "created_at": at, "replays": list(replays),
            "action": action, "replay": replay, "error": error}


def recovery(comment, pages_, states, replays, steps, since=T0_S - 60, options=None, error=None, namespace=NS,
             subscription="wh_001"):
    case = {"comment": comment, "spec": SPEC_RC,
            "input": {"subscription": subscription, "namespace": namespace, "since": since, "now": NOW,
                      "options": options or {},
                      "pages": [b if isinstance(b, str) else json.dumps(b) for b in pages_],
                      "states": {dk(k): v for k, v in states.items()}, "replays": replays}}
    if error:
        case["error"] = error
    else:
        case["expected"] = {"steps": steps}
    recovery_tests.append(case)


def check(*refs):
    return {"step": "check", "keys": [dk(r) for r in refs]}


def rdone(deliveries, entries, replayed=0, before_since=0, skipped=0, end="last"):
    return {"step": "done", "report": {"entries": entries, "considered": len(deliveries), "before_since": before_since,
                                       "skipped": skipped, "replayed": replayed, "end": end,
                                       "deliveries": deliveries}}


FETCH = {"step": "fetch", "query": []}
recovery("a failed delivery the store never saw is replayed; a processed one is left alone",
         [{"data": [entry("d1", "delivered"), entry("d2", "failed")]}], {"d1": "done"},
         [{"body": json.dumps({"data": {"reference": "d3", "replay_of": "d2", "status": "pending"}})}],
         [FETCH, check("d1", "d2"), {"step": "replay", "delivery": "d2"},
          rdone([recovered("d1", "processed", "delivered"), recovered("d2", "replayed", "failed", replay="d3")], 2, 1)])
recovery("the next run: the replay is pending in the log, so the original is not replayed again",
         [{"data": [entry("d1", "delivered"), entry("d2", "failed"), entry("d3", "pending", replay_of="d2")]}],
         {"d1": "done"}, [],
         [FETCH, check("d1", "d2", "d3"),
          rdone([recovered("d1", "processed", "delivered"), recovered("d2", "replay_pending", "failed", replays=["d3"])], 3)])
recovery("a replay processed by the receiver (its new id done in the store): processed_by_replay",
         [{"data": [entry("d2", "failed"), entry("d3", "delivered", replay_of="d2")]}], {"d3": "done"}, [],
         [FETCH, check("d2", "d3"), rdone([recovered("d2", "processed_by_replay", "failed", replays=["d3"])], 2)])
recovery("the service is still attempting a delivery (pending, retrying): in_flight, not replayed",
         [{"data": [entry("d1", "pending"), entry("d2", "retrying")]}], {}, [],
         [FETCH, check("d1", "d2"),
          rdone([recovered("d1", "in_flight", "pending"), recovered("d2", "in_flight", "retrying")], 2)])
recovery("a live claim in the store (a receiver processing it now): in_progress, not replayed",
         [{"data": [entry("d1", "failed")]}], {"d1": "in_progress"}, [],
         [FETCH, check("d1"), rdone([recovered("d1", "in_progress", "failed")], 1)])
recovery("delivered but unknown to the store (the store forgot it, or another namespace): unrecorded, never replayed"
         " (replaying every such delivery would flood the receiver)",
         [{"data": [entry("d1", "delivered")]}], {}, [],
         [FETCH, check("d1"), rdone([recovered("d1", "unrecorded", "delivered")], 1)])
recovery("before `since`: left alone and counted, its key not even checked",
         [{"data": [entry("d0", "failed", at=T0_S - 7200), entry("d1", "failed")]}], {}, [{"body": "{}"}],
         [FETCH, check("d1"), {"step": "replay", "delivery": "d1"},
          rdone([recovered("d1", "replayed", "failed")], 2, 1, before_since=1)])
recovery("the test event and an entry without a reference are skipped",
         [{"data": [entry("t1", "failed", event="enterprise.webhook.test"), {"status": "failed"}]}], {}, [],
         [FETCH, check(), rdone([], 2, skipped=2)])
recovery("three failed replays already (the default per-delivery bound): replay_limit, not replayed again",
         [{"data": [entry("d1", "failed"), entry("r1", "failed", replay_of="d1"), entry("r2", "failed", replay_of="d1"),
                    entry("r3", "failed", replay_of="d1")]}], {}, [],
         [FETCH, check("d1", "r1", "r2", "r3"),
          rdone([recovered("d1", "replay_limit", "failed", replays=["r1", "r2", "r3"])], 4)])
recovery("a replay of a replay counts for the original (its replay_of chain)",
         [{"data": [entry("d1", "failed"), entry("r1", "failed", replay_of="d1"), entry("r2", "delivered", replay_of="r1")]}],
         {"r2": "done"}, [],
         [FETCH, check("d1", "r1", "r2"), rdone([recovered("d1", "processed_by_replay", "failed", replays=["r1", "r2"])], 3)])
recovery("max_replays 1: the first failed delivery replayed, the second deferred to the next run",
         [{"data": [entry("d1", "failed"), entry("d2", "failed")]}], {}, [{"body": "{\"data\":{\"id\":\"n1\"}}"}],
         [FETCH, check("d1", "d2"), {"step": "replay", "delivery": "d1"},
          rdone([recovered("d1", "replayed", "failed", replay="n1"), recovered("d2", "deferred", "failed")], 2, 1)],
         options={"max_replays": 1})
recovery("a replay request that failed: replay_failed with its code; the run goes on with the next",
         [{"data": [entry("d1", "failed"), entry("d2", "failed")]}], {},
         [{"failed": "reconcile_required"}, {"body": "{\"data\":{\"reference\":\"n2\"}}"}],
         [FETCH, check("d1", "d2"), {"step": "replay", "delivery": "d1"}, {"step": "replay", "delivery": "d2"},
          rdone([recovered("d1", "replay_failed", "failed", error="reconcile_required"),
                 recovered("d2", "replayed", "failed", replay="n2")], 2, 1)])
recovery("several attempts of one delivery in the log: one delivery, delivered if any attempt was",
         [{"data": [entry("d1", "failed"), entry("d1", "delivered"), entry("d1", "failed")]}], {"d1": "done"}, [],
         [FETCH, check("d1"), rdone([recovered("d1", "processed", "delivered")], 3)])
recovery("an unknown state is kept; recent, it is read as still attempted (in_flight); older than the whole redelivery"
         " schedule, as ended (replayed)",
         [{"data": [entry("d1", "queued_for_retry"), entry("d2", "queued_for_retry", at=NOW - 40_000)]}], {},
         [{"body": "{}"}],
         [FETCH, check("d1", "d2"), {"step": "replay", "delivery": "d2"},
          rdone([recovered("d1", "in_flight", "queued_for_retry"),
                 recovered("d2", "replayed", "queued_for_retry", at=NOW - 40_000)], 2, 1)],
         since=0)
recovery("a log page that is a bare array, and entries named by delivery_reference/state/createdAt",
         [[{"delivery_reference": "d1", "state": "failed", "createdAt": iso(T0_S), "event": "ddex.import.failed"}]], {},
         [{"body": "{}"}],
         [{"step": "fetch", "query": []}, check("d1"), {"step": "replay", "delivery": "d1"},
          rdone([recovered("d1", "replayed", "failed", event="ddex.import.failed")], 1, 1)])
recovery("a log page that names a next cursor (the spec shows no paging for the log): fail next_page_unknown, nothing"
         " replayed",
         [{"data": [entry("d1", "failed")], "next_cursor": "c2"}], {}, [],
         [FETCH, {"step": "fail", "code": "next_page_unknown", "family": "pagination"}])
recovery("a log page that is not JSON: fail page_unreadable",
         ["<html>busy</html>"], {}, [], [FETCH, {"step": "fail", "code": "page_unreadable", "family": "pagination"}])
recovery("max_entries 2 cuts the log: the report says so (end max_items); the rest is for the next run",
         [{"data": [entry("d1", "failed"), entry("d2", "failed"), entry("d3", "failed")]}], {}, [{"body": "{}"}] * 2,
         [FETCH, check("d1", "d2"), {"step": "replay", "delivery": "d1"}, {"step": "replay", "delivery": "d2"},
          rdone([recovered("d1", "replayed", "failed"), recovered("d2", "replayed", "failed")], 2, 2, end="max_items")],
         options={"max_entries": 2})
recovery("an empty namespace: invalid_argument before any request", [], {}, [], None, namespace="",
         error="invalid_argument")
recovery("an empty subscription: invalid_argument", [], {}, [], None, subscription="", error="invalid_argument")
recovery("max_replays 0: invalid_argument", [], {}, [], None, options={"max_replays": 0}, error="invalid_argument")

# InboxWorker (enterprise spec, Delivery contract: "persist and return success", then process; "delivery attempt |
# 10 seconds default"). A runner builds InboxWorker(options, seed), records `next()`, then for each event reports it
# and records `next()` again. Events: {"claimed": entry or null, "now": t}, {"waited": true}, {"began": true},
# {"handler": "ok"}, {"handler_failed": message, "now": t}, {"marked": bool}, {"committed": true},
# {"rolled_back": true}, {"settled": true}, {"store_failed": true}. Steps: {"step": "claim"}, {"step": "idle",
# "seconds"}, {"step": "drained"}, {"step": "begin"}, {"step": "run_handler", "key", "attempts"}, {"step":
# "mark_done", "key", "attempts"}, {"step": "commit"}, {"step": "rollback"}, {"step": "settle", "key", "attempts",
# "poison", "retry_at", "error"}; then "counts": {processed, retried, poisoned}. Backoff between failed attempts: the
# default (2, 5, 15, then 30-60 s), one jitter value drawn per delay from SplitMix64(seed); retry_at = ceil(now +
# delay). Default max_attempts 5.
SPEC_I = ("enterprise spec, Delivery contract (persist and return success; apply the current state idempotently; at"
          " least once), Limits (delivery attempt 10 seconds default), Client behaviour (backoff)")
inbox_tests = []


def inbox(comment, events, steps, counts, options=None, seed=5, error=None):
    case = {"comment": comment, "spec": SPEC_I, "input": {"options": options or {}, "seed": seed, "events": events}}
    if error:
        case["error"] = error
    else:
        case["expected"] = {"steps": steps, "counts": dict(zip(("processed", "retried", "poisoned"), counts))}
    inbox_tests.append(case)


def ientry(key="k1", attempts=1):
    return {"key": key, "delivery_id": "dlv_" + key, "event": "ddex.delivery.failed", "body": '{"event":"ddex.delivery.failed"}',
            "attempts": attempts}


CLAIM, BEGIN, COMMIT, ROLLBACK, DRAINED = ({"step": s} for s in ("claim", "begin", "commit", "rollback", "drained"))
TI = 1_800_000_000


def run_h(key="k1", attempts=1):
    return {"step": "run_handler", "key": key, "attempts": attempts}


def mark(key="k1", attempts=1):
    return {"step": "mark_done", "key": key, "attempts": attempts}


def settle(retry_at, error, key="k1", attempts=1, poison=False):
    return {"step": "settle", "key": key, "attempts": attempts, "poison": poison, "retry_at": retry_at, "error": error}


def claimed(e, now=TI):
    return {"claimed": e, "now": now}


inbox("one entry: claim, begin, handler, mark done, commit; then nothing due: idle for the poll interval",
      [claimed(ientry()), {"began": True}, {"handler": "ok"}, {"marked": True}, {"committed": True}, claimed(None)],
      [CLAIM, BEGIN, run_h(), mark(), COMMIT, CLAIM, {"step": "idle", "seconds": 1.0}], (1, 0, 0))
inbox("drain: the first empty claim ends the worker",
      [claimed(None)], [CLAIM, DRAINED], (0, 0, 0), options={"drain": True})
r = SplitMix(5)
d1 = backoff(1, r.next())
inbox("a failed handler: rolled back, then settled pending again after the first backoff (2 s)",
      [claimed(ientry()), {"began": True}, {"handler_failed": "upstream 503", "now": TI + 0.5}, {"rolled_back": True},
       {"settled": True}],
      [CLAIM, BEGIN, run_h(), ROLLBACK, settle(math.ceil(TI + 0.5 + d1), "upstream 503"), CLAIM], (0, 1, 0))
r = SplitMix(5)
d4 = backoff(4, r.next())
inbox("the fourth attempt failing waits 30-60 s with jitter from the seed",
      [claimed(ientry(attempts=4)), {"began": True}, {"handler_failed": "boom", "now": TI}, {"rolled_back": True}],
      [CLAIM, BEGIN, run_h(attempts=4), ROLLBACK, settle(math.ceil(TI + d4), "boom", attempts=4)], (0, 0, 0))
r = SplitMix(5)
d5 = backoff(5, r.next())
inbox("the last attempt (5 of 5) failing: set aside as poison",
      [claimed(ientry(attempts=5)), {"began": True}, {"handler_failed": "bad payload", "now": TI}, {"rolled_back": True},
       {"settled": True}],
      [CLAIM, BEGIN, run_h(attempts=5), ROLLBACK, settle(math.ceil(TI + d5), "bad payload", attempts=5, poison=True),
       CLAIM], (0, 0, 1))
inbox("an entry claimed for a 6th time (workers killed mid-handler 5 times): poison without running the handler",
      [claimed(ientry(attempts=6)), {"settled": True}],
      [CLAIM, settle(TI, "5 handler runs started and none finished (the worker was killed, or the handler outlived the"
                         " lease); set aside after the limit of 5", attempts=6, poison=True), CLAIM], (0, 0, 1))
inbox("max_attempts 2: the second failure is poison",
      [claimed(ientry(attempts=2)), {"began": True}, {"handler_failed": "x", "now": TI}, {"rolled_back": True}],
      [CLAIM, BEGIN, run_h(attempts=2), ROLLBACK, settle(math.ceil(TI + 5.0), "x", attempts=2, poison=True)], (0, 0, 0),
      options={"max_attempts": 2})
inbox("a mark that changes no row (another worker claimed it after the lease ran out): roll back, claim again",
      [claimed(ientry()), {"began": True}, {"handler": "ok"}, {"marked": False}, {"rolled_back": True}],
      [CLAIM, BEGIN, run_h(), mark(), ROLLBACK, CLAIM], (0, 0, 0))
r = SplitMix(5)
w1 = backoff(1, r.next())
inbox("the store fails at the commit: roll back, wait the backoff, claim again (the entry stays pending)",
      [claimed(ientry()), {"began": True}, {"handler": "ok"}, {"marked": True}, {"store_failed": True},
       {"rolled_back": True}, {"waited": True}],
      [CLAIM, BEGIN, run_h(), mark(), COMMIT, ROLLBACK, {"step": "idle", "seconds": w1}, CLAIM], (0, 0, 0))
r = SplitMix(5)
w1, w2 = backoff(1, r.next()), backoff(2, r.next())
inbox("the store unreachable at two claims in a row: waits 2 then 5 s",
      [{"store_failed": True}, {"waited": True}, {"store_failed": True}],
      [CLAIM, {"step": "idle", "seconds": w1}, CLAIM, {"step": "idle", "seconds": w2}], (0, 0, 0))
inbox("without a transaction (a Redis stream): claim, handler, mark (the ack); no begin or commit",
      [claimed(ientry()), {"handler": "ok"}, {"marked": True}],
      [CLAIM, run_h(), mark(), CLAIM], (1, 0, 0), options={"transactional": False})
inbox("without a transaction a failed handler settles at once (no rollback)",
      [claimed(ientry()), {"handler_failed": "e", "now": TI}, {"settled": True}],
      [CLAIM, run_h(), settle(TI + 2, "e"), CLAIM], (0, 1, 0), options={"transactional": False})
inbox("without a transaction a mark that changes nothing (the lease ran out, another worker claimed it): claim again, no rollback",
      [claimed(ientry()), {"handler": "ok"}, {"marked": False}],
      [CLAIM, run_h(), mark(), CLAIM], (0, 0, 0), options={"transactional": False})
inbox("without a transaction the store failing at the mark: wait the backoff (the entry is claimed again after its lease), no rollback",
      [claimed(ientry()), {"handler": "ok"}, {"store_failed": True}],
      [CLAIM, run_h(), mark(), {"step": "idle", "seconds": w1}], (0, 0, 0), options={"transactional": False})
inbox("a long error is cut to 1024 bytes on a character boundary",
      [claimed(ientry()), {"handler_failed": "é" * 600, "now": TI}],
      [CLAIM, run_h(), settle(TI + 2, "é" * 512)], (0, 0, 0), options={"transactional": False})
inbox("a handler result before any claim: invalid_argument", [{"handler": "ok"}], None, None, error="invalid_argument")
inbox("max_attempts 0: invalid_argument", [], None, None, options={"max_attempts": 0}, error="invalid_argument")
inbox("poll_seconds 0: invalid_argument", [], None, None, options={"poll_seconds": 0}, error="invalid_argument")

# Fleets (enterprise spec, Limits: per API client, organization and source address per rolling minute; the token
# exchange has "tighter credential and source limits"). A session transcript with "fleet" (a key prefix) is a
# Fleet(prefix).session(budget): a call reserves each request in Redis after taking its token — {"step": "reserve",
# "command": the EVAL's arguments after the script: number of keys, one key per window (<prefix>rate:<window>), the
# second, a member "<second>-<16 hex>" (the call's SplitMix64 fork), each window's limit and length} — answered by
# {"reserved": reply, "machine": m} ("ok", "wait <second> <window index>", or null) or {"reserve_failed": m}.
FLEET = "rk:t:"


def member(seed, forks=1):
    r = SplitMix(seed)
    for _ in range(forks - 1):
        r.fork()
    return r.fork()


def reserve(second, m, windows=(("api_client", 2, 60),)):
    c = [str(len(windows))] + [f"{FLEET}rate:{w[0]}" for w in windows] + [str(second), f"{second}-{m:016x}"]
    for w in windows:
        c += [str(w[1]), str(w[2])]
    return {"step": "reserve", "command": c}


def fleet_session(comment, script, steps, exchanges=0, budget=(("api_client", 2, 60),)):
    sessions.append({"comment": comment, "spec": SPEC_S,
                     "input": {"api": "enterprise", "tenant_id": TENANT, "budget": [list(w) for w in budget],
                               "fleet": FLEET, "start": T0, "machines": [countries()], "script": script},
                     "expected": {"steps": steps, "exchanges": exchanges}})


fleet_session("a fleet's call: the token first, then the request reserved in Redis, then sent in that second",
              [{"next": 0}, tok(), {"next": 0}, {"reserved": "ok", "machine": 0}, {"next": 0}, {"respond": 0, **OK},
               {"next": 0}],
              [at(0, REFRESH), at(0, reserve(T0, member(7))), at(0, send(*COUNTRIES)), at(0, done(200, "[]"))], 1)
fleet_session("the fleet's window is full: wait until the second it frees, then reserve again",
              [{"next": 0}, tok(), {"next": 0}, {"reserved": f"wait {T0 + 62} 1", "machine": 0}, {"next": 0},
               {"advance": 62}, {"next": 0}, {"reserved": "ok", "machine": 0}, {"next": 0}],
              [at(0, REFRESH), at(0, reserve(T0, member(7))), at(0, wait(62.0)), at(0, reserve(T0 + 62, member(7, 2))),
               at(0, send(*COUNTRIES))], 1)
fleet_session("a reservation is good for its second only: answered after the second turned, it is made again",
              [{"next": 0}, tok(), {"next": 0}, {"reserved": "ok", "machine": 0}, {"advance": 1.2}, {"next": 0}],
              [at(0, REFRESH), at(0, reserve(T0, member(7))), at(0, reserve(T0 + 1, member(7, 2)))], 1)
fleet_session("Redis unreachable for a reservation: wait a second, never send uncounted",
              [{"next": 0}, tok(), {"next": 0}, {"reserve_failed": 0}, {"next": 0}],
              [at(0, REFRESH), at(0, reserve(T0, member(7))), at(0, wait(1.0))], 1)
fleet_session("every window of the budget is reserved in one command",
              [{"next": 0}, tok(), {"next": 0}],
              [at(0, REFRESH), at(0, reserve(T0, member(7), (("api_client", 600, 60), ("organization", 1200, 60))))],
              1, budget=(("api_client", 600, 60), ("organization", 1200, 60)))

# FleetToken (one token exchange per fleet). A runner builds Fleet(prefix).session(), stores `held` in it when given
# (the token being replaced), builds FleetToken(session, api, tenant, seed, now), records `next()`, then for each
# event reports it and records `next()` again: {"reply": text or null} (replied), {"redis_failed": true},
# {"exchanged": value, "refresh_at": t or null}, {"exchange_failed": reason}, {"waited": true}, {"advance": s} (time
# only, nothing recorded). Steps: {"step": "command", "command": [...]} (a script's text as its name:
# RESERVE_SCRIPT, PUBLISH_SCRIPT, UNLOCK_SCRIPT), {"step": "exchange"}, {"step": "wait", "seconds"}, {"step":
# "done"}, {"step": "failed", "reason"}; then "has_token": whether the session holds a token. The owner is the seed
# as 16 hex digits; after the lock, the token is read once more; the lock's lease 330 s; a published record is JSON with sorted keys a (api), r (refresh_at), t
# (tenant), v (value), its TTL the milliseconds to refresh_at (at least 1000; 0: none).
fleet_tokens = []
OWNER = f"{42:016x}"
GET_T = {"step": "command", "command": ["GET", FLEET + "token"]}
LOCK = {"step": "command", "command": ["SET", FLEET + "exchange", OWNER, "NX", "PX", "330000"]}
FT_DONE = {"step": "done"}


def record(value, r, api="enterprise", tenant=None):
    return json.dumps({"a": api, "r": r, "t": tenant, "v": value}, separators=(",", ":"), sort_keys=True)


def publish(value, r, ttl, api="enterprise", tenant=None):
    return {"step": "command", "command": ["EVAL", "PUBLISH_SCRIPT", "2", FLEET + "token", FLEET + "exchange",
                                           record(value, r, api, tenant), OWNER, str(ttl)]}


def fleet_token(comment, events, steps, has_token, held=None, api="enterprise", tenant=None, error=None):
    case = {"comment": comment, "spec": SPEC_S,
            "input": {"prefix": FLEET, "api": api, "tenant_id": tenant, "seed": 42, "now": T0, "held": held,
                      "events": events}}
    if error:
        case["error"] = error
    else:
        case["expected"] = {"steps": steps, "has_token": has_token}
    fleet_tokens.append(case)


fleet_token("a token another process published is adopted: no exchange",
            [{"reply": record("et_9", T0 + 3000.0)}], [GET_T, FT_DONE], True)
fleet_token("nothing published: take the lock, look once more, exchange, publish the token with its time to live",
            [{"reply": None}, {"reply": "OK"}, {"reply": None}, {"exchanged": "et_1", "refresh_at": T0 + 3000.0},
             {"reply": "1"}],
            [GET_T, LOCK, GET_T, {"step": "exchange"}, publish("et_1", T0 + 3000.0, 3000000), FT_DONE], True)
fleet_token("a token published between the first look and the lock (its publisher released the lock): adopted, the"
            " lock released, no second exchange",
            [{"reply": None}, {"reply": "OK"}, {"reply": record("et_7", T0 + 3000.0)}, {"reply": "1"}],
            [GET_T, LOCK, GET_T, {"step": "command", "command": ["EVAL", "UNLOCK_SCRIPT", "1", FLEET + "exchange", OWNER]},
             FT_DONE], True)
fleet_token("another process holds the lock: wait, look again, adopt what it published",
            [{"reply": None}, {"reply": None}, {"advance": 0.1}, {"waited": True}, {"reply": record("et_5", T0 + 3000.0)}],
            [GET_T, LOCK, {"step": "wait", "seconds": 0.1}, GET_T, FT_DONE], True)
fleet_token("the published token is the one being replaced (refused with 401): not adopted; this process exchanges",
            [{"reply": record("et_5", T0 + 3000.0)}, {"reply": "OK"}, {"reply": record("et_5", T0 + 3000.0)}],
            [GET_T, LOCK, GET_T, {"step": "exchange"}], True, held="et_5")
fleet_token("a published token already due is not adopted",
            [{"reply": record("et_5", T0 - 1.0)}], [GET_T, LOCK], False)
fleet_token("a published record that is not one (garbage) is not adopted",
            [{"reply": "not json"}], [GET_T, LOCK], False)
fleet_token("the exchange fails: the lock released, then failed (the session's waiting calls fail)",
            [{"reply": None}, {"reply": "OK"}, {"reply": None}, {"exchange_failed": "401 invalid key"}, {"reply": "1"}],
            [GET_T, LOCK, GET_T, {"step": "exchange"},
             {"step": "command", "command": ["EVAL", "UNLOCK_SCRIPT", "1", FLEET + "exchange", OWNER]},
             {"step": "failed", "reason": "401 invalid key"}], False)
fleet_token("Redis unreachable: this process exchanges alone and keeps its token",
            [{"redis_failed": True}, {"exchanged": "et_1", "refresh_at": T0 + 3000.0}, {"redis_failed": True}],
            [GET_T, {"step": "exchange"}, publish("et_1", T0 + 3000.0, 3000000), FT_DONE], True)
fleet_token("a token without an expiry is published without a time to live",
            [{"reply": None}, {"reply": "OK"}, {"reply": None}, {"exchanged": "et_1", "refresh_at": None}, {"reply": "1"}],
            [GET_T, LOCK, GET_T, {"step": "exchange"}, publish("et_1", None, 0), FT_DONE], True)
fleet_token("a reporting token of another tenant is not adopted",
            [{"reply": record("rt_1", T0 + 3000.0, "reports", "another-tenant")}], [GET_T, LOCK], False,
            api="reports", tenant=TENANT)
fleet_token("a reporting token of this tenant is adopted",
            [{"reply": record("rt_1", T0 + 3000.0, "reports", TENANT)}], [GET_T, FT_DONE], True,
            api="reports", tenant=TENANT)
fleet_token("a wait reported while a command is pending: invalid_argument", [{"waited": True}], None, None,
            error="invalid_argument")

shape.write("machines.json", "Transcripts of the protocol machines: WebhookReceipt, Call, ExportJob, Session, Pages, Recovery, InboxWorker, FleetToken (see gen_machine_vectors.py)",
            "tests/vectors/gen_machine_vectors.py (stdlib only)", [
                shape.group("receipt", receipts, "WebhookReceiver(secrets, namespace).receive(headers, body, now), driven by `answers`"),
                shape.group("call", calls, "Call(operation, params, options) driven by `events` from `start`"),
                shape.group("export_job", jobs, "ExportJob(options) driven by `events` from `start`; `checkpoint`: the job gives one (ExportJob::checkpoint) before the step"),
                shape.group("session", sessions, "machines on one Session, driven by `script` from `start`"),
                shape.group("pages", pages_tests, "Pages(operation, query, options) driven by `pages`"),
                shape.group("inbox", inbox_tests, "InboxWorker(options, seed) driven by `events`"),
                shape.group("fleet_token", fleet_tokens,
                            "FleetToken(Fleet(prefix).session(), api, tenant, seed, now) driven by `events`"),
                shape.group("recovery", recovery_tests,
                            "Recovery(subscription, namespace, since, now, options) driven by `pages`, `states`, `replays`"),
            ])
print(len(receipts), len(calls), len(jobs), len(sessions), len(pages_tests), len(recovery_tests), len(inbox_tests), len(fleet_tokens))
