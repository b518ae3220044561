"""The retry surface of the installed wheel beyond the shared vectors (run by test_vectors.py)."""

import email.utils
import time

import pytest
import royaltykit as rk


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
