"""Run `python -m flowmem serve` as a child process on an ephemeral port, for end-to-end tests."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a program that cannot take port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """A flowmem server on 127.0.0.1 with port 0; `port` is read from its start-up log line."""

    def __init__(self, db: str, extra_args: Optional[List[str]] = None, env: Optional[Dict[str, str]] = None):
        self.log_lines: List[str] = []
        self._seen = threading.Condition()
        environ = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
        environ.update(env or {})
        environ["PYTHONPATH"] = ROOT
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "flowmem", "serve", "--port", "0", "--db", db] + (extra_args or []),
            cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()
        line = self.wait_for(r"serving on http://127\.0\.0\.1:(\d+)")
        self.port = int(re.search(r":(\d+) ", line).group(1))
        self.endpoint = "http://127.0.0.1:%d" % self.port

    def _pump(self) -> None:
        for line in self.proc.stdout:
            with self._seen:
                self.log_lines.append(line)
                self._seen.notify_all()

    def wait_for(self, pattern: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        with self._seen:
            while True:
                for line in self.log_lines:
                    if re.search(pattern, line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or not self._pump_thread.is_alive():
                    raise AssertionError("server never logged %r; log:\n%s" % (pattern, "".join(self.log_lines)))
                self._seen.wait(min(left, 0.1))

    def log(self) -> str:
        with self._seen:
            return "".join(self.log_lines)

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        code = self.proc.wait(timeout)
        self._pump_thread.join(timeout)
        self.proc.stdout.close()
        return code


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
