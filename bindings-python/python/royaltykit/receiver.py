"""Webhook receivers: the flow every framework integration shares (``royaltykit.asgi``,
``royaltykit.flask``, ``royaltykit.django``).

The sequence — verify, claim each key, run the handler, commit each key (each commit retried a
few times), or release the claims when the handler raises (500, so the service redelivers) — is
the Rust core's :class:`WebhookReceipt` machine, as are the rules; this module only performs its
steps, synchronously (:meth:`WebhookReceiver.receive`) or with ``await``
(:meth:`WebhookReceiver.areceive`, where the store and the handler may be async).

:class:`EventRouter` is a handler that hands each delivery to the handlers registered for its
event name; which ones run is the core's :class:`EventRoutes`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast, overload

from ._native import (
    DEFAULT_STORE_CAPACITY,
    DedupWindow,
    EventRoutes,
    RedisDedupProtocol,
    VerifiedWebhook,
    WebhookEvent,
    WebhookSecret,
    WebhookVerifier,
    ReceiptStep,
    WebhookReceipt,
)
from ._ops import Command, Ops, aperform, perform
from .telemetry import ReceiptScope, ReceiverTelemetry

if TYPE_CHECKING:
    from ._native import _ReceiptOutcome

__all__ = ["AsyncDedupStore", "AsyncDeliveryStates", "AsyncRedisDedupStore", "DedupStore", "DeliveryStates", "EventName",
           "EventRouter", "InboxStore", "Receipt", "RedisDedupStore", "TransactionalDedupStore", "WebhookReceiver"]

_log = logging.getLogger("royaltykit")
T = TypeVar("T")
H = TypeVar("H", bound=Callable[..., object])

# One Literal per name, joined with `|` (at run time a typing.Union; type checkers see one
# Literal of the nine names): stubtest takes a type alias of several names for a union only.
EventName = (
    Literal["ddex.delivery.status_changed"]
    | Literal["ddex.delivery.blocked"]
    | Literal["ddex.delivery.acknowledged"]
    | Literal["ddex.delivery.rejected"]
    | Literal["ddex.delivery.failed"]
    | Literal["ddex.import.completed"]
    | Literal["ddex.import.failed"]
    | Literal["ddex.connection.degraded"]
    | Literal["enterprise.webhook.test"]
)
"""The event names the spec lists, as the service sends them (the core's ``KNOWN_EVENT_NAMES``,
in its order; a test keeps the two equal), for annotations (``name: EventName``). The service
may send other names: ``WebhookEvent.name`` is a ``str`` that keeps any name as sent, and
:meth:`EventRouter.on` takes any name (``EventName | str``)."""


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


class TransactionalDedupStore(Protocol):
    """A store in the handler's own database (:mod:`royaltykit.stores`): the delivery is marked
    done inside the transaction that holds its effect. Methods may be coroutines."""

    @property
    def transactional(self) -> bool: ...
    def claim(self, key: str) -> Any: ...
    def release(self, key: str) -> Any: ...
    def begin(self) -> Any: ...
    def mark_done(self, connection: Any, key: str) -> Any: ...
    def commit_transaction(self, connection: Any) -> Any: ...
    def rollback(self, connection: Any) -> Any: ...


class InboxStore(Protocol):
    """An inbox (:class:`~royaltykit.stores.SqliteInbox`, :class:`~royaltykit.stores.PostgresInbox`,
    :class:`~royaltykit.stores.AsyncPostgresInbox`, :class:`~royaltykit.stores.RedisInbox`,
    :class:`~royaltykit.stores.AsyncRedisInbox`, or your own): a receiver given ``inbox=``
    persists each verified delivery with ``enqueue`` — its delivery key, ``Service-Webhook-Id``,
    event name and raw body as text — and answers 200 at once; True for a new entry, False for one
    already in the inbox (anything else, None included, is a failed store: answered 503, so the
    delivery is sent again). It may be a coroutine (then receive with ``areceive``)."""

    def enqueue(self, key: str, delivery_id: str, event: str, body: str) -> Any: ...


class DeliveryStates(Protocol):
    """A store that tells what it holds of a delivery key without claiming it, for delivery
    recovery (``EnterpriseClient.recover_deliveries``): ``"new"`` (nothing: never processed, or
    forgotten), ``"in_progress"`` (a live claim) or ``"done"`` (processed). Every built-in store
    has it (:class:`DedupWindow`, :class:`RedisDedupStore`, the SQL stores and the inboxes of
    :mod:`royaltykit.stores`); a store of your own adds ``state`` to take part. Separate from
    :class:`DedupStore` so that a store written before it still types as one."""

    def state(self, key: str) -> str: ...


class AsyncDeliveryStates(Protocol):
    """:class:`DeliveryStates` with a coroutine ``state`` (:class:`AsyncRedisDedupStore`,
    :class:`~royaltykit.stores.AsyncPostgresDedupStore`, :class:`~royaltykit.stores.AsyncPostgresInbox`,
    :class:`~royaltykit.stores.AsyncRedisInbox`), for ``AsyncEnterpriseClient``."""

    async def state(self, key: str) -> str: ...


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

    # Each operation once, for this store and the asyncio one (royaltykit._ops).

    def _claim(self, key: str) -> Ops[str]:
        token = RedisDedupProtocol.new_token()
        if RedisDedupProtocol.claim_reply((yield Command(self._protocol.claim_command(key, token)))) == "new":
            self._tokens.hold(key, token)
            return "new"
        return RedisDedupProtocol.state_reply((yield Command(self._protocol.state_command(key))))

    def _state(self, key: str) -> Ops[str]:
        return RedisDedupProtocol.lookup_reply((yield Command(self._protocol.lookup_command(key))))

    def _end(self, command: list[str], key: str) -> Ops[bool]:
        # a reply is the claim's end: its token is dropped; a failure raises and keeps it
        reply = yield Command(command)
        self._tokens.drop(key)
        return RedisDedupProtocol.guarded_reply(reply)

    def _run(self, ops: Ops[T]) -> T:
        return perform(ops, lambda action: _text(self._client.execute_command(*action.command)))

    def claim(self, key: str) -> str:
        """``"new"``, ``"in_progress"`` or ``"done"``."""
        return self._run(self._claim(key))

    def state(self, key: str) -> str:
        """What Redis holds of ``key``, without claiming it (:class:`DeliveryStates`): ``"new"``,
        ``"in_progress"`` or ``"done"``."""
        return self._run(self._state(key))

    def commit(self, key: str) -> bool:
        """True when done; False when another worker claimed the key after this claim's lease ran
        out. When Redis cannot be reached it raises and keeps the claim's token, so the
        receiver's retry commits the same claim."""
        return self._run(self._end(self._protocol.commit_command(key, self._tokens.get(key)), key))

    def release(self, key: str) -> bool:
        """True when this worker's claim was released."""
        return self._run(self._end(self._protocol.release_command(key, self._tokens.get(key)), key))


