"""The typed results of the Python API (sdk.py): frozen dataclasses read from the contract's dicts.

Each is built by its from_dict() from the dict that Memory or a server answers, and keeps
that dict as `raw` (not compared, not shown), so a field a newer server adds is still
reachable. Fields a server older than them does not send take their "nothing to say"
value (`stored` True, no metadata). Sequences are tuples, so a result does not change
under whoever holds it; `signals` and `metadata` are dicts, left out of the hash. A typed
search answers Hits: a list of Hit with the search's `evidence` grade as an attribute.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple


@dataclass(frozen=True)
class AddResult:
    """What an Add did. `stored` False: this request_id was stored before and nothing was written
    (`body_differs` True: that earlier Add's body differed, and this one's content was NOT stored).
    `dated_on_receipt`: how many messages had no timestamp and were dated when the Add arrived.
    `ignored_fields`: fields a server ignored (only over HTTP; the Python call refuses them)."""

    request_id: str
    user_id: str
    session_id: str
    stored: bool
    dated_on_receipt: int
    body_differs: bool
    ignored_fields: Tuple[str, ...]
    raw: Dict[str, Any] = field(repr=False, compare=False, hash=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AddResult":
        # .get with defaults: a server older than these fields says nothing of them.
        return cls(d["request_id"], d["user_id"], d["session_id"], bool(d.get("stored", True)),
                   int(d.get("dated_on_receipt", 0)), bool(d.get("body_differs", False)),
                   tuple(d.get("ignored_fields", ())), dict(d))


@dataclass(frozen=True)
class Hit:
    """One search result: a view (a message, a window or a segment of a session) with its
    provenance: the ids of the stored messages it is made of, and the signals that ranked it."""

    id: str
    content: str
    score: float
    created_at: Optional[str]
    view: str
    source_message_ids: Tuple[str, ...]
    session_id: str
    role: Optional[str]
    signals: Dict[str, Any] = field(hash=False)
    metadata: Dict[str, Any] = field(hash=False)
    raw: Dict[str, Any] = field(repr=False, compare=False, hash=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Hit":
        return cls(d["id"], d["content"], d["score"], d.get("created_at"), d.get("view", ""),
                   tuple(d.get("source_message_ids", ())), d.get("session_id", ""), d.get("role"),
                   dict(d.get("signals") or {}), dict(d.get("metadata") or {}), dict(d))


@dataclass(frozen=True)
class StoredMessage:
    """A message as stored, verbatim, with its public id, position in its session and times
    (`dated_on_receipt` True: it came without a timestamp and is dated when its Add arrived)."""

    id: str
    user_id: str
    session_id: str
    position: int
    role: str
    content: str
    timestamp: Optional[int]
    created_at: Optional[str]
    request_id: str
    metadata: Dict[str, Any] = field(hash=False)
    dated_on_receipt: bool
    raw: Dict[str, Any] = field(repr=False, compare=False, hash=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "StoredMessage":
        return cls(d["id"], d["user_id"], d["session_id"], d["position"], d["role"], d["content"],
                   d.get("timestamp"), d.get("created_at"), d.get("request_id", ""), dict(d.get("metadata") or {}),
                   bool(d.get("dated_on_receipt", False)), dict(d))


@dataclass(frozen=True)
class Session:
    """A session of a user: how many messages it holds, its first and last times."""

    session_id: str
    messages: int
    first_at: Optional[str]
    last_at: Optional[str]
    raw: Dict[str, Any] = field(repr=False, compare=False, hash=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Session":
        return cls(d["session_id"], d["messages"], d.get("first_at"), d.get("last_at"), dict(d))


@dataclass(frozen=True)
class User:
    """A user held: how many sessions and messages."""

    user_id: str
    sessions: int
    messages: int
    raw: Dict[str, Any] = field(repr=False, compare=False, hash=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "User":
        return cls(d["user_id"], d["sessions"], d["messages"], dict(d))


class Hits(List[Hit]):
    """A typed search's result: its Hits, best first, as a list (equal to a plain list of the same
    Hits), with the search's grade beside them as `evidence`: "strong", "weak" or "none" (None: a
    server older than the grade sent none). "none": nothing matched in words (the Hits are a
    fallback: the user's latest messages, or the nearest in meaning) or nothing in the memory
    answers, so a caller can say nothing was found; "weak": some words matched, but the Hits may
    well not answer (something the memory never mentions, or asked of the wrong person), so a
    caller hedges; "strong" otherwise (flowmem/retrieval/strength.py, docs/api.md)."""

    evidence: Optional[str]

    def __init__(self, items: Iterable[Hit] = (), evidence: Optional[str] = None) -> None:
        super().__init__(items)
        self.evidence = evidence

    def __repr__(self) -> str:
        return "Hits(%s, evidence=%r)" % (list.__repr__(self), self.evidence)


def hits(response: Mapping[str, Any]) -> Hits:
    """The Hits of a Search response, with its `evidence` grade."""
    return Hits((Hit.from_dict(item) for item in response["data"]), response.get("evidence"))
