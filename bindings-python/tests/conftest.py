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


@pytest.fixture(scope="module")
def redis_port(tmp_path_factory: pytest.TempPathFactory):
    """A throw-away redis-server on 127.0.0.1 (one per test module): its port."""
    from resp import free_port, have_redis, start_redis

    if not have_redis():
        pytest.skip("redis-server is missing (make setup installs it)")
    port = free_port()
    proc = start_redis(port, tmp_path_factory.mktemp("redis"))
    yield port
    proc.terminate()
    proc.wait(timeout=10)
