"""Checked with `mypy --strict` against the installed stubs: the public API types as users write it."""

import sqlite3
import threading
from typing import Any, Callable, Literal, Mapping

import royaltykit as rk
from royaltykit.stores import (
    AsyncPostgresInbox,
    PoisonedEntry,
    PostgresDedupStore,
    PostgresInbox,
    SqliteDedupStore,
    SqliteInbox,
    WorkerReport,
)


def handle(headers: dict[str, str], body: bytes, window: rk.DedupWindow) -> int:
    try:
        v: rk.VerifiedWebhook = rk.verify_webhook(headers, body, ["current", "previous"], tolerance_seconds=300)
    except rk.WebhookVerificationError as e:
        code: str = e.code
        return 400 if code != "invalid_secret" else 500
    if not window.check_and_insert(rk.delivery_key("org-1", v.delivery_id)):
        return 200
    name: str = v.event.name
    replay: str | None = v.event.replay_of
    key: str = rk.event_key("org-1", v.event)
    signed: dict[str, str] = rk.sign_webhook("s", body, timestamp=1, delivery_id="d")
    return 200 if name and key and signed and replay is None else 202


verifier = rk.WebhookVerifier("secret", max_body_bytes=1024)
result = verifier.verify([("Service-Webhook-Id", "x")], b"{}", now=1.5)
n: int = len(rk.DedupWindow(10, 60))
idem: str = rk.idempotency_key("tenant", "op", "request-1")

# Tokens are typed by the API that issued them.
cached: rk.BearerToken = rk.BearerToken.reports("tok", "0f8fad5b-d9cb-469f-a165-70867728950e")
rk.BearerToken.reports("tok")  # type: ignore[call-arg]  # the tenant is required
session = rk.Session(rk.RateBudget.preset("enterprise"))
step = rk.Call("listEnterpriseCountries").next(session=session)
if isinstance(step, rk.CallStep.AwaitToken):
    waited: float = step.seconds
secret = rk.WebhookSecret("s", valid_until="2026-11-22T03:05:06Z")
rotated: list[rk.WebhookSecret] = rk.active_secrets("new", "old", "2026-11-22T03:05:06Z")
path: str = rk.resource_path("/api/v1/releases/1")
token_api: Literal["reports", "enterprise"] = cached.api
rk.build_request("listPlatformExports", token=cached, tenant_id="0f8fad5b-d9cb-469f-a165-70867728950e")
rk.build_request("listPlatformExports", token="tok")  # type: ignore[arg-type]

# Receivers: a store of one's own, sync and async handlers, the rules from the core.


class OwnStore:
    def claim(self, key: str) -> str:
        return "new"

    def commit(self, key: str) -> object:
        return None

    def release(self, key: str) -> object:
        return None


def on_delivery(delivery: rk.VerifiedWebhook) -> None:
    assert delivery.event.resource_url


async def on_delivery_async(delivery: rk.VerifiedWebhook) -> None:
    assert delivery.delivery_id


receiver = rk.WebhookReceiver(["current"], namespace="org-1", store=OwnStore(), handler=on_delivery)
receipt: rk.Receipt = receiver.receive([("Service-Webhook-Id", "x")], b"{}")
status: int = receipt.status
async_receiver = rk.WebhookReceiver("current", namespace="org-1", handler=on_delivery_async, max_body_bytes=4096)
limit: int = async_receiver.max_body_bytes
plan: rk.ReceiverDecision = rk.plan_receipt("org-1", result)
claim_step: Literal["process", "acknowledge", "retry_later"] = rk.decide_claims(["new", "done"]).step
command: list[str] = rk.RedisDedupProtocol(lease_seconds=30).claim_command("k", rk.RedisDedupProtocol.new_token())


# The transactional stores: the handler takes the transaction's connection.
def on_delivery_in_tx(delivery: rk.VerifiedWebhook, connection: sqlite3.Connection) -> None:
    connection.execute("INSERT INTO effects VALUES (?)", (delivery.delivery_id,))


