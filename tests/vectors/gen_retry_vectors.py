#!/usr/bin/env python3
"""Writes tests/vectors/retry.json: retry decisions, webhook schedule, backoff, Retry-After and
rate budgets. Independent of royaltykit: the expectations below are written from the spec
tables (../shared/spec/enterprise-api.md "Errors", "Limits", "Retry safety";
../shared/spec/reports-api.md "Errors" and `idem` operations), each decision case citing its rule.
Dates are computed with calendar/email.utils from the standard library.
"""
import calendar
import email.utils
import json
import os

import shape
import time

HERE = os.path.dirname(os.path.abspath(__file__))

S_READ = "enterprise Errors/client behaviour: read fails with 408, 429 or any 5xx -> retry with exponential backoff and jitter"
S_429 = "enterprise Errors/client behaviour: 429 -> stop the same request; wait at least Retry-After when present, otherwise back off"
S_CREATE = "enterprise Errors/client behaviour: create times out -> look up or search by the data already sent before creating again"
S_SUBMIT = "enterprise Errors/client behaviour: submit times out -> fetch the release and its review state before submitting again"
S_CHECKOUT = "enterprise Errors/client behaviour: checkout times out -> check checkout_id / order state before a new checkout"
S_ADDON = "enterprise Errors/client behaviour: add-on install or purchase times out -> read add-on status before repeating"
S_ROTATE = ("enterprise Endpoints: rotate-secret returns the new secret (once): a lost answer cannot be looked up;"
            " Retry safety: never blindly")
S_UPLOAD = "enterprise Errors/client behaviour: upload fails before a response -> retry the same file or chunk"
S_SAFETY = "enterprise Retry safety: reads and token exchange may be retried; updates only when safe; creates, submit, checkout, add-on actions never blindly"
S_IDEM = "reporting `idem` operations / enterprise Idempotency-Key on webhook create, update, delete: same key may be retried"
S_409 = "reporting Errors: 409 state conflict or idempotency conflict"
S_503 = "reporting Errors: 503 dependency unavailable (token exchange, analytics, exports)"
S_401 = "reporting Errors: 401 credentials invalid, token missing or expired; Authentication: refresh before expiry instead of waiting for 401"
S_4XX = "reporting Errors: 400/403/404/422 refuse the request itself"
S_CONNECT = "connection not established: nothing was sent, so no operation can have been applied"

REPEATABLE = ["read", "token_exchange", "idempotent_write", "safe_update", "upload"]
RECONCILE = {"unsafe_create": ("lookup_by_sent_data", S_CREATE), "submit": ("fetch_release_review_state", S_SUBMIT),
             "checkout": ("check_checkout_state", S_CHECKOUT), "addon_action": ("read_addon_status", S_ADDON),
             "secret_rotation": ("rotate_again", S_ROTATE)}
CLASSES = REPEATABLE + list(RECONCILE)
NOW = 1_795_320_000

cases = []


def decision(comment, spec, retry_class, expect, *, status=None, headers=None, transport=None, attempt=1,
             elapsed=0.0, refreshed=False, random=0.5, max_attempts=None, max_elapsed=None, key_sent=None):
    inp = {"retry_class": retry_class, "attempt": attempt, "elapsed_seconds": elapsed,
           "token_refreshed": refreshed, "random": random, "now": NOW}
    # An idempotent write is repeatable only with its key on the wire (DESIGN §3); the matrix
    # below reads idempotent_write as sent with its key unless a case says otherwise.
    if key_sent is None and retry_class == "idempotent_write":
        key_sent = True
    if key_sent is not None and key_sent != "absent":
        inp["idempotency_key_sent"] = key_sent
    if status is not None:
        inp["status"] = status
        inp["headers"] = headers or []
    if transport is not None:
        inp["transport"] = transport
    if max_attempts is not None:
        inp["max_attempts"] = max_attempts
    if max_elapsed is not None:
        inp["max_elapsed_seconds"] = max_elapsed
    action, rule, delay, reconcile = expect
    cases.append({"tcId": len(cases) + 1, "comment": comment, "spec": spec, "input": inp,
                  "expected": {"action": action, "rule": rule, "delay_seconds": delay, "reconcile": reconcile}})


