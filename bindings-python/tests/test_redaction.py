"""No public object or error built from a secret prints it (repr, str, vars)."""

import json

import royaltykit as rk

SECRET = "whsec_REDACTION_SECRET_1"
TOKEN = "tok_REDACTION_TOKEN_2"
CLIENT_SECRET = "cs_REDACTION_CLIENT_SECRET_3"
API_SECRET = "as_REDACTION_API_SECRET_4"
TENANT = "0f8fad5b-d9cb-469f-a165-70867728950e"


def test_no_secret_in_any_printed_object_or_error():
    out = []
    show = lambda v: out.extend([repr(v), str(v), repr(getattr(v, "__dict__", ""))])  # noqa: E731
    body = b'{"event":"x","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}'
    h = rk.sign_webhook(SECRET, body, timestamp=1000, delivery_id="d")
    v = rk.WebhookVerifier([SECRET])
    show(v)
    show(v.verify(h, body, now=1000))
    for b, now in [(body, 9999), (b"x", 1000), (b"{}", 1000)]:
        try:
            v.verify(h, b, now=now)
        except rk.RoyaltyKitError as e:
            show(e)
    try:
        rk.WebhookVerifier([SECRET, ""])
    except rk.RoyaltyKitError as e:
        show(e)
    show(rk.WebhookSecret(SECRET, valid_until=1000))
    show(rk.WebhookVerifier([rk.WebhookSecret(SECRET, valid_until=1000)]))
    show(rk.build_request("listPlatformExports", token=rk.BearerToken.reports(TOKEN, TENANT), tenant_id=TENANT))
    show(rk.build_token_request("cli", CLIENT_SECRET, TENANT))
    show(rk.build_enterprise_token_request("key", API_SECRET))
    show(rk.parse_token_response(200, {"Cache-Control": "no-store"}, json.dumps({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 60}), tenant_id="0f8fad5b-d9cb-469f-a165-70867728950e"))
    show(rk.parse_enterprise_token_response(200, {}, json.dumps({"token": TOKEN, "expires_at": None})))
    try:
        rk.build_request("listPlatformExports", query={"access_token": TOKEN}, token=rk.BearerToken.reports(TOKEN, TENANT), tenant_id=TENANT)
    except rk.RoyaltyKitError as e:
        show(e)
    show(rk.DedupWindow(10, 60))
    # a subscription's reveal-once secret: the object, its parts, and an answer naming no secret
    revealed = rk.revealed_secret(json.dumps({"data": {"reference": "wh_1", "secret": SECRET}}))
    show(revealed)
    show(revealed.secret)
    show(revealed.secrets(SECRET + "_previous"))
    out.append(revealed.record)
    rotated = rk.revealed_secret(json.dumps({"new_secret": SECRET, "previous_secret_valid_until": 1000}))
    show(rotated)
    show(rotated.secrets(previous=SECRET))
    try:
        rk.revealed_secret(json.dumps({"data": {"signing_key": SECRET}}))
    except rk.RoyaltyKitError as e:
        show(e)
    leaks = [(s, o) for o in out for s in (SECRET, TOKEN, CLIENT_SECRET, API_SECRET) if s in o]
    assert not leaks
    assert len(out) >= 30
