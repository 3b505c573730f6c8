"""`flowmem serve` as a child process of a bench, and how a bench reaches a server.

One ServerProcess for every bench: `python -m flowmem serve --port 0` from a checkout (this
one, or `repo=` another, to measure a commit beside this one), FLOWMEM_* variables removed
so that the caller's environment does not change what is measured, the port read from the
server's `serving on http://HOST:PORT` line, its log in a file (a pipe would have to be
drained while timings run).
"""
from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from typing import Any, Dict, Optional, Sequence, Tuple

# The clone's root: the default checkout whose server is measured.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

JSON_HEADERS = {"Content-Type": "application/json"}


class ServerProcess:
    """`python -m flowmem serve --port 0 --db PATH` as a child; its log goes to a file.

    The child runs from `repo` (a flowmem checkout) with FLOWMEM_* variables removed
    from its environment, except FLOWMEM_API_KEY when `api_key` is given (so the key
    stays off the command line) and those of `env`, added after. The tests' servers are
    this one too (tests/server.py).
    """

    def __init__(self, db: str, log_path: str, repo: str = REPO_ROOT, api_key: Optional[str] = None,
                 extra_args: Sequence[str] = (), timeout_s: float = 60.0, env_extra: Optional[Dict[str, str]] = None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
        env.update(env_extra or {})
        env["PYTHONPATH"] = repo
        if api_key:
            env["FLOWMEM_API_KEY"] = api_key
        self.log_path = log_path
        self.argv = [sys.executable, "-m", "flowmem", "serve", "--port", "0", "--db", db] + list(extra_args)
        # A file, not a pipe: nothing here has to drain the server's per-request log lines.
        self._log = open(log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(self.argv, cwd=repo, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        self.host, self.port = self._wait_for_address(timeout_s)
        self.endpoint = "http://%s:%d" % (self.host, self.port)

    def _wait_for_address(self, timeout_s: float) -> Tuple[str, int]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = re.search(r"serving on http://([^:/\s]+):(\d+)", self.log_text())
            if found:
                return found.group(1), int(found.group(2))
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("flowmem serve did not start; its log:\n" + self.log_text()[-4000:])

    def log_text(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout_s: float = 60.0) -> Optional[int]:
        """SIGTERM (in-flight requests finish, the database closes); the exit status (None: killed)."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            return None
        finally:
            self._log.close()


def log_problems(text: str) -> Dict[str, int]:
    """Lines in a server log that point at trouble: tracebacks, ERROR/CRITICAL lines, 5xx answers."""
    counts = {
        "tracebacks": text.count("Traceback (most recent call last)"),
        "error_lines": len(re.findall(r"^\S+ \S+ (?:ERROR|CRITICAL) ", text, re.M)),
        "logged_5xx": len(re.findall(r" (?:GET|POST|HEAD|PUT|DELETE|PATCH|OPTIONS) \S+ 5\d\d ", text)),
    }
    return counts


def parse_endpoint(url: str) -> Tuple[str, int]:
    parts = urllib.parse.urlsplit(url if "//" in url else "http://" + url)
    if parts.scheme not in ("http", ""):
        raise ValueError("only http:// endpoints are supported, got %r" % url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def auth_headers(api_key: Optional[str]) -> Dict[str, str]:
    headers = dict(JSON_HEADERS)
    if api_key:
        headers["Authorization"] = "Bearer " + api_key
    return headers


def wait_healthy(host: str, port: int, timeout_s: float = 30.0) -> Dict[str, Any]:
    """GET /health until a 2xx; its JSON body (or {}), or RuntimeError."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        conn = http.client.HTTPConnection(host, port, timeout=10)
        try:
            conn.request("GET", "/health")
            response = conn.getresponse()
            body = response.read()
            if 200 <= response.status < 300:
                try:
                    value = json.loads(body)
                except ValueError:
                    value = {}
                return value if isinstance(value, dict) else {}
            last = "HTTP %d" % response.status
        except (OSError, http.client.HTTPException) as e:
            last = "%s: %s" % (type(e).__name__, e)
        finally:
            conn.close()
        time.sleep(0.2)
    raise RuntimeError("GET /health on %s:%d did not answer 2xx within %.0f s (%s)" % (host, port, timeout_s, last))
