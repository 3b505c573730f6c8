"""Counters, a latency histogram and gauges, shown at `GET /metrics` in Prometheus' text format.

The exposition is Prometheus text format 0.0.4 (`# HELP`, `# TYPE`, one sample a line),
which any Prometheus-compatible scraper reads; nothing here depends on a client library.

Requests are labelled by their route TEMPLATE (`/users/{user_id}/messages`), never by
the raw path: a label per user id would leak ids to whoever reads the metrics and grow
without bound. A path no route fits (or a request line too garbled to have one) is
`unmatched`. Requests App (api.py) answers are counted and timed; those the connection
loop answers itself (malformed framing, a body over the limit, 408, too many in flight,
one that waited in its lane too long) are counted by the route their request line names,
not timed.

Every update takes one lock (a few dict operations); `render()` copies under it, so a
scrape sees one consistent state while workers keep counting.
"""
from __future__ import annotations

import bisect
import os
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Seconds: a search is milliseconds to a few hundred, an Add may wait 30 s for the write lock.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
UNMATCHED = "unmatched"


def escape(value: str) -> str:
    """A label value as the text format writes it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return repr(float(value)) if isinstance(value, float) else str(value)


class Metrics:
    """The server's metrics; thread-safe. App calls `started`/`finished` around each request."""

    def __init__(self, db_path: str, buckets: Tuple[float, ...] = BUCKETS):
        self.db_path = db_path
        self.buckets = buckets
        self._lock = threading.Lock()
        self._requests: Dict[Tuple[str, int], int] = {}
        self._latency: Dict[str, List[float]] = {}  # template -> bucket counts (+Inf last), then sum
        self._adds = 0
        self._messages = 0
        self._answering = 0
        # The server sets this to its own count of requests received whole and not yet answered
        # (queued ones included); without a server, the requests App is answering now.
        self.inflight_source: Optional[Callable[[], int]] = None
        self.embedder_source: Optional[Callable[[], Dict[str, Any]]] = None  # embedding.Embedding.status

    def started(self) -> None:
        with self._lock:
            self._answering += 1

    def finished(self, template: Optional[str], status: int, seconds: float) -> None:
        """One request answered: `template` is its route's (None: no route fits)."""
        route = template or UNMATCHED
        slot = bisect.bisect_left(self.buckets, seconds)
        with self._lock:
            self._answering -= 1
            self._requests[(route, status)] = self._requests.get((route, status), 0) + 1
            counts = self._latency.get(route)
            if counts is None:
                counts = self._latency[route] = [0.0] * (len(self.buckets) + 2)
            counts[slot] += 1
            counts[-1] += seconds

    def refused(self, template: Optional[str], status: int) -> None:
        """A request the connection loop answered itself (malformed, too slow, too many): counted, not timed."""
        route = template or UNMATCHED
        with self._lock:
            self._requests[(route, status)] = self._requests.get((route, status), 0) + 1

    def stored(self, adds: int, messages: int) -> None:
        """Adds acknowledged (or imported and newly stored) and the messages they hold."""
        with self._lock:
            self._adds += adds
            self._messages += messages

    def inflight(self) -> int:
        if self.inflight_source is not None:
            return self.inflight_source()
        with self._lock:
            return self._answering

    def _file_bytes(self) -> List[Tuple[str, int]]:
        out = []
        for name, path in (("main", self.db_path), ("wal", self.db_path + "-wal")):
            try:
                out.append((name, os.stat(path).st_size))
            except OSError:
                out.append((name, 0))  # no WAL between checkpoints, or an in-memory database
        return out

    def render(self) -> str:
        """Every metric in the text format, one consistent snapshot."""
        with self._lock:
            requests = sorted(self._requests.items())
            latency = sorted((route, list(counts)) for route, counts in self._latency.items())
            adds, messages = self._adds, self._messages
        lines = ["# HELP flowmem_requests_total Requests answered (refusals of the connection loop too), by route "
                 "template and status.",
                 "# TYPE flowmem_requests_total counter"]
        lines += ['flowmem_requests_total{route="%s",status="%d"} %d' % (escape(route), status, n)
                  for (route, status), n in requests]
        lines += ["# HELP flowmem_request_duration_seconds Time to answer a request (from App receiving it "
                  "whole to its response), by route template.",
                  "# TYPE flowmem_request_duration_seconds histogram"]
        for route, counts in latency:
            lines += self._histogram(escape(route), counts)
        lines += ["# HELP flowmem_adds_total Adds acknowledged (a retry of a stored Add counts again) and "
                  "imported records newly stored.",
                  "# TYPE flowmem_adds_total counter", "flowmem_adds_total %d" % adds,
                  "# HELP flowmem_messages_total Messages in the Adds counted by flowmem_adds_total.",
                  "# TYPE flowmem_messages_total counter", "flowmem_messages_total %d" % messages,
                  "# HELP flowmem_database_bytes Size of the database's files on disk (main file, WAL).",
                  "# TYPE flowmem_database_bytes gauge"]
        lines += ['flowmem_database_bytes{file="%s"} %d' % pair for pair in self._file_bytes()]
        lines += ["# HELP flowmem_inflight_requests Requests received whole and not yet answered.",
                  "# TYPE flowmem_inflight_requests gauge", "flowmem_inflight_requests %d" % self.inflight()]
        if self.embedder_source is not None:
            lines += self._embedder(self.embedder_source())
        return "\n".join(lines) + "\n"

    @staticmethod
    def _embedder(status: Dict[str, Any]) -> List[str]:
        """The operator's embedder (embedding.py): messages waiting for a vector, vectors written, failures."""
        return ["# HELP flowmem_embedder_waiting_messages Messages with no vector of the embedder yet.",
                "# TYPE flowmem_embedder_waiting_messages gauge",
                "flowmem_embedder_waiting_messages %d" % status["waiting"],
                "# HELP flowmem_embedder_vectors_total Vectors of the embedder stored since start.",
                "# TYPE flowmem_embedder_vectors_total counter",
                "flowmem_embedder_vectors_total %d" % status["written"],
                "# HELP flowmem_embedder_failures_total Embedder calls for messages that failed since start "
                "(each retried).",
                "# TYPE flowmem_embedder_failures_total counter",
                "flowmem_embedder_failures_total %d" % status["failures"]]

    def _histogram(self, route: str, counts: List[float]) -> List[str]:
        lines = []
        total = 0
        for bound, n in zip(self.buckets + (float("inf"),), counts):
            total += int(n)
            lines.append('flowmem_request_duration_seconds_bucket{route="%s",le="%s"} %d'
                         % (route, _number(bound), total))
        lines.append('flowmem_request_duration_seconds_sum{route="%s"} %s' % (route, repr(counts[-1])))
        lines.append('flowmem_request_duration_seconds_count{route="%s"} %d' % (route, total))
        return lines
