"""Every shared vector file (tests/vectors/*.json, one shape: see tests/vectors/shape.py) against
the installed wheel, with one generic runner. Only the adapter table is specific to Python: how
each ``function`` a group names is called, and the value it gives back."""

import json
from types import SimpleNamespace

import pytest
import royaltykit as rk
from conftest import body_bytes, load

FILES = ["webhook.json", "dedup.json", "retry.json", "export.json", "api_error.json", "requests.json", "token.json", "receiver.json"]


class Unrepresentable(Exception):
    """The input cannot be written with this language's types (the call is refused before it
    reaches the core); only a case that expects an error may be unrepresentable."""


# ---- the generic runner -------------------------------------------------------------------------

_MISSING = object()


def _member(actual, key):
    if isinstance(actual, dict):
        return actual.get(key, _MISSING)
    # The parsed response's `message` (the record's field in Rust and Kotlin) is an ApiError's
    # `server_message` here: str(e) is the core's whole sentence.
    if key == "message" and isinstance(actual, rk.ApiError):
        return actual.server_message
    if key == "message" and isinstance(actual, BaseException):
        return str(actual)
    return getattr(actual, key, _MISSING)


_CHECKS = {"_prefix": lambda got, want: got.startswith(want), "_max_len": lambda got, want: len(got) <= want,
           "_count": lambda got, want: len(got) == want}


def mismatch(expected, actual):
    """Why ``actual`` does not match ``expected`` (a subset match, see shape.py), or None."""
    if isinstance(expected, dict):
        for k, want in expected.items():
            suffix = next((s for s in _CHECKS if k.endswith(s) and _member(actual, k[: -len(s)]) is not _MISSING), None)
            if suffix:
                if not _CHECKS[suffix](_member(actual, k[: -len(suffix)]), want):
                    return f"`{k}` {want!r} does not hold"
                continue
            got = _member(actual, k)
            if got is _MISSING:
                return f"`{k}` missing in {actual!r}"
            m = mismatch(want, got)
            if m:
                return f"{k}: {m}"
        return None
    if isinstance(expected, list):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            return f"expected {expected!r}, got {actual!r}"
        return next((f"[{i}]: {m}" for i, (w, g) in enumerate(zip(expected, actual)) if (m := mismatch(w, g))), None)
    if isinstance(expected, bool) or expected is None:
        return None if actual is expected else f"expected {expected!r}, got {actual!r}"
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
        return None if abs(expected - actual) < 1e-9 else f"expected {expected!r}, got {actual!r}"
    return None if expected == actual else f"expected {expected!r}, got {actual!r}"


CASES = [pytest.param(g["function"], t, id=f"{f}-{t['tcId']}-{g['function']}")
         for f in FILES for g in load(f)["testGroups"] for t in g["tests"]]


def test_every_file_is_counted():
    for f in FILES:
        data = load(f)
        assert sum(len(g["tests"]) for g in data["testGroups"]) == data["numberOfTests"]
    assert len(CASES) >= 700


@pytest.mark.parametrize("function,case", CASES)
def test_vector(function, case):
    adapter = ADAPTERS[function]
    try:
        value = adapter(case["input"])
    except Unrepresentable:
        assert case["result"] == "invalid", case["comment"]
        return
    except rk.RoyaltyKitError as e:
        assert case["result"] == "invalid", f"refused: {e.code} ({e})"
        problem = mismatch(case["error"], e)
        assert problem is None, f"{problem} ({e})"
        return
    assert case["result"] == "valid", f"accepted: {value!r}"
    problem = mismatch(case["expected"], value)
    assert problem is None, problem


# ---- the adapter table ---------------------------------------------------------------------------


def raw(b):
    return None if b is None else body_bytes(b)


def pairs(headers):
    return [tuple(h) for h in headers or []]


def descriptor(d):
    assert "tok_ABC" not in repr(d) and "sec_1" not in repr(d), "repr hides credentials"
    return {"method": d.method, "path": d.path, "query": d.query, "headers": [list(h) for h in d.headers],
            "body": None if d.body is None else {"utf8": d.body.decode()}, "idempotency_key": d.idempotency_key,
            "idempotency_key_sent": d.idempotency_key_sent}


def secrets(items):
    """A vector's secrets: strings, or ``{secret, valid_until}`` as ``WebhookSecret``."""
    return [s if isinstance(s, str) else rk.WebhookSecret(s["secret"], valid_until=s["valid_until"]) for s in items]


