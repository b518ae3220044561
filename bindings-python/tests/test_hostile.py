"""Hostile host input: each case gets TypeError, a RoyaltyKitError with the given code, or the
documented result; afterwards the module still answers a valid call."""

import pytest
import royaltykit as rk

SECRET = "whsec_hostile"
NOW = 1_795_320_000
BODY = b'{"event":"ddex.delivery.failed","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}'
SIGNED = rk.sign_webhook(SECRET, BODY, timestamp=NOW, delivery_id="dlv_h")
BIG = "x" * (10 * 1024 * 1024)
T = "0f8fad5b-d9cb-469f-a165-70867728950e"


class Str(str):
    pass


class Weird:
    def items(self):
        raise RuntimeError("broken mapping")


def verify(headers=SIGNED, body=BODY, secrets=SECRET, **kw):
    kw.setdefault("now", NOW)
    return rk.verify_webhook(headers, body, secrets, **kw)


CASES = [
    ("headers None", lambda: verify(None), TypeError),
    ("headers an int", lambda: verify(42), TypeError),
    ("headers a str", lambda: verify("Service-Webhook-Id: x"), TypeError),
    ("headers bytes", lambda: verify(b"x"), TypeError),
    ("header pair of one element", lambda: verify([("Service-Webhook-Id",)]), TypeError),
    ("header name bytes", lambda: verify({b"Service-Webhook-Id": "x"}), TypeError),
    ("header value int", lambda: verify({**SIGNED, "Service-Webhook-Id": 5}), TypeError),
    ("header value list with None", lambda: verify({**SIGNED, "Service-Webhook-Signature": ["v1=00", None]}), TypeError),
    ("a mapping whose items() raises", lambda: verify(Weird()), RuntimeError),
    ("duplicate ids with conflicting values", lambda: verify(list(SIGNED.items()) + [("service-webhook-id", "other")]), "invalid_header"),
    ("duplicate timestamps with conflicting values", lambda: verify(list(SIGNED.items()) + [("SERVICE-WEBHOOK-TIMESTAMP", str(NOW + 1))]), "invalid_timestamp"),
    ("str subclass headers and secret work", lambda: verify({Str(k): Str(v) for k, v in SIGNED.items()}, secrets=Str(SECRET)).delivery_id == "dlv_h", True),
    ("memoryview slice body", lambda: verify(body=memoryview(b"xx" + BODY + b"yy")[2:-2]).delivery_id == "dlv_h", True),
    ("body None", lambda: verify(body=None), TypeError),
    ("body int", lambda: verify(body=5), TypeError),
    ("body a list of ints", lambda: verify(body=list(BODY)), TypeError),
    ("body dict", lambda: verify(body={"event": "x"}), TypeError),
    ("body str with a lone surrogate", lambda: verify(body="\ud800"), "no_matching_signature"),
    ("secret with a lone surrogate", lambda: verify(secrets="\udfff"), "no_matching_signature"),
    ("secrets an empty list", lambda: verify(secrets=[]), "invalid_secret"),
    ("secrets [''] ", lambda: verify(secrets=[""]), "invalid_secret"),
    ("secrets a set", lambda: verify(secrets={SECRET}), TypeError),
    ("secrets nested", lambda: verify(secrets=[[SECRET]]), TypeError),
    ("10 MB body", lambda: verify(body=BIG), "payload_too_large"),
    ("10 MB signature header", lambda: verify({**SIGNED, "Service-Webhook-Signature": BIG}), "invalid_signature_header"),
    ("10 MB delivery id", lambda: verify({**SIGNED, "Service-Webhook-Id": BIG}), "invalid_header"),
    ("empty everything", lambda: rk.verify_webhook({}, b"", []), "missing_header"),
    ("now -inf", lambda: verify(now=float("-inf")), "invalid_argument"),
    ("now a str", lambda: verify(now="1"), TypeError),
    ("tolerance huge int", lambda: verify(tolerance_seconds=10**30), OverflowError),
    ("lone surrogate in the delivery id is replaced, not fatal", lambda: verify({**SIGNED, "Service-Webhook-Id": "a\ud800b"}).delivery_id, "a\ufffdb"),
    ("DedupWindow negative capacity", lambda: rk.DedupWindow(-1, 10), "invalid_argument"),
    ("DedupWindow 10 MB key", lambda: rk.DedupWindow(1, 10).check_and_insert(BIG), "invalid_argument"),
    ("delivery_key None", lambda: rk.delivery_key(None, "x"), TypeError),
    ("idempotency_key with a 10 MB request id", lambda: rk.idempotency_key("t", "op", "[" * (10 * 1024 * 1024)), "invalid_argument"),
    ("decide_retry with a float attempt", lambda: rk.decide_retry("read", attempt=1.5, status=500), TypeError),
    ("build_request with a lone surrogate path parameter", lambda: rk.build_request("getPlatformExport", path={"export": "\ud800"}, token=rk.BearerToken.reports("t", T), tenant_id=T).path, "/api/platform/v1/exports/%EF%BF%BD"),
    ("parse_api_error with a 10 MB body keeps 4 KiB", lambda: len(rk.parse_api_error("reports", 500, {}, BIG).raw_body) <= 4 * 1024 + 1, True),
    ("parse_token_response with an array body", lambda: rk.parse_token_response(200, {}, b"[]", tenant_id="0f8fad5b-d9cb-469f-a165-70867728950e"), "invalid_token_response"),
    ("export_poll_decision with attempt 0", lambda: rk.export_poll_decision("queued", 0), "invalid_argument"),
]


@pytest.mark.parametrize("name,call,want", CASES, ids=[c[0] for c in CASES])
def test_hostile(name, call, want):
    if isinstance(want, type) and issubclass(want, BaseException):
        with pytest.raises(want):
            call()
    elif isinstance(want, str) and want.replace("_", "").isalpha() and want.islower():
        with pytest.raises(rk.RoyaltyKitError) as info:
            call()
        assert info.value.code == want
    else:
        assert call() == want
    assert verify().delivery_id == "dlv_h"  # the module still works


def test_at_least_thirty_cases():
    assert len(CASES) >= 30
