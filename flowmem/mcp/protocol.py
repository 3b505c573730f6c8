"""JSON-RPC 2.0 and the MCP methods: one line in, at most one line out.

Protocol revision: MCP's initialize handshake, revisions 2024-11-05 to 2025-11-25
(PROTOCOL_VERSIONS). The client's requested revision is answered if it is one of them,
else the latest; the client then decides whether it can go on. These are the revisions
the official Python SDK (mcp 2.3.0, HANDSHAKE_PROTOCOL_VERSIONS) negotiates through
initialize. Its newest, 2026-07-28, is a different era (no initialize: a
`server/discover` probe and the version, client info and capabilities in every
request's `_meta`, results carrying cache hints); flowmem does not speak it, and
answers `server/discover` with -32601 (method not found), on which that SDK's
default client (mode "auto") falls back to initialize, as it does for any legacy server.

What is answered how:

- a line that is not UTF-8 JSON: -32700, with id null;
- JSON that is not a request: not an object, `jsonrpc` not "2.0", `method` not a
  string, an id that is neither a string nor an integer: -32600;
- an unknown method: -32601; params that are not an object, or not what the method
  takes (initialize without protocolVersion, tools/call naming no tool or a tool that
  does not exist, as the specification's tools page says): -32602;
- a notification (no id), known or not: nothing, ever; a response (a client answering
  a request): nothing, as this server sends no requests;
- a batch (a JSON array, which 2025-03-26 allowed): each member answered as above,
  the answers in one array, none if all were notifications;
- a bug (any exception but the tools' own refusals, which are tool results): -32603,
  its traceback logged on stderr, never sent.

Requests are answered in the order they arrive, one at a time, whether or not the
client has sent `notifications/initialized` (answering a ping or a tools/list early
harms nothing, and a client that skipped the notification still works).
"""
from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from .. import __version__
from ..memory import Memory
from . import tools

log = logging.getLogger("flowmem.mcp")

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # oldest first
LATEST_VERSION = PROTOCOL_VERSIONS[-1]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

INSTRUCTIONS = (
    "flowmem is a long-term memory: add_memory stores conversation messages for a user, search_memory finds "
    "the stored evidence for a question (verbatim messages with their dates, best first), list_memories pages "
    "through what is stored, delete_memories forgets a session or a user. Every call names the user_id whose "
    "memory it uses; users never see each other's memories.")


class ProtocolError(Exception):
    """A request answered with a JSON-RPC error: `code` and `message`."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def _reject_constant(name: str) -> Any:
    raise ValueError("%s is not valid JSON" % name)


def decode(line: bytes) -> Any:
    """One line as a JSON value; ProtocolError (-32700) saying why it is not one."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(PARSE_ERROR, "Parse error: the message is not UTF-8") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ProtocolError(PARSE_ERROR, "Parse error: the message is nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, over-long integers, NaN/Infinity
        raise ProtocolError(PARSE_ERROR, "Parse error: %s" % e) from None


def encode(message: Union[Dict[str, Any], List[Dict[str, Any]]]) -> bytes:
    """One message as one line of UTF-8 JSON (JSON escapes every newline inside strings)."""
    try:
        return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a client's own text, echoed in an error) has no UTF-8: escape it.
        return (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")


def error(ident: Any, code: int, message: str) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _is_id(value: Any) -> bool:
    # MCP: a string or an integer, never null; a bool is no integer.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Server:
    """The MCP server's state (the negotiated revision) and its answer to each message."""

    def __init__(self, memory: Memory):
        self.memory = memory
        self.protocol_version: Optional[str] = None  # set by initialize
        self.client: Dict[str, Any] = {}
        self.methods: Dict[str, Callable[[Mapping[str, Any]], Dict[str, Any]]] = {
            "initialize": self.initialize, "ping": lambda params: {},
            "tools/list": self.list_tools, "tools/call": self.call_tool,
        }

    def handle_line(self, line: bytes) -> Optional[bytes]:
        """The line to write in answer to `line`, or None when nothing is to be written."""
        try:
            message = decode(line)
        except ProtocolError as e:
            return encode(error(None, e.code, e.message))
        if isinstance(message, list):
            if not message:
                return encode(error(None, INVALID_REQUEST, "Invalid Request: an empty batch"))
            answers = [a for a in (self.handle(m) for m in message) if a is not None]
            return encode(answers) if answers else None
        answer = self.handle(message)
        return None if answer is None else encode(answer)

    def handle(self, message: Any) -> Optional[Dict[str, Any]]:
        """The answer to one decoded message; None for a notification or a response."""
        if not isinstance(message, dict):
            return error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
        ident = message.get("id")
        shown_id = ident if _is_id(ident) else None
        if message.get("jsonrpc") != "2.0":
            return error(shown_id, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
        method = message.get("method")
        if method is None and ("result" in message or "error" in message):
            log.debug("ignored a response to id %r: this server sends no requests", ident)
            return None
        if not isinstance(method, str):
            return error(shown_id, INVALID_REQUEST, "Invalid Request: method must be a string")
        if "id" not in message:
            self.notified(method)
            return None
        if not _is_id(ident):
            return error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
        return self.answer(ident, method, message.get("params"))

    def answer(self, ident: Any, method: str, params: Any) -> Dict[str, Any]:
        """The response to request `ident`: its result, or the error it earned."""
        handler = self.methods.get(method)
        if handler is None:
            return error(ident, METHOD_NOT_FOUND, "Method not found: %s" % method)
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return error(ident, INVALID_PARAMS, "Invalid params: params must be an object")
        try:
            result = handler(params)
        except ProtocolError as e:
            return error(ident, e.code, e.message)
        except Exception:  # a bug: logged whole on stderr, never sent (it may hold memory content)
            log.exception("%s failed", method)
            return error(ident, INTERNAL_ERROR, "Internal error: %s failed (the server's log says why)" % method)
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    def notified(self, method: str) -> None:
        """A notification: nothing to answer. initialized and cancelled need no action (requests run one at a time)."""
        if method == "notifications/initialized":
            log.info("client %s ready (protocol %s)", self.client.get("name", "?"), self.protocol_version)
        elif method != "notifications/cancelled":
            log.debug("ignored notification %s", method)

    def initialize(self, params: Mapping[str, Any]) -> Dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: protocolVersion must be a string")
        client = params.get("clientInfo")
        self.client = client if isinstance(client, dict) else {}
        self.protocol_version = requested if requested in PROTOCOL_VERSIONS else LATEST_VERSION
        return {
            "protocolVersion": self.protocol_version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "flowmem", "title": "flowmem", "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def list_tools(self, params: Mapping[str, Any]) -> Dict[str, Any]:
        # Four tools: one page, so a cursor (which this server never gives) is ignored.
        return {"tools": [tool.listing() for tool in tools.TOOLS]}

    def call_tool(self, params: Mapping[str, Any]) -> Dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: name must be the name of a tool")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        started = time.perf_counter()
        result = tools.call(self.memory, name, arguments)
        if result is None:
            raise ProtocolError(INVALID_PARAMS, "Unknown tool: %s (the tools are %s)"
                                % (name, ", ".join(tool.name for tool in tools.TOOLS)))
        # Which tool, how it ended and how long it took; never the arguments (they are memory content).
        log.info("%s %s in %.1f ms", name, "refused" if result["isError"] else "done",
                 (time.perf_counter() - started) * 1000)
        return result