tx_receiver = rk.WebhookReceiver("current", namespace="org-1", handler=on_delivery_in_tx,
                                 store=SqliteDedupStore(":memory:"))
pg_store: rk.TransactionalDedupStore = PostgresDedupStore("postgresql://localhost/app", create_table=False)
claim_sql: rk.SqlStatement = rk.SqlDedupProtocol("postgres", param_style="format").claim("k", "0" * 32, 0)
sql_text: str = claim_sql.sql

# The protocol machines: steps are matched by variant, their members typed.
job = rk.ExportJob(tenant_id="0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e", body={"format": "csv"}, seed=1)
match job.next(0.0):
    case rk.CallStep.Send(request=req):
        sent_method: str = req.method
    case rk.CallStep.Wait(seconds=pause):
        pause_seconds: float = pause
    case rk.CallStep.Done(body=artifact):
        artifact_bytes: bytes = artifact
    case rk.CallStep.Fail(rule=rule, error=error):
        failed_rule: str = rule
    case _:
        pass
# A host streaming a download reports its progress (total: the Content-Length, or None).
job.progress(4096, 40960)
job.progress(8192)
job_events: list[dict[str, Any]] = job.take_events()
verifier_r = rk.WebhookVerifier("whsec_x")
step_r: rk.ReceiptStep = verifier_r.receipt({}, b"{}", namespace="ns", now=0).next()
if isinstance(step_r, rk.ReceiptStep.Reply):
    reply_status: int = step_r.status
typed_receipt = verifier_r.receipt({}, b"{}", namespace="ns", now=0)
if isinstance(typed_receipt.next(), rk.ReceiptStep.Claim):
    step_r = typed_receipt.report(("claimed", "new"))
    step_r = typed_receipt.report("done")
    step_r = typed_receipt.report(("marked", False))
    step_r = typed_receipt.report(("enqueued", True))

# The clients: constructor keywords and results are typed.
import httpx  # noqa: E402
from royaltykit.client import AsyncReportsClient, ExportResult, ReportsClient  # noqa: E402


def etl(http: httpx.Client) -> int:
    client = ReportsClient(http, base_url="https://reports.example", client_id="id", client_secret="s",
                           tenant_id="0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e")
    result: ExportResult = client.run_export({"format": "csv"}, to="out.csv", progress=lambda got, total: None)
    return result.size


async def aetl(http: httpx.AsyncClient) -> str:
    client = AsyncReportsClient(http, base_url="https://reports.example", client_id="id", client_secret="s",
                                tenant_id="0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e")
    return (await client.run_export({"format": "csv"})).export_id


# Timeouts, poll bounds, checkpoints, interruption and telemetry (issue 42).
import asyncio  # noqa: E402
from pathlib import Path  # noqa: E402

from royaltykit.otel import OpenTelemetry  # noqa: E402
from royaltykit.telemetry import ClientTelemetry, OperationScope, ReceiverTelemetry  # noqa: E402

defaults: tuple[float, float] = rk.client_timeouts(connect_timeout=None, read_timeout=None)


def resumable_etl(http: httpx.Client, saved: Path) -> str | None:
    telemetry: ClientTelemetry = OpenTelemetry()
    client = ReportsClient(http, base_url="https://reports.example", client_id="id", client_secret="s",
                           tenant_id="0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e", connect_timeout=5.0, read_timeout=60.0,
                           min_poll_interval_seconds=1.0, max_poll_interval_seconds=30.0, telemetry=telemetry)
    timeouts: tuple[float, float] = client.with_options(read_timeout=120.0, max_poll_interval_seconds=10.0).timeouts
    try:
        if saved.exists():
            return client.run_export(resume=saved.read_text(), to="out.csv").export_id
        return client.run_export({"format": "csv"}, to="out.csv", on_checkpoint=saved.write_text,
                                 max_poll_interval_seconds=5.0).export_id
    except rk.ExportInterrupted as e:
        code: str = e.code
        saved.write_text(e.checkpoint)
        return e.export_id if timeouts and code else None


