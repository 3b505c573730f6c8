"""The route table: every route flowmem serves, one record each, in the order it is documented.

A record (`Route`, routes.py) names the route's method and path template, its name
(the OpenAPI operationId), the endpoint that answers it (endpoints.py), its
documentation words (`Operation`: summary, description, body and answer schemas from
openapi.SCHEMAS, whether it answers 404, its own words for a parameter), and what the
server treats it as: behind the key or not (`open_if`: a setting that opens it), a
write (the writers' lane, the write lock, 507 when the disk is full), the query
parameters it takes, a lane of its own. Nothing else lists routes: App (api.py) routes
with this table, the OpenAPI document and /docs are made from it (openapi.py), the
metrics label requests with its templates and the connection loop picks a lane by it
(lanes.py). Adding a route is a record here and a function in endpoints.py.
"""
from __future__ import annotations

from typing import Tuple

from . import endpoints as e
from .routes import Operation, Route, Router

PAGE = ("limit", "cursor")
ROUTES: Tuple[Route, ...] = (
    Route("POST", "/add", "add", e.add, Operation(
        "Store one Add", "Stores all messages of the Add or none; idempotent on (request_id, user_id): a retry "
        "stores nothing and says so (stored false; body_differs when its body was another). An Add without "
        "any timestamp is dated with the time it arrived. Unknown fields are ignored and named in "
        "ignored_fields. The 200 comes after the messages are committed.",
        "AddBody", "AddResult"), writes=True),
    Route("POST", "/search", "search", e.search, Operation(
        "Search a user's memory", "Ranked evidence from the user's own messages, and `evidence`: how strong it is "
        "(strong, weak or none); an unknown user gets {\"data\": [], \"evidence\": \"none\"}. `filters` narrows the "
        "messages considered before ranking.", "SearchBody", "SearchResult")),
    Route("GET", "/health", "health", e.health, Operation("Status and versions", "Never any memory content.",
                                                          answer="Health"), needs_key=False),
    Route("GET", "/users", "list_users", e.list_users, Operation(
        "List users", "Users in the order they were first stored.", answer="UserPage"), query=PAGE),
    Route("DELETE", "/users/{user_id}", "delete_user", e.delete_user, Operation(
        "Delete a user", "Removes every trace of the user; deleting again answers deleted false.",
        answer="DeleteUserResult"), writes=True),
    Route("GET", "/users/{user_id}/sessions", "list_sessions", e.list_sessions, Operation(
        "List a user's sessions", "In the order the sessions were created.", answer="SessionPage"), query=PAGE),
    Route("DELETE", "/users/{user_id}/sessions/{session_id}", "delete_session", e.delete_session, Operation(
        "Delete a session", "Removes the session's messages, their index entries and the idempotency records of "
        "its Adds; always 200, deleted false when there was nothing to delete.", answer="DeleteSessionResult"),
        writes=True),
    Route("GET", "/users/{user_id}/messages", "list_messages", e.list_messages, Operation(
        "List a user's messages", "Oldest first (by session creation, then position) or newest first.",
        answer="MessagePage", parameters=(("session_id", "only this session's messages"),)),
        query=("session_id", "since", "until", "order", "metadata") + PAGE),
    Route("GET", "/users/{user_id}/messages/{message_id}", "get_message", e.get_message, Operation(
        "One message", "404 when no such message is the user's.", answer="Message", not_found=True)),
    Route("DELETE", "/users/{user_id}/messages/{message_id}", "delete_message", e.delete_message, Operation(
        "Delete one message", "Removes the message as completely as a session delete removes a session: the "
        "memory then answers as if it had never been added, and the session's other messages keep their ids. "
        "Always 200, deleted false when the user has no such message; a session's last message takes the "
        "session with it.", answer="DeleteMessageResult"), writes=True),
    Route("GET", "/users/{user_id}/export", "export", e.export, Operation(
        "Export a user's Adds", "One Add body per stored Add, in the order they were stored, a page at a time "
        "(limit 1 to 1000, default 100). Importing them replays them as Adds.", answer="ExportPage",
        parameters=(("limit", "Add bodies in a page (default 100)"),)), query=PAGE),
    Route("POST", "/users/{user_id}/import", "import_records", e.import_records, Operation(
        "Import Add bodies", "Replays each record as an Add for the path's user: idempotent by (request_id, "
        "user_id), so importing an export twice stores it once.", "ImportBody", "ImportResult"),
        writes=True, lane="import"),
    Route("GET", "/metrics", "metrics", e.metrics, Operation(
        "Metrics", "Prometheus text format 0.0.4: requests by route template and status, latency by route "
        "template, Adds and messages stored, database size, requests in flight.",
        answer="text/plain; version=0.0.4"), open_if="metrics_public"),
    Route("GET", "/openapi.json", "openapi", e.openapi, Operation(
        "This document", "OpenAPI 3.1, made from the server's route table.", answer="application/json"),
        needs_key=False),
    Route("GET", "/docs", "docs", e.docs, Operation(
        "This document as a web page", "Made from /openapi.json, no scripts.", answer="text/html"), needs_key=False),
    Route("GET", "/", "inspector_root", e.inspector, Operation(
        "The inspector page", "Browse users, sessions and messages, search and delete, with the key typed into "
        "the page. Holds no memory content itself.", answer="text/html"), needs_key=False),
    Route("GET", "/ui", "inspector", e.inspector, Operation(
        "The inspector page", "The same page as GET /.", answer="text/html"), needs_key=False),
)

ROUTER = Router(ROUTES)  # what a request's lane, whether it writes and its canonical path are found with
