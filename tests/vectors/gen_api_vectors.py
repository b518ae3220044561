#!/usr/bin/env python3
"""Writes api_error.json, requests.json and token.json. Independent of royaltykit: expectations
are written from ../shared/spec/*.md; Basic headers, derived idempotency keys and dates are
computed here with base64, hashlib (keys.py) and email.utils/calendar.
"""
import base64
import email.utils
import json
import os

from keys import idempotency_key, random_idempotency_key
import shape

HERE = os.path.dirname(os.path.abspath(__file__))
NOW = 1_795_320_000
T = "0f8fad5b-d9cb-469f-a165-70867728950e"  # tenant
U = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"  # a user / another UUID
TOKEN = "tok_ABC.def-123~+/="


def body_field(b):
    if b is None:
        return None
    try:
        return {"utf8": b.decode("utf-8")}
    except UnicodeDecodeError:
        return {"hex": b.hex()}


# ============================ api_error.json =====================================================
errors = []
STATUS_TEXT = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
               409: "Conflict", 410: "Gone", 422: "Unprocessable Content", 429: "Too Many Requests", 500: "Internal Server Error",
               502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 418: "Client Error"}
KIND = {400: "bad_request", 401: "unauthenticated", 403: "forbidden", 404: "not_found", 410: "not_found", 408: "timeout",
        504: "timeout", 409: "conflict", 422: "validation", 429: "rate_limited", 503: "unavailable", 500: "server_error",
        502: "server_error", 418: "other"}


def err(comment, api, status, body, *, headers=(), operation=None, message=None, reason=None, code=None, fields=None,
        retry_after=None, declared=None, raw_prefix=None):
    b = body if isinstance(body, bytes) else json.dumps(body).encode()
    case = {"tcId": len(errors) + 1, "comment": comment,
            "input": {"api": api, "status": status, "headers": [list(h) for h in headers], "body": body_field(b),
                      "operation_id": operation, "now": NOW},
            "expected": {"kind": KIND[status], "reason": reason, "message": message if message is not None else STATUS_TEXT[status],
                         "body_code": code, "field_errors": fields or {}, "retry_after_seconds": retry_after, "declared": declared}}
    if raw_prefix is not None:
        # `_prefix` and `_max_len` name checks of `raw_body` (see shape.py): the body as sent starts
        # it, and it is kept to at most 4 KiB (plus an ellipsis)
        case["expected"]["raw_body_prefix"] = raw_prefix
        case["expected"]["raw_body_max_len"] = 4 * 1024 + 3
    errors.append(case)


def bad_err(comment, **inp):
    base = {"api": "reports", "status": 400, "headers": [], "body": {"utf8": ""}, "operation_id": None, "now": NOW}
    base.update(inp)
    errors.append({"tcId": len(errors) + 1, "comment": comment, "input": base, "error": "invalid_argument"})


E = "enterprise"
R = "reports"
# enterprise: the four documented bodies (statuses not shown, so several are tried)
err("enterprise: missing bearer token", E, 401, {"success": False, "message": "Missing bearer token"}, message="Missing bearer token", reason="missing_bearer_token")
err("enterprise: action unauthorized", E, 403, {"success": False, "message": "This action is unauthorized."}, message="This action is unauthorized.", reason="action_unauthorized")
err("enterprise: resource not found", E, 404, {"success": False, "message": "Resource not found"}, message="Resource not found", reason="resource_not_found")
err("enterprise: validation failed (422)", E, 422, {"success": False, "message": "Validation failed.", "errors": {"title": ["The title field is required."]}},
    message="Validation failed.", reason="validation_failed", fields={"title": ["The title field is required."]})
err("enterprise: validation failed on 400: kind from status, reason from body", E, 400, {"success": False, "message": "Validation failed.", "errors": {"percentage": ["Must be at most 100.", "Must be a number."]}},
    message="Validation failed.", reason="validation_failed", fields={"percentage": ["Must be at most 100.", "Must be a number."]})
err("enterprise: several fields", E, 422, {"success": False, "message": "Validation failed.", "errors": {"title": ["a"], "end_date": ["b", "c"]}},
    message="Validation failed.", reason="validation_failed", fields={"end_date": ["b", "c"], "title": ["a"]})
err("enterprise: field error as a plain string", E, 422, {"success": False, "message": "Validation failed.", "errors": {"name": "bad"}},
    message="Validation failed.", reason="validation_failed", fields={"name": ["bad"]})
err("enterprise: message with a trailing period variant", E, 404, {"success": False, "message": "Resource not found."}, message="Resource not found.", reason="resource_not_found")
err("enterprise: message in another case", E, 401, {"success": False, "message": "missing bearer token"}, message="missing bearer token", reason="missing_bearer_token")
err("enterprise: an undocumented message is kept, no reason", E, 403, {"success": False, "message": "Suspended organization"}, message="Suspended organization")
err("enterprise: HTML from a proxy", E, 502, b"<html><body><h1>502 Bad Gateway</h1></body></html>", raw_prefix="<html>")
err("enterprise: empty body", E, 500, b"")
err("enterprise: 503 with Retry-After", E, 503, b"", headers=[("Retry-After", "120")], retry_after=120)
err("enterprise: 429 with an HTTP-date Retry-After", E, 429, {"success": False, "message": "Too Many Attempts."}, headers=[("retry-after", email.utils.formatdate(NOW + 30, usegmt=True))],
    message="Too Many Attempts.", retry_after=30)
err("enterprise: 429 with garbage Retry-After", E, 429, b"", headers=[("Retry-After", "soon")])
# "wait at least Retry-After" (enterprise Errors, client behaviour): the value is reported in full, never capped
err("reports: 429 with Retry-After 7200 is reported in full", R, 429, b"", headers=[("Retry-After", "7200")], retry_after=7200)
err("enterprise: operation given, the spec declares no statuses", E, 409, {"success": False, "message": "Conflict"}, operation="createEnterpriseWebhook", message="Conflict")
err("enterprise: errors without a message", E, 422, {"success": False, "errors": {"events": ["Unknown event."]}}, fields={"events": ["Unknown event."]})
# reporting: declared statuses of several operations
for s in [400, 401, 429, 503]:
    err(f"reporting token exchange: {s} is declared", R, s, b"", operation="exchangePlatformClientCredential", declared=True)
err("reporting token exchange: 404 is not declared", R, 404, b"", operation="exchangePlatformClientCredential", declared=False)
for s in [400, 401, 403, 409, 422, 429, 503]:
    err(f"analytics summary: {s} is declared", R, s, b"{}", operation="getPublishedAnalyticsSummary", declared=True)
err("analytics summary: 404 is not declared", R, 404, b"{}", operation="getPublishedAnalyticsSummary", declared=False)
err("get export: 404 is declared", R, 404, {"message": "Export not found"}, operation="getPlatformExport", message="Export not found", declared=True)
err("analytics readiness: 422 is not declared (no query parameters)", R, 422, b"{}", operation="getPublishedAnalyticsReadiness", declared=False)
err("export download: 409 declared", R, 409, {"message": "Export is not ready", "code": "export_not_ready"}, operation="downloadPlatformExport",
    message="Export is not ready", code="export_not_ready", declared=True)
err("export create: idempotency conflict", R, 409, {"message": "Idempotency key reused with another body", "code": "idempotency_conflict"}, operation="createPlatformExport",
    message="Idempotency key reused with another body", code="idempotency_conflict", declared=True)