async def cancellable_etl(http: httpx.AsyncClient) -> str | None:
    client = AsyncReportsClient(http, base_url="https://reports.example", client_id="id", client_secret="s",
                                tenant_id="0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e", timeout=30.0)
    try:
        return (await client.run_export({"format": "csv"}, on_checkpoint=print)).export_id
    except asyncio.CancelledError as e:
        left: rk.ExportInterrupted | None = rk.export_interruption(e)
        if left is not None:
            checkpoint: str = left.checkpoint
            print(checkpoint)
        raise


class PrintScope:
    def event(self, event: Mapping[str, Any]) -> None:
        print(event["kind"])

    def end(self, error: BaseException | None = None) -> None:
        print("end", error)


class PrintTelemetry:
    def operation(self, name: str, base_url: str) -> OperationScope:
        return PrintScope()


own: ClientTelemetry = PrintTelemetry()
receiver_telemetry: ReceiverTelemetry = OpenTelemetry()
traced = rk.WebhookReceiver("current", namespace="org-1", handler=on_delivery, telemetry=receiver_telemetry)
traced_receipt: rk.Receipt = traced.receive([], b"{}", route="/webhooks")

# Every page of a list (issue 43): the machine's steps, the clients' iterators, the walk's error.
from typing import AsyncIterator, Iterator  # noqa: E402

from royaltykit.client import AsyncEnterpriseClient, EnterpriseClient  # noqa: E402

pages_walk = rk.Pages("listPlatformExports", query={"format": "csv"}, page_size=10, max_items=25)
match pages_walk.next():
    case rk.PagesStep.Fetch(query=page_query):
        sent_query: list[tuple[str, str]] = page_query
        shown: rk.PageItems | None = pages_walk.page(b'{"data": []}')
        shown_take: int = shown.take if shown is not None else 0
        shown_member: str | None = shown.member if shown is not None else None
    case rk.PagesStep.Done(end=why, pages=read, items=given):
        end_why: Literal["last", "max_pages", "max_items"] = why
        pages_read: int = read + given
    case rk.PagesStep.Fail(error=walk_error):
        raise walk_error
    case _:
        pass
walked: int = pages_walk.pages + pages_walk.items


def every_export(http: httpx.Client) -> list[str]:
    client = ReportsClient(http, base_url="https://reports.example", client_id="id", client_secret="s",
                           tenant_id="0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e")
    items: Iterator[Any] = client.paginate("listPlatformExports", page_size=50, max_items=500, query={"format": "csv"})
    try:
        return [item["id"] for item in items]
    except rk.PaginationError as e:
        reason: str = e.code
        return [reason]


async def every_subscription(http: httpx.AsyncClient) -> list[str]:
    client = AsyncEnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s")
    subscriptions: AsyncIterator[Any] = client.paginate("listEnterpriseSubscriptions", max_pages=3)
    return [s["reference"] async for s in subscriptions]


def first_releases(http: httpx.Client) -> list[Any]:
    return list(EnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s").paginate(
        "listEnterpriseReleases"))


async def first_analytics(http: httpx.AsyncClient) -> list[Any]:
    client = AsyncReportsClient(http, base_url="https://reports.example", client_id="id", client_secret="s",
                                tenant_id="0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e")
    return [row async for row in client.paginate("listPublishedAnalyticsBreakdown", max_items=10)]


def current_state(http: httpx.Client, delivery: rk.VerifiedWebhook) -> Any:
    """Issue 43: the canonical fetch of what a delivery names, acting for a user."""
    client = EnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s")
    return client.fetch_resource(delivery, user_id="0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e")


