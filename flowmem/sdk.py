"""The Python API: keyword calls and typed results over the contract's dict-level calls.

Memory (a database file) and Client (a server) both answer the contract's bodies as
dicts: add_body, search_body, get_message, list_messages, list_sessions, list_users,
delete_message. MemoryAPI, a mixin both inherit, puts on top of those the calls a
Python user expects, with keyword arguments and typed results:

    m.add("I moved to Lisbon", user_id="alice")          -> AddResult
    m.add(["plain text is a user message", {"role": "assistant", "content": "..."}], user_id=...)
    m.search("where does alice live?", user_id="alice")  -> Hits: [Hit], with .evidence
    m.get(message_id, user_id=...) -> StoredMessage;  m.list(user_id=...) -> [StoredMessage]
    m.sessions(user_id) -> [Session];  m.users() -> [User];  m.delete(message_id, user_id=...) -> bool
    with Memory(path) as m: ...

A Mapping as first argument of add or search is the contract's body, answered with the
contract's dict as before: contract users and the HTTP layer keep one code path.

The bodies are built by add_call() and search_call() (add_request(), search_request()),
plain functions that AsyncClient shares, so the same arguments make the same body whichever
class sends it. An add() that names no request_id stores its messages every time (the same
words said twice are two messages): its body asks to be anchored where its messages land
(derived_request_id()), in a Memory as through a server. The builders
check what only the Python call has (the argument's type, a missing user_id) and name the
argument; everything else is the core's validation, whose InvalidField names the body's field
(`messages[1].content`, `filters.role`).

The results are sdk_types.py's frozen dataclasses (a typed search's a Hits list of them, with its
`evidence` grade), named here too (`from flowmem.sdk import Hit, Hits`).
"""
from __future__ import annotations

import datetime
import hashlib
import json
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union, overload

from . import paging
from .errors import InvalidField
from .listing_params import MAX_PAGE
from .sdk_types import AddResult, Hit, Hits, Session, StoredMessage, User, hits
from .validation import ADD_FIELDS, MESSAGE_FIELDS, SEARCH_FIELDS, unknown_fields

__all__ = ["AddResult", "Hit", "Hits", "MemoryAPI", "Session", "StoredMessage", "User", "add_request",
           "derived_request_id", "search_request", "add_call", "search_call"]

Message = Union[str, Mapping[str, Any]]
Messages = Union[str, Sequence[Message]]
Timestamp = Union[int, datetime.datetime, None]
S = TypeVar("S", bound="MemoryAPI")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _kind(value: Any) -> str:
    return type(value).__name__


def _body_alone(call: str, **defaulted: bool) -> None:
    """InvalidField naming the first keyword argument given beside a body (`defaulted[name]` False)."""
    for name, default in defaulted.items():
        if not default:
            raise InvalidField(name, "is not taken with a body (a dict): %s(body) reads everything from the body"
                               % call)


def _known(body: Mapping[str, Any], fields: Sequence[str], what: str, prefix: str = "") -> None:
    """InvalidField for the first field of `body` not in `fields`, as the core's strict check names it
    (validation.unknown_fields()). Checked before a body is sent: a server ignores such a field (HTTP
    is lenient, as the contract says), and the Python API refuses it, whichever class sends it."""
    unknown_fields(body, fields, prefix, True, what)


def required(value: Any, name: str, call: str) -> Any:
    """`value`, or InvalidField when the caller left it out (the core checks its type and content)."""
    if value is None:
        raise InvalidField(name, "is required: %s(..., %s=...)" % (call, name))
    return value


# -- the bodies -------------------------------------------------------------------------


def derived_request_id(body: Mapping[str, Any]) -> str:
    """The request_id of an Add that names none: `sdk-` and 32 hex digits of the sha256 of the
    canonical JSON (sorted keys, ASCII) of its user_id, session_id, messages and metadata, sent
    with `anchored: true`: the memory stores the Add under this id anchored where its first
    message lands (storage/ids.py anchored_id()), so the same words said twice are two Adds,
    and the same calls give the same ids in every run, in a Memory and through a server."""
    named = {key: body.get(key) for key in ("user_id", "session_id", "messages", "metadata")}
    # default=repr: a value JSON cannot hold still hashes; the core then refuses it, naming its field.
    canonical = json.dumps(named, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=repr)
    return "sdk-" + hashlib.sha256(canonical.encode("ascii")).hexdigest()[:32]


