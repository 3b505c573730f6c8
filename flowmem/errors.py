"""One exception type per failure a caller can cause, each with its HTTP status.

The HTTP layer maps these to responses in one place; the CLI prints their reason.
Anything that is not a FlowmemError is a bug in flowmem, never the caller's fault.
"""
from __future__ import annotations


class FlowmemError(Exception):
    """Base class: `reason` is a sentence a client can act on."""

    status = 500

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


class Overloaded(FlowmemError):
    """Too many requests in flight; retry after `retry_after` seconds."""

    status = 429

    def __init__(self, reason: str, retry_after: int = 1):
        super().__init__(reason)
        self.retry_after = retry_after


class StoreError(FlowmemError):
    """The database cannot be used (wrong version, no FTS5, unreadable file)."""

    status = 503


class ConfigError(FlowmemError):
    """A flag or FLOWMEM_* variable has a value flowmem cannot use."""
