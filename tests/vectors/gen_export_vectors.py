#!/usr/bin/env python3
"""Writes export.json: the export lifecycle from ../shared/spec/reports-api.md (Exports states
table, machine and human export tables, Limits), written by hand; independent of royaltykit."""
import json
import os

import shape

HERE = os.path.dirname(os.path.abspath(__file__))
U = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"

# States table: cancel only while queued; revoke and download only when ready; get always.
ALLOWED = {"queued": ["get", "cancel"], "ready": ["get", "download", "revoke"], "cancelled": ["get"], "revoked": ["get"]}
AFTER = {"cancel": "cancelled", "revoke": "revoked"}
transitions = []
for raw, canonical in [("queued", "queued"), ("ready", "ready"), ("cancelled", "cancelled"), ("canceled", "cancelled"), ("revoked", "revoked"),
                       ("QUEUED", "queued"), ("Ready", "ready"), ("expired", None), ("failed", None), ("", None)]:
    allowed = ALLOWED.get(canonical, ["get"])
    for cmd in ["get", "cancel", "revoke", "download"]:
        c = {"state": raw, "command": cmd, "state_known": canonical is not None}
        if cmd in allowed:
            c["expected_state"] = AFTER.get(cmd, canonical if canonical else raw)
        else:
            c["error"] = "invalid_export_transition"
            c["allowed"] = allowed
        transitions.append(c)


def delay(attempt, r):  # enterprise Limits recommended backoff, reused for polling
    return [2.0, 5.0, 15.0][attempt - 1] if attempt <= 3 else 30.0 + 30.0 * r


poll = []
for state, attempt, r in [("queued", 1, 0.5), ("queued", 2, 0.5), ("queued", 3, 0.0), ("queued", 4, 0.5), ("queued", 9, 0.25)]:
    poll.append({"state": state, "attempt": attempt, "random": r, "expected": {"action": "keep_polling", "delay_seconds": delay(attempt, r)}})
poll += [
    {"state": "queued", "attempt": 100, "random": 0.5, "expected": {"action": "stop", "delay_seconds": 0.0, "reason_prefix": "polling budget reached"},
     "comment": "default bound of 100 reads"},
    {"state": "queued", "attempt": 3, "random": 0.5, "max_polls": 3, "expected": {"action": "stop", "delay_seconds": 0.0}},
    {"state": "ready", "attempt": 7, "random": 0.5, "expected": {"action": "download", "delay_seconds": 0.0}},
    {"state": "cancelled", "attempt": 2, "random": 0.5, "expected": {"action": "stop", "delay_seconds": 0.0}},
    {"state": "canceled", "attempt": 2, "random": 0.5, "expected": {"action": "stop", "delay_seconds": 0.0}},
    {"state": "revoked", "attempt": 1, "random": 0.5, "expected": {"action": "stop", "delay_seconds": 0.0}},
    # "The full set of export statuses: not shown": a state between queued and ready is expected,
    # and one that is not an end state is polled with the same budget as queued (max_polls reads,
    # capped backoff); it stops only on that budget (issue 24: it used to stop after 5 unchanged reads).
    {"state": "processing", "attempt": 1, "random": 0.5, "expected": {"action": "keep_polling", "delay_seconds": 2.0}, "comment": "unknown state: keep polling"},
]
UNKNOWN_SPEC = "reports spec, States and transitions: \"The full set of export statuses: not shown\""
for attempt, r in [(2, 0.5), (4, 0.0), (5, 0.5), (6, 0.5), (12, 0.9), (50, 0.1), (99, 0.5)]:
    poll.append({"state": "processing", "attempt": attempt, "random": r, "spec": UNKNOWN_SPEC,
                 "expected": {"action": "keep_polling", "delay_seconds": delay(attempt, r)},
                 "comment": f"queued at read 1, processing from read 2 on: read {attempt} keeps polling like queued"})
