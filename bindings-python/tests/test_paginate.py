"""``paginate`` on every client against the shared fake API (tests/fakeapi/server.py) over real
loopback HTTP, with each HTTP library: every item of a list exactly once and in order, pages
requested lazily, bounds, retries inside a page, and the walk's own failures (``PaginationError``)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import httpx
import pytest
import requests

import royaltykit as rk
from royaltykit.client import AsyncEnterpriseClient, EnterpriseClient
from test_client import KINDS, Fake, reports


def enterprise(kind: str, http, fake: Fake, **kw):
    common = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1", clock=fake.clock,
                  sleep=fake.asleep if kind == "async" else fake.sleep)
    common.update(kw)
    return (AsyncEnterpriseClient if kind == "async" else EnterpriseClient)(http, **common)


def walk(kind: str, fake: Fake, operation: str, *, api: str = "reports", take: int | None = None,
         client_options: dict | None = None, **kw) -> list[Any]:
    """The items ``paginate`` gives with each HTTP library (``take``: only that many, then stop)."""
    make = reports if api == "reports" else enterprise
    if kind == "async":
        async def main():
            async with httpx.AsyncClient() as http:
                got = []
                async for item in make(kind, http, fake, **(client_options or {})).paginate(operation, **kw):
                    got.append(item)
                    if take is not None and len(got) == take:
                        break
                return got
        return asyncio.run(main())
    with httpx.Client() if kind == "httpx" else requests.Session() as http:
        items = make(kind, http, fake, **(client_options or {})).paginate(operation, **kw)
        return list(itertools.islice(items, take))


def list_requests(fake: Fake, operation: str = "listPlatformExports") -> int:
    return fake.stats()["requests"].get(operation, 0)


def every_export_id(fake: Fake) -> list[str]:
    """The export list as the server orders it, read page by page with ``request`` (keyset cursor)."""
    ids: list[str] = []
    with httpx.Client() as http:
        client = reports("httpx", http, fake)
        while True:
            query: dict[str, Any] = {"limit": 10, **({"cursor": ids[-1]} if ids else {})}
            page = client.request("listPlatformExports", query=query)["data"]
            ids += [e["id"] for e in page]
            if len(page) < 10:
                return ids


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cursor", ["next_cursor", "meta", "links", "none"])
def test_every_export_once_in_order_whatever_the_cursor_style(kind, cursor, fake):
    fake.reset(existing={"count": 25}, list={"page_size": 10, "cursor": cursor})
    events: list[dict] = []
    got = walk(kind, fake, "listPlatformExports", page_size=10, client_options={"on_event": events.append})
    stats = fake.stats()
    # each page went through request()'s path: its events, the session's one token
    assert stats["requests"]["listPlatformExports"] == 3 and stats["tokens_issued"] == 1, stats
    assert len([e for e in events if e["kind"] == "send" and e["operation"] == "listPlatformExports"]) == 3
    ids = [e["id"] for e in got]
    assert len(ids) == 25 and len(set(ids)) == 25
    assert ids == every_export_id(fake), "in the list's order"


@pytest.mark.parametrize("kind", KINDS)
def test_the_bounds_stop_the_walk_before_the_next_request(kind, fake):
    fake.reset(existing={"count": 25}, list={"page_size": 10})
    assert len(walk(kind, fake, "listPlatformExports", page_size=10, max_items=12)) == 12
    assert list_requests(fake) == 2, "the second page was cut, and no third asked for"
    assert len(walk(kind, fake, "listPlatformExports", page_size=10, max_pages=1)) == 10
    assert list_requests(fake) == 2 + 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_page_is_requested_only_when_its_items_are_wanted(kind, fake):
    fake.reset(existing={"count": 25}, list={"page_size": 10})
    assert len(walk(kind, fake, "listPlatformExports", page_size=10, take=10)) == 10
    assert list_requests(fake) == 1, "ten items taken: the second page was never asked for"
    assert len(walk(kind, fake, "listPlatformExports", page_size=10, take=11)) == 11
    assert list_requests(fake) == 1 + 2


@pytest.mark.parametrize("kind", KINDS)
def test_the_caller_s_query_goes_with_every_page(kind, fake):
    fake.reset(existing={"count": 25, "body": {"format": "csv"}}, list={"page_size": 10})
    assert len(walk(kind, fake, "listPlatformExports", page_size=10, query={"format": "csv"})) == 25
    assert walk(kind, fake, "listPlatformExports", page_size=10, query={"format": "xlsx"}) == []
    assert list_requests(fake) == 3 + 1
    # the query's own limit is the page size; its cursor is where the walk starts
    first = every_export_id(fake)
    rest = walk(kind, fake, "listPlatformExports", query={"limit": 10, "cursor": first[9]})
    assert [e["id"] for e in rest] == first[10:]


@pytest.mark.parametrize("kind", KINDS)
def test_every_subscription_by_numbered_pages(kind, fake):
    fake.reset(subscriptions=23)
    got = walk(kind, fake, "listEnterpriseSubscriptions", api="enterprise", page_size=10)
    assert [s["reference"] for s in got] == [f"sub_{i:03d}" for i in range(1, 24)]
    assert list_requests(fake, "listEnterpriseSubscriptions") == 3
    # no page size: the service's default of 10, so the same three pages
    got = walk(kind, fake, "listEnterpriseSubscriptions", api="enterprise")
    assert [s["reference"] for s in got] == [f"sub_{i:03d}" for i in range(1, 24)]
    assert list_requests(fake, "listEnterpriseSubscriptions") == 3 + 3


@pytest.mark.parametrize("kind", KINDS)
def test_a_503_on_a_page_is_retried_by_its_call_and_every_item_comes_once(kind, fake):
    fake.reset(existing={"count": 25}, list={"page_size": 10},
               faults=[{"op": "listPlatformExports", "nth": 2, "do": "status", "status": 503}])
    ids = [e["id"] for e in walk(kind, fake, "listPlatformExports", page_size=10)]
    assert len(ids) == 25 and len(set(ids)) == 25
    assert list_requests(fake) == 4, "three pages, the second sent twice"


@pytest.mark.parametrize("kind", KINDS)
def test_a_page_without_items_is_a_pagination_error(kind, fake):
    fake.reset(existing={"count": 1})
    with httpx.Client() as http:
        export_id = reports("httpx", http, fake).request("listPlatformExports")["data"][0]["id"]
    # a GET whose answer is one export, not a list
    with pytest.raises(rk.PaginationError) as e:
        walk(kind, fake, "getPlatformExport", path={"export": export_id})
    assert e.value.code == "page_unreadable" and isinstance(e.value, rk.RoyaltyKitError)
    assert "getPlatformExport" in str(e.value)
    assert fake.stats()["requests"]["getPlatformExport"] == 1


@pytest.mark.parametrize("kind", KINDS)
def test_an_operation_that_lists_nothing_is_refused_before_any_request(kind, fake):
    fake.reset()

    async def async_refusals(client):
        with pytest.raises(rk.InvalidArgumentError, match="does not list anything"):
            client.paginate("createPlatformExport", body={"format": "csv"})
        with pytest.raises(rk.InvalidArgumentError, match="page_size"):
            client.paginate("listPlatformExports", page_size=500)

    if kind == "async":
        async def main():
            async with httpx.AsyncClient() as http:
                await async_refusals(reports(kind, http, fake))
        asyncio.run(main())
    else:
        with httpx.Client() if kind == "httpx" else requests.Session() as http:
            client = reports(kind, http, fake)
            with pytest.raises(rk.InvalidArgumentError, match="does not list anything"):
                client.paginate("createPlatformExport", body={"format": "csv"})
            with pytest.raises(rk.InvalidArgumentError, match="page_size"):
                client.paginate("listPlatformExports", page_size=500)
    assert fake.stats()["requests"] == {}


def test_a_cancelled_walk_stops_and_keeps_what_it_gave(fake):
    fake.reset(existing={"count": 25}, list={"page_size": 10},
               faults=[{"op": "listPlatformExports", "nth": 2, "do": "stall", "seconds": 1.5}])
    got: list[Any] = []

    async def main():
        async with httpx.AsyncClient() as http:
            client = reports("async", http, fake)
            async with asyncio.timeout(0.5):
                async for item in client.paginate("listPlatformExports", page_size=10):
                    got.append(item)

    with pytest.raises(TimeoutError):
        asyncio.run(main())
    assert len(got) == 10, "the first page's items stand"
    assert list_requests(fake) == 2, "no page after the cancelled one"
