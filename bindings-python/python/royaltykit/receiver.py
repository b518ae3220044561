"""Webhook receivers: the flow every framework integration shares (``royaltykit.asgi``,
``royaltykit.flask``, ``royaltykit.django``).

verify → :func:`plan_receipt` → claim every key → :func:`decide_claims` → run the handler →
commit every key, each commit retried a few times (or release them all when the handler raises,
answering 500 so the service redelivers). The rules — which keys, what the claims mean, which status — are the Rust core's;
this module only sequences the I/O, synchronously (:meth:`WebhookReceiver.receive`) or with
``await`` (:meth:`WebhookReceiver.areceive`, where the store and the handler may be async).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from ._native import (
    DEFAULT_STORE_CAPACITY,
    DedupWindow,
    RedisDedupProtocol,
    VerifiedWebhook,
    WebhookSecret,
    WebhookVerifier,
    decide_claims,
    failure_reply,
    plan_receipt,
    rejection_body,
)
from .errors import RoyaltyKitError

__all__ = ["AsyncDedupStore", "AsyncRedisDedupStore", "DedupStore", "Receipt", "RedisDedupStore", "WebhookReceiver"]

_log = logging.getLogger("royaltykit")
T = TypeVar("T")


class DedupStore(Protocol):
    """The two-phase dedup contract: a :class:`DedupWindow` (one process), a
    :class:`RedisDedupStore` (several), or your own over your database."""

    def claim(self, key: str) -> str: ...
    def commit(self, key: str) -> object: ...
    def release(self, key: str) -> object: ...


class AsyncDedupStore(Protocol):
    """:class:`DedupStore` with coroutine methods (:class:`AsyncRedisDedupStore`)."""

    async def claim(self, key: str) -> str: ...
    async def commit(self, key: str) -> object: ...
    async def release(self, key: str) -> object: ...


@dataclass(frozen=True)
class Receipt:
    """What to answer: ``status`` with the small JSON ``body``; ``delivery`` once verified."""

    status: int
    body: bytes
    delivery: VerifiedWebhook | None = None


def _text(reply: object) -> str | None:
    """A Redis reply as text: redis-py answers SET with True rather than ``OK``."""
    if reply is None:
        return None
    if reply is True:
        return "OK"
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def _reply(status: int, body: str, delivery: VerifiedWebhook | None = None) -> Receipt:
    return Receipt(status, body.encode(), delivery)


def _failed(failure: Literal["handler_failed", "store_unavailable"], delivery: VerifiedWebhook) -> Receipt:
    r = failure_reply(failure)
    return _reply(r.status, r.body, delivery)


class _Tokens:
    """This process's claim tokens, by key (thread-safe)."""

    def __init__(self) -> None:
        self._held: dict[str, str] = {}
        self._lock = threading.Lock()

    def hold(self, key: str, token: str) -> None:
        with self._lock:
            self._held[key] = token

    def get(self, key: str) -> str:
        with self._lock:
            return self._held.get(key) or RedisDedupProtocol.new_token()

    def drop(self, key: str) -> None:
        with self._lock:
            self._held.pop(key, None)


class RedisDedupStore:
    """The dedup contract on Redis for receivers in several processes, with a redis-py client
    (``redis.Redis``). Claims carry a random token, so a worker whose lease ran out can neither
    commit nor release a claim another worker took since. Thread-safe."""

    def __init__(self, client: Any, *, prefix: str | None = None, ttl_seconds: int | None = None,
                 lease_seconds: int | None = None) -> None:
        self._client = client
        self._protocol = RedisDedupProtocol(prefix=prefix, ttl_seconds=ttl_seconds, lease_seconds=lease_seconds)
        self._tokens = _Tokens()

    def _send(self, command: list[str]) -> str | None:
        return _text(self._client.execute_command(*command))

    def claim(self, key: str) -> str:
        """``"new"``, ``"in_progress"`` or ``"done"``."""
        token = RedisDedupProtocol.new_token()
        if RedisDedupProtocol.claim_reply(self._send(self._protocol.claim_command(key, token))) == "new":
            self._tokens.hold(key, token)
            return "new"
        return RedisDedupProtocol.state_reply(self._send(self._protocol.state_command(key)))

    def commit(self, key: str) -> bool:
        """True when done; False when another worker claimed the key after this claim's lease ran
        out. When Redis cannot be reached it raises and keeps the claim's token, so the
        receiver's retry commits the same claim."""
        reply = self._send(self._protocol.commit_command(key, self._tokens.get(key)))
        self._tokens.drop(key)
        return reply == "1"

    def release(self, key: str) -> bool:
        """True when this worker's claim was released."""
        reply = self._send(self._protocol.release_command(key, self._tokens.get(key)))
        self._tokens.drop(key)
        return reply == "1"


class AsyncRedisDedupStore(RedisDedupStore):
    """:class:`RedisDedupStore` with redis-py's asyncio client (``redis.asyncio.Redis``)."""

    async def _asend(self, command: list[str]) -> str | None:
        return _text(await self._client.execute_command(*command))

    async def claim(self, key: str) -> str:  # type: ignore[override]
        token = RedisDedupProtocol.new_token()
        if RedisDedupProtocol.claim_reply(await self._asend(self._protocol.claim_command(key, token))) == "new":
            self._tokens.hold(key, token)
            return "new"
        return RedisDedupProtocol.state_reply(await self._asend(self._protocol.state_command(key)))

    async def commit(self, key: str) -> bool:  # type: ignore[override]
        reply = await self._asend(self._protocol.commit_command(key, self._tokens.get(key)))
        self._tokens.drop(key)
        return reply == "1"

    async def release(self, key: str) -> bool:  # type: ignore[override]
        reply = await self._asend(self._protocol.release_command(key, self._tokens.get(key)))
        self._tokens.drop(key)
        return reply == "1"


