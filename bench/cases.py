#!/usr/bin/env python3
"""Writes the benchmark deliveries to a JSON file (stdlib only).

One realistic event payload padded with a `data` array of delivery-status rows to 200 B, 1 KiB,
16 KiB and 256 KiB, plus "1 KiB with two signatures, the match second". For every body the file
holds the headers and secret of each scheme the contenders use, signed here with Python's
`hmac` at the current time (svix and standardwebhooks check the timestamp against the real
clock, so the file is written right before each language runs):

- royaltykit: Service-Webhook-{Id,Timestamp,Signature}, `v1=<hex>` over `<ts>.<body>`,
  secret = 32 random bytes as 64 hex characters (used as is);
- svix / standardwebhooks: webhook-{id,timestamp,signature}, `v1,<base64>` over
  `<id>.<ts>.<body>`, secret `whsec_<base64 of the same 32 bytes>`;
- stripe: Stripe-Signature `t=<ts>,v1=<hex>` over `<ts>.<body>`, the same secret string.
"""
import base64
import hashlib
import hmac
import json
import sys
import time

SIZES = [("200 B", 200), ("1 KiB", 1024), ("16 KiB", 16 * 1024), ("256 KiB", 256 * 1024)]
KEY = bytes(range(1, 33))  # fixed: benchmarks, not secrets
SECRET = KEY.hex()
OTHER_SECRET = bytes(range(101, 133)).hex()
WHSEC = "whsec_" + base64.b64encode(KEY).decode()


def body_of(size: int) -> bytes:
    head = (
        '{"event":"ddex.delivery.status_changed","resource":{"type":"ddex_message",'
        '"reference":"3f0c9a52-6d1e-4c1b-9a43-2b7e8f1d5c60",'
        '"url":"/v1/ddex/messages/3f0c9a52-6d1e-4c1b-9a43-2b7e8f1d5c60"},'
        '"occurred_at":"2026-11-22T06:30:00Z"'
    )
    if size < 300:  # the smallest real payloads: an import event with a short path
        head = (
            '{"event":"ddex.import.failed","resource":{"type":"ddex_import",'
            '"reference":"3f0c9a52-6d1e-4c1b-9a43-2b7e8f1d5c60","url":"/v1/imports/3f0c9a52"},'
            '"occurred_at":"2026-11-22T06:30:00Z"'
        )
    rows, i = [], 0
    while True:
        row = (
            '{"isrc":"USRC1760%04d","territory":"DE","status":"delivered","units":%d,'
            '"note":"batch %d"}' % (i % 10000, 1000 + i, i)
        )
        if len(head + ',"data":[' + ",".join(rows + [row]) + "]}") > size:
            break
        rows.append(row)
        i += 1
    if rows:
        text = head + ',"data":[' + ",".join(rows) + "]}"
        missing = size - len(text)
        text = text[: -len('"}]}')] + "x" * missing + '"}]}'
    else:
        text = head + ',"note":"' + "x" * (size - len(head) - 11) + '"}'
    data = text.encode()
    assert len(data) == size, (len(data), size)
    json.loads(data)
    return data


def hexmac(key: bytes, msg: bytes) -> str:
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def case(name: str, body: bytes, two: bool, ts: int) -> dict:
    did = "wh_del_7f3a9c1e"
    signed = f"{ts}.".encode() + body
    sig = "v1=" + hexmac(SECRET.encode(), signed)
    if two:
        sig = "v1=" + hexmac(OTHER_SECRET.encode(), signed) + "," + sig
    sv = base64.b64encode(hmac.new(KEY, f"{did}.{ts}.".encode() + body, hashlib.sha256).digest())
    sv_sig = "v1," + sv.decode()
    if two:
        other = base64.b64encode(
            hmac.new(bytes.fromhex(OTHER_SECRET), f"{did}.{ts}.".encode() + body, hashlib.sha256).digest()
        )
        sv_sig = "v1," + other.decode() + " " + sv_sig
    stripe = f"t={ts},v1=" + hexmac(SECRET.encode(), signed)
    if two:
        stripe = f"t={ts},v1=" + hexmac(OTHER_SECRET.encode(), signed) + ",v1=" + hexmac(SECRET.encode(), signed)
    return {
        "name": name,
        "body": body.decode(),
        "bytes": len(body),
        "timestamp": ts,
        "royaltykit": {
            "secret": SECRET,
            "headers": {
                "Service-Webhook-Id": did,
                "Service-Webhook-Timestamp": str(ts),
                "Service-Webhook-Signature": sig,
            },
        },
        "svix": {
            "secret": WHSEC,
            "headers": {"webhook-id": did, "webhook-timestamp": str(ts), "webhook-signature": sv_sig},
        },
        "stripe": {"secret": SECRET, "header": stripe},
    }


def main() -> None:
    ts = int(time.time())
    cases = [case(n, body_of(s), False, ts) for n, s in SIZES]
    cases.insert(2, case("1 KiB, 2 signatures", body_of(1024), True, ts))
    out = json.dumps({"generated_at": ts, "cases": cases})
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(out)
    else:
        print(out)


if __name__ == "__main__":
    main()
