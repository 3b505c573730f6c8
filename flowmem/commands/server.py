"""`flowmem serve` and `flowmem mcp`: the memory served, over HTTP or to an agent over MCP's stdio.

Both open their own database (creating it if missing) and run until told to stop:
serve until SIGINT or SIGTERM (http/run.py), mcp until its standard input closes
(mcp/stdio.py). A port serve cannot listen on is named with the flag that chooses another.
"""
from __future__ import annotations

import argparse
import errno
import logging

from .. import config as config_module
from ..http.run import serve
from ..mcp.stdio import run as run_mcp
from .command import Command, UsageError, loaded, warn


def _serve(args: argparse.Namespace) -> int:
    config = loaded(args)
    if args.api_key is not None:
        warn("a key given on the command line shows in `ps` to every user of this machine; "
             "use --api-key-file or FLOWMEM_API_KEY")
    logging.basicConfig(level=config.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    _listening(config)
    return 0


def _listening(config: config_module.Config) -> None:
    """serve(), with a port it cannot listen on named, and the flag that chooses another."""
    try:
        serve(config)
    except OSError as e:
        where = "port %d on %s" % (config.port, config.host or "every address")
        if e.errno == errno.EADDRINUSE:
            raise UsageError("port %d is in use on %s; choose another with --port"
                             % (config.port, config.host or "every address")) from e
        if e.errno == errno.EACCES:
            raise UsageError("%s may not be listened on by this user; choose one above 1023 with --port"
                             % where) from e
        raise


SERVE = Command(
    "serve", "run the HTTP server (POST /add, POST /search, GET /health)",
    "Run the HTTP server until SIGINT or SIGTERM (then it finishes the requests it has).",
    _serve, groups=tuple(config_module.GROUPS),
    short=("db", "host", "port", "api_key_file", "api_key", "workers", "allowed_hosts", "log_level"))

MCP = Command(
    "mcp", "serve the memory to an agent over MCP (stdio)",
    "Speak the Model Context Protocol on stdin and stdout (JSON-RPC 2.0, one message a line) until "
    "stdin closes: tools add_memory, search_memory, list_memories, delete_memories. Creates the "
    "database if missing; logs go to stderr, never to stdout.",
    lambda args: run_mcp(loaded(args)), groups=("database", "index", "results", "ranking", "embedder"))  # it searches
