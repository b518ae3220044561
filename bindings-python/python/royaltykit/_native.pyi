"""Type stubs of the native module; the public API is re-exported by ``royaltykit``."""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Final, Literal, Protocol, final

from typing_extensions import disjoint_base

from .errors import ApiError, PaginationError, RoyaltyKitError

_Headers = Mapping[str, str] | Mapping[str, Sequence[str]] | Iterable[tuple[str, str]]
_Body = bytes | bytearray | memoryview | str
_Seconds = int | float
# Unix seconds, an aware datetime, or ISO 8601 text (as the service sends previous_secret_valid_until)
_Instant = int | float | datetime | str

@final
class WebhookSecret:
    """A signing secret with the last Unix second it verifies (the rotation's
    ``previous_secret_valid_until``); after it, the secret never verifies. ``repr`` hides it.
    ``valid_until`` that is not a finite number, an aware datetime or an ISO 8601 text is
    refused (``InvalidArgumentError``)."""

    def __new__(cls, secret: str, valid_until: _Instant | None = None) -> WebhookSecret: ...
    @property
    def valid_until(self) -> int | None: ...
    @property
    def secret(self) -> str:
        """The secret itself, to store (a subscription's is shown once) or to hand to a verifier
        or a signer; never in ``repr`` or ``str``."""

_Secrets = str | WebhookSecret | Sequence[str | WebhookSecret]

@final
class RevealedSecret:
    """A subscription's signing secret as its create or rotation revealed it
    (``revealed_secret``; ``EnterpriseClient.create_subscription`` and ``rotate_secret``). The
    service shows the secret once: store ``secret.secret`` now. ``secrets(previous)`` is what a
    receiver or a verifier takes from now on. ``record`` is the response as JSON text without
    any secret member (safe to log or store). ``repr`` never shows the secret."""

    @property
    def secret(self) -> WebhookSecret:
        """The new signing secret (no expiry)."""
    @property
    def previous_valid_until(self) -> int | None:
        """A rotation's ``previous_secret_valid_until`` (Unix seconds): until then deliveries
        carry the previous secret's signature too. None for a create."""
    @property
    def reference(self) -> str | None:
        """The subscription's reference, when the response names it."""
    @property
    def record(self) -> str:
        """The response as JSON text with every secret member removed."""
    def secrets(self, previous: str | None = None) -> list[WebhookSecret]:
        """The secrets to verify with from now on: the new one, then ``previous`` (the secret held
        until this rotation) carrying ``previous_valid_until``; the new one alone for a create
        or without ``previous``."""

def revealed_secret(body: _Body) -> RevealedSecret:
    """The signing secret a subscription's create or rotate-secret response reveals, read from
    its raw 2xx body. ``WebhookVerificationError`` (``secret_not_revealed``) when the body is
    not a JSON object of at most 1 MiB, names no secret, or has a
    ``previous_secret_valid_until`` that is not a time; the message never contains the body."""

__all__ = [
    "Call", "CallStep", "ExportJob", "PageItems", "Pages", "PagesStep", "ReceiptStep", "RecoveredDelivery", "Recovery",
    "RecoveryReport", "RecoveryStep", "Session", "WebhookReceipt", "InboxEntry", "InboxStep", "InboxWorker",
    "Fleet", "FleetToken", "FleetTokenStep", "DEFAULT_FLEET_PREFIX", "MAX_FLEET_PREFIX_BYTES", "FLEET_POLL_SECONDS",
    "RESERVE_SCRIPT", "PUBLISH_SCRIPT", "UNLOCK_SCRIPT",
    "SqlInboxProtocol", "parse_webhook_event", "RedisInboxProtocol", "InboxPoisonEntry", "InboxCounts",
    "handler_error_text", "detect_sql_dialect", "DEFAULT_POISON_LISTED",
    "BackoffPolicy", "BearerToken", "DEFAULT_DEDUP_TTL_SECONDS", "DEFAULT_MAX_BODY_BYTES", "DEFAULT_TOLERANCE_SECONDS", "DedupWindow",
    "EnterpriseToken", "EventRoutes", "KNOWN_EVENT_NAMES", "Route", "ExportStateInfo", "HEADER_NAMES", "Operation", "PollDecision", "QueryParam",
    "RateBudget", "RateDecision", "ReceiverDecision", "ReceiverReply", "RedisDedupProtocol", "SqlDedupProtocol", "SqlStatement", "DEFAULT_STORE_CAPACITY", "STATUS_HANDLER_FAILED", "STATUS_STORE_UNAVAILABLE", "RequestDescriptor", "ApiSession", "ResponseNotices", "RetryAfter",
    "RetryDecision", "RevealedSecret", "Token", "VerifiedWebhook", "WebhookEvent", "WebhookSecret", "WebhookVerifier",
    "active_secrets", "backoff_delay", "build_enterprise_token_request", "build_request",
    "build_token_request", "check_export_download", "content_key", "decide_claims", "decide_retry", "delivery_key",
    "event_key", "export_poll_decision", "failure_reply", "rejection_body", "export_state", "idempotency_key", "missing_scopes",
    "operation", "operations", "parse_api_error", "parse_api_session", "parse_enterprise_token_response",
    "parse_retry_after", "parse_timestamp", "parse_token_response", "plan_receipt", "resource_path", "check_base_url", "client_timeouts", "export_interrupted_message", "call_failed_message", "response_notices", "revealed_secret", "sign_webhook",
    "step_up_satisfies", "validate_export_command", "validate_export_list_query", "verify_webhook",
    "webhook_gives_up_at", "webhook_next_attempt_at", "webhook_retry_schedule",
]

HEADER_NAMES: list[str]

DEFAULT_TOLERANCE_SECONDS: int
DEFAULT_MAX_BODY_BYTES: int
DEFAULT_DEDUP_TTL_SECONDS: int