def default_delay(attempt, r):  # enterprise Limits: 2 s, 5 s, 15 s, later 30-60 s with jitter
    return [2.0, 5.0, 15.0][attempt - 1] if attempt <= 3 else 30.0 + 30.0 * r


D1 = default_delay(1, 0.5)

# --- the class x outcome matrix (attempt 1, random 0.5) ------------------------------------------
for c in CLASSES:
    rec = RECONCILE.get(c)
    spec_rec = rec[1] if rec else None
    decision(f"{c}: connect_failed retries", S_CONNECT, c, ("retry", "connect_failed_retry", D1, None), transport="connect_failed")
    for t in ["timeout", "connection_lost"]:
        if rec:
            decision(f"{c}: {t} must reconcile", spec_rec, c, ("reconcile", "maybe_sent_reconcile", 0.0, rec[0]), transport=t)
        else:
            spec = {"read": S_READ, "token_exchange": S_SAFETY, "idempotent_write": S_IDEM, "safe_update": S_SAFETY, "upload": S_UPLOAD}[c]
            decision(f"{c}: {t} retries", spec, c, ("retry", "maybe_sent_retry", D1, None), transport=t)
    decision(f"{c}: 200 is success", "2xx is not a failure", c, ("stop", "success", 0.0, None), status=200)
    decision(f"{c}: 201 is success", "2xx is not a failure", c, ("stop", "success", 0.0, None), status=201)
    S_206 = "reporting Limits: export download is one complete artifact, no range or partial content (no request sends Range, so 206 is never a success)"
    if rec:
        decision(f"{c}: 206 stops (partial content is not a success, and this class is not repeated blindly)", S_206, c, ("stop", "partial_content", 0.0, None), status=206)
    else:
        decision(f"{c}: 206 is sent again (partial content is not a success)", S_206, c, ("retry", "partial_content_retry", D1, None), status=206)
    decision(f"{c}: 302 stops (redirects are not followed)", "enterprise Delivery contract: redirects are not followed", c, ("stop", "redirect", 0.0, None), status=302)
    for s in [400, 403, 404, 422]:
        decision(f"{c}: {s} stops", S_4XX, c, ("stop", "client_error", 0.0, None), status=s)
    decision(f"{c}: 409 stops", S_409, c, ("stop", "conflict", 0.0, None), status=409)
    if c == "token_exchange":
        decision("token_exchange: 401 stops (bad credentials)", S_401, c, ("stop", "token_exchange_unauthorized", 0.0, None), status=401)
    else:
        decision(f"{c}: 401 refreshes the token once", S_401, c, ("refresh_token", "unauthorized_refresh", 0.0, None), status=401)
        decision(f"{c}: 401 after a refresh stops", S_401, c, ("stop", "unauthorized_after_refresh", 0.0, None), status=401, refreshed=True)
    decision(f"{c}: 429 with Retry-After 7 waits 7 s", S_429, c, ("retry", "rate_limited_retry_after", 7.0, None), status=429, headers=[["Retry-After", "7"]])
    decision(f"{c}: 429 without Retry-After backs off", S_429, c, ("retry", "rate_limited_backoff", D1, None), status=429)
    for s in [408, 500, 502, 503]:
        rule = "request_timeout" if s == 408 else "server_error"
        if rec:
            decision(f"{c}: {s} must reconcile", spec_rec, c, ("reconcile", rule + "_reconcile", 0.0, rec[0]), status=s)
        else:
            spec = S_503 if s == 503 else S_READ
            decision(f"{c}: {s} retries with backoff", spec, c, ("retry", rule + "_retry", D1, None), status=s)

# --- delays, Retry-After interplay, limits --------------------------------------------------------
for a, r in [(2, 0.0), (3, 0.99), (4, 0.0), (4, 0.5), (5, 0.25)]:
    decision(f"read 503, attempt {a}, random {r}: default backoff", "enterprise Limits: recommended backoff 2 s, 5 s, 15 s, later 30-60 s with jitter",
             "read", ("retry", "server_error_retry", default_delay(a, r), None), status=503, attempt=a, random=r, max_attempts=10)
decision("503 with Retry-After 40 waits the longer of backoff and Retry-After", S_503, "read",
         ("retry", "server_error_retry", 40.0, None), status=503, headers=[["retry-after", "40"]])
