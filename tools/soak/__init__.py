"""flowmem soak test: many keep-alive clients, mixed Add/Search, for a bounded time.

What it does (`make soak`; prints Markdown, `--out PATH` writes every figure as JSON):

1. Starts `python -m flowmem serve --port 0` on a fresh database in a temporary folder
   (the port is read from the server's `serving on http://...:PORT` log line), or uses
   a running server given with `--endpoint URL` (its RSS is read when `--pid` is given).
2. Runs `--clients` threads for `--duration` seconds. Each holds one keep-alive
   http.client connection, reconnecting only when the server closed it (counted), and
   loops, for a random one of `--users` users: an Add (20 messages of conversation text,
   "Name: text", Unix-ms timestamps; a user's session grows by Adds of 20 until it is
   20-120 messages long, then the next session starts days later) with probability
   `--add-share`, else a Search (a question made of words that user said, top_k 100 or
   10, sometimes with multiple-choice options; one in 20 asks for the unique word
   planted in one of that user's acknowledged Adds and expects to find it).
3. Checks every response against the contract (docs/api.md, The contract): Add 200 with
   `success: true` and the three ids echoed; Search 200 with a `data` list of at most top_k items,
   each with a non-empty `id` and `content` and a numeric `score`, ids unique, scores
   non-increasing. Errors are counted by kind: 5xx, other non-200, malformed body
   (a 200 that breaks the contract), lost write (an acknowledged Add's word not found),
   connection (refused, reset, timed out, garbled).
4. Samples the server's RSS and thread count (/proc/PID/status) every
   `--sample-interval` seconds: at the start, after warm-up (10% of the run, at least
   30 s, at most half of it), at the end, the maximum, and the change from after
   warm-up to the end.

Default add share 0.2: the platform's traffic is mostly questions (the LoCoMo dev
split is 138 Adds of 20 messages to 993 questions, 0.12), but a soak must also keep
the write path and the growing index busy the whole time, with Adds and Searches of
one user interleaved. At 0.2 roughly one request in five writes, so users keep growing
through the run (a few thousand messages each in ten minutes on 2 cores) while most
of the load stays Search, as on the platform.

Exit status: 0 when there was no error of any kind and RSS grew at most
`--max-rss-growth` percent (10) from after warm-up to the end; 1 otherwise; 2 when
the server could not be started or reached.

Usage (from anywhere; standard library only, Python 3.9+, Linux for RSS):

    python -m tools.soak                          # 10 minutes, 64 clients, 50 users
    python -m tools.soak --duration 30            # a short check
    python -m tools.soak --out out/soak.json --seed 2 --add-share 0.5
    python -m tools.soak --endpoint http://127.0.0.1:8000 --pid 1234 --api-key KEY
    python -m tools.soak --repo ../other-checkout  # soak another checkout's server

The soak is a package: load.py drives the clients, figures.py makes the report, run.py
is the command (`python3 -m tools.soak` runs __main__.py).
"""
