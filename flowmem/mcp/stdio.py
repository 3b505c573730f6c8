"""`flowmem mcp`: the MCP server as a process speaking on its standard input and output.

MCP's stdio transport: the client starts this process, writes one JSON-RPC message per
line to its stdin and reads one per line from its stdout; stderr is for logs, which
clients show or keep. stdout must carry nothing but protocol messages, so at start
the process keeps a private copy of its stdout for them and points file descriptor 1
(and with it Python's sys.stdout) at stderr: a stray print anywhere, or a library
writing to fd 1, lands in the log instead of corrupting the protocol.

The database is opened before the first message is read (a file flowmem cannot use
ends the process with one line on stderr, as every command does) and closed cleanly
at the end: when stdin reaches EOF (the client closed it: MCP's way to stop a stdio
server), on SIGTERM, or when stdout is gone.
"""
from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any, BinaryIO, Optional

from ..config import Config
from ..memory import Memory
from .protocol import PARSE_ERROR, Server, encode, error

log = logging.getLogger("flowmem.mcp")

# The longest line read as a message: a line is held whole before it is parsed, so an
# endless one (a client that never sends a newline) must not take all memory. 16 MiB is
# twice the HTTP server's default body limit; a whole LoCoMo conversation is 0.1 MiB.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


def serve(server: Server, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer each line of `stdin` on `stdout` until EOF, or until `stdout` is closed."""
    while True:
        line = stdin.readline(MAX_MESSAGE_BYTES + 1)
        if not line:
            return  # EOF
        if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            _skip_line(stdin)
            answer: Optional[bytes] = encode(error(None, PARSE_ERROR, "Parse error: a message over %d bytes"
                                                   % MAX_MESSAGE_BYTES))
        elif not line.strip():
            continue  # a blank line is no message
        else:
            answer = server.handle_line(line)
        if answer is None:
            continue
        try:
            stdout.write(answer)
            stdout.flush()
        except (BrokenPipeError, ValueError):  # the client closed our stdout: nobody is listening
            log.info("stdout closed; stopping")
            return


def _skip_line(stdin: BinaryIO) -> None:
    """Read and drop the rest of an over-long line, a bounded piece at a time."""
    while True:
        piece = stdin.readline(MAX_MESSAGE_BYTES)
        if not piece or piece.endswith(b"\n"):
            return


def _protocol_stdout() -> BinaryIO:
    """A private binary stream on the process's stdout; fd 1 itself (and sys.stdout) then writes to stderr."""
    sys.stdout.flush()
    private = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return private


def _stop(signum: int, frame: Any) -> None:
    # SystemExit unwinds through run()'s finally, so the database is closed as at EOF.
    raise SystemExit(0)


def run(config: Config) -> int:
    """`flowmem mcp`: serve the database `config.db` (created if missing) over stdio until EOF; returns 0."""
    logging.basicConfig(stream=sys.stderr, level=config.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    memory = Memory(config)
    out = _protocol_stdout()
    signal.signal(signal.SIGTERM, _stop)
    log.info("flowmem MCP server on %s (stdio)", config.db)
    try:
        serve(Server(memory), sys.stdin.buffer, out)
    finally:
        memory.close()
        try:
            out.close()
        except BrokenPipeError:
            pass
    return 0
