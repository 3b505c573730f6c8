"""What each route does: a Call (routes.py) in, a Response out.

One function per endpoint, named in its route's record (table.py). Each takes the
request's route values (path values percent-decoded, query parameters by name), its
body and what the App serves with (the Memory, the metrics, the pages), and answers
with a Response (responses.py); a FlowmemError it raises becomes its status and error
body in App. What a value means (a limit's range, a cursor, a time, an id) is Memory's
to check, with a 422 naming it: Memory's listing calls take a number or a time as its
text too (`limit=20`, `since=1683554160000`), as a query string gives them. Here only
what HTTP adds: a blank `cursor=` means the first page, an import's records are for
the path's user, and what is stored is counted in the metrics.
"""
from __future__ import annotations

from typing import Any, Dict

from ..decoding import decode_json_object
from ..errors import InvalidField
from ..surrogates import refuse_unpaired
from .metrics import CONTENT_TYPE as METRICS_TYPE
from .responses import Response, json_response
from .routes import Call


def _page(query: Dict[str, str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if "limit" in query:
        out["limit"] = query["limit"]
    if query.get("cursor"):
        out["cursor"] = query["cursor"]
    return out


# -- the challenge's routes -----------------------------------------------------------

def add(call: Call) -> Response:
    """POST /add: store one Add."""
    request = decode_json_object(call.body)
    # Not strict: the contract has unknown fields ignored; the answer names them (ignored_fields).
    result = call.memory.add_body(request, strict=False)
    messages = request.get("messages")
    call.metrics.stored(1, len(messages) if isinstance(messages, list) else 0)
    return json_response(200, result)


def search(call: Call) -> Response:
    """POST /search: a user's ranked evidence."""
    return json_response(200, call.memory.search_body(decode_json_object(call.body), strict=False))


def health(call: Call) -> Response:
    return json_response(200, call.memory.health())


def metrics(call: Call) -> Response:
    return Response(200, [("Content-Type", METRICS_TYPE), ("Cache-Control", "no-store")],
                    call.metrics.render().encode("utf-8"))


# -- management: listing, deleting, export and import -----------------------------------

def list_users(call: Call) -> Response:
    return json_response(200, call.memory.list_users(**_page(call.match.query)))


def list_sessions(call: Call) -> Response:
    return json_response(200, call.memory.list_sessions(call.match.params["user_id"], **_page(call.match.query)))


def list_messages(call: Call) -> Response:
    query = call.match.query
    kwargs = _page(query)
    kwargs.update((name, query[name]) for name in ("session_id", "since", "until", "order", "metadata")
                  if name in query)
    return json_response(200, call.memory.list_messages(call.match.params["user_id"], **kwargs))


def get_message(call: Call) -> Response:
    params = call.match.params
    return json_response(200, call.memory.get_message(params["user_id"], params["message_id"]))


def delete_message(call: Call) -> Response:
    params = call.match.params
    return json_response(200, call.memory.delete_message(params["user_id"], params["message_id"]))


def delete_session(call: Call) -> Response:
    params = call.match.params
    return json_response(200, call.memory.delete_session(params["user_id"], params["session_id"]))


def delete_user(call: Call) -> Response:
    return json_response(200, call.memory.delete_user(call.match.params["user_id"]))


def export(call: Call) -> Response:
    return json_response(200, call.memory.export_page(call.match.params["user_id"], **_page(call.match.query)))


def import_records(call: Call) -> Response:
    """`{"records": [Add bodies]}`, each for the path's user (its user_id absent or equal)."""
    user_id = call.match.params["user_id"]
    body = decode_json_object(call.body)
    # Its records are Adds, each checked whole as one (validation.parse_add()); the rest is checked here.
    refuse_unpaired({key: value for key, value in body.items() if key != "records"})
    records = body.get("records")
    if not isinstance(records, list):
        raise InvalidField("records", "must be an array of Add bodies")
    bodies = []
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise InvalidField("records[%d]" % i, "must be an object (an Add body)")
        if record.get("user_id", user_id) != user_id:
            raise InvalidField("records[%d].user_id" % i, "must be absent or the path's user id")
        bodies.append(dict(record, user_id=user_id))
    result = call.memory.import_records(bodies, strict=False)  # lenient as Add is over HTTP: unknown fields named
    call.metrics.stored(result.get("stored", 0), result.get("messages", 0))
    return json_response(200, result)


# -- what the server shows about itself (pages.py) ---------------------------------------

def openapi(call: Call) -> Response:
    return call.pages.openapi()


def docs(call: Call) -> Response:
    return call.pages.docs()


def inspector(call: Call) -> Response:
    return call.pages.inspector()
