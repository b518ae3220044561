#!/usr/bin/env python3
"""Writes tests/vectors/webhook.json and tests/vectors/dedup.json.

Independent of royaltykit: expected signatures and keys are computed here with Python's
standard library only (hmac, hashlib, json, datetime), from the rules in
../shared/spec/enterprise-api.md and the key encoding documented in core/src/dedup/mod.rs.
Run `python3 tests/vectors/gen_vectors.py` after changing a case; the output is deterministic.
"""
import calendar
import datetime
import hashlib
import hmac
import json
import re
import os

from keys import content_key, delivery_key, event_key, idempotency_key, mac
import shape

HERE = os.path.dirname(os.path.abspath(__file__))
ID, TS, SIG = "Service-Webhook-Id", "Service-Webhook-Timestamp", "Service-Webhook-Signature"
NOW = 1_763_800_000
SECRET = "whsec_test_current_0123456789abcdefABCDEF"  # used as is: its UTF-8 bytes
PREVIOUS = "whsec_test_previous_fedcba9876543210"
OTHER = "not-the-right-secret"
REF = "7d3c1a52-0b4f-4a8e-9c61-2f5d8e4b9a10"


def v1(secret, ts, body):
    return "v1=" + mac(secret, ts, body).hex()


ISO8601 = re.compile(r"^(\d{4})(?:-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})|(\d{2})(\d{2})[Tt ](\d{2})(\d{2})(\d{2}))"
                     r"(?:[.,]\d+)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$")


def unix(text):
    """Unix seconds of an ISO 8601 timestamp in the forms a server may send for "an ISO 8601 UTC
    timestamp": extended or basic, T/t/space, a fraction after . or , (dropped), Z or an offset
    ±hh:mm, ±hhmm, ±hh; None for anything else (the payload keeps the text)."""
    if not isinstance(text, str):
        return None
    m = ISO8601.match(text)
    if not m:
        return None
    g = m.groups()
    year = int(g[0])
    mo, d, h, mi, sec = (g[1:6] if g[1] is not None else g[6:11])
    try:
        base = datetime.datetime(year, int(mo), int(d), int(h), int(mi), int(sec))
    except ValueError:
        return None
    offset = 0
    if g[11] is None:
        oh, om = int(g[13]), int(g[14] or 0)
        if oh > 23 or om > 59:
            return None
        offset = (oh * 3600 + om * 60) * (-1 if g[12] == "-" else 1)
    return calendar.timegm(base.timetuple()) - offset


def event(name="ddex.delivery.status_changed", occurred="2026-11-22T04:05:06Z", replay_of=None, extra=None):
    e = {
        "event": name,
        "resource": {"type": "ddex_message", "reference": REF, "url": "/api/v1/ddex/messages/" + REF},
        "occurred_at": occurred,
    }
    if replay_of is not None:
        e["replay_of"] = replay_of
    if extra:
        e.update(extra)
    return e


def body_of(e):
    return json.dumps(e, separators=(",", ":")).encode()


def body_field(b):
    try:
        return {"utf8": b.decode("utf-8")}
    except UnicodeDecodeError:
        return {"hex": b.hex()}


cases = []

# The status a receiver should answer for each verification error (docs/webhooks.md, "Error codes"): a
# forgery 401, a body over the limit 413, a receiver's own configuration 500, anything else
# about the request 400.
HTTP_STATUS = {"no_matching_signature": 401, "payload_too_large": 413, "invalid_secret": 500, "invalid_argument": 500}


def add(comment, flags, headers, body, secrets, now=NOW, error=None, expect=None, **opts):
    spec = opts.pop("spec", None)
    inp = {"headers": headers, "body": body_field(body), "secrets": secrets, "now": now}
    inp.update(opts)
    case = {"tcId": len(cases) + 1, "comment": comment, "flags": flags, "input": inp}
    if spec:
        case["spec"] = spec
    if error:
        case["result"] = "invalid"
        case["error"] = error
        case["http_status"] = HTTP_STATUS.get(error, 400)
    else:
        case["result"] = "valid"
        case["expected"] = expect
    cases.append(case)


def expected(did, ts, body, secrets, index, e):
    ev = {
        "name": e["event"],
        "resource_type": e["resource"]["type"],
        "resource_reference": e["resource"]["reference"],
        "resource_url": e["resource"]["url"],
        "occurred_at": unix(e.get("occurred_at")),
        "replay_of": e.get("replay_of"),
        "is_test": e["event"] == "enterprise.webhook.test",
    }
    return {"delivery_id": did, "timestamp": int(ts), "secret_index": index,
            "content_key": content_key(secrets[0], ts.strip(" \t"), body), "event": ev}


def genuine(comment, flags=None, e=None, did="dlv_0001", ts=str(NOW), secrets=None, sign_with=None,
            now=NOW, names=(ID, TS, SIG), extra_headers=(), index=0, sig=None, error=None, body=None, **opts):
    secrets = secrets or [SECRET]
    plain = [s["secret"] if isinstance(s, dict) else s for s in secrets]  # {secret, valid_until}: its string
    sign_with = sign_with or [plain[0]]
    e = e if e is not None else event()
    body = body if body is not None else body_of(e)
    signed_ts = ts.strip(" \t")
    sig = sig if sig is not None else ",".join(v1(s, signed_ts, body) for s in sign_with)
    headers = [[names[0], did], [names[1], ts], [names[2], sig]] + [list(h) for h in extra_headers]
    exp = None if error else expected(did, ts, body, plain, index, e)
    add(comment, flags or ["genuine"], headers, body, secrets, now=now, error=error, expect=exp, **opts)


# --- genuine deliveries in many shapes -------------------------------------------------------
genuine("genuine delivery, canonical header names")
for name in ["ddex.delivery.blocked", "ddex.delivery.acknowledged", "ddex.delivery.rejected",
             "ddex.delivery.failed", "ddex.import.completed", "ddex.import.failed",
             "ddex.connection.degraded"]:
    genuine("known event " + name, e=event(name))
