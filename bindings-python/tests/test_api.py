"""The Python surface: host types, keyword options, exceptions, defaults, threads."""

import datetime
import json
import pickle
import threading
import time

import pytest
import royaltykit as rk

SECRET = "whsec_py_test_secret"
NOW = 1_763_784_000
BODY = json.dumps({
    "event": "ddex.import.completed",
    "resource": {"type": "ddex_message", "reference": "3f2b8c1e-4d5a-4b6c-8e7f-9a0b1c2d3e4f",
                 "url": "/api/v1/ddex/messages/3f2b8c1e-4d5a-4b6c-8e7f-9a0b1c2d3e4f"},
    "occurred_at": "2026-11-22T04:00:00Z",
}).encode()
SIGNED = rk.sign_webhook(SECRET, BODY, timestamp=NOW, delivery_id="dlv_py_1")


class CaseInsensitiveHeaders(dict):
    """Stands in for requests' CaseInsensitiveDict / email.message.Message: any Mapping."""


def test_sign_returns_the_three_headers():
    assert list(SIGNED) == ["Service-Webhook-Id", "Service-Webhook-Timestamp", "Service-Webhook-Signature"]
    assert SIGNED["Service-Webhook-Timestamp"] == str(NOW)
    assert SIGNED["Service-Webhook-Signature"].startswith("v1=")


def test_sign_defaults_clock_and_uuid():
    h = rk.sign_webhook(SECRET, BODY)
    assert abs(int(h["Service-Webhook-Timestamp"]) - time.time()) < 5
    assert len(h["Service-Webhook-Id"]) == 36 and h["Service-Webhook-Id"][14] == "4"
    assert rk.verify_webhook(h, BODY, SECRET).delivery_id == h["Service-Webhook-Id"]


@pytest.mark.parametrize("shape", ["dict", "lower", "upper", "pairs", "list_values", "mapping", "tuple_of_lists"])
def test_header_shapes(shape):
    headers = {
        "dict": SIGNED,
        "lower": {k.lower(): v for k, v in SIGNED.items()},
        "upper": {k.upper(): v for k, v in SIGNED.items()},
        "pairs": list(SIGNED.items()),
        "list_values": {**SIGNED, "Service-Webhook-Signature": ["v2=zz", SIGNED["Service-Webhook-Signature"]]},
        "mapping": CaseInsensitiveHeaders(SIGNED),
        "tuple_of_lists": tuple([k, v] for k, v in SIGNED.items()),
    }[shape]
    assert rk.verify_webhook(headers, BODY, SECRET, now=NOW).delivery_id == "dlv_py_1"


@pytest.mark.parametrize("body", [BODY, bytearray(BODY), memoryview(BODY), BODY.decode(), memoryview(b"xx" + BODY)[2:]])
def test_body_types(body):
    assert rk.verify_webhook(SIGNED, body, SECRET, now=NOW).event.name == "ddex.import.completed"


def test_result_attributes_and_repr_without_secret():
    v = rk.verify_webhook(SIGNED, BODY, [SECRET, "previous"], now=float(NOW) + 0.9)
    assert v.secret_index == 0 and v.timestamp == NOW
    assert v.content_key == rk.content_key(SECRET, NOW, BODY)
    assert v.event.occurred_at == int(datetime.datetime(2026, 11, 22, 4, 0, tzinfo=datetime.timezone.utc).timestamp()) and v.event.replay_of is None and v.event.is_known
    assert "dlv_py_1" in repr(v) and SECRET not in repr(v)
    assert SECRET not in repr(rk.WebhookVerifier([SECRET]))


def test_exception_hierarchy_code_and_details():
    with pytest.raises(rk.WebhookVerificationError) as info:
        rk.verify_webhook(SIGNED, BODY, SECRET, now=NOW - 1000)
    e = info.value
    assert isinstance(e, rk.RoyaltyKitError) and isinstance(e, Exception)
    assert (e.code, e.skew_seconds, e.limit) == ("timestamp_too_new", 1000, 300)
    assert "1000 s" in str(e)
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is rk.WebhookVerificationError and again.code == e.code and again.skew_seconds == 1000
    with pytest.raises(rk.WebhookVerificationError) as info:
        rk.verify_webhook({"Service-Webhook-Id": "x"}, BODY, SECRET)
    assert info.value.code == "missing_header" and info.value.header == "Service-Webhook-Timestamp"


