#!/usr/bin/env python3
"""The end-to-end receiver bench (issue 44, point 2): run.py OUTDIR writes OUTDIR/receivers.json.

What it promises:
- runs every bench/e2e/*/setup.sh first (each installs its language's apps under .build/bench/e2e
  from $BENCH_DIST, default $ROOT/dist, and writes .build/bench/e2e/apps-<lang>.json), then reads
  every apps-*.json present;
- starts one redis-server (no persistence) and one throw-away PostgreSQL cluster (fsync=off, as
  scripts/postgres.sh) on free loopback ports, emptied before each app start;
- for each app x store (memory, redis, postgres), the two implementations alternated
  (royaltykit, hand, royaltykit, hand: ROUNDS=2 pairs), each measurement on a fresh app process:
  a genuine delivery answers 2xx, a forged one 4xx, its replay the duplicate reply, and hand's
  replies equal royaltykit's; then load.mjs (autocannon: warm-up, then the measured window, every
  request a fresh delivery) with zero errors and zero non-2xx required;
- the figure kept per app x store x impl is the best of its runs by rps (its p50/p99 with it);
- processes: only those it started, each in its own process group, stopped on exit;
- a failure names the app, store and impl (with the tail of the app's log, kept in
  OUTDIR/receivers-logs); the other combinations still run, the rows that passed are written,
  and the exit status is 1.

Each app (bench/e2e/<lang>/, listed by its setup.sh in apps-<lang>.json as argv, env, language and
integration) serves POST /webhook on 127.0.0.1:$PORT, one process, with BENCH_IMPL = royaltykit (the
library's integration for that framework as its README wires it, with the library's store for
BENCH_STORE = memory | redis | postgres, at REDIS_URL / PG_DSN, and a handler that does nothing) or
hand (a hand-written endpoint in the same framework doing the same work: the timestamp within 300 s,
the `v1=` HMAC-SHA256 compared in constant time, the JSON body parsed, then a set, `SET NX EX`, or
`INSERT ... ON CONFLICT DO NOTHING` inside BEGIN/COMMIT, with the same client library, and the same
status and body as royaltykit for a new and a duplicate delivery); the secret is BENCH_SECRET.

Env: BENCH_DIST, BENCH_E2E_ONLY (substring of an app name), BENCH_E2E_STORES (comma list),
BENCH_E2E_SECONDS (measured, default 5), BENCH_E2E_WARMUP (default 1), BENCH_E2E_CONNECTIONS
(default 16), BENCH_E2E_ROUNDS (default 2), BENCH_E2E_SKIP_SETUP=1 (reuse the installed apps).
"""
from __future__ import annotations

import glob
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / ".build" / "bench" / "e2e"
SECRET = "whsec_bench_secret_0123456789"
STORES = ["memory", "redis", "postgres"]
IMPLS = ["royaltykit", "hand"]
ENV = os.environ
SECONDS = ENV.get("BENCH_E2E_SECONDS", "5")
WARMUP = ENV.get("BENCH_E2E_WARMUP", "1")
CONNECTIONS = ENV.get("BENCH_E2E_CONNECTIONS", "16")
ROUNDS = int(ENV.get("BENCH_E2E_ROUNDS", "2"))
started: list[subprocess.Popen] = []  # every process group this script started


class Failure(Exception):
    pass


def log(msg: str) -> None:
    print(f"e2e: {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn(argv: list[str], logfile: Path | None = None, **kw) -> subprocess.Popen:
    """Starts argv in a process group of its own (so stopping it stops its children too)."""
    out = open(logfile, "wb") if logfile else subprocess.DEVNULL
    p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **kw)
    started.append(p)
    return p


def stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        except ProcessLookupError:
            pass
    if p in started:
        started.remove(p)


