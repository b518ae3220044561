"""Type stubs of the native module; the public API is re-exported by ``royaltykit``."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Protocol, final

_Headers = Mapping[str, str] | Mapping[str, Sequence[str]] | Iterable[tuple[str, str]]
_Body = bytes | bytearray | memoryview | str
_Secrets = str | Sequence[str]
_Seconds = int | float

__all__ = [
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
        jitter: Literal["none", "full", "equal"] = "none",
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