@pytest.mark.parametrize("kwargs", [{"tolerance_seconds": -1}, {"tolerance_seconds": 86_401}, {"max_body_bytes": -5},
                                    {"now": float("nan")}, {"now": float("inf")}, {"now": 10**30}])
def test_out_of_range_options(kwargs):
    with pytest.raises(rk.InvalidArgumentError) as info:
        rk.verify_webhook(SIGNED, BODY, SECRET, **kwargs)
    assert info.value.code == "invalid_argument"
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("call", [
    lambda: rk.verify_webhook(None, BODY, SECRET),
    lambda: rk.verify_webhook("Service-Webhook-Id: x", BODY, SECRET),
    lambda: rk.verify_webhook(SIGNED, None, SECRET),
    lambda: rk.verify_webhook(SIGNED, 42, SECRET),
    lambda: rk.verify_webhook(SIGNED, BODY, None),
    lambda: rk.verify_webhook(SIGNED, BODY, b"secret"),
    lambda: rk.verify_webhook(SIGNED, BODY, [SECRET, 7]),
    lambda: rk.verify_webhook(SIGNED, BODY, SECRET, now="123"),
    lambda: rk.verify_webhook(SIGNED, BODY, SECRET, tolerance_seconds=1.5),
    lambda: rk.verify_webhook([("Service-Webhook-Id",)], BODY, SECRET),
    lambda: rk.verify_webhook({"Service-Webhook-Id": 5}, BODY, SECRET),
    lambda: rk.verify_webhook({b"Service-Webhook-Id": "x"}, BODY, SECRET),
    lambda: rk.DedupWindow(1, 60).check_and_insert(5),
])
def test_wrong_host_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_secret_never_in_errors():
    secret = "whsec_DO_NOT_LEAK_4242"
    texts = []
    for f in (
        lambda: rk.verify_webhook(SIGNED, BODY, secret, now=NOW),
        lambda: rk.verify_webhook(rk.sign_webhook(secret, BODY, timestamp=NOW), BODY, secret, now=NOW + 999),
        lambda: rk.WebhookVerifier([secret, ""]),
    ):
        with pytest.raises(rk.RoyaltyKitError) as info:
            f()
        texts += [str(info.value), repr(info.value), repr(info.value.__dict__)]
    assert not [t for t in texts if secret in t]


def test_active_secrets():
    new, old = rk.active_secrets("new", "old", NOW + 300, now=NOW)
    assert isinstance(old, rk.WebhookSecret) and (new.valid_until, old.valid_until) == (None, NOW + 300)
    assert [s.valid_until for s in rk.active_secrets("new", "old", NOW + 300, now=NOW + 301)] == [None]
    assert len(rk.active_secrets("new")) == 1
    # previous_secret_valid_until as the service sends it: read by the one timestamp parser
    assert rk.active_secrets("new", "old", "2026-11-22T03:05:06Z", now=0)[1].valid_until == rk.parse_timestamp("2026-11-22T03:05:06Z")
    # a verifier built from them at rotation time stops taking the old secret after valid_until
    verifier = rk.WebhookVerifier(rk.active_secrets("new", "old", NOW + 300, now=NOW))
    body = b'{"event":"x","resource":{"type":"t","reference":"r","url":"/api/v1/x"},"occurred_at":"2026-11-22T04:05:06Z"}'
    assert verifier.verify(rk.sign_webhook("old", body, timestamp=NOW + 200), body, now=NOW + 200).secret_index == 1
    with pytest.raises(rk.WebhookVerificationError, match="no matching signature"):
        verifier.verify(rk.sign_webhook("old", body, timestamp=NOW + 301), body, now=NOW + 301)
    with pytest.raises(rk.InvalidArgumentError):
        rk.active_secrets("new", "old")


def test_replay_and_content_keys():
    original = rk.verify_webhook(SIGNED, BODY, SECRET, now=NOW)
    replay_body = json.dumps({**json.loads(BODY), "replay_of": "dlv_py_1"}).encode()
    h = rk.sign_webhook(SECRET, replay_body, timestamp=NOW + 60, delivery_id="dlv_py_2")
    replay = rk.verify_webhook(h, replay_body, SECRET, now=NOW + 60)
    assert replay.event.replay_of == "dlv_py_1"
    assert rk.event_key("org", original.event) == rk.event_key("org", replay.event)
    assert rk.delivery_key("org", original.delivery_id) != rk.delivery_key("org", replay.delivery_id)
    forged = rk.verify_webhook({**SIGNED, "Service-Webhook-Id": "fresh"}, BODY, SECRET, now=NOW)
    assert forged.content_key == original.content_key


