"""royaltykit: verify enterprise webhook deliveries, derive dedup and idempotency keys.

A thin Python layer over a Rust core (``royaltykit._native``); every rule lives in the core, so
Python, Node and Kotlin behave identically. Time values are Unix seconds.
"""

from typing import TYPE_CHECKING, Any

from ._native import *  # noqa: F403 (every public name; `__all__` below lists them)
from .errors import *  # noqa: F403

if TYPE_CHECKING:
    from .receiver import *  # noqa: F403

# The receivers and their stores (royaltykit.receiver: asyncio, logging, threading) load on first
# use, so that `import royaltykit` for a verification alone stays fast (`make bench`, cold start):
# every other name of `__all__` is bound above, so a missing one is the receiver module's.


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import receiver

        value: Any = getattr(receiver, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'royaltykit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__version__ = "0.1.0"

# test_exports.py checks this list against the native module's own `__all__` (kept by pyo3)
# and the Python modules' (errors, receiver).
__all__ = [
    "ApiError", "ApiSession", "Call", "CallFailedError", "CallStep", "ReconcileRequired", "ExportJob", "ReceiptStep", "WebhookReceipt", "BackoffPolicy", "BearerToken", "DEFAULT_DEDUP_TTL_SECONDS", "DEFAULT_MAX_BODY_BYTES", "DEFAULT_TOLERANCE_SECONDS",
    "DedupWindow", "EnterpriseToken", "EventName", "Fleet", "FleetToken", "FleetTokenStep", "DEFAULT_FLEET_PREFIX",
    "MAX_FLEET_PREFIX_BYTES", "FLEET_POLL_SECONDS", "RESERVE_SCRIPT", "PUBLISH_SCRIPT", "UNLOCK_SCRIPT", "EventRouter", "EventRoutes", "KNOWN_EVENT_NAMES", "Route", "ExportDownloadError", "ExportInterrupted", "export_interruption", "ExportStateError", "ExportStateInfo",
    "HEADER_NAMES", "InvalidArgumentError", "Operation", "PageItems", "Pages", "PagesStep", "PaginationError", "PollDecision", "QueryParam", "RateBudget",
    "RecoveredDelivery", "Recovery", "RecoveryReport", "RecoveryStep", "InboxEntry", "InboxStep", "InboxWorker",
    "SqlInboxProtocol", "InboxStore", "parse_webhook_event", "RedisInboxProtocol", "InboxPoisonEntry", "InboxCounts",
    "handler_error_text", "detect_sql_dialect", "DEFAULT_POISON_LISTED",
    "RateDecision", "Receipt", "ReceiverDecision", "ReceiverReply", "RedisDedupProtocol", "SqlDedupProtocol", "SqlStatement", "DEFAULT_STORE_CAPACITY", "RedisDedupStore", "AsyncRedisDedupStore",
    "DedupStore", "AsyncDedupStore", "DeliveryStates", "AsyncDeliveryStates", "TransactionalDedupStore",
    "STATUS_HANDLER_FAILED", "STATUS_STORE_UNAVAILABLE", "WebhookReceiver", "RequestBuildError", "RequestDescriptor", "ResponseNotices", "RetryAfter",
    "RetryDecision", "RevealedSecret", "RoyaltyKitError", "Session", "Token", "TokenResponseError", "VerifiedWebhook",
    "WebhookEvent", "WebhookSecret", "WebhookVerificationError", "WebhookVerifier", "active_secrets",
    "backoff_delay", "build_enterprise_token_request", "build_request", "build_token_request",
    "call_failed_message", "check_base_url", "client_timeouts", "export_interrupted_message", "check_export_download", "content_key", "decide_claims", "decide_retry", "delivery_key", "event_key",
    "export_poll_decision", "export_state", "failure_reply", "rejection_body", "idempotency_key", "missing_scopes", "operation",
    "operations", "parse_api_error", "parse_api_session", "parse_enterprise_token_response", "parse_retry_after",
    "parse_timestamp", "parse_token_response", "plan_receipt", "resource_path", "response_notices", "revealed_secret", "sign_webhook", "step_up_satisfies",
    "validate_export_command", "validate_export_list_query", "verify_webhook",
    "webhook_gives_up_at", "webhook_next_attempt_at", "webhook_retry_schedule",
]
