"""The clients (royaltykit.client) against the shared fake API (tests/fakeapi/server.py) over real
loopback HTTP, with each HTTP library users have: httpx sync, httpx async, requests.

The fake server's clock can be moved forward; the clients get a clock and a sleep that move it,
so minutes of backoff, Retry-After and rate pacing pass in no time while the server still checks
every wait. One test uses the real clock and time.sleep (the defaults)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import httpx
import pytest
import requests

import royaltykit as rk
from docs import doc_example
from royaltykit.client import AsyncEnterpriseClient, AsyncReportsClient, EnterpriseClient, ReportsClient, Response

ROOT = Path(os.environ.get("ROYALTYKIT_ROOT", Path(__file__).resolve().parents[2]))
TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
BODY = {"export_class": "statements", "format": "csv", "period": "2026-10"}


class Fake:
    """The fake API process and its clock."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        # env: more of the server's environment (SSL_CERT_FILE: the CA it trusts when it sends a
        # delivery to an https endpoint)
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fakeapi" / "server.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=None if env is None else {**os.environ, **env})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("listening "), line
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"
        self.offset = 0.0

    def control(self, what: str, payload: dict | None = None) -> dict:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(self.url + "/_fake/" + what, data=data, method="POST" if data is not None else "GET")
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())

    def reset(self, **script) -> None:
        self.control("reset", script)

    def stats(self) -> dict:
        return self.control("stats")

    def artifact(self) -> bytes:
        with urllib.request.urlopen(self.url + "/_fake/artifact") as r:
            return r.read()

    # what the clients get as their clock and sleep
    def clock(self) -> float:
        return time.time() + self.offset

    def sleep(self, seconds: float) -> None:
        self.offset += seconds
        self.control("advance", {"seconds": seconds})

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


# The scripted runs ("etl", "readme") live in the fake server, the same for every language.


def reports(kind: str, http, fake: Fake, **kw):
    common = dict(base_url=fake.url, client_id="cid", client_secret="csecret", tenant_id=TENANT, timeout=1.0,
                  clock=fake.clock, sleep=fake.asleep if kind == "async" else fake.sleep)
    common.update(kw)
    return (AsyncReportsClient if kind == "async" else ReportsClient)(http, **common)


def run_export(kind: str, fake: Fake, to, **kw):
    """The ETL job with each HTTP library."""
    if kind in ("httpx", "requests"):
        with httpx.Client() if kind == "httpx" else requests.Session() as http:
            return reports(kind, http, fake).run_export(BODY, to=to, **kw)

    async def main():
        async with httpx.AsyncClient() as http:
            return await reports(kind, http, fake).run_export(BODY, to=to, **kw)

    return asyncio.run(main())


KINDS = ["httpx", "async", "requests"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_etl_job_survives_every_fault_and_creates_one_export(kind, fake, tmp_path):
    fake.reset(scenario="etl")
    artifact = fake.artifact()
    seen = []
    result = run_export(kind, fake, tmp_path / "out.csv", progress=lambda got, total: seen.append((got, total)))
    stats = fake.stats()
    assert stats["exports_created"] == 1, stats  # the dropped create was looked up, not sent again
    assert (tmp_path / "out.csv").read_bytes() == artifact
    assert result.size == len(artifact) and result.path == str(tmp_path / "out.csv")
    assert result.export_id == stats["exports"][0]["id"]
    assert stats["retry_after_violations"] == 0, stats
    assert stats["tokens_issued"] == 2, stats  # the first, and one refresh after the 401
    assert stats["requests"]["exchangePlatformClientCredential"] == 3  # 503, then two issued
    assert stats["downloads"] == 1 and stats["requests"]["downloadPlatformExport"] == 3  # 206, truncated, whole
    assert stats["requests"]["createPlatformExport"] == 1
    assert seen and seen[-1] == (len(artifact), len(artifact))
    # the scripted 206 (half the artifact) never shows as a complete download
    assert all(got == len(artifact) for got, total in seen if got == total), seen
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".royaltykit-")]
    # the artifact's mode is 0644 less the umask, as in every language
    umask = os.umask(0o022)
    os.umask(umask)
    assert (tmp_path / "out.csv").stat().st_mode & 0o777 == 0o644 & ~umask


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", ["DEBUG", "INFO", "WARNING"])
def test_without_on_event_the_log_gets_every_event_at_its_level_and_none_below(kind, level, fake, tmp_path, caplog,
                                                                              monkeypatch):
    """No ``on_event`` and no telemetry: the client takes from the core only the events its
    logger shows (the others are dropped unbuilt: the level it asks the core for is the logger's),
    and the log is what it was: every ``debug`` line (each send, response and done) at DEBUG,
    every ``info`` line of the faulty run at INFO and above (its retries, refresh and polls), none
    of them at WARNING."""
    import royaltykit.client as client_module

    asked: list[str | None] = []
    choose = client_module._Base._level

    def spy(self, op):
        asked.append(choose(self, op))
        return asked[-1]

    monkeypatch.setattr(client_module._Base, "_level", spy)
    fake.reset(scenario="etl")
    with caplog.at_level(level, logger="royaltykit"):
        run_export(kind, fake, tmp_path / "o") if kind != "async" else asyncio.run(_async_export(fake, tmp_path / "o"))
    # the core is asked for the events at and above what the logger shows, never for more
    assert asked and set(asked) == {{"DEBUG": None, "INFO": "info", "WARNING": "warning"}[level]}, asked
    lines = [r for r in caplog.records if r.name == "royaltykit"]
    assert not [r for r in lines if r.levelno < getattr(logging, level)], lines
    infos = [r.getMessage().split(" ")[0] for r in lines if r.levelname == "INFO"]
    debugs = [r.getMessage().split(" ")[0] for r in lines if r.levelname == "DEBUG"]
    if level == "WARNING":
        assert infos == [] and debugs == []
    else:
        assert {"retry", "refresh_token", "poll"} <= set(infos), infos
        assert "retry listPlatformExports" in caplog.text
    if level == "DEBUG":
        assert {"send", "response", "done"} <= set(debugs), debugs
        assert debugs.count("send") == sum(fake.stats()["requests"].values()), debugs


