"""``fetch_resource``, the consumer workflow's canonical fetch, against the shared fake API over real
loopback HTTP with each HTTP library: the resource an event names is read with the bearer token (and
``X-User-Id`` when asked), and a URL outside the enterprise API is refused before any request."""

from __future__ import annotations

import asyncio

import httpx
import pytest
import requests

import royaltykit as rk
from royaltykit.client import AsyncEnterpriseClient, EnterpriseClient
from test_client import KINDS, Fake

REL = "/api/v1/releases/5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
USER = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
SECRET = "whsec_canonical_0123456789abcdef"


def delivered() -> rk.VerifiedWebhook:
    """A delivery naming the release, signed and verified as a receiver does."""
    body = ('{"event":"enterprise.release.updated","resource":{"type":"release",'
            '"reference":"5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b","url":"%s"},"occurred_at":"2026-11-27T10:00:00Z"}' % REL)
    now = 1_795_000_000
    headers = rk.sign_webhook(SECRET, body.encode(), timestamp=now, delivery_id="dlv_canonical_1")
    return rk.verify_webhook(headers, body.encode(), [SECRET], now=now)


def fetch(kind: str, fake: Fake, resource, **kw):
    common = dict(base_url=fake.url, api_key="key-1", api_secret="secret-1", clock=fake.clock)
    if kind == "async":
        async def main():
            async with httpx.AsyncClient() as http:
                return await AsyncEnterpriseClient(http, sleep=fake.asleep, **common).fetch_resource(resource, **kw)
        return asyncio.run(main())
    with httpx.Client() if kind == "httpx" else requests.Session() as http:
        return EnterpriseClient(http, sleep=fake.sleep, **common).fetch_resource(resource, **kw)


@pytest.mark.parametrize("kind", KINDS)
def test_the_resource_an_event_names_is_read_with_the_token(kind: str, fake: Fake) -> None:
    fake.reset()
    delivery = delivered()
    assert fetch(kind, fake, delivery)["data"] == {"uuid": "5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b", "title": "Current title",
                                                   "status": "live", "acting_for": None}
    assert fetch(kind, fake, delivery.event, user_id=USER)["data"]["acting_for"] == USER
    assert fetch(kind, fake, REL)["data"]["status"] == "live"
    stats = fake.stats()
    assert stats["requests"]["fetchEnterpriseResource"] == 3 and stats["unauthorized"] == 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("url", [f"{'http://127.0.0.1:1'}{REL}", "//evil.example/api/v1/releases/1", "/api/v1/../v1/token",
                                 "/api/platform/v1/exports", "/api/v1/releases/1?x=1"])
def test_a_url_outside_the_enterprise_api_is_refused_before_any_request(kind: str, url: str, fake: Fake) -> None:
    fake.reset()
    with pytest.raises(rk.RequestBuildError) as raised:
        fetch(kind, fake, url)
    assert raised.value.code == "invalid_resource_url"
    assert fake.stats()["requests"].get("fetchEnterpriseResource", 0) == 0


def test_something_that_names_no_resource_is_a_type_error(fake: Fake) -> None:
    with pytest.raises(TypeError):
        fetch("httpx", fake, 42)