def verify_webhook(i):
    """verify_webhook, and the reusable WebhookVerifier, which must agree."""
    opts = {{"tolerance": "tolerance_seconds"}.get(k, k): i[k] for k in ("tolerance", "max_body_bytes") if k in i}
    run = lambda: rk.verify_webhook(pairs(i["headers"]), body_bytes(i["body"]), secrets(i["secrets"]), now=i["now"], **opts)  # noqa: E731

    def outcome(f):
        try:
            return f().content_key
        except rk.RoyaltyKitError as e:
            return e.code

    try:
        verifier = rk.WebhookVerifier(secrets(i["secrets"]), **opts)
    except rk.WebhookVerificationError:
        pass
    else:
        assert outcome(lambda: verifier.verify(pairs(i["headers"]), body_bytes(i["body"]), now=i["now"])) == outcome(run)
    return run()


def rate_budget(i):
    b = rk.RateBudget.preset(i["preset"]) if "preset" in i else rk.RateBudget([tuple(w) for w in i["windows"]])
    out = []
    for op in i["ops"]:
        got = [b.try_acquire(op["now"]) for _ in range(op.get("repeat", 1))]
        assert all(d == got[0] for d in got), "repeats give the same decision"
        out.append(got[0])
    return out


def dedup_window(i):
    w = rk.DedupWindow(i["capacity"], i["ttl_seconds"])
    return [w.check_and_insert(op["key"], op["now"]) for op in i["ops"]]


def dedup_claims(i):
    w = rk.DedupWindow(i["capacity"], i.get("ttl_seconds"), lease_seconds=i.get("lease_seconds"))
    calls = {"claim": w.claim, "commit": w.commit, "release": w.release}
    return [calls[op["op"]](op["key"], op["now"]) for op in i["ops"]]


def backoff_delay(i):
    p = i.get("policy")
    if p is None:
        return rk.backoff_delay(i["attempt"], random=i["random"])
    policy = rk.BackoffPolicy(p["steps"], band=tuple(p["band"]) if p["band"] else None, jitter=p["jitter"], cap_seconds=p["cap_seconds"])
    return rk.backoff_delay(i["attempt"], random=i["random"], policy=policy)


LIST_KEYWORDS = {"limit", "cursor", "export_class", "status", "format"}


def validate_export_list_query(i):
    kwargs = dict(i["query"])
    if set(kwargs) - LIST_KEYWORDS:
        with pytest.raises(TypeError):  # only the named members exist as keywords
            rk.validate_export_list_query(**kwargs)
        raise Unrepresentable
    return rk.validate_export_list_query(**kwargs)


def parse_token_response(i):
    tk = rk.parse_token_response(i["status"], pairs(i["headers"]), raw(i["body"]), tenant_id=i["tenant_id"],
                                 requested_scopes=i["requested_scopes"], now=i["now"])
    assert tk.access_token not in repr(tk), "repr hides the token"
    return tk


def build_request(i):
    p = i["params"]
    return descriptor(rk.build_request(i["operation_id"], path=p["path"], query=pairs(p["query"]), body=raw(p["body"]), token=p["token"] and (rk.BearerToken.reports(p["token"]["value"], p["token"].get("tenant_id")) if p["token"]["api"] == "reports" else rk.BearerToken.enterprise(p["token"]["value"])),
                                       tenant_id=p["tenant_id"], user_id=p["user_id"], idempotency_key=p["idempotency_key"],
                                       idempotency_header=p["idempotency_header"], request_id=p["request_id"],
                                       key_namespace=p["key_namespace"], key_random=bytes.fromhex(p["key_random"])))


def redis_dedup_command(i):
    p = rk.RedisDedupProtocol(prefix=i.get("prefix"), ttl_seconds=i.get("ttl_seconds"), lease_seconds=i.get("lease_seconds"))
    return p.state_command(i["key"]) if i["op"] == "state" else getattr(p, f"{i['op']}_command")(i["key"], i["token"])