for state in ["exporting", "Processing", "pending_review", "x" * 300]:
    poll.append({"state": state, "attempt": 7, "random": 0.25, "spec": UNKNOWN_SPEC,
                 "expected": {"action": "keep_polling", "delay_seconds": delay(7, 0.25)}, "comment": f"another unknown state ({state[:20]}): keep polling"})
poll += [
    {"state": "processing", "attempt": 100, "random": 0.5, "spec": UNKNOWN_SPEC, "expected": {"action": "stop", "delay_seconds": 0.0, "reason_prefix": "polling budget reached"},
     "comment": "the 100-read budget of queued: stop, saying the budget was reached"},
    {"state": "processing", "attempt": 7, "random": 0.5, "max_polls": 7, "spec": UNKNOWN_SPEC, "expected": {"action": "stop", "delay_seconds": 0.0, "reason_prefix": "polling budget reached"},
     "comment": "a smaller budget applies to unknown states as to queued"},
    {"state": "processing", "attempt": 1, "random": 0.5, "max_polls": 0, "error": "invalid_argument", "comment": "a budget below one read"},
    {"state": "queued", "attempt": 0, "random": 0.5, "error": "invalid_argument"},
    {"state": "queued", "attempt": 1, "random": 1.0, "error": "invalid_argument"},
]

download = [
    {"comment": "200, whole artifact", "status": 200, "headers": [["Content-Type", "text/csv"], ["Content-Length", "10"]], "body": "a,b\n1,2\n3\n", "expected": "ok"},
    {"comment": "200 whose body is shorter than its Content-Length: the transfer was cut, not the artifact", "status": 200,
     "headers": [["Content-Length", "100"]], "body": "x" * 50, "error": "partial_content_unsupported"},
    {"comment": "200 whose body is longer than its Content-Length", "status": 200, "headers": [["content-length", "5"]], "body": "a,b\n1,2\n3\n",
     "error": "partial_content_unsupported"},
    {"comment": "200 without Content-Length (chunked): whole", "status": 200, "headers": [["Transfer-Encoding", "chunked"]], "body": "a,b\n", "expected": "ok"},
    {"comment": "200 advertising Accept-Ranges is still whole", "status": 200, "headers": [["Accept-Ranges", "bytes"]], "expected": "ok"},
    {"comment": "206 is partial", "status": 206, "headers": [["Content-Range", "bytes 0-99/1000"]], "error": "partial_content_unsupported"},
    {"comment": "206 without Content-Range is still partial", "status": 206, "headers": [], "error": "partial_content_unsupported"},
    {"comment": "200 with Content-Range is partial", "status": 200, "headers": [["content-range", "bytes 0-9/10"]], "error": "partial_content_unsupported"},
    {"comment": "409: not ready (declared)", "status": 409, "headers": [], "body": '{"message":"Export is not ready","code":"export_not_ready"}',
     "error": "api_error", "api_error": {"kind": "conflict", "declared": True, "body_code": "export_not_ready"}},
    {"comment": "422 (declared)", "status": 422, "headers": [], "body": '{"message":"Recent MFA required"}', "error": "api_error",
     "api_error": {"kind": "validation", "declared": True, "body_code": None}},
    {"comment": "404 (declared)", "status": 404, "headers": [], "body": "", "error": "api_error", "api_error": {"kind": "not_found", "declared": True, "body_code": None}},
    {"comment": "416 is not declared", "status": 416, "headers": [], "body": "", "error": "api_error", "api_error": {"kind": "other", "declared": False, "body_code": None}},
]

