"""The management routes: path values and query strings turned into Memory calls.

Each function takes the Memory, the route's Match (path values percent-decoded,
query parameters by name: routes.py) and the body, and returns the JSON body of the
answer. What a value means (a limit's range, a cursor, a time, an id) is Memory's to
check, with a 422 naming it: Memory's listing calls take a number or a time as its
text too (`limit=20`, `since=1683554160000`), as a query string gives them. Here only
what HTTP adds: a blank `cursor=` means the first page, and an import's records are
for the path's user.
"""
from __future__ import annotations

from typing import Any, Dict

from ..decoding import decode_json_object
from ..errors import InvalidField
from ..memory import Memory
from .routes import Match


def _page(query: Dict[str, str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if "limit" in query:
        out["limit"] = query["limit"]
    if query.get("cursor"):
        out["cursor"] = query["cursor"]
    return out


def list_users(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    return memory.list_users(**_page(match.query))


def list_sessions(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    return memory.list_sessions(match.params["user_id"], **_page(match.query))


def list_messages(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    kwargs = _page(match.query)
    kwargs.update((name, match.query[name]) for name in ("session_id", "since", "until", "order", "metadata")
                  if name in match.query)
    return memory.list_messages(match.params["user_id"], **kwargs)


def get_message(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    return memory.get_message(match.params["user_id"], match.params["message_id"])


def delete_message(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    return memory.delete_message(match.params["user_id"], match.params["message_id"])


def delete_session(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    return memory.delete_session(match.params["user_id"], match.params["session_id"])


def delete_user(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    return memory.delete_user(match.params["user_id"])


def export(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    return memory.export_page(match.params["user_id"], **_page(match.query))


def import_records(memory: Memory, match: Match, body: bytes) -> Dict[str, Any]:
    """`{"records": [Add bodies]}`, each for the path's user (its user_id absent or equal)."""
    user_id = match.params["user_id"]
    records = decode_json_object(body).get("records")
    if not isinstance(records, list):
        raise InvalidField("records", "must be an array of Add bodies")
    bodies = []
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise InvalidField("records[%d]" % i, "must be an object (an Add body)")
        if record.get("user_id", user_id) != user_id:
            raise InvalidField("records[%d].user_id" % i, "must be absent or the path's user id")
        bodies.append(dict(record, user_id=user_id))
    return memory.import_records(bodies)