def redis_inbox_command(i):
    p = rk.RedisInboxProtocol(prefix=i.get("prefix"), ttl_seconds=i.get("ttl_seconds"), lease_seconds=i.get("lease_seconds"))
    op = i["op"]
    if op == "enqueue":
        return p.enqueue_command(i["key"], i["delivery_id"], i["event"], body_bytes(i["body"]).decode(), i["now"])
    if op in ("claim", "counts", "purge"):
        return getattr(p, f"{op}_command")(i["now"])
    if op == "mark_done":
        return p.mark_done_command(i["key"], i["attempts"], i["now"])
    if op == "settle":
        return p.settle_command(i["key"], i["attempts"], i["poison"], i["retry_at"], i["error"])
    if op == "poisoned":
        return p.poisoned_command(i["limit"])
    assert op in ("retry", "lookup"), op
    return getattr(p, f"{op}_command")(i["key"])


def redis_inbox_reply(i):
    read = {"claim": rk.RedisInboxProtocol.claim_reply, "poisoned": rk.RedisInboxProtocol.poisoned_reply,
            "counts": rk.RedisInboxProtocol.counts_reply, "added": rk.RedisInboxProtocol.added_reply,
            "lookup": rk.RedisInboxProtocol.lookup_reply}[i["op"]]
    return read(i["reply"])


def _secret_text(secret):
    """The text of a WebhookSecret, which never shows it: found by signing with it and with each candidate."""
    for candidate in ("whsec_new", "whsec_old"):
        if rk.sign_webhook(secret, b"{}", timestamp=1, delivery_id="d") == rk.sign_webhook(candidate, b"{}", timestamp=1, delivery_id="d"):
            return candidate
    return None


def revealed_secret(i):
    r = rk.revealed_secret(body_bytes(i["body"]))
    shown = [s.secret for s in r.secrets(i["previous"])]
    assert not [s for s in shown if s in repr(r) or s in str(r)], "repr hides the secrets"
    return {"secrets": [{"secret": s.secret, "valid_until": s.valid_until} for s in r.secrets(i["previous"])],
            "previous_valid_until": r.previous_valid_until, "reference": r.reference, "record": json.loads(r.record)}


def route_event(i):
    """The core's Route for the registrations (EventRoutes), and the EventRouter a user holds,
    which must refuse the same names (in both forms, at once) and run exactly the handlers that
    Route names: the ``on`` handlers at ``named``, then every ``on_any`` handler, then the
    fallback."""
    routes, router, ran = rk.EventRoutes(), rk.EventRouter(), []
    on, any_, fallback = [], [], None
    for k, registration in enumerate(i["registrations"]):
        handler = (lambda k: lambda delivery: ran.append(k))(k)
        if "on" in registration:
            name = registration["on"]
            try:
                rk.EventRouter().on(name)  # the decorator form checks the name at once too
                decorator_refused = False
            except rk.InvalidArgumentError:
                decorator_refused = True
            try:
                router.on(name, handler)  # raises the vector's error
            except rk.InvalidArgumentError:
                assert decorator_refused
                raise
            assert not decorator_refused
            routes.on(name)
            on.append(k)
        elif registration.get("on_any"):
            router.on_any(handler)
            routes.on_any()
            any_.append(k)
        else:
            assert registration.get("otherwise"), registration
            router.otherwise(handler)
            routes.otherwise()
            fallback = k
    route = routes.route(i["event"])
    assert router(SimpleNamespace(event=SimpleNamespace(name=i["event"]))) is None
    assert ran == [on[n] for n in route.named] + (any_ if route.any else []) + ([fallback] if route.fallback else []), ran
    return route