async def _async_export(fake: Fake, to):
    async with httpx.AsyncClient() as http:
        return await reports("async", http, fake).run_export(BODY, to=to)


@pytest.mark.parametrize("kind", KINDS)
def test_the_events_of_a_faulty_etl_run_say_what_happened_and_never_a_secret(kind, fake, tmp_path, caplog):
    """Every event of the scripted ETL run (503 on the exchange, 429, a lost create, an expired
    token, a 206, a truncated body), through on_event and the ``royaltykit`` logger."""
    import re

    fake.reset(scenario="etl")
    events: list[dict] = []
    with caplog.at_level("DEBUG", logger="royaltykit"):
        if kind == "async":
            async def main():
                async with httpx.AsyncClient() as http:
                    return await reports(kind, http, fake, on_event=events.append).run_export(BODY, to=tmp_path / "o")
            asyncio.run(main())
        else:
            with httpx.Client() if kind == "httpx" else requests.Session() as http:
                reports(kind, http, fake, on_event=events.append).run_export(BODY, to=tmp_path / "o")
    kinds = [e["kind"] for e in events]
    stats = fake.stats()
    assert kinds.count("send") == sum(stats["requests"].values()), (kinds, stats)
    retries = [e for e in events if e["kind"] == "retry"]
    # the exchange's 503, the list's 429 (its Retry-After of 30 s, never less), the create lost
    after = {e["operation"]: e for e in retries}
    assert after["exchangePlatformClientCredential"]["status"] == 503 and after["exchangePlatformClientCredential"]["wait_seconds"] > 0
    assert after["listPlatformExports"]["status"] == 429 and after["listPlatformExports"]["wait_seconds"] >= 30
    assert all(e["rule"] and e["reason"] for e in retries), retries
    assert "refresh_token" in kinds and "poll" in kinds and kinds[-1] == "done", kinds
    assert [e["state"] for e in events if e["kind"] == "poll"][-1] == "ready"
    assert any(e["kind"] == "transport_failure" for e in events)
    # the same events in the log, and neither holds a token, a credential or a header
    assert len([r for r in caplog.records if r.name == "royaltykit"]) >= len(events)
    assert any("retry listPlatformExports" in r.getMessage() and r.levelname == "INFO" for r in caplog.records)
    everything = json.dumps(events) + caplog.text
    assert "csecret" not in everything and not re.search(r"rt_[0-9a-f]{8}", everything)
    assert "Bearer" not in everything and "Basic" not in everything


@pytest.mark.parametrize("kind", ["httpx", "async"])
def test_a_path_in_a_folder_that_does_not_exist_fails_before_any_export_naming_it(kind, fake, tmp_path):
    fake.reset(states=["ready"])
    target = tmp_path / "no-such-dir" / "out.csv"
    with pytest.raises(FileNotFoundError) as e:
        run_export(kind, fake, target)
    assert e.value.filename == str(target), e.value
    assert fake.stats()["exports_created"] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_an_export_into_memory_or_a_file_object(kind, fake, tmp_path):
    fake.reset(states=["ready"], artifact="a,b\n1,2\n")
    assert run_export(kind, fake, None).data == b"a,b\n1,2\n"
    with open(tmp_path / "f.csv", "wb") as f:
        assert run_export(kind, fake, f).size == 8
    assert (tmp_path / "f.csv").read_bytes() == b"a,b\n1,2\n"


def request(kind: str, fake: Fake, operation: str, *, base_url: str | None = None, raw: bool = False, **params):
    """One operation with each HTTP library (``raw``: ``request_raw``)."""
    kw = {"base_url": base_url} if base_url else {}
    method = "request_raw" if raw else "request"
    if kind in ("httpx", "requests"):
        with httpx.Client() if kind == "httpx" else requests.Session() as http:
            return getattr(reports(kind, http, fake, **kw), method)(operation, **params)

    async def main():
        async with httpx.AsyncClient() as http:
            return await getattr(reports(kind, http, fake, **kw), method)(operation, **params)

    return asyncio.run(main())


