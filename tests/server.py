"""Run `python -m flowmem serve` as a child process on an ephemeral port, for end-to-end tests."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import Dict, List, Optional, Tuple

from tools.benchkit import server as benchkit_server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a program that cannot take port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess(benchkit_server.ServerProcess):
    """A flowmem server on 127.0.0.1 with port 0: the bench kit's (tools/benchkit/server.py), one
    for the tests and the benches, with its log in a temporary file that `wait_for` and `log` read."""

    def __init__(self, db: str, extra_args: Optional[List[str]] = None, env: Optional[Dict[str, str]] = None):
        self._dir = tempfile.mkdtemp(prefix="flowmem-test-server-")
        self._kept: Optional[str] = None
        try:
            super().__init__(db, os.path.join(self._dir, "server.log"), extra_args=extra_args or (),
                             timeout_s=20.0, env_extra=env)
        except BaseException:
            shutil.rmtree(self._dir, True)
            raise

    def wait_for(self, pattern: str, timeout: float = 20.0) -> str:
        """The first log line matching `pattern`, waited for up to `timeout` seconds (AssertionError past it)."""
        deadline = time.monotonic() + timeout
        while True:
            for line in self.log().splitlines(keepends=True):
                if re.search(pattern, line):
                    return line
            if time.monotonic() >= deadline or not self.alive():
                raise AssertionError("server never logged %r; log:\n%s" % (pattern, self.log()))
            time.sleep(0.05)

    def log(self) -> str:
        """The server's log so far (after stop(), all of it: the file is gone, its text kept)."""
        return self._kept if self._kept is not None else self.log_text()

    def stop(self, timeout: float = 20.0) -> Optional[int]:
        if self._kept is not None:
            return self.proc.returncode
        try:
            return super().stop(timeout)
        finally:
            self._kept = self.log_text()
            shutil.rmtree(self._dir, True)


def start_server(argv: List[str], env: Optional[Dict[str, str]], cwd: str) -> Tuple[subprocess.Popen, int, List[str]]:
    """A server started by the command `argv` (the pyz, a service file's command line) and its port, from its
    `serving on` log line: (process, port, log lines, which keep being read). env None: this environment."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log: List[str] = []
    ready = threading.Event()

    def pump() -> None:
        for line in proc.stdout:
            log.append(line)
            if "serving on" in line:
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    ready.wait(60)
    match = re.search(r"serving on http://[^:]+:(\d+)", "".join(log))
    if not match:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        raise AssertionError("the server did not start:\n" + "".join(log))
    return proc, int(match.group(1)), log


def stop_server(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
    """Send `sig` and wait for the exit code."""
    proc.send_signal(sig)
    code = proc.wait(timeout)
    proc.stdout.close()
    return code