class _EventIdentity(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def resource_type(self) -> str: ...
    @property
    def resource_reference(self) -> str: ...
    @property
    def occurred_at_text(self) -> str: ...

@final
class WebhookEvent:
    """A parsed webhook event; unknown event names are kept."""

    name: Final[str]
    is_known: Final[bool]
    is_test: Final[bool]
    resource_type: Final[str]
    resource_reference: Final[str]
    resource_url: Final[str]
    occurred_at: Final[int | None]
    occurred_at_text: Final[str]
    replay_of: Final[str | None]

KNOWN_EVENT_NAMES: tuple[str, ...]
"""The event names the spec lists, as the service sends them (``royaltykit.EventName`` types
them); the service may send others, which are kept as sent."""

@final
class Route:
    """Where one delivery goes (``EventRoutes.route``): the handlers registered at the indices
    ``named``, in order, then the ``on_any`` handlers when ``any``, then the fallback when
    ``fallback``."""

    named: Final[list[int]]
    """Indices of the matching registrations (``EventRoutes.on``), in registration order."""
    any: Final[bool]
    """Whether the ``on_any`` handlers run (whenever one is registered)."""
    fallback: Final[bool]
    """Whether the fallback runs: no handler named the event and a fallback is registered."""

@final
class EventRoutes:
    """The registrations of an ``EventRouter``, names only: ``on(name)`` gives the registration's
    index, ``route(name)`` says which indices a delivery of that event goes to.
    ``royaltykit.EventRouter`` keeps the handlers by these indices. Thread-safe."""

    def __new__(cls) -> EventRoutes: ...
    def on(self, name: str) -> int:
        """Registers a handler for the event ``name`` and returns its index.
        ``InvalidArgumentError`` for an empty name, one longer than 256 bytes or one with a space
        or control character; a name the spec does not list is accepted."""
    def on_any(self) -> None:
        """Registers a handler of every delivery."""
    def otherwise(self) -> None:
        """Registers the fallback: the handler of the deliveries no ``on`` handler names."""
    def route(self, name: str) -> Route:
        """Where a delivery of the event ``name`` goes."""

@final
class VerifiedWebhook:
    """A delivery that passed verification."""

    delivery_id: Final[str]
    timestamp: Final[int]
    secret_index: Final[int]
    content_key: Final[str]
    event: Final[WebhookEvent]

def verify_webhook(
    headers: _Headers,
    body: _Body,
    secrets: _Secrets,
    *,
    now: _Seconds | None = None,
    tolerance_seconds: int | None = None,
    max_body_bytes: int | None = None,
    tolerance: int | None = None,  # deprecated spelling of tolerance_seconds
) -> VerifiedWebhook: ...
@final
class WebhookVerifier:
    """A verifier built once with its secrets; thread-safe."""

    def __new__(
        cls, secrets: _Secrets, *, tolerance_seconds: int | None = None, max_body_bytes: int | None = None,
        tolerance: int | None = None,  # deprecated spelling of tolerance_seconds
    ) -> WebhookVerifier: ...
    def verify(self, headers: _Headers, body: _Body, *, now: _Seconds | None = None) -> VerifiedWebhook: ...
    def receipt(
        self, headers: _Headers, body: _Body, *, namespace: str, now: _Seconds | None = None,
        window: DedupWindow | None = None, transactional: bool = False, claim_content_key: bool = False,
        inbox: bool = False,
    ) -> WebhookReceipt:
        """One delivery as a machine: drive it with ``next()`` until it says ``Reply``; on a
        ``window`` it claims and commits there itself and asks only for the handler. Only the
        delivery key is claimed unless ``claim_content_key`` (it also merges same-second twins).
        With ``inbox=True`` a verified delivery is persisted (``Enqueue``) and answered at once."""
    @property
    def max_body_bytes(self) -> int:
        """The largest body accepted, in bytes."""

def sign_webhook(
    secret: _Secrets,
    body: _Body,
    *,
    timestamp: _Seconds | None = None,
    delivery_id: str | None = None,
) -> dict[str, str]: ...
def active_secrets(
    current: str,
    previous: str | None = None,
    previous_valid_until: _Instant | None = None,
    *,
    now: _Seconds | None = None,
) -> list[WebhookSecret]:
    """The secrets in force at ``now``, each carrying its expiry (the previous one keeps
    ``previous_valid_until``)."""
def resource_path(url: str | WebhookEvent) -> str:
    """``resource.url`` when it is a path under ``/api/v1/``; else ``WebhookVerificationError``
    (``invalid_resource_url``)."""

def client_timeouts(connect_timeout: float | None = None, read_timeout: float | None = None) -> tuple[float, float]:
    """A client's timeouts as ``(connect_seconds, read_seconds)``: each one given checked (more
    than 0, at most a day), each one not given the library's default (10 s, 30 s); else
    ``InvalidArgumentError`` naming ``connect_timeout`` or ``read_timeout``."""

# generated by scripts/gen_surface.py from surface/functions.toml: begin
def parse_timestamp(text: str) -> int | None:
    """Unix seconds of a time as the services send one (RFC 3339, the ISO 8601 extended and basic
    forms, HTTP-dates): the library's one timestamp parser; None for anything else."""
def check_base_url(base_url: str, allow_insecure_http: bool = False) -> str:
    """``base_url`` without its trailing ``/`` when a client may send its requests to it: ``https``
    (plain ``http`` only to a loopback host, or anywhere with ``allow_insecure_http``, since the
    credentials would travel in clear), a host, no user-info, query, fragment or API prefix
    (``/api/…``, which the client adds); otherwise ``InvalidArgumentError`` (``invalid_argument``),
    naming ``base_url``, saying what is wrong and what is accepted. The clients call it when they
    are built."""
def call_failed_message(operation: str, base_url: str, reason: str, attempts: int, cause: str | None = None) -> str:
    """The one message of a failed call (``call_failed``), the same in every language: the operation,
    the host of ``base_url``, the machine's ``reason``, the ``attempts`` made and the HTTP library's
    last error (``cause``) when there was one."""
def export_interrupted_message(export_id: str | None = None) -> str:
    """The one message of an interrupted export job: whether the service named the export
    (``export_id``) and what resuming from the checkpoint does."""
def delivery_key(namespace: str, delivery_id: str) -> str:
    """The namespaced dedup key of a delivery (its ``Service-Webhook-Id``, ``delivery_id``): what
    receivers claim; ``InvalidArgumentError`` (``invalid_argument``) for an empty or over-long
    namespace or id."""
def content_key(secret: str, timestamp: str | int, body: _Body) -> str:
    """The content key of signed content under a secret: the timestamp as sent (``timestamp``) and the
    raw ``body``, the key a verification under ``secret`` as its first secret carries. It depends
    only on what the signature covers, so a delivery resent under a new delivery id keeps it.
    ``invalid_secret`` for an unusable secret."""
def idempotency_key(namespace: str, operation_id: str, request_id: str) -> str:
    """The deterministic idempotency key of one logical request (a retry computes the same one), from
    the id the caller gave it (``request_id``); ``InvalidArgumentError`` (``invalid_argument``) for
    an empty or over-long namespace, operation id or request id."""
def handler_error_text(kind: str, message: str) -> str:
    """The ``last_error`` every inbox keeps for a failed handler run, the same in every language:
    ``Kind: message`` (``kind``: the error's class name), the kind alone when the message is empty,
    the message alone when the kind is; cut to 1024 bytes."""
def webhook_retry_schedule() -> list[int]:
    """The service's delays between webhook delivery attempts, in seconds."""
def webhook_next_attempt_at(first_attempt_at: int, attempts_made: int) -> int | None:
    """When the service makes a delivery's next attempt (Unix seconds), from its first attempt
    (``first_attempt_at``) and the attempts made so far, the first included (``attempts_made``),
    each attempt made when it was due: the first attempt's time for 0, None once all eight are made;
    ``InvalidArgumentError`` (``invalid_argument``) for a negative count."""
def webhook_gives_up_at(first_attempt_at: int) -> int:
    """The latest time (Unix seconds) the service gives a delivery up, from its first attempt
    (``first_attempt_at``): the final attempt's due time plus its 10 s limit."""
def missing_scopes(granted: list[str] | tuple[str, ...], operation_id: str) -> list[str]:
    """The scopes the operation ``operation_id`` needs that ``granted`` lacks, in the catalog's order
    (empty when it may be called); ``InvalidArgumentError`` (``invalid_argument``) for an operation
    the catalog does not know."""
def export_state(value: str) -> ExportStateInfo:
    """What an export's state as the server sent it (``value``) means: its canonical name (an unknown
    value kept as sent, up to 200 characters), whether the spec shows it, whether it is an end
    state, and the commands it allows. Never refuses: an unknown state allows only ``get``."""
def validate_export_command(state: str, command: Literal["get", "cancel", "revoke", "download"] | str) -> str:
    """The state expected after ``command`` on an export in ``state`` (``cancel`` gives cancelled,
    ``revoke`` revoked, ``get`` and ``download`` leave it); ``ExportStateError``
    (``invalid_export_transition``) naming the state, the command and the commands allowed, and only
    ``get`` allowed in a state the spec does not show. ``InvalidArgumentError``
    (``invalid_argument``) for a command that is none of ``get``, ``cancel``, ``revoke`` and
    ``download``."""
def export_poll_decision(state: str, attempt: int, *, random: float | None = None, max_polls: int | None = None) -> PollDecision:
    """The next step of a create, poll and download loop after the ``attempt``-th read of an export in
    ``state`` (1 after the first): ``download`` once ready, ``stop`` when cancelled or revoked, and
    ``keep_polling`` with the delay of the default backoff (2, 5, 15, then 30 to 60 s, where
    ``random`` in [0, 1) places it, the host's randomness when left out) in queued and every state
    the spec does not show, until ``max_polls`` reads (100 when left out), where it is ``stop`` with
    a reason naming the state and the budget. ``InvalidArgumentError`` (``invalid_argument``) for an
    attempt below 1, a random value outside [0, 1) or a bound below 1."""
def check_export_download(status: int, headers: _Headers | None = None, body: _Body | None = None, *, now: _Seconds | None = None) -> None:
    """Checks a download response before its body is used (``status``, ``headers``, ``body``; ``now``
    the time of the check, the host's clock when left out): a 2xx other than 206, without
    ``Content-Range``, whose body is as long as its ``Content-Length`` says, is the whole artifact.
    ``ExportDownloadError`` (``partial_content_unsupported``) for a 206, any ``Content-Range``, or a
    body shorter or longer than its ``Content-Length``; ``ApiError`` (``api_error``) for any other
    status (409 not ready, 422, …), parsed; ``InvalidArgumentError`` (``invalid_argument``) for a
    status outside 100 to 599."""
def step_up_satisfies(requirement: Literal["none", "recent", "recent_mfa", "recent_non_recovery"] | str, kind: Literal["mfa", "recovery_code"] | str, at: int, *, max_age_seconds: int, now: _Seconds | None = None) -> bool:
    """Whether a step-up of ``kind`` made at ``at`` satisfies a route's ``requirement`` at ``now`` (the
    host's clock when left out), a step-up counting as recent for ``max_age_seconds`` (the spec does
    not give it, so the caller says). A recovery-code step-up never satisfies ``recent_mfa`` or
    ``recent_non_recovery``; one from the future or older than the age satisfies only ``none``.
    ``InvalidArgumentError`` (``invalid_argument``) for a negative age or an unknown requirement or
    kind."""
def parse_retry_after(value: str | None, now: _Seconds | None = None) -> RetryAfter | None:
    """The wait a ``Retry-After`` value (``value``, as the response sent it) asks for, relative to
    ``now`` (the host's clock when left out): its seconds and its form (delta seconds, or a date: an
    HTTP-date, ISO 8601 accepted too), the whole wait, never shortened (0 for a date in the past);
    None when it is absent or garbage (empty, negative, fractional, an unreadable date)."""
def parse_webhook_event(body: _Body) -> WebhookEvent:
    """A webhook payload (a verified delivery's raw JSON ``body``, such as an inbox entry's) parsed as
    the verifier parses one; checks no signature. ``WebhookVerificationError``
    (``invalid_payload``), naming the member, for a body that is not UTF-8 JSON or lacks a required
    member."""
def detect_sql_dialect(product: str, version: str) -> Literal["postgres", "sqlite"]:
    """The SQL dialect of a database from what its driver reports: its ``product`` name
    (``PostgreSQL``, ``SQLite``) and ``version`` (Python's ``sqlite3.sqlite_version``, JDBC's
    ``databaseProductVersion``); ``InvalidArgumentError`` (``invalid_argument``) for an SQLite older
    than 3.35 (no ``RETURNING``) or another database."""
def failure_reply(failure: Literal["handler_failed", "store_unavailable", "cancelled"] | str) -> ReceiverReply:
    """The status and JSON body to answer when a verified delivery cannot be finished (``failure``):
    500 when the handler failed, 503 when the store could not be reached or the host was cancelled,
    so the service delivers it again."""
def rejection_body(code: str, message: str) -> str:
    """The JSON body answering a delivery that failed verification: the error's ``code`` and
    ``message``."""
def decide_claims(states: Sequence[Literal["new", "in_progress", "done"] | str]) -> ReceiverDecision:
    """What the ``states`` of a delivery's claims mean: the states of the keys claimed so far, in the
    order of ``plan_receipt``'s keys, up to and including the first that is not ``new``. ``process``
    with 200 when every state is ``new`` (or there are none); otherwise ``retry_later`` with 503
    when any is ``in_progress``, else ``acknowledge`` with 200, and in both the positions of the
    ``new`` ones to release. ``InvalidArgumentError`` (``invalid_argument``) for a state the core
    does not know."""
# generated: end
def event_key(namespace: str, event: _EventIdentity) -> str: ...
@final
class DedupWindow:
    """Bounded in-memory dedup window; thread-safe."""

    def __new__(cls, capacity: int, ttl_seconds: int | None = None, *, lease_seconds: int | None = None) -> DedupWindow: ...
    def claim(self, key: str, now: _Seconds | None = None) -> Literal["new", "in_progress", "done"]: ...
    def commit(self, key: str, now: _Seconds | None = None) -> None: ...
    def release(self, key: str, now: _Seconds | None = None) -> bool: ...
    def check_and_insert(self, key: str, now: _Seconds | None = None) -> bool: ...
    def contains(self, key: str, now: _Seconds | None = None) -> bool: ...
    def state(self, key: str, now: _Seconds | None = None) -> Literal["new", "in_progress", "done"]:
        """What is remembered of ``key``, without claiming or recording it: ``done`` once
        committed (for the time-to-live), ``in_progress`` while a claim's lease is live, ``new``
        otherwise."""
    capacity: Final[int]
    def __len__(self) -> int: ...

# ---- retry ------------------------------------------------------------------------------------

@final
class BackoffPolicy:
    """Steps (s) for the first retries, then a uniform band or the last step; jitter none/full/equal; a cap."""

    def __new__(
        cls,
        steps: Sequence[float],
        *,
        band: tuple[float, float] | None = None,
        jitter: Literal["none", "full", "equal"] | None = None,
        cap_seconds: float,
    ) -> BackoffPolicy: ...
    def delay(self, attempt: int, *, random: float | None = None) -> float: ...

def backoff_delay(attempt: int, *, random: float | None = None, policy: BackoffPolicy | None = None) -> float: ...
@final
class RetryAfter:
    seconds: Final[int]
    form: Final[Literal["delta_seconds", "http_date"]]


_RetryClass = Literal[
    "read", "token_exchange", "idempotent_write", "safe_update", "unsafe_create", "submit", "checkout", "addon_action", "upload", "secret_rotation"
]

@final
class RetryDecision:
    action: Final[Literal["retry", "stop", "reconcile", "refresh_token"]]
    delay_seconds: Final[float]
    rule: Final[str]
    reason: Final[str]
    reconcile: Final[Literal["lookup_by_sent_data", "fetch_release_review_state", "check_checkout_state", "read_addon_status", "rotate_again"] | None]

def decide_retry(
    retry_class: _RetryClass | str,
    *,
    attempt: int,
    status: int | None = None,
    headers: _Headers | None = None,
    transport: Literal["timeout", "connect_failed", "connection_lost"] | str | None = None,
    elapsed_seconds: float = 0.0,
    token_refreshed: bool = False,
    idempotency_key_sent: bool = False,
    random: float | None = None,
    now: _Seconds | None = None,
    max_attempts: int | None = None,
    max_elapsed_seconds: float | None = None,
) -> RetryDecision: ...
@final
class RateDecision:
    allowed: Final[bool]
    wait_until: Final[int | None]
    limit: Final[str | None]

@final
class RateBudget:
    """Rolling-window request budgets; thread-safe.

    ``windows`` is a list of ``(name, limit, window_seconds)``: at most ``limit`` requests in any
    rolling ``window_seconds`` (``None``: 60, the enterprise API's minute), e.g.
    ``RateBudget([("client", 600, None)])``. The presets are the enterprise API's limits; the
    reporting API shows none, so its calls wait on 429 and ``Retry-After`` unless you give windows.
    """

    def __new__(cls, windows: Sequence[tuple[str, int, int | None]]) -> RateBudget: ...
    @staticmethod
    def preset(name: Literal["enterprise", "enterprise_ddex", "enterprise_audio_upload", "enterprise_chunk_upload"] | str) -> RateBudget: ...
    def try_acquire(self, now: _Seconds | None = None) -> RateDecision: ...

# ---- catalog, requests, error bodies, tokens ----------------------------------------------------

@final
class QueryParam:
    name: Final[str]
    kind: Final[Literal["uuid", "limit", "key", "cursor", "text", "positive", "date", "sort"]]
    required: Final[bool]

@final
class Operation:
    id: Final[str]
    api: Final[Literal["reports", "enterprise"]]
    surface: Final[Literal["machine", "human", "enterprise"]]
    method: Final[str]
    path: Final[str]
    auth: Final[Literal["none", "basic_client", "bearer", "session", "api_key"]]
    scope: Final[str | None]
    idempotency: Final[Literal["none", "key", "header"]]
    csrf: Final[bool]
    step_up: Final[Literal["none", "recent", "recent_mfa", "recent_non_recovery"]]
    tenant_header: Final[bool]
    user_header: Final[bool]
    body: Final[Literal["none", "optional", "required"]]
    success: Final[list[int]]
    errors: Final[list[int] | None]
    query: Final[list[QueryParam]]
    open_query: Final[bool]
    no_store: Final[bool]
    retry_class: Final[str]

def operations() -> list[Operation]: ...
def operation(id: str) -> Operation: ...
@final
class RequestDescriptor:
    """A request to send with your own HTTP client; ``repr`` hides credentials."""

    operation_id: Final[str]
    method: Final[str]
    path: Final[str]
    query: Final[str]
    path_and_query: Final[str]
    headers: Final[list[tuple[str, str]]]
    body: Final[bytes | None]
    idempotency_key: Final[str | None]
    idempotency_key_sent: Final[bool]
    def url(self, base: str) -> str: ...

_QueryValue = str | int | bool | None

def build_request(
    operation_id: str,
    *,
    path: Mapping[str, str | int] | None = None,
    query: Mapping[str, _QueryValue] | Iterable[tuple[str, _QueryValue]] | None = None,
    body: Mapping[str, Any] | list[Any] | _Body | None = None,
    token: Token | EnterpriseToken | BearerToken | None = None,
    tenant_id: str | None = None,
    user_id: str | None = None,
    idempotency_key: str | None = None,
    idempotency_header: str | None = None,
    request_id: str | None = None,
    key_namespace: str | None = None,
    key_random: bytes | None = None,
) -> RequestDescriptor: ...
def parse_api_error(
    api: Literal["reports", "enterprise"] | str,
    status: int,
    headers: _Headers | None = None,
    body: _Body | None = None,
    *,
    operation_id: str | None = None,
    now: _Seconds | None = None,
) -> ApiError: ...
@final
class Token:
    """A reporting access token; ``repr`` hides it."""

    access_token: Final[str]
    token_type: Final[str]
    expires_in: Final[int]
    expires_at: Final[int]
    refresh_at: Final[int]
    scopes: Final[list[str] | None]
    missing_scopes: Final[list[str] | None]
    warnings: Final[list[str]]
    tenant_id: Final[str]

@final
class EnterpriseToken:
    token: Final[str]
    expires_at: Final[int | None]
    refresh_at: Final[int | None]

@final
class BearerToken:
    """A bearer token and the API that issued it, for a value restored from a cache; ``repr`` hides it."""

    @staticmethod
    def reports(value: str, tenant_id: str | None) -> BearerToken: ...
    @staticmethod
    def enterprise(value: str) -> BearerToken: ...
    @property
    def api(self) -> Literal["reports", "enterprise"]: ...
    @property
    def value(self) -> str: ...
    @property
    def tenant_id(self) -> str | None: ...

def build_token_request(client_id: str, client_secret: str, tenant_id: str, scopes: Sequence[str] | None = None) -> RequestDescriptor: ...
def parse_token_response(
    status: int, headers: _Headers | None, body: _Body | None, *, tenant_id: str, requested_scopes: Sequence[str] | None = None,
    now: _Seconds | None = None
) -> Token: ...
@final
class ApiSession:
    """A reporting API session: granted scopes and when to refresh."""

    scopes: Final[list[str]]
    expires_at: Final[int]
    refresh_at: Final[int]

def parse_api_session(status: int, headers: _Headers | None, body: _Body | None, *, now: _Seconds | None = None) -> ApiSession: ...
def build_enterprise_token_request(api_key: str, api_secret: str) -> RequestDescriptor: ...
def parse_enterprise_token_response(status: int, headers: _Headers | None, body: _Body | None, *, now: _Seconds | None = None) -> EnterpriseToken: ...
@final
class ResponseNotices:
    deprecated: Final[bool]
    deprecated_at: Final[int | None]
    sunset_at: Final[int | None]
    link: Final[str | None]
    policy_issues: Final[list[Literal["missing_sunset", "sunset_too_soon", "no_replacement"]]]

def response_notices(headers: _Headers) -> ResponseNotices: ...

# ---- exports ---------------------------------------------------------------------------------------

@final
class ExportStateInfo:
    name: Final[str]
    known: Final[bool]
    terminal: Final[bool]
    allowed_commands: Final[list[str]]

@final
class PollDecision:
    action: Final[Literal["keep_polling", "download", "stop"]]
    delay_seconds: Final[float]
    reason: Final[str]

def validate_export_list_query(
    *, limit: int | str | None = None, cursor: str | None = None, export_class: str | None = None, status: str | None = None, format: str | None = None
) -> str: ...

# ---- receivers -------------------------------------------------------------------------------------

STATUS_HANDLER_FAILED: int
STATUS_STORE_UNAVAILABLE: int
DEFAULT_STORE_CAPACITY: int

@final
class ReceiverDecision:
    """What a receiver does next: ``step`` (process, acknowledge, retry_later), the ``status`` to
    answer, the ``keys`` to claim (plan_receipt) and the positions of claims to ``release``
    (decide_claims)."""

    step: Final[Literal["process", "acknowledge", "retry_later"]]
    status: Final[int]
    keys: Final[list[str]]
    release: Final[list[int]]
    body: Final[str]
    commit_attempts: Final[int]
    commit_retry_delay_ms: Final[int]
    reason: Final[str]

@final
class ReceiverReply:
    """A status and the JSON ``body`` to answer with it."""

    status: Final[int]
    body: Final[str]

def plan_receipt(namespace: str, delivery: VerifiedWebhook, *, claim_content_key: bool = False) -> ReceiverDecision:
    """What to do with a verified delivery: acknowledge a test event, or the keys to claim."""


@final
class RedisDedupProtocol:
    """The dedup contract on Redis as commands and the meaning of their replies."""

    def __new__(cls, *, prefix: str | None = None, ttl_seconds: int | None = None, lease_seconds: int | None = None) -> RedisDedupProtocol: ...
    @staticmethod
    def new_token() -> str: ...
    @staticmethod
    def claim_reply(reply: str | None) -> Literal["new"] | None: ...
    @staticmethod
    def state_reply(reply: str | None) -> Literal["in_progress", "done"]: ...
    @staticmethod
    def lookup_reply(reply: str | None) -> Literal["new", "in_progress", "done"]:
        """What a lookup's reply means: ``new`` for nil (never seen, or expired)."""
    @staticmethod
    def guarded_reply(reply: str | None) -> bool:
        """The guarded commit's or release's reply: True for 1, False otherwise."""
    # generated by scripts/gen_surface.py from surface/functions.toml: begin (RedisDedupProtocol)
    def claim_command(self, key: str, token: str) -> list[str]:
        """The claim of ``key`` with ``token``: ``SET <prefix><key> claim:<token> NX PX <lease ms>``.
        Its reply goes to ``claim_reply``. ``InvalidArgumentError`` (``invalid_argument``) for a key
        or token the store cannot hold."""
    def state_command(self, key: str) -> list[str]:
        """Reads a taken key's state: ``GET <prefix><key>``. Its reply goes to ``state_reply``.
        ``InvalidArgumentError`` (``invalid_argument``) for a key the store cannot hold."""
    def lookup_command(self, key: str) -> list[str]:
        """The read-only lookup of ``key``'s state (delivery recovery; never a claim): ``GET
        <prefix><key>``. Its reply goes to ``lookup_reply``. ``InvalidArgumentError``
        (``invalid_argument``) for a key the store cannot hold."""
    def commit_command(self, key: str, token: str) -> list[str]:
        """The guarded commit of ``key`` by the claim holding ``token`` (``EVAL``): its reply is 1 when
        done. Read it with ``guarded_reply``. ``InvalidArgumentError`` (``invalid_argument``) for a
        key or token the store cannot hold."""
    def release_command(self, key: str, token: str) -> list[str]:
        """The guarded release of ``key`` by the claim holding ``token`` (``EVAL``): its reply is 1
        when released. Read it with ``guarded_reply``. ``InvalidArgumentError``
        (``invalid_argument``) for a key or token the store cannot hold."""
    # generated: end (RedisDedupProtocol)

@final
class SqlStatement:
    """One statement: ``sql`` with the driver's placeholders and its ``args``, in order."""

    @property
    def sql(self) -> str: ...
    @property
    def args(self) -> list[str]: ...

@final
class SqlDedupProtocol:
    """The dedup contract in your SQL database, marked done inside the handler's transaction."""

    def __new__(cls, dialect: Literal["postgres", "sqlite"], *, param_style: Literal["qmark", "dollar", "format"],
                table: str | None = None, ttl_seconds: int | None = None,
                lease_seconds: int | None = None) -> SqlDedupProtocol: ...
    @staticmethod
    def new_token() -> str: ...
    @property
    def table(self) -> str: ...
    @staticmethod
    def claim_reply(rows: int) -> Literal["new"] | None: ...
    @staticmethod
    def state_reply(state: str | None) -> Literal["in_progress", "done"]: ...
    @staticmethod
    def lookup_reply(state: str | None) -> Literal["new", "in_progress", "done"]:
        """What a lookup returned: ``new`` for no row (never seen, or expired)."""
    @staticmethod
    def guarded_reply(rows: int) -> bool: ...
    # generated by scripts/gen_surface.py from surface/functions.toml: begin (SqlDedupProtocol)
    def schema(self) -> list[str]:
        """The statements creating the table and its index when missing (idempotent)."""
    def claim(self, key: str, token: str, now: int) -> SqlStatement:
        """The claim of ``key`` with ``token`` (autocommit) at ``now`` (Unix seconds); count the rows
        it returns. ``InvalidArgumentError`` (``invalid_argument``) for a key or token the store
        cannot hold."""
    def state(self, key: str) -> SqlStatement:
        """Reads a taken key's state (one column, one row or none). ``InvalidArgumentError``
        (``invalid_argument``) for a key the store cannot hold."""
    def lookup(self, key: str, now: int) -> SqlStatement:
        """The read-only lookup of ``key``'s state at ``now`` (Unix seconds; delivery recovery,
        autocommit, never a claim): a row only while the key is live. Read it with ``lookup_reply``.
        ``InvalidArgumentError`` (``invalid_argument``) for a key the store cannot hold."""
    def begin(self) -> str:
        """The statement opening the handler's transaction (``BEGIN``; ``BEGIN IMMEDIATE`` on SQLite)."""
    def commit(self) -> str:
        """The statement committing the handler's transaction (``COMMIT``)."""
    def rollback(self) -> str:
        """The statement rolling the handler's transaction back (``ROLLBACK``)."""
    def mark_done(self, key: str, token: str, now: int) -> SqlStatement:
        """Marks ``key`` done with its claim's ``token`` at ``now`` inside the handler's transaction;
        count the changed rows. ``InvalidArgumentError`` (``invalid_argument``) for a key or token
        the store cannot hold."""
    def release(self, key: str, token: str) -> SqlStatement:
        """Gives up this worker's claim of ``key`` with ``token`` (autocommit, after a rollback).
        ``InvalidArgumentError`` (``invalid_argument``) for a key or token the store cannot hold."""
    def purge(self, now: int) -> SqlStatement:
        """Deletes the rows expired at ``now``; count the changed rows."""
    # generated: end (SqlDedupProtocol)

@final
class SqlInboxProtocol:
    """The inbox in your SQL database: the statements of its table (enqueue, claim, begin, mark
    done inside the handler's transaction, commit, rollback, settle, poison listing, retry,
    lookup, counts, purge) and what their results mean."""

    DEFAULT_TABLE: ClassVar[str]
    DEFAULT_MAX_ATTEMPTS: ClassVar[int]
    MAX_BODY_BYTES: ClassVar[int]
    MAX_ERROR_BYTES: ClassVar[int]
    MAX_POISON_LISTED: ClassVar[int]

    def __new__(cls, dialect: Literal["postgres", "sqlite"], *, param_style: Literal["qmark", "dollar", "format"],
                table: str | None = None, ttl_seconds: int | None = None,
                lease_seconds: int | None = None) -> SqlInboxProtocol: ...
    @property
    def table(self) -> str: ...
    @property
    def lease_seconds(self) -> int: ...
    @staticmethod
    def enqueue_reply(rows: int) -> bool:
        """True for a new entry, False for one already in the inbox."""
    def mark_done(self, key: str, attempts: int, now: int) -> SqlStatement:
        """The mark, inside the handler's transaction; read its count with ``guarded_reply``."""
    @staticmethod
    def guarded_reply(rows: int) -> bool: ...
    def settle(self, key: str, attempts: int, poison: bool, retry_at: int, error: str) -> SqlStatement: ...
    def poisoned(self, limit: int) -> SqlStatement: ...
    @staticmethod
    def lookup_reply(state: str | None) -> Literal["new", "in_progress", "done"]: ...
    # generated by scripts/gen_surface.py from surface/functions.toml: begin (SqlInboxProtocol)
    def schema(self) -> list[str]:
        """The statements creating the table and its index when missing (idempotent)."""
    def enqueue(self, key: str, delivery_id: str, event: str, body: str, now: int) -> SqlStatement:
        """The insert of a verified delivery at ``now`` (Unix seconds; autocommit): ``key`` its
        delivery key, ``delivery_id`` its ``Service-Webhook-Id``, ``event`` its event name, ``body``
        its raw JSON body as text. Read its count of inserted rows with ``enqueue_reply``.
        ``InvalidArgumentError`` (``invalid_argument``) for a bad key, an empty delivery id or a
        body over 256 KiB (the spec's payload limit)."""
    def claim(self, now: int) -> SqlStatement:
        """The claim of the oldest due entry at ``now`` (autocommit): it counts an attempt and holds
        the entry for the lease; one row of five columns (``inbox_key``, ``delivery_id``, ``event``,
        ``body``, ``attempts``: report it to the worker's ``claimed``) or none."""
    def begin(self) -> str:
        """The statement opening the handler's transaction (``BEGIN``; ``BEGIN IMMEDIATE`` on SQLite)."""
    def commit(self) -> str:
        """The statement committing the handler's transaction (``COMMIT``)."""
    def rollback(self) -> str:
        """The statement rolling the handler's transaction back (``ROLLBACK``)."""
    def retry(self, key: str, now: int) -> SqlStatement:
        """The statement putting a poison entry back to pending at ``now`` with no attempts counted:
        one row changed means retried, none means ``key`` is not a poison entry.
        ``InvalidArgumentError`` (``invalid_argument``) for a key the store cannot hold."""
    def lookup(self, key: str) -> SqlStatement:
        """The read-only lookup of ``key`` (delivery recovery): one column, ``state``, or no row. Read
        it with ``lookup_reply``. ``InvalidArgumentError`` (``invalid_argument``) for a key the
        store cannot hold."""
    def counts(self) -> SqlStatement:
        """The count of entries by state: rows of two columns, ``state`` and its count."""
    def purge(self, now: int) -> SqlStatement:
        """The statement deleting done entries past their TTL at ``now``."""
    # generated: end (SqlInboxProtocol)

DEFAULT_POISON_LISTED: int
"""Poison entries an inbox's ``poisoned()`` lists when no limit is given (the core's)."""


@final
class InboxPoisonEntry:
    """A poison entry as the Redis inbox's listing gives it (``RedisInboxProtocol.poisoned_reply``):
    its delivery ``key``, ``delivery_id``, ``event`` name, handler ``attempts`` started, the
    ``last_error`` and when it arrived (``received_at``, Unix seconds)."""

    key: Final[str]
    delivery_id: Final[str]
    event: Final[str]
    attempts: Final[int]
    last_error: Final[str | None]
    received_at: Final[int]

@final
class InboxCounts:
    """An inbox's entries by state (``RedisInboxProtocol.counts_reply``)."""

    pending: Final[int]
    done: Final[int]
    poison: Final[int]

@final
class RedisInboxProtocol:
    """The inbox on a Redis stream: its commands (lists of str, sent as is) and what their replies
    mean. Every reply is one nil, integer or bulk string (arrays as JSON text): give it as ``str``
    (integers as decimal text, bytes decoded) or None. Effects are at least once (no transaction
    shared with the handler); Redis 6.2 or later, with persistence."""

    DEFAULT_PREFIX: ClassVar[str]
    DEFAULT_MAX_ATTEMPTS: ClassVar[int]
    MAX_BODY_BYTES: ClassVar[int]
    MAX_ERROR_BYTES: ClassVar[int]
    MAX_POISON_LISTED: ClassVar[int]

    def __new__(cls, *, prefix: str | None = None, ttl_seconds: int | None = None,
                lease_seconds: int | None = None) -> RedisInboxProtocol: ...
    @property
    def prefix(self) -> str: ...
    @property
    def lease_seconds(self) -> int: ...
    def enqueue_command(self, key: str, delivery_id: str, event: str, body: str, now: int) -> list[str]:
        """The command adding a verified delivery; read its reply with ``added_reply``."""
    @staticmethod
    def added_reply(reply: str | None) -> bool:
        """Enqueue, mark, settle, retry: True for 1, False otherwise."""
    def claim_command(self, now: int) -> list[str]: ...
    @staticmethod
    def claim_reply(reply: str | None) -> InboxEntry | None:
        """The claimed entry, or None for nil (nothing due)."""
    def mark_done_command(self, key: str, attempts: int, now: int) -> list[str]: ...
    def settle_command(self, key: str, attempts: int, poison: bool, retry_at: int, error: str) -> list[str]: ...
    def poisoned_command(self, limit: int) -> list[str]: ...
    @staticmethod
    def poisoned_reply(reply: str | None) -> list[InboxPoisonEntry]: ...
    def retry_command(self, key: str) -> list[str]: ...
    def lookup_command(self, key: str) -> list[str]: ...
    @staticmethod
    def lookup_reply(reply: str | None) -> Literal["new", "in_progress", "done"]: ...
    def counts_command(self, now: int) -> list[str]: ...
    @staticmethod
    def counts_reply(reply: str | None) -> InboxCounts: ...
    def purge_command(self, now: int) -> list[str]: ...

# ---- protocol machines --------------------------------------------------------------------------

_Transport = Literal["timeout", "connect_failed", "connection_lost"]
# What became of a ``Send`` or a ``Reserve`` (``Call.report``, ``ExportJob.report``): a response
# read whole, one streamed to your sink (its length), no response (after a ``Reserve``: Redis
# could not be reached), or the fleet's reply to a ``Reserve``.
_StepOutcome = (tuple[int, _Headers, _Body] | tuple[int, _Headers, int]
               | tuple[Literal["no_response"], _Transport] | tuple[Literal["reply"], str | None])
# What became of a receipt's step (WebhookReceipt.report).
_ReceiptOutcome = (Literal["done", "failed", "cancelled"]
                   | tuple[Literal["claimed"], Literal["new", "in_progress", "done"]]
                   | tuple[Literal["marked", "enqueued"], bool])
# What became of an inbox worker's step (InboxWorker.report): a claim's row of five columns (or an
# InboxEntry, None when nothing is due), a mark's answer, a failure's message.
_InboxOutcome = (Literal["done"] | tuple[Literal["claimed"], InboxEntry | tuple[str, str, str, str, int] | None]
                 | tuple[Literal["marked"], bool] | tuple[Literal["failed"], str])

@disjoint_base
class ReceiptStep:
    """What a host does next for a webhook delivery (``WebhookReceipt.next()``); match on it."""

    @final
    class Claim(ReceiptStep):
        """Claim ``key`` in the store, then ``claimed(state)`` or ``store_failed()``."""

        __match_args__ = ("key",)
        def __new__(cls, key: str) -> ReceiptStep.Claim: ...
        @property
        def key(self) -> str: ...

    @final
    class Release(ReceiptStep):
        """Release ``key``, then ``released()`` (also after a failed release)."""

        __match_args__ = ("key",)
        def __new__(cls, key: str) -> ReceiptStep.Release: ...
        @property
        def key(self) -> str: ...

    @final
    class RunHandler(ReceiptStep):
        """Run the handler with ``receipt.delivery``, then ``handler_succeeded()`` or ``handler_failed()``."""

        __match_args__ = ()
        def __new__(cls) -> ReceiptStep.RunHandler: ...

    @final
    class Commit(ReceiptStep):
        """Commit ``key``, then ``committed()`` or ``store_failed()``."""

        __match_args__ = ("key", "attempt")
        def __new__(cls, key: str, attempt: int) -> ReceiptStep.Commit: ...
        @property
        def key(self) -> str: ...
        @property
        def attempt(self) -> int: ...

    @final
    class Begin(ReceiptStep):
        """(Transactional.) Open the transaction, then ``began()`` or ``store_failed()``."""

        __match_args__ = ()
        def __new__(cls) -> ReceiptStep.Begin: ...

    @final
    class CommitTransaction(ReceiptStep):
        """(Transactional.) Commit, then ``transaction_committed()`` or ``store_failed()``."""

        __match_args__ = ()
        def __new__(cls) -> ReceiptStep.CommitTransaction: ...

    @final
    class Rollback(ReceiptStep):
        """(Transactional.) Roll back, then ``rolled_back()`` (also after a failed rollback)."""

        __match_args__ = ()
        def __new__(cls) -> ReceiptStep.Rollback: ...

    @final
    class Wait(ReceiptStep):
        """Pause ``seconds``, then ``waited()``."""

        __match_args__ = ("seconds",)
        def __new__(cls, seconds: float) -> ReceiptStep.Wait: ...
        @property
        def seconds(self) -> float: ...

    @final
    class Enqueue(ReceiptStep):
        """(Inbox.) Persist the verified delivery under ``key``, then ``enqueued(new)`` or
        ``store_failed()``."""

        __match_args__ = ("key",)
        def __new__(cls, key: str) -> ReceiptStep.Enqueue: ...
        @property
        def key(self) -> str: ...

    @final
    class Reply(ReceiptStep):
        """Answer ``status`` with the JSON ``body``: the delivery is finished."""

        __match_args__ = ("status", "body")
        def __new__(cls, status: int, body: str) -> ReceiptStep.Reply: ...
        @property
        def status(self) -> int: ...
        @property
        def body(self) -> str: ...

@final
class WebhookReceipt:
    """One webhook delivery as a machine (``WebhookVerifier.receipt``); thread-safe."""

    def next(self) -> ReceiptStep: ...
    @property
    def delivery(self) -> VerifiedWebhook | None: ...
    @property
    def finished(self) -> bool: ...
    @property
    def outcome(self) -> str | None:
        """Once replied, what happened (``processed``, ``duplicate``, ``in_progress``, …)."""
    # generated by scripts/gen_surface.py from surface/functions.toml: begin (WebhookReceipt)
    def report(self, outcome: _ReceiptOutcome) -> ReceiptStep:
        """What became of the pending step, the receipt's one input: ``"done"``, ``"failed"`` or
        ``"cancelled"``, or ``("claimed", state)``, ``("marked", changed)`` or ``("enqueued",
        new)``. ``done``: the release, begin, transaction commit, rollback, wait, handler or (plain)
        commit was performed; ``claimed``: the claim's state; ``marked``: whether the transactional
        commit's mark changed a row; ``enqueued``: whether the delivery was new to the inbox;
        ``failed``: the step failed, which the pending step gives its meaning (a failed release or
        rollback counts as done, a failed handler is the handler's, any other failure the store's);
        ``cancelled``: the host was cancelled during the step (see ``cancelled``). Returns the next
        step. ``InvalidArgumentError`` (``invalid_argument``) for an outcome the pending step cannot
        have (the receipt unchanged), or a name or state the core does not know. A shape none of
        those is a ``TypeError``."""
    def claimed(self, state: Literal["new", "in_progress", "done"] | str) -> ReceiptStep:
        """The state the store gave the key of the pending claim: ``new``, ``in_progress`` or ``done``.
        Returns the next step. ``InvalidArgumentError`` (``invalid_argument``) for another state.
        Deprecated (kept for one release): use ``report``, the machine's one input."""
    def store_failed(self) -> ReceiptStep:
        """The store could not be reached for the pending claim, commit, begin, transaction commit or
        enqueue. Returns the next step. Deprecated (kept for one release): use ``report``, the
        machine's one input."""
    def released(self) -> ReceiptStep:
        """The pending release is done (or failed: the claim's lease runs out). Returns the next step.
        Deprecated (kept for one release): use ``report``, the machine's one input."""
    def handler_succeeded(self) -> ReceiptStep:
        """The handler stored its effect. Returns the next step. Deprecated (kept for one release): use
        ``report``, the machine's one input."""
    def handler_failed(self) -> ReceiptStep:
        """The handler raised. Returns the next step. Deprecated (kept for one release): use
        ``report``, the machine's one input."""
    def committed(self) -> ReceiptStep:
        """The pending commit is done. Returns the next step. Deprecated (kept for one release): use
        ``report``, the machine's one input."""
    def waited(self) -> ReceiptStep:
        """The pending wait is over. Returns the next step. Deprecated (kept for one release): use
        ``report``, the machine's one input."""
    def claim_lost(self) -> ReceiptStep:
        """(Transactional.) The pending commit (the mark inside the transaction) changed no row: the
        claim's lease ran out and another worker took the key. Returns the next step, a rollback.
        Deprecated (kept for one release): use ``report``, the machine's one input."""
    def began(self) -> ReceiptStep:
        """(Transactional.) The transaction is open. Returns the next step. Deprecated (kept for one
        release): use ``report``, the machine's one input."""
    def transaction_committed(self) -> ReceiptStep:
        """(Transactional.) The transaction committed. Returns the next step, the reply. Deprecated
        (kept for one release): use ``report``, the machine's one input."""
    def rolled_back(self) -> ReceiptStep:
        """(Transactional.) The pending rollback is done (or failed). Returns the next step. Deprecated
        (kept for one release): use ``report``, the machine's one input."""
    def cancelled(self) -> ReceiptStep:
        """The host was cancelled while the pending step was in flight (a cancelled task, an
        interrupt): report this instead of its outcome. Returns the next step: only rollbacks and
        releases follow, then the 503 reply (outcome ``cancelled``). During a pending rollback or
        release it counts as that step done (a cancelled one is a failed one) and the reply stays
        what it was; once replied, nothing changes. Deprecated (kept for one release): use
        ``report``, the machine's one input."""
    def enqueued(self, new: bool) -> ReceiptStep:
        """(Inbox.) The pending enqueue is done: ``new`` True when the delivery was added, False when
        it was in the inbox already. Returns the next step, the reply: 200 ``{"result":"queued"}``
        or ``{"result":"duplicate"}`` (outcome ``queued`` or ``duplicate``). Deprecated (kept for
        one release): use ``report``, the machine's one input."""
    # generated: end (WebhookReceipt)

@disjoint_base
class CallStep:
    """What a host does next for a ``Call`` or an ``ExportJob``; match on it."""

    def exception(self, operation_id: str, base_url: str, cause: str | None = None) -> RoyaltyKitError | None:
        """The exception to raise for a ``Fail`` or ``Reconcile`` step, from the core's error table:
        the error a failure carries (an ``ApiError``, …), else ``CallFailedError`` (its message
        names ``operation_id``, the host of ``base_url``, the reason, the attempts and ``cause``,
        the HTTP library's last error in words), or ``ReconcileRequired``. None for other steps."""

    @final
    class Send(CallStep):
        """Send ``request``, then ``response(...)`` or ``transport_failure(...)``."""

        __match_args__ = ("request",)
        def __new__(cls, request: RequestDescriptor) -> CallStep.Send: ...
        @property
        def request(self) -> RequestDescriptor: ...

    @final
    class Wait(CallStep):
        """Ask again after ``seconds``."""

        __match_args__ = ("seconds",)
        def __new__(cls, seconds: float) -> CallStep.Wait: ...
        @property
        def seconds(self) -> float: ...

    @final
    class RefreshToken(CallStep):
        """Obtain a token, then ``token(...)`` (on a ``Session``: ``session.store_token(...)``)."""

        __match_args__ = ("reason",)
        def __new__(cls, reason: str) -> CallStep.RefreshToken: ...
        @property
        def reason(self) -> str: ...

    @final
    class Reserve(CallStep):
        """(A fleet's session.) Send ``command`` to Redis as it is, then report its reply to
        ``reserved`` (or ``reserve_failed``), and ask again."""

        __match_args__ = ("command",)
        def __new__(cls, command: list[str]) -> CallStep.Reserve: ...
        @property
        def command(self) -> list[str]: ...

    @final
    class AwaitToken(CallStep):
        """Another call of the session obtains the token: wait until ``session.version``
        changes or ``seconds`` pass, then ask again."""

        __match_args__ = ("seconds",)
        def __new__(cls, seconds: float) -> CallStep.AwaitToken: ...
        @property
        def seconds(self) -> float: ...

    @final
    class Reconcile(CallStep):
        """The request may have been applied: check its effect as ``reconcile`` says, among
        ``candidates`` (an export job's: the exports that may be its own)."""

        __match_args__ = ("reconcile", "reason", "candidates", "stage")
        def exception(self, operation_id: str, base_url: str, cause: str | None = None) -> RoyaltyKitError: ...
        def __new__(cls, reconcile: str, reason: str, candidates: list[str], stage: str | None) -> CallStep.Reconcile: ...
        @property
        def reconcile(self) -> Literal["lookup_by_sent_data", "fetch_release_review_state", "check_checkout_state", "read_addon_status", "rotate_again"]: ...
        @property
        def reason(self) -> str: ...
        @property
        def candidates(self) -> list[str]: ...
        @property
        def stage(self) -> str | None: ...

    @final
    class Done(CallStep):
        """The 2xx response; for an export job, the export's id and its complete artifact."""

        __match_args__ = ("status", "headers", "body", "export_id", "json")
        def __new__(cls, status: int, headers: list[tuple[str, str]], body: bytes, export_id: str | None, json: bool) -> CallStep.Done: ...
        @property
        def status(self) -> int: ...
        @property
        def headers(self) -> list[tuple[str, str]]: ...
        @property
        def body(self) -> bytes: ...
        @property
        def export_id(self) -> str | None: ...
        @property
        def json(self) -> bool:
            """Whether ``body`` is JSON by its ``Content-Type`` (parse it); else bytes."""

    @final
    class Fail(CallStep):
        """Stopped: ``rule`` and ``reason`` say why; ``error`` is the exception to raise."""

        __match_args__ = ("rule", "reason", "status", "transport", "retry_after_seconds", "error", "stage", "export_id",
                          "attempts")
        def exception(self, operation_id: str, base_url: str, cause: str | None = None) -> RoyaltyKitError: ...
        def __new__(
            cls, rule: str, reason: str, status: int | None, transport: str | None, retry_after_seconds: float | None,
            error: Any | None, stage: str | None, export_id: str | None, attempts: int
        ) -> CallStep.Fail: ...
        @property
        def rule(self) -> str: ...
        @property
        def reason(self) -> str: ...
        @property
        def status(self) -> int | None: ...
        @property
        def transport(self) -> _Transport | None: ...
        @property
        def retry_after_seconds(self) -> float | None: ...
        @property
        def error(self) -> Any | None: ...
        @property
        def stage(self) -> Literal["list", "create", "reconcile", "poll", "download"] | None: ...
        @property
        def export_id(self) -> str | None: ...
        @property
        def attempts(self) -> int: ...

@final
class Call:
    """One API operation with retries, Retry-After, token refresh, idempotency key and rate budget; thread-safe."""

    def __new__(
        cls,
        operation_id: str,
        *,
        path: Mapping[str, str | int] | Iterable[tuple[str, str]] | None = None,
        query: Mapping[str, _QueryValue] | Iterable[tuple[str, _QueryValue]] | None = None,
        body: Mapping[str, Any] | list[Any] | _Body | None = None,
        token: Token | EnterpriseToken | BearerToken | None = None,
        tenant_id: str | None = None,
        user_id: str | None = None,
        idempotency_key: str | None = None,
        idempotency_header: str | None = None,
        request_id: str | None = None,
        key_namespace: str | None = None,
        max_attempts: int | None = None,
        max_elapsed_seconds: float | None = None,
        seed: int | None = None,
    ) -> Call: ...
    @staticmethod
    def exchange(
        request: RequestDescriptor, *, max_attempts: int | None = None, max_elapsed_seconds: float | None = None, seed: int | None = None
    ) -> Call: ...
    def next(self, now: float | None = None, budget: RateBudget | None = None, *, session: Session | None = None) -> CallStep: ...
    def advance(self, now: float, *, session: Session, min_level: Literal["debug", "info", "warning"] | None = None
                ) -> tuple[CallStep, list[dict[str, Any]]]:
        """``next(now, session=session)`` and ``take_events(min_level)`` in one call."""
    def respond(self, status: int, headers: _Headers, body: _Body, now: float, *, session: Session,
                min_level: Literal["debug", "info", "warning"] | None = None) -> tuple[CallStep, list[dict[str, Any]]]:
        """``response(status, headers, body, now)`` then ``advance(now, session=session, min_level=min_level)``."""
    def report(self, outcome: _StepOutcome, now: float | None = None) -> None:
        """What became of the ``Send`` or ``Reserve`` performed: the one input after them."""
    def response(self, status: int, headers: _Headers, body: _Body, now: float | None = None) -> None: ...
    def streams(self, status: int) -> bool:
        """Whether a response with ``status`` is streamed to your sink: only a 2xx to a download."""
    def progress(self, received: int, total: int | None = None) -> None:
        """The download's body is arriving: a ``progress`` event at each tenth of it and when whole."""
    def streamed_response(self, status: int, headers: _Headers, length: int, now: float | None = None) -> None:
        """A download body you streamed to your sink, by its length; ``Done`` then has no body."""
    def transport_failure(self, failure: _Transport | str, now: float | None = None) -> None: ...
    def reserved(self, reply: str | None, now: float | None = None) -> None:
        """(Fleet.) The reply of the pending ``Reserve`` as text (None for nil)."""
    def reserve_failed(self, now: float | None = None) -> None:
        """(Fleet.) Redis could not be reached for the pending ``Reserve``: wait a second, reserve again."""
    def token(self, token: Token | EnterpriseToken | BearerToken, refresh_at: float | None = None) -> None: ...
    @property
    def idempotency_key(self) -> str | None: ...
    def save(self) -> str: ...
    def take_events(self, min_level: Literal["debug", "info", "warning"] | None = None) -> list[dict[str, Any]]:
        """What the call did since the events were last taken, oldest first (the core's
        ``MachineEvent`` as dicts); with ``min_level``, only those at that level or above (the
        others are dropped)."""
    @staticmethod
    def resume(saved: str) -> Call: ...

@final
class Session:
    """What the calls of one API client share: the token, one token exchange at a time, the
    rate budget (a copy of ``budget`` is kept); thread-safe."""

    def __new__(cls, budget: RateBudget | None = None) -> Session: ...
    def store_token(self, token: Token | EnterpriseToken | BearerToken, refresh_at: float | None = None) -> None: ...
    def exchange_failed(self, reason: str) -> None: ...
    def abandon_exchange(self) -> None: ...
    @property
    def version(self) -> int: ...
    @property
    def exchanges(self) -> int: ...
    @property
    def exchanging(self) -> bool: ...
    @property
    def has_token(self) -> bool: ...
    @property
    def fleet(self) -> Fleet | None:
        """The fleet the session shares its token and budget with (``Fleet.session``), else None."""

DEFAULT_FLEET_PREFIX: str
MAX_FLEET_PREFIX_BYTES: int
FLEET_POLL_SECONDS: float
RESERVE_SCRIPT: str
PUBLISH_SCRIPT: str
UNLOCK_SCRIPT: str

@final
class Fleet:
    """Where one API client's fleet keeps its token and rate budget in Redis (the key ``prefix``);
    ``session(budget)`` is a session whose token and budget are the fleet's. Immutable."""

    def __new__(cls, prefix: str | None = None) -> Fleet: ...
    @property
    def prefix(self) -> str: ...
    def session(self, budget: RateBudget | None = None) -> Session: ...
    def __eq__(self, value: object, /) -> bool: ...

@disjoint_base
class FleetTokenStep:
    """What a host does next for a ``FleetToken``; match on it."""

    @final
    class Command(FleetTokenStep):
        """Send ``command`` to Redis as it is (never log it: the publish carries the token), then
        ``replied`` with its reply as text, or ``redis_failed``."""

        __match_args__ = ("command",)
        def __new__(cls, command: list[str]) -> FleetTokenStep.Command: ...
        @property
        def command(self) -> list[str]: ...

    @final
    class Exchange(FleetTokenStep):
        """Run the token exchange, then ``exchanged`` or ``exchange_failed``."""

        __match_args__ = ()
        def __new__(cls) -> FleetTokenStep.Exchange: ...

    @final
    class Wait(FleetTokenStep):
        """Another process exchanges: wait ``seconds``, then ``waited``."""

        __match_args__ = ("seconds",)
        def __new__(cls, seconds: float) -> FleetTokenStep.Wait: ...
        @property
        def seconds(self) -> float: ...

    @final
    class Done(FleetTokenStep):
        """The session holds the fleet's token: wake the calls waiting on it."""

        __match_args__ = ()
        def __new__(cls) -> FleetTokenStep.Done: ...

    @final
    class Failed(FleetTokenStep):
        """The exchange failed (the session's waiting calls fail): wake them."""

        __match_args__ = ("reason",)
        def __new__(cls, reason: str) -> FleetTokenStep.Failed: ...
        @property
        def reason(self) -> str: ...

@final
class FleetToken:
    """One token refresh of a fleet's session, as a machine; thread-safe."""

    def __new__(
        cls, session: Session, api: Literal["enterprise", "reports"] | str, *, tenant_id: str | None = None,
        seed: int | None = None, now: float | None = None
    ) -> FleetToken: ...
    def next(self) -> FleetTokenStep: ...
    def replied(self, reply: str | None, session: Session, now: float | None = None) -> None: ...
    def redis_failed(self, session: Session) -> None: ...
    def waited(self) -> None: ...
    def exchanged(self, token: Token | EnterpriseToken | BearerToken, refresh_at: float | None = None,
                  now: float | None = None) -> None: ...
    def exchange_failed(self, reason: str) -> None: ...
    def abandon_command(self) -> list[str] | None:
        """The command releasing the fleet's lock while this refresh holds it (cancelled mid-exchange)."""
    def elapsed(self, now: float | None = None) -> float: ...

@final
class ExportJob:
    """A reporting export (create, poll, download) as a machine; thread-safe."""

    def __new__(
        cls,
        *,
        tenant_id: str,
        body: Mapping[str, Any] | _Body,
        token: Token | BearerToken | None = None,
        idempotency_header: str | None = None,
        request_id: str | None = None,
        max_polls: int | None = None,
        max_attempts: int | None = None,
        max_elapsed_seconds: float | None = None,
        seed: int | None = None,
        id_field: str | None = None,
        state_field: str | None = None,
        max_poll_seconds: float | None = None,
        reconcile_grace_seconds: float | None = None,
        min_poll_interval_seconds: float | None = None,
        max_poll_interval_seconds: float | None = None,
    ) -> ExportJob: ...
    def next(self, now: float | None = None, budget: RateBudget | None = None, *, session: Session | None = None) -> CallStep: ...
    def advance(self, now: float, *, session: Session, min_level: Literal["debug", "info", "warning"] | None = None
                ) -> tuple[CallStep, list[dict[str, Any]]]:
        """``next(now, session=session)`` and ``take_events(min_level)`` in one call."""
    def respond(self, status: int, headers: _Headers, body: _Body, now: float, *, session: Session,
                min_level: Literal["debug", "info", "warning"] | None = None) -> tuple[CallStep, list[dict[str, Any]]]:
        """``response(status, headers, body, now)`` then ``advance(now, session=session, min_level=min_level)``."""
    def report(self, outcome: _StepOutcome, now: float | None = None) -> None:
        """What became of the ``Send`` or ``Reserve`` performed: the one input after them."""
    def response(self, status: int, headers: _Headers, body: _Body, now: float | None = None) -> None: ...
    def streams(self, status: int) -> bool:
        """Whether a response with ``status`` is streamed to your sink: only a 2xx to a download."""
    def progress(self, received: int, total: int | None = None) -> None:
        """The download's body is arriving: a ``progress`` event at each tenth of it and when whole."""
    def streamed_response(self, status: int, headers: _Headers, length: int, now: float | None = None) -> None:
        """A download body you streamed to your sink, by its length; ``Done`` then has no body."""
    def transport_failure(self, failure: _Transport | str, now: float | None = None) -> None: ...
    def reserved(self, reply: str | None, now: float | None = None) -> None:
        """(Fleet.) The reply of the pending ``Reserve`` as text (None for nil)."""
    def reserve_failed(self, now: float | None = None) -> None:
        """(Fleet.) Redis could not be reached for the pending ``Reserve``: wait a second, reserve again."""
    def token(self, token: Token | EnterpriseToken | BearerToken, refresh_at: float | None = None) -> None: ...
    @property
    def export_id(self) -> str | None: ...
    def save(self) -> str: ...
    def checkpoint(self) -> str | None:
        """The checkpoint to keep before performing the step just given, or ``None``: the saved
        state when that step is a ``Send`` or a ``Wait`` and it changed since the last one given
        (or resumed from), once per step."""
    def take_events(self, min_level: Literal["debug", "info", "warning"] | None = None) -> list[dict[str, Any]]:
        """What the job did since the events were last taken, oldest first; with ``min_level``,
        only those at that level or above."""
    @staticmethod
    def resume(saved: str) -> ExportJob: ...

@final
class PageItems:
    """Where a page's items are, as ``Pages.page`` read them: the page itself (``member`` None)
    or its member ``member``; give the first ``take`` of them."""

    member: Final[str | None]
    take: Final[int]

@disjoint_base
class PagesStep:
    """What a host does next for a ``Pages`` walk; match on it."""

    @final
    class Fetch(PagesStep):
        """Request the list with ``query`` (the caller's parameters with the page's, in order),
        then report its 2xx body to ``Pages.page``."""

        __match_args__ = ("query",)
        def __new__(cls, query: list[tuple[str, str]]) -> PagesStep.Fetch: ...
        @property
        def query(self) -> list[tuple[str, str]]: ...

    @final
    class Done(PagesStep):
        """The walk is over: ``end`` says why, ``pages`` and ``items`` how many were read and given."""

        __match_args__ = ("end", "pages", "items")
        def __new__(cls, end: str, pages: int, items: int) -> PagesStep.Done: ...
        @property
        def end(self) -> Literal["last", "max_pages", "max_items"]: ...
        @property
        def pages(self) -> int: ...
        @property
        def items(self) -> int: ...

    @final
    class Fail(PagesStep):
        """The list cannot be read on (the items given so far stand): raise ``error``."""

        __match_args__ = ("error",)
        def __new__(cls, error: PaginationError) -> PagesStep.Fail: ...
        @property
        def error(self) -> PaginationError: ...

@final
class Pages:
    """Every page of a list operation as a machine: ``next()``; for ``Fetch``, request the list
    with its ``query``, report the 2xx body to ``page`` and give the first ``take`` items it
    points at; until ``Done`` or ``Fail``. Never loops, never gives an item twice; thread-safe."""

    def __new__(
        cls,
        operation_id: str,
        *,
        query: Mapping[str, _QueryValue] | Iterable[tuple[str, _QueryValue]] | None = None,
        max_pages: int | None = None,
        max_items: int | None = None,
        page_size: int | None = None,
        id_field: str | None = None,
    ) -> Pages: ...
    def next(self) -> PagesStep: ...
    def page(self, body: _Body) -> PageItems | None:
        """The 2xx body of the page fetched: where its items are, or None (no items array: the
        next step is ``Fail``)."""
    @property
    def pages(self) -> int:
        """Pages read so far."""
    @property
    def items(self) -> int:
        """Items given so far."""

_RecoveryAction = Literal[
    "processed", "processed_by_replay", "in_progress", "in_flight", "replay_pending", "unrecorded", "replayed",
    "replay_failed", "replay_limit", "deferred",
]

@final
class RecoveredDelivery:
    """One delivery a recovery run considered: its ``reference`` (``Service-Webhook-Id``),
    ``event``, ``status`` (as the log gives it), ``created_at`` (Unix seconds), the references of
    its ``replays`` in the log, and ``action``: what the run found and did. ``replay`` is the new
    delivery's reference when this run replayed it; ``error`` the code when the replay failed."""

    reference: Final[str]
    event: Final[str | None]
    status: Final[str | None]
    created_at: Final[int | None]
    replays: Final[list[str]]
    action: Final[_RecoveryAction]
    replay: Final[str | None]
    error: Final[str | None]

@final
class RecoveryReport:
    """What a recovery run found and did: log ``entries`` read, deliveries ``considered`` (from
    ``since`` on, replays counted with their original), ``before_since`` (left alone),
    ``skipped`` entries (test events, no usable reference), replays the service accepted
    (``replayed``), ``end`` (``last``: the whole log; ``max_items``: cut by ``max_entries``) and
    every delivery considered, in log order."""

    entries: Final[int]
    considered: Final[int]
    before_since: Final[int]
    skipped: Final[int]
    replayed: Final[int]
    end: Final[Literal["last", "max_pages", "max_items"]]
    deliveries: Final[list[RecoveredDelivery]]

@disjoint_base
class RecoveryStep:
    """What a host does next for a ``Recovery`` run; match on it."""

    @final
    class Fetch(RecoveryStep):
        """Request ``listEnterpriseWebhookDeliveries`` for the subscription with ``query``, then
        report its 2xx body to ``Recovery.page``."""

        __match_args__ = ("query",)
        def __new__(cls, query: list[tuple[str, str]]) -> RecoveryStep.Fetch: ...
        @property
        def query(self) -> list[tuple[str, str]]: ...

    @final
    class Check(RecoveryStep):
        """Look each key up in the receiver's store without claiming it, then report the states,
        in order, to ``Recovery.checked``."""

        __match_args__ = ("keys",)
        def __new__(cls, keys: list[str]) -> RecoveryStep.Check: ...
        @property
        def keys(self) -> list[str]: ...

    @final
    class Replay(RecoveryStep):
        """Request ``replayEnterpriseWebhookDelivery`` for the subscription and ``delivery``, then
        report its 2xx body to ``Recovery.replayed``, or the library error's code to
        ``Recovery.replay_failed``."""

        __match_args__ = ("delivery",)
        def __new__(cls, delivery: str) -> RecoveryStep.Replay: ...
        @property
        def delivery(self) -> str: ...

    @final
    class Done(RecoveryStep):
        """The run is over: ``report`` says what it found and did."""

        __match_args__ = ("report",)
        def __new__(cls, report: RecoveryReport) -> RecoveryStep.Done: ...
        @property
        def report(self) -> RecoveryReport: ...

    @final
    class Fail(RecoveryStep):
        """The delivery log cannot be read on (nothing was replayed): raise ``error``."""

        __match_args__ = ("error",)
        def __new__(cls, error: PaginationError) -> RecoveryStep.Fail: ...
        @property
        def error(self) -> PaginationError: ...

@final
class Recovery:
    """One delivery-recovery run for one webhook subscription as a machine: ``next()``; for
    ``Fetch`` request the delivery log and report the body to ``page``; for ``Check`` report the
    store's states of the keys to ``checked``; for ``Replay`` request the replay and report
    ``replayed`` or ``replay_failed``; until ``Done`` or ``Fail``. Every decision is the core's;
    thread-safe."""

    LIST_DELIVERIES: ClassVar[str]
    REPLAY_DELIVERY: ClassVar[str]
    DEFAULT_MAX_REPLAYS: ClassVar[int]
    DEFAULT_MAX_REPLAYS_PER_DELIVERY: ClassVar[int]
    DEFAULT_MAX_ENTRIES: ClassVar[int]

    def __new__(
        cls,
        subscription: str,
        namespace: str,
        since: _Seconds | datetime,
        now: _Seconds | datetime | None = None,
        *,
        max_replays: int | None = None,
        max_replays_per_delivery: int | None = None,
        max_entries: int | None = None,
    ) -> Recovery: ...
    def next(self) -> RecoveryStep: ...
    # generated by scripts/gen_surface.py from surface/functions.toml: begin (Recovery)
    def page(self, body: _Body) -> RecoveryStep:
        """The 2xx body of the log page fetched. Returns the next step; a page that cannot be read
        makes it the failure. ``InvalidArgumentError`` (``invalid_argument``) when no fetch is
        pending."""
    def checked(self, states: Sequence[Literal["new", "in_progress", "done"] | str]) -> RecoveryStep:
        """The store's state of each key the pending check named, in order: ``new``, ``in_progress`` or
        ``done``. Returns the next step. ``InvalidArgumentError`` (``invalid_argument``) when no
        check is pending or the count differs from the keys', or for a state that is none of those."""
    def replayed(self, body: _Body) -> RecoveryStep:
        """The 2xx body of the pending replay's request: the service accepted the replay. Returns the
        next step. ``InvalidArgumentError`` (``invalid_argument``) when no replay is pending."""
    def replay_failed(self, code: str) -> RecoveryStep:
        """The pending replay's request ended in the library's error of ``code`` (``call_failed``,
        ``reconcile_required``, an API error's code, …): the delivery is ``replay_failed``, the run
        goes on and the next run looks at it again. Returns the next step. ``InvalidArgumentError``
        (``invalid_argument``) when no replay is pending."""
    # generated: end (Recovery)

@final
class InboxEntry:
    """An inbox entry a claim returned: its delivery ``key``, ``delivery_id``
    (``Service-Webhook-Id``), ``event`` name as sent, the delivery's raw JSON ``body`` and the
    handler runs started (``attempts``, this one included)."""

    key: Final[str]
    delivery_id: Final[str]
    event: Final[str]
    body: Final[str]
    attempts: Final[int]

@disjoint_base
class InboxStep:
    """What a host does next for an ``InboxWorker``; match on it."""

    @final
    class Claim(InboxStep):
        """Run the claim, then report its row (or None) to ``claimed``, or ``store_failed``."""

        __match_args__ = ()
        def __new__(cls) -> InboxStep.Claim: ...

    @final
    class Idle(InboxStep):
        """Nothing is due: wait ``seconds`` (or until stopped), then ``waited``."""

        __match_args__ = ("seconds",)
        def __new__(cls, seconds: float) -> InboxStep.Idle: ...
        @property
        def seconds(self) -> float: ...

    @final
    class Drained(InboxStep):
        """(``drain=True``) Nothing is due: the worker is done."""

        __match_args__ = ()
        def __new__(cls) -> InboxStep.Drained: ...

    @final
    class Begin(InboxStep):
        """Open the handler's transaction, then ``began`` or ``store_failed``."""

        __match_args__ = ()
        def __new__(cls) -> InboxStep.Begin: ...

    @final
    class RunHandler(InboxStep):
        """Run the handler with ``entry`` inside the transaction, then ``handler_succeeded`` or
        ``handler_failed``."""

        __match_args__ = ("entry",)
        def __new__(cls, entry: InboxEntry) -> InboxStep.RunHandler: ...
        @property
        def entry(self) -> InboxEntry: ...

    @final
    class MarkDone(InboxStep):
        """Mark ``key`` done for the claim that counted ``attempts``, inside the transaction, then
        ``marked(changed)`` or ``store_failed``."""

        __match_args__ = ("key", "attempts")
        def __new__(cls, key: str, attempts: int) -> InboxStep.MarkDone: ...
        @property
        def key(self) -> str: ...
        @property
        def attempts(self) -> int: ...

    @final
    class Commit(InboxStep):
        """Commit the transaction, then ``committed`` or ``store_failed``."""

        __match_args__ = ()
        def __new__(cls) -> InboxStep.Commit: ...

    @final
    class Rollback(InboxStep):
        """Roll the transaction back, then ``rolled_back`` (also after a failed rollback)."""

        __match_args__ = ()
        def __new__(cls) -> InboxStep.Rollback: ...

    @final
    class Settle(InboxStep):
        """Record the failed attempt (autocommit): pending again at ``retry_at``, or ``poison``,
        with ``error``; then ``settled`` or ``store_failed``."""

        __match_args__ = ("key", "attempts", "poison", "retry_at", "error")
        def __new__(cls, key: str, attempts: int, poison: bool, retry_at: int, error: str) -> InboxStep.Settle: ...
        @property
        def key(self) -> str: ...
        @property
        def attempts(self) -> int: ...
        @property
        def poison(self) -> bool: ...
        @property
        def retry_at(self) -> int: ...
        @property
        def error(self) -> str: ...

_InboxRow = InboxEntry | tuple[str, str, str, str, int] | Sequence[Any]

@final
class InboxWorker:
    """The worker of an inbox as a machine: ``next()``, perform the step with your inbox
    (``SqlInboxProtocol``) and handler, report the outcome; until ``Drained`` or for as long as you
    run it (stop at any ``Claim`` or ``Idle``). Every decision is the core's; thread-safe."""

    DEFAULT_POLL_SECONDS: ClassVar[float]
    MAX_ATTEMPTS: ClassVar[int]

    def __new__(cls, *, max_attempts: int | None = None, poll_seconds: float | None = None,
                transactional: bool | None = None, drain: bool | None = None,
                seed: int | None = None) -> InboxWorker: ...
    def next(self) -> InboxStep: ...
    def claimed(self, entry: _InboxRow | None, now: float | None = None) -> InboxStep:
        """The claim's row (five columns, or an ``InboxEntry``), or None when nothing is due.
        Returns the next step. Deprecated (kept for one release): use ``report(("claimed", row), now)``."""
    # generated by scripts/gen_surface.py from surface/functions.toml: begin (InboxWorker)
    def report(self, outcome: _InboxOutcome, now: float | None = None) -> InboxStep:
        """What became of the pending step at ``now`` (None or left out: the host's clock), the
        worker's one input: ``"done"``, ``("claimed", row)``, ``("marked", changed)`` or
        ``("failed", message)``. ``done``: the wait, begin, handler, commit, rollback or settle was
        performed; ``claimed``: the claim's entry (the row of five columns or an ``InboxEntry``),
        None when nothing is due; ``marked``: whether the mark changed a row (False: another worker
        claimed the entry since); ``failed``: the step failed with a message for operators (never
        include a secret), which the pending step gives its meaning (during the handler the
        handler's, kept as the entry's ``last_error``; as good as done for a rollback; the store's
        otherwise). Returns the next step. ``InvalidArgumentError`` (``invalid_argument``) for an
        outcome the pending step cannot have (the worker unchanged), or one the core cannot read. A
        shape none of those is a ``TypeError``."""
    def waited(self) -> InboxStep:
        """The idle wait is over. Returns the next step. Deprecated (kept for one release): use
        ``report``, the machine's one input."""
    def began(self) -> InboxStep:
        """The transaction is open. Returns the next step. Deprecated (kept for one release): use
        ``report``, the machine's one input."""
    def handler_succeeded(self) -> InboxStep:
        """The handler finished. Returns the next step. Deprecated (kept for one release): use
        ``report``, the machine's one input."""
    def handler_failed(self, error: str, now: float | None = None) -> InboxStep:
        """The handler failed with ``error`` at ``now`` (None or left out: the host's clock): a message
        for operators, kept as the entry's ``last_error`` (never include a secret). Returns the next
        step. Deprecated (kept for one release): use ``report``, the machine's one input."""
    def marked(self, changed: bool) -> InboxStep:
        """Whether the mark changed a row (``changed`` False: another worker claimed the entry since).
        Returns the next step. Deprecated (kept for one release): use ``report``, the machine's one
        input."""
    def committed(self) -> InboxStep:
        """The transaction committed: the entry is done. Returns the next step. Deprecated (kept for
        one release): use ``report``, the machine's one input."""
    def rolled_back(self) -> InboxStep:
        """The transaction was rolled back (or its connection is gone). Returns the next step.
        Deprecated (kept for one release): use ``report``, the machine's one input."""
    def settled(self) -> InboxStep:
        """The failed attempt is recorded. Returns the next step. Deprecated (kept for one release):
        use ``report``, the machine's one input."""
    def store_failed(self) -> InboxStep:
        """The store could not be reached at the pending store step. Returns the next step: a rollback
        when a transaction is open, then a wait. Deprecated (kept for one release): use ``report``,
        the machine's one input."""
    # generated: end (InboxWorker)
    @property
    def processed(self) -> int: ...
    @property
    def retried(self) -> int: ...
    @property
    def poisoned(self) -> int: ...
