"""Key derivations of royaltykit, written independently with hashlib/hmac/json from the encoding
documented in core/src/dedup/mod.rs; shared by the vector generators."""
import hashlib
import hmac
import json


def mac(secret, ts, body):
    return hmac.new(secret.encode(), ts.encode() + b"." + body, hashlib.sha256).digest()


def lp_hash(prefix, tag, fields):
    h = hashlib.sha256()
    for f in [tag] + fields:
        if isinstance(f, str):
            f = f.encode()
        h.update(len(f).to_bytes(8, "big"))
        h.update(f)
    return prefix + "_" + h.hexdigest()


def content_key(secret, ts, body):
    return lp_hash("cnt", b"royaltykit/content/v1", [mac(secret, ts, body)])


def delivery_key(ns, did):
    return lp_hash("dlv", b"royaltykit/delivery/v1", [ns, did])


def event_key(ns, name, rtype, rref, occurred):
    return lp_hash("evt", b"royaltykit/event/v1", [ns, name, rtype, rref, occurred])


def _whole_floats_as_ints(value):
    """A whole-number float is an integer (JS `JSON.stringify(1.0)` writes `1`, Python `1.0`)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_floats_as_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_floats_as_ints(v) for v in value]
    return value


def canonical(body):
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return body
    return json.dumps(_whole_floats_as_ints(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def idempotency_key(tenant, op, body):
    return lp_hash("idem", b"royaltykit/idempotency/v1", [tenant, op, canonical(body)])