async def current_state_async(http: httpx.AsyncClient, event: rk.WebhookEvent) -> Any:
    client = AsyncEnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s")
    return await client.fetch_resource(event)


# A subscription's reveal-once secret (issue 43 point 5): read, stored, handed to the receiver.
def store_secret(reference: str | None, secret: str) -> None:
    assert reference is None or secret


def subscribe(http: httpx.Client) -> list[rk.WebhookSecret]:
    client = EnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s")
    created: rk.RevealedSecret = client.create_subscription("ops", "https://hooks.example/rk", ["ddex.delivery.failed"],
                                                            request_id="sub-ops-1")
    store_secret(created.reference, created.secret.secret)
    try:
        rotated = client.rotate_secret(created.reference or "wh_1")
    except rk.ReconcileRequired as e:
        if e.reconcile != "rotate_again":
            raise
        rotated = client.rotate_secret(created.reference or "wh_1")  # at once: the lost secret is gone
    until: int | None = rotated.previous_valid_until
    record: str = rotated.record
    assert until is None or record
    return rotated.secrets(previous=created.secret.secret)


async def subscribe_async(http: httpx.AsyncClient) -> rk.WebhookVerifier:
    client = AsyncEnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s")
    created = await client.create_subscription("ops", "https://hooks.example/rk", ("ddex.import.completed",))
    rotated: rk.RevealedSecret = await client.rotate_secret("wh_1")
    return rk.WebhookVerifier(rotated.secrets(created.secret.secret))


revealed: rk.RevealedSecret = rk.revealed_secret(b'{"secret": "s"}')
revealed_list: list[rk.WebhookSecret] = revealed.secrets()
revealed_text: str = revealed.secret.secret


# A rotation on a live receiver: its secrets replaced, no new receiver.
def rotate_live(receiver: rk.WebhookReceiver, rotated: rk.RevealedSecret, current: str) -> None:
    receiver.use_secrets(rotated.secrets(previous=current))
    receiver.use_secrets("whsec_only")
    receiver.use_secrets((rk.WebhookSecret("a"), "b"))

# Routing by event name: typed names, the decorator keeps the handler's type, the router is a handler.
router = rk.EventRouter()


@router.on("ddex.delivery.failed")
def on_failed(delivery: rk.VerifiedWebhook) -> None:
    assert delivery.event.name


failed_handler: Callable[[rk.VerifiedWebhook], None] = on_failed  # still the function
router.on("ddex.import.completed", on_delivery_async)
router.on("ddex.delivery.retried", on_delivery)  # a name the spec does not list is accepted
router.on_any(on_delivery)


@router.otherwise
async def on_other(delivery: rk.VerifiedWebhook) -> None:
    assert not delivery.event.is_known


known: rk.EventName = "ddex.connection.degraded"
router.on(known, on_delivery)
bad_name: rk.EventName = "ddex.delivery.unknown"  # type: ignore[assignment]
names: tuple[str, ...] = rk.KNOWN_EVENT_NAMES
awaits: bool = router.is_async
routed = rk.WebhookReceiver("current", namespace="org-1", handler=router)
routes = rk.EventRoutes()
index: int = routes.on("ddex.delivery.failed")
where: rk.Route = routes.route("ddex.delivery.failed")
named: list[int] = where.named
anything: bool = where.any and where.fallback

# Delivery recovery (issue 43 point 3): the machine's steps, the clients' runs, every built-in store's state.
from datetime import datetime, timedelta, timezone  # noqa: E402