ADAPTERS = {
    "verify_webhook": verify_webhook,
    "plan_receipt": lambda i: rk.plan_receipt(i["namespace"], rk.verify_webhook(pairs(i["headers"]), body_bytes(i["body"]), i["secrets"], now=i["now"]),
                                              claim_content_key=i.get("claim_content_key", False)),
    "resource_path": lambda i: {"path": rk.resource_path(i["resource_url"])},
    "revealed_secret": revealed_secret,
    "route_event": route_event,
    "active_secrets": lambda i: [{"secret": _secret_text(s), "valid_until": s.valid_until}
                                 for s in rk.active_secrets(i["current"], i["previous"], i["previous_valid_until"], now=i["now"])],
    "decide_claims": lambda i: rk.decide_claims(i["states"]),
    "redis_dedup_command": redis_dedup_command,
    "redis_dedup_reply": lambda i: {"claim": rk.RedisDedupProtocol.claim_reply, "state": rk.RedisDedupProtocol.state_reply}.get(
        i["op"], rk.RedisDedupProtocol.guarded_reply)(i["reply"]),
    "redis_inbox_command": redis_inbox_command,
    "redis_inbox_reply": redis_inbox_reply,
    "delivery_key": lambda i: rk.delivery_key(i["namespace"], i["delivery_id"]),
    "event_key": lambda i: rk.event_key(i["namespace"], SimpleNamespace(
        name=i["name"], resource_type=i["resource_type"], resource_reference=i["resource_reference"], occurred_at_text=i["occurred_at"])),
    "content_key": lambda i: rk.content_key(i["secret"], i["timestamp"], body_bytes(i["body"])),
    "idempotency_key": lambda i: rk.idempotency_key(i["namespace"], i["operation_id"], i["request_id"]),
    "dedup_window": dedup_window,
    "dedup_claims": dedup_claims,
    "decide_retry": lambda i: rk.decide_retry(
        i["retry_class"], attempt=i["attempt"], status=i.get("status"), headers=pairs(i.get("headers")), transport=i.get("transport"),
        elapsed_seconds=i["elapsed_seconds"], token_refreshed=i["token_refreshed"], random=i["random"], now=i["now"],
        idempotency_key_sent=i.get("idempotency_key_sent", False),
        max_attempts=i.get("max_attempts"), max_elapsed_seconds=i.get("max_elapsed_seconds")),
    "webhook_retry_schedule": lambda i: rk.webhook_retry_schedule(),
    "webhook_next_attempt_at": lambda i: rk.webhook_next_attempt_at(i["first_attempt_at"], i["attempts_made"]),
    "webhook_gives_up_at": lambda i: rk.webhook_gives_up_at(i["first_attempt_at"]),
    "backoff_delay": backoff_delay,
    "parse_retry_after": lambda i: rk.parse_retry_after(i["value"], i["now"]),
    "rate_budget": rate_budget,
    "parse_api_error": lambda i: rk.parse_api_error(i["api"], i["status"], pairs(i["headers"]), raw(i["body"]),
                                                    operation_id=i["operation_id"], now=i["now"]),
    "api_error_message": lambda i: str(rk.parse_api_error(i["api"], i["status"], pairs(i["headers"]), raw(i["body"]),
                                                          operation_id=i["operation_id"], now=i["now"])),
    "build_request": build_request,
    "call_failed_message": lambda i: rk.call_failed_message(i["operation"], i["base_url"], i["reason"], i["attempts"], i["cause"]),
    "export_interrupted_message": lambda i: rk.export_interrupted_message(i["export_id"]),
    "client_timeouts": lambda i: dict(zip(("connect_seconds", "read_seconds"),
                                          rk.client_timeouts(i["connect_timeout"], i["read_timeout"]))),
    "check_base_url": lambda i: rk.check_base_url(i["base_url"], i["allow_insecure_http"]),
    "build_token_request": lambda i: descriptor(rk.build_token_request(i["client_id"], i["client_secret"], i["tenant_id"], i["scopes"])),
    "build_enterprise_token_request": lambda i: descriptor(rk.build_enterprise_token_request(i["api_key"], i["api_secret"])),
    "parse_token_response": parse_token_response,
    "parse_enterprise_token_response": lambda i: rk.parse_enterprise_token_response(i["status"], pairs(i["headers"]), raw(i["body"]),
                                                                                    now=i["now"]),
    "parse_api_session": lambda i: rk.parse_api_session(i["status"], pairs(i["headers"]), raw(i["body"]), now=i["now"]),
    "missing_scopes": lambda i: rk.missing_scopes(i["granted"], i["operation_id"]),
    "response_notices": lambda i: rk.response_notices(pairs(i["headers"])),
    "operation": lambda i: rk.operation(i["operation_id"]),
    "export_state": lambda i: rk.export_state(i["state"]),
    "validate_export_command": lambda i: rk.validate_export_command(i["state"], i["command"]),
    "export_poll_decision": lambda i: rk.export_poll_decision(i["state"], i["attempt"], random=i["random"], max_polls=i.get("max_polls")),
    "check_export_download": lambda i: rk.check_export_download(i["status"], pairs(i["headers"]), raw(i.get("body"))) or "ok",
    "validate_export_list_query": validate_export_list_query,
    "step_up_satisfies": lambda i: rk.step_up_satisfies(i["requirement"], i["kind"], i["at"], now=i["now"],
                                                        max_age_seconds=i["max_age_seconds"]),
}
