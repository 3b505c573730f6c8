"""One exception type per failure a caller can cause, each with its HTTP status.

The HTTP layer maps these to responses in one place; the CLI prints their reason.
Anything that is not a FlowmemError is a bug in flowmem, never the caller's fault.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, TypeVar


class FlowmemError(Exception):
    """Base class: `reason` is a sentence a client can act on."""

    status = 500
    detail: Dict[str, Any] = {}  # what the error body says beside the reason (partly_stored()); never mutated

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class BadRequest(FlowmemError):
    """The body is not a JSON object (unreadable, not UTF-8, not JSON, not an object)."""

    status = 400


class Unauthorized(FlowmemError):
    """A key is configured and the request did not carry it."""

    status = 401


class NotFound(FlowmemError):
    """No such path."""

    status = 404


class MethodNotAllowed(FlowmemError):
    """The path exists but not for this method; `allow` lists the ones it takes."""

    status = 405

    def __init__(self, reason: str, allow: str):
        super().__init__(reason)
        self.allow = allow


class PayloadTooLarge(FlowmemError):
    """The body is over the configured limit."""

    status = 413


class InvalidField(FlowmemError):
    """A field of the request is missing or malformed; `field` names it (`messages[2].content`)."""

    status = 422

    def __init__(self, field: str, problem: str):
        super().__init__("%s %s" % (field, problem))
        self.field = field


class Forbidden(FlowmemError):
    """The request comes from a web page that is not allowed to use flowmem (its `Origin`)."""

    status = 403


class RequestTimeout(FlowmemError):
    """The request did not arrive whole within the request timeout."""

    status = 408


class UnsupportedMediaType(FlowmemError):
    """The body is labelled with a type a browser form can send, not JSON."""

    status = 415


class MisdirectedRequest(FlowmemError):
    """The `Host` header names a host this server does not answer for (DNS rebinding)."""

    status = 421


class HeadersTooLarge(FlowmemError):
    """The request line and headers are over the limit."""

    status = 431


class RetryLater(FlowmemError):
    """A temporary condition; the client should retry after `retry_after` seconds (sent as Retry-After)."""

    status = 503

    def __init__(self, reason: str, retry_after: int = 1):
        super().__init__(reason)
        self.retry_after = retry_after


class Overloaded(RetryLater):
    """Too many requests in flight."""

    status = 429


class Unavailable(RetryLater):
    """The database is busy or failing (locked, I/O error); nothing was written."""

    status = 503


class StorageFull(RetryLater):
    """The disk (or the database's size limit) is full; nothing was written. Retry when space is freed."""

    status = 507


class BackupRefused(FlowmemError):
    """A backup's target may not be written: it exists (and no force was given), it is the
    database being copied, or a WAL beside it says a database may be using it."""

    status = 409


class Conflict(FlowmemError):
    """The request cannot be carried out on the memory as it is now (a user deleted while its
    import ran); nothing of it was written."""

    status = 409


class StoreError(FlowmemError):
    """The database cannot be used (wrong version, no FTS5, unreadable file)."""

    status = 503


class ConfigError(FlowmemError):
    """A flag or FLOWMEM_* variable has a value flowmem cannot use."""


E = TypeVar("E", bound=FlowmemError)


def partly_stored(cause: E, stored: int, total: Optional[int] = None) -> E:
    """An import's refusal: `cause` (what refused its next chunk: a full disk, a busy database),
    of the same class, status and Retry-After, saying that the import's first `stored` records
    are stored, each Add whole, and none after them (none at all for 0), in its reason and beside
    it, as `detail["records_stored"]` (the error body's `detail.records_stored`). Sending the
    whole import again is safe: what is stored is skipped (Adds are idempotent)."""
    if stored:
        of = " of %d" % total if total is not None else ""
        reason = ("the import stopped after its first %d%s records, which are stored; the rest were not written "
                  "(send the whole import again once the cause is gone: what is stored is skipped): %s"
                  % (stored, of, cause.reason.replace("nothing was written", "nothing more was written")))
    else:
        reason = "%s (none of this import's records were stored)" % cause.reason
    error = cause.__class__.__new__(cause.__class__)
    error.__dict__.update(cause.__dict__)  # retry_after, and what else the cause carries
    Exception.__init__(error, reason)
    error.reason = reason
    error.detail = {"records_stored": stored}
    return error