window_store = rk.DedupWindow(10)
recovery_run = rk.Recovery("wh_1", "org-1", 1_800_000_000, now=1_800_003_600, max_replays=10)
match recovery_run.next():
    case rk.RecoveryStep.Fetch(query=log_query):
        log_sent: list[tuple[str, str]] = log_query
        recovery_run.page(b'{"data": []}')
    case rk.RecoveryStep.Check(keys=keys):
        recovery_run.checked([window_store.state(k) for k in keys])
    case rk.RecoveryStep.Replay(delivery=replay_of):
        replay_ref: str = replay_of
        recovery_run.replay_failed("call_failed")
    case rk.RecoveryStep.Done(report=recovery_report):
        for done in recovery_report.deliveries:
            action: Literal["processed", "processed_by_replay", "in_progress", "in_flight", "replay_pending",
                            "unrecorded", "replayed", "replay_failed", "replay_limit", "deferred"] = done.action
            replayed_as: str | None = done.replay
        log_end: Literal["last", "max_pages", "max_items"] = recovery_report.end
    case rk.RecoveryStep.Fail(error=log_error):
        raise log_error
    case _:
        pass
default_replays: int = rk.Recovery.DEFAULT_MAX_REPLAYS
window_state: Literal["new", "in_progress", "done"] = window_store.state("k")
states: list[rk.DeliveryStates] = [window_store, rk.RedisDedupStore(object()), SqliteDedupStore(":memory:")]
async_states: rk.AsyncDeliveryStates = rk.AsyncRedisDedupStore(object())


def recover(http: httpx.Client, store: rk.DeliveryStates) -> int:
    client = EnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s")
    report: rk.RecoveryReport = client.recover_deliveries(
        "wh_1", store=store, namespace="org-1", since=datetime.now(timezone.utc) - timedelta(hours=1), max_replays=20)
    return report.replayed + report.considered + report.entries + report.skipped + report.before_since


async def recover_async(http: httpx.AsyncClient) -> rk.RecoveryReport:
    client = AsyncEnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s")
    return await client.recover_deliveries("wh_1", store=rk.AsyncRedisDedupStore(object()), namespace="org-1",
                                           since=1_800_000_000.0, now=1_800_003_600, max_entries=1000,
                                           max_replays_per_delivery=2)


# The inbox: the receiver persists and answers at once; the worker runs the handler in a transaction.
inbox = SqliteInbox(":memory:", lease_seconds=30)
inbox_receiver = rk.WebhookReceiver("current", namespace="org-1", inbox=inbox)
inbox_store: rk.InboxStore = PostgresInbox("postgresql://localhost/app", create_table=False)
inbox_states: list[rk.DeliveryStates] = [inbox, PostgresInbox("postgresql://localhost/app", create_table=False)]


def on_event(event: rk.WebhookEvent, connection: sqlite3.Connection) -> None:
    connection.execute("INSERT INTO effects VALUES (?)", (event.resource_reference,))


def work(stop: threading.Event) -> int:
    report: WorkerReport = inbox.run_worker(on_event, stop=stop, max_attempts=8, poll_seconds=0.5, seed=1)
    drained: WorkerReport = inbox.drain(on_event, on_error=lambda e, entry: print(entry.delivery_id, entry.attempts))
    poison: list[PoisonedEntry] = inbox.poisoned(limit=10)
    retried: bool = inbox.retry(poison[0].key) if poison else False
    counts: dict[str, int] = inbox.counts()
    return report.processed + drained.retried + len(poison) + int(retried) + counts.get("done", 0) + inbox.purge()


async def work_async(stop: asyncio.Event) -> int:
    async_inbox = AsyncPostgresInbox("postgresql://localhost/app")

    async def on_event_async(event: rk.WebhookEvent, connection: Any) -> None:
        await connection.execute("INSERT INTO effects VALUES (%s)", (event.resource_reference,))

    report: WorkerReport = await async_inbox.run_worker(on_event_async, stop=stop)
    state: str = await async_inbox.state("k")
    return report.poisoned + len(state)


# The inbox on a Redis stream (at least once): the handler gets the Redis client.
import redis  # noqa: E402
import redis.asyncio  # noqa: E402

from royaltykit.stores import AsyncRedisInbox, RedisInbox  # noqa: E402

