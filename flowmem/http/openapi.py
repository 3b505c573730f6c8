"""The OpenAPI 3.1 document of the HTTP API, made from the route table (table.py) and the schemas here.

`document()` walks the routes an App serves: each becomes an operation whose path
parameters come from its template, whose query parameters are the route's own, and
whose security and statuses follow from what the route is (behind the key, a POST
with a JSON body, a write, a route with values to check). Its words (summary,
description, body and answer schemas) are the route's own record's (`Route.doc`), so a
route cannot be served and left out of the document, nor documented and not served;
each parameter's meaning is PARAMETERS' unless the route words it itself
(tests/test_openapi.py drives a request to every operation and checks its status is
documented).

Statuses are those the server really gives a request to that route: any request can
be refused by the browser checks (403, 421), the connection loop (400 malformed, 408
not arrived in time, 431 headers too large, 429 too many in flight, 503 too many large
bodies held) before its route is known; the rest follow from the route. 405 (another
method on a known path) is no operation's: it is in the description.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import __version__
from .routes import Route

STRING_OR_NULL = {"type": ["string", "null"]}
TIME = {"oneOf": [{"type": "integer", "description": "Unix milliseconds"},
                  {"type": "string", "description": "ISO-8601 date or date and time (UTC unless it says)"}]}


def _object(required: Sequence[str], **properties: Any) -> Dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": properties}


def _ref(name: str) -> Dict[str, str]:
    return {"$ref": "#/components/schemas/" + name}


def _page(item: str) -> Dict[str, Any]:
    return _object(["data", "next_cursor"], data={"type": "array", "items": _ref(item)},
                   next_cursor=dict(STRING_OR_NULL, description="pass as `cursor` for the next page; null: no more"))


_STR = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_IGNORED = {"type": "array", "items": _STR, "description": "present when the body held fields flowmem does not "
            "know (ignored, as the contract says): their names, a message's as messages[i].name"}
_ID = {"type": "string", "minLength": 1, "description": "any text without control characters"}
EVIDENCE = ("how strong the evidence of the items is (the items come back whatever it says): none: nothing "
            "matched in words (the items are a fallback) or nothing in the memory answers, so a caller can say "
            "nothing was found; weak: some words matched but the items may well not answer (something the memory "
            "never mentions, or asked of the wrong person), so a caller hedges; strong: otherwise. Calibrated: "
            "thresholds learned on a tuning half of answerable and unanswerable questions (docs/api.md)")
SCHEMAS: Dict[str, Any] = {
    "Error": _object(["detail"], detail=_object(["reason"], reason=dict(_STR, description="what to change"))),
    "Metadata": {"type": "object", "maxProperties": 32, "additionalProperties": {"type": ["string", "number",
                                                                                             "boolean", "null"]},
                 "description": "keys of at most 64 characters; values strings (at most 512 characters), numbers "
                 "or booleans (null: the key absent); at most 4,096 bytes as JSON"},
    "NewMessage": _object(["role", "content"], role=_STR, content=_STR,
                          timestamp={"type": ["integer", "null"], "minimum": 10 ** 11, "description": "Unix ms"},
                          metadata=dict(_ref("Metadata"), description="merged over the Add's metadata")),
    "AddBody": _object(["request_id", "user_id", "session_id", "messages"], request_id=_ID, user_id=_ID,
                       session_id=_ID, messages={"type": "array", "minItems": 1, "items": _ref("NewMessage")},
                       metadata=dict(_ref("Metadata"), description="for every message of the Add"),
                       anchored=dict(_BOOL, description="true: request_id names this body only, and the Add is "
                                     "stored under an id anchored where its first message lands (the answer's "
                                     "request_id), so the same body sent later is a new Add")),
    "AddResult": _object(["success", "request_id", "user_id", "session_id", "stored", "dated_on_receipt"],
                         success={"const": True}, request_id=_STR, user_id=_STR, session_id=_STR,
                         stored=dict(_BOOL, description="false: this (request_id, user_id) was stored before; "
                                     "nothing was written"),
                         dated_on_receipt=dict(_INT, description="messages of an Add with no timestamps, dated "
                                               "with the time it arrived"),
                         body_differs=dict(_BOOL, description="present, true, when the earlier Add of this "
                                           "request_id had another body (the new one was not stored)"),
                         ignored_fields=_IGNORED),
    "Filters": dict(_object([], session_id=_STR, since=dict(TIME, description="inclusive"),
                            until=dict(TIME, description="exclusive"), role=_STR,
                            metadata=dict(_ref("Metadata"), description="every key and value held")),
                    additionalProperties=False),
    "SearchBody": _object(["query", "user_id", "top_k"], query=_STR, user_id=_ID,
                          top_k={"type": "integer", "minimum": 0, "description": "above the cap it is clamped"},
                          options={"type": "array", "items": _STR}, filters=_ref("Filters")),
    "Item": _object(["id", "score", "created_at", "view", "session_id", "content", "source_message_ids", "signals",
                     "role"],
                    id=_STR, score={"type": "number"}, created_at=STRING_OR_NULL,
                    view={"enum": ["message", "window", "segment"]}, session_id=_STR, content=_STR,
                    source_message_ids={"type": "array", "items": _STR},
                    role=dict(_STR, description="the role of the item's first message"),
                    signals={"type": "object", "additionalProperties": {"type": ["number", "string"]}},
                    metadata=dict(_ref("Metadata"), description="what all the item's messages hold alike")),
    "SearchResult": _object(["data", "evidence"], data={"type": "array", "items": _ref("Item")},
                            evidence={"enum": ["strong", "weak", "none"], "description": EVIDENCE},
                            embedder=dict(_object([], waiting=_INT, error=_STR), description=(
                                "only with an embedder configured (docs/embedder.md): how many of the user's "
                                "messages have no vector yet, or why the question's did not come")),
                            ignored_fields=_IGNORED),
    "Health": _object(["status", "version"], status=_STR, version=_STR, sqlite_version=_STR,
                      schema_version=_INT),
    "Message": _object(["id", "user_id", "session_id", "position", "role", "content", "timestamp", "created_at",
                        "request_id"], id=_STR, user_id=_STR, session_id=_STR,
                       position={"type": "integer", "minimum": 1}, role=_STR, content=_STR,
                       timestamp={"type": ["integer", "null"]}, created_at=STRING_OR_NULL, request_id=_STR,
                       dated_on_receipt=dict(_BOOL, description="the timestamp is when its Add arrived"),
                       metadata=_ref("Metadata")),
    "Session": _object(["session_id", "messages", "first_at", "last_at"], session_id=_STR, messages=_INT,
                       first_at=STRING_OR_NULL, last_at=STRING_OR_NULL),
    "User": _object(["user_id", "sessions", "messages"], user_id=_STR, sessions=_INT, messages=_INT),
    "MessagePage": _page("Message"),
    "SessionPage": _page("Session"),
    "UserPage": _page("User"),
    "ExportPage": _page("AddBody"),
    "DeleteSessionResult": _object(["deleted", "user_id", "session_id", "messages"], deleted={"type": "boolean"},
                                   user_id=_STR, session_id=_STR, messages=_INT),
    "DeleteMessageResult": _object(["deleted", "user_id", "message_id"], deleted={"type": "boolean"},
                                   user_id=_STR, message_id=_STR, session_id=_STR),
    "DeleteUserResult": _object(["deleted", "user_id"], deleted={"type": "boolean"}, user_id=_STR),
    "ImportBody": _object(["records"], records={"type": "array", "items": _ref("AddBody"),
                                                "description": "Add bodies; user_id absent or the path's"}),
    "ImportResult": _object(["requests", "stored", "already_stored", "messages"], requests=_INT, stored=_INT,
                            already_stored=_INT, messages=_INT),
}


PARAMETERS: Dict[str, Tuple[Dict[str, Any], str]] = {
    "user_id": (_STR, "the user's id, percent-encoded (a `/` as %2F)"),
    "session_id": (_STR, "a session id, percent-encoded"),
    "message_id": (_STR, "a message id (m-<tag>-<position>)"),
    "limit": ({"type": "integer", "minimum": 1, "maximum": 1000}, "items in a page (default 50)"),
    "cursor": (_STR, "the next_cursor of the previous page"),
    "since": (TIME, "only messages at or after this moment"),
    "until": (TIME, "only messages before this moment"),
    "order": ({"enum": ["asc", "desc"]}, "asc: oldest first (default); desc: newest first"),
    "metadata": (_STR, "a JSON object: only messages whose metadata holds every one of its keys and values"),
}

# How a path is read (flowmem/http/routes.py, rules 2-5), for the document's readers.
PATH_RULES = ("Paths: any run of leading slashes counts as one (//add is /add). A trailing slash is ignored after "
              "a literal segment (/add/, /users/u/sessions/) but not after a path value (/users/u/ is 404). A path "
              "value left empty takes its value from the query parameter of its name: "
              "DELETE /users/u/sessions/?session_id=.. deletes session `..`, GET /users//sessions?user_id=.. lists "
              "user `..` (browsers remove the dot segments . and .. from a path, even as %2E); a value given in "
              "both is 422. Every route refuses a query parameter it does not take (422) and a body unless it is "
              "a POST (400); a raw dot segment or a # in the target is 400. An absolute-form target "
              "(GET http://host/users) is served as its path.")
REASONS = {200: "OK", 400: "Malformed request or target, a body where the route takes none, or a body not a "
           "JSON object", 401: "Missing or wrong API key",
           403: "Request from a web page not allowed", 404: "Nothing by that name",
           408: "Request not sent whole within the request timeout", 413: "Body over the limit",
           415: "Body not labelled JSON", 421: "Host not answered by this server",
           422: "A field, parameter or path value is malformed (the reason names it)",
           429: "Too many requests in flight (Retry-After)", 431: "Headers over 64 KiB",
           503: "Database busy or failing, or too many large bodies held (Retry-After)",
           507: "Disk full; nothing written (Retry-After)"}
EVERY_ROUTE = (400, 403, 408, 421, 429, 431, 503)


def statuses(route: Route, keyed: bool) -> List[int]:
    """The statuses a request to `route` can get; `keyed`: the server has an API key."""
    out = {200, 422, *EVERY_ROUTE}  # 422: every route refuses a query parameter it does not take
    if route.needs_key and keyed:
        out.add(401)
    if route.method == "POST":
        out |= {413, 415}
    if route.writes:
        out.add(507)
    if route.doc.not_found:
        out.add(404)
    return sorted(out)


def _parameters(route: Route) -> List[Dict[str, Any]]:
    out = []
    own = dict(route.doc.parameters)
    for name in route.path_parameters():
        schema, text = PARAMETERS[name]
        out.append({"name": name, "in": "path", "required": True, "schema": schema,
                    "description": own.get(name, text)})
    for name in route.query:
        schema, text = PARAMETERS[name]
        out.append({"name": name, "in": "query", "required": False, "schema": schema,
                    "description": own.get(name, text)})
    return out


def _answer(schema: Optional[str]) -> Dict[str, Any]:
    if schema is None:
        return {}
    if "/" in schema:
        return {schema: {"schema": {"type": "object"} if "json" in schema else _STR}}
    return {"application/json": {"schema": _ref(schema)}}


def _operation(route: Route, keyed: bool) -> Dict[str, Any]:
    words = route.doc
    responses: Dict[str, Any] = {}
    for status in statuses(route, keyed):
        content = _answer(words.answer) if status == 200 else {"application/json": {"schema": _ref("Error")}}
        responses[str(status)] = {"description": REASONS[status], "content": content}
    out: Dict[str, Any] = {"operationId": route.action,
                           "summary": words.summary, "description": words.description,
                           "parameters": _parameters(route), "responses": responses,
                           "security": [{"bearer": []}, {"apiKey": []}] if route.needs_key else []}
    if words.body:
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(words.body)}}}
    return out


def document(routes: Sequence[Route], keyed: bool) -> Dict[str, Any]:
    """The OpenAPI 3.1 document of `routes` (an App's); `keyed`: the server has an API key."""
    paths: Dict[str, Dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.template, {})[route.method.lower()] = _operation(route, keyed)
    return {
        "openapi": "3.1.0",
        "info": {"title": "flowmem", "version": __version__,
                 "description": "Long-term memory for AI agents. Errors are {\"detail\": {\"reason\": ...}}. Path "
                 "values are percent-encoded (an id holding `/` is named with %2F). Every GET also answers HEAD; "
                 "another method on a known path is 405 with Allow. Routes behind the key take Authorization: "
                 "Bearer <key> (or Token <key>) or X-Api-Key: <key>, when the server has a key. " + PATH_RULES},
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"},
                                "apiKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}},
        },
    }