decision("503 with Retry-After 1 keeps the backoff", S_503, "read", ("retry", "server_error_retry", 2.0, None), status=503, headers=[["Retry-After", "1"]])
decision("429 with an HTTP-date Retry-After 90 s ahead", S_429, "read", ("retry", "rate_limited_retry_after", 90.0, None), status=429,
         headers=[["Retry-After", email.utils.formatdate(NOW + 90, usegmt=True)]])
decision("429 with a Retry-After date in the past retries at once", S_429, "read", ("retry", "rate_limited_retry_after", 0.0, None), status=429,
         headers=[["Retry-After", email.utils.formatdate(NOW - 90, usegmt=True)]])
# A Retry-After date is the service's clock. The response's Date says where that clock stood: the date
# is counted from Date as well as from now, and the longer wait kept (never shortened by a host clock
# that runs ahead of the service's).
S_DATE = S_429 + "; RFC 9110 §6.6.1 (Date: the moment the response was generated, on the origin's clock)"
decision("429 with a Retry-After date 90 s after its Date, the host's clock 30 s ahead: waits 90 s, not 60", S_DATE, "read",
         ("retry", "rate_limited_retry_after", 90.0, None), status=429,
         headers=[["Date", email.utils.formatdate(NOW - 30, usegmt=True)], ["Retry-After", email.utils.formatdate(NOW + 60, usegmt=True)]])
decision("429 with a Retry-After date 90 s after its Date, the host's clock 30 s behind: waits 120 s (never shorter than from now)", S_DATE, "read",
         ("retry", "rate_limited_retry_after", 120.0, None), status=429,
         headers=[["Date", email.utils.formatdate(NOW + 30, usegmt=True)], ["Retry-After", email.utils.formatdate(NOW + 120, usegmt=True)]])
decision("429 with a Retry-After date and a Date that is not a date: counted from now", S_DATE, "read",
         ("retry", "rate_limited_retry_after", 60.0, None), status=429,
         headers=[["Date", "yesterday"], ["Retry-After", email.utils.formatdate(NOW + 60, usegmt=True)]])
decision("429 with a Retry-After date and a Date two days old (a cached response): counted from now", S_DATE, "read",
         ("retry", "rate_limited_retry_after", 60.0, None), status=429,
         headers=[["Date", email.utils.formatdate(NOW - 2 * 86400, usegmt=True)], ["Retry-After", email.utils.formatdate(NOW + 60, usegmt=True)]])
decision("429 with Retry-After in seconds: the Date does not change it", S_DATE, "read",
         ("retry", "rate_limited_retry_after", 7.0, None), status=429,
         headers=[["Date", email.utils.formatdate(NOW - 30, usegmt=True)], ["Retry-After", "7"]])
# Retry-After is never shortened (enterprise: "wait at least Retry-After"); a wait past the retry
# budget stops with the wait in the decision instead of a shorter retry.
decision("429 with Retry-After 7200 passes the 300 s budget: stop with the full wait, never shortened", S_429, "read",
         ("stop", "retry_after_exceeds_budget", 7200.0, None), status=429, headers=[["Retry-After", "7200"]])
decision("429 with Retry-After 7200 and a 7200 s budget waits all of it", S_429, "read",
         ("retry", "rate_limited_retry_after", 7200.0, None), status=429, headers=[["Retry-After", "7200"]], max_elapsed=7200)
decision("429 with an absurd Retry-After: stop with the wait", S_429, "read",
         ("stop", "retry_after_exceeds_budget", 999999.0, None), status=429, headers=[["Retry-After", "999999"]], max_elapsed=7200)
decision("503 with Retry-After 3601 on a read: stop with the wait (not 3600)", S_429, "read",
         ("stop", "retry_after_exceeds_budget", 3601.0, None), status=503, headers=[["Retry-After", "3601"]])
decision("429 with garbage Retry-After backs off", S_429, "read", ("retry", "rate_limited_backoff", D1, None), status=429, headers=[["Retry-After", "soon"]])
decision("429 with a 100-digit Retry-After: longer than any budget, stop with retry_after_exceeds_budget (never a 2 s retry)", S_429, "read",
         ("stop", "retry_after_exceeds_budget", float(2**64 - 1), None), status=429, headers=[["Retry-After", "9" * 100]], max_elapsed=7200)