class AsyncRedisDedupStore(RedisDedupStore):
    """:class:`RedisDedupStore` with redis-py's asyncio client (``redis.asyncio.Redis``): the same
    operations, awaited."""

    async def _send(self, action: Command) -> str | None:
        return _text(await self._client.execute_command(*action.command))

    async def _run(self, ops: Ops[T]) -> T:  # type: ignore[override]
        return await aperform(ops, self._send)

    async def claim(self, key: str) -> str:  # type: ignore[override]
        return await self._run(self._claim(key))

    async def state(self, key: str) -> str:  # type: ignore[override]
        """What Redis holds of ``key``, without claiming it (:class:`AsyncDeliveryStates`)."""
        return await self._run(self._state(key))

    async def commit(self, key: str) -> bool:  # type: ignore[override]
        return await self._run(self._end(self._protocol.commit_command(key, self._tokens.get(key)), key))

    async def release(self, key: str) -> bool:  # type: ignore[override]
        return await self._run(self._end(self._protocol.release_command(key, self._tokens.get(key)), key))


async def _maybe(value: T | Awaitable[T]) -> T:
    return await value if inspect.isawaitable(value) else value


def _callable(handler: Any) -> None:
    if not callable(handler):
        raise TypeError(f"handler must be callable: handler(delivery), not {type(handler).__name__}")