err("logout: 422 is not declared", R, 422, b"", operation="logoutPlatformIdentity", declared=False)
err("api session: 503 is not declared", R, 503, b"", operation="getPlatformApiSession", declared=False)
# reporting: body shapes
err("OAuth invalid_client", R, 401, {"error": "invalid_client", "error_description": "Client authentication failed"}, message="Client authentication failed", reason="invalid_client", code="invalid_client")
err("OAuth invalid_scope", R, 400, {"error": "invalid_scope"}, reason="invalid_scope", code="invalid_scope")
err("OAuth unknown error value with a description", R, 400, {"error": "tenant_mismatch", "error_description": "Tenant does not match"}, message="Tenant does not match", reason="tenant_mismatch", code="tenant_mismatch")
err("error as free text", R, 500, {"error": "Something went wrong on our side"}, message="Something went wrong on our side")
err("error as a code-like word", R, 429, {"error": "rate_limited"}, code="rate_limited")
err("nested error object", R, 422, {"error": {"message": "limit is out of range", "code": "out_of_range"}}, message="limit is out of range", code="out_of_range")
err("nested error object with field errors", R, 422, {"error": {"message": "Invalid", "errors": {"limit": ["must be <= 100"]}}}, message="Invalid", fields={"limit": ["must be <= 100"]})
err("message and code", R, 403, {"message": "Scope exports:write required", "code": "insufficient_scope"}, message="Scope exports:write required", code="insufficient_scope")
err("numeric code is kept as text", R, 400, {"message": "Bad", "code": 1042}, message="Bad", code="1042")
err("RFC 9457 problem details", R, 422, {"type": "https://errors.example/out-of-range", "title": "Out of range", "status": 422, "detail": "limit must be 1 to 100"},
    message="limit must be 1 to 100", code="https://errors.example/out-of-range")
err("RFC 9457 with about:blank", R, 404, {"type": "about:blank", "title": "Not Found", "status": 404}, message="Not Found")
err("RFC 9457 with an errors extension", R, 422, {"title": "Invalid request", "errors": [{"pointer": "/limit", "detail": "too big"}]},
    message="Invalid request", fields={"/limit": ["too big"]})
err("errors as a list of field/message", R, 422, {"message": "Invalid", "errors": [{"field": "limit", "message": "too big"}, {"field": "limit", "message": "not a number"}, {"field": "cursor", "message": "bad"}]},
    message="Invalid", fields={"cursor": ["bad"], "limit": ["too big", "not a number"]})
err("errors as a list of strings", R, 400, {"errors": ["first problem", "second problem"]}, fields={"": ["first problem", "second problem"]})
err("errors as a map with a nested non-string is skipped", R, 422, {"errors": {"a": [{"x": 1}, "kept"], "b": None}}, fields={"a": ["kept"]})
err("a JSON array body falls back to the status", R, 400, b"[1,2,3]")
err("a JSON string body falls back", R, 500, b'"oops"')
err("truncated JSON falls back", R, 422, b'{"message": "Inval')
err("non-UTF-8 body falls back", R, 400, b"\xff\xfe\x00garbage", raw_prefix="\ufffd")
err("HTML 503 from a load balancer", R, 503, b"<!DOCTYPE html><title>Service Unavailable</title>", headers=[("Retry-After", "30")], retry_after=30, raw_prefix="<!DOCTYPE html>")
err("plain text body", R, 429, b"slow down")
err("whitespace-only message falls back", R, 400, {"message": "   "})
err("huge JSON (over 64 KiB) is not parsed", R, 500, json.dumps({"message": "x" * 70000}).encode(), raw_prefix='{"message": "xxx')
err("408 is a timeout", R, 408, b"")
err("504 is a timeout", R, 504, b"")
err("410 is not found", R, 410, b"")
err("418 is other", R, 418, b"")
err("deep nesting does not crash", R, 400, ("[" * 5000 + "]" * 5000).encode())
err("unknown members are ignored", R, 409, {"message": "State conflict", "trace_id": "abc", "details": {"state": "ready"}}, message="State conflict")
bad_err("status 99", status=99)
bad_err("status 600", status=600)
bad_err("unknown operation", operation_id="noSuchOperation")
bad_err("operation of the other API", api="enterprise", operation_id="createPlatformExport")

# ============================ requests.json ======================================================
reqs = []
ACCEPT = ["Accept", "application/json"]
BEARER = ["Authorization", "Bearer " + TOKEN]
TENANT = ["X-Tenant-ID", T]
CT = ["Content-Type", "application/json"]


# The host's RNG, injected: 16 bytes a binding would take from the OS. A request without a key
# or a request id gets a random key (one per logical request, DESIGN §2; never from the body, so
# two deliberately identical requests are both applied).
RANDOM = "00112233445566778899aabbccddeeff"
RK = random_idempotency_key(RANDOM)


def bearer(op, value=TOKEN, api=None):
    """A bearer token typed by the API that issued it (enterprise operation ids name the API); a reporting token is
    bound to the tenant it was obtained for (machine routes refuse one that is not)."""
    api = api or ("enterprise" if "Enterprise" in op else "reports")
    return {"api": api, "value": value, **({"tenant_id": T} if api == "reports" else {})}


def req(comment, op, *, path=None, query=(), body=None, token=TOKEN, tenant=T, user=None, key=None, key_header=None,
        method=None, epath=None, equery="", headers=None, ebody="same", ekey=None, error=None, request_id=None, key_namespace=None):
    params = {"path": path or {}, "query": [list(q) for q in query], "body": body_field(body),
              "token": token if token is None or isinstance(token, dict) else bearer(op, token),
              "tenant_id": tenant, "user_id": user, "idempotency_key": key, "idempotency_header": key_header,
              "request_id": request_id, "key_namespace": key_namespace, "key_random": RANDOM}
    c = {"tcId": len(reqs) + 1, "comment": comment, "operation_id": op, "params": params}
    if error:
        c["error"] = error
    else:
        c["expected"] = {"method": method, "path": epath, "query": equery, "headers": headers,
                         "body": body_field(body) if ebody == "same" else ebody, "idempotency_key": ekey,
                         # sent only when a header carries it (reporting: the key's parameter name is not shown)
                         "idempotency_key_sent": ekey is not None and any(h[1] == ekey for h in headers or [])}
    reqs.append(c)


SUM = "/api/platform/v1/analytics/summary"
req("analytics summary with its required members", "getPublishedAnalyticsSummary", query=[("currency", "EUR"), ("currency_basis", "reporting")],
    method="GET", epath=SUM, equery="currency=EUR&currency_basis=reporting", headers=[ACCEPT, BEARER, TENANT])
req("summary without currency", "getPublishedAnalyticsSummary", query=[("currency_basis", "reporting")], error="missing_parameter")
req("filter options need basis", "listPublishedAnalyticsFilterOptions", query=[("currency", "EUR"), ("currency_basis", "reporting")], error="missing_parameter")
BR = [("currency", "EUR"), ("currency_basis", "reporting"), ("basis", "gross")]
req("breakdown needs dimension", "listPublishedAnalyticsBreakdown", query=BR, error="missing_parameter")
BRD = BR + [("dimension", "territory")]
req("breakdown with all required and limit 100", "listPublishedAnalyticsBreakdown", query=BRD + [("limit", "100")], method="GET",
    epath="/api/platform/v1/analytics/breakdown", equery="currency=EUR&currency_basis=reporting&basis=gross&dimension=territory&limit=100", headers=[ACCEPT, BEARER, TENANT])
for bad_limit in ["0", "101", "abc", "-1", "+5", "1.5"]:
    req(f"rates limit {bad_limit!r} is out of 1..100", "listPublishedObservedRates", query=BRD + [("limit", bad_limit)], error="invalid_parameter")
req("key of 160 characters", "listPublishedObservedRates", query=BRD + [("key", "k" * 160)], method="GET", epath="/api/platform/v1/analytics/rates",
    equery="currency=EUR&currency_basis=reporting&basis=gross&dimension=territory&key=" + "k" * 160, headers=[ACCEPT, BEARER, TENANT])
req("key of 161 characters", "listPublishedObservedRates", query=BRD + [("key", "k" * 161)], error="invalid_parameter")
req("cursor of 2049 characters", "listPublishedObservedRates", query=BRD + [("cursor", "c" * 2049)], error="invalid_parameter")
req("import filter must be a UUID", "getPublishedAnalyticsSummary", query=[("currency", "EUR"), ("currency_basis", "r"), ("import", "not-a-uuid")], error="invalid_parameter")
req("readiness takes no query", "getPublishedAnalyticsReadiness", query=[("currency", "EUR")], error="unknown_parameter")
req("unknown analytics parameter", "getPublishedAnalyticsSummary", query=[("currency", "EUR"), ("currency_basis", "r"), ("colour", "red")], error="unknown_parameter")
req("values are percent-encoded", "listPublishedObservedRates", query=BR + [("dimension", "territory"), ("key", "a b&c=d/é")], method="GET",
    epath="/api/platform/v1/analytics/rates", equery="currency=EUR&currency_basis=reporting&basis=gross&dimension=territory&key=a%20b%26c%3Dd%2F%C3%A9", headers=[ACCEPT, BEARER, TENANT])