genuine("test event is recognised", ["genuine", "test_event"], e=event("enterprise.webhook.test"))
genuine("unknown event name is kept, not rejected", ["genuine", "unknown_event"], e=event("ddex.catalog.reindexed"))
genuine("operator replay carries replay_of", ["genuine", "replay"], e=event(replay_of="dlv_0001"), did="dlv_0002")
genuine("replay_of null is absent", ["genuine"], e=event(extra={"replay_of": None}))
genuine("header names lower case", ["genuine", "header_case"], names=(ID.lower(), TS.lower(), SIG.lower()))
genuine("header names upper case", ["genuine", "header_case"], names=(ID.upper(), TS.upper(), SIG.upper()))
genuine("header names mixed case", ["genuine", "header_case"], names=("service-Webhook-ID", "SERVICE-webhook-timestamp", "Service-webhook-Signature"))
genuine("unrelated headers around", ["genuine"], extra_headers=[("Content-Type", "application/json"), ("User-Agent", "svc/1"), ("X-Forwarded-For", "203.0.113.9")])
body = body_of(event())
good = v1(SECRET, str(NOW), body)
genuine("unknown version v2 before a valid v1 is skipped", ["genuine", "unknown_version"], sig="v2=" + "ab" * 32 + "," + good)
genuine("unknown version v2 after a valid v1", ["genuine", "unknown_version"], sig=good + ",v2=zzz")
genuine("space after comma", ["genuine"], sig="v1=" + "00" * 32 + ", " + good)
genuine("trailing comma and empty entries", ["genuine"], sig="," + good + ",,")
genuine("malformed v1 beside a good one", ["genuine"], sig="v1=XYZ," + good)
genuine("uppercase v1 beside the lowercase one", ["genuine"], sig="v1=" + mac(SECRET, str(NOW), body).hex().upper() + "," + good)
genuine("timestamp with surrounding spaces (OWS trimmed, trimmed text is signed)", ["genuine"], ts=" %d\t" % NOW)
genuine("extra members and nesting in payload", ["genuine"], e=event(extra={"data": {"a": [1, 2, {"b": None}]}, "version": "v1"}))
genuine("occurred_at with an offset", ["genuine"], e=event(occurred="2026-11-22T06:05:06+02:00"))
genuine("occurred_at with fractional seconds", ["genuine"], e=event(occurred="2026-11-22T04:05:06.999Z"))
genuine("unicode secret (UTF-8 bytes)", ["genuine"], secrets=["sécret-ключ-🔑"])
genuine("secret with prefix used as is, not decoded", ["genuine"], secrets=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
genuine("non-ASCII body content", ["genuine"], e=event(extra={"note": "Größe ✓ 音楽"}))
# multi-valued headers
e0 = event(); b0 = body_of(e0)
add("signature split over two header lines, the match second", ["genuine", "multi_value"],
    [[ID, "dlv_0001"], [TS, str(NOW)], [SIG, "v1=" + "11" * 32], [SIG, v1(SECRET, str(NOW), b0)]],
    b0, [SECRET], expect=expected("dlv_0001", str(NOW), b0, [SECRET], 0, e0))
add("id header repeated with the same value", ["genuine", "multi_value"],
    [[ID, "dlv_0001"], [ID, "dlv_0001"], [TS, str(NOW)], [SIG, v1(SECRET, str(NOW), b0)]],
    b0, [SECRET], expect=expected("dlv_0001", str(NOW), b0, [SECRET], 0, e0))

# --- rotation ---------------------------------------------------------------------------------
genuine("rotation: both signatures, receiver has the new secret only", ["rotation"], sign_with=[SECRET, PREVIOUS])
genuine("rotation: both signatures, receiver has new and previous", ["rotation"], secrets=[SECRET, PREVIOUS], sign_with=[SECRET, PREVIOUS])
genuine("rotation: signed with previous only, receiver has both -> index 1", ["rotation"], secrets=[SECRET, PREVIOUS], sign_with=[PREVIOUS], index=1)
genuine("rotation: header order previous,new; receiver has new first", ["rotation"], secrets=[SECRET, PREVIOUS], sign_with=[PREVIOUS, SECRET])
genuine("rotation: receiver has only previous, delivery signed by both -> match", ["rotation"], secrets=[PREVIOUS], sign_with=[SECRET, PREVIOUS])
genuine("rotation complete: delivery signed with previous only, receiver has new only", ["rotation"], secrets=[SECRET], sign_with=[PREVIOUS], error="no_matching_signature")
# A secret with its end of validity ({secret, valid_until}): the enterprise spec, States: rotate-secret ->
# "for five minutes deliveries carry signatures by both; afterwards only the new one"; rotation returns
# previous_secret_valid_until. Valid while now <= valid_until; after it the secret never verifies.
UNTIL = NOW + 300
ROT = "enterprise spec, States and transitions: webhook signing secret, rotate-secret: \"afterwards only the new one\"; Webhook subscription: previous_secret_valid_until"
prev_until = {"secret": PREVIOUS, "valid_until": UNTIL}
genuine("rotation overlap: signed with previous only, previous valid until later -> index 1", ["rotation", "valid_until"],
        secrets=[SECRET, prev_until], sign_with=[PREVIOUS], index=1, spec=ROT)
genuine("rotation overlap: valid_until is inclusive (now == valid_until)", ["rotation", "valid_until"],
        secrets=[SECRET, prev_until], sign_with=[PREVIOUS], index=1, now=UNTIL, ts=str(UNTIL), spec=ROT)
genuine("rotation over: signed with previous only, one second past its valid_until -> refused", ["rotation", "valid_until"],
        secrets=[SECRET, prev_until], sign_with=[PREVIOUS], now=UNTIL + 1, ts=str(UNTIL + 1), error="no_matching_signature", spec=ROT)
genuine("rotation over: signed with both, previous expired -> the new one matches (index 0)", ["rotation", "valid_until"],
        secrets=[SECRET, prev_until], sign_with=[SECRET, PREVIOUS], now=UNTIL + 1, ts=str(UNTIL + 1), spec=ROT)
genuine("a leaked secret rotated out long ago never verifies, even with a timestamp inside the tolerance", ["rotation", "valid_until"],
        secrets=[SECRET, {"secret": PREVIOUS, "valid_until": NOW - 86_400}], sign_with=[PREVIOUS], error="no_matching_signature", spec=ROT)
genuine("the only secret expired: refused (nothing in force)", ["rotation", "valid_until"],
        secrets=[{"secret": SECRET, "valid_until": NOW - 1}], error="no_matching_signature", spec=ROT)
genuine("a current secret with a later valid_until verifies as a plain one", ["rotation", "valid_until"],
        secrets=[{"secret": SECRET, "valid_until": NOW + 10}], spec=ROT)

# --- tolerance boundaries ---------------------------------------------------------------------
genuine("now = timestamp + 300 (inside)", ["tolerance"], now=NOW + 300)
genuine("now = timestamp - 300 (inside)", ["tolerance"], now=NOW - 300)
genuine("now = timestamp + 301", ["tolerance"], now=NOW + 301, error="timestamp_too_old")
genuine("now = timestamp - 301", ["tolerance"], now=NOW - 301, error="timestamp_too_new")
genuine("tolerance 10, +10 inside", ["tolerance"], now=NOW + 10, tolerance=10)
genuine("tolerance 10, +11 too old", ["tolerance"], now=NOW + 11, tolerance=10, error="timestamp_too_old")
genuine("tolerance 0, exact", ["tolerance"], tolerance=0)
genuine("tolerance 0, one second later", ["tolerance"], now=NOW + 1, tolerance=0, error="timestamp_too_old")
genuine("timestamp in milliseconds, correctly signed -> too new", ["tolerance"], ts=str(NOW * 1000), error="timestamp_too_new")
genuine("genuine but a day late", ["tolerance"], now=NOW + 86400, error="timestamp_too_old")
genuine("genuine, stale, and an invalid payload: the timestamp is reported first", ["order"], body=b"not json", now=NOW + 1000, error="timestamp_too_old")

# --- sizes --------------------------------------------------------------------------------------
big = event(extra={"padding": "x" * (200 * 1024)})
genuine("200 KiB body", ["genuine", "large"], e=big)
base_len = len(body_of(event(extra={"padding": ""})))
exact = event(extra={"padding": "y" * (262144 - base_len)})
assert len(body_of(exact)) == 262144
genuine("body of exactly 256 KiB (the default limit)", ["genuine", "large"], e=exact)
over = event(extra={"padding": "y" * (262145 - base_len)})
genuine("body of 256 KiB + 1 byte", ["size"], e=over, error="payload_too_large")
genuine("custom max_body_bytes 100 with a larger body", ["size"], max_body_bytes=100, error="payload_too_large")

# --- payloads ---------------------------------------------------------------------------------
genuine("non-UTF-8 body, genuine signature", ["payload", "non_utf8"], body=b"\xff\xfe{\"event\":\x80}", error="invalid_payload")
genuine("non-JSON body, genuine signature", ["payload"], body=b"hello", error="invalid_payload")
genuine("empty body, genuine signature", ["payload"], body=b"", error="invalid_payload")
genuine("JSON array body", ["payload"], body=b"[1,2]", error="invalid_payload")
genuine("truncated JSON", ["payload"], body=body_of(event())[:-5], error="invalid_payload")
genuine("missing event member", ["payload"], body=json.dumps({"resource": event()["resource"], "occurred_at": "2026-11-22T04:05:06Z"}).encode(), error="invalid_payload")
genuine("missing resource", ["payload"], body=json.dumps({"event": "ddex.delivery.failed", "occurred_at": "2026-11-22T04:05:06Z"}).encode(), error="invalid_payload")
genuine("resource without url", ["payload"], body=json.dumps({"event": "x", "resource": {"type": "t", "reference": REF}, "occurred_at": "2026-11-22T04:05:06Z"}).encode(), error="invalid_payload")
genuine("event is a number", ["payload"], body=json.dumps(dict(event(), event=5)).encode(), error="invalid_payload")
# enterprise spec, Events: "occurred_at | string, ISO 8601 UTC timestamp". A genuine delivery is never
# refused for the form of its timestamp (a 400 on every attempt would lose the event): the forms a server
# may send are read, anything else is kept as text with occurred_at null.
OCC = "enterprise spec, Events, Payload: occurred_at | string, ISO 8601 UTC timestamp"
for form in ["2026-11-22T04:00:00+0000", "2026-11-22T04:00:00+00:00", "2026-11-22T04:00:00-00:00", "2026-11-22T04:00:00+00",
             "20261122T040000Z", "20261122T040000+0000", "20261122T040000.250Z", "2026-11-22T04:00:00,5Z", "2026-11-22 04:00:00Z",
             "2026-11-22t04:00:00z", "2026-11-22T06:00:00+0200", "2026-11-22T04:00:00.123456789Z"]:
    assert unix(form) == 1795320000, form  # 2026-11-22T04:00:00Z
    genuine(f"occurred_at {form}: read as 2026-11-22T04:00:00Z", ["payload", "occurred_at"], e=event(occurred=form), spec=OCC)
for garbage in ["22/11/2026 04:05", "yesterday", "2026-11-22", "2026-02-30T04:00:00Z", "2026-11-22T04:00:00+2400", "1763784000"]:
    assert unix(garbage) is None, garbage
    genuine(f"occurred_at {garbage!r} cannot be read: kept as text, occurred_at null, the delivery verifies",
            ["payload", "occurred_at"], e=event(occurred=garbage), spec=OCC)
for odd in [1763784000, None, ""]:
    genuine(f"occurred_at {json.dumps(odd)} (not a timestamp string): kept as unknown, occurred_at null, the delivery verifies",
            ["payload", "occurred_at"], e=event(occurred=odd), spec=OCC)
genuine("occurred_at absent: kept as unknown, the delivery verifies", ["payload", "occurred_at"],
        e={k: v for k, v in event().items() if k != "occurred_at"}, spec=OCC)
genuine("non-UTF-8 body signed as bytes (hash over raw bytes, not text)", ["payload", "non_utf8"], body=bytes(range(256)), error="invalid_payload")

# --- missing and malformed headers ------------------------------------------------------------
add("no headers at all", ["missing"], [], b0, [SECRET], error="missing_header")
add("missing Service-Webhook-Id", ["missing"], [[TS, str(NOW)], [SIG, good]], b0, [SECRET], error="missing_header")
add("missing Service-Webhook-Timestamp", ["missing"], [[ID, "d"], [SIG, good]], b0, [SECRET], error="missing_header")
add("missing Service-Webhook-Signature", ["missing"], [[ID, "d"], [TS, str(NOW)]], b0, [SECRET], error="missing_header")
add("empty id value", ["missing"], [[ID, ""], [TS, str(NOW)], [SIG, good]], b0, [SECRET], error="missing_header")
add("whitespace-only signature value", ["missing"], [[ID, "d"], [TS, str(NOW)], [SIG, "  "]], b0, [SECRET], error="missing_header")
add("missing header and no secrets: header reported first", ["order"], [[TS, str(NOW)]], b0, [], error="missing_header")
add("conflicting id values", ["header"], [[ID, "a"], [ID, "b"], [TS, str(NOW)], [SIG, good]], b0, [SECRET], error="invalid_header")
add("id longer than 256 bytes", ["header"], [[ID, "i" * 257], [TS, str(NOW)], [SIG, good]], b0, [SECRET], error="invalid_header")
add("id with a control character", ["header"], [[ID, "a\nb"], [TS, str(NOW)], [SIG, good]], b0, [SECRET], error="invalid_header")

# --- secrets ------------------------------------------------------------------------------------
add("no secrets", ["secret"], [[ID, "d"], [TS, str(NOW)], [SIG, good]], b0, [], error="invalid_secret")
add("empty secret", ["secret"], [[ID, "d"], [TS, str(NOW)], [SIG, good]], b0, [""], error="invalid_secret")
add("empty previous secret", ["secret"], [[ID, "d"], [TS, str(NOW)], [SIG, good]], b0, [SECRET, ""], error="invalid_secret")
add("nine secrets", ["secret"], [[ID, "d"], [TS, str(NOW)], [SIG, good]], b0, [SECRET] * 9, error="invalid_secret")
add("secret over 1024 bytes", ["secret"], [[ID, "d"], [TS, str(NOW)], [SIG, good]], b0, ["s" * 1025], error="invalid_secret")
add("bad secret and oversized body: secret reported first", ["order"], [[ID, "d"], [TS, str(NOW)], [SIG, good]], b0, [""], error="invalid_secret", max_body_bytes=1)

# --- timestamps ---------------------------------------------------------------------------------
def with_ts(comment, ts_value, error, flags=("timestamp",)):
    add(comment, list(flags), [[ID, "d"], [TS, ts_value], [SIG, good]], b0, [SECRET], error=error)

add("oversized body and bad timestamp: size reported first", ["order"], [[ID, "d"], [TS, "abc"], [SIG, good]], b0, [SECRET], error="payload_too_large", max_body_bytes=10)
with_ts("timestamp not a number", "abc", "invalid_timestamp")
with_ts("negative timestamp", "-5", "invalid_timestamp")
with_ts("fractional timestamp", "%d.5" % NOW, "invalid_timestamp")
with_ts("timestamp with plus sign", "+%d" % NOW, "invalid_timestamp")
with_ts("timestamp of 16 digits", "1" * 16, "invalid_timestamp")
with_ts("timestamp as HTTP date", "Sat, 22 Nov 2026 04:05:06 GMT", "invalid_timestamp")
with_ts("timestamp with inner space", "1763 800000", "invalid_timestamp")
add("conflicting timestamp values", ["timestamp"], [[ID, "d"], [TS, str(NOW)], [TS, str(NOW + 1)], [SIG, good]], b0, [SECRET], error="invalid_timestamp")
add("bad timestamp and bad signature header: timestamp reported first", ["order"], [[ID, "d"], [TS, "x"], [SIG, "garbage"]], b0, [SECRET], error="invalid_timestamp")

# --- signature header -------------------------------------------------------------------------
def with_sig(comment, sig_value, error="invalid_signature_header", flags=("signature_header",)):
    add(comment, list(flags), [[ID, "d"], [TS, str(NOW)], [SIG, sig_value]], b0, [SECRET], error=error)

with_sig("empty v1 value", "v1=")
with_sig("only an unknown version", "v2=" + mac(SECRET, str(NOW), b0).hex())
with_sig("garbage without =", "abc")
with_sig("uppercase hex only (the expected value is lowercase)", "v1=" + mac(SECRET, str(NOW), b0).hex().upper())
with_sig("63 hex characters", "v1=" + mac(SECRET, str(NOW), b0).hex()[:63])
with_sig("65 hex characters", "v1=" + mac(SECRET, str(NOW), b0).hex() + "0")
with_sig("base64 instead of hex", "v1=" + __import__("base64").b64encode(mac(SECRET, str(NOW), b0)).decode())
with_sig("17 entries", ",".join(["v1=" + "00" * 32] * 16 + [good]))
with_sig("header over 4096 bytes", "v9=" + "a" * 4100 + "," + good)
with_sig("V1 in upper case is another version", "V1=" + mac(SECRET, str(NOW), b0).hex())

# --- forgeries ----------------------------------------------------------------------------------
with_sig("tampered body", v1(SECRET, str(NOW), b0 + b" "), "no_matching_signature", ("forgery",))
with_sig("wrong secret", v1(OTHER, str(NOW), b0), "no_matching_signature", ("forgery",))
with_sig("signature over another timestamp", v1(SECRET, str(NOW - 1), b0), "no_matching_signature", ("forgery",))
with_sig("HMAC of the body alone (no timestamp)", "v1=" + hmac.new(SECRET.encode(), b0, hashlib.sha256).hexdigest(), "no_matching_signature", ("forgery",))
with_sig("HMAC with timestamp and body joined without a dot", "v1=" + hmac.new(SECRET.encode(), str(NOW).encode() + b0, hashlib.sha256).hexdigest(), "no_matching_signature", ("forgery",))
with_sig("SHA-256 of the content without a key", "v1=" + hashlib.sha256(str(NOW).encode() + b"." + b0).hexdigest(), "no_matching_signature", ("forgery",))
add("forged and stale: a forgery reports no_matching_signature, not a timestamp error", ["order", "forgery"],
    [[ID, "d"], [TS, str(NOW - 5000)], [SIG, good]], b0, [SECRET], error="no_matching_signature")
add("genuine content re-signed timestamp moved forward by the attacker", ["forgery"],
    [[ID, "d"], [TS, str(NOW + 10)], [SIG, good]], b0, [SECRET], error="no_matching_signature")
add("all-zero signature", ["forgery"], [[ID, "d"], [TS, str(NOW)], [SIG, "v1=" + "0" * 64]], b0, [SECRET], error="no_matching_signature")

webhook = {
    "description": "Webhook verification vectors for royaltykit. Expected values computed by gen_vectors.py with Python's hmac/hashlib, never by royaltykit.",
    "generator": "tests/vectors/gen_vectors.py",
    "defaults": {"tolerance": 300, "max_body_bytes": 262144},
    "input_shape": "headers: list of [name, value] pairs (a name may repeat); body: {utf8} or {hex}; secrets: list of strings or {secret, valid_until} (valid_until: the last Unix second it verifies); now: Unix seconds; optional tolerance, max_body_bytes",
    "numberOfTests": len(cases),
    "cases": cases,
}

# === dedup ============================================================================================
dedup = {"description": "Dedup and idempotency key vectors; expected keys computed by gen_vectors.py with hashlib.",
         "generator": "tests/vectors/gen_vectors.py",
         "delivery_key": [], "event_key": [], "content_key": [], "idempotency_key": [], "window": []}

def dk(comment, ns, did, error=None):
    c = {"tcId": len(dedup["delivery_key"]) + 1, "comment": comment, "input": {"namespace": ns, "delivery_id": did}}
    if error:
        c["error"] = error
    else:
        c["expected"] = delivery_key(ns, did)
    dedup["delivery_key"].append(c)

dk("plain", "org-1/sub-9", "dlv_0001")
dk("same id, other tenant: different key", "org-2/sub-9", "dlv_0001")
dk("a replay has a new delivery id: new key", "org-1/sub-9", "dlv_0002")
dk("length prefix: ('ab','c') differs from ('a','bc')", "ab", "c")
dk("length prefix: ('a','bc')", "a", "bc")
dk("unicode namespace", "tenant-ü/日本", "dlv_0001")
dk("empty namespace", "", "dlv_0001", "invalid_argument")
dk("empty delivery id", "org-1", "", "invalid_argument")

def ek(comment, ns, parts, error=None):
    c = {"tcId": len(dedup["event_key"]) + 1, "comment": comment,
         "input": {"namespace": ns, "name": parts[0], "resource_type": parts[1], "resource_reference": parts[2], "occurred_at": parts[3]}}
    if error:
        c["error"] = error
    else:
        c["expected"] = event_key(ns, *parts)
    dedup["event_key"].append(c)

P = ["ddex.delivery.failed", "ddex_message", REF, "2026-11-22T04:05:06Z"]
ek("original delivery", "org-1", P)
ek("its replay has the same identity and key", "org-1", list(P))
ek("other occurred_at", "org-1", P[:3] + ["2026-11-22T04:05:07Z"])
ek("other event name", "org-1", ["ddex.delivery.acknowledged"] + P[1:])
ek("other namespace", "org-2", P)
ek("fields shifted: no ambiguity", "org-1", ["ddex.delivery.faile", "dddex_message", REF, "2026-11-22T04:05:06Z"])
ek("empty namespace", "", P, "invalid_argument")

def ck(comment, secret, ts, body, error=None):
    c = {"tcId": len(dedup["content_key"]) + 1, "comment": comment, "input": {"secret": secret, "timestamp": ts, "body": body_field(body)}}
    if error:
        c["error"] = error
    else:
        c["expected"] = content_key(secret, ts, body)
    dedup["content_key"].append(c)

ck("the content key a verification of webhook case 1 returns", SECRET, str(NOW), body_of(event()))
ck("other timestamp", SECRET, str(NOW + 1), body_of(event()))
ck("other body", SECRET, str(NOW), body_of(event("ddex.delivery.failed")))
ck("non-UTF-8 body", SECRET, str(NOW), b"\xff\x00\xfe")
ck("empty secret", "", str(NOW), b"{}", "invalid_secret")

def ik(comment, ns, op, request_id, error=None):
    c = {"tcId": len(dedup["idempotency_key"]) + 1, "comment": comment, "input": {"namespace": ns, "operation_id": op, "request_id": request_id}}
    if error:
        c["error"] = error
    else:
        c["expected"] = idempotency_key(ns, op, request_id)
    dedup["idempotency_key"].append(c)


# One key per logical request (DESIGN §2): the caller's request id, never the body, so a retry
# recomputes the same key and two deliberately identical requests never share one.
T = "0f8fad5b-d9cb-469f-a165-70867728950e"
ik("a request id", T, "createPlatformExport", "job-42/export-1")
ik("its retry: the same key", T, "createPlatformExport", "job-42/export-1")
ik("a second, identical export: another request id, another key", T, "createPlatformExport", "job-42/export-2")
ik("pause, re-activate, pause again: the third request has its own id", "org-7", "updateEnterpriseWebhook", "pause-2")
ik("other operation", T, "cancelPlatformExport", "job-42/export-1")
ik("other tenant", "1b4e28ba-2fa1-11d2-883f-0016d3cca427", "createPlatformExport", "job-42/export-1")
ik("length prefix: ('ab','c') differs from ('a','bc')", "ab", "c", "r")
ik("length prefix: ('a','bc')", "a", "bc", "r")
ik("unicode request id", T, "op", "音楽/Größe")
ik("empty namespace", "", "op", "r", "invalid_argument")
ik("empty operation", T, "", "r", "invalid_argument")
ik("empty request id", T, "op", "", "invalid_argument")

def win(comment, capacity, ttl, ops, error=None):
    c = {"tcId": len(dedup["window"]) + 1, "comment": comment, "capacity": capacity, "ttl_seconds": ttl,
         "ops": [{"key": k, "now": n, "expected": e} for (k, n, e) in ops]}
    if error:
        c["error"] = error
    dedup["window"].append(c)

win("first seen, duplicate, other key", 10, 60, [("a", 1000, True), ("a", 1001, False), ("b", 1001, True), ("b", 1002, False)])
win("expires exactly ttl seconds after insertion", 10, 60, [("a", 1000, True), ("a", 1059, False), ("a", 1060, True), ("a", 1119, False)])
win("capacity evicts the oldest", 2, 3600, [("a", 1, True), ("b", 2, True), ("c", 3, True), ("b", 4, False), ("a", 5, True), ("c", 6, False), ("b", 7, True)])
win("capacity 1", 1, 3600, [("a", 1, True), ("a", 2, False), ("b", 3, True), ("a", 4, True)])
win("a duplicate does not extend the window", 10, 10, [("a", 0, True), ("a", 9, False), ("a", 10, True)])
win("clock going backwards", 4, 10, [("a", 100, True), ("b", 50, True), ("b", 70, True), ("b", 71, False), ("a", 101, False)])
win("zero capacity", 0, 10, [], "invalid_argument")
win("zero ttl", 10, 0, [], "invalid_argument")

# --- two-phase dedup (DESIGN §2; enterprise API: the service redelivers until it gets a 2xx) ----------
# A reference model, independent of royaltykit: key -> (done, expires_at); live while now < expires_at.
RETRY_DELAYS = [30, 120, 600, 1800, 3600, 7200, 21600]  # enterprise Limits: retry delays after the initial attempt
ATTEMPT_LIMIT = 10  # enterprise Limits: delivery attempt 10 seconds default
TOLERANCE = 300  # DESIGN §1: default tolerance
DEFAULT_TTL = sum(RETRY_DELAYS) + ATTEMPT_LIMIT + TOLERANCE  # the whole redelivery schedule plus the tolerance
DEFAULT_LEASE = 60


def run_claims(ttl, lease, ops):
    seen, out = {}, []
    for op, key, now in ops:
        done, exp = seen.get(key, (False, None))
        live = exp is not None and now < exp
        if op == "claim":
            if live:
                out.append("done" if done else "in_progress")
            else:
                seen[key] = (False, now + lease)
                out.append("new")
        elif op == "commit":
            seen[key] = (True, now + ttl)
            out.append(None)
        elif op == "release":
            ok = live and not done
            if ok:
                del seen[key]
            out.append(ok)
    return out


claims = []


def cl(comment, ops, ttl=None, lease=None, error=None, capacity=100):
    inp = {"capacity": capacity, "ops": [{"op": o, "key": k, "now": n} for o, k, n in ops]}
    if ttl is not None:
        inp["ttl_seconds"] = ttl
    if lease is not None:
        inp["lease_seconds"] = lease
    c = {"comment": comment, "input": inp}
    if error:
        c["error"] = error
    else:
        c["expected"] = run_claims(ttl or DEFAULT_TTL, lease or DEFAULT_LEASE, ops)
    claims.append(c)


T0 = 1_795_000_000
cl("processing fails (DB down): released, the service's redelivery 30 s later is processed, then it is done",
   [("claim", "k", T0), ("release", "k", T0 + 5), ("claim", "k", T0 + 30), ("commit", "k", T0 + 31), ("claim", "k", T0 + 150)])
cl("a redelivery while the first is still processing is in progress (answer 503), then done",
   [("claim", "k", T0), ("claim", "k", T0 + 1), ("commit", "k", T0 + 2), ("claim", "k", T0 + 3)])
cl("a crashed worker's claim runs out after the lease", [("claim", "k", T0), ("claim", "k", T0 + 59), ("claim", "k", T0 + 60)], lease=60, ttl=3600)
cl("default TTL: the last redelivery (9 h 42 min after the first attempt) is still a duplicate",
   [("claim", "k", T0), ("commit", "k", T0), ("claim", "k", T0 + sum(RETRY_DELAYS)), ("claim", "k", T0 + 6 * 3600),
    ("claim", "k", T0 + DEFAULT_TTL - 1), ("claim", "k", T0 + DEFAULT_TTL)])
cl("releasing a done key changes nothing", [("claim", "k", T0), ("commit", "k", T0), ("release", "k", T0 + 1), ("claim", "k", T0 + 2)])
cl("releasing an unknown key or a claim whose lease ran out is false",
   [("release", "x", T0), ("claim", "k", T0), ("release", "k", T0 + 60), ("claim", "k", T0 + 61)], lease=60, ttl=3600)
cl("a commit without a claim is remembered", [("commit", "k", T0), ("claim", "k", T0 + 1)])
cl("keys are independent", [("claim", "a", T0), ("claim", "b", T0), ("commit", "a", T0 + 1), ("claim", "a", T0 + 2), ("claim", "b", T0 + 2)])
cl("a lease of 0 is refused", [], lease=0, ttl=3600, error="invalid_argument")
cl("a lease longer than the TTL is refused", [], lease=61, ttl=60, error="invalid_argument")

# enterprise spec, consumer workflow: "fetch the canonical resource URL with a bearer token" — only a path under the
# enterprise API (/api/v1/…), so the token never goes to another origin: no scheme, no authority, no query or
# fragment, no dot segment (percent-encoded too), no backslash or encoded slash, no space or control character.
RP_SPEC = "enterprise spec, Events (resource.url: canonical API path) and consumer workflow (fetch it with a bearer token)"
paths = []


def rp(comment, url, ok=True):
    c = {"comment": comment, "spec": RP_SPEC, "input": {"resource_url": url}}
    if ok:
        c["expected"] = {"path": url}
    else:
        c["error"] = "invalid_resource_url"
    paths.append(c)


rp("a canonical path under /api/v1/", "/api/v1/ddex/messages/" + REF)
rp("a trailing slash is still a path", "/api/v1/releases/" + REF + "/")
rp("percent-encoded characters that are not dots or slashes", "/api/v1/releases/a%20b")
for bad, why in [("https://evil.example/steal", "an absolute URL to another origin"),
                 ("//evil.example/x", "a scheme-relative URL (another authority)"),
                 ("https://api.example.com/api/v1/releases/1", "an absolute URL, even to a plausible host"),
                 ("/api/v1/../v2/secrets", "a dot segment"), ("/api/v1/releases/./1", "a single-dot segment"),
                 ("/api/v1/%2e%2e/admin", "a percent-encoded dot segment"), ("/api/v1/.%2E/admin", "a mixed dot segment"),
                 ("/api/v1/releases%2f..%2fadmin", "an encoded slash"), ("/api/v1/releases\\1", "a backslash"),
                 ("/api/v1/releases?token=1", "a query"), ("/api/v1/releases#x", "a fragment"),
                 ("/api/v1/rel eases", "a space"), ("/api/v1/releases\n1", "a control character"),
                 ("/api/v2/releases/1", "another API version"), ("/platform/v1/exports", "another surface"),
                 ("api/v1/releases/1", "a relative path"), ("/api/v1/", "the prefix alone"),
                 ("/api/v1//evil.example", "an empty segment"), ("/api/v1/" + "a" * 2048, "longer than 2048 bytes")]:
    rp(f"{why} is refused", bad, ok=False)

# DESIGN §1, secret rotation: the secrets in force at now, each carrying its expiry (the previous secret keeps
# previous_secret_valid_until), so a verifier built from them never accepts the old secret after it.
ROT_SPEC = "enterprise spec, Webhooks (rotate-secret: new secret and previous_secret_valid_until; both sign for 5 minutes)"
rotations = []


def rot(comment, previous, until, now, expected=None, error=None):
    c = {"comment": comment, "spec": ROT_SPEC,
         "input": {"current": "whsec_new", "previous": previous, "previous_valid_until": until, "now": now}}
    if error:
        c["error"] = error
    else:
        c["expected"] = expected
    rotations.append(c)


NEW = {"secret": "whsec_new", "valid_until": None}
rot("no rotation: the current secret, no expiry", None, None, NOW, [NEW])
rot("during the overlap: both, the previous one with its valid_until", "whsec_old", NOW + 300, NOW,
    [NEW, {"secret": "whsec_old", "valid_until": NOW + 300}])
rot("at valid_until exactly: both (inclusive)", "whsec_old", NOW, NOW, [NEW, {"secret": "whsec_old", "valid_until": NOW}])
rot("after valid_until: the current one only", "whsec_old", NOW - 1, NOW, [NEW])
rot("a previous secret without its valid_until is refused", "whsec_old", None, NOW, error="invalid_argument")
rot("a valid_until without the previous secret is refused", None, NOW, NOW, error="invalid_argument")

# enterprise spec, Endpoints: POST /api/v1/webhooks returns the subscription, "the signing secret is returned once";
# rotate-secret returns "new secret (once) and previous_secret_valid_until". The member carrying the secret is not
# shown: secret, signing_secret, webhook_secret, new_secret or signingSecret, at the top or under data, subscription
# or webhook. `record` is the response without its secret members; `secrets` is what a receiver verifies with,
# given the secret held before (`previous`).
RS_SPEC = ("enterprise spec, Endpoints (webhook create: the signing secret is returned once; rotate-secret: new secret"
           " (once) and previous_secret_valid_until) and Webhook delivery (the member carrying the secret: not shown)")
revealed = []


def rs(comment, body, expected=None, previous=None, error=None):
    c = {"comment": comment, "spec": RS_SPEC,
         "input": {"body": body if isinstance(body, str) else json.dumps(body), "previous": previous}}
    if error:
        c["error"] = error
    else:
        c["expected"] = expected
    revealed.append(c)


rs("a create: the secret under data, the rest kept in the record",
   {"data": {"reference": "wh_1", "name": "ops", "secret": "whsec_created_1", "active": True, "events": ["ddex.delivery.failed"]}},
   {"secrets": [{"secret": "whsec_created_1", "valid_until": None}], "previous_valid_until": None, "reference": "wh_1",
    "record": {"data": {"reference": "wh_1", "name": "ops", "active": True, "events": ["ddex.delivery.failed"]}}})
rs("a rotation (RFC 3339 valid_until): the new secret, then the previous one until then",
   {"data": {"reference": "wh_1", "new_secret": "whsec_new_2", "previous_secret_valid_until": "2026-11-27T10:05:00Z"}},
   {"secrets": [{"secret": "whsec_new_2", "valid_until": None}, {"secret": "whsec_old_1", "valid_until": 1795773900}],
    "previous_valid_until": 1795773900, "reference": "wh_1",
    "record": {"data": {"reference": "wh_1", "previous_secret_valid_until": "2026-11-27T10:05:00Z"}}},
   previous="whsec_old_1")
rs("a rotation at the top level, valid_until in Unix seconds, no previous secret held: the new one alone",
   {"signing_secret": "whsec_new_3", "previous_secret_valid_until": 1795773900},
   {"secrets": [{"secret": "whsec_new_3", "valid_until": None}], "previous_valid_until": 1795773900, "reference": None,
    "record": {"previous_secret_valid_until": 1795773900}})
rs("camelCase members under webhook", {"webhook": {"signingSecret": "whsec_camel", "previousSecretValidUntil": "2026-11-27T10:05:00+00:00"}},
   {"secrets": [{"secret": "whsec_camel", "valid_until": None}, {"secret": "whsec_old_1", "valid_until": 1795773900}],
    "previous_valid_until": 1795773900, "record": {"webhook": {"previousSecretValidUntil": "2026-11-27T10:05:00+00:00"}}},
   previous="whsec_old_1")
rs("two secret members: both removed from the record, the first read", {"secret": "whsec_a", "webhook_secret": "whsec_b"},
   {"secrets": [{"secret": "whsec_a", "valid_until": None}], "record": {}})
rs("no secret member: secret_not_revealed (never echoing the body)", {"data": {"reference": "wh_1", "active": True}},
   error="secret_not_revealed")
rs("an empty secret: secret_not_revealed", {"secret": ""}, error="secret_not_revealed")
rs("a secret that is not a string: secret_not_revealed", {"secret": 12345}, error="secret_not_revealed")
rs("not a JSON object: secret_not_revealed", "[\"whsec_in_array\"]", error="secret_not_revealed")
rs("not JSON: secret_not_revealed", "secret=whsec_form", error="secret_not_revealed")
rs("previous_secret_valid_until that is not a time: secret_not_revealed", {"secret": "whsec_x", "previous_secret_valid_until": "soon"},
   error="secret_not_revealed")

# Routing a delivery by its event name (enterprise spec, Events: the names listed; unknown names are kept, never
# refused): the handlers registered for the name in order, then every on_any handler, then the fallback only when no
# handler names the event. A delivery no handler takes is acknowledged.
RT_SPEC = "enterprise spec, Events (event names; unknown names kept) and Delivery contract (any 2xx acknowledges)"
routes = []


def route(comment, registrations, event, expected=None, error=None):
    c = {"comment": comment, "spec": RT_SPEC, "input": {"registrations": registrations, "event": event}}
    if error:
        c["error"] = error
    else:
        c["expected"] = expected
    routes.append(c)


ON = lambda n: {"on": n}  # noqa: E731
route("one handler for the name", [ON("ddex.delivery.failed")], "ddex.delivery.failed",
      {"named": [0], "any": False, "fallback": False})
route("two handlers for the name run in registration order; another name's is skipped",
      [ON("ddex.delivery.failed"), ON("ddex.import.failed"), ON("ddex.delivery.failed")], "ddex.delivery.failed",
      {"named": [0, 2], "any": False, "fallback": False})
route("on_any runs besides the named handlers", [{"on_any": True}, ON("ddex.import.completed")], "ddex.import.completed",
      {"named": [0], "any": True, "fallback": False})
route("an unknown name goes to the fallback (and on_any), kept as sent",
      [ON("ddex.delivery.failed"), {"on_any": True}, {"otherwise": True}], "ddex.delivery.retried",
      {"named": [], "any": True, "fallback": True})
route("a known name nobody registered goes to the fallback too", [ON("ddex.delivery.failed"), {"otherwise": True}],
      "enterprise.webhook.test", {"named": [], "any": False, "fallback": True})
route("no handler takes it and no fallback: nothing runs (acknowledged)", [ON("ddex.delivery.failed")],
      "ddex.connection.degraded", {"named": [], "any": False, "fallback": False})
route("names match exactly (case kept)", [ON("DDEX.Delivery.Failed"), {"otherwise": True}], "ddex.delivery.failed",
      {"named": [], "any": False, "fallback": True})
route("a name the spec does not list may be registered", [ON("ddex.delivery.retried")], "ddex.delivery.retried",
      {"named": [0], "any": False, "fallback": False})
route("an empty name is refused", [ON("")], "ddex.delivery.failed", error="invalid_argument")
route("a name with a space is refused", [ON("ddex delivery failed")], "ddex.delivery.failed", error="invalid_argument")
route("a name over 256 bytes is refused", [ON("d" * 257)], "ddex.delivery.failed", error="invalid_argument")

shape.write("webhook.json", webhook["description"], webhook["generator"], [
    shape.group("verify_webhook", cases, comment=webhook["input_shape"], defaults=webhook["defaults"], error_fields=("http_status",)),
    shape.group("resource_path", paths, comment="the event's resource.url checked: resource_path() of a delivery whose resource.url is the input"),
    shape.group("active_secrets", rotations, comment="active_secrets(current, previous, previous_valid_until, now)"),
    shape.group("revealed_secret", revealed, comment="revealed_secret(body): secrets(previous), previous_valid_until, reference, record (parsed)"),
    shape.group("route_event", routes, comment="EventRouter: registrations in order (on name / on_any / otherwise), then route(event)")])
windows = [dict(c, ops=[{"key": o["key"], "now": o["now"]} for o in c["ops"]], **({} if "error" in c else {"expected": [o["expected"] for o in c["ops"]]}))
           for c in dedup["window"]]
shape.write("dedup.json", dedup["description"], dedup["generator"], [
    shape.group("delivery_key", dedup["delivery_key"]),
    shape.group("event_key", dedup["event_key"]),
    shape.group("content_key", dedup["content_key"]),
    shape.group("idempotency_key", dedup["idempotency_key"]),
    shape.group("dedup_window", windows, comment="a new window, then check_and_insert(key, now) for each op: expected is the list of answers"),
    shape.group("dedup_claims", claims, comment="a new window (absent ttl and lease: the defaults), then claim / commit / release (key, now) "
                "for each op: expected is the list of answers (claim: new, in_progress or done; commit: null; release: whether a live claim was dropped)")])