decision("429 on an unsafe create retries: nothing was applied", S_429, "unsafe_create", ("retry", "rate_limited_retry_after", 3.0, None), status=429, headers=[["Retry-After", "3"]])
decision("attempt 5 of 5: no retry left", "retry loop bound (max attempts)", "read", ("stop", "attempts_exhausted", 0.0, None), status=503, attempt=5)
decision("attempt 4 of 5 may still retry", "retry loop bound (max attempts)", "read", ("retry", "server_error_retry", 45.0, None), status=503, attempt=4)
decision("custom max_attempts 1: never retry", "retry loop bound (max attempts)", "read", ("stop", "attempts_exhausted", 0.0, None), transport="connect_failed", max_attempts=1)
decision("elapsed 290 + 15 s backoff passes the 300 s budget", "retry loop bound (time budget)", "read", ("stop", "time_budget_exhausted", 0.0, None), status=500, attempt=3, elapsed=290.0)
decision("elapsed 285 + 15 s backoff is exactly the budget", "retry loop bound (time budget)", "read", ("retry", "server_error_retry", 15.0, None), status=500, attempt=3, elapsed=285.0)
decision("limits do not turn reconcile into stop", S_CREATE, "unsafe_create", ("reconcile", "maybe_sent_reconcile", 0.0, "lookup_by_sent_data"), transport="timeout", attempt=5)
decision("limits do not block the one token refresh", S_401, "read", ("refresh_token", "unauthorized_refresh", 0.0, None), status=401, attempt=5)
decision("idempotent write 409 (idempotency conflict) stops", S_409, "idempotent_write", ("stop", "conflict", 0.0, None), status=409, attempt=3)

# --- an idem operation sent without its key is a create (reporting: the key's parameter name is
# not shown, so build_request sends it only when the host names the header; enterprise Retry
# safety: creates must not be retried blindly) ------------------------------------------------------
S_KEYLESS = "reporting: operations marked idem declare an idempotency-key parameter whose name is not shown; without the key sent, a create must not be retried blindly (enterprise Retry safety)"
for t in ["timeout", "connection_lost"]:
    decision(f"idempotent_write without its key: {t} reconciles (no blind second create)", S_KEYLESS, "idempotent_write",
             ("reconcile", "maybe_sent_reconcile", 0.0, "lookup_by_sent_data"), transport=t, key_sent=False)
for st in [408, 500, 503]:
    rule = "request_timeout" if st == 408 else "server_error"
    decision(f"idempotent_write without its key: {st} reconciles", S_KEYLESS, "idempotent_write",
             ("reconcile", rule + "_reconcile", 0.0, "lookup_by_sent_data"), status=st, key_sent=False)
decision("idempotent_write without its key: connect_failed still retries (nothing was sent)", S_CONNECT, "idempotent_write",
         ("retry", "connect_failed_retry", D1, None), transport="connect_failed", key_sent=False)
decision("idempotent_write without its key: 429 still retries (nothing was applied)", S_429, "idempotent_write",
         ("retry", "rate_limited_retry_after", 3.0, None), status=429, headers=[["Retry-After", "3"]], key_sent=False)
decision("the key-sent flag is absent: an idempotent write is treated as sent without its key", S_KEYLESS, "idempotent_write",
         ("reconcile", "maybe_sent_reconcile", 0.0, "lookup_by_sent_data"), transport="timeout", key_sent="absent")


def bad(comment, **inp):
    base = {"retry_class": "read", "attempt": 1, "elapsed_seconds": 0.0, "token_refreshed": False, "random": 0.5, "now": NOW, "status": 503, "headers": []}
    base.update(inp)
    cases.append({"tcId": len(cases) + 1, "comment": comment, "spec": "bad input", "input": base, "error": "invalid_argument"})


