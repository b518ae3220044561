"""Interrupt and resume (issue 42, point 6), from the installed wheel.

A child process (interrupt_child.py) runs run_export against a fake API in this process and gets
SIGINT while the k-th request of the run is in flight (for every k of a whole run: token, [list],
create, each read, the download half received), and once during a poll wait; a second child
resumes from the checkpoint. Together they make one export, the artifact is whole at ``to``, and
no temporary file is left. Then the three checkpoints saved by the core (tests/vectors), and the
checkpoint callback itself."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import requests

import royaltykit as rk
from conftest import load
from fakeexports import ARTIFACT, ExportsApi
from royaltykit.client import AsyncReportsClient, ReportsClient

HERE = Path(__file__).resolve().parent
TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
BODY = {"export_class": "statements", "format": "csv", "period": "2026-10"}
# A whole run's requests: a keyed job creates at once; an unkeyed one lists first (to find its
# export again should the create's answer be lost).
RUNS = {True: ["token", "create", "read", "read", "download"], False: ["token", "list", "create", "read", "read", "download"]}


CHILDREN: list[subprocess.Popen] = []


@pytest.fixture
def api():
    a = ExportsApi(pending=1)
    yield a
    a.close()
    while CHILDREN:  # a test that failed half-way leaves no child behind
        proc = CHILDREN.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def sigint_default() -> None:
    """In the child before it runs: SIGINT's default disposition. A suite started as a background job
    of a shell without job control inherits SIGINT ignored, and a Python started with SIGINT ignored
    installs no KeyboardInterrupt handler, so the signal this test sends would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def child(api: ExportsApi, tmp: Path, name: str, mode: str, keyed: bool, resume: Path | None = None,
          interval: float = 0.05) -> tuple[subprocess.Popen, Path]:
    work = tmp / name
    work.mkdir()
    cfg = {"url": api.url, "mode": mode, "keyed": keyed, "to": str(tmp / "out" / "report.csv"), "work": str(work),
           "interval": interval, "resume": str(resume) if resume else None}
    proc = subprocess.Popen([sys.executable, str(HERE / "interrupt_child.py"), json.dumps(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    CHILDREN.append(proc)
    return proc, work


def finish(proc: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """The child's output once it exited; a child that hangs is made to show its stacks, then killed."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(0.5)
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"the child did not exit in {timeout} s:\n{err}") from None


def wait_for(predicate, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def temp_files(tmp: Path) -> list[str]:
    return [p.name for p in (tmp / "out").iterdir() if p.name.startswith(".royaltykit-")]


def interrupt_then_resume(api: ExportsApi, tmp: Path, mode: str, keyed: bool, k: int | None) -> dict:
    """SIGINT while request k is in flight (None: during the poll wait after the first read), then
    a resume; returns what the interrupted child reported."""
    (tmp / "out").mkdir()
    if k is not None:
        api.hold_at = k
        first, work = child(api, tmp, "first", mode, keyed)
        if not api.reached.wait(30):
            raise AssertionError((api.ops(), finish(first, 1)))
    else:
        first, work = child(api, tmp, "first", mode, keyed, interval=2.0)
        wait_for(lambda: (work / "polled").exists() or first.poll() is not None, "the first poll")
    first.send_signal(signal.SIGINT)
    # The held request is answered 2 s later. Python runs a signal's handler between bytecodes: a
    # SIGINT that lands just before the child blocks in recv() is raised only when recv()
    # returns, so the request must come back (or the child would wait for its read timeout).
    answer = threading.Timer(2.0, api.release.set)
    answer.start()
    try:
        out, err = finish(first, 30)
    finally:
        answer.cancel()
        api.release.set()
    assert first.returncode == 3, (first.returncode, out, err)
    report = json.loads((work / "interrupted.json").read_text())
    # Nothing beside `to`: the temporary file went with the interruption.
    assert temp_files(tmp) == [] and not (tmp / "out" / "report.csv").exists()

    # Resumed from the interruption's checkpoint (sync), or from the last one on_checkpoint gave
    # (async: it was given before the request in flight went out), when there is one.
    resume = work / "from-error.json"
    resume.write_text(report["checkpoint"])
    if mode == "async" and (work / "checkpoint.json").exists():
        resume = work / "checkpoint.json"
    second, work2 = child(api, tmp, "second", mode, keyed, resume=resume)
    out, err = finish(second, 60)
    assert second.returncode == 0, (second.returncode, out, err, api.ops())
    result = json.loads((work2 / "result.json").read_text())

    assert len(api.exports) == 1, api.exports  # one export, whichever step was interrupted
    export_id = next(iter(api.exports))
    assert result == {"export_id": export_id, "size": len(ARTIFACT)}
    assert (tmp / "out" / "report.csv").read_bytes() == ARTIFACT
    assert temp_files(tmp) == []
    creates = api.creates()
    if keyed:  # a create in flight is sent again with its key, never with another
        assert creates and len({c["key"] for c in creates}) == 1 and creates[0]["key"], creates
    else:  # an unkeyed create is looked up in the list, never sent blindly
        assert len(creates) == 1 and creates[0]["key"] is None, creates

    # What the interruption said.
    assert report["code"] == "export_interrupted"
    assert report["kind"] == ("CancelledError" if mode == "async" else "ExportInterrupted")
    if mode == "async":
        # the task's own CancelledError, unchanged, carrying the job (and saying so in a note)
        assert report["cancelled_error"] and report["cause"] is None
        assert any("export_interruption" in n for n in report["notes"]), report["notes"]
    else:
        assert report["keyboard_interrupt"] and report["cause"] == "KeyboardInterrupt"
    create_n = next(e["n"] for e in api.log if e["op"] == "create")
    named = k is None or k > create_n
    assert report["export_id"] == (export_id if named else None), (k, report)
    assert report["message"] == rk.export_interrupted_message(report["export_id"])
    assert rk.ExportJob.resume(report["checkpoint"]).export_id == report["export_id"]
    return report


CASES = [(mode, keyed, k) for mode in ("httpx", "async") for keyed in (True, False) for k in range(1, len(RUNS[keyed]) + 1)]
CASES += [("requests", True, k) for k in range(1, len(RUNS[True]) + 1)]
CASES += [("httpx", True, None), ("async", False, None), ("requests", False, None)]


@pytest.mark.parametrize("mode,keyed,k", CASES,
                         ids=[f"{m}-{'keyed' if kd else 'unkeyed'}-{'poll-wait' if k is None else RUNS[kd][k - 1] + str(k)}"
                              for m, kd, k in CASES])
def test_sigint_at_each_step_then_resume_makes_one_export(api, tmp_path, mode, keyed, k):
    interrupt_then_resume(api, tmp_path, mode, keyed, k)
    if k is not None:
        assert api.ops()[k - 1] == RUNS[keyed][k - 1]  # the step the signal landed in


@pytest.mark.parametrize("keyed", [True, False])
def test_a_whole_run_makes_the_requests_the_steps_above_interrupt(api, tmp_path, keyed):
    (tmp_path / "out").mkdir()
    proc, work = child(api, tmp_path, "whole", "httpx", keyed)
    out, err = finish(proc, 60)
    assert proc.returncode == 0, err
    assert api.ops() == RUNS[keyed]
    assert (tmp_path / "out" / "report.csv").read_bytes() == ARTIFACT


# ---- the checkpoints saved by the core (another language's client may have saved them) ----------

VECTORS = load("checkpoints.json")


class Clock:
    """A clock the client's sleeps move forward (the waits pass in no time)."""

    def __init__(self) -> None:
        self.offset, self.waits = 0.0, []

    def __call__(self) -> float:
        return time.time() + self.offset

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.offset += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


def run(kind: str, api: ExportsApi, tenant: str, clock: Clock | None = None, **kw) -> rk.client.ExportResult:
    clock = clock or Clock()
    common = dict(base_url=api.url, client_id="cid", client_secret="csecret", tenant_id=tenant, clock=clock,
                  sleep=clock.asleep if kind == "async" else clock.sleep)
    if kind in ("httpx", "requests"):
        with httpx.Client() if kind == "httpx" else requests.Session() as http:
            return ReportsClient(http, **common).run_export(**kw)

    async def main() -> rk.client.ExportResult:
        async with httpx.AsyncClient() as http:
            return await AsyncReportsClient(http, **common).run_export(**kw)

    return asyncio.run(main())


@pytest.mark.parametrize("kind", ["httpx", "async", "requests"])
@pytest.mark.parametrize("vector", VECTORS["checkpoints"], ids=lambda v: v["comment"].split(":")[0][:40])
def test_the_core_s_checkpoints_resume_to_one_export(api, tmp_path, kind, vector):
    body = json.loads(VECTORS["body"])
    # What the process that saved the checkpoint had done: the export exists on the service.
    if vector["export_id"] is not None:
        api.add_export(body, export_id=vector["export_id"])
    else:
        api.add_export(body, key=vector["next"].get("idempotency_key"))
    given: list[str] = []
    result = run(kind, api, VECTORS["tenant_id"], resume=vector["checkpoint"], to=tmp_path / "out.csv",
                 on_checkpoint=given.append)
    assert len(api.exports) == 1 and result.export_id == next(iter(api.exports))
    assert (tmp_path / "out.csv").read_bytes() == ARTIFACT
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]
    first = api.log[1]  # after the token exchange
    assert api.log[0]["op"] == "token"
    assert (first["method"], first["path"]) == (vector["next"]["method"], vector["next"]["path"])
    if "idempotency_key" in vector["next"]:
        assert first["key"] == vector["next"]["idempotency_key"]
    assert not api.creates() or vector["keyed"]  # an unkeyed job never creates again
    assert given and vector["checkpoint"] not in given  # the text it resumed from is not given again


# ---- the callback, in this process -----------------------------------------------------------------


@pytest.mark.parametrize("keyed", [True, False])
def test_the_checkpoint_is_given_before_each_send_and_pause_of_the_job_and_only_when_it_changed(api, tmp_path, keyed):
    given: list[str] = []
    order: list[str] = []  # the job's requests as they arrive, its checkpoints and its pauses
    api.on_request = lambda entry: order.append(entry["op"])
    clock = Clock()

    def checkpoint(text: str) -> None:
        given.append(text)
        order.append("checkpoint")

    def pause(seconds: float) -> None:
        order.append("pause")
        clock.sleep(seconds)

    with httpx.Client() as http:
        client = ReportsClient(http, base_url=api.url, client_id="cid", client_secret="csecret", tenant_id=TENANT,
                               idempotency_header="Idempotency-Key" if keyed else None, clock=clock, sleep=pause,
                               min_poll_interval_seconds=0.01, max_poll_interval_seconds=0.01)
        client.run_export(BODY, to=tmp_path / "out.csv", on_checkpoint=checkpoint)
    job = [o for o in order if o != "token"]
    assert [o for o in job if o not in ("checkpoint", "pause")] == RUNS[keyed][1:]
    # A new checkpoint right before each of the job's requests and each of its pauses (the poll
    # intervals), and none besides.
    assert job.count("pause") >= 2, job
    assert all(job[i - 1] == "checkpoint" for i, o in enumerate(job) if o != "checkpoint"), job
    assert job.count("checkpoint") == len(job) - job.count("checkpoint"), job
    assert all(a != b for a, b in zip(given, given[1:]))
    # Each checkpoint is the job at that moment: resumed, it knows what it knew then.
    create = job[: job.index("create")].count("checkpoint") - 1
    assert rk.ExportJob.resume(given[create]).export_id is None
    assert rk.ExportJob.resume(given[-1]).export_id == next(iter(api.exports))
    assert api.tokens and not [t for t in [*api.tokens, "csecret"] if t in "".join(given)]  # no credential, no token


@pytest.mark.parametrize("kind", ["httpx", "async", "requests"])
def test_a_job_killed_during_a_retry_after_resumes_the_wait_and_never_sends_early(api, tmp_path, kind):
    # The first read is answered 429 with Retry-After: 2. The checkpoint is given before the
    # pause too, so a process killed during it resumes a job that still waits, not one that sends.
    first_read = RUNS[False].index("read") + 1  # the client sends no idempotency key: it lists first
    api.faults[first_read] = "429"
    clock = Clock()
    given: list[tuple[str, float, int]] = []
    run(kind, api, TENANT, clock=clock, body=BODY, to=tmp_path / "out.csv",
        on_checkpoint=lambda text: given.append((text, clock(), len(api.log))))
    assert [e["op"] for e in api.log] == RUNS[False][:first_read] + ["read", "read", "download"]
    # Given once the 429 had arrived: before its pause, then before the next read goes out.
    (text, at), (then, _) = [(text, at) for text, at, seen in given if seen == first_read]
    step, _ = rk.ExportJob.resume(text).advance(at, session=rk.Session())
    assert isinstance(step, rk.CallStep.Wait) and step.seconds == pytest.approx(2.0, abs=0.05), step
    # Resumed a second later, it waits the rest; once the Retry-After has passed, it reads at once.
    step, _ = rk.ExportJob.resume(text).advance(at + 1.0, session=rk.Session())
    assert isinstance(step, rk.CallStep.Wait) and step.seconds == pytest.approx(1.0, abs=0.05), step
    step, _ = rk.ExportJob.resume(text).advance(at + 2.5, session=rk.Session())
    assert not isinstance(step, rk.CallStep.Wait), step
    assert then != text


def test_body_or_resume_exactly_one_and_a_resumed_job_keeps_its_options(api):
    with httpx.Client() as http:
        client = ReportsClient(http, base_url=api.url, client_id="cid", client_secret="csecret", tenant_id=TENANT)
        saved = rk.ExportJob(tenant_id=TENANT, body=BODY).save()
        with pytest.raises(TypeError, match="not both"):
            client.run_export(BODY, resume=saved)
        with pytest.raises(TypeError, match="give body"):
            client.run_export()
        with pytest.raises(TypeError, match="max_polls"):
            client.run_export(resume=saved, max_polls=3)
        with pytest.raises(TypeError, match="on_checkpoint"):
            client.run_export(BODY, on_checkpoint="file.json")  # type: ignore[arg-type]
        with pytest.raises(rk.InvalidArgumentError):
            client.run_export(resume="{not a checkpoint")
    assert api.log == []  # all of it before any request


class _Interrupt:
    """A progress callback that presses Ctrl-C once half the artifact has arrived."""

    def __call__(self, got: int, total: int | None) -> None:
        if total and got >= total // 2:
            raise KeyboardInterrupt


def test_a_keyboard_interrupt_in_the_download_removes_the_temporary_file_and_resumes(api, tmp_path):
    with httpx.Client() as http:
        client = ReportsClient(http, base_url=api.url, client_id="cid", client_secret="csecret", tenant_id=TENANT,
                               min_poll_interval_seconds=0.01, max_poll_interval_seconds=0.01)
        with pytest.raises(rk.ExportInterrupted) as info:
            client.run_export(BODY, to=tmp_path / "out.csv", progress=_Interrupt())
        e = info.value
        assert isinstance(e, KeyboardInterrupt) and isinstance(e.__cause__, KeyboardInterrupt)
        assert e.code == "export_interrupted" and e.export_id == next(iter(api.exports))
        assert str(e) == rk.export_interrupted_message(e.export_id)
        assert list(tmp_path.iterdir()) == []
        result = client.run_export(resume=e.checkpoint, to=tmp_path / "out.csv")
    assert result.export_id == e.export_id and (tmp_path / "out.csv").read_bytes() == ARTIFACT
    assert len(api.exports) == 1 and len(api.creates()) == 1
    assert api.ops()[-2:] == ["download", "download"]  # polled no more: resumed at the download


def test_a_cancelled_task_raises_its_own_cancelled_error_carrying_the_job(api, tmp_path):
    api.hold_at = 3  # the first read of the export, in flight when the task is cancelled
    # The error itself, seen from inside the task.
    seen: list[BaseException] = []

    async def inner() -> None:
        async with httpx.AsyncClient() as http:
            client = AsyncReportsClient(http, base_url=api.url, client_id="cid", client_secret="csecret",
                                        tenant_id=TENANT, idempotency_header="Idempotency-Key")

            async def job() -> None:
                try:
                    await client.run_export(BODY, to=tmp_path / "out.csv")
                except BaseException as e:
                    seen.append(e)
                    raise

            task = asyncio.create_task(job())
            await asyncio.get_running_loop().run_in_executor(None, api.reached.wait, 30)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert task.cancelled()
            api.release.set()

    asyncio.run(inner())
    (e,) = seen
    assert type(e) is asyncio.CancelledError  # asyncio compares the type itself (timeout, TaskGroup)
    left = rk.export_interruption(e)
    assert left is not None and left.code == "export_interrupted"
    assert left.export_id == next(iter(api.exports)) and left.checkpoint
    assert str(left) == rk.export_interrupted_message(left.export_id)
    assert list(tmp_path.iterdir()) == []


def test_asyncio_timeout_still_raises_timeout_error_and_the_job_is_found_on_it(api, tmp_path):
    api.hold_at = 3  # the first read of the export hangs past the timeout

    async def inner() -> BaseException:
        async with httpx.AsyncClient() as http:
            client = AsyncReportsClient(http, base_url=api.url, client_id="cid", client_secret="csecret",
                                        tenant_id=TENANT, idempotency_header="Idempotency-Key")
            try:
                async with asyncio.timeout(1.0):
                    await client.run_export(BODY, to=tmp_path / "out.csv")
            except BaseException as e:
                return e
            raise AssertionError("the export ended inside the timeout")

    try:
        e = asyncio.run(inner())
    finally:
        api.release.set()
    assert type(e) is TimeoutError, repr(e)
    left = rk.export_interruption(e)
    assert left is not None and left.export_id == next(iter(api.exports)) and left.checkpoint
    assert rk.export_interruption(ValueError("unrelated")) is None
    assert list(tmp_path.iterdir()) == []