req("a parameter given twice", "getPublishedAnalyticsSummary", query=[("currency", "EUR"), ("currency", "USD"), ("currency_basis", "r")], error="invalid_parameter")
req("the token never goes into the query", "listEnterpriseSubscriptions", query=[("access_token", TOKEN)], tenant=None, error="invalid_parameter")
req("bearer routes need a token", "getPlatformImport", path={"importRef": "imp_1"}, token=None, error="missing_parameter")
req("a token with a space is refused (header injection)", "getPlatformImport", path={"importRef": "imp_1"}, token="abc def", error="invalid_parameter")
req("a token with a newline is refused", "getPlatformImport", path={"importRef": "imp_1"}, token="abc\r\nX-Evil: 1", error="invalid_parameter")
# Reporting and enterprise tokens come from different exchanges (reporting: POST
# /api/platform/v1/oauth/token; enterprise: POST /api/v1/token) and authenticate only their own
# API's routes: a token of one is never sent to the other.
req("a reporting token is refused on an enterprise route", "listEnterpriseSubscriptions", token=bearer("x", api="reports"), tenant=None, error="invalid_parameter")
req("an enterprise token is refused on a reporting route", "getPlatformImport", path={"importRef": "imp_1"}, token=bearer("x", api="enterprise"), error="invalid_parameter")
req("machine routes need X-Tenant-ID (given, or from the token's tenant): with neither, missing_parameter", "getPlatformImport",
    path={"importRef": "imp_1"}, token=None, tenant=None, error="missing_parameter")
req("tenant must be a UUID", "getPlatformImport", path={"importRef": "imp_1"}, tenant="tenant-1", error="invalid_parameter")
# A reporting token remembers the tenant it was obtained for (reports spec, What the service does: "a tenant
# reference from one authenticated context must never be passed into another"): it is sent when no tenant is
# given, and another tenant is refused.
T_OTHER = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
TENANT_SPEC = "reports spec, What the service does: a tenant reference from one authenticated context must never be passed into another"
bound = dict(bearer("getPlatformImport"), tenant_id=T)
req("a token bound to its tenant sends that tenant when none is given", "getPlatformImport", path={"importRef": "imp_1"}, token=bound, tenant=None,
    method="GET", epath="/api/platform/v1/imports/imp_1", headers=[ACCEPT, BEARER, TENANT])
req("a token bound to its tenant, with the same tenant given (case aside)", "getPlatformImport", path={"importRef": "imp_1"}, token=bound, tenant=T.upper(),
    method="GET", epath="/api/platform/v1/imports/imp_1", headers=[ACCEPT, BEARER, ["X-Tenant-ID", T.upper()]])
req("a token obtained for tenant A is refused with X-Tenant-ID B", "getPlatformImport", path={"importRef": "imp_1"}, token=bound, tenant=T_OTHER,
    error="invalid_parameter")
reqs[-1]["parameter"] = "tenant_id"
req("a request id key is scoped to the token's tenant when none is given", "createPlatformExport", body=b'{"format":"csv"}', token=bound, tenant=None,
    request_id="job-7", key_header="Idempotency-Key", method="POST", epath="/api/platform/v1/exports",
    headers=[ACCEPT, BEARER, TENANT, ["Idempotency-Key", idempotency_key(T, "createPlatformExport", "job-7")], CT],
    ekey=idempotency_key(T, "createPlatformExport", "job-7"))
unbound = {"api": "reports", "value": TOKEN}
req("a reporting token not bound to a tenant (restored from a cache without it) is refused: it could go with any X-Tenant-ID",
    "getPlatformImport", path={"importRef": "imp_1"}, token=unbound, error="invalid_parameter")
reqs[-1]["parameter"] = "token"
for c in reqs[-5:]:
    c["spec"] = TENANT_SPEC
req("path parameters are percent-encoded", "getPlatformExport", path={"export": "exp/1?x=y#z"}, method="GET",
    epath="/api/platform/v1/exports/exp%2F1%3Fx%3Dy%23z", headers=[ACCEPT, BEARER, TENANT])
req("a missing path parameter", "getPlatformExport", error="missing_parameter")
req("an extra path parameter", "getPlatformExport", path={"export": "e1", "other": "x"}, error="unknown_parameter")
req("export list with a UUID cursor and filters", "listPlatformExports", query=[("cursor", U), ("limit", "50"), ("status", "ready")], method="GET",
    epath="/api/platform/v1/exports", equery=f"cursor={U}&limit=50&status=ready", headers=[ACCEPT, BEARER, TENANT])
req("export list cursor must be a UUID", "listPlatformExports", query=[("cursor", "page-2")], error="invalid_parameter")
EXP = b'{"export_class":"statements","format":"csv"}'
req("create export: a random key from the host (header name not shown: not sent)", "createPlatformExport", body=EXP, method="POST", epath="/api/platform/v1/exports",
    headers=[ACCEPT, BEARER, TENANT, CT], ekey=RK)
req("create export: the host names the key's header", "createPlatformExport", body=EXP, key_header="Idempotency-Key", method="POST", epath="/api/platform/v1/exports",
    headers=[ACCEPT, BEARER, TENANT, ["Idempotency-Key", RK], CT],
    ekey=RK)
req("create export: a given key is used", "createPlatformExport", body=EXP, key="my-key-1", method="POST", epath="/api/platform/v1/exports",
    headers=[ACCEPT, BEARER, TENANT, CT], ekey="my-key-1")
req("create export needs a body", "createPlatformExport", error="missing_parameter")
req("create export body must be JSON", "createPlatformExport", body=b"format=csv", error="invalid_parameter")
req("a key with a space is refused", "createPlatformExport", body=EXP, key="a b", error="invalid_parameter")
CMD = b'{"reason":"not needed"}'
for e in ["e-1", "e-2"]:
    req(f"cancel export {e}: a random key per logical request", "cancelPlatformExport", path={"export": e}, body=CMD, method="POST", epath=f"/api/platform/v1/exports/{e}/cancel",
        headers=[ACCEPT, BEARER, TENANT, CT], ekey=RK)
req("a GET takes no body", "getPlatformImport", path={"importRef": "imp_1"}, body=b"{}", error="unknown_parameter")
# One key per logical request (DESIGN §2): derived only from a request id the caller gives, under
# the tenant or organization; two identical creates with two ids get two keys and are both applied.
req("create export with a request id: the key comes from (tenant, operation, request id)", "createPlatformExport", body=EXP, request_id="job-42/export-1",
    method="POST", epath="/api/platform/v1/exports", headers=[ACCEPT, BEARER, TENANT, CT],
    ekey=idempotency_key(T, "createPlatformExport", "job-42/export-1"))
req("the same body under another request id gets another key", "createPlatformExport", body=EXP, request_id="job-42/export-2",
    method="POST", epath="/api/platform/v1/exports", headers=[ACCEPT, BEARER, TENANT, CT],
    ekey=idempotency_key(T, "createPlatformExport", "job-42/export-2"))
req("a request id under a named namespace", "createPlatformExport", body=EXP, request_id="job-42/export-1", key_namespace="tenant-a",
    method="POST", epath="/api/platform/v1/exports", headers=[ACCEPT, BEARER, TENANT, CT],
    ekey=idempotency_key("tenant-a", "createPlatformExport", "job-42/export-1"))
req("an enterprise request id needs the organization as namespace", "createEnterpriseWebhook", body=b'{"name":"x","endpoint_url":"https://hooks.example/x","events":[]}',
    tenant=None, request_id="sync-1", error="missing_parameter")