bad("unknown class", retry_class="browse")
bad("attempt 0", attempt=0)
bad("negative attempt", attempt=-3)
bad("random 1.0 is outside [0, 1)", random=1.0)
bad("negative random", random=-0.1)
bad("negative elapsed", elapsed_seconds=-1.0)
bad("status 99", status=99)
bad("status 600", status=600)
bad("max_attempts 0", max_attempts=0)
cases.append({"tcId": len(cases) + 1, "comment": "unknown transport failure", "spec": "bad input", "error": "invalid_argument",
              "input": {"retry_class": "read", "attempt": 1, "elapsed_seconds": 0.0, "token_refreshed": False, "random": 0.5, "now": NOW, "transport": "dns"}})

# --- webhook delivery schedule ------------------------------------------------------------------
DELAYS = [30, 120, 600, 1800, 3600, 7200, 21600]  # enterprise Limits: retry delays after the initial attempt
FIRST = 1_795_000_000
schedule = {"delays": DELAYS, "first_attempt_at": FIRST, "gives_up_at": FIRST + sum(DELAYS) + 10,
            "next_attempt_at": [{"attempts_made": n, "expected": FIRST + sum(DELAYS[:n]) if n <= 7 else None} for n in range(0, 10)],
            "invalid_attempts_made": [-1]}

# --- backoff -------------------------------------------------------------------------------------------
backoff = []
for a, r in [(1, 0.0), (1, 0.99), (2, 0.5), (3, 0.5), (4, 0.0), (4, 0.5), (7, 0.75), (100, 0.25)]:
    backoff.append({"comment": f"spec default, attempt {a}, random {r}", "attempt": a, "random": r, "expected": default_delay(a, r)})
P = {"steps": [1, 2, 4, 8], "band": None, "jitter": "full", "cap_seconds": 100}
backoff += [
    {"comment": "full jitter: r x step", "policy": P, "attempt": 3, "random": 0.5, "expected": 2.0},
    {"comment": "full jitter, past the steps: last step repeats", "policy": P, "attempt": 9, "random": 0.25, "expected": 2.0},
    {"comment": "equal jitter: step/2 + r x step/2", "policy": dict(P, jitter="equal"), "attempt": 4, "random": 0.5, "expected": 6.0},
    {"comment": "no jitter, capped", "policy": dict(P, jitter="none", cap_seconds=5), "attempt": 4, "random": 0.9, "expected": 5.0},
    {"comment": "band only", "policy": {"steps": [], "band": [10, 20], "jitter": "none", "cap_seconds": 60}, "attempt": 1, "random": 0.5, "expected": 15.0},
    {"comment": "band capped", "policy": {"steps": [1], "band": [10, 20], "jitter": "none", "cap_seconds": 12}, "attempt": 2, "random": 0.75, "expected": 12.0},
    {"comment": "attempt 0", "attempt": 0, "random": 0.5, "error": "invalid_argument"},
    {"comment": "random 1", "attempt": 1, "random": 1.0, "error": "invalid_argument"},
    {"comment": "random below 0", "attempt": 1, "random": -0.5, "error": "invalid_argument"},
    {"comment": "band min above max", "policy": {"steps": [], "band": [20, 10], "jitter": "none", "cap_seconds": 60}, "attempt": 1, "random": 0.5, "error": "invalid_argument"},
    {"comment": "unknown jitter", "policy": dict(P, jitter="wild"), "attempt": 1, "random": 0.5, "error": "invalid_argument"},
    {"comment": "negative step", "policy": dict(P, steps=[-1]), "attempt": 1, "random": 0.5, "error": "invalid_argument"},
    {"comment": "empty policy", "policy": {"steps": [], "band": None, "jitter": "none", "cap_seconds": 60}, "attempt": 1, "random": 0.5, "error": "invalid_argument"},
    {"comment": "zero cap", "policy": dict(P, cap_seconds=0), "attempt": 1, "random": 0.5, "error": "invalid_argument"},
]

# --- Retry-After (RFC 9110 10.2.3) ----------------------------------------------------------------------
RA_NOW = 784_111_777  # Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example date)
assert email.utils.formatdate(RA_NOW, usegmt=True) == "Sun, 06 Nov 1994 08:49:37 GMT"


def imf(t):
    return email.utils.formatdate(t, usegmt=True)


def rfc850(t):
    g = time.gmtime(t)
    return time.strftime("%A, %d-%b-%y %H:%M:%S GMT", g)


