"""An export started by one language's worker is finished by another's (issue 42, point 6).

A worker process of one language starts a reporting export job against the shared fake API
(tests/fakeapi/server.py). It saves each checkpoint to a file before each of its requests and
pauses. The
worker is killed with SIGKILL while a request is in flight: either the create (which the
service applied) or a read of the export. Then a worker of another language resumes the job
from that file. The run must end with the artifact complete at the target, and with exactly one
export created in both processes together.

The workers are bindings-python/tests-receivers/resume_child.py,
bindings-wasm/tests-receivers/resume-child.mjs and bindings-kotlin/tests-receivers/ResumeApp.kt,
each run from the installed package. scripts/receivers-env.sh installs them and says how to start
them (RESUME_CHILDREN, JSON: language -> argv).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILDREN: dict[str, list[str]] = json.loads(os.environ["RESUME_CHILDREN"])
# Where the request the first worker is killed in is held open (the create is applied first).
PHASES = {
    "create": {"op": "createPlatformExport", "nth": 1, "do": "stall", "seconds": 20, "apply": True},
    "read": {"op": "getPlatformExport", "nth": 1, "do": "stall", "seconds": 20},
}


class Fake:
    """The shared fake API, in its own process."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fakeapi" / "server.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("listening "), line
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"

    def control(self, what: str, payload: dict | None = None) -> dict:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(self.url + "/_fake/" + what, data=data,
                                     method="POST" if data is not None else "GET")
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if what != "artifact" else {"artifact": body}


@pytest.fixture(scope="module")
def fake() -> Iterator[Fake]:
    f = Fake()
    yield f
    assert f.proc.stdin is not None
    f.proc.stdin.close()
    f.proc.wait(timeout=10)


PAIRS = [("kotlin", "python"), ("python", "node"), ("node", "kotlin")]


@pytest.mark.parametrize("phase", sorted(PHASES))
@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}-then-{b}" for a, b in PAIRS])
def test_a_job_killed_in_one_language_is_finished_by_another_with_one_export(
        fake: Fake, tmp_path: Path, first: str, second: str, phase: str) -> None:
    fault = PHASES[phase]
    fake.control("reset", {"faults": [fault], "states": ["ready"]})
    checkpoint, target = tmp_path / "job.json", tmp_path / "statements.csv"
    args = [fake.url, str(checkpoint), str(target)]
    worker = subprocess.Popen(CHILDREN[first] + ["start", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while fake.control("stats")["requests"].get(fault["op"], 0) < 1:
            assert worker.poll() is None, worker.communicate()
            assert time.monotonic() < deadline, f"{first} never sent {fault['op']}"
            time.sleep(0.05)
        # the request is held open by the fake API: the worker dies with it in flight
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.kill()
        worker.wait(timeout=10)
    saved = checkpoint.read_text(encoding="utf-8")
    assert json.loads(saved)["options"]["request_id"] == "cross-language"
    assert not target.exists()

    resumed = subprocess.run(CHILDREN[second] + ["resume", *args], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    stats = fake.control("stats")
    assert stats["exports_created"] == 1, stats
    assert stats["requests"].get("createPlatformExport", 0) == 1, stats
    assert target.read_bytes() == fake.control("artifact")["artifact"]
    assert resumed.stdout.strip(), resumed.stdout