def wait_port(port: int, p: subprocess.Popen | None, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if p is not None and p.poll() is not None:
            raise Failure(f"{what} exited with status {p.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise Failure(f"{what} did not listen on 127.0.0.1:{port} within {seconds:.0f} s")


# ---- the stores' servers
class Redis:
    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.proc = spawn(["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(workdir),
                           "--save", "", "--appendonly", "no", "--protected-mode", "yes"])
        wait_port(self.port, self.proc, 10, "redis-server")
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(b"FLUSHALL\r\n")
            if not s.recv(16).startswith(b"+OK"):
                raise Failure("redis FLUSHALL failed")


class Postgres:
    """A cluster in a temporary directory, run as the `postgres` user when this runs as root."""

    def __init__(self) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins:
            raise Failure("PostgreSQL is missing (make setup installs Debian's postgresql)")
        self.bin = Path(bins[-1]).parent
        self.dir = Path(tempfile.mkdtemp(prefix="royaltykit-bench-pg."))
        self.dir.chmod(0o755)
        self.port = free_port()
        self.as_pg = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        if self.as_pg:
            shutil.chown(self.dir, "postgres")
        data = self.dir / "data"
        self.run(["initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"])
        # postgres in the foreground, in a group of its own: stopped like every started process.
        self.proc = spawn(self.as_pg + [str(self.bin / "postgres"), "-D", str(data), "-p", str(self.port), "-k", str(self.dir),
                                        "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"],
                          self.dir / "server.log", cwd="/")
        wait_port(self.port, self.proc, 60, "postgres")
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        for _ in range(100):  # listening comes before accepting connections
            if subprocess.run([str(self.bin / "psql"), self.dsn, "-c", "select 1"], capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        raise Failure("postgres does not accept connections")

    def run(self, argv: list[str]) -> None:
        r = subprocess.run(self.as_pg + [str(self.bin / argv[0]), *argv[1:]], capture_output=True, text=True, cwd="/")
        if r.returncode:
            raise Failure(f"{argv[0]} failed: {r.stderr.strip()}")

    def flush(self) -> None:
        """Every table gone: each app creates its own at start."""
        r = subprocess.run([str(self.bin / "psql"), self.dsn, "-q", "-v", "ON_ERROR_STOP=1", "-c",
                            "DROP SCHEMA public CASCADE; CREATE SCHEMA public;"], capture_output=True, text=True)
        if r.returncode:
            raise Failure(f"emptying postgres failed: {r.stderr.strip()}")

    def close(self) -> None:
        try:  # a fast shutdown, then the process group it ran in (runuser and the server)
            self.run(["pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop"])
        except Failure:
            pass
        stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- one delivery, signed here with Python's hmac (independently of every app)
def post(port: int, delivery_id: str, body: bytes, secret: str = SECRET) -> tuple[int, object]:
    ts = str(int(time.time()))
    mac = hmac.new(secret.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/webhook", data=body, method="POST", headers={
        "Content-Type": "application/json", "Service-Webhook-Id": delivery_id, "Service-Webhook-Timestamp": ts,
        "Service-Webhook-Signature": f"v1={mac}"})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, raw.decode(errors="replace")


def check(port: int) -> dict:
    """A genuine delivery 2xx, a forged one 4xx, the replay 2xx and a different reply; returns
    the new and duplicate replies (status, JSON), which must be the same for both implementations."""
    ref = f"check-{uuid.uuid4().hex[:12]}"
    body = json.dumps({"event": "ddex.delivery.acknowledged", "occurred_at": "2026-11-22T04:00:00Z",
                       "resource": {"type": "ddex_message", "reference": ref, "url": f"/api/v1/ddex/messages/{ref}"}}).encode()
    delivery_id = str(uuid.uuid4())
    new = post(port, delivery_id, body)
    forged = post(port, str(uuid.uuid4()), body, secret="whsec_not_the_secret")
    replay = post(port, delivery_id, body)
    if not 200 <= new[0] < 300:
        raise Failure(f"a genuine delivery got {new}")
    if not 400 <= forged[0] < 500:
        raise Failure(f"a forged delivery got {forged}, not 4xx")
    if not 200 <= replay[0] < 300 or replay == new:
        raise Failure(f"the replay got {replay} (the first delivery got {new}): not told apart as a duplicate")
    return {"new": new, "replay": replay}  # (a forged delivery's 4xx may differ between the two)


def measure(name: str, app: dict, store: str, impl: str, servers: dict, logdir: Path, run: int) -> tuple[dict, dict]:
    servers["redis"].flush()
    servers["postgres"].flush()
    port = free_port()
    logfile = logdir / f"{name}-{store}-{impl}-{run}.log"
    env = {**ENV, **app.get("env", {}), "PORT": str(port), "BENCH_IMPL": impl, "BENCH_STORE": store,
           "REDIS_URL": servers["redis"].url, "PG_DSN": servers["postgres"].dsn, "BENCH_SECRET": SECRET}
    p = spawn(app["argv"], logfile, env=env)
    try:
        wait_port(port, p, 120, "the app")
        replies = check(port)
        r = subprocess.run(["node", str(E2E / "node" / "load.mjs"), "--url", f"http://127.0.0.1:{port}/webhook",
                            "--secret", SECRET, "--connections", CONNECTIONS, "--warmup", WARMUP, "--seconds", SECONDS],
                           capture_output=True, text=True, timeout=float(SECONDS) + float(WARMUP) + 120)
        if r.returncode:
            raise Failure(f"load.mjs failed: {r.stderr.strip()[-2000:]}")
        result = json.loads(r.stdout.strip().splitlines()[-1])
        if result["errors"] or result["non2xx"] or not result["requests"]:
            raise Failure(f"the measured window had {result['errors']} errors and {result['non2xx']} non-2xx of {result['requests']} requests")
        if p.poll() is not None:
            raise Failure(f"the app exited with status {p.returncode} during the load")
        return result, replies
    except (Failure, subprocess.TimeoutExpired, ValueError, OSError) as e:
        stop(p)
        tail = logfile.read_text(errors="replace")[-1500:] if logfile.exists() else ""
        raise Failure(f"{name} store={store} impl={impl}: {e}\n--- {logfile} (tail)\n{tail}") from None
    finally:
        stop(p)


def setup() -> None:
    for script in sorted(glob.glob(str(ROOT / "bench" / "e2e" / "*" / "setup.sh"))):
        lang = Path(script).parent.name
        log(f"setup {lang}")
        r = subprocess.run(["bash", script], env={**ENV, "ROOT": str(ROOT)})
        if r.returncode:
            raise Failure(f"bench/e2e/{lang}/setup.sh failed (status {r.returncode})")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    logdir = out / "receivers-logs"
    logdir.mkdir(parents=True, exist_ok=True)
    if ENV.get("BENCH_E2E_SKIP_SETUP") != "1":
        setup()
    apps: dict[str, dict] = {}
    for f in sorted(E2E.glob("apps-*.json")):
        apps.update(json.loads(f.read_text()))
    only = ENV.get("BENCH_E2E_ONLY", "")
    apps = {k: v for k, v in sorted(apps.items()) if only in k}
    stores = [s for s in ENV.get("BENCH_E2E_STORES", ",".join(STORES)).split(",") if s]
    if not apps:
        raise Failure(f"no app in {E2E}/apps-*.json matches BENCH_E2E_ONLY={only!r}")
    log(f"apps: {', '.join(apps)}; stores: {', '.join(stores)}; {ROUNDS} rounds of {WARMUP} s + {SECONDS} s, {CONNECTIONS} connections")

    rows, failures = [], []
    tmp = Path(tempfile.mkdtemp(prefix="royaltykit-bench-redis."))
    servers: dict = {}
    try:
        servers["redis"] = Redis(tmp)
        servers["postgres"] = Postgres()
        for name, app in apps.items():
            for store in stores:
                runs: dict[str, list[dict]] = {i: [] for i in IMPLS}
                replies: dict[str, dict] = {}
                try:
                    for n in range(ROUNDS):
                        for impl in IMPLS:  # ABAB
                            result, replies[impl] = measure(name, app, store, impl, servers, logdir, n)
                            runs[impl].append(result)
                            log(f"{name} {store} {impl} #{n + 1}: {result['rps']:,} req/s, p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms")
                    if replies["hand"] != replies["royaltykit"]:
                        raise Failure(f"{name} store={store}: hand's replies {replies['hand']} differ from royaltykit's {replies['royaltykit']}")
                except Failure as e:
                    log(f"FAILED {e}")
                    failures.append(str(e).splitlines()[0])
                    continue
                for impl in IMPLS:
                    best = max(runs[impl], key=lambda r: r["rps"])
                    rows.append({"language": app["language"], "integration": app["integration"], "app": name, "store": store,
                                 "impl": impl, "rps": best["rps"], "p50_ms": best["p50_ms"], "p99_ms": best["p99_ms"],
                                 "requests": best["requests"], "errors": best["errors"],
                                 "rps_runs": [r["rps"] for r in runs[impl]], "connections": int(CONNECTIONS),
                                 "seconds": float(SECONDS)})
    finally:
        if "postgres" in servers:
            servers["postgres"].close()
        for p in list(started):
            stop(p)
        shutil.rmtree(tmp, ignore_errors=True)
    (out / "receivers.json").write_text(json.dumps(rows, indent=1) + "\n")
    log(f"wrote {out / 'receivers.json'} ({len(rows)} rows)")
    for f in failures:
        log(f"FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stops what it started, via finally
    try:
        sys.exit(main())
    except Failure as e:
        log(f"FAILED {e}")
        for p in list(started):
            stop(p)
        sys.exit(1)