def test_dedup_window_is_thread_safe_and_bounded():
    w = rk.DedupWindow(1000, 3600)
    firsts = []
    lock = threading.Lock()

    def worker(n):
        mine = sum(1 for i in range(500) if w.check_and_insert(f"k{i}", NOW))
        with lock:
            firsts.append(mine)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(firsts) == 500  # each key is "first seen" exactly once across threads
    assert len(w) == 500 and w.capacity == 1000
    assert w.check_and_insert("new") is True and w.contains("new")


def test_survives_hostile_input_then_works():
    hostile = [
        lambda: rk.verify_webhook({"Service-Webhook-Signature": "v1=" * 100_000}, BODY, SECRET),
        lambda: rk.verify_webhook(SIGNED, b"\0" * (10 * 1024 * 1024), SECRET),
        lambda: rk.verify_webhook(SIGNED, "\ud800", SECRET),
        lambda: rk.verify_webhook({**SIGNED, "Service-Webhook-Id": "\udc00"}, BODY, SECRET, now=NOW),
        lambda: rk.idempotency_key("t", "op", "[" * 100_000),
    ]
    for f in hostile:
        try:
            f()
        except rk.RoyaltyKitError:
            pass
    assert rk.verify_webhook(SIGNED, BODY, SECRET, now=NOW).delivery_id == "dlv_py_1"


def test_errors_carry_the_status_a_receiver_should_answer() -> None:
    body = b'{"event":"x"}'
    signed = rk.sign_webhook("whsec_a", body, timestamp=NOW)
    cases = [
        (lambda: rk.verify_webhook(signed, body, "whsec_other", now=NOW), rk.WebhookVerificationError, "no_matching_signature", 401),
        (lambda: rk.verify_webhook(signed, body, "whsec_a", now=NOW, max_body_bytes=4), rk.WebhookVerificationError, "payload_too_large", 413),
        (lambda: rk.verify_webhook({}, body, "whsec_a", now=NOW), rk.WebhookVerificationError, "missing_header", 400),
        (lambda: rk.verify_webhook(signed, body, "", now=NOW), rk.WebhookVerificationError, "invalid_secret", 500),
        (lambda: rk.verify_webhook(signed, body, "whsec_a", now=NOW, tolerance_seconds=-1), rk.InvalidArgumentError, "invalid_argument", 500),
    ]
    for call, cls, code, status in cases:
        with pytest.raises(cls) as info:
            call()
        assert (info.value.code, info.value.http_status) == (code, status)


def test_catalog_and_host_conversions():
    ops = rk.operations()
    assert sum(o.api == "reports" for o in ops) == 44 and sum(o.api == "enterprise" for o in ops) == 15
    assert rk.operation("getPlatformExport").scope == "exports:write"
    with pytest.raises(rk.InvalidArgumentError):
        rk.operation("nope")
    t = "0f8fad5b-d9cb-469f-a165-70867728950e"
    d = rk.build_request("listPlatformExports", query={"limit": 20, "cursor": None}, token=rk.BearerToken.reports("t", t), tenant_id=t)
    assert d.query == "limit=20" and d.url("https://reports.example/") == "https://reports.example/api/platform/v1/exports?limit=20"
    c = rk.build_request("createPlatformExport", body={"format": "csv"}, token=rk.BearerToken.reports("t", t), tenant_id=t)
    assert c.body == b'{"format":"csv"}'
    # One random key per logical request (OS RNG): an identical second create is not a replay.
    again = rk.build_request("createPlatformExport", body={"format": "csv"}, token=rk.BearerToken.reports("t", t), tenant_id=t)
    assert c.idempotency_key.startswith("idem_") and len(c.idempotency_key) == 37
    assert again.idempotency_key != c.idempotency_key and c.idempotency_key_sent is False
    with pytest.raises(TypeError):
        rk.build_request("listPlatformExports", query={"limit": 1.5})


