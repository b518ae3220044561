import json
import os
from pathlib import Path

import pytest

VECTORS = Path(os.environ.get("ROYALTYKIT_VECTORS", Path(__file__).resolve().parents[2] / "tests" / "vectors"))


def load(name: str) -> dict:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def body_bytes(b: dict) -> bytes:
    return b["utf8"].encode("utf-8") if "utf8" in b else bytes.fromhex(b["hex"])


@pytest.fixture(autouse=True)
def _installed_package():
    """The suite must test the installed wheel, not a source tree on sys.path."""
    import royaltykit

    assert "site-packages" in royaltykit.__file__, royaltykit.__file__


@pytest.fixture(scope="module")
def fake():
    """The shared fake API (tests/fakeapi/server.py), one process per test module."""
    from test_client import Fake

    f = Fake()
    yield f
    f.proc.stdin.close()  # type: ignore[union-attr]
    f.proc.wait(timeout=10)
