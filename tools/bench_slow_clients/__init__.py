"""What slow and hostile clients cost a real client of flowmem, as ratios to a baseline.

What it measures (`make bench-slow-clients`; prints Markdown tables, `--json PATH`
writes every figure):

It starts `python -m flowmem serve --port 0` on a fresh database (the port is read
from the server's log line), prepares a memory over HTTP (a few users with a few
hundred messages each), and then runs phases. In each phase a "real client" sends
Searches (top_k 100, the same questions in every phase) and Adds (20 messages) on one
keep-alive connection, and Searches on a fresh connection each (connect included in
the time), while the hostile connections of the phase are held open:

  a  baseline          nothing else
  b  slowloris         1,000 connections that send a partial request (half stop inside the
                       request line, half after some headers) and one more header line
                       (or request-line byte) every 5 s, never finishing
  c  stalled bodies    520 connections that send complete headers with
                       `Content-Length: 100000` and 3 body bytes, then stall (520: more
                       than the default 512 requests in flight)
  d  idle              1,000 connections that send nothing
  e  non-readers       200 connections that send 2 Searches at once (top_k 100) and never
                       read the answers (receive buffer 4 KiB), so a server writing the
                       answers blocks
  f  baseline again    nothing else: has the server recovered?

The hostile connections are driven by a separate process (so they do not take the
real client's CPU time or interpreter lock) that reopens, after `--reopen-delay`
seconds, any connection the server closes, so that the target number stays open; it
counts how many the server closed, after how long, and with what answer. Before the
real client starts, the tool waits until every hostile connection is open and the
server's CPU use and thread count have settled; each phase lasts at least `--hold`
seconds (so a server's header timeout has time to act); between phases it waits for
the server's thread count to come back down.

For each phase: the real client's p50/p95/p99 and their ratio to phase a (over
requests answered 200; the machine is noisy, so compare phase f with a for the
noise), its errors (any non-200, refused or reset connections, timeouts after
`--timeout` s, malformed answers), the server's thread count (/proc/PID/status
Threads) and RSS before, at most and after the hostile connections, and what
happened to those connections. The process's open-file soft limit is raised (with
`resource`) to what the phases need; the server, started afterwards, inherits it.

The tool measures; it does not judge, unless `--check` is given: then it exits 1
when the real client saw any error or a p99 ratio above `--max-ratio` (3) in any
phase. It exits 2 when the server could not be started.

Usage (from anywhere; standard library only, Python 3.9+, Linux):

    python -m tools.bench_slow_clients            # ~3-4 minutes
    python -m tools.bench_slow_clients --quick    # ~1 minute: fewer requests, shorter holds
    python -m tools.bench_slow_clients --phases abf --json out/slow.json
    python -m tools.bench_slow_clients --repo ../before   # the server of another checkout

A package: hostile.py holds the hostile connections (in a process of their own), real.py the
real client and the server's side, report.py the report, run.py the command.
"""