@pytest.mark.parametrize("kind", KINDS)
def test_a_dropped_create_without_a_key_is_not_sent_again(kind, fake):
    fake.reset(faults=[{"op": "createPlatformExport", "nth": 1, "do": "drop_after_apply"}])
    with pytest.raises(rk.ReconcileRequired) as e:
        request(kind, fake, "createPlatformExport", body=BODY)
    assert e.value.code == "reconcile_required" and e.value.reconcile == "lookup_by_sent_data"
    assert e.value.operation_id == "createPlatformExport"
    assert isinstance(e.value.__cause__, Exception), "the dropped connection is the cause, as in Node and Kotlin"
    assert fake.stats()["requests"]["createPlatformExport"] == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_reset_create_is_reconciled_by_the_job_then_created_once(kind, fake, tmp_path):
    # reset before the server applied it: the lookup finds nothing, so the job creates again, once
    fake.reset(faults=[{"op": "createPlatformExport", "nth": 1, "do": "reset"}], states=["ready"])
    run_export(kind, fake, tmp_path / "x.csv")
    stats = fake.stats()
    assert stats["exports_created"] == 1 and stats["requests"]["createPlatformExport"] == 2, stats
    # the baseline, and the lookup with its two grace looks (2 s, 5 s) before creating again
    assert stats["requests"]["listPlatformExports"] == 4


@pytest.mark.parametrize("kind", KINDS)
def test_errors_that_must_stop_are_api_errors(kind, fake):
    fake.reset()
    with pytest.raises(rk.ApiError) as e:
        request(kind, fake, "getPlatformExport", path={"export": "exp_missing"})
    assert e.value.status == 404 and e.value.kind == "not_found"
    page = request(kind, fake, "listPlatformExports", query={"limit": 10}, request_id="ignored-on-reads")
    assert page["data"] == []
    # the whole response when asked: status, headers as received, body, and the parsed data
    raw = request(kind, fake, "listPlatformExports", query={"limit": 10}, raw=True)
    assert isinstance(raw, Response) and raw.status == 200 and raw.data == page
    assert raw.header("content-type") == "application/json" and json.loads(raw.body) == page


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_connection_is_connect_failed_and_retried_then_reported(kind, fake):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"  # bound, never listening: refused
        with pytest.raises(rk.CallFailedError) as e:
            request(kind, fake, "listPlatformExports", base_url=closed)
    assert e.value.transport == "connect_failed" and e.value.rule == "attempts_exhausted", vars(e.value)
    assert e.value.operation_id == "token exchange"
    # The message names the operation, the host, the attempts and what the HTTP library saw; the
    # library's own exception is chained.
    text = str(e.value)
    host = closed.split("://")[1]
    assert text.startswith(f"token exchange to {host}: "), text
    assert f"({e.value.attempts} attempts made)" in text and e.value.attempts == 5, text
    assert "connection refused" in text.lower(), text
    assert e.value.__cause__ is not None and type(e.value.__cause__).__module__.split(".")[0] in ("httpx", "requests")
    assert "csecret" not in text


@pytest.mark.parametrize("kind", KINDS)
def test_max_attempts_per_client_and_per_call_bound_the_requests(kind, fake):
    """``max_attempts`` given to the client bounds each request; ``with_options`` changes it for
    the calls of a copy that shares the session (one token exchange for both)."""
    fake.reset(faults=[{"op": "listPlatformExports", "nth": n, "do": "reset"} for n in range(1, 9)])

    async def both(c):
        with pytest.raises(rk.CallFailedError) as three:
            await c.request("listPlatformExports")
        with pytest.raises(rk.CallFailedError) as two:
            await c.with_options(max_attempts=2).request("listPlatformExports")
        return three, two

    if kind == "async":
        async def main():
            async with httpx.AsyncClient() as http:
                return await both(reports(kind, http, fake, max_attempts=3))
        three, two = asyncio.run(main())
    else:
        with httpx.Client() if kind == "httpx" else requests.Session() as http:
            c = reports(kind, http, fake, max_attempts=3)
            with pytest.raises(rk.CallFailedError) as three:
                c.request("listPlatformExports")
            copy = c.with_options(max_attempts=2, timeout=5.0)
            assert copy.session is c.session and c.timeouts[1] == 1.0 and copy.timeouts[1] == 5.0
            with pytest.raises(rk.CallFailedError) as two:
                copy.request("listPlatformExports")
    assert (three.value.attempts, two.value.attempts) == (3, 2)
    assert "(2 attempts made)" in str(two.value) and three.value.transport == "connection_lost"
    stats = fake.stats()
    assert stats["requests"]["listPlatformExports"] == 5 and stats["tokens_issued"] == 1, stats


@pytest.mark.parametrize("kind", KINDS)
def test_a_read_that_times_out_is_sent_again(kind, fake):
    fake.reset(faults=[{"op": "listPlatformExports", "nth": 1, "do": "stall", "seconds": 2.5}])
    assert request(kind, fake, "listPlatformExports")["data"] == []
    assert fake.stats()["requests"]["listPlatformExports"] == 2


def test_the_defaults_sleep_for_real_and_honour_retry_after(fake):
    fake.reset(faults=[{"op": "listPlatformExports", "nth": 1, "do": "status", "status": 429, "retry_after": 1}])
    with httpx.Client() as http:
        client = ReportsClient(http, base_url=fake.url, client_id="cid", client_secret="csecret", tenant_id=TENANT)
        assert client.request("listPlatformExports")["data"] == []
    stats = fake.stats()  # the server checks the gap: no wall-clock assert here
    assert stats["retry_after_violations"] == 0 and stats["requests"]["listPlatformExports"] == 2, stats
    assert "csecret" not in repr(client)


