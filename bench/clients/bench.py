"""make bench, clients, Python part. Usage: python bench.py <base url> <out.json>

The cost per call of royaltykit's ReportsClient.request() (a GET with its token already cached)
against the same GET made directly with the same HTTP library: httpx.Client, requests.Session,
and httpx.AsyncClient (AsyncReportsClient). Every contender sends the headers the API needs
(bearer token, tenant, Accept), reads the body and parses its JSON, as request() does.
Contenders run interleaved: ROUNDS rounds, each a timed batch per contender; reported: min and
median over the rounds of µs per call.
"""
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import httpx
import requests
from royaltykit.client import AsyncReportsClient, ReportsClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import interleave  # noqa: E402 (bench/python/interleave.py)

ROUNDS = int(os.environ.get("BENCH_CLIENT_ROUNDS", "31"))
BATCH_NS = float(os.environ.get("BENCH_CLIENT_BATCH_MS", "40")) * 1e6
WARMUP = int(os.environ.get("BENCH_CLIENT_WARMUP", "300"))
TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
EXPORT_ID = "7a1f6c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
TOKEN = "rt_bench_00112233445566778899aabbccddeeff"  # what the server issues; the direct contenders hold it
HEADERS = {"Accept": "application/json", "Authorization": f"Bearer {TOKEN}", "X-Tenant-ID": TENANT}


def checked(status: int, data: bytes):
    if status != 200:
        raise RuntimeError(f"status {status}")
    return json.loads(data)


def time_interleaved(contenders):
    """Each contender's (name, min µs, median µs) per call (bench/python/interleave.py)."""
    return [(name, s[0] / 1e3, s[len(s) // 2] / 1e3)
            for name, s in interleave.time_interleaved(contenders, ROUNDS, BATCH_NS, WARMUP, 1_000_000, 2)]


def main():
    base, out_file = sys.argv[1].rstrip("/"), sys.argv[2]
    url = f"{base}/api/platform/v1/exports/{EXPORT_ID}"
    creds = dict(base_url=base, client_id="cid", client_secret="csecret", tenant_id=TENANT)
    path = {"export": EXPORT_ID}

    hx, hx_direct = httpx.Client(), httpx.Client()
    rq, rq_direct = requests.Session(), requests.Session()
    rk_hx, rk_rq = ReportsClient(hx, **creds), ReportsClient(rq, **creds)

    def direct_httpx():
        r = hx_direct.get(url, headers=HEADERS)
        return checked(r.status_code, r.content)

    def direct_requests():
        r = rq_direct.get(url, headers=HEADERS)
        return checked(r.status_code, r.content)

    # The async pair: one event loop; a batch is n awaited calls in one coroutine.
    loop = asyncio.new_event_loop()
    ahx, ahx_direct = httpx.AsyncClient(), httpx.AsyncClient()
    rk_ahx = AsyncReportsClient(ahx, **creds)

    async def direct_async():
        r = await ahx_direct.get(url, headers=HEADERS)
        return checked(r.status_code, r.content)

    def blocking(make):
        """One call of an async contender, run on the loop (for the answer check; time_async times them)."""
        return lambda: loop.run_until_complete(make())

    groups = [
        ("httpx", [("royaltykit", lambda: rk_hx.request("getPlatformExport", path=path)), ("direct", direct_httpx)]),
        ("requests", [("royaltykit", lambda: rk_rq.request("getPlatformExport", path=path)), ("direct", direct_requests)]),
        ("httpx async", [("royaltykit", blocking(lambda: rk_ahx.request("getPlatformExport", path=path))),
                         ("direct", blocking(direct_async))]),
    ]
    stats = lambda: json.loads(httpx.get(f"{base}/_stats").content)  # noqa: E731
    start = stats()
    # Every contender gets the same answer; the royaltykit ones obtain their token here (not timed).
    for client, contenders in groups:
        answers = [fn() for _, fn in contenders]
        assert all(a == answers[0] and a["id"] == EXPORT_ID for a in answers), (client, answers)
    before = stats()
    assert before["tokens"] - start["tokens"] == 3 and before["unauthorized"] == start["unauthorized"], before

    results = []
    for client, contenders in groups:
        if client == "httpx async":
            # run_until_complete per call costs the same for both; time whole batches inside the loop instead
            res = time_async(loop, contenders=[("royaltykit", lambda: rk_ahx.request("getPlatformExport", path=path)),
                                                ("direct", direct_async)])
        else:
            res = time_interleaved(contenders)
        for name, mn, med in res:
            results.append({"language": "Python", "client": client, "contender": name, "min_us": mn, "median_us": med})
        rk, direct = res[0][2], res[1][2]
        print(f"python {client}: royaltykit {rk:.1f} µs, direct {direct:.1f} µs, {rk / direct:.2f}×", file=sys.stderr)
    after = stats()  # the timed calls were all answered, and never exchanged a token
    assert after["tokens"] == before["tokens"] and after["unauthorized"] == start["unauthorized"], after
    for c in (hx, hx_direct, rq, rq_direct):
        c.close()
    loop.run_until_complete(ahx.aclose())
    loop.run_until_complete(ahx_direct.aclose())
    loop.close()
    json.dump(results, open(out_file, "w"), indent=1)


def time_async(loop, contenders):
    """time_interleaved for coroutine functions: each batch is one coroutine awaiting n calls in turn."""

    async def run(fn, n):
        for _ in range(n):
            await fn()

    async def timed(fn, n):
        t0 = time.perf_counter_ns()
        await run(fn, n)
        return time.perf_counter_ns() - t0

    batches = []
    for _, fn in contenders:
        loop.run_until_complete(run(fn, WARMUP))
        n = 1
        while True:
            dt = loop.run_until_complete(timed(fn, n))
            if dt > BATCH_NS / 4 or n > 1_000_000:
                batches.append(max(1, round(n * BATCH_NS / max(dt, 1))))
                break
            n *= 2
    samples = [[] for _ in contenders]
    for _ in range(ROUNDS):
        for k, (_, fn) in enumerate(contenders):
            samples[k].append(loop.run_until_complete(timed(fn, batches[k])) / batches[k] / 1e3)
    out = []
    for (name, _), s in zip(contenders, samples):
        s.sort()
        out.append((name, s[0], s[len(s) // 2]))
    return out


if __name__ == "__main__":
    main()
