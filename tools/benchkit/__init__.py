"""The bench kit: what every bench and the soak share, written once.

A bench (tools/bench*.py, tools/soak/, measure_rpo.py) is a command: its arguments, its workload,
its report. What two of them need lives here, and a bench imports it from here, never from
another bench:

- stats.py: percentiles (linear and nearest-rank), the latency summary, timed bare FTS5 queries;
- report.py: Markdown tables, number cells, progress lines, the machine, the command line;
- process.py: a process's memory and CPU figures (/proc, getrusage);
- server.py: `flowmem serve` as a child process, waiting for /health, endpoints and headers;
- corpus.py: the seeded synthetic users and questions of the isolation and speed benches;
- workload.py: the soak's conversations and its contract checks;
- client.py: the one keep-alive HTTP client that soak and the slow-client bench drive.

Run a bench from the clone's root as a module: `python3 -m tools.bench --quick`.
"""
