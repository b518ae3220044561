"""Runs against the test-hooks build (``panic_for_tests`` is not in the shipped wheel): a Rust
panic reaches Python as ``RoyaltyKitError(code="internal_error")``, an ``Exception`` (pyo3's
``PanicException`` is not), and the library keeps working."""

import royaltykit as rk
import pytest
from royaltykit import _native


def test_a_rust_panic_reaches_python_as_royaltykit_error() -> None:
    for _ in range(3):
        with pytest.raises(rk.RoyaltyKitError) as info:
            _native.panic_for_tests()  # type: ignore[attr-defined]
        assert info.value.code == "internal_error"
        assert isinstance(info.value, Exception)
    body = b'{"event":"e","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T00:00:00Z"}'
    signed = rk.sign_webhook("s", body, timestamp=1000, delivery_id="d")
    assert rk.verify_webhook(signed, body, "s", now=1000).delivery_id == "d"
