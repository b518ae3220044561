"""Exceptions raised by royaltykit. Every one carries a stable ``code``, the same in every language."""

from __future__ import annotations

from typing import Any


class RoyaltyKitError(Exception):
    """Base class of every royaltykit error. ``code`` is stable; ``str(e)`` says what to check."""

    code: str

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        for name, value in details.items():
            setattr(self, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        details = {k: v for k, v in self.__dict__.items() if k != "code"}
        return (_rebuild, (type(self), self.code, str(self), details))


def _rebuild(cls: type[RoyaltyKitError], code: str, message: str, details: dict[str, Any]) -> RoyaltyKitError:
    return cls(code, message, **details)


class WebhookVerificationError(RoyaltyKitError):
    """A webhook delivery was rejected (or could not be signed).

    ``code`` is one of: missing_header, invalid_header, invalid_secret, payload_too_large,
    invalid_timestamp, invalid_signature_header, no_matching_signature, timestamp_too_old,
    timestamp_too_new, invalid_payload. ``header``, ``skew_seconds`` and ``limit`` are set when
    they apply, else None.
    """

    header: str | None = None
    skew_seconds: int | None = None
    limit: int | None = None


class InvalidArgumentError(RoyaltyKitError, ValueError):
    """An argument or option is out of range (code ``invalid_argument``); ``argument`` names it."""

    argument: str


__all__ = ["RoyaltyKitError", "WebhookVerificationError", "InvalidArgumentError"]