@pytest.mark.parametrize("kind", ["httpx", "async", "requests"])
def test_a_burst_stays_inside_the_enterprise_minute(kind, fake):
    fake.reset()
    start = fake.clock()
    n = 200
    common = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1", clock=fake.clock,
                  sleep=fake.asleep if kind == "async" else fake.sleep)
    if kind == "async":
        async def main():
            async with httpx.AsyncClient() as http:
                c = AsyncEnterpriseClient(http, **common)
                return [await c.request("listEnterpriseReleases") for _ in range(n)]
        pages = asyncio.run(main())
    else:
        with (httpx.Client() if kind == "httpx" else requests.Session()) as http:
            c = EnterpriseClient(http, **common)
            pages = [c.request("listEnterpriseReleases") for _ in range(n)]
    assert all(p["data"][0]["title"] == "First" for p in pages)
    stats = fake.stats()
    assert stats["requests"]["listEnterpriseReleases"] == n and stats["tokens_issued"] == 1
    # the spec's tightest one-minute limit on a client from one address: 180 per source address
    assert 170 <= stats["max_per_minute"] <= 180, stats
    assert fake.clock() - start >= 60  # it had to wait for the minute to roll


def test_the_wrong_http_object_is_a_type_error(fake):
    with pytest.raises(TypeError, match="httpx.Client"):
        ReportsClient(object(), base_url=fake.url, client_id="c", client_secret="s", tenant_id=TENANT)
    with pytest.raises(TypeError, match="AsyncClient"):
        ReportsClient(httpx.AsyncClient(), base_url=fake.url, client_id="c", client_secret="s", tenant_id=TENANT)


@pytest.mark.parametrize("cls", [ReportsClient, AsyncReportsClient, EnterpriseClient, AsyncEnterpriseClient])
def test_a_wrong_base_url_fails_at_construction_before_any_request(cls, fake):
    """A scheme typo, a missing scheme, plain http to a remote host and a base URL with the API
    prefix raise InvalidArgumentError when the client is built: nothing is sent, nothing retried."""
    fake.reset()
    creds = (dict(client_id="cid", client_secret="csecret", tenant_id=TENANT) if "Reports" in cls.__name__
             else dict(api_key="key-1", api_secret="secret-1"))
    http = httpx.AsyncClient() if cls.__name__.startswith("Async") else httpx.Client()
    cases = {
        "htp://api.example.com": "has the scheme `htp`",
        "api.example.com": "has no scheme",
        "http://api.example.com": "plain `http` to `api.example.com`",
        "https://api.example.com/api/platform/v1": "API prefix",
        "https://key:secret@api.example.com": "user-info",
    }
    for url, says in cases.items():
        with pytest.raises(rk.InvalidArgumentError) as e:
            cls(http, base_url=url, **creds)
        assert e.value.code == "invalid_argument" and e.value.argument == "base_url", vars(e.value)
        assert says in str(e.value), str(e.value)
        assert "secret" not in str(e.value)
    assert sum(fake.stats()["requests"].values()) == 0 and fake.stats()["tokens_issued"] == 0
    # loopback over plain http is accepted (the fake API here), and any host with the opt-in
    cls(http, base_url=fake.url + "/", **creds)
    cls(http, base_url="http://api.example.com", allow_insecure_http=True, **creds)


