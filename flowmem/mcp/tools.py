"""The MCP tools: add_memory, search_memory, list_memories, delete_memories, each a call on Memory.

Unknown arguments are refused (each schema is closed), as the Python API refuses unknown
fields: the HTTP API alone ignores them, as the contract says, and names them.

A tool's arguments use the contract's field names (user_id, session_id, messages,
query, top_k, filters ...) and its result is exactly what Memory returns, the body the
HTTP API would send (search_memory's with its `evidence` grade beside the items): as
JSON text (every protocol revision shows a model text) and as `structuredContent`, which
`outputSchema` describes. A failure the caller causes
(arguments that do not fit the schema, a FlowmemError from the core: a bad field, a bad
cursor, a busy database) is a tool result with `isError: true` and the reason as its
text, so that the model reads it and can correct the call; anything else is a bug and
reaches the protocol layer as an exception.

add_memory's request_id, when the caller gives none, is anchored where the messages land
(sdk.derived_request_id(), as the Python API's add() does): every call stores its messages,
the same words said twice in a chat ("ok" ... "ok") included, which a digest of the
arguments alone took for a retry and dropped. A call either stores or answers an error with
nothing written: a caller that must retry a call whose answer it lost gives its own
request_id, stored once however often it is sent.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional

from ..errors import FlowmemError, InvalidField
from ..memory import Memory
from ..sdk import derived_request_id
from . import arguments

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
ID: Dict[str, Any] = {"type": "string", "minLength": 1}
WHEN = "ISO-8601 time (2023-05-08 or 2023-05-08T13:56:00Z) or Unix milliseconds"
TIME: Dict[str, Any] = {"type": ["string", "integer"], "description": WHEN}
TIMESTAMP: Dict[str, Any] = {"type": "integer", "description": "when it was said, in Unix milliseconds (not seconds)"}
METADATA: Dict[str, Any] = {
    "type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]},
    "description": "tags to keep with it (source, agent, topic ...): at most 32 keys, values strings, numbers or "
                   "booleans; filter by them with filters.metadata"}
USER = dict(ID, description="whose memory: every call names one user, and sees only that user's memories")
SESSION = dict(ID, description="the conversation the messages belong to (any string: a date, a thread id ...)")
MESSAGE: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "role": {"type": "string", "description": "who said it: user, assistant, or a name"},
        "content": {"type": "string", "description": "the text, stored verbatim"},
        "timestamp": TIMESTAMP,
        "metadata": METADATA,
    },
    "required": ["role", "content"],
    "additionalProperties": False,
}


class Tool(NamedTuple):
    """One tool as tools/list shows it, and the function that runs it."""

    name: str
    title: str
    description: str
    input_schema: Dict[str, Any]
    output_schema: Dict[str, Any]
    annotations: Dict[str, Any]
    run: Callable[[Memory, Mapping[str, Any]], Dict[str, Any]]

    def listing(self) -> Dict[str, Any]:
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.input_schema, "outputSchema": self.output_schema,
                "annotations": dict(self.annotations, title=self.title)}


def _object(properties: Dict[str, Any], required: List[str], closed: bool = True) -> Dict[str, Any]:
    """An object schema; `closed` refuses properties it does not name (a misspelt argument is named, not ignored)."""
    schema: Dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if closed:
        schema["additionalProperties"] = False
    return schema


def _schema(properties: Dict[str, Any], required: List[str], closed: bool = True) -> Dict[str, Any]:
    return dict(_object(properties, required, closed), **{"$schema": SCHEMA_DIALECT})


def add_memory(memory: Memory, args: Mapping[str, Any]) -> Dict[str, Any]:
    if (args.get("messages") is None) == (args.get("content") is None):
        raise InvalidField("messages", "or content must be given, one of them: messages an array of "
                           "{role, content, timestamp}, content the text of one message")
    if args.get("content") is not None:
        message: Dict[str, Any] = {"role": args.get("role") or "user", "content": args["content"]}
        message.update(arguments.present(args, "timestamp"))
        messages: Any = [message]
    else:
        if args.get("role") is not None or args.get("timestamp") is not None:
            raise InvalidField("role" if args.get("role") is not None else "timestamp",
                               "goes with content only; with messages, give each message its own")
        messages = [dict(m, **arguments.present(m, "timestamp")) for m in args["messages"]]
    body: Dict[str, Any] = {"user_id": args["user_id"], "session_id": args["session_id"], "messages": messages}
    body.update(arguments.present(args, "metadata"))
    if args.get("request_id") is None:  # a blank one goes on to the core, which refuses it as it would over HTTP
        body.update(request_id=derived_request_id(body), anchored=True)
    else:
        body["request_id"] = args["request_id"]
    try:
        return memory.add_body(body)
    except InvalidField as e:
        # The core names the one message it was given (`messages[0].timestamp`); the caller gave `timestamp`.
        if args.get("content") is None or not e.field.startswith(_SINGLE):
            raise
        raise InvalidField(e.field[len(_SINGLE):], e.reason[len(e.field) + 1:]) from e


_SINGLE = "messages[0]."  # the message add_memory makes of `content`, `role` and `timestamp`


def search_memory(memory: Memory, args: Mapping[str, Any]) -> Dict[str, Any]:
    body: Dict[str, Any] = {"query": args["query"], "user_id": args["user_id"], "top_k": 10}
    body.update(arguments.present(args, "top_k"))
    filters = args.get("filters")
    if filters:
        body["filters"] = arguments.present(filters, *filters)
    return memory.search(body)


def list_memories(memory: Memory, args: Mapping[str, Any]) -> Dict[str, Any]:
    options = arguments.present(args, "session_id", "since", "until", "limit", "cursor", "order", "metadata")
    return memory.list_messages(args["user_id"], **options)


def delete_memories(memory: Memory, args: Mapping[str, Any]) -> Dict[str, Any]:
    session_id, everything = args.get("session_id"), args.get("all_sessions") is True
    if args.get("message_id") is not None:
        if session_id is not None or everything:
            raise InvalidField("message_id", "goes alone: give message_id to delete one message, session_id to "
                               "delete a session, or all_sessions: true to delete every session")
        return memory.delete_message(args["user_id"], args["message_id"])
    if session_id is not None and everything:
        raise InvalidField("session_id", "and all_sessions cannot go together: give session_id to delete one "
                           "session, or all_sessions: true to delete every session of the user")
    if session_id is not None:
        return memory.delete_session(args["user_id"], session_id)
    if not everything:
        raise InvalidField("session_id", "is required to delete one session; to delete every session of the "
                           "user, give all_sessions: true instead")
    return memory.delete_user(args["user_id"])


STRINGS = {"type": "array", "items": {"type": "string"}}
ITEM = {"type": "object", "required": ["id", "score", "content"], "properties": {
    "id": {"type": "string"}, "score": {"type": "number"}, "content": {"type": "string"},
    "view": {"type": "string"}, "session_id": {"type": "string"}, "role": {"type": "string"},
    "created_at": {"type": ["string", "null"]}, "source_message_ids": STRINGS, "signals": {"type": "object"},
    "metadata": {"type": "object"}}}
EVIDENCE = {"type": "string", "enum": ["strong", "weak", "none"], "description": (
    "how strong the items' evidence is: none (nothing matched in words, the items a fallback, or nothing in "
    "the memory answers), weak (words matched, but the items may well not answer), strong (otherwise)")}
STORED = {"type": "object", "required": ["id", "session_id", "role", "content"], "properties": {
    "id": {"type": "string"}, "user_id": {"type": "string"}, "session_id": {"type": "string"},
    "position": {"type": "integer"}, "role": {"type": "string"}, "content": {"type": "string"},
    "timestamp": {"type": ["integer", "null"]}, "created_at": {"type": ["string", "null"]},
    "dated_on_receipt": {"type": "boolean"}, "request_id": {"type": ["string", "null"]},
    "metadata": {"type": "object"}}}

FILTERS = dict(_object({
    "session_id": dict(ID, description="only this session"),
    "since": dict(TIME, description="only messages from this time on: " + WHEN),
    "until": dict(TIME, description="only messages before this time: " + WHEN),
    "role": {"type": "string", "description": "only messages with this role (user, assistant ...)"},
    "metadata": dict(METADATA, description="only messages whose metadata holds every one of these keys and values")},
    []),
    description="search only the messages that pass every filter given")

TOOLS = [
    Tool("add_memory", "Remember messages",
         "Store messages of a conversation in a user's long-term memory, verbatim; they are searchable at once. "
         "Give `messages` (several, in order) or `content` (one message, role default user). Each call stores "
         "its messages, the same words said again included; to make a retry safe, give your own request_id: "
         "a call repeated with it stores nothing new.",
         _schema({"user_id": USER, "session_id": SESSION,
                  "messages": {"type": "array", "items": MESSAGE, "minItems": 1,
                               "description": "the messages, in the order they were said"},
                  "content": {"type": "string", "description": "the text of a single message (instead of messages)"},
                  "role": {"type": "string", "description": "role of the single message given as content",
                           "default": "user"},
                  "timestamp": TIMESTAMP,
                  "metadata": dict(METADATA, description="tags for every message of this call (a message's own "
                                                         "metadata wins); " + METADATA["description"]),
                  "request_id": dict(ID, description="idempotency key: a repeated (request_id, user_id) stores "
                                                     "nothing (default: a new Add every call)")},
                 ["user_id", "session_id"]),
         _schema({"success": {"type": "boolean"}, "request_id": {"type": "string"}, "user_id": {"type": "string"},
                  "session_id": {"type": "string"},
                  "stored": {"type": "boolean", "description": "false: stored before, nothing written now"},
                  "dated_on_receipt": {"type": "integer",
                                       "description": "messages without a timestamp, dated with the time received"},
                  "body_differs": {"type": "boolean",
                                   "description": "the earlier call with this request_id stored other messages"}},
                 ["success", "request_id", "user_id", "session_id", "stored"], False),
         {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
         add_memory),
    Tool("search_memory", "Search memory",
         "Find the evidence a user's memory holds for a question: stored messages and short stretches of the "
         "conversation around them, best first, each with its session, date and the ids of its messages. "
         "When nothing matches, the latest messages come back with score 0 and signals.fallback set. "
         "`evidence` grades the items: none (nothing found: say so rather than answer from them), weak "
         "(they may well not answer: hedge), strong.",
         _schema({"user_id": USER, "query": {"type": "string", "description": "the question, in plain words"},
                  "top_k": {"type": "integer", "minimum": 0, "default": 10, "description": "items to return, at most"},
                  "filters": FILTERS},
                 ["user_id", "query"]),
         _schema({"data": {"type": "array", "items": ITEM}, "evidence": EVIDENCE}, ["data", "evidence"], False),
         {"readOnlyHint": True, "openWorldHint": False}, search_memory),
    Tool("list_memories", "List stored messages",
         "List a user's stored messages verbatim, oldest first (order desc: newest first), optionally one "
         "session or a time range, a page at a time: pass next_cursor back as cursor for the next page. A page "
         "of long messages may hold fewer than limit: only a null next_cursor means there are no more.",
         _schema({"user_id": USER, "session_id": dict(ID, description="only this session"),
                  "since": dict(TIME, description="from this time on: " + WHEN),
                  "until": dict(TIME, description="before this time: " + WHEN),
                  "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50,
                            "description": "messages per page, at most"},
                  "cursor": {"type": "string", "description": "next_cursor of the previous page"},
                  "order": {"type": "string", "enum": ["asc", "desc"], "default": "asc"},
                  "metadata": dict(METADATA, description="only messages holding every one of these keys and values")},
                 ["user_id"]),
         _schema({"data": {"type": "array", "items": STORED}, "next_cursor": {"type": ["string", "null"]}},
                 ["data", "next_cursor"], False),
         {"readOnlyHint": True, "openWorldHint": False}, list_memories),
    Tool("delete_memories", "Forget memories",
         "Delete one stored message (message_id, the id search and list return), a session of a user's memory "
         "(session_id), or every memory of the user (all_sessions: true); nothing of it stays searchable, and "
         "the other messages keep their ids. Deleting what is not there reports deleted: false.",
         _schema({"user_id": USER, "message_id": dict(ID, description="the message to delete (m-...)"),
                  "session_id": dict(ID, description="the session to delete"),
                  "all_sessions": {"type": "boolean", "description": "true: delete every session of the user"}},
                 ["user_id"]),
         _schema({"deleted": {"type": "boolean"}, "user_id": {"type": "string"}, "session_id": {"type": "string"},
                  "message_id": {"type": "string"}, "messages": {"type": "integer"}}, ["deleted", "user_id"], False),
         {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
         delete_memories),
]
BY_NAME = {tool.name: tool for tool in TOOLS}


def text_result(value: Any, is_error: bool = False) -> Dict[str, Any]:
    """A CallToolResult: `value` as text (JSON unless it is a sentence), and as structuredContent if a result."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    result: Dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if not is_error:
        result["structuredContent"] = value
    return result


def call(memory: Memory, name: str, args: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The CallToolResult of tool `name` on `args`; None if there is no such tool (a protocol error)."""
    tool = BY_NAME.get(name)
    if tool is None:
        return None
    wrong = arguments.problem(args, tool.input_schema)
    if wrong:
        return text_result(wrong, is_error=True)
    try:
        return text_result(tool.run(memory, args))
    except FlowmemError as e:
        return text_result(e.reason, is_error=True)