redis_inbox = RedisInbox(redis.Redis(), prefix="{app:inbox}:", ttl_seconds=86_400, lease_seconds=30)
redis_inbox_receiver = rk.WebhookReceiver("current", namespace="org-1", inbox=redis_inbox)
redis_inbox_states: list[rk.DeliveryStates] = [redis_inbox]
redis_inbox_store: rk.InboxStore = AsyncRedisInbox(redis.asyncio.Redis())


def work_redis(stop: threading.Event) -> int:
    def on_redis_event(event: rk.WebhookEvent, client: redis.Redis) -> None:
        client.sadd("seen", event.resource_reference)  # idempotent: at least once

    report: WorkerReport = redis_inbox.run_worker(on_redis_event, stop=stop, max_attempts=8, poll_seconds=0.5)
    drained: WorkerReport = redis_inbox.drain(on_redis_event)
    poison: list[PoisonedEntry] = redis_inbox.poisoned(limit=rk.DEFAULT_POISON_LISTED)
    retried: bool = redis_inbox.retry(poison[0].key) if poison else False
    counts: dict[str, int] = redis_inbox.counts()
    state: str = redis_inbox.state("k")
    return report.processed + drained.retried + int(retried) + counts.get("done", 0) + redis_inbox.purge() + len(state)


async def work_redis_async(stop: asyncio.Event) -> int:
    async_redis_inbox = AsyncRedisInbox(redis.asyncio.Redis(), lease_seconds=30)
    states: rk.AsyncDeliveryStates = async_redis_inbox

    async def on_event_async(event: rk.WebhookEvent, client: Any) -> None:
        await client.sadd("seen", event.resource_reference)

    report: WorkerReport = await async_redis_inbox.run_worker(on_event_async, stop=stop)
    counts: dict[str, int] = await async_redis_inbox.counts()
    return report.processed + counts.get("pending", 0) + len(await states.state("k"))


redis_protocol = rk.RedisInboxProtocol(prefix="{app:inbox}:", lease_seconds=30)
enqueue_command: list[str] = redis_protocol.enqueue_command("k", "dlv_1", "ddex.delivery.failed", "{}", 0)
redis_claimed: rk.InboxEntry | None = rk.RedisInboxProtocol.claim_reply(None)
redis_counts: rk.InboxCounts = rk.RedisInboxProtocol.counts_reply("[1,2,3]")
redis_poison: list[rk.InboxPoisonEntry] = rk.RedisInboxProtocol.poisoned_reply("[]")
redis_pending: int = redis_counts.pending + len(redis_poison)
last_error: str = rk.handler_error_text("ValueError", "bad")
redis_worker = rk.InboxWorker(transactional=False)

# The framework views carry their receiver: a secret rotation reaches the live view.
from royaltykit.flask import WebhookView as FlaskView  # noqa: E402
from royaltykit.flask import inbox_view as flask_inbox_view  # noqa: E402
from royaltykit.flask import webhook_view as flask_webhook_view  # noqa: E402

flask_view: FlaskView = flask_inbox_view("current", namespace="org-1", inbox=redis_inbox)
flask_view.receiver.use_secrets(["new", rk.WebhookSecret("current", valid_until=1_800_000_000)])


@flask_webhook_view("current", namespace="org-1")
def on_flask_delivery(delivery: rk.VerifiedWebhook) -> None:
    pass


on_flask_delivery.receiver.use_secrets("new")
flask_view_name: str = on_flask_delivery.__name__