def test_a_reporting_token_remembers_its_tenant() -> None:
    tenant_a, tenant_b = "0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7"
    token = rk.parse_token_response(200, {"cache-control": "no-store"}, b'{"access_token":"tok_r","token_type":"Bearer","expires_in":60}', tenant_id=tenant_a)
    assert token.tenant_id == tenant_a
    assert dict(rk.build_request("listPlatformExports", token=token).headers)["X-Tenant-ID"] == tenant_a
    for tok in (token, rk.BearerToken.reports("tok_c", tenant_a)):
        with pytest.raises(rk.RequestBuildError) as e:
            rk.build_request("listPlatformExports", token=tok, tenant_id=tenant_b)
        assert e.value.code == "invalid_parameter" and e.value.parameter == "tenant_id" and "tok_" not in str(e.value)
    assert rk.BearerToken.reports("tok_c", tenant_a).tenant_id == tenant_a and rk.BearerToken.reports("tok_c", None).tenant_id is None
    with pytest.raises(TypeError):
        rk.parse_token_response(200, {}, b"{}")  # type: ignore[call-arg]


def test_build_request_takes_typed_tokens_never_a_string() -> None:
    t = "0f8fad5b-d9cb-469f-a165-70867728950e"
    reporting = rk.parse_token_response(200, {"cache-control": "no-store"}, b'{"access_token":"tok_r","token_type":"Bearer","expires_in":60}', tenant_id=t)
    enterprise = rk.parse_enterprise_token_response(200, {}, b'{"token":"tok_e","expires_at":null}')

    def auth(d: rk.RequestDescriptor) -> str:
        return dict(d.headers)["Authorization"]

    assert auth(rk.build_request("listPlatformExports", token=reporting, tenant_id=t)) == "Bearer tok_r"
    assert auth(rk.build_request("listEnterpriseSubscriptions", token=enterprise)) == "Bearer tok_e"
    cached = rk.BearerToken.enterprise("tok_c")
    assert cached.api == "enterprise" and "tok_c" not in repr(cached)
    assert auth(rk.build_request("listEnterpriseSubscriptions", token=cached)) == "Bearer tok_c"
    for op, tok, tenant in [("listEnterpriseSubscriptions", reporting, None), ("listPlatformExports", enterprise, t)]:
        with pytest.raises(rk.RequestBuildError) as e:
            rk.build_request(op, token=tok, tenant_id=tenant)
        assert e.value.code == "invalid_parameter" and e.value.parameter == "token" and "tok_" not in str(e.value)
    with pytest.raises(TypeError, match="token"):
        rk.build_request("listPlatformExports", token="tok_r", tenant_id=t)  # type: ignore[arg-type]
    e = rk.parse_api_error("reports", 503, {"Retry-After": "7"}, b"")
    with pytest.raises(rk.ApiError):
        raise e


def test_tolerance_has_one_name_and_errors_name_it():
    with pytest.raises(rk.InvalidArgumentError) as info:
        rk.WebhookVerifier(SECRET, tolerance_seconds=-1)
    assert info.value.argument == "tolerance_seconds", "the error names the keyword the caller wrote"
    # The earlier spelling still works, with a DeprecationWarning; both at once is refused.
    with pytest.warns(DeprecationWarning, match="tolerance_seconds"):
        assert rk.verify_webhook(SIGNED, BODY, SECRET, now=NOW + 10, tolerance=10).delivery_id == "dlv_py_1"
    with pytest.raises(rk.WebhookVerificationError):
        rk.verify_webhook(SIGNED, BODY, SECRET, now=NOW + 11, tolerance_seconds=10)
    with pytest.raises(TypeError, match="tolerance_seconds only"):
        rk.WebhookVerifier(SECRET, tolerance=10, tolerance_seconds=10)


def test_a_secret_expiry_is_never_silently_lost():
    import datetime as dt

    at = rk.parse_timestamp("2026-11-22T03:05:06Z")
    assert at is not None
    for given in (at, float(at), "2026-11-22T03:05:06Z", "2026-11-22T03:05:06+0000",
                  dt.datetime(2026, 11, 22, 3, 5, 6, tzinfo=dt.timezone.utc)):
        assert rk.WebhookSecret("s", valid_until=given).valid_until == at, given
    for refused in (float("nan"), float("inf"), float("-inf"), "", "tomorrow", "1763784000x",
                    dt.datetime(2026, 11, 22, 3, 5, 6)):  # naive: its instant is unknown
        with pytest.raises(rk.InvalidArgumentError, match="must be Unix seconds"):
            rk.WebhookSecret("s", valid_until=refused)
    with pytest.raises(rk.InvalidArgumentError):
        rk.active_secrets("new", "old", float("nan"), now=NOW)
    with pytest.raises(rk.InvalidArgumentError, match="got a list"):
        rk.WebhookSecret("s", valid_until=[1])  # type: ignore[arg-type]
