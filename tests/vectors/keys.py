"""Key derivations of royaltykit, written independently with hashlib/hmac/json from the encoding
documented in core/src/dedup/mod.rs; shared by the vector generators."""
import hashlib
import hmac


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


def idempotency_key(namespace, op, request_id):
    """One logical request's key, from the id the caller gave it (DESIGN §2)."""
    return lp_hash("idem", b"royaltykit/idempotency/v2", [namespace, op, request_id])


def random_idempotency_key(random_hex):
    """The key a request gets from 16 random bytes of the host (given here as hex)."""
    assert len(bytes.fromhex(random_hex)) == 16
    return "idem_" + random_hex