req("an enterprise request id under the organization", "createEnterpriseWebhook", body=b'{"name":"x","endpoint_url":"https://hooks.example/x","events":[]}',
    tenant=None, request_id="sync-1", key_namespace="org-7", method="POST", epath="/api/v1/webhooks",
    headers=[ACCEPT, BEARER, ["Idempotency-Key", idempotency_key("org-7", "createEnterpriseWebhook", "sync-1")], CT],
    ekey=idempotency_key("org-7", "createEnterpriseWebhook", "sync-1"))
req("a GET ignores a request id (a generic wrapper need not look idempotency up first): no key", "getPlatformImport", path={"importRef": "imp_1"},
    request_id="r", method="GET", epath="/api/platform/v1/imports/imp_1", headers=[ACCEPT, BEARER, TENANT], ebody=None)
req("a GET takes no idempotency key", "getPlatformImport", path={"importRef": "imp_1"}, key="k", error="unknown_parameter")
req("profile import: the body is optional", "profilePlatformImport", path={"importRef": "imp_1"}, method="POST", epath="/api/platform/v1/imports/imp_1/profile",
    headers=[ACCEPT, BEARER, TENANT], ebody=None, ekey=RK)
WH = b'{"name":"ddex","endpoint_url":"https://hooks.example.com/ddex","events":["ddex.delivery.failed"]}'
req("create webhook: a random Idempotency-Key from the host", "createEnterpriseWebhook", body=WH, tenant=None, method="POST", epath="/api/v1/webhooks",
    headers=[ACCEPT, BEARER, ["Idempotency-Key", RK], CT],
    ekey=RK)
req("create webhook with a given key and X-User-Id", "createEnterpriseWebhook", body=WH, tenant=None, user=U, key="wh-1", method="POST", epath="/api/v1/webhooks",
    headers=[ACCEPT, BEARER, ["X-User-Id", U], ["Idempotency-Key", "wh-1"], CT], ekey="wh-1")
for url in ["http://hooks.example.com/x", "https://user:pw@hooks.example.com/", "https://127.0.0.1/x", "https://10.0.0.5/", "https://172.16.3.4:8443/",
            "https://192.168.1.1/", "https://169.254.169.254/latest", "https://[::1]/", "https://[fe80::1]/", "https://[fd00::1]/",
            "https://[::ffff:127.0.0.1]/", "https://localhost/", "https://app.localhost/", "https://2130706433/", "https://0x7f.0.0.1/",
            "https://0.0.0.0/", "https://100.64.0.1/", "https:///nohost", "ftp://hooks.example.com/", "https://hooks.example.com:abc/",
            # IANA IPv4 and IPv6 special-purpose address registries (not globally reachable), and a
            # fully qualified local name
            "https://localhost./x", "https://app.localhost./x", "https://[64:ff9b::7f00:1]/x", "https://[::127.0.0.1]/x",
            "https://[2002:7f00:1::]/x", "https://[fec0::1]/x", "https://240.0.0.1/x", "https://192.0.0.8/x",
            "https://255.255.255.255/x", "https://198.18.0.1/x", "https://192.88.99.1/x", "https://[100::1]/x",
            "https://[2001::1]/x", "https://[64:ff9b:1::1]/x", "https://[3fff::1]/x", "https://[ff02::1]/x",
            "https://printer.local./x", "https://db.internal/x", "https://nas.home.arpa/x",
            # issue 24: IPv4-translated (::ffff:0:0:0/96), the rest of ::/8 (reserved by the IETF; only
            # 2000::/3 is global unicast), RFC 6761 special-use names, ports outside 1..65535
            "https://[::ffff:0:7f00:1]/", "https://[::ffff:0:5db8:d822]/", "https://[::1:0:0:1]/", "https://[1::1]/",
            "https://[4000::1]/", "https://[5f00::1]/", "https://localhost.localdomain/", "https://box.localdomain./x",
            "https://hooks.test/x", "https://hooks.invalid/x", "https://hooks.example.com:99999/x", "https://hooks.example.com:0/x",
            "https://93.184.216.34:65536/x", "https://[2606:4700::1111]:99999/x", "https://[2606:4700::1111]x/",
            # internationalised names are checked as the ASCII name they resolve as (IDNA, UTS 46): a name that maps
            # to a refused one is refused like it, and a malformed one is refused
            "https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/x", "https://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11/x",
            "https://b\u00fccher.local./x", "https://xn--a.example/x", "https://b\u00fccher..example/x"]:
    b = json.dumps({"name": "x", "endpoint_url": url, "events": []}).encode()
    req(f"endpoint {url} is refused", "createEnterpriseWebhook", body=b, tenant=None, error="invalid_endpoint_url")
    reqs[-1]["spec"] = "enterprise spec, Delivery contract: Endpoints must be HTTPS and resolve only to public addresses"
for url in ["https://93.184.216.34/hook", "https://[2606:4700::1111]/h", "https://HOOKS.Example.COM:8443/a?b=c",
            "https://[64:ff9b::5db8:d822]/h", "https://hooks.example.com./h", "https://hooks.example.com:65535/h",
            "https://[2606:4700::1111]:443/h", "https://hooks.example.com:/h",
            # an internationalised name (IDNA) like its punycode form
            "https://b\u00fccher.example/hook", "https://xn--bcher-kva.example/hook", "https://B\u00dcCHER.example:8443/h"]:
    b = json.dumps({"name": "x", "endpoint_url": url, "events": []}).encode()
    req(f"endpoint {url} is accepted", "createEnterpriseWebhook", body=b, tenant=None, key="k1", method="POST", epath="/api/v1/webhooks",
        headers=[ACCEPT, BEARER, ["Idempotency-Key", "k1"], CT], ekey="k1")
req("create webhook without endpoint_url", "createEnterpriseWebhook", body=b'{"name":"x","events":[]}', tenant=None, error="missing_parameter")
PATCH = b'{"active":false}'
req("update webhook: PATCH, reference encoded, no endpoint needed", "updateEnterpriseWebhook", path={"reference": "wh 1"}, body=PATCH, tenant=None, method="PATCH",
    epath="/api/v1/webhooks/wh%201", headers=[ACCEPT, BEARER, ["Idempotency-Key", RK], CT],
    ekey=RK)
req("delete webhook with a given key", "deleteEnterpriseWebhook", path={"reference": "wh_1"}, tenant=None, key="del-1", method="DELETE", epath="/api/v1/webhooks/wh_1",
    headers=[ACCEPT, BEARER, ["Idempotency-Key", "del-1"]], ebody=None, ekey="del-1")
req("replay: two path parameters", "replayEnterpriseWebhookDelivery", path={"reference": "wh_1", "deliveryReference": "dlv_9"}, tenant=None, method="POST",
    epath="/api/v1/webhooks/wh_1/deliveries/dlv_9/replay", headers=[ACCEPT, BEARER], ebody=None)
# The consumer workflow's canonical fetch (enterprise spec, Consumer workflow: "fetch the canonical resource URL
# with a bearer token"; Webhook payload: resource.url): the event's URL is sent as named when it is a path under
# /api/v1/, and refused before any request otherwise (the bearer token goes nowhere else).
CANON = "enterprise spec, Consumer workflow (fetch the canonical resource URL with a bearer token) and Webhook payload (resource.url)"
REL = "/api/v1/releases/5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
req("canonical fetch: the event's resource URL, as named", "fetchEnterpriseResource", path={"resource": REL}, tenant=None,
    method="GET", epath=REL, headers=[ACCEPT, BEARER])
reqs[-1]["spec"] = CANON
req("canonical fetch acting for a user", "fetchEnterpriseResource", path={"resource": "/api/v1/users/42/releases"}, tenant=None,
    user=U, method="GET", epath="/api/v1/users/42/releases", headers=[ACCEPT, BEARER, ["X-User-Id", U]])
reqs[-1]["spec"] = CANON
req("canonical fetch: an encoded character stays encoded (not encoded twice)", "fetchEnterpriseResource",
    path={"resource": "/api/v1/artists/A%20B"}, tenant=None, method="GET", epath="/api/v1/artists/A%20B", headers=[ACCEPT, BEARER])