def _awaits(handler: object) -> bool:
    """Whether ``handler`` is to be awaited: a coroutine function, or an :class:`EventRouter`
    with one (the framework integrations then give an async view)."""
    return inspect.iscoroutinefunction(handler) or (isinstance(handler, EventRouter) and handler.is_async)


class EventRouter:
    """A handler that hands each delivery to the handlers registered for its event name
    (``delivery.event.name``, exactly as sent); give it as the ``handler`` of a
    :class:`WebhookReceiver` or of a framework integration::

        router = EventRouter()

        @router.on("ddex.delivery.failed")
        def on_failed(delivery: VerifiedWebhook) -> None: ...

        router.on("ddex.import.completed", on_import)
        router.on_any(audit)          # sees every delivery
        router.otherwise(on_other)    # the deliveries no `on` handler names

        receiver = WebhookReceiver(secrets, namespace="org-1", handler=router)

    The handlers registered for the delivery's name run first, in the order they were
    registered; then every ``on_any`` handler, in order; then the fallback (:meth:`otherwise`),
    only when no ``on`` handler names the event (a name the spec does not list, or one nobody
    registered). A delivery no handler takes is acknowledged (200): the service does not send it
    again. Which handlers run is the core's decision (:class:`EventRoutes`); the router keeps the
    handlers by the core's indices and calls them.

    A handler that raises fails the delivery exactly as a plain handler's raise does: the
    handlers after it do not run, the claims are released, the answer is 500 and the service's
    redelivery runs the handlers again (make each one idempotent).

    Handlers may be coroutine functions when deliveries are received with ``await``
    (:meth:`WebhookReceiver.areceive`, :mod:`royaltykit.asgi`, or the async Flask or Django view
    that :mod:`royaltykit.flask` and :mod:`royaltykit.django` give when :attr:`is_async`:
    register the handlers before building the view). The router then returns an awaitable that
    awaits each handler in order. With a store in your database (:mod:`royaltykit.stores`) each
    handler is called as ``handler(delivery, connection)``. A router is also an inbox worker's
    handler (``inbox.run_worker(router)``): each handler is then called as ``handler(event,
    connection)`` with the delivery's :class:`WebhookEvent`. Registering is thread-safe."""

    def __init__(self) -> None:
        self._routes = EventRoutes()
        self._named: list[Callable[..., object]] = []
        self._any: list[Callable[..., object]] = []
        self._fallback: Callable[..., object] | None = None
        self._lock = threading.Lock()

    @overload
    def on(self, name: EventName | str, handler: None = None) -> Callable[[H], H]: ...

    @overload
    def on(self, name: EventName | str, handler: H) -> H: ...

    def on(self, name: EventName | str, handler: H | None = None) -> H | Callable[[H], H]:
        """Registers ``handler`` for the deliveries of the event ``name`` (as the service sends
        it, for example ``"ddex.delivery.failed"``; a name the spec does not list is accepted)
        and returns it. Without ``handler``, a decorator: ``@router.on("ddex.delivery.failed")``.
        Raises ``InvalidArgumentError`` at once for an empty name, one longer than 256 bytes or
        one with a space or control character."""
        if handler is None:
            EventRoutes().on(name)  # the core's check of the name, now; registered when decorated
            return lambda h: self.on(name, h)
        _callable(handler)
        with self._lock:
            index = self._routes.on(name)
            self._named.append(handler)
            assert index == len(self._named) - 1  # the core numbers the registrations in order
        return handler

    def on_any(self, handler: H) -> H:
        """Registers ``handler`` for every delivery (after the ``on`` handlers of its name) and
        returns it; usable as a decorator (``@router.on_any``)."""
        _callable(handler)
        with self._lock:
            self._routes.on_any()
            self._any.append(handler)
        return handler

    def otherwise(self, handler: H) -> H:
        """Registers ``handler`` as the fallback, for the deliveries no ``on`` handler names (a
        name the spec does not list, or one nobody registered), and returns it; usable as a
        decorator (``@router.otherwise``). A router has one fallback: a later one replaces it."""
        _callable(handler)
        with self._lock:
            self._routes.otherwise()
            self._fallback = handler
        return handler

    @property
    def is_async(self) -> bool:
        """Whether a handler registered is a coroutine function (or a router with one): then
        receive with ``await`` (:meth:`WebhookReceiver.areceive`)."""
        with self._lock:
            handlers = [*self._named, *self._any, *([self._fallback] if self._fallback is not None else [])]
        return any(_awaits(h) for h in handlers)

    def _handlers(self, name: str) -> list[Callable[..., object]]:
        with self._lock:
            route = self._routes.route(name)
            return [*(self._named[i] for i in route.named), *(self._any if route.any else ()),
                    *((self._fallback,) if route.fallback and self._fallback is not None else ())]

    def __call__(self, delivery: VerifiedWebhook | WebhookEvent, *args: Any) -> Awaitable[None] | None:
        """Runs the handlers of ``delivery``'s event (a :class:`VerifiedWebhook`, or the
        :class:`WebhookEvent` an inbox worker gives), in order, each as ``handler(delivery,
        *args)``. Returns None, or, once a handler returns an awaitable, an awaitable that awaits
        it and then runs (and awaits) the rest in order."""
        handlers = self._handlers(delivery.name if isinstance(delivery, WebhookEvent) else delivery.event.name)
        for k, handler in enumerate(handlers):
            result = handler(delivery, *args)
            if inspect.isawaitable(result):
                return _Awaiting(result, handlers[k + 1:], delivery, args)
        return None

    def __repr__(self) -> str:
        return repr(self._routes)