async def _maybe(value: T | Awaitable[T]) -> T:
    return await value if inspect.isawaitable(value) else value


class WebhookReceiver:
    """A webhook receiver built once: secrets (current first; during a rotation the previous one
    as ``WebhookSecret(previous, valid_until=previous_secret_valid_until)``, so it stops
    verifying when the overlap ends), the dedup namespace (your organization, subscription or
    tenant), a store (default: a :class:`DedupWindow`, one process only) and the handler that
    stores a delivery's effect. The handler runs once per new delivery; when it raises, its
    claims are released and the answer is 500, so the service redelivers and that attempt is
    processed. Processing is at least once: a commit that still fails after its retries is
    answered 503 and the redelivery runs the handler again (make the handler idempotent)."""

    def __init__(
        self,
        secrets: str | WebhookSecret | Iterable[str | WebhookSecret],
        *,
        namespace: str,
        handler: Callable[[VerifiedWebhook], object],
        store: DedupStore | AsyncDedupStore | None = None,
        tolerance: int | None = None,
        max_body_bytes: int | None = None,
        on_error: Callable[[BaseException, VerifiedWebhook], None] | None = None,
    ) -> None:
        if not callable(handler):
            raise TypeError("handler must be callable: handler(delivery)")
        self.verifier = WebhookVerifier(secrets if isinstance(secrets, (str, WebhookSecret)) else list(secrets),
                                        tolerance=tolerance, max_body_bytes=max_body_bytes)
        self.namespace = namespace
        self.handler = handler
        self.store: Any = store if store is not None else DedupWindow(DEFAULT_STORE_CAPACITY)
        self.max_body_bytes: int = self.verifier.max_body_bytes
        self.on_error = on_error or (lambda e, d: _log.error("webhook handler failed for %s", d.delivery_id, exc_info=e))

    def _verify(self, headers: Any, body: bytes, now: float | None) -> Receipt | tuple[VerifiedWebhook, list[str]]:
        """The verified delivery and the keys to claim, or the answer when there is nothing to claim."""
        try:
            delivery = self.verifier.verify(headers, body, now=now)
        except RoyaltyKitError as e:
            return _reply(e.http_status, rejection_body(e.code, str(e)))
        plan = plan_receipt(self.namespace, delivery)
        if plan.step != "process":
            return _reply(plan.status, plan.body, delivery)
        return delivery, plan.keys

    def receive(self, headers: Any, body: bytes, *, now: float | None = None) -> Receipt:
        """Receives one delivery with a synchronous store and handler."""
        verified = self._verify(headers, body, now)
        if isinstance(verified, Receipt):
            return verified
        delivery, keys = verified
        store = self.store
        states: list[str] = []
        try:  # in order, stopping at the first key not new: the first key is the delivery's lock
            for key in keys:
                states.append(store.claim(key))
                if states[-1] != "new":
                    break
        except Exception:
            self._release_quietly(keys, range(len(states)))
            return _failed("store_unavailable", delivery)
        decision = decide_claims(states)
        if decision.step != "process":
            self._release_quietly(keys, decision.release)
            return _reply(decision.status, decision.body, delivery)
        try:
            self.handler(delivery)
        except Exception as e:
            self._release_quietly(keys, range(len(keys)))
            self.on_error(e, delivery)
            return _failed("handler_failed", delivery)
        # The effect is stored: each commit is tried commit_attempts times before answering 503.
        for key in keys:
            for attempt in range(1, decision.commit_attempts + 1):
                try:
                    store.commit(key)
                    break
                except Exception:
                    if attempt == decision.commit_attempts:
                        return _failed("store_unavailable", delivery)
                    time.sleep(decision.commit_retry_delay_ms / 1000)
        return _reply(decision.status, decision.body, delivery)

    async def areceive(self, headers: Any, body: bytes, *, now: float | None = None) -> Receipt:
        """Receives one delivery; the store's methods and the handler may be coroutines (a
        synchronous handler runs on the event loop: keep it short, or make it async)."""
        verified = self._verify(headers, body, now)
        if isinstance(verified, Receipt):
            return verified
        delivery, keys = verified
        store = self.store
        states: list[str] = []
        try:
            for key in keys:
                states.append(await _maybe(store.claim(key)))
                if states[-1] != "new":
                    break
        except Exception:
            await self._arelease_quietly(keys, range(len(states)))
            return _failed("store_unavailable", delivery)
        decision = decide_claims(states)
        if decision.step != "process":
            await self._arelease_quietly(keys, decision.release)
            return _reply(decision.status, decision.body, delivery)
        try:
            await _maybe(self.handler(delivery))
        except Exception as e:
            await self._arelease_quietly(keys, range(len(keys)))
            self.on_error(e, delivery)
            return _failed("handler_failed", delivery)
        for key in keys:
            for attempt in range(1, decision.commit_attempts + 1):
                try:
                    await _maybe(store.commit(key))
                    break
                except Exception:
                    if attempt == decision.commit_attempts:
                        return _failed("store_unavailable", delivery)
                    await asyncio.sleep(decision.commit_retry_delay_ms / 1000)
        return _reply(decision.status, decision.body, delivery)

    def _release_quietly(self, keys: list[str], positions: Iterable[int]) -> None:
        for i in positions:
            try:
                self.store.release(keys[i])
            except Exception:  # the store is down: the claim expires after its lease
                pass

    async def _arelease_quietly(self, keys: list[str], positions: Iterable[int]) -> None:
        for i in positions:
            try:
                await _maybe(self.store.release(keys[i]))
            except Exception:
                pass