reqs[-1]["spec"] = CANON
for url, why in [("https://evil.example/api/v1/releases/1", "another origin"), ("//evil.example/api/v1/releases/1", "an authority"),
                 ("/api/v1/../v2/token", "a dot segment"), ("/api/v1/releases/%2e%2e/x", "an encoded dot segment"),
                 ("/api/platform/v1/exports", "another API"), ("/api/v1/releases/1?token=x", "a query"),
                 ("/api/v1/releases/a%2Fb", "an encoded slash"), ("/api/v1/releases/a\\b", "a backslash")]:
    req(f"canonical fetch refuses {why} before any request: {url}", "fetchEnterpriseResource", path={"resource": url},
        tenant=None, error="invalid_resource_url")
    reqs[-1]["spec"] = CANON
req("canonical fetch needs the resource URL", "fetchEnterpriseResource", tenant=None, error="missing_parameter")
req("releases acting for a user", "listEnterpriseReleases", tenant=None, user=U, method="GET", epath="/api/v1/releases", headers=[ACCEPT, BEARER, ["X-User-Id", U]])
req("X-User-Id must be a UUID", "listEnterpriseReleases", tenant=None, user="42", error="invalid_parameter")
req("X-User-Id only on enterprise routes", "getPlatformImport", path={"importRef": "i"}, user=U, error="unknown_parameter")
req("X-Tenant-ID only on reporting machine routes", "listEnterpriseCountries", error="unknown_parameter")
req("subscriptions: declared and open parameters", "listEnterpriseSubscriptions", tenant=None, query=[("page", "2"), ("size", "10"), ("sort", "asc"), ("daterange", "2026-11-01"), ("q", "acme")],
    method="GET", epath="/api/v1/subscriptions", equery="page=2&size=10&sort=asc&daterange=2026-11-01&q=acme", headers=[ACCEPT, BEARER])
req("subscriptions sort must be asc or desc", "listEnterpriseSubscriptions", tenant=None, query=[("sort", "up")], error="invalid_parameter")
req("subscriptions page must be positive", "listEnterpriseSubscriptions", tenant=None, query=[("page", "0")], error="invalid_parameter")
req("subscriptions daterange must be a real date", "listEnterpriseSubscriptions", tenant=None, query=[("daterange", "2026-13-01")], error="invalid_parameter")
req("split update", "updateEnterpriseSplit", path={"uuid": U}, tenant=None, body=b'{"title":"A","percentage":50}', method="POST", epath=f"/api/v1/splits/{U}",
    headers=[ACCEPT, BEARER, CT])
req("human export: no bearer, no tenant (session transport not shown)", "getPlatformExportAsHuman", path={"export": "e1"}, token=None, tenant=None, method="GET",
    epath="/platform/v1/exports/e1", headers=[ACCEPT])
req("human routes take no bearer token", "getPlatformExportAsHuman", path={"export": "e1"}, tenant=None, error="unknown_parameter")
# The download returns the artifact (reports spec: "one complete artifact"; ExportFormat values not shown),
# not JSON: Accept: */*. It is checked whole by its Content-Length, so it is asked for unencoded
# (Accept-Encoding: identity): a client that asked for gzip gets more bytes than Content-Length says.
ACCEPT_ANY = ["Accept", "*/*"]
IDENTITY = ["Accept-Encoding", "identity"]
req("export download asks for any media type, unencoded: the artifact is CSV or another format", "downloadPlatformExport",
    path={"export": "e1"}, method="GET", epath="/api/platform/v1/exports/e1/download", headers=[ACCEPT_ANY, IDENTITY, BEARER, TENANT])
reqs[-1]["spec"] = "reports spec, Limits: export download: one complete artifact; Enumerated values of ExportFormat: not shown"
req("human export download asks for any media type too, unencoded", "downloadPlatformExportAsHuman", path={"export": "e1"}, token=None,
    tenant=None, method="GET", epath="/platform/v1/exports/e1/download", headers=[ACCEPT_ANY, IDENTITY])
reqs[-1]["spec"] = "reports spec, Limits: export download: one complete artifact; Enumerated values of ExportFormat: not shown"
# Dot segments: a path parameter `.` or `..` is left as is by percent-encoding, and HTTP clients
# normalise `/exports/../cancel` to `/cancel` (RFC 3986 §5.2.4): another route than the one named.
DOT_SPEC = "reports spec, Endpoints: Path parameters: session, importRef, export; enterprise spec: path uuid, reference, deliveryReference"
n_before = len(reqs)
for op, path, tenant in [("cancelPlatformExport", {"export": ".."}, T), ("getPlatformExport", {"export": "."}, T),
                         ("getPlatformImport", {"importRef": ".."}, T), ("revokePlatformIdentitySession", {"session": ".."}, None),
                         ("updateEnterpriseSplit", {"uuid": ".."}, None), ("replayEnterpriseWebhookDelivery", {"reference": "wh_1", "deliveryReference": ".."}, None),
                         ("testEnterpriseWebhook", {"reference": "."}, None)]:
    token = None if op.startswith("revokePlatformIdentity") else TOKEN
    req(f"{op}: path parameter {list(path.values())[-1]!r} is a dot segment, refused", op, path=path, tenant=tenant, token=token,
        body=b'{}' if op in ("cancelPlatformExport", "updateEnterpriseSplit", "revokePlatformIdentitySession") else None, error="invalid_parameter")
    reqs[-1]["parameter"] = "path." + list(path)[-1]
req("three dots are a name, not a dot segment", "getPlatformExport", path={"export": "..."}, method="GET",
    epath="/api/platform/v1/exports/...", headers=[ACCEPT, BEARER, TENANT])
req("an encoded dot segment stays a name: % is encoded", "getPlatformExport", path={"export": "%2e%2e"}, method="GET",
    epath="/api/platform/v1/exports/%252e%252e", headers=[ACCEPT, BEARER, TENANT])
req("a dot inside a value is kept", "getPlatformExport", path={"export": "exp.2026.csv"}, method="GET",
    epath="/api/platform/v1/exports/exp.2026.csv", headers=[ACCEPT, BEARER, TENANT])
for c in reqs[n_before:]:
    c["spec"] = DOT_SPEC
req("the token exchange has its own builder", "exchangePlatformClientCredential", body=b"{}", error="invalid_parameter")
req("unknown operation", "getEverything", error="unknown_operation")

# ============================ token.json =======================================================
SCOPE_REQ = ["exports:read", "exports:write", "analytics:read"]


def basic(i, s):
    return "Basic " + base64.b64encode(f"{i}:{s}".encode()).decode()


token = {"build": [], "parse": [], "build_enterprise": [], "parse_enterprise": [], "missing_scopes": [], "notices": []}
token["build"] += [
    {"comment": "client credentials with scopes", "input": {"client_id": "cli_1", "client_secret": "s3cr3t/é", "tenant_id": T, "scopes": SCOPE_REQ},
     "expected": {"method": "POST", "path": "/api/platform/v1/oauth/token",
                  "headers": [ACCEPT, ["Authorization", basic("cli_1", "s3cr3t/é")], ["X-Tenant-ID", T], CT],
                  "body": {"utf8": json.dumps({"grant_type": "client_credentials", "scope": " ".join(SCOPE_REQ)}, separators=(",", ":"))}}},
    {"comment": "no scopes: no scope member", "input": {"client_id": "c", "client_secret": "s", "tenant_id": T, "scopes": []},
     "expected": {"method": "POST", "path": "/api/platform/v1/oauth/token", "headers": [ACCEPT, ["Authorization", basic("c", "s")], ["X-Tenant-ID", T], CT],
                  "body": {"utf8": '{"grant_type":"client_credentials"}'}}},
    {"comment": "a colon in the client id cannot travel in Basic", "input": {"client_id": "a:b", "client_secret": "s", "tenant_id": T, "scopes": []}, "error": "invalid_parameter"},
    {"comment": "empty secret", "input": {"client_id": "c", "client_secret": "", "tenant_id": T, "scopes": []}, "error": "invalid_parameter"},
    {"comment": "tenant not a UUID", "input": {"client_id": "c", "client_secret": "s", "tenant_id": "acme", "scopes": []}, "error": "invalid_parameter"},
    {"comment": "scope with a space", "input": {"client_id": "c", "client_secret": "s", "tenant_id": T, "scopes": ["exports:read exports:write"]}, "error": "invalid_parameter"},
]
NS = [["Cache-Control", "no-store"], ["Pragma", "no-cache"]]