def test_the_readme_export_job_runs_as_written(fake, tmp_path):
    """The documented 15-line ETL job, as users copy it: real clock, real sleep, faults on the way."""
    import re

    code = doc_example("python-client", "python")
    assert len(code.strip().splitlines()) <= 15
    fake.reset(scenario="readme")
    artifact = fake.artifact()
    (tmp_path / "job.py").write_text(code)
    env = {**os.environ, "REPORTS_URL": fake.url, "REPORTS_CLIENT_ID": "cid", "REPORTS_CLIENT_SECRET": "csecret",
           "REPORTS_TENANT_ID": TENANT}
    out = subprocess.run([sys.executable, "job.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=True)
    stats = fake.stats()
    assert out.stdout.endswith(f"\nexport {stats['exports'][0]['id']}: {len(artifact)} bytes in statements.csv\n"), out.stdout
    assert (tmp_path / "statements.csv").read_bytes() == artifact
    assert stats["exports_created"] == 1 and stats["retry_after_violations"] == 0 and stats["tokens_issued"] == 2, stats


def test_the_readme_consumer_workflow_runs_as_written(fake, tmp_path):
    """The documented consumer workflow: a subscription whose create answer is lost (one is made),
    every page of the subscriptions, and the canonical fetch of a release."""
    import re

    code = doc_example("python-consumer", "python")
    assert len(code.strip().splitlines()) <= 20
    fake.reset(subscriptions=23, faults=[{"op": "createEnterpriseWebhook", "nth": 1, "do": "drop_after_apply"}])
    (tmp_path / "consumer.py").write_text(code)
    env = {**os.environ, "ENTERPRISE_URL": fake.url, "ENTERPRISE_API_KEY": "key-1", "ENTERPRISE_API_SECRET": "secret-1"}
    out = subprocess.run([sys.executable, "consumer.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                         check=True)
    assert out.stdout == "subscription wh_001: store its secret now, it is shown once\n23 subscriptions\nrelease live\n"
    stats = fake.stats()
    assert stats["webhooks_created"] == 1 and stats["idempotent_replays"] == 1, stats
    assert stats["requests"]["listEnterpriseSubscriptions"] == 3
    assert stats["webhooks"]["wh_001"]["secret"] not in out.stdout + out.stderr


def test_the_readme_inbox_example_runs_as_written(fake, tmp_path):
    """The documented inbox workflow: the subscription's revealed secret to a receiver in inbox mode
    (SQLite), one delivery answered at once, the worker's drain with the canonical fetch, and
    recovery over the inbox replaying the delivery the service lost. The subscription exists
    before (the example's request_id: its create gets the same subscription and secret), with a
    lost delivery in its log."""
    import re

    code = doc_example("python-inbox", "python")
    assert len(code.strip().splitlines()) <= 20
    fake.reset()
    endpoint_url = "https://hooks.example.com/royaltykit"
    with httpx.Client() as http:
        hook = EnterpriseClient(http, base_url=fake.url, api_key="key-1", api_secret="secret-1").create_subscription(
            "ops", endpoint_url, ["ddex.delivery.failed"], request_id="ops-hook-1")
    lost = fake.control("deliver", {"reference": hook.reference, "event": "ddex.delivery.failed", "lose": True})
    fake.control("route", {"from": endpoint_url, "to": "http://127.0.0.1:9/"})  # the replay: refused, not resolved
    (tmp_path / "inbox.py").write_text(code)
    env = {**os.environ, "ENTERPRISE_URL": fake.url, "ENTERPRISE_API_KEY": "key-1", "ENTERPRISE_API_SECRET": "secret-1"}
    out = subprocess.run([sys.executable, "inbox.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                         check=True)
    assert out.stdout == ('{"result":"queued"}\nddex.delivery.failed live\n'
                          "WorkerReport(processed=1, retried=0, poisoned=0)\n1 of 1 deliveries replayed\n")
    stats = fake.stats()
    assert stats["webhooks_created"] == 1 and stats["idempotent_replays"] == 1, stats
    assert stats["requests"]["fetchEnterpriseResource"] == 1 and stats["replays"] == 1
    assert [d["replay_of"] for d in stats["deliveries"] if d.get("replay_of")] == [lost["delivery"]]
    assert hook.secret.secret not in out.stdout + out.stderr


class _Terminal:
    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        pass


def test_progress_true_draws_a_bar_on_a_terminal_only(fake, monkeypatch, capsys):
    fake.reset(states=["ready"], artifact="a,b\n1,2\n")
    with httpx.Client() as http:
        assert reports("httpx", http, fake).run_export(BODY, progress=True).size == 8
    assert capsys.readouterr().err == ""  # not a terminal: nothing drawn
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with httpx.Client() as http:
        reports("httpx", http, fake).run_export(BODY, progress=True)
    assert terminal.text.endswith("] 100% 8/8 bytes\n"), terminal.text


@pytest.mark.parametrize("kind", KINDS)
def test_a_large_artifact_is_streamed_to_disk_as_it_arrives(kind, fake, tmp_path):
    # 4 MiB, and a first attempt cut short: the file on disk grows while the body arrives (it is
    # not held whole in memory first), the cut attempt starts the file afresh, and only the whole
    # artifact is renamed into place.
    artifact = bytes(range(256)) * (4 * 4096)
    fake.reset(states=["ready"], artifact=artifact.decode("latin-1"),
               faults=[{"op": "downloadPlatformExport", "nth": 1, "do": "truncate"}])
    expected = fake.artifact()
    on_disk = []

    def progress(got: int, total: int | None) -> None:
        temp = [p for p in tmp_path.iterdir() if p.name.startswith(".royaltykit-")]
        assert len(temp) == 1 and not (tmp_path / "big.bin").exists()
        on_disk.append((got, temp[0].stat().st_size, total))

    result = run_export(kind, fake, tmp_path / "big.bin", progress=progress)
    assert (tmp_path / "big.bin").read_bytes() == expected and result.size == len(expected)
    assert fake.stats()["requests"]["downloadPlatformExport"] == 2
    # while the body was arriving, most of it was already in the file
    assert any(got < len(expected) and size >= got - 65536 and size > 1 << 20 for got, size, _ in on_disk), on_disk[-3:]
    assert [p.name for p in tmp_path.iterdir()] == ["big.bin"]


class _Stop(Exception):
    pass


@pytest.mark.parametrize("kind", KINDS)
def test_a_failing_progress_callback_is_raised_and_leaves_no_file(kind, fake, tmp_path):
    # The sink's own failure (here the progress callback's) is the caller's error, never taken for
    # a network failure and retried; the temporary file is gone when run_export raises.
    fake.reset(states=["ready"])

    def progress(got: int, total: int | None) -> None:
        raise _Stop("stop here")

    with pytest.raises(_Stop):
        run_export(kind, fake, tmp_path / "out.csv", progress=progress)
    assert list(tmp_path.iterdir()) == []
    assert fake.stats()["requests"]["downloadPlatformExport"] == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_download_slower_than_the_timeout_in_all_is_not_cut_off(kind, fake, tmp_path):
    # 2.5 s for the body in 10 pieces against a 1 s timeout: the timeout bounds each wait.
    fake.reset(states=["ready"], faults=[{"op": "downloadPlatformExport", "nth": 1, "do": "trickle", "seconds": 2.5}])
    expected = fake.artifact()
    run_export(kind, fake, tmp_path / "slow.csv")
    assert (tmp_path / "slow.csv").read_bytes() == expected
    assert fake.stats()["requests"]["downloadPlatformExport"] == 1


# ---- faults no transcript scripts (issue 39) ------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("listing", [{"echo": False}, {"page_size": 40, "cursor": "meta"}, {"lag_reads": 1},
                                     {"page_size": 40, "cursor": "links", "order": "newest", "echo": False}],
                         ids=["items-without-members", "new-export-on-a-later-page", "listed-one-read-late", "all-three"])
def test_a_lost_create_that_was_applied_is_found_however_the_list_shows_it(kind, listing, fake, tmp_path):
    existing = {"existing": {"count": 150, "body": BODY}} if "page_size" in listing else {}
    fake.reset(list=listing, states=["ready"], faults=[{"op": "createPlatformExport", "nth": 1, "do": "drop_after_apply"}],
               **existing)
    result = run_export(kind, fake, tmp_path / "out.csv")
    stats = fake.stats()
    assert stats["exports_created"] == 1 and stats["requests"]["createPlatformExport"] == 1, stats
    assert result.export_id == stats["exports"][-1]["id"] and (tmp_path / "out.csv").read_bytes() == fake.artifact()


@pytest.mark.parametrize("kind", KINDS)
def test_two_candidates_stop_with_reconcile_required_and_never_a_second_create(kind, fake, tmp_path):
    # Items that repeat nothing, and another process's export of the same data appearing with the
    # job's own lost create: the list cannot tell which is the job's.
    fake.reset(list={"echo": False},
               faults=[{"op": "createPlatformExport", "nth": 1, "do": "drop_after_apply", "also_created_by_another": 1}])
    with pytest.raises(rk.ReconcileRequired) as e:
        run_export(kind, fake, tmp_path / "x.csv")
    stats = fake.stats()
    assert e.value.stage == "reconcile" and sorted(e.value.candidates) == sorted(x["id"] for x in stats["exports"]), vars(e.value)
    assert e.value.reconcile == "lookup_by_sent_data" and stats["requests"]["createPlatformExport"] == 1
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kind", ["httpx", "requests", "async"])
def test_twenty_concurrent_first_calls_make_one_token_exchange(kind, fake):
    fake.reset(token_delay=0.3)
    if kind == "async":
        async def main():
            async with httpx.AsyncClient() as http:
                client = reports(kind, http, fake)
                return await asyncio.gather(*[client.request("listPlatformExports") for _ in range(20)])
        pages = asyncio.run(main())
    else:
        from concurrent.futures import ThreadPoolExecutor

        with (httpx.Client() if kind == "httpx" else requests.Session()) as http:
            client = reports(kind, http, fake)
            with ThreadPoolExecutor(20) as pool:
                pages = list(pool.map(lambda _: client.request("listPlatformExports"), range(20)))
    stats = fake.stats()
    assert len(pages) == 20 and stats["requests"]["listPlatformExports"] == 20
    assert stats["tokens_issued"] == 1 and stats["max_concurrent_exchanges"] == 1, stats


def test_a_session_shared_by_two_clients_exchanges_once(fake):
    fake.reset()
    session = rk.Session(rk.RateBudget.preset("enterprise"))
    with httpx.Client() as http:
        a, b = (EnterpriseClient(http, base_url=fake.url, api_key="key-1", api_secret="secret-1", session=session,
                                 clock=fake.clock, sleep=fake.sleep) for _ in range(2))
        a.request("listEnterpriseReleases")
        b.request("listEnterpriseReleases")
    assert fake.stats()["tokens_issued"] == 1 and session.exchanges == 1
    with pytest.raises(TypeError, match="budget or session"):
        EnterpriseClient(http, base_url=fake.url, api_key="k", api_secret="s", session=session, budget=rk.RateBudget.preset("enterprise"))


@pytest.mark.parametrize("kind", ["httpx", "async"])
def test_a_call_waiting_on_another_clients_exchange_goes_on_when_it_ends(kind, fake):
    # Two clients on one session: the call that waits for the other client's exchange is woken
    # when it ends, not when the exchange's lease (EXCHANGE_LEASE_SECONDS, 330 s) runs out. A
    # wait that timed out would take minutes: both calls end well within 60 s.
    fake.reset(token_delay=0.5)
    session = rk.Session(rk.RateBudget.preset("enterprise"))
    common = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1", session=session, clock=fake.clock)
    if kind == "async":
        async def main():
            async with httpx.AsyncClient() as http:
                a, b = (AsyncEnterpriseClient(http, **common) for _ in range(2))
                first = asyncio.ensure_future(a.request("listEnterpriseReleases"))
                await asyncio.sleep(0.1)  # a's exchange is in flight
                return await asyncio.wait_for(asyncio.gather(first, b.request("listEnterpriseReleases")), 60)
        pages = asyncio.run(main())
    else:
        with httpx.Client() as http:
            a, b = (EnterpriseClient(http, **common) for _ in range(2))
            pages: list = []
            threads = [threading.Thread(target=lambda c=c: pages.append(c.request("listEnterpriseReleases")))
                       for c in (a, b)]
            threads[0].start()
            time.sleep(0.1)
            threads[1].start()
            for t in threads:
                t.join(60)
            assert not any(t.is_alive() for t in threads), "a call waited out the exchange's lease"
    assert len(pages) == 2 and fake.stats()["tokens_issued"] == 1 and session.exchanges == 1


def test_an_async_on_checkpoint_is_awaited_and_a_blocking_client_refuses_one(fake, tmp_path):
    fake.reset(states=["queued", "ready"])
    given: list[str] = []

    async def save(text: str) -> None:
        await asyncio.sleep(0)
        given.append(text)

    result = run_export("async", fake, tmp_path / "out.csv", on_checkpoint=save)
    assert given and rk.ExportJob.resume(given[-1]).export_id == result.export_id
    with httpx.Client() as http:
        with pytest.raises(TypeError, match="async function"):
            reports("httpx", http, fake).run_export(BODY, to=tmp_path / "x.csv", on_checkpoint=save)
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_due_at_once_is_used_and_every_call_ends(kind, fake, tmp_path):
    # expires_in 1: due for refresh the moment it arrives; it is used once, never refreshed in a loop
    fake.reset(token_expires_in=1, states=["queued", "ready"])
    assert request(kind, fake, "listPlatformExports")["data"] == []
    assert fake.stats()["tokens_issued"] == 1
    run_export(kind, fake, tmp_path / "out.csv")
    stats = fake.stats()
    assert stats["exports_created"] == 1 and stats["unauthorized"] == 0, stats
    assert stats["tokens_issued"] <= stats["requests"]["listPlatformExports"] + 5, stats


@pytest.mark.parametrize("form", ["past", "offset", "basic", "null"])
def test_the_enterprise_token_expiry_in_every_form_the_service_may_send(form, fake):
    # "past": a minute behind this clock while the service honours it: used once, then refreshed
    fake.reset(enterprise_expires_at=form)
    with httpx.Client() as http:
        c = EnterpriseClient(http, base_url=fake.url, api_key="key-1", api_secret="secret-1", clock=fake.clock,
                             sleep=fake.sleep)
        assert c.request("listEnterpriseReleases")["data"] and c.request("listEnterpriseReleases")["data"]
    assert fake.stats()["tokens_issued"] == (2 if form == "past" else 1)


def _redirecting_client(kind):
    """The user's own HTTP client, set to follow redirects where the library can be."""
    if kind == "httpx":
        return httpx.Client(follow_redirects=True)
    if kind == "async":
        return httpx.AsyncClient(follow_redirects=True)
    return requests.Session()  # follows redirects by default


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op", ["exchangePlatformClientCredential", "listPlatformExports"])
def test_no_adapter_follows_a_redirect_to_another_origin(kind, op, fake):
    fake.reset(faults=[{"op": op, "nth": 1, "do": "redirect"}])

    async def main():
        async with _redirecting_client(kind) as http:
            return await reports(kind, http, fake).request("listPlatformExports")

    with pytest.raises(rk.CallFailedError) as e:
        if kind == "async":
            asyncio.run(main())
        else:
            with _redirecting_client(kind) as http:
                reports(kind, http, fake).request("listPlatformExports")
    assert e.value.rule == "redirect" and e.value.status == 307, vars(e.value)
    assert "the Location points at http://127.0.0.1:" in str(e.value) and "redirects are not followed" in str(e.value)
    stats = fake.stats()
    assert stats["evil_requests"] == 0 and stats["evil_credentials"] == [], stats


def test_the_issue_s_resource_url_is_checked_before_any_fetch():
    assert rk.resource_path("/api/v1/releases/5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b") == "/api/v1/releases/5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
    for url in ("https://evil.example/steal", "//evil.example/x", "/api/v1/../v2/x", "/api/v1/a\\b"):
        with pytest.raises(rk.WebhookVerificationError) as e:
            rk.resource_path(url)
        assert e.value.code == "invalid_resource_url"


# ---- progress and notice events (issue 42, points 3 and 8) --------------------------------------


def _export_with_events(kind: str, fake: Fake, to, events: list[dict], **kw):
    """``run_export`` on a client whose ``on_event`` appends to ``events``."""
    if kind in ("httpx", "requests"):
        with httpx.Client() if kind == "httpx" else requests.Session() as http:
            return reports(kind, http, fake, on_event=events.append).run_export(BODY, to=to, **kw)

    async def main():
        async with httpx.AsyncClient() as http:
            return await reports(kind, http, fake, on_event=events.append).run_export(BODY, to=to, **kw)

    return asyncio.run(main())


def _download_attempts(events: list[dict]) -> list[list[dict]]:
    """The events of each download attempt: from its send to its outcome (response or transport
    failure), in order."""
    attempts: list[list[dict]] = []
    current: list[dict] | None = None
    for e in events:
        if e["kind"] == "send" and e["operation"] == "downloadPlatformExport":
            current = [e]
            attempts.append(current)
        elif current is not None:
            current.append(e)
            if e["kind"] in ("response", "transport_failure"):
                current = None
    return attempts


@pytest.mark.parametrize("kind", KINDS)
def test_a_large_download_gives_a_few_progress_events_in_order_and_the_last_is_whole(kind, fake, tmp_path, caplog):
    # 2 MB in many pieces: a progress event at each tenth and at the end, never one per piece
    artifact = ("".join(f"{i},{i % 97}.00\n" for i in range(200_000)))[: 2_000_000]
    fake.reset(states=["ready"], artifact=artifact)
    events: list[dict] = []
    pieces: list[tuple[int, int | None]] = []
    with caplog.at_level("INFO", logger="royaltykit"):
        result = _export_with_events(kind, fake, tmp_path / "big.csv", events,
                                     progress=lambda got, total: pieces.append((got, total)))
    size = len(artifact)
    assert result.size == size and (tmp_path / "big.csv").stat().st_size == size
    progress = [e for e in events if e["kind"] == "progress"]
    assert 2 <= len(progress) <= 11, [(e["received_bytes"], e["total_bytes"]) for e in progress]
    assert len(pieces) > len(progress)  # the callback is called per piece, the events are not
    received = [e["received_bytes"] for e in progress]
    assert received == sorted(set(received)), received
    assert all(e["total_bytes"] == size and e["level"] == "info" for e in progress), progress
    assert all(e["operation"] == "downloadPlatformExport" for e in progress)
    assert (progress[-1]["received_bytes"], progress[-1]["total_bytes"]) == (size, size)
    assert progress[-1]["message"] == f"progress downloadPlatformExport #1: {size} of {size} bytes", progress[-1]
    # delivered as the body arrives: between the download's send and its response
    (attempt,) = _download_attempts(events)
    assert [e["kind"] for e in attempt] == ["send", *["progress"] * len(progress), "response"]
    # and logged at INFO, each the event's own line
    logged = [r for r in caplog.records if r.name == "royaltykit" and r.getMessage().startswith("progress ")]
    assert [r.getMessage() for r in logged] == [e["message"] for e in progress]
    assert all(r.levelname == "INFO" for r in logged)


@pytest.mark.parametrize("kind", KINDS)
def test_a_download_read_again_counts_its_progress_from_zero(kind, fake, tmp_path):
    # the first attempt is cut at half: its events stop short of the whole; the second starts at 0
    artifact = bytes(range(256)) * (4 * 4096)
    fake.reset(states=["ready"], artifact=artifact.decode("latin-1"),
               faults=[{"op": "downloadPlatformExport", "nth": 1, "do": "truncate"}])
    size = len(fake.artifact())
    events: list[dict] = []
    _export_with_events(kind, fake, tmp_path / "big.bin", events)
    first, second = _download_attempts(events)
    cut = [e["received_bytes"] for e in first if e["kind"] == "progress"]
    whole = [e["received_bytes"] for e in second if e["kind"] == "progress"]
    assert cut and all(r < size for r in cut) and len(cut) <= 6, cut
    assert whole[0] < cut[-1] and whole == sorted(set(whole)) and whole[-1] == size and len(whole) <= 11, whole


@pytest.mark.parametrize("kind", KINDS)
def test_a_trickled_download_reports_its_tenths(kind, fake, tmp_path):
    # the whole artifact in 10 pieces over a second: about one event per piece, the last whole
    fake.reset(states=["ready"], faults=[{"op": "downloadPlatformExport", "nth": 1, "do": "trickle", "seconds": 1.0}])
    size = len(fake.artifact())
    events: list[dict] = []
    _export_with_events(kind, fake, tmp_path / "slow.csv", events)
    progress = [(e["received_bytes"], e["total_bytes"]) for e in events if e["kind"] == "progress"]
    assert 1 <= len(progress) <= 11 and progress[-1] == (size, size), progress


def _three_lists(kind: str, fake: Fake, events: list[dict]) -> None:
    """Three listPlatformExports calls on one client (one session)."""
    if kind == "async":
        async def main() -> None:
            async with httpx.AsyncClient() as http:
                client = reports(kind, http, fake, on_event=events.append)
                for _ in range(3):
                    await client.request("listPlatformExports")
        asyncio.run(main())
        return
    with httpx.Client() if kind == "httpx" else requests.Session() as http:
        client = reports(kind, http, fake, on_event=events.append)
        for _ in range(3):
            client.request("listPlatformExports")


@pytest.mark.parametrize("kind", KINDS)
def test_a_deprecated_operation_gives_one_notice_per_client_at_warning(kind, fake, caplog):
    fake.reset(deprecated=["listPlatformExports"])
    first: list[dict] = []
    with caplog.at_level("WARNING", logger="royaltykit"):
        _three_lists(kind, fake, first)
    assert fake.stats()["requests"]["listPlatformExports"] == 3
    (notice,) = [e for e in first if e["kind"] == "notice"]
    assert notice["level"] == "warning" and notice["operation"] == "listPlatformExports", notice
    assert "01 Sep 2027" in notice["reason"], notice
    warned = [r for r in caplog.records if r.name == "royaltykit" and r.getMessage().startswith("notice ")]
    assert [(r.levelname, r.getMessage()) for r in warned] == [("WARNING", notice["message"])]
    assert "01 Sep 2027" in warned[0].getMessage()
    # another client has its own session: its own one notice
    second: list[dict] = []
    caplog.clear()
    with caplog.at_level("WARNING", logger="royaltykit"):
        _three_lists(kind, fake, second)
    assert [e["reason"] for e in second if e["kind"] == "notice"] == [notice["reason"]]
    assert len([r for r in caplog.records if r.name == "royaltykit" and r.getMessage().startswith("notice ")]) == 1
    # an operation not marked gives none
    fake.reset()
    none: list[dict] = []
    _three_lists(kind, fake, none)
    assert not [e for e in none if e["kind"] == "notice"]
