"""Exceptions raised by royaltykit. Every one carries a stable ``code``, the same in every language."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any


class RoyaltyKitError(Exception):
    """Base class of every royaltykit error. ``code`` is stable; ``str(e)`` says what to check;
    ``http_status`` is the status a webhook receiver should answer when this error ends its
    handling (400, 401, 413, or 500 for the receiver's own faults and configuration)."""

    code: str
    http_status: int = 500

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
    timestamp_too_new, invalid_payload; ``invalid_resource_url`` (``resource_path``) and
    ``secret_not_revealed`` (``revealed_secret``: a subscription response that names no signing
    secret; the message never contains the body) share the family. ``header``,
    ``skew_seconds`` and ``limit`` are set when they apply, else None.
    """

    header: str | None = None
    skew_seconds: int | None = None
    limit: int | None = None


class InvalidArgumentError(RoyaltyKitError, ValueError):
    """An argument or option is out of range (code ``invalid_argument``); ``argument`` names it."""

    argument: str


class RequestBuildError(RoyaltyKitError, ValueError):
    """A request could not be built. ``code``: missing_parameter, invalid_parameter,
    unknown_parameter, invalid_endpoint_url or unknown_operation; ``parameter`` names the culprit."""

    parameter: str


class TokenResponseError(RoyaltyKitError):
    """A success response to a token exchange broke the contract (code ``invalid_token_response``)."""


class ExportStateError(RoyaltyKitError):
    """A command the export's state does not allow (code ``invalid_export_transition``);
    ``state``, ``command`` and ``allowed`` say which."""

    state: str
    command: str
    allowed: list[str]


class ExportDownloadError(RoyaltyKitError):
    """A download response that is not the whole artifact (code ``partial_content_unsupported``)."""


class ApiError(RoyaltyKitError):
    """An API error response, parsed (and raisable).

    ``kind`` (bad_request, unauthenticated, forbidden, not_found, conflict, validation,
    rate_limited, unavailable, timeout, server_error, other) is the stable field to branch on;
    ``code`` is ``api_error`` as in every language; ``body_code`` is the body's own code, or
    None. Also ``status`` (the response's HTTP status), ``api``, ``reason``, ``server_message``
    (the body's message), ``field_errors``, ``retry_after_seconds``, ``declared``,
    ``operation_id``, ``raw_body``, and ``http_status`` as on every error (the status a webhook
    receiver answers when this error ends its handling: 500). ``str(e)`` is the core's message,
    the same in every language: ``401 Unauthorized (unauthenticated) [invalid_client]``.
    """

    api: str
    server_message: str
    body_code: str | None
    status: int
    kind: str
    reason: str | None
    field_errors: dict[str, list[str]]
    retry_after_seconds: int | None
    declared: bool | None
    operation_id: str | None
    raw_body: str


class PaginationError(RoyaltyKitError):
    """A list cannot be read to its end (family ``pagination``); the items given before it stand.
    ``code`` is one of: ``page_unreadable`` (a page that is not JSON or holds no array of items:
    read it with ``request()`` to see its shape), ``next_page_unknown`` (a page says more follow
    without saying how to ask for them), ``list_cursor_repeated`` (a cursor given twice, or a
    page that repeats one read before: reading on would loop). Raised by ``paginate`` and
    carried by ``PagesStep.Fail``; ``str(e)`` is the core's message, naming the operation and
    the page."""


class ReconcileRequired(RoyaltyKitError):
    """A request may have been applied and must not be sent again blindly (code
    ``reconcile_required``): check its effect first, as ``reconcile`` says
    (``lookup_by_sent_data``, ``fetch_release_review_state``, ``check_checkout_state``,
    ``read_addon_status``, ``rotate_again``). Also ``operation_id`` and ``reason``; for an export job, ``stage``
    (``reconcile``) and ``candidates``: the ids of the exports that may be its own (new since
    it started and matching the data sent), possibly none. Never create again before you
    checked them."""

    reconcile: str
    operation_id: str
    reason: str
    candidates: list[str]
    stage: str | None


class CallFailedError(RoyaltyKitError):
    """A call or export job stopped without an API error to show (code ``call_failed``): its
    attempts or time budget ran out on transport failures, or a ``Retry-After`` passed the
    budget. ``rule`` (stable, e.g. ``attempts_exhausted``, ``retry_after_exceeds_budget``),
    ``transport``, ``status``, ``retry_after_seconds``, ``operation_id``, ``attempts`` (the
    requests sent), ``reason`` (the machine's), and for an export job ``stage`` and ``export_id``.
    The message names the operation, the host, the reason, the attempts and the HTTP library's
    last error, which is also ``__cause__`` when a transport failure ended the call."""

    rule: str
    reason: str
    attempts: int
    transport: str | None
    status: int | None
    retry_after_seconds: float | None
    operation_id: str
    stage: str | None
    export_id: str | None


def _interrupted_message(export_id: str | None) -> str:
    from ._native import export_interrupted_message  # here: errors.py loads before the native module

    return export_interrupted_message(export_id)


class ExportInterrupted(KeyboardInterrupt):
    """``run_export`` was interrupted (Ctrl-C, ``SIGINT``: a ``KeyboardInterrupt``, kept as
    ``__cause__``). Still a ``KeyboardInterrupt``, so a program that does not catch it stops as
    before. The temporary file beside ``to`` is removed. ``export_id`` is the export the service
    named (None when the create had not been answered yet), ``checkpoint`` the job as saved at the
    interruption (with its request in flight): give it to ``run_export(resume=...)`` to finish the
    job, never creating a second export. ``code`` is ``export_interrupted``; ``str(e)`` is the
    core's message, the same in every language."""

    code: str = "export_interrupted"
    export_id: str | None
    checkpoint: str

    def __init__(self, export_id: str | None, checkpoint: str, message: str | None = None) -> None:
        super().__init__(message if message is not None else _interrupted_message(export_id))
        self.export_id, self.checkpoint = export_id, checkpoint

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.export_id, self.checkpoint, str(self)))


def export_interruption(error: BaseException) -> ExportInterrupted | None:
    """The export job an interruption left, or None: ``error`` itself when it is an
    :class:`ExportInterrupted` (Ctrl-C in ``run_export``), else what a cancelled
    ``AsyncReportsClient.run_export`` attached to its task's own ``CancelledError`` (which is
    raised unchanged, so ``asyncio.timeout``, ``wait_for`` and ``TaskGroup`` work as ever), looked
    up along ``__cause__`` and ``__context__`` (``asyncio.timeout``'s ``TimeoutError`` is raised
    from that ``CancelledError``). Its ``export_id`` and ``checkpoint`` finish the job with
    ``run_export(resume=...)``::

        try:
            async with asyncio.timeout(600):
                await client.run_export(body, to="sales.csv")
        except TimeoutError as e:
            if (left := royaltykit.export_interruption(e)) is not None:
                save(left.checkpoint)
            raise
    """
    seen: BaseException | None = error
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ExportInterrupted):
            return seen
        left = getattr(seen, "_royaltykit_export", None)
        if isinstance(left, ExportInterrupted):
            return left
        seen = seen.__cause__ or seen.__context__
    return None


# The one table from the core's error family to a class; everything else comes from the core.
_FAMILIES: dict[str, type[RoyaltyKitError]] = {
    "webhook": WebhookVerificationError,
    "invalid_argument": InvalidArgumentError,
    "request": RequestBuildError,
    "token_response": TokenResponseError,
    "export_state": ExportStateError,
    "export_download": ExportDownloadError,
    "api": ApiError,
    "pagination": PaginationError,
    "call_failed": CallFailedError,
    "reconcile_required": ReconcileRequired,
    "host": RoyaltyKitError,
}


def _from_native(fields_json: str) -> RoyaltyKitError:
    """Builds the exception for one core error (JSON with camelCase keys), with the core's message.
    An API error's parsed response is flattened onto the exception, the server's own message as
    ``server_message``."""
    import json  # here, not at module level: `import royaltykit` stays fast (bench: cold start)

    fields = json.loads(fields_json)
    cls = _FAMILIES.get(fields.pop("family"), RoyaltyKitError)
    code, message = fields.pop("code"), fields.pop("message")
    response = fields.pop("error", None)
    if response:
        response["serverMessage"] = response.pop("message")
        fields.update(response)
    return cls(code, message, **{_snake(k): v for k, v in fields.items()})


def _snake(name: str) -> str:
    """`retryAfterSeconds` -> `retry_after_seconds`."""
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))


__all__ = [
    "ApiError",
    "CallFailedError",
    "ReconcileRequired",
    "ExportDownloadError",
    "ExportInterrupted",
    "export_interruption",
    "ExportStateError",
    "InvalidArgumentError",
    "PaginationError",
    "RequestBuildError",
    "RoyaltyKitError",
    "TokenResponseError",
    "WebhookVerificationError",
]