def asctime(t):
    g = time.gmtime(t)
    return time.strftime("%a %b ", g) + ("%2d" % g.tm_mday) + time.strftime(" %H:%M:%S %Y", g)


def ra(comment, value, expected, now=RA_NOW):
    return {"comment": comment, "value": value, "now": now, "expected": expected}


def d(seconds):
    return {"seconds": seconds, "form": "delta_seconds"}


def h(seconds):
    return {"seconds": seconds, "form": "http_date"}


# Never shortened (enterprise Errors: "wait at least Retry-After"): no cap.
retry_after = [
    ra("delta-seconds", "120", d(120)),
    ra("zero", "0", d(0)),
    ra("surrounding spaces", "  30 ", d(30)),
    ra("one hour exactly", "3600", d(3600)),
    ra("over an hour is kept, never shortened", "3601", d(3601)),
    ra("two hours is kept", "7200", d(7200)),
    ra("more digits than 64 bits: the longest wait there is", "99999999999999999999999", d(2**64 - 1)),
    ra("a minute", "60", d(60)),
    ra("IMF-fixdate 2 minutes ahead", imf(RA_NOW + 120), h(120)),
    ra("IMF-fixdate: the RFC's example date at now", "Sun, 06 Nov 1994 08:49:37 GMT", h(0)),
    ra("obsolete RFC 850 form, 5 minutes ahead", rfc850(RA_NOW + 300), h(300)),
    ra("asctime form, 10 minutes ahead", asctime(RA_NOW + 600), h(600)),
    ra("asctime with a two-digit day", asctime(RA_NOW + 86400 * 10), h(864000)),
    ra("date in the past gives 0", imf(RA_NOW - 3600), h(0)),
    ra("date a day ahead is kept", imf(RA_NOW + 86400), h(86400)),
    ra("IMF-fixdate in 2026", imf(NOW + 45), h(45), now=NOW),
    ra("negative number is garbage", "-5", None),
    ra("fraction is garbage", "1.5", None),
    ra("empty is absent", "", None),
    ra("words are garbage", "soon", None),
    ra("date without GMT is garbage", "Sun, 06 Nov 1994 08:49:37", None),
    # One timestamp parser for every time the services send (occurred_at, expires_at, Retry-After): an ISO 8601
    # date is read as the date it names, never taken for garbage (garbage backs off 2 s: maybe shorter than asked).
    ra("an ISO 8601 date is read by the same parser: at now, 0", "1994-11-06T08:49:37Z", h(0)),
    ra("an ISO 8601 date 2 minutes ahead", "1994-11-06T08:51:37+00:00", h(120)),
    # issue 24: a number too large to represent is "longer than any budget", never garbage
    # (garbage would back off 2 s and retry: shorter than the server asked)
    ra("65 digits: still a number, the longest wait there is", "9" * 65, d(2**64 - 1)),
    ra("a thousand digits: the longest wait there is", "1" + "0" * 999, d(2**64 - 1)),
    ra("over 64 characters that are not all digits is garbage", "9" * 64 + "s", None),
    ra("number with a unit is garbage", "120s", None),
]
for c in retry_after:
    assert c["value"] != "" or c["expected"] is None

