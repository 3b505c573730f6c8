"""Running the HTTP server as a process: `flowmem serve`.

serve() opens the memory, starts the Server (server.py) over App (api.py), turns
SIGINT and SIGTERM into a graceful stop, warns when a public address has no key,
and closes the database once every received request is answered.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional, Tuple

from .. import __version__
from ..config import Config
from ..memory import Memory
from .api import App
from .guard import is_loopback
from .server import Server

log = logging.getLogger("flowmem.http")


def serve(config: Config, ready: Optional[Callable[[Tuple[str, int]], None]] = None) -> None:
    """Serve until SIGINT or SIGTERM; requests received whole are answered, then the database closes."""
    import signal

    memory = Memory(config)
    try:
        server = Server(App(memory, config), config)
    except BaseException:
        memory.close()
        raise

    def stop(signum: int, frame: Any) -> None:
        log.info("signal %d: finishing received requests and stopping", signum)
        server.stop()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    host, port = server.address
    if not is_loopback(config.host) and not config.key():
        log.warning("listening on %s without an API key: anyone who can reach it can read and write every "
                    "user's memory; set FLOWMEM_API_KEY or --api-key-file", config.host or "all addresses")
    log.info("flowmem %s serving on http://%s:%d (database %s)", __version__,
             "[%s]" % host if ":" in host else host, port, config.db)
    if ready:
        ready((host, port))
    try:
        server.serve_forever()
    finally:
        memory.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
        log.info("stopped; database closed")
