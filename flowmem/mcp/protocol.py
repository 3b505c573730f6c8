"""JSON-RPC 2.0 and the MCP methods: one line in, at most one line out.

Protocol revisions: flowmem is a dual-era server, as the 2026-07-28 specification calls
one that speaks both eras of MCP.

- The handshake era, 2024-11-05 to 2025-11-25 (HANDSHAKE_VERSIONS): `initialize`
  names the client's revision, which is answered if it is one of them, else the latest
  (the client then decides whether it can go on); the other requests carry no version.
- The per-request era, 2026-07-28 (MODERN_VERSIONS): no `initialize`. Every request
  carries, in `params._meta`, the protocol version it speaks
  (`io.modelcontextprotocol/protocolVersion`) and the client's capabilities
  (`io.modelcontextprotocol/clientCapabilities`), optionally its name
  (`io.modelcontextprotocol/clientInfo`), and each is accepted or refused on its own:
  a stamp without both keys, or a version that is no string: -32602; a version flowmem
  does not speak per request (a handshake revision included: those are negotiated by
  initialize): -32022 (unsupported protocol version), its data `{"supported",
  "requested"}`. The methods are server/discover, tools/list and tools/call (ping went
  with the handshake). `server/discover` tells a client the revisions, capabilities and
  instructions before it sends anything else; on stdio it is also the probe by which a
  client that speaks both eras tells a 2026 server from an older one. Every result
  carries `resultType: "complete"` and the server's name and version in `_meta`
  (`io.modelcontextprotocol/serverInfo`); the cacheable ones (server/discover,
  tools/list) carry cache hints too, `ttlMs` and `cacheScope` "public": what they say
  holds no user's data and is fixed while the process runs (the tool list never
  changes: listChanged false); an hour bounds how long a client keeps it should the
  server be upgraded under a shared cache.

A request with the version stamp is a 2026-07-28 request; one without is a handshake
request, and `initialize` always is (it negotiates a handshake revision only, never
2026-07-28, whatever its stamp). Which era the connection speaks is decided once, by
its first accepted era-setting request, as the SDKs do (switching eras mid-stream is
undefined): after an `initialize`, a stamped request is refused (-32600); after a
stamped request passes its checks, `initialize` is refused with -32022, and a request
without the stamp is invalid params (-32602, the stamp missing). A refused stamp
decides nothing, so a failed probe leaves `initialize` open. Before either, a bare
request (ping, tools/list ...) is answered as the handshake era answers it, deciding
nothing. The revisions a -32022 or server/discover names are those the connection can
still speak, newest first: every one (2026-07-28 and the handshake ones) while the era
is undecided, so that a client sharing only a handshake revision knows to fall back to
initialize, as the specification's example error shows; 2026-07-28 alone once it is.

What is answered how, in every era:

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
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .. import __version__
from ..decoding import NESTED_TOO_DEEPLY, decode_json
from ..memory import Memory
from . import tools

log = logging.getLogger("flowmem.mcp")

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # oldest first
LATEST_VERSION = HANDSHAKE_VERSIONS[-1]
MODERN_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = tuple(reversed(HANDSHAKE_VERSIONS + MODERN_VERSIONS))  # newest first, as the spec lists them

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022

# The reserved _meta keys of 2026-07-28: three a request carries, one a result does.
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
CACHE_HINTS: Dict[str, Any] = {"ttlMs": 3_600_000, "cacheScope": "public"}

HANDSHAKE, MODERN = "handshake", "modern"  # the eras a connection can speak
SERVER_INFO: Dict[str, Any] = {"name": "flowmem", "title": "flowmem", "version": __version__}
CAPABILITIES: Dict[str, Any] = {"tools": {"listChanged": False}}
INSTRUCTIONS = (
    "flowmem is a long-term memory: add_memory stores conversation messages for a user, search_memory finds "
    "the stored evidence for a question (verbatim messages with their dates, best first), list_memories pages "
    "through what is stored, delete_memories forgets a session or a user. Every call names the user_id whose "
    "memory it uses; users never see each other's memories.")

Handler = Callable[[Mapping[str, Any]], Dict[str, Any]]


class ProtocolError(Exception):
    """A request answered with a JSON-RPC error: `code`, `message` and, for some codes, `data`."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def decode(line: bytes) -> Any:
    """One line as a JSON value; ProtocolError (-32700) saying why it is not one."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(PARSE_ERROR, "Parse error: the message is not UTF-8") from None
    try:
        return decode_json(text)  # the nesting bounded as for HTTP bodies (decoding.MAX_JSON_DEPTH)
    except ValueError as e:  # JSONDecodeError, over-long integers, NaN/Infinity, nesting
        raise ProtocolError(PARSE_ERROR, "Parse error: %s" % (
            "the message " + NESTED_TOO_DEEPLY if str(e) == NESTED_TOO_DEEPLY else e)) from None


def encode(message: Union[Dict[str, Any], List[Dict[str, Any]]]) -> bytes:
    """One message as one line of UTF-8 JSON (JSON escapes every newline inside strings)."""
    try:
        return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a client's own text, echoed in an error) has no UTF-8: escape it.
        return (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")


def error(ident: Any, code: int, message: str, data: Any = None) -> Dict[str, Any]:
    body: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": ident, "error": body}


def _is_id(value: Any) -> bool:
    # MCP: a string or an integer, never null; a bool is no integer.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _params(params: Any) -> Dict[str, Any]:
    """A request's params as an object (absent: empty); ProtocolError (-32602) when they are something else."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: params must be an object")
    return params