def token_case(into, comment, status, body, headers, extra, expected, error, kind, reason):
    """One token-response case: the body as sent, then either the expected token or the error."""
    b = body if isinstance(body, bytes) else json.dumps(body).encode()
    c = {"comment": comment, "input": {"status": status, "headers": headers, "body": body_field(b), **extra, "now": NOW}}
    if error:
        c["error"] = error
        if kind:
            c["api_error"] = {"kind": kind, "reason": reason}
    else:
        c["expected"] = expected
    into.append(c)


def tok(comment, status, body, *, headers=NS, requested=SCOPE_REQ, expected=None, error=None, kind=None, reason=None, tenant=T):
    token_case(token["parse"], comment, status, body, headers, {"requested_scopes": requested, "tenant_id": tenant}, expected, error, kind, reason)


def good(expires_in, scopes, missing, warnings, token_type="Bearer"):
    """A token also remembers the tenant it was obtained for (reports spec, What the service does: "a tenant
    reference from one authenticated context must never be passed into another")."""
    skew = min(60, max(1, expires_in // 10))
    return {"access_token": TOKEN, "token_type": token_type, "expires_in": expires_in, "expires_at": NOW + expires_in,
            "refresh_at": NOW + expires_in - skew, "scopes": scopes, "missing_scopes": missing, "warnings_count": warnings,
            "tenant_id": T}


tok("a full token", 200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600, "scope": " ".join(SCOPE_REQ)}, expected=good(3600, SCOPE_REQ, [], 0))
tok("token_type in lower case", 200, {"access_token": TOKEN, "token_type": "bearer", "expires_in": 300, "scope": "exports:read"},
    expected=good(300, ["exports:read"], ["exports:write", "analytics:read"], 0))
tok("fewer scopes than requested is not an error", 200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 60, "scope": "analytics:read exports:read"},
    expected=good(60, ["analytics:read", "exports:read"], ["exports:write"], 0))
tok("five seconds: skew of one second", 200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 5, "scope": ""}, requested=[], expected=good(5, [], [], 0))
tok("no Cache-Control: no-store is a warning", 200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600, "scope": "exports:read"}, headers=[], requested=["exports:read"],
    expected=good(3600, ["exports:read"], [], 1))
tok("no-store among other directives", 200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600, "scope": "exports:read"}, headers=[["cache-control", "private, NO-STORE"]],
    requested=["exports:read"], expected=good(3600, ["exports:read"], [], 0))
# reporting Authentication: granted scopes versus requested; without a `scope` member the grant is
# unknown (never assumed to be what was requested)
tok("no scope member: the grant is unknown, with a warning", 200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}, expected=good(3600, None, None, 1))
for comment, b in [("expires_in over 3600", {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3601}),
                   ("expires_in zero", {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 0}),
                   ("expires_in negative", {"access_token": TOKEN, "token_type": "Bearer", "expires_in": -5}),
                   ("expires_in as text", {"access_token": TOKEN, "token_type": "Bearer", "expires_in": "3600"}),
                   ("expires_in fractional", {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 12.5}),
                   ("no access_token", {"token_type": "Bearer", "expires_in": 60}),
                   ("empty access_token", {"access_token": "", "token_type": "Bearer", "expires_in": 60}),
                   ("access_token with a space", {"access_token": "a b", "token_type": "Bearer", "expires_in": 60}),
                   ("token_type mac", {"access_token": TOKEN, "token_type": "mac", "expires_in": 60}),
                   ("no token_type", {"access_token": TOKEN, "expires_in": 60})]:
    tok(comment, 200, b, error="invalid_token_response")
tok("not JSON", 200, b"<html>ok</html>", error="invalid_token_response")
tok("401 invalid_client", 401, {"error": "invalid_client", "error_description": "bad secret"}, error="api_error", kind="unauthenticated", reason="invalid_client")
tok("400 invalid_request", 400, {"error": "invalid_request"}, error="api_error", kind="bad_request", reason="invalid_request")
tok("503 dependency unavailable", 503, b"", error="api_error", kind="unavailable")
tok("429 rate limited", 429, b"", error="api_error", kind="rate_limited")
tok("the tenant the exchange was made for must be a UUID", 200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 60, "scope": ""},
    requested=[], tenant="acme", error="invalid_argument")
token["build_enterprise"] += [
    {"comment": "key and secret in headers, no body", "input": {"api_key": "key_1", "api_secret": "sec_1"},
     "expected": {"method": "POST", "path": "/api/v1/token", "headers": [ACCEPT, ["X-Api-Key", "key_1"], ["X-Api-Secret", "sec_1"]], "body": None}},
    {"comment": "empty secret", "input": {"api_key": "k", "api_secret": ""}, "error": "invalid_parameter"},
    {"comment": "a newline in the key", "input": {"api_key": "k\nX: y", "api_secret": "s"}, "error": "invalid_parameter"},
]


def ent_tok(comment, status, body, expected=None, error=None, kind=None, reason=None):
    token_case(token["parse_enterprise"], comment, status, body, [], {}, expected, error, kind, reason)


