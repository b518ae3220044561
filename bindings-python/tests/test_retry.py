"""tests/vectors/retry.json against the installed wheel, plus Python-surface checks."""

import email.utils
import time

import pytest
import royaltykit as rk
from conftest import load

V = load("retry.json")
assert len(V["decisions"]) >= 100


@pytest.mark.parametrize("c", V["decisions"], ids=lambda c: f"tc{c['tcId']}")
def test_decision_vector(c):
    i = c["input"]
    run = lambda: rk.decide_retry(  # noqa: E731
        i["retry_class"], attempt=i["attempt"], status=i.get("status"), headers=[tuple(h) for h in i.get("headers", [])],
        transport=i.get("transport"), elapsed_seconds=i["elapsed_seconds"], token_refreshed=i["token_refreshed"],
        random=i["random"], now=i["now"], max_attempts=i.get("max_attempts"), max_elapsed_seconds=i.get("max_elapsed_seconds"))
    if "error" in c:
        with pytest.raises(rk.InvalidArgumentError) as info:
            run()
        assert info.value.code == c["error"]
        return
    d = run()
    e = c["expected"]
    assert (d.action, d.rule, d.reconcile) == (e["action"], e["rule"], e["reconcile"])
    assert d.delay_seconds == pytest.approx(e["delay_seconds"], abs=1e-9)
    assert len(d.reason) > 10


def test_schedule_vectors():
    s = V["schedule"]
    assert rk.webhook_retry_schedule() == s["delays"]
    assert rk.webhook_gives_up_at(s["first_attempt_at"]) == s["gives_up_at"]
    for c in s["next_attempt_at"]:
        assert rk.webhook_next_attempt_at(s["first_attempt_at"], c["attempts_made"]) == c["expected"]
    for n in s["invalid_attempts_made"]:
        with pytest.raises(rk.InvalidArgumentError):
            rk.webhook_next_attempt_at(s["first_attempt_at"], n)


@pytest.mark.parametrize("c", V["backoff"], ids=lambda c: c["comment"])
def test_backoff_vector(c):
    def run():
        if "policy" in c:
            p = c["policy"]
            policy = rk.BackoffPolicy(p["steps"], band=tuple(p["band"]) if p["band"] else None, jitter=p["jitter"], cap_seconds=p["cap_seconds"])
            return rk.backoff_delay(c["attempt"], random=c["random"], policy=policy)
        return rk.backoff_delay(c["attempt"], random=c["random"])
    if "error" in c:
        with pytest.raises(rk.InvalidArgumentError):
            run()
    else:
        assert run() == pytest.approx(c["expected"], abs=1e-9)


@pytest.mark.parametrize("c", V["retry_after"], ids=lambda c: c["comment"])
def test_retry_after_vector(c):
    r = rk.parse_retry_after(c["value"], c["now"], cap_seconds=c.get("cap_seconds"))
    got = None if r is None else {"seconds": r.seconds, "capped": r.capped, "form": r.form}
    assert got == c["expected"]


@pytest.mark.parametrize("c", V["rate_budget"], ids=lambda c: c["comment"])
def test_rate_budget_vector(c):
    def make():
        if "preset" in c:
            return rk.RateBudget.preset(c["preset"])
        return rk.RateBudget([tuple(w) for w in c["windows"]])
    if "error" in c:
        with pytest.raises(rk.InvalidArgumentError):
            make()
        return
    b = make()
    for op in c["ops"]:
        for _ in range(op.get("repeat", 1)):
            d = b.try_acquire(op["now"])
            assert (d.allowed, d.wait_until, d.limit) == (op["allowed"], op.get("wait_until"), op.get("limit")), op


def test_defaults_clock_and_rng():
    assert all(30 <= rk.backoff_delay(4) < 60 for _ in range(50))
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    d = rk.decide_retry("read", attempt=1, status=429, headers={"Retry-After": date})
    assert d.action == "retry" and 28 <= d.delay_seconds <= 31
    assert rk.parse_retry_after(None) is None


@pytest.mark.parametrize("call", [
    lambda: rk.decide_retry("read", attempt=1, status=503, random=float("nan")),
    lambda: rk.decide_retry("read", attempt=1),
    lambda: rk.decide_retry("read", attempt=1, status=500, transport="timeout"),
    lambda: rk.decide_retry("nope", attempt=1, status=500),
    lambda: rk.backoff_delay(0),
    lambda: rk.RateBudget.preset("x"),
])
def test_retry_bad_values(call):
    with pytest.raises(rk.InvalidArgumentError):
        call()


@pytest.mark.parametrize("call", [
    lambda: rk.decide_retry(5, attempt=1, status=500),
    lambda: rk.decide_retry("read", attempt="1", status=500),
    lambda: rk.backoff_delay("1"),
    lambda: rk.parse_retry_after(120),
    lambda: rk.RateBudget("enterprise"),
])
def test_retry_wrong_types(call):
    with pytest.raises(TypeError):
        call()