class _Awaiting:
    """The rest of a delivery's handlers once one returned an awaitable: awaiting this awaits it,
    then runs (and awaits) the others in order. ``close()`` drops it unawaited (the synchronous
    receive, which cannot await) without leaving a coroutine that was never awaited."""

    __slots__ = ("_pending", "_rest", "_delivery", "_args")

    def __init__(self, pending: Awaitable[object], rest: list[Callable[..., object]],
                 delivery: VerifiedWebhook | WebhookEvent, args: tuple[Any, ...]) -> None:
        self._pending, self._rest, self._delivery, self._args = pending, rest, delivery, args

    def __await__(self) -> Generator[Any, None, None]:
        return self._run().__await__()

    async def _run(self) -> None:
        await self._pending
        for handler in self._rest:
            await _maybe(handler(self._delivery, *self._args))

    def close(self) -> None:
        _close(self._pending)


def _close(awaitable: object) -> None:
    """Drops an awaitable that will not be awaited: a coroutine (or :class:`_Awaiting`) is closed."""
    if isinstance(awaitable, _Awaiting) or inspect.iscoroutine(awaitable):
        awaitable.close()


class WebhookReceiver:
    """A webhook receiver built once: secrets (current first; during a rotation the previous one
    as ``WebhookSecret(previous, valid_until=previous_secret_valid_until)``, so it stops
    verifying when the overlap ends), the dedup namespace (your organization, subscription or
    tenant), a store (default: a :class:`DedupWindow`, one process only) and the handler that
    stores a delivery's effect. The handler runs once per new delivery; when it raises, its
    claims are released and the answer is 500, so the service redelivers and that attempt is
    processed. Processing is at least once: a commit that still fails after its retries is
    answered 503 and the redelivery runs the handler again (make the handler idempotent).
    With a store in your database (:mod:`royaltykit.stores`) it is exactly once: the handler is
    called as ``handler(delivery, connection)`` inside the transaction that marks the delivery
    done. An :class:`EventRouter` is a handler: it hands each delivery to the handlers of its
    event name.

    Deliveries are deduplicated by ``Service-Webhook-Id``, as the spec says: every new id is
    processed. ``claim_content_key=True`` also claims the signed content's key; it stops a
    captured delivery resent under a new id inside the tolerance, and it merges two genuine
    deliveries whose body and timestamp are byte-identical (two changes of one resource in the
    same second: the second is acknowledged and its handler never runs).

    With ``inbox=`` (:class:`~royaltykit.stores.SqliteInbox`, :class:`~royaltykit.stores.PostgresInbox`,
    :class:`~royaltykit.stores.AsyncPostgresInbox`, :class:`~royaltykit.stores.RedisInbox`,
    :class:`~royaltykit.stores.AsyncRedisInbox`: instead of ``store=``, and without ``handler``)
    a verified delivery is persisted in the inbox and answered 200 at once (``{"result":
    "queued"}``, or ``"duplicate"`` for one already there), whatever the handler would take: the
    handler runs later in the inbox's worker (``inbox.run_worker(handler)``), exactly once on a
    SQL inbox, at least once on Redis. An inbox that cannot be reached is answered 503, so the
    service sends the delivery again.

    After a secret rotation, :meth:`use_secrets` gives the live receiver its new secrets
    (``rotated.secrets(previous=current_secret)``): no new receiver."""

    def __init__(
        self,
        secrets: str | WebhookSecret | Iterable[str | WebhookSecret],
        *,
        namespace: str,
        handler: Callable[[VerifiedWebhook], object] | Callable[[VerifiedWebhook, Any], object] | None = None,
        store: DedupStore | AsyncDedupStore | TransactionalDedupStore | None = None,
        inbox: InboxStore | None = None,
        tolerance_seconds: int | None = None,
        max_body_bytes: int | None = None,
        on_error: Callable[[BaseException, VerifiedWebhook], None] | None = None,
        tolerance: int | None = None,
        claim_content_key: bool = False,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        telemetry: ReceiverTelemetry | None = None,
    ) -> None:
        if inbox is not None:
            if store is not None:
                raise TypeError("give store= or inbox=, not both: the inbox row is the delivery's dedup record")
            if handler is not None:
                raise TypeError("with inbox= the handler runs in the inbox's worker (inbox.run_worker(handler)), never "
                                "in the request: give it there")
            if not callable(getattr(inbox, "enqueue", None)):
                raise TypeError("inbox must have enqueue(key, delivery_id, event, body) (royaltykit.InboxStore: a "
                                "SqliteInbox, PostgresInbox, AsyncPostgresInbox, RedisInbox or AsyncRedisInbox of "
                                "royaltykit.stores)")
        elif handler is None:
            raise TypeError("handler is required (or inbox=, whose worker runs the handler)")
        else:
            _callable(handler)
        if telemetry is not None and not callable(getattr(telemetry, "receipt", None)):
            raise TypeError("telemetry must have receipt(route) (royaltykit.telemetry.ReceiverTelemetry)")
        # One scope per delivery (royaltykit.otel: a server span), ended with the receipt's outcome.
        self.telemetry = telemetry
        # The verifier of the secrets in force: use_secrets replaces it (one reference swap); each
        # delivery reads it once, so a delivery being verified keeps the verifier it started with.
        self.verifier = WebhookVerifier(_secret_list(secrets), tolerance_seconds=tolerance_seconds,
                                        max_body_bytes=max_body_bytes, tolerance=tolerance)  # tolerance: deprecated, warns
        # What use_secrets builds its verifier with (tolerance: the deprecated spelling, warned above).
        self._tolerance_seconds = tolerance_seconds if tolerance_seconds is not None else tolerance
        self.namespace = namespace
        self.claim_content_key = claim_content_key
        # The handler, None with an inbox (its worker runs the handler).
        self.handler: Callable[..., object] | None = handler
        # The inbox deliveries are persisted in (then answered at once), or None.
        self.inbox: Any = inbox
        self.store: Any = store if store is not None or inbox is not None else DedupWindow(DEFAULT_STORE_CAPACITY)
        # A store in the handler's database (royaltykit.stores): handler(delivery, connection).
        self.transactional: bool = getattr(self.store, "transactional", False) is True
        self.max_body_bytes: int = self.verifier.max_body_bytes
        self.on_error = on_error or (lambda e, d: _log.error("webhook handler failed for %s", d.delivery_id, exc_info=e))
        # One event per delivery: {"kind": "receipt", "outcome", "status", "delivery_id", "event"}
        # (logged at DEBUG on the `royaltykit` logger, and given to on_event when set).
        self.on_event = on_event

    def use_secrets(self, secrets: str | WebhookSecret | Iterable[str | WebhookSecret]) -> None:
        """Replaces the secrets this receiver verifies with, for the deliveries that arrive after
        it; a delivery being verified keeps the secrets it started with. The same secrets and the
        same validation as the constructor (``WebhookVerificationError`` ``invalid_secret`` for
        none or an empty one): a refused list changes nothing. Thread-safe (one reference swap),
        so a rotation needs no new receiver (nor a new ``royaltykit.asgi.WebhookApp`` around it)::

            rotated = client.rotate_secret(subscription)
            store_secret(rotated.secret.secret)  # shown once
            receiver.use_secrets(rotated.secrets(previous=current_secret))

        ``rotated.secrets(previous=...)`` is the new secret first, then the previous one carrying
        the rotation's ``previous_secret_valid_until``: deliveries signed with the previous secret
        still verify until then, and never after. The tolerance and body limit stay as built."""
        self.verifier = WebhookVerifier(_secret_list(secrets), tolerance_seconds=self._tolerance_seconds,
                                        max_body_bytes=self.max_body_bytes)

    def _receipt(self, headers: Any, body: bytes, now: float | None) -> WebhookReceipt:
        # On a DedupWindow the receipt performs its own claims and commits inside the core.
        window = self.store if isinstance(self.store, DedupWindow) else None
        return self.verifier.receipt(headers, body, namespace=self.namespace, now=now, window=window,
                                     transactional=self.transactional, claim_content_key=self.claim_content_key,
                                     inbox=self.inbox is not None)

    def _steps(self, headers: Any, body: bytes, now: float | None,
               trace: _Trace) -> Generator[Any, tuple[bool, Any], Receipt]:
        """The receipt's loop, once for both drivers: yields each action to perform (a callable,
        or a :class:`_Pause`) and is sent back ``(True, result)`` or ``(False, exception)``; the
        core is told what became of it (``report``), and decides what a failure means.

        A ``BaseException`` that is not an ``Exception`` (``asyncio.CancelledError``,
        ``KeyboardInterrupt``, ``SystemExit``) cancels the delivery: it is reported to the core
        (``cancelled``), which then asks only for the rollback of the open transaction and the
        releases of the claims; they are performed, and the cancellation is raised, unchanged."""
        r, tx, cancelled = self._receipt(headers, body, now), cast(Any, None), cast("BaseException | None", None)
        step = r.next()
        while True:
            if isinstance(step, ReceiptStep.Reply):
                if cancelled is not None:
                    raise cancelled
                return self._replied(r, step, trace)
            ok, value = yield self._action(step, r, tx, body)
            if not ok and isinstance(step, ReceiptStep.RunHandler) and not _cancels(value):
                value = yield from self._handler_failed(value, cast(VerifiedWebhook, r.delivery), trace)
            if not ok and _cancels(value):
                cancelled = cancelled or value
            tx = value if ok and isinstance(step, ReceiptStep.Begin) else tx
            step = r.report(self._outcome(step, ok, value, trace))

    def _action(self, step: Any, r: WebhookReceipt, tx: Any, body: Any) -> Any:
        """What performs `step` (a callable, or a :class:`_Pause`): the store's, the inbox's or
        the handler's call."""
        store, inbox, handler = self.store, self.inbox, cast(Callable[..., object], self.handler)
        match step:
            case ReceiptStep.Claim(key=key):
                return lambda: store.claim(key)
            case ReceiptStep.Release(key=key):
                return lambda: store.release(key)
            case ReceiptStep.Begin():
                return store.begin
            case ReceiptStep.CommitTransaction():
                return lambda: store.commit_transaction(tx)
            case ReceiptStep.Rollback():
                return lambda: store.rollback(tx)
            case ReceiptStep.RunHandler():
                d = cast(VerifiedWebhook, r.delivery)
                return (lambda: handler(d, tx)) if self.transactional else (lambda: handler(d))
            case ReceiptStep.Commit(key=key) if self.transactional:  # the mark, inside the transaction
                return lambda: store.mark_done(tx, key)
            case ReceiptStep.Commit(key=key):
                return lambda: store.commit(key)
            case ReceiptStep.Wait(seconds=seconds):
                return _Pause(seconds)
            case ReceiptStep.Enqueue(key=key):  # the verified delivery, persisted as received
                d, text = cast(VerifiedWebhook, r.delivery), body if isinstance(body, str) else bytes(body).decode("utf-8")
                return lambda: inbox.enqueue(key, d.delivery_id, d.event.name, text)  # verified: UTF-8 JSON
        raise AssertionError(f"a receipt step this receiver does not know: {step!r}")

    def _handler_failed(self, failure: BaseException, d: VerifiedWebhook,
                        trace: _Trace) -> Generator[Any, tuple[bool, Any], BaseException]:
        """The handler's `failure` given to ``on_error``; what the receipt is told of: the
        failure, or a cancellation ``on_error`` raised (an exception it raises is logged and
        changes nothing: the delivery still ends as a handler failure, rolled back, released,
        500)."""
        trace.error = failure
        ok, value = yield lambda: self.on_error(failure, d)
        if not ok and not _cancels(value):
            _log.error("on_error raised for %s", d.delivery_id, exc_info=value)
        return value if not ok and _cancels(value) else failure

    def _outcome(self, step: Any, ok: bool, value: Any, trace: _Trace) -> _ReceiptOutcome:
        """The outcome of the performed `step` as the receipt takes it. A store's failure is
        logged with its cause, never silently: the delivery is answered 503 and sent again."""
        if not ok and _cancels(value):
            return "cancelled"
        if ok and isinstance(step, ReceiptStep.Enqueue) and not isinstance(value, bool):
            # None is no answer: never taken for a duplicate
            ok, value = False, TypeError(f"inbox.enqueue must return a bool (True: a new entry, False: a "
                                         f"duplicate), not {type(value).__name__}")
        if not ok:
            what = _STORE_STEPS.get(type(step).__name__)
            if what is not None:  # a failed release or rollback is fine: the lease runs out, the database rolls back
                what = "mark_done" if what == "commit" and self.transactional else what
                _log.error("webhook store %s failed on %s: answering 503 so that the delivery is sent again",
                           type(self.store if self.inbox is None else self.inbox).__name__, what, exc_info=value)
                trace.error = value
            return "failed"
        match step:
            case ReceiptStep.Claim():
                return ("claimed", value)
            case ReceiptStep.Enqueue():
                return ("enqueued", value)
            case ReceiptStep.Commit() if self.transactional:
                return ("marked", bool(value))
        return "done"

    def _replied(self, r: WebhookReceipt, step: Any, trace: _Trace) -> Receipt:
        """The receipt of the reply `step`; its event, when one is wanted."""
        d = r.delivery
        if self.on_event is not None or _log.isEnabledFor(logging.DEBUG):
            self._event(r.outcome, step.status, d)
        trace.end(r.outcome, step.status, d.delivery_id if d is not None else None)
        return Receipt(step.status, step.body.encode(), d)

    def _event(self, outcome: str | None, status: int, d: VerifiedWebhook | None) -> None:
        """The delivery's event: what happened (the core's receipt outcome), never its body."""
        event = {"kind": "receipt", "outcome": outcome, "status": status,
                 "delivery_id": d.delivery_id if d is not None else None,
                 "event": d.event.name if d is not None else None}
        _log.debug("receipt %s: %s %s (%s)", event["delivery_id"], status, outcome, event["event"])
        if self.on_event is not None:
            self.on_event(event)

    def _trace(self, route: str | None) -> _Trace:
        scope = None
        if self.telemetry is not None:
            try:
                scope = self.telemetry.receipt(route)
            except Exception:  # noqa: BLE001 (telemetry never changes what a receiver answers)
                _log.warning("telemetry failed to open a receipt", exc_info=True)
        return _Trace(scope)

    def receive(self, headers: Any, body: bytes, *, now: float | None = None, route: str | None = None) -> Receipt:
        """Receives one delivery with a synchronous store and handler, driving the core's
        :class:`WebhookReceipt` (every rule and every step is the core's). ``route``: the
        framework's route of the request (``/webhooks``), for the telemetry's span name. A
        handler or store that returns an awaitable fails its step (``TypeError``: the handler's
        is answered 500, the store's 503): receive those with :meth:`areceive`. An interruption
        (``KeyboardInterrupt``, ``SystemExit``) rolls the open transaction back and releases the
        claims before it goes on, so the redelivery is processed at once."""
        trace = self._trace(route)
        try:
            return self._receive(self._steps(headers, body, now, trace))
        except BaseException as e:
            trace.end(None, 500, None, e)
            raise

    def _receive(self, steps: Generator[Any, tuple[bool, Any], Receipt]) -> Receipt:
        outcome = cast(Any, None)  # None starts the generator
        try:
            while True:
                action = steps.send(outcome)
                try:
                    if isinstance(action, _Pause):
                        time.sleep(action.seconds)
                        outcome = (True, None)
                    else:
                        outcome = (True, _synchronous(action()))
                except BaseException as e:  # a KeyboardInterrupt too: the steps unwind, then raise it
                    outcome = (False, e)
        except StopIteration as done:
            return cast(Receipt, done.value)

    async def areceive(self, headers: Any, body: bytes, *, now: float | None = None,
                       route: str | None = None) -> Receipt:
        """Receives one delivery; the store's methods and the handler may be coroutines (a
        synchronous handler runs on the event loop: keep it short, or make it async).
        ``route`` as for :meth:`receive`. A cancelled task (``asyncio.CancelledError``: a
        timeout, a client gone) rolls the open transaction back and releases the claims, then
        stays cancelled (the same ``CancelledError`` goes on)."""
        trace = self._trace(route)
        try:
            return await self._areceive(self._steps(headers, body, now, trace))
        except BaseException as e:
            trace.end(None, 500, None, e)
            raise

    async def _areceive(self, steps: Generator[Any, tuple[bool, Any], Receipt]) -> Receipt:
        outcome = cast(Any, None)  # None starts the generator
        try:
            while True:
                action = steps.send(outcome)
                try:
                    outcome = (True, await (asyncio.sleep(action.seconds) if isinstance(action, _Pause) else _maybe(action())))
                except BaseException as e:  # a CancelledError too: the steps unwind, then raise it
                    outcome = (False, e)
        except StopIteration as done:
            return cast(Receipt, done.value)


