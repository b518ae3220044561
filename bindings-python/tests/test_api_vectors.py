"""api_error.json, requests.json and token.json against the installed wheel."""

import pytest
import royaltykit as rk
from conftest import load

ERRORS = load("api_error.json")["cases"]
REQUESTS = load("requests.json")["cases"]
TOKEN = load("token.json")
assert len(ERRORS) >= 60 and len(REQUESTS) >= 40


def raw(b):
    if b is None:
        return None
    return b["utf8"].encode() if "utf8" in b else bytes.fromhex(b["hex"])


@pytest.mark.parametrize("c", ERRORS, ids=lambda c: f"tc{c['tcId']}")
def test_api_error_vector(c):
    i = c["input"]
    run = lambda: rk.parse_api_error(i["api"], i["status"], [tuple(h) for h in i["headers"]], raw(i["body"]),  # noqa: E731
                                     operation_id=i["operation_id"], now=i["now"])
    if "error" in c:
        with pytest.raises(rk.InvalidArgumentError):
            run()
        return
    e = run()
    assert isinstance(e, rk.ApiError) and isinstance(e, Exception)
    x = c["expected"]
    assert {"kind": e.kind, "reason": e.reason, "message": str(e), "body_code": e.body_code, "field_errors": e.field_errors,
            "retry_after_seconds": e.retry_after_seconds, "declared": e.declared} == {k: v for k, v in x.items() if k != "raw_body_prefix"}
    if "raw_body_prefix" in x:
        assert e.raw_body.startswith(x["raw_body_prefix"])


@pytest.mark.parametrize("c", REQUESTS, ids=lambda c: f"tc{c['tcId']}")
def test_request_vector(c):
    p = c["params"]
    run = lambda: rk.build_request(c["operation_id"], path=p["path"], query=[tuple(q) for q in p["query"]], body=raw(p["body"]),  # noqa: E731
                                   token=p["token"], tenant_id=p["tenant_id"], user_id=p["user_id"],
                                   idempotency_key=p["idempotency_key"], idempotency_header=p["idempotency_header"])
    if "error" in c:
        with pytest.raises(rk.RequestBuildError) as info:
            run()
        assert info.value.code == c["error"], str(info.value)
        return
    d = run()
    got = {"method": d.method, "path": d.path, "query": d.query, "headers": [list(h) for h in d.headers],
           "body": None if d.body is None else {"utf8": d.body.decode()}, "idempotency_key": d.idempotency_key}
    assert got == c["expected"]
    assert "tok_ABC" not in repr(d)


@pytest.mark.parametrize("c", TOKEN["build"], ids=lambda c: c["comment"])
def test_token_build_vector(c):
    i = c["input"]
    run = lambda: rk.build_token_request(i["client_id"], i["client_secret"], i["tenant_id"], i["scopes"])  # noqa: E731
    if "error" in c:
        with pytest.raises(rk.RequestBuildError):
            run()
        return
    d = run()
    assert {"method": d.method, "path": d.path, "headers": [list(h) for h in d.headers], "body": {"utf8": d.body.decode()}} == c["expected"]
    assert d.headers[1][1] not in repr(d)


@pytest.mark.parametrize("c", TOKEN["parse"], ids=lambda c: c["comment"])
def test_token_parse_vector(c):
    i = c["input"]
    run = lambda: rk.parse_token_response(i["status"], [tuple(h) for h in i["headers"]], raw(i["body"]),  # noqa: E731
                                          requested_scopes=i["requested_scopes"], now=i["now"])
    if c.get("error") == "api_error":
        with pytest.raises(rk.ApiError) as info:
            run()
        assert (info.value.kind, info.value.reason) == (c["api_error"]["kind"], c["api_error"].get("reason"))
        return
    if "error" in c:
        with pytest.raises(rk.TokenResponseError) as info:
            run()
        assert info.value.code == c["error"]
        return
    t = run()
    assert {"access_token": t.access_token, "token_type": t.token_type, "expires_in": t.expires_in, "expires_at": t.expires_at,
            "refresh_at": t.refresh_at, "scopes": t.scopes, "missing_scopes": t.missing_scopes, "warnings": len(t.warnings)} == c["expected"]
    assert t.access_token not in repr(t)


@pytest.mark.parametrize("c", TOKEN["build_enterprise"] + TOKEN["parse_enterprise"], ids=lambda c: c["comment"])
def test_enterprise_token_vector(c):
    i = c["input"]
    if "api_key" in i:
        run = lambda: rk.build_enterprise_token_request(i["api_key"], i["api_secret"])  # noqa: E731
        if "error" in c:
            with pytest.raises(rk.RequestBuildError):
                run()
            return
        d = run()
        assert {"method": d.method, "path": d.path, "headers": [list(h) for h in d.headers], "body": d.body} == c["expected"]
        assert "sec_1" not in repr(d)
        return
    run = lambda: rk.parse_enterprise_token_response(i["status"], i["headers"], raw(i["body"]), now=i["now"])  # noqa: E731
    if c.get("error") == "api_error":
        with pytest.raises(rk.ApiError) as info:
            run()
        assert (info.value.kind, info.value.reason) == (c["api_error"]["kind"], c["api_error"]["reason"])
    elif "error" in c:
        with pytest.raises(rk.TokenResponseError):
            run()
    else:
        t = run()
        assert {"token": t.token, "expires_at": t.expires_at, "refresh_at": t.refresh_at} == c["expected"]
        assert t.token not in repr(t)


@pytest.mark.parametrize("c", TOKEN["missing_scopes"], ids=lambda c: c["comment"])
def test_missing_scopes_vector(c):
    if "error" in c:
        with pytest.raises(rk.InvalidArgumentError):
            rk.missing_scopes(c["granted"], c["operation_id"])
    else:
        assert rk.missing_scopes(c["granted"], c["operation_id"]) == c["expected"]


@pytest.mark.parametrize("c", TOKEN["notices"], ids=lambda c: c["comment"])
def test_notices_vector(c):
    n = rk.response_notices([tuple(h) for h in c["headers"]])
    assert {"deprecated": n.deprecated, "deprecated_at": n.deprecated_at, "sunset_at": n.sunset_at, "link": n.link} == c["expected"]


def test_catalog_and_host_conversions():
    ops = rk.operations()
    assert sum(o.api == "reports" for o in ops) == 44 and sum(o.api == "enterprise" for o in ops) == 14
    assert rk.operation("getPlatformExport").scope == "exports:write"
    with pytest.raises(rk.InvalidArgumentError):
        rk.operation("nope")
    t = "0f8fad5b-d9cb-469f-a165-70867728950e"
    d = rk.build_request("listPlatformExports", query={"limit": 20, "cursor": None}, token="t", tenant_id=t)
    assert d.query == "limit=20" and d.url("https://reports.example/") == "https://reports.example/api/platform/v1/exports?limit=20"
    c = rk.build_request("createPlatformExport", body={"format": "csv"}, token="t", tenant_id=t)
    assert c.body == b'{"format":"csv"}'
    with pytest.raises(TypeError):
        rk.build_request("listPlatformExports", query={"limit": 1.5})
    e = rk.parse_api_error("reports", 503, {"Retry-After": "7"}, b"")
    with pytest.raises(rk.ApiError):
        raise e
