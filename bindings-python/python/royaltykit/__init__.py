"""royaltykit: verify enterprise webhook deliveries, derive dedup and idempotency keys.

A thin Python layer over a Rust core (``royaltykit._native``); every rule lives in the core, so
Python, Node and Kotlin behave identically. Time values are Unix seconds.
"""

from ._native import (
    BackoffPolicy,
    RateBudget,
    RateDecision,
    RetryAfter,
    RetryDecision,
    backoff_delay,
    decide_retry,
    parse_retry_after,
    webhook_gives_up_at,
    webhook_next_attempt_at,
    webhook_retry_schedule,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_TOLERANCE_SECONDS,
    HEADER_NAMES,
    DedupWindow,
    VerifiedWebhook,
    WebhookEvent,
    WebhookVerifier,
    active_secrets,
    content_key,
    delivery_key,
    event_key,
    idempotency_key,
    sign_webhook,
    verify_webhook,
)
from .errors import InvalidArgumentError, RoyaltyKitError, WebhookVerificationError

__version__ = "0.1.0"

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
    "HEADER_NAMES",
    "DedupWindow",
    "InvalidArgumentError",
    "RoyaltyKitError",
    "VerifiedWebhook",
    "WebhookEvent",
    "WebhookVerificationError",
    "WebhookVerifier",
    "active_secrets",
    "content_key",
    "delivery_key",
    "event_key",
    "idempotency_key",
    "sign_webhook",
    "verify_webhook",
]
