"""One process of a fleet, for test_fleet.py: an enterprise client of the installed package on the
shared fake API, in a fleet over the test's redis-server, with the real clock and sleep.

argv: kind (httpx, requests, async), the fake's URL, the Redis port, the fleet's prefix, and the
budget as JSON windows (``[["api_client", 12, 60]]``; ``null``: the client's default, the
enterprise preset). Prints ``ready`` once built; then each line ``go N`` on stdin makes N requests
at once and prints one JSON line: ``{"ok": <done>, "errors": [<error codes>]}``. Ends at EOF."""

from __future__ import annotations

import asyncio
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import requests

import royaltykit as rk
from resp import AsyncResp, Resp
from royaltykit.client import AsyncEnterpriseClient, AsyncRedisFleet, EnterpriseClient, RedisFleet


def outcome(results: list[Any]) -> str:
    errors = [getattr(r, "code", type(r).__name__) for r in results if isinstance(r, BaseException)]
    return json.dumps({"ok": len(results) - len(errors), "errors": errors})


def main() -> None:
    kind, url, port, prefix, windows = sys.argv[1:6]
    budget = json.loads(windows)
    common: dict[str, Any] = dict(base_url=url, api_key="key-1", api_secret="secret-1")
    if budget is not None:
        common["budget"] = rk.RateBudget([tuple(w) for w in budget])
    redis = Resp(int(port))
    if kind == "async":
        loop = asyncio.new_event_loop()

        async def build() -> tuple[httpx.AsyncClient, AsyncEnterpriseClient]:
            http = httpx.AsyncClient()
            return http, AsyncEnterpriseClient(http, fleet=AsyncRedisFleet(AsyncResp(redis), prefix=prefix), **common)

        http, aclient = loop.run_until_complete(build())

        async def batch(n: int) -> list[Any]:
            return await asyncio.gather(*[aclient.request("listEnterpriseReleases") for _ in range(n)],
                                        return_exceptions=True)

        run = lambda n: loop.run_until_complete(batch(n))  # noqa: E731
    else:
        session = httpx.Client() if kind == "httpx" else requests.Session()
        client = EnterpriseClient(session, fleet=RedisFleet(redis, prefix=prefix), **common)

        def one(_: int) -> Any:
            try:
                return client.request("listEnterpriseReleases")
            except Exception as e:  # noqa: BLE001 (reported to the test)
                return e

        def run(n: int) -> list[Any]:
            with ThreadPoolExecutor(n) as pool:
                return list(pool.map(one, range(n)))

    print("ready", flush=True)
    for line in sys.stdin:
        command, _, count = line.partition(" ")
        if command == "go":
            print(outcome(run(int(count))), flush=True)


if __name__ == "__main__":
    main()