exp_at = "2026-11-22T05:00:00+00:00"
import calendar, datetime  # noqa: E401,E402
exp_unix = calendar.timegm(datetime.datetime.fromisoformat(exp_at).utctimetuple())
life = exp_unix - NOW
ent_tok("token with expiry", 200, {"token": TOKEN, "expires_at": exp_at}, expected={"token": TOKEN, "expires_at": exp_unix, "refresh_at": exp_unix - min(60, max(1, life // 10))})
exp_off = "2026-11-22T07:00:00+02:00"
ent_tok("expiry with an offset", 200, {"token": TOKEN, "expires_at": exp_off}, expected={"token": TOKEN, "expires_at": exp_unix, "refresh_at": exp_unix - min(60, max(1, life // 10))})
# One timestamp parser for every time the services send: the ISO 8601 forms occurred_at takes are read here too.
for form in ["2026-11-22T05:00:00+0000", "20261122T050000Z", "2026-11-22T05:00:00+00"]:
    ent_tok(f"expires_at in the ISO 8601 form {form}", 200, {"token": TOKEN, "expires_at": form},
            expected={"token": TOKEN, "expires_at": exp_unix, "refresh_at": exp_unix - min(60, max(1, life // 10))})
ent_tok("expires_at behind this clock: the token is kept (used once, then refreshed on 401), refresh_at is now or earlier",
        200, {"token": TOKEN, "expires_at": "2026-11-22T03:00:00Z"},
        expected={"token": TOKEN, "expires_at": exp_unix - 7200, "refresh_at": exp_unix - 7200 - 1})
ent_tok("expires_at null: no expiry", 200, {"token": TOKEN, "expires_at": None}, expected={"token": TOKEN, "expires_at": None, "refresh_at": None})
ent_tok("expires_at absent: no expiry", 200, {"token": TOKEN}, expected={"token": TOKEN, "expires_at": None, "refresh_at": None})
ent_tok("no token", 200, {"expires_at": None}, error="invalid_token_response")
ent_tok("expires_at not a date", 200, {"token": TOKEN, "expires_at": "tomorrow"}, error="invalid_token_response")
ent_tok("expires_at a number", 200, {"token": TOKEN, "expires_at": 1795320000}, error="invalid_token_response")
ent_tok("401 with the documented body", 401, {"success": False, "message": "This action is unauthorized."}, error="api_error", kind="unauthenticated", reason="action_unauthorized")
# reporting API session response: "the client, the tenant, an array of granted scopes and
# expires_at (timestamp after which the token must be refreshed)"; Authentication step 4:
# "refresh before expires_at (from the API session) instead of waiting for 401"
token["parse_api_session"] = []


def session(comment, status, body, expected=None, error=None, kind=None, reason=None):
    token_case(token["parse_api_session"], comment, status, body, NS, {}, expected, error, kind, reason)


def sess(exp):
    return {"expires_at": exp, "refresh_at": exp - min(60, max(1, max(0, exp - NOW) // 10))}


session("scopes and an RFC 3339 expires_at", 200, {"client": {"name": "etl"}, "tenant": {"id": T}, "scopes": ["exports:read", "tenant:read"], "expires_at": exp_at},
        expected={"scopes": ["exports:read", "tenant:read"], **sess(exp_unix)})
session("expires_at as Unix seconds, ten minutes ahead", 200, {"scopes": [], "expires_at": NOW + 600}, expected={"scopes": [], **sess(NOW + 600)})
session("expires_at five seconds ahead: refresh one second before", 200, {"scopes": ["tenant:read"], "expires_at": NOW + 5}, expected={"scopes": ["tenant:read"], **sess(NOW + 5)})
session("no scopes member", 200, {"expires_at": exp_at}, error="invalid_token_response")
session("scopes as a string", 200, {"scopes": "exports:read", "expires_at": exp_at}, error="invalid_token_response")
session("no expires_at", 200, {"scopes": []}, error="invalid_token_response")
session("expires_at not a timestamp", 200, {"scopes": [], "expires_at": "soon"}, error="invalid_token_response")
session("401", 401, b"", error="api_error", kind="unauthenticated")
session("403 without tenant:read", 403, b"", error="api_error", kind="forbidden")

token["missing_scopes"] += [
    {"comment": "get export needs exports:write (as the spec's table says)", "granted": ["exports:read"], "operation_id": "getPlatformExport", "expected": ["exports:write"]},
    {"comment": "download needs exports:read", "granted": ["exports:read"], "operation_id": "downloadPlatformExport", "expected": []},
    {"comment": "list exports without any scope", "granted": [], "operation_id": "listPlatformExports", "expected": ["exports:read"]},
    {"comment": "api session needs tenant:read", "granted": ["exports:read"], "operation_id": "getPlatformApiSession", "expected": ["tenant:read"]},
    {"comment": "analytics: no scope shown", "granted": [], "operation_id": "getPublishedAnalyticsSummary", "expected": []},
    {"comment": "webhook management needs webhooks:manage", "granted": [], "operation_id": "deleteEnterpriseWebhook", "expected": ["webhooks:manage"]},
    {"comment": "unknown operation", "granted": [], "operation_id": "nope", "error": "invalid_argument"},
]
SUNSET = email.utils.formatdate(NOW + 180 * 86400, usegmt=True)
LIFECYCLE = "reports spec, Versioning: lifecycle policy: a sunset header is required on deprecated operations; a replacement operation must be named"


def names_successor(link_lines):
    """RFC 8288, written out: every Link line is part of one list of link-values `<uri>; param...`;
    a replacement is named when some link-value's rel (a space-separated list, quoted or not) holds
    successor-version."""
    import re
    for line in link_lines:
        for m in re.finditer(r'<[^>]*>((?:\s*;\s*[^;,="]+\s*=\s*(?:"[^"]*"|[^;,]*))*)', line):
            for name, quoted, bare in re.findall(r';\s*([^;,="\s]+)\s*=\s*(?:"([^"]*)"|([^;,]*))', m.group(1)):
                if name.lower() == "rel" and "successor-version" in (quoted or bare).lower().split():
                    return True
    return False
token["notices"] += [
    {"comment": "RFC 9745 Deprecation, Sunset and Link", "headers": [["Deprecation", f"@{NOW - 86400}"], ["Sunset", SUNSET], ["Link", '<https://api.example/v2>; rel="successor-version"']],
     "expected": {"deprecated": True, "deprecated_at": NOW - 86400, "sunset_at": NOW + 180 * 86400, "link": '<https://api.example/v2>; rel="successor-version"'}},
    {"comment": "legacy Deprecation: true", "headers": [["deprecation", "true"]], "expected": {"deprecated": True, "deprecated_at": None, "sunset_at": None, "link": None}},
    {"comment": "Sunset alone", "headers": [["Sunset", SUNSET]], "expected": {"deprecated": False, "deprecated_at": None, "sunset_at": NOW + 180 * 86400, "link": None}},
    {"comment": "garbage dates are kept as present without a date", "headers": [["Deprecation", "soon"], ["Sunset", "later"]],
     "expected": {"deprecated": True, "deprecated_at": None, "sunset_at": None, "link": None}},
    {"comment": "none", "headers": [["Content-Type", "application/json"]], "expected": {"deprecated": False, "deprecated_at": None, "sunset_at": None, "link": None}},
    {"comment": "sunset 90 days after the deprecation, replacement named", "headers": [["Deprecation", f"@{NOW}"], ["Sunset", email.utils.formatdate(NOW + 90 * 86400, usegmt=True)],
                                                                                   ["Link", '<https://api.example/v2>; rel="successor-version"']],
     "expected": {"deprecated": True, "deprecated_at": NOW, "sunset_at": NOW + 90 * 86400}},
    # RFC 9110 §5.3: a field sent on several lines is one list; the successor may be on any line.
    {"comment": "Link on two lines, the successor on the second: a replacement is named", "spec": LIFECYCLE,
     "headers": [["Deprecation", f"@{NOW}"], ["Sunset", SUNSET], ["Link", '<https://api.example/docs>; rel="deprecation"'],
                 ["Link", '<https://api.example/v2>; rel="successor-version"']],
     "expected": {"deprecated": True, "deprecated_at": NOW, "sunset_at": NOW + 180 * 86400,
                  "link": '<https://api.example/docs>; rel="deprecation", <https://api.example/v2>; rel="successor-version"'}},
    {"comment": "a successor among several rel values of the second link-value", "spec": LIFECYCLE,
     "headers": [["Deprecation", f"@{NOW}"], ["Sunset", SUNSET], ["Link", '<https://a.example/x>; rel="help", <https://a.example/v2>; title="v2, new"; rel="latest-version successor-version"']],
     "expected": {"deprecated": True, "deprecated_at": NOW, "sunset_at": NOW + 180 * 86400}},
    {"comment": "successor-version only inside a URI, the rel is another: no replacement named", "spec": LIFECYCLE,
     "headers": [["Deprecation", f"@{NOW}"], ["Sunset", SUNSET], ["Link", '<https://a.example/successor-version>; rel="alternate"']],
     "expected": {"deprecated": True, "deprecated_at": NOW, "sunset_at": NOW + 180 * 86400}},
]
# reporting API, API lifecycle: "minimum deprecation period 180 days; a sunset header is required on
# deprecated operations; a replacement operation must be named": each shortfall is reported.
for c in token["notices"]:
    h = {n.lower(): v for n, v in c["headers"]}
    issues = []
    if c["expected"]["deprecated"]:
        if "sunset" not in h:
            issues.append("missing_sunset")
        d, sun = c["expected"]["deprecated_at"], c["expected"]["sunset_at"]
        if d is not None and sun is not None and sun - d < 180 * 86400:
            issues.append("sunset_too_soon")
        if not names_successor([v for n, v in c["headers"] if n.lower() == "link"]):
            issues.append("no_replacement")
    c["expected"]["policy_issues"] = issues

# A client's base URL, checked when the client is built (a typo must not be retried as a network
# fault for a minute): https, or http to a loopback host only (the credentials would go in clear);
# no user-info, query or fragment; no API prefix (every operation's path starts with /api/...).
base_urls = []


def base(comment, url, expected=None, *, insecure=False, error=None, message=None):
    c = {"comment": comment, "input": {"base_url": url, "allow_insecure_http": insecure}}
    if error:
        c["error"] = error
        c["argument"] = "base_url"
        if message:
            c["message"] = message
    else:
        c["expected"] = expected
    base_urls.append(c)


base("an https origin", "https://api.example.com", "https://api.example.com")
base("the trailing slash is dropped", "https://api.example.com/", "https://api.example.com")
base("a port and a gateway path are kept", "https://gw.example.com:8443/royalty/", "https://gw.example.com:8443/royalty")
base("the scheme in capitals", "HTTPS://api.example.com", "HTTPS://api.example.com")
base("plain http to 127.0.0.1", "http://127.0.0.1:8080", "http://127.0.0.1:8080")
base("plain http to localhost", "http://localhost:3000/", "http://localhost:3000")
base("plain http to a name under localhost", "http://api.localhost", "http://api.localhost")
base("plain http to [::1]", "http://[::1]:9000", "http://[::1]:9000")
base("plain http to another host with allow_insecure_http", "http://10.0.0.5:8080", "http://10.0.0.5:8080", insecure=True)
base("a private address over https", "https://10.0.0.5", "https://10.0.0.5")
base("a scheme typo names the scheme", "htp://api.example.com", error="invalid_argument",
     message="invalid argument `base_url`: has the scheme `htp`: the client speaks `https` (and plain `http` to a loopback host), an origin such as https://api.example.com")
base("another scheme", "ftp://api.example.com", error="invalid_argument")
base("no scheme", "api.example.com", error="invalid_argument",
     message="invalid argument `base_url`: has no scheme: write it with https://, an origin such as https://api.example.com")
base("plain http to a remote host", "http://api.example.com", error="invalid_argument")
base("plain http to a private address", "http://192.168.1.10", error="invalid_argument")
base("plain http to a name that only starts like localhost", "http://localhost.example.com", error="invalid_argument")
base("the reporting API prefix", "https://api.example.com/api/platform/v1", error="invalid_argument")
base("the enterprise API prefix", "https://api.example.com/api/v1/", error="invalid_argument")
base("an api segment in capitals", "https://api.example.com/API", error="invalid_argument")
base("user-info", "https://user:pass@api.example.com", error="invalid_argument",
     message="invalid argument `base_url`: must not contain user-info (user:password@): the client sends its credentials in headers")
base("a query", "https://api.example.com/?x=1", error="invalid_argument")
base("a fragment", "https://api.example.com#top", error="invalid_argument")
base("no host", "https://", error="invalid_argument")
base("no host before the port", "https://:443", error="invalid_argument")
base("port 0", "https://api.example.com:0", error="invalid_argument")
base("port 65536", "https://api.example.com:65536", error="invalid_argument")
base("an empty port", "https://api.example.com:", error="invalid_argument")
base("a space", "https://api.example .com", error="invalid_argument")
base("empty", "", error="invalid_argument")
base("an unterminated IPv6 literal", "https://[::1", error="invalid_argument")

# The one message of a failed call, the same in every language: the operation, the host, the
# machine's reason, the attempts made, and the host library's last error when there was one.
failed_messages = [
    {"comment": "attempts used on a refused connection", "input": {
        "operation": "listPlatformExports", "base_url": "https://api.example.com:8443/gw",
        "reason": "would retry (connect_failed_retry), but 5 of 5 attempts are used", "attempts": 5,
        "cause": "ConnectError: [Errno 111] Connection refused"},
     "expected": "listPlatformExports to api.example.com:8443: would retry (connect_failed_retry), but 5 of 5 attempts are used"
                 " (5 attempts made); last failure: ConnectError: [Errno 111] Connection refused"},
    {"comment": "one attempt, no transport error (a redirect)", "input": {
        "operation": "token exchange", "base_url": "http://127.0.0.1:9000", "reason": "a redirect is never followed",
        "attempts": 1, "cause": None},
     "expected": "token exchange to 127.0.0.1:9000: a redirect is never followed (1 attempt made)"},
    {"comment": "a long cause is cut to 300 characters, control characters replaced", "input": {
        "operation": "getPlatformExport", "base_url": "https://[::1]:8443", "reason": "r", "attempts": 2,
        "cause": "a\nb" + "x" * 400},
     "expected": "getPlatformExport to [::1]:8443: r (2 attempts made); last failure: a b" + "x" * 297},
]

# A client's timeouts: the library's defaults (10 s to connect, 30 s to read) fill those not
# given; each given must be seconds more than 0 and at most a day.
timeouts = []


def tmo(comment, connect, read, expected=None, *, argument=None):
    c = {"comment": comment, "input": {"connect_timeout": connect, "read_timeout": read}}
    if argument:
        c["error"] = "invalid_argument"
        c["argument"] = argument
    else:
        c["expected"] = {"connect_seconds": expected[0], "read_seconds": expected[1]}
    timeouts.append(c)


tmo("none given: the defaults, 10 s to connect and 30 s to read", None, None, (10, 30))
tmo("connect given, read the default", 2.5, None, (2.5, 30))
tmo("read given, connect the default", None, 120, (10, 120))
tmo("both given", 1, 3600, (1, 3600))
tmo("a day is the most", 86400, 86400, (86400, 86400))
tmo("a fraction of a second", 0.05, 0.25, (0.05, 0.25))
tmo("0 s to connect is refused (it would never connect)", 0, None, argument="connect_timeout")
tmo("a negative read timeout is refused", None, -1, argument="read_timeout")
tmo("more than a day is refused", 86400.5, None, argument="connect_timeout")
tmo("the connect timeout is checked first", -5, -5, argument="connect_timeout")
tmo("a read timeout of 0 is refused", 5, 0, argument="read_timeout")

# The message of an interrupted export job (Ctrl-C, a cancelled task, an aborted signal).
INTERRUPTED_NAMED = ("the export job was interrupted while export {} may still be running on the service: resume from "
                     "the checkpoint to finish it (it is read, never created again)")
interrupted_messages = [
    {"comment": "the service named the export", "input": {"export_id": "exp_9"},
     "expected": INTERRUPTED_NAMED.format("exp_9")},
    {"comment": "a UUID export id", "input": {"export_id": "7c9e6679-7425-40de-944b-e07072fc6b14"},
     "expected": INTERRUPTED_NAMED.format("7c9e6679-7425-40de-944b-e07072fc6b14")},
    {"comment": "no export named yet: a create may have been sent", "input": {"export_id": None},
     "expected": "the export job was interrupted before the service named its export (a create may have been sent): "
                 "resume from the checkpoint, which looks for that export before it creates one"},
    {"comment": "an empty id is no id", "input": {"export_id": ""},
     "expected": "the export job was interrupted before the service named its export (a create may have been sent): "
                 "resume from the checkpoint, which looks for that export before it creates one"},
    {"comment": "a server's long id with a line break: cut to 100 characters, control characters replaced",
     "input": {"export_id": "a\nb" + "x" * 200}, "expected": INTERRUPTED_NAMED.format("a b" + "x" * 97)},
]

DESC = "vectors for royaltykit, written from the specs by gen_api_vectors.py"
GEN = "tests/vectors/gen_api_vectors.py"
# The message an API error is thrown or raised with, the same sentence in every language: the
# status, the server's message, the kind, and the reason when the body gives one.
error_messages = [
    {"comment": c["comment"], "input": c["input"],
     "expected": f'{c["input"]["status"]} {c["expected"]["message"]} ({c["expected"]["kind"]})'
                 + (f' [{c["expected"]["reason"]}]' if c["expected"]["reason"] else "")}
    for c in errors if "expected" in c]
shape.write("api_error.json", "api_error.json " + DESC, GEN, [shape.group("parse_api_error", errors),
                                                              shape.group("api_error_message", error_messages)])
shape.write("requests.json", "requests.json " + DESC, GEN, [shape.group("build_request", reqs, error_fields=("parameter",)),
                                                         shape.group("check_base_url", base_urls, error_fields=("argument", "message")),
                                                         shape.group("call_failed_message", failed_messages),
                                                         shape.group("client_timeouts", timeouts, error_fields=("argument",)),
                                                         shape.group("export_interrupted_message", interrupted_messages)])
shape.write("token.json", "token.json " + DESC, GEN, [
    shape.group("build_token_request", token["build"]),
    shape.group("parse_token_response", token["parse"], error_fields=("api_error",)),
    shape.group("build_enterprise_token_request", token["build_enterprise"]),
    shape.group("parse_enterprise_token_response", token["parse_enterprise"], error_fields=("api_error",)),
    shape.group("parse_api_session", token["parse_api_session"], error_fields=("api_error",)),
    shape.group("missing_scopes", token["missing_scopes"]),
    shape.group("response_notices", token["notices"])])