# --- rate budgets ----------------------------------------------------------------------------------------
# Times are whole seconds. A request at second s may have been sent as late as s + 0.999, and may reach
# the service up to a second later than a request sent after it (latency differs from one request to the
# next): to keep every rolling minute the service counts within the limit, it counts through second
# s + 61 and frees its place at s + 62 (a limit of 2 per minute never lets 3 requests into any 60 s of
# arrivals while the latency spread stays under a second).
rate = [
    {"comment": "one window of 2 per minute; a place frees 62 whole seconds after its request", "windows": [["a", 2, 60]],
     "ops": [{"now": 0, "allowed": True}, {"now": 0, "allowed": True}, {"now": 0, "allowed": False, "wait_until": 62, "limit": "a"},
             {"now": 59, "allowed": False, "wait_until": 62, "limit": "a"},
             {"now": 60, "allowed": False, "wait_until": 62, "limit": "a"},  # 0.999 and 60.0 are 59.001 s apart
             {"now": 61, "allowed": False, "wait_until": 62, "limit": "a"},  # sent 60.001 s apart, the first may arrive 1 s late
             {"now": 62, "allowed": True}, {"now": 62, "allowed": True},
             {"now": 63, "allowed": False, "wait_until": 124, "limit": "a"}]},
    {"comment": "the first exhausted limit is named; wait for every exhausted one", "windows": [["x", 1, 10], ["y", 1, 60]],
     "ops": [{"now": 0, "allowed": True}, {"now": 5, "allowed": False, "wait_until": 62, "limit": "x"},
             {"now": 12, "allowed": False, "wait_until": 62, "limit": "y"}, {"now": 62, "allowed": True}]},
    {"comment": "a window without a length is one minute (enterprise limits are per rolling minute): the default is the core's in every language",
     "windows": [["a", 1, None]],
     "ops": [{"now": 1000, "allowed": True}, {"now": 1061, "allowed": False, "wait_until": 1062, "limit": "a"}, {"now": 1062, "allowed": True}]},
    {"comment": "a refused request is not counted", "windows": [["a", 1, 60]],
     "ops": [{"now": 0, "allowed": True}, {"now": 30, "allowed": False, "wait_until": 62, "limit": "a"}, {"now": 62, "allowed": True}]},
    {"comment": "enterprise preset: 180 per source address stops the 181st", "preset": "enterprise",
     "ops": [{"now": 1000, "repeat": 180, "allowed": True}, {"now": 1000, "allowed": False, "wait_until": 1062, "limit": "source_address"},
             {"now": 1062, "repeat": 180, "allowed": True}, {"now": 1063, "allowed": False, "wait_until": 1124, "limit": "source_address"}]},
    {"comment": "DDEX preset: 120 per connection", "preset": "enterprise_ddex",
     "ops": [{"now": 0, "repeat": 120, "allowed": True}, {"now": 30, "allowed": False, "wait_until": 62, "limit": "ddex_connection"}]},
    {"comment": "audio upload preset: 10 per user", "preset": "enterprise_audio_upload",
     "ops": [{"now": 0, "repeat": 10, "allowed": True}, {"now": 1, "allowed": False, "wait_until": 62, "limit": "user"}]},
    {"comment": "chunk upload preset: 90 per user", "preset": "enterprise_chunk_upload",
     "ops": [{"now": 0, "repeat": 90, "allowed": True}, {"now": 0, "allowed": False, "wait_until": 62, "limit": "user"}]},
    {"comment": "unknown preset", "preset": "enterprise_turbo", "error": "invalid_argument"},
    {"comment": "zero limit", "windows": [["a", 0, 60]], "error": "invalid_argument"},
    {"comment": "no windows", "windows": [], "error": "invalid_argument"},
]

S = schedule
rates = [dict({k: v for k, v in c.items() if k != "ops"},
              ops=[{k: v for k, v in o.items() if k in ("now", "repeat")} for o in c.get("ops", [])],
              **({} if "error" in c else {"expected": [{"allowed": o["allowed"], "wait_until": o.get("wait_until"), "limit": o.get("limit")} for o in c["ops"]]}))
         for c in rate]
shape.write("retry.json", "Retry vectors for royaltykit, written by hand from the spec tables (see each case's `spec`).",
            "tests/vectors/gen_retry_vectors.py", [
    shape.group("decide_retry", cases, defaults={"max_attempts": 5, "max_elapsed_seconds": 300}),
    shape.group("webhook_retry_schedule", [{"comment": "the service's delays between delivery attempts", "expected": S["delays"]}]),
    shape.group("webhook_next_attempt_at", [{"first_attempt_at": S["first_attempt_at"], **c} for c in S["next_attempt_at"]]
                + [{"first_attempt_at": S["first_attempt_at"], "attempts_made": n, "error": "invalid_argument"} for n in S["invalid_attempts_made"]]),
    shape.group("webhook_gives_up_at", [{"first_attempt_at": S["first_attempt_at"], "expected": S["gives_up_at"]}]),
    shape.group("backoff_delay", backoff),
    shape.group("parse_retry_after", retry_after),
    shape.group("rate_budget", rates, comment="a new budget (windows or a preset), then try_acquire(now) for each op (repeat times): expected is one decision per op")])