def _milliseconds(timestamp: Timestamp) -> Optional[int]:
    if timestamp is None or (type(timestamp) is int):
        return timestamp
    if isinstance(timestamp, datetime.datetime):
        if timestamp.utcoffset() is None:  # a naive time would be read in whatever zone the machine is in
            raise InvalidField("timestamp", "must be timezone-aware (datetime.now(timezone.utc)), got a naive datetime")
        return (timestamp - _EPOCH) // datetime.timedelta(milliseconds=1)  # exact, where a float is not
    raise InvalidField("timestamp", "must be Unix milliseconds (an int) or a timezone-aware datetime, got %s"
                       % _kind(timestamp))


def _messages(messages: Any, role: str, timestamp: Optional[int]) -> List[Dict[str, Any]]:
    """The body's messages: a string is one message of `role`; a list holds strings and message dicts.
    `timestamp` dates every message that has none of its own."""
    if isinstance(messages, str):
        messages = [messages]
    elif not isinstance(messages, (list, tuple)):
        raise InvalidField("messages", "must be a string, a list of messages (strings or message dicts) "
                           "or an Add body (a dict), got %s" % _kind(messages))
    out = []
    for i, message in enumerate(messages):
        if isinstance(message, str):
            built: Dict[str, Any] = {"role": role, "content": message}
        elif isinstance(message, Mapping):
            built = dict(message)
            _known(built, MESSAGE_FIELDS, "an Add message", "messages[%d]." % i)
        else:
            raise InvalidField("messages[%d]" % i, "must be a string or a message dict (role, content), got %s"
                               % _kind(message))
        if timestamp is not None and built.get("timestamp") is None:
            built["timestamp"] = timestamp
        out.append(built)
    return out


def add_request(messages: Messages, user_id: Optional[str], session_id: str = "default", role: str = "user",
                metadata: Optional[Mapping[str, Any]] = None, timestamp: Timestamp = None,
                request_id: Optional[str] = None) -> Dict[str, Any]:
    """The Add body of MemoryAPI.add's keyword form (its docstring says what each argument is)."""
    user_id = required(user_id, "user_id", "add")
    if not isinstance(role, str):
        raise InvalidField("role", "must be a string, got %s" % _kind(role))
    body: Dict[str, Any] = {"user_id": user_id, "session_id": session_id,
                            "messages": _messages(messages, role, _milliseconds(timestamp))}
    if metadata is not None:
        if not isinstance(metadata, Mapping):
            raise InvalidField("metadata", "must be a dict, got %s" % _kind(metadata))
        body["metadata"] = dict(metadata)
    if request_id is None:  # each call a new Add: its id anchored where its messages land (derived_request_id())
        return dict({"request_id": derived_request_id(body)}, **body, anchored=True)
    return dict({"request_id": request_id}, **body)


