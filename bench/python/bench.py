"""make bench, Python part. Usage: python bench.py <cases.json> <out.json>

Every contender verifies the same delivery (its own header/secret format) once per call.
Contenders of one body run interleaved: ROUNDS rounds, each a timed batch per contender;
reported: min and median over the rounds of ns per call.
"""
import hashlib
import hmac
import json
import os
import sys
import time

import interleave  # bench/python/interleave.py, beside this file
import royaltykit
import standardwebhooks
import stripe
from svix.webhooks import Webhook as SvixWebhook

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
BATCH_NS = float(os.environ.get("BENCH_BATCH_MS", "20")) * 1e6


def time_interleaved(contenders):
    """Each contender's min and median ns per call (bench/python/interleave.py)."""
    return [{"contender": name, "min_ns": s[0], "median_ns": s[len(s) // 2]}
            for name, s in interleave.time_interleaved(contenders, ROUNDS, BATCH_NS)]


def hand_written(headers, body, secret, now, parse):
    """Stdlib, as a careful user would write it: headers, timestamp tolerance, hmac +
    compare_digest against every v1 value; then json.loads for the event."""
    did = headers.get("service-webhook-id")
    ts = headers.get("service-webhook-timestamp")
    sig = headers.get("service-webhook-signature")
    if not did or not ts or not sig:
        raise ValueError("missing header")
    if not ts.isdigit() or len(ts) > 15:
        raise ValueError("bad timestamp")
    expected = hmac.new(secret, ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    ok = False
    for part in sig.split(","):
        version, _, value = part.strip().partition("=")
        if version == "v1" and hmac.compare_digest(value, expected):
            ok = True
    if not ok:
        raise ValueError("no matching signature")
    if abs(now - int(ts)) > 300:
        raise ValueError("timestamp")
    return json.loads(body) if parse else True


def main():
    cases_file, out_file = sys.argv[1:3]
    cases = json.load(open(cases_file))["cases"]
    results = []
    for c in cases:
        body = c["body"].encode()
        headers = {k.lower(): v for k, v in c["royaltykit"]["headers"].items()}
        secret = c["royaltykit"]["secret"]
        secret_bytes = secret.encode()
        now = c["timestamp"]
        verifier = royaltykit.WebhookVerifier(secret)
        svix = SvixWebhook(c["svix"]["secret"])
        sw = standardwebhooks.Webhook(c["svix"]["secret"])
        sv_headers = c["svix"]["headers"]
        st_header, st_secret = c["stripe"]["header"], c["stripe"]["secret"]
        contenders = [
            ("royaltykit WebhookVerifier.verify", lambda: verifier.verify(headers, body, now=now)),
            ("royaltykit verify_webhook", lambda: royaltykit.verify_webhook(headers, body, secret, now=now)),
            ("stdlib hmac hand-written + json.loads", lambda: hand_written(headers, body, secret_bytes, now, True)),
            ("stdlib hmac hand-written, signature only", lambda: hand_written(headers, body, secret_bytes, now, False)),
            ("svix Webhook.verify (no JSON parse)", lambda: svix.verify(body, sv_headers)),
            ("standardwebhooks Webhook.verify (+ json.loads)", lambda: sw.verify(body, sv_headers)),
            ("stripe WebhookSignature.verify_header", lambda: stripe.WebhookSignature.verify_header(body, st_header, st_secret, 300)),
        ]
        for _, fn in contenders:
            fn()  # every contender must accept the delivery (or raise)
        forged = body.replace(b'"event":"', b'"event":"x', 1)
        for name, fn in [
            ("royaltykit", lambda: verifier.verify(headers, forged, now=now)),
            ("stdlib", lambda: hand_written(headers, forged, secret_bytes, now, False)),
            ("svix", lambda: svix.verify(forged, sv_headers)),
            ("standardwebhooks", lambda: sw.verify(forged, sv_headers)),
            ("stripe", lambda: stripe.WebhookSignature.verify_header(forged, st_header, st_secret, 300)),
        ]:
            try:
                fn()
            except Exception:
                continue
            raise SystemExit(f"{name} accepted a forged delivery")
        assert verifier.verify(headers, body, now=now).event.name == json.loads(body)["event"]
        for r in time_interleaved(contenders):
            results.append({"group": "verify", "case": c["name"], "bytes": c["bytes"], **r})
        print(f"python: {c['name']} done", file=sys.stderr)

    keys = [f"dlv1:org_42:wh_del_{i:012d}" for i in range(200_000)]
    w = royaltykit.DedupWindow(100_000, 3600)
    dupes = royaltykit.DedupWindow(100_000, 3600)
    for k in keys[:1000]:
        dupes.check_and_insert(k, now=1000)
    state = {"i": 0, "j": 0}

    def new_key():
        state["i"] = (state["i"] + 1) % len(keys)
        return w.check_and_insert(keys[state["i"]], now=1000)

    def dup_key():
        state["j"] = (state["j"] + 1) % 1000
        return dupes.check_and_insert(keys[state["j"]], now=1000)

    err_body = b'{"error":{"code":"validation_failed","message":"The request is invalid.","details":[{"field":"name","issue":"required"}]},"request_id":"req_123"}'
    err_headers = {"content-type": "application/json", "x-request-id": "req_123"}
    for r in time_interleaved([
        ("DedupWindow.check_and_insert (new keys, full window)", new_key),
        ("DedupWindow.check_and_insert (duplicates)", dup_key),
        ("decide_retry (503 with Retry-After, read)", lambda: royaltykit.decide_retry(
            "read", attempt=1, status=503, headers={"retry-after": "7"}, elapsed_seconds=0.5, random=0.25, now=1000)),
        ("parse_api_error (422 JSON body)", lambda: royaltykit.parse_api_error(
            "enterprise", 422, err_headers, err_body, now=1000)),
    ]):
        results.append({"group": "calls", "case": "", "bytes": 0, **r})

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    mem_keys = [f"dlv1:org_42:wh_mem_{i:012d}" for i in range(100_000)]
    before = rss()
    m = royaltykit.DedupWindow(100_000, 3600)
    for k in mem_keys:
        m.check_and_insert(k, now=1000)
    results.append({"group": "memory", "case": "DedupWindow, 100,000 keys of 31 B", "contender": "rss growth",
                    "bytes_per_entry": (rss() - before) / 100_000})
    versions = {p: __import__("importlib.metadata").metadata.version(p) for p in ("royaltykit", "svix", "standardwebhooks", "stripe")}
    json.dump({"language": "python", "python": sys.version.split()[0], "versions": versions, "results": results},
              open(out_file, "w"), indent=1)


if __name__ == "__main__":
    main()