lists = [
    {"comment": "defaults: no parameters", "query": [], "expected": ""},
    {"comment": "limit 1", "query": [["limit", "1"]], "expected": "limit=1"},
    {"comment": "limit 100 and a UUID cursor", "query": [["limit", "100"], ["cursor", U]], "expected": f"limit=100&cursor={U}"},
    {"comment": "filters", "query": [["export_class", "statements"], ["status", "ready"], ["format", "csv"]], "expected": "export_class=statements&status=ready&format=csv"},
    {"comment": "limit 0", "query": [["limit", "0"]], "error": "invalid_parameter"},
    {"comment": "limit 101", "query": [["limit", "101"]], "error": "invalid_parameter"},
    {"comment": "limit not a number", "query": [["limit", "ten"]], "error": "invalid_parameter"},
    {"comment": "cursor not a UUID", "query": [["cursor", "abc"]], "error": "invalid_parameter"},
    {"comment": "empty status", "query": [["status", ""]], "error": "invalid_parameter"},
    {"comment": "unknown filter", "query": [["owner", "me"]], "error": "unknown_parameter"},
]

# Scopes exactly as the machine exports table gives them (get needs exports:write there).
SCOPE = {"listPlatformExports": "exports:read", "createPlatformExport": "exports:write", "getPlatformExport": "exports:write",
         "downloadPlatformExport": "exports:read", "cancelPlatformExport": "exports:write", "revokePlatformExport": "exports:write"}
scopes = []
for op, need in SCOPE.items():
    for granted in [[], ["exports:read"], ["exports:write"], ["exports:read", "exports:write"]]:
        scopes.append({"operation_id": op, "granted": granted, "expected": [] if need in granted else [need]})

human = [
    {"operation_id": "listPlatformExportsAsHuman", "csrf": False, "idempotency": "none", "step_up": "none"},
    {"operation_id": "createPlatformExportAsHuman", "csrf": True, "idempotency": "key", "step_up": "recent"},
    {"operation_id": "getPlatformExportAsHuman", "csrf": False, "idempotency": "none", "step_up": "none"},
    {"operation_id": "downloadPlatformExportAsHuman", "csrf": False, "idempotency": "none", "step_up": "recent_non_recovery"},
    {"operation_id": "cancelPlatformExportAsHuman", "csrf": True, "idempotency": "key", "step_up": "recent"},
    {"operation_id": "revokePlatformExportAsHuman", "csrf": True, "idempotency": "key", "step_up": "recent"},
]

step_up = []
for req in ["none", "recent", "recent_mfa", "recent_non_recovery"]:
    for kind in ["mfa", "recovery_code"]:
        for age, max_age in [(60, 300), (300, 300), (301, 300), (-5, 300)]:
            recent = 0 <= age <= max_age
            ok = req == "none" or (recent and (req == "recent" or kind == "mfa"))
            step_up.append({"requirement": req, "kind": kind, "at": 1_000_000 - age, "now": 1_000_000, "max_age_seconds": max_age, "expected": ok})
step_up.append({"requirement": "recent", "kind": "mfa", "at": 0, "now": 0, "max_age_seconds": -1, "error": "invalid_argument"})
step_up.append({"requirement": "recent", "kind": "password", "at": 0, "now": 0, "max_age_seconds": 1, "error": "invalid_argument"})

states = sorted({c["state"]: c["state_known"] for c in transitions}.items())
shape.write("export.json", "Export lifecycle vectors, written from the reporting spec by gen_export_vectors.py", "tests/vectors/gen_export_vectors.py", [
    shape.group("export_state", [{"state": s, "expected": {"known": k}} for s, k in states]),
    shape.group("validate_export_command", [{("expected" if k == "expected_state" else k): v for k, v in c.items() if k != "state_known"}
                                            for c in transitions], error_fields=("allowed",)),
    shape.group("export_poll_decision", poll, defaults={"max_polls": 100}),
    shape.group("check_export_download", download, error_fields=("api_error",)),
    shape.group("validate_export_list_query", lists),
    shape.group("missing_scopes", scopes),
    shape.group("operation", [{"operation_id": c["operation_id"], "expected": {k: v for k, v in c.items() if k != "operation_id"}} for c in human]),
    shape.group("step_up_satisfies", step_up)])