def search_request(query: str, user_id: Optional[str], limit: int = 10, filters: Optional[Mapping[str, Any]] = None,
                   options: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The Search body of MemoryAPI.search's keyword form."""
    if not isinstance(query, str):
        raise InvalidField("query", "must be a string (the question) or a Search body (a dict), got %s"
                           % _kind(query))
    user_id = required(user_id, "user_id", "search")
    if type(limit) is not int or limit < 0:
        raise InvalidField("limit", "must be an int of 0 or more, got %r" % (limit,))
    body: Dict[str, Any] = {"query": query, "user_id": user_id, "top_k": limit}
    if filters is not None:
        if not isinstance(filters, Mapping):
            raise InvalidField("filters", "must be a dict (session_id, since, until, role, metadata), got %s"
                               % _kind(filters))
        body["filters"] = dict(filters)
    if options is not None:
        if isinstance(options, str) or not isinstance(options, Sequence):
            raise InvalidField("options", "must be a list of strings, got %s" % _kind(options))
        body["options"] = list(options)
    return body


def add_call(messages: Any, user_id: Optional[str] = None, session_id: str = "default", role: str = "user",
             metadata: Optional[Mapping[str, Any]] = None, timestamp: Timestamp = None,
             request_id: Optional[str] = None) -> Tuple[Mapping[str, Any], bool]:
    """The body add() sends, and whether its answer is read as an AddResult (False: `messages` is
    an Add body, sent as it is and answered with the contract's dict; no other argument is taken)."""
    if isinstance(messages, Mapping):
        _body_alone("add", user_id=user_id is None, session_id=session_id == "default", role=role == "user",
                    metadata=metadata is None, timestamp=timestamp is None, request_id=request_id is None)
        _known(messages, ADD_FIELDS, "an Add")
        for i, message in enumerate(messages.get("messages") or ()):
            if isinstance(message, Mapping):
                _known(message, MESSAGE_FIELDS, "an Add message", "messages[%d]." % i)
        return messages, False
    return add_request(messages, user_id, session_id, role, metadata, timestamp, request_id), True


def search_call(query: Any, user_id: Optional[str] = None, limit: int = 10,
                filters: Optional[Mapping[str, Any]] = None,
                options: Optional[Sequence[str]] = None) -> Tuple[Mapping[str, Any], bool]:
    """The body search() sends, and whether its answer is read as Hits (False: `query` is a Search body)."""
    if isinstance(query, Mapping):
        _body_alone("search", user_id=user_id is None, limit=limit == 10, filters=filters is None,
                    options=options is None)
        _known(query, SEARCH_FIELDS, "a Search")
        return query, False
    return search_request(query, user_id, limit, filters, options), True


def list_limit(limit: Optional[int]) -> Optional[int]:
    """How many messages list() returns at most (None: all); InvalidField naming `limit` otherwise."""
    if limit is not None and (type(limit) is not int or limit < 1):
        raise InvalidField("limit", "must be an int of 1 or more, or None for every message, got %r" % (limit,))
    return limit


def page_size(limit: Optional[int], got: int) -> int:
    """The size of list()'s next page: what is still wanted, at most a page's maximum."""
    return MAX_PAGE if limit is None else min(MAX_PAGE, limit - got)


# -- the mixin --------------------------------------------------------------------------


class MemoryAPI:
    """The keyword calls, over the dict-level calls the class defines (Memory, Client)."""

    if TYPE_CHECKING:  # what the class provides; declared for the type checker only
        def add_body(self, body: Mapping[str, Any]) -> Dict[str, Any]: ...

        def search_body(self, body: Mapping[str, Any]) -> Dict[str, Any]: ...

        def get_message(self, user_id: str, message_id: str) -> Dict[str, Any]: ...

        def list_messages(self, user_id: str, session_id: Optional[str] = ..., since: Any = ..., until: Any = ...,
                          limit: Any = ..., cursor: Optional[str] = ..., order: Any = ...) -> Dict[str, Any]: ...

        def list_sessions(self, user_id: str, limit: Any = ..., cursor: Optional[str] = ...) -> Dict[str, Any]: ...

        def list_users(self, limit: Any = ..., cursor: Optional[str] = ...) -> Dict[str, Any]: ...

        def delete_message(self, user_id: str, message_id: str) -> Dict[str, Any]: ...

        def close(self) -> None: ...

    @overload
    def add(self, messages: Mapping[str, Any]) -> Dict[str, Any]: ...

    @overload
    def add(self, messages: Messages, *, user_id: Optional[str] = ..., session_id: str = ..., role: str = ...,
            metadata: Optional[Mapping[str, Any]] = ..., timestamp: Timestamp = ...,
            request_id: Optional[str] = ...) -> AddResult: ...

    def add(self, messages: Any, *, user_id: Optional[str] = None, session_id: str = "default", role: str = "user",
            metadata: Optional[Mapping[str, Any]] = None, timestamp: Timestamp = None,
            request_id: Optional[str] = None) -> Any:
        """Store messages of a user's session; an AddResult.

        messages: a string (one message of `role`), a list of strings and message dicts
            (`{"role", "content", "timestamp"?, "metadata"?}`), or an Add body (a dict: the
            contract's call, answered with its dict; no other argument is taken then).
        user_id: whose memory (required); session_id: the conversation ("default").
        role: the role of the plain-text messages ("user").
        metadata: a dict stored with every message (a message's own keys win).
        timestamp: Unix ms or a timezone-aware datetime, for messages without one of their own;
            without any, a message is dated when the Add arrives.
        request_id: the Add's idempotency key (a retry with it stores nothing twice: `stored` False).
            None: every call stores its messages, the same words said again included (a Client's
            own retries of a call, sent only when nothing was written, store it once).
        """
        body, typed = add_call(messages, user_id, session_id, role, metadata, timestamp, request_id)
        answer = self.add_body(body)
        return AddResult.from_dict(answer) if typed else answer

    @overload
    def search(self, query: Mapping[str, Any]) -> Dict[str, Any]: ...

    @overload
    def search(self, query: str, *, user_id: Optional[str] = ..., limit: int = ...,
               filters: Optional[Mapping[str, Any]] = ..., options: Optional[Sequence[str]] = ...) -> Hits: ...

    def search(self, query: Any, *, user_id: Optional[str] = None, limit: int = 10,
               filters: Optional[Mapping[str, Any]] = None, options: Optional[Sequence[str]] = None) -> Any:
        """The evidence in a user's memory for `query`, best first: Hits, a list of Hit whose `evidence`
        grades them ("strong", "weak" or "none": nothing found, the Hits a fallback; sdk_types.Hits).

        query: the question, or a Search body (a dict: answered with the contract's dict).
        user_id: whose memory (required); limit: at most this many hits (10).
        filters: {"session_id", "since", "until", "role", "metadata": {key: value}}, each optional.
        options: a multiple-choice question's answer options (they steer the evidence sought).
        """
        body, typed = search_call(query, user_id, limit, filters, options)
        answer = self.search_body(body)
        return hits(answer) if typed else answer

    def get(self, message_id: str, *, user_id: Optional[str] = None) -> StoredMessage:
        """One stored message of the user by its id; NotFound if the user has no such message."""
        return StoredMessage.from_dict(self.get_message(required(user_id, "user_id", "get"), message_id))

    def list(self, *, user_id: Optional[str] = None, session_id: Optional[str] = None, since: Any = None,
             until: Any = None, metadata: Optional[Mapping[str, Any]] = None, limit: Optional[int] = 100,
             order: str = "asc") -> List[StoredMessage]:
        """A user's stored messages, oldest first (`order` "desc": newest first), following the pages.

        session_id: only that session's; since/until: only those timed from `since` (inclusive)
        to `until` (exclusive), ISO-8601 or Unix ms; metadata: only those whose metadata has
        each of these keys with an equal value; limit: at most this many (None: all).
        """
        user_id, limit = required(user_id, "user_id", "list"), list_limit(limit)
        extra = {} if metadata is None else {"metadata": metadata}
        out: List[StoredMessage] = []
        cursor = None
        while True:
            page = self.list_messages(user_id, session_id=session_id, since=since, until=until,
                                      limit=page_size(limit, len(out)), cursor=cursor, order=order, **extra)
            out.extend(StoredMessage.from_dict(m) for m in page["data"])
            cursor = page["next_cursor"]
            if cursor is None or (limit is not None and len(out) >= limit):
                return out

    def sessions(self, user_id: str) -> List[Session]:
        """Every session of the user, in the order they were created."""
        return [Session.from_dict(s) for s in paging.walk(lambda cursor: self.list_sessions(user_id, MAX_PAGE, cursor))]

    def users(self) -> List[User]:
        """Every user held, in the order they first added."""
        return [User.from_dict(u) for u in paging.walk(lambda cursor: self.list_users(MAX_PAGE, cursor))]

    def delete(self, message_id: str, *, user_id: Optional[str] = None) -> bool:
        """Forget one message as completely as a session delete forgets a session; False if there
        was no such message. The user's other messages keep their ids."""
        return bool(self.delete_message(required(user_id, "user_id", "delete"), message_id)["deleted"])

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