def _secret_list(secrets: str | WebhookSecret | Iterable[str | WebhookSecret]) -> str | WebhookSecret | list[str | WebhookSecret]:
    """What :class:`WebhookVerifier` takes: one secret as it is, any other iterable as a list."""
    return secrets if isinstance(secrets, (str, WebhookSecret)) else list(secrets)


def _synchronous(value: T) -> T:
    """A step's result in :meth:`WebhookReceiver.receive`, which cannot await: an awaitable (an
    async handler, an :class:`EventRouter` with one, an async store) fails the step, as a
    handler's raise does, rather than leave its work undone behind a 200."""
    if inspect.isawaitable(value):
        _close(value)  # never started
        raise TypeError("an async handler or store returned an awaitable in the synchronous receive(), which cannot "
                        "await it: receive with `await receiver.areceive(...)` (royaltykit.asgi, an async Flask or "
                        "Django view)")
    return value


class _Trace:
    """A delivery's telemetry scope (or none) and the handler's or store's error that ended it."""

    __slots__ = ("scope", "error")

    def __init__(self, scope: ReceiptScope | None) -> None:
        self.scope: ReceiptScope | None = scope
        self.error: BaseException | None = None

    def end(self, outcome: str | None, status: int, delivery_id: str | None, error: BaseException | None = None) -> None:
        if self.scope is not None:
            scope, self.scope = self.scope, None
            try:
                scope.end(outcome, status, error if error is not None else self.error, delivery_id)
            except Exception:  # noqa: BLE001
                _log.warning("telemetry failed at the end of a receipt", exc_info=True)


def _cancels(value: Any) -> bool:
    """Whether a failed action's `value` cancels the delivery: a ``BaseException`` that is not an
    ``Exception`` (``asyncio.CancelledError``, ``KeyboardInterrupt``, ``SystemExit``)."""
    return isinstance(value, BaseException) and not isinstance(value, Exception)


# The steps whose failure is the store's (logged), by the name of their class; "commit" is the
# mark of a transactional receipt.
_STORE_STEPS = {"Claim": "claim", "Begin": "begin", "CommitTransaction": "commit", "Commit": "commit",
                "Enqueue": "enqueue"}


@dataclass(frozen=True)
class _Pause:
    """A ``Wait`` step: ``time.sleep`` or ``asyncio.sleep`` it, whichever the driver is."""

    seconds: float