def _stamped(params: Any) -> bool:
    """Whether a request carries 2026-07-28's version stamp: the key alone marks it (a bare _meta does not)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and VERSION_KEY in meta


def unsupported(requested: Any, why: str, supported: Sequence[str]) -> ProtocolError:
    """The -32022 refusal of `requested`, its data naming the revisions `supported` (newest first)."""
    data: Dict[str, Any] = {"supported": list(supported)}
    if isinstance(requested, str):
        data["requested"] = requested
    return ProtocolError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version: %s" % why, data)


def check_stamp(params: Mapping[str, Any], supported: Sequence[str]) -> str:
    """The version a 2026-07-28 request's `_meta` names, once its stamp is whole and spoken; else ProtocolError.

    `supported`: the revisions a refusal names, those the connection can still speak."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: a %s request carries _meta with %s and %s"
                            % (MODERN_VERSIONS[-1], VERSION_KEY, CAPABILITIES_KEY))
    missing = [key for key in (VERSION_KEY, CAPABILITIES_KEY) if key not in meta]
    if missing:
        raise ProtocolError(INVALID_PARAMS, "Invalid params: _meta lacks %s" % " and ".join(missing))
    version = meta[VERSION_KEY]
    if not isinstance(version, str):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: _meta's %s must be a string" % VERSION_KEY)
    if version in HANDSHAKE_VERSIONS:
        raise unsupported(version, "%s is negotiated by initialize, not named per request" % version, supported)
    if version not in MODERN_VERSIONS:
        raise unsupported(version, "flowmem speaks %s per request" % ", ".join(MODERN_VERSIONS), supported)
    if not isinstance(meta[CAPABILITIES_KEY], dict):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: _meta's %s must be an object" % CAPABILITIES_KEY)
    return version


def complete(result: Dict[str, Any]) -> Dict[str, Any]:
    """A result in 2026-07-28's shape: its resultType, and the server's identity in _meta."""
    return dict(result, resultType="complete", _meta={SERVER_INFO_KEY: dict(SERVER_INFO)})


class Server:
    """The MCP server's state (the era its connection speaks, the negotiated revision) and its answers."""

    def __init__(self, memory: Memory):
        self.memory = memory
        self.era: Optional[str] = None  # HANDSHAKE after initialize, MODERN after an accepted stamped request
        self.protocol_version: Optional[str] = None  # set by initialize, or by the first stamped request
        self.client: Dict[str, Any] = {}
        self.methods: Dict[str, Handler] = {
            "initialize": self.initialize, "ping": lambda params: {},
            "tools/list": self.list_tools, "tools/call": self.call_tool,
        }
        self.modern_methods: Dict[str, Handler] = {
            "server/discover": self.discover, "tools/list": lambda params: dict(self.list_tools(params), **CACHE_HINTS),
            "tools/call": self.call_tool,
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
        modern = method != "initialize" and (self.era == MODERN or _stamped(params))
        try:
            result = self.answer_modern(method, params) if modern else self.answer_handshake(method, params)
        except ProtocolError as e:
            return error(ident, e.code, e.message, e.data)
        except Exception:  # a bug: logged whole on stderr, never sent (it may hold memory content)
            log.exception("%s failed", method)
            return error(ident, INTERNAL_ERROR, "Internal error: %s failed (the server's log says why)" % method)
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    def answer_handshake(self, method: str, params: Any) -> Dict[str, Any]:
        """A request of the handshake era: initialize, or a bare request."""
        if method == "initialize" and self.era == MODERN:
            requested = params.get("protocolVersion") if isinstance(params, dict) else None
            raise unsupported(requested, "this connection speaks %s, which has no initialize" % self.protocol_version,
                              MODERN_VERSIONS)
        handler = self.methods.get(method)
        if handler is None:
            raise ProtocolError(METHOD_NOT_FOUND, "Method not found: %s" % method)
        return handler(_params(params))

    def answer_modern(self, method: str, params: Any) -> Dict[str, Any]:
        """A request of the 2026-07-28 era: its stamp checked, then its method, its result in that era's shape."""
        if self.era == HANDSHAKE:
            raise ProtocolError(INVALID_REQUEST, "Invalid Request: this connection negotiated %s by initialize; "
                                "a request stamped with %s is not taken on it" % (self.protocol_version, VERSION_KEY))
        params = _params(params)
        # Before the era is decided a client may still fall back to initialize: a refusal names those revisions too.
        version = check_stamp(params, SUPPORTED_VERSIONS if self.era is None else MODERN_VERSIONS)
        if self.era is None:
            self.era, self.protocol_version = MODERN, version
            info = params["_meta"].get(CLIENT_INFO_KEY)
            log.info("client %s speaks %s", info.get("name", "?") if isinstance(info, dict) else "?", version)
        handler = self.modern_methods.get(method)
        if handler is None:
            raise ProtocolError(METHOD_NOT_FOUND, "Method not found: %s (not a method of %s)" % (method, version))
        return complete(handler(params))

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
        self.era = HANDSHAKE
        self.protocol_version = requested if requested in HANDSHAKE_VERSIONS else LATEST_VERSION
        return {"protocolVersion": self.protocol_version, "capabilities": CAPABILITIES,
                "serverInfo": dict(SERVER_INFO), "instructions": INSTRUCTIONS}

    def discover(self, params: Mapping[str, Any]) -> Dict[str, Any]:
        # The connection now speaks 2026-07-28 (this request decided it): the revisions it can go on with.
        return dict(supportedVersions=list(MODERN_VERSIONS), capabilities=CAPABILITIES,
                    instructions=INSTRUCTIONS, **CACHE_HINTS)

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