inbox_protocol = rk.SqlInboxProtocol("sqlite", param_style="qmark", lease_seconds=30)
claimed_sql: rk.SqlStatement = inbox_protocol.claim(0)
new_entry: bool = rk.SqlInboxProtocol.enqueue_reply(1)
worker = rk.InboxWorker(max_attempts=5, drain=True, seed=7)
match worker.next():
    case rk.InboxStep.Claim():
        worker.claimed(("k", "dlv_1", "ddex.delivery.failed", "{}", 1), 0.0)
    case rk.InboxStep.Idle(seconds=idle_seconds):
        worker.waited()
    case rk.InboxStep.RunHandler(entry=claimed_entry):
        entry_body: str = claimed_entry.body
        parsed: rk.WebhookEvent = rk.parse_webhook_event(entry_body)
        worker.handler_failed("boom", 0.0)
    case rk.InboxStep.Settle(key=settle_key, retry_at=retry_at, poison=poison_it):
        settle_sql: rk.SqlStatement = inbox_protocol.settle(settle_key, 1, poison_it, retry_at, "boom")
        worker.settled()
    case _:
        pass
processed_count: int = worker.processed
if isinstance(worker.next(), rk.InboxStep.Claim):
    after_report: rk.InboxStep = worker.report(("claimed", ("k", "dlv_1", "ddex.delivery.failed", "{}", 1)), 0.0)
    after_report = worker.report("done")
    after_report = worker.report(("failed", "E: boom"), 0.0)
    after_report = worker.report(("marked", True))
match rk.WebhookVerifier("current").receipt({}, b"", namespace="org-1", inbox=True).next():
    case rk.ReceiptStep.Enqueue(key=enqueue_key):
        queued_key: str = enqueue_key
    case _:
        pass

# Fleets (issue 43 point 7): the processes of one API client sharing one token and one budget
# through Redis; the machines' steps as a host of its own drives them.
from royaltykit.client import AsyncRedisFleet, RedisFleet  # noqa: E402


def fleet_worker(http: httpx.Client, redis_client: Any) -> Any:
    fleet = RedisFleet(redis_client, prefix="royaltykit:fleet:key-1:")
    client = EnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s", fleet=fleet)
    shared: rk.Session = fleet.session(rk.RateBudget.preset("enterprise"))
    other = EnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s", fleet=fleet,
                             session=shared)
    of_fleet: rk.Fleet | None = other.session.fleet
    print(of_fleet, fleet.prefix)
    return client.request("listEnterpriseReleases")


async def fleet_worker_async(http: httpx.AsyncClient, redis_client: Any) -> Any:
    client = AsyncEnterpriseClient(http, base_url="https://api.example", api_key="k", api_secret="s",
                                   fleet=AsyncRedisFleet(redis_client))
    return await client.request("listEnterpriseReleases")


def drive_fleet_token(session: rk.Session, send: Callable[[list[str]], str | None]) -> bool:
    refresh = rk.FleetToken(session, "enterprise", seed=7)
    while True:
        match refresh.next():
            case rk.FleetTokenStep.Command(command=command):
                refresh.replied(send(command), session)
            case rk.FleetTokenStep.Exchange():
                refresh.exchanged(rk.BearerToken.enterprise("cached"), refresh_at=None)
            case rk.FleetTokenStep.Wait(seconds=seconds):
                print(seconds, refresh.elapsed())
                refresh.waited()
            case rk.FleetTokenStep.Done():
                return True
            case rk.FleetTokenStep.Failed(reason=reason):
                print(reason)
                return False


fleet_session = rk.Fleet(rk.DEFAULT_FLEET_PREFIX).session(rk.RateBudget.preset("enterprise"))
fleet_call = rk.Call("listEnterpriseCountries", seed=1)
match fleet_call.next(session=fleet_session):
    case rk.CallStep.Reserve(command=reserve_command):
        fleet_call.report(("reply", "ok") if reserve_command[1] == rk.RESERVE_SCRIPT else ("no_response", "connect_failed"))
    case _:
        pass
poll_seconds: float = rk.FLEET_POLL_SECONDS + rk.MAX_FLEET_PREFIX_BYTES
scripts: tuple[str, str] = (rk.PUBLISH_SCRIPT, rk.UNLOCK_SCRIPT)
