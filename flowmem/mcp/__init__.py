"""`flowmem mcp`: flowmem as a Model Context Protocol server over stdio.

An MCP client (an agent's host program) starts `python -m flowmem mcp --db PATH` and
speaks JSON-RPC 2.0 to it, one message per line, on its standard input and output.
The package is split by job, each layer knowing only the one below:

- stdio.py: the process: lines in, lines out, stdout kept for protocol messages only,
  the database opened at start and closed at the end (EOF, SIGTERM).
- protocol.py: JSON-RPC 2.0 and MCP's methods in both eras: the handshake revisions
  (initialize and version negotiation, ping, tools/list, tools/call) and 2026-07-28
  (server/discover, the version stamp on every request, results with resultType and
  cache hints); every malformed message gets its JSON-RPC error.
- tools.py: the four tools (add_memory, search_memory, list_memories,
  delete_memories): their schemas and their calls on Memory, nothing of JSON-RPC.
- arguments.py: the subset of JSON Schema the tools' input schemas use, checked
  against a call's arguments so that a bad one is named the way the contract names
  fields (`messages[2].content`).

The core (memory.py) knows nothing of MCP: the tools call Memory exactly as the HTTP
layer and the CLI do, with the same bodies and the same errors.
"""
