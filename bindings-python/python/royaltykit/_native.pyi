"""Type stubs of the native module; the public API is re-exported by ``royaltykit``."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, final

from .errors import ApiError

_Headers = Mapping[str, str] | Mapping[str, Sequence[str]] | Iterable[tuple[str, str]]
_Body = bytes | bytearray | memoryview | str
_Secrets = str | Sequence[str]
_Seconds = int | float

__all__ = [
    "ExportStateInfo",
    "PollDecision",
    "check_export_download",
    "export_poll_decision",
    "export_state",
    "step_up_satisfies",
    "validate_export_command",
    "validate_export_list_query",
    "EnterpriseToken",
    "Operation",
    "QueryParam",
    "RequestDescriptor",
    "ResponseNotices",
    "Token",
    "build_enterprise_token_request",
    "build_request",
    "build_token_request",
    "missing_scopes",
    "operation",
    "operations",
    "parse_api_error",
    "parse_enterprise_token_response",
    "parse_token_response",
    "response_notices",
    "BackoffPolicy",
    "RateBudget",
    "RateDecision",
    "RetryAfter",
    "RetryDecision",
    "backoff_delay",
    "decide_retry",
    "parse_retry_after",
    "webhook_gives_up_at",
    "webhook_next_attempt_at",
    "webhook_retry_schedule",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_TOLERANCE_SECONDS",
    "DedupWindow",
    "HEADER_NAMES",
    "VerifiedWebhook",
    "WebhookEvent",
    "WebhookVerifier",
    "active_secrets",
    "content_key",
    "delivery_key",
    "event_key",
    "idempotency_key",
    "sign_webhook",
    "verify_webhook",
]

HEADER_NAMES: list[str]

DEFAULT_TOLERANCE_SECONDS: int
DEFAULT_MAX_BODY_BYTES: int

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

    @property
    def name(self) -> str: ...
    @property
    def is_known(self) -> bool: ...
    @property
    def is_test(self) -> bool: ...
    @property
    def resource_type(self) -> str: ...
    @property
    def resource_reference(self) -> str: ...
    @property
    def resource_url(self) -> str: ...
    @property
    def occurred_at(self) -> int: ...
    @property
    def occurred_at_text(self) -> str: ...
    @property
    def replay_of(self) -> str | None: ...

@final
class VerifiedWebhook:
    """A delivery that passed verification."""

    @property
    def delivery_id(self) -> str: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def secret_index(self) -> int: ...
    @property
    def content_key(self) -> str: ...
    @property
    def event(self) -> WebhookEvent: ...

def verify_webhook(
    headers: _Headers,
    body: _Body,
    secrets: _Secrets,
    *,
    now: _Seconds | None = None,
    tolerance: int = ...,
    max_body_bytes: int = ...,
) -> VerifiedWebhook: ...
@final
class WebhookVerifier:
    """A verifier built once with its secrets; thread-safe."""

    def __new__(cls, secrets: _Secrets, *, tolerance: int = ..., max_body_bytes: int = ...) -> WebhookVerifier: ...
    def verify(self, headers: _Headers, body: _Body, *, now: _Seconds | None = None) -> VerifiedWebhook: ...

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
    previous_valid_until: _Seconds | None = None,
    *,
    now: _Seconds | None = None,
) -> list[str]: ...
def delivery_key(namespace: str, delivery_id: str) -> str: ...
def event_key(namespace: str, event: _EventIdentity) -> str: ...
def content_key(secret: str, timestamp: str | int, body: _Body) -> str: ...
def idempotency_key(tenant: str, operation_id: str, body: _Body | None = None) -> str: ...
@final
class DedupWindow:
    """Bounded in-memory dedup window; thread-safe."""

    def __new__(cls, capacity: int, ttl_seconds: int) -> DedupWindow: ...
    def check_and_insert(self, key: str, now: _Seconds | None = None) -> bool: ...
    def contains(self, key: str, now: _Seconds | None = None) -> bool: ...
    @property
    def capacity(self) -> int: ...
    def __len__(self) -> int: ...

# ---- retry ------------------------------------------------------------------------------------

def webhook_retry_schedule() -> list[int]: ...
def webhook_next_attempt_at(first_attempt_at: int, attempts_made: int) -> int | None: ...
def webhook_gives_up_at(first_attempt_at: int) -> int: ...
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
    @property
    def seconds(self) -> int: ...
    @property
    def capped(self) -> bool: ...
    @property
    def form(self) -> Literal["delta_seconds", "http_date"]: ...

def parse_retry_after(value: str | None, now: _Seconds | None = None, *, cap_seconds: int | None = None) -> RetryAfter | None: ...

_RetryClass = Literal[
    "read", "token_exchange", "idempotent_write", "safe_update", "unsafe_create", "submit", "checkout", "addon_action", "upload"
]

@final
class RetryDecision:
    @property
    def action(self) -> Literal["retry", "stop", "reconcile", "refresh_token"]: ...
    @property
    def delay_seconds(self) -> float: ...
    @property
    def rule(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def reconcile(self) -> Literal["lookup_by_sent_data", "fetch_release_review_state", "check_checkout_state", "read_addon_status"] | None: ...

def decide_retry(
    retry_class: _RetryClass | str,
    *,
    attempt: int,
    status: int | None = None,
    headers: _Headers | None = None,
    transport: Literal["timeout", "connect_failed", "connection_lost"] | str | None = None,
    elapsed_seconds: float = 0.0,
    token_refreshed: bool = False,
    random: float | None = None,
    now: _Seconds | None = None,
    max_attempts: int | None = None,
    max_elapsed_seconds: float | None = None,
) -> RetryDecision: ...
@final
class RateDecision:
    @property
    def allowed(self) -> bool: ...
    @property
    def wait_until(self) -> int | None: ...
    @property
    def limit(self) -> str | None: ...

@final
class RateBudget:
    """Rolling-window request budgets; thread-safe."""

    def __new__(cls, windows: Sequence[tuple[str, int, int]]) -> RateBudget: ...
    @staticmethod
    def preset(name: Literal["enterprise", "enterprise_ddex", "enterprise_audio_upload", "enterprise_chunk_upload"] | str) -> RateBudget: ...
    def try_acquire(self, now: _Seconds | None = None) -> RateDecision: ...

# ---- catalog, requests, error bodies, tokens ----------------------------------------------------

@final
@final
class QueryParam:
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> Literal["uuid", "limit", "key", "cursor", "text", "positive", "date", "sort"]: ...
    @property
    def required(self) -> bool: ...

@final
class Operation:
    @property
    def id(self) -> str: ...
    @property
    def api(self) -> Literal["reports", "enterprise"]: ...
    @property
    def surface(self) -> Literal["machine", "human", "enterprise"]: ...
    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def auth(self) -> Literal["none", "basic_client", "bearer", "session", "api_key"]: ...
    @property
    def scope(self) -> str | None: ...
    @property
    def idempotency(self) -> Literal["none", "key", "header"]: ...
    @property
    def csrf(self) -> bool: ...
    @property
    def step_up(self) -> Literal["none", "recent", "recent_mfa", "recent_non_recovery"]: ...
    @property
    def tenant_header(self) -> bool: ...
    @property
    def user_header(self) -> bool: ...
    @property
    def body(self) -> Literal["none", "optional", "required"]: ...
    @property
    def success(self) -> list[int]: ...
    @property
    def errors(self) -> list[int] | None: ...
    @property
    def query(self) -> list[QueryParam]: ...
    @property
    def open_query(self) -> bool: ...
    @property
    def no_store(self) -> bool: ...
    @property
    def retry_class(self) -> str: ...

def operations() -> list[Operation]: ...
def operation(id: str) -> Operation: ...
@final
class RequestDescriptor:
    """A request to send with your own HTTP client; ``repr`` hides credentials."""

    @property
    def operation_id(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def query(self) -> str: ...
    @property
    def path_and_query(self) -> str: ...
    @property
    def headers(self) -> list[tuple[str, str]]: ...
    @property
    def body(self) -> bytes | None: ...
    @property
    def idempotency_key(self) -> str | None: ...
    def url(self, base: str) -> str: ...

_QueryValue = str | int | bool | None

def build_request(
    operation_id: str,
    *,
    path: Mapping[str, str | int] | None = None,
    query: Mapping[str, _QueryValue] | Iterable[tuple[str, _QueryValue]] | None = None,
    body: Mapping[str, Any] | list[Any] | _Body | None = None,
    token: str | None = None,
    tenant_id: str | None = None,
    user_id: str | None = None,
    idempotency_key: str | None = None,
    idempotency_header: str | None = None,
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

    @property
    def access_token(self) -> str: ...
    @property
    def token_type(self) -> str: ...
    @property
    def expires_in(self) -> int: ...
    @property
    def expires_at(self) -> int: ...
    @property
    def refresh_at(self) -> int: ...
    @property
    def scopes(self) -> list[str]: ...
    @property
    def missing_scopes(self) -> list[str]: ...
    @property
    def warnings(self) -> list[str]: ...

@final
class EnterpriseToken:
    @property
    def token(self) -> str: ...
    @property
    def expires_at(self) -> int | None: ...
    @property
    def refresh_at(self) -> int | None: ...

def build_token_request(client_id: str, client_secret: str, tenant_id: str, scopes: Sequence[str] | None = None) -> RequestDescriptor: ...
def parse_token_response(
    status: int, headers: _Headers | None, body: _Body | None, *, requested_scopes: Sequence[str] | None = None, now: _Seconds | None = None
) -> Token: ...
def build_enterprise_token_request(api_key: str, api_secret: str) -> RequestDescriptor: ...
def parse_enterprise_token_response(status: int, headers: _Headers | None, body: _Body | None, *, now: _Seconds | None = None) -> EnterpriseToken: ...
def missing_scopes(granted: Sequence[str], operation_id: str) -> list[str]: ...
@final
class ResponseNotices:
    @property
    def deprecated(self) -> bool: ...
    @property
    def deprecated_at(self) -> int | None: ...
    @property
    def sunset_at(self) -> int | None: ...
    @property
    def link(self) -> str | None: ...

def response_notices(headers: _Headers) -> ResponseNotices: ...

# ---- exports ---------------------------------------------------------------------------------------

@final
class ExportStateInfo:
    @property
    def name(self) -> str: ...
    @property
    def known(self) -> bool: ...
    @property
    def terminal(self) -> bool: ...
    @property
    def allowed_commands(self) -> list[str]: ...

def export_state(value: str) -> ExportStateInfo: ...
def validate_export_command(state: str, command: Literal["get", "cancel", "revoke", "download"] | str) -> str: ...
@final
class PollDecision:
    @property
    def action(self) -> Literal["keep_polling", "download", "stop"]: ...
    @property
    def delay_seconds(self) -> float: ...
    @property
    def reason(self) -> str: ...

def export_poll_decision(
    state: str, attempt: int, *, random: float | None = None, max_polls: int | None = None, max_unknown_polls: int | None = None
) -> PollDecision: ...
def check_export_download(status: int, headers: _Headers | None = None, body: _Body | None = None, *, now: _Seconds | None = None) -> None: ...
def validate_export_list_query(
    *, limit: int | str | None = None, cursor: str | None = None, export_class: str | None = None, status: str | None = None, format: str | None = None
) -> str: ...
def step_up_satisfies(
    requirement: Literal["none", "recent", "recent_mfa", "recent_non_recovery"] | str,
    kind: Literal["mfa", "recovery_code"] | str,
    at: int,
    *,
    max_age_seconds: int,
    now: _Seconds | None = None,
) -> bool: ...
