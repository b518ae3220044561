"""Type stubs of the native module; the public API is re-exported by ``royaltykit``."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, final

_Headers = Mapping[str, str] | Mapping[str, Sequence[str]] | Iterable[tuple[str, str]]
_Body = bytes | bytearray | memoryview | str
_Secrets = str | Sequence[str]
_Seconds = int | float

__all__ = [
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
