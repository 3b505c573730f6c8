#!/usr/bin/env python3
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

    python tools/soak.py                          # 10 minutes, 64 clients, 50 users
    python tools/soak.py --duration 30            # a short check
    python tools/soak.py --out out/soak.json --seed 2 --add-share 0.5
    python tools/soak.py --endpoint http://127.0.0.1:8000 --pid 1234 --api-key KEY
    python tools/soak.py --repo ../other-checkout  # soak another checkout's server
"""
from __future__ import annotations

import argparse
import collections
import http.client
import json
import math
import os
import random
import re
import select
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from typing import Any, Dict, List, Optional, Sequence, Tuple

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

from tools.bench import fmt, markdown  # noqa: E402
from tools.bench_isolation import machine, percentile, summary  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ADD_SIZE = 20  # messages per Add, as the platform sends them at most
SESSION_ADDS = (1, 6)  # a session is this many Adds long (20-120 messages)
BASE_TIME_MS = 1672531200000  # 2023-01-01T00:00:00Z
DAY_MS = 24 * 3600 * 1000
MARKER_SHARE = 0.05  # share of Searches that look for a word planted in an acknowledged Add
TOP_KS = ((100, 0.7), (10, 0.3))  # top_k and how often; 100 is what formal runs send
OPTIONS_SHARE = 0.1  # share of Searches with multiple-choice options
JSON_HEADERS = {"Content-Type": "application/json"}


# -- small helpers ----------------------------------------------------------------------


def log(message: str) -> None:
    """Progress goes to stderr, so stdout holds only the report."""
    print(message, file=sys.stderr, flush=True)


def mib(kib: Optional[int]) -> str:
    """KiB as MiB with one decimal, for a table cell."""
    return fmt(None if kib is None else kib / 1024.0, "%.1f")


def command_line() -> str:
    """The command as run, for the report, with an API key's value hidden."""
    argv, hide = [], False
    for a in sys.argv:
        if hide:
            a, hide = "***", False
        elif a == "--api-key":
            hide = True
        elif a.startswith("--api-key="):
            a = "--api-key=***"
        argv.append(a)
    return " ".join(shlex.quote(a) for a in ["python"] + argv)


def json_safe(value: Any) -> Any:
    """NaN and infinities as None, so the JSON report is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


# -- the server process -----------------------------------------------------------------


def proc_status(pid: Optional[int]) -> Dict[str, int]:
    """VmRSS, VmHWM, RssAnon, RssFile, RssShmem (KiB) and Threads of a live process (/proc/PID/status).

    {} where unknown. RssAnon is the process's own heap and stacks; RssFile and RssShmem are
    mapped files (libraries, SQLite's WAL index), which grow with the files, not with leaks.
    """
    out: Dict[str, int] = {}
    if pid is None:
        return out
    try:
        with open("/proc/%d/status" % pid, encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "Threads"):
                    out[key] = int(value.split()[0])
    except (OSError, ValueError):
        pass
    return out


def proc_cpu_s(pid: Optional[int]) -> Optional[float]:
    """User + system CPU seconds a live process has used (/proc/PID/stat), or None."""
    if pid is None:
        return None
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def proc_open_files_limit(pid: Optional[int]) -> Optional[str]:
    """The soft limit on open files of a live process (/proc/PID/limits), as text."""
    if pid is None:
        return None
    try:
        with open("/proc/%d/limits" % pid, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Max open files"):
                    return line.split()[3]
    except OSError:
        pass
    return None


class ServerProcess:
    """`python -m flowmem serve --port 0 --db PATH` as a child; its log goes to a file.

    The child runs from `repo` (a flowmem checkout) with FLOWMEM_* variables removed
    from its environment, except FLOWMEM_API_KEY when `api_key` is given (so the key
    stays off the command line).
    """

    def __init__(self, db: str, log_path: str, repo: str = REPO_ROOT, api_key: Optional[str] = None,
                 extra_args: Sequence[str] = (), timeout_s: float = 60.0):
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
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


# -- conversation text ------------------------------------------------------------------


NAMES = """Dana Priya Jon Gina Maria Joanna Nate Evan Audrey Andrew James Deborah Jolene Calvin Omar Lena
Hiro Sofia Marco Aisha Tom Grace Ravi Elena Felix Nora Yusuf Mei Lucas Zara Ben Ines Kofi Hana Leo""".split()

SLOTS = {
    "activity": ["the pottery workshop", "salsa lessons", "rock climbing", "a half marathon", "the book club",
                 "a cooking course", "volunteering at the animal shelter", "guitar practice", "a photography walk",
                 "the chess tournament", "yoga in the park", "a camping trip", "the farmers market",
                 "painting a mural", "my Spanish class", "a charity run", "the jazz festival", "a road trip",
                 "baking sourdough", "board game night", "the science museum", "a birdwatching tour",
                 "kayaking on the river", "the pottery sale", "a wine tasting", "the comedy show"],
    "place": ["Lisbon", "the lake", "Denver", "the old harbor", "Kyoto", "the community center",
              "my grandma's house", "the mountains", "Portland", "the beach house", "the art museum",
              "the new cafe downtown", "Barcelona", "the national park", "my hometown", "Chicago"],
    "person": ["my sister", "my brother", "my boss", "an old friend", "my neighbour", "my cousin", "my mom",
               "my dad", "a coworker", "my roommate", "my partner", "the kids"],
    "thing": ["a blue bowl", "a vintage camera", "a beagle puppy", "a used bike", "a sunrise painting",
              "a new laptop", "a pair of hiking boots", "a cookbook", "a ukulele", "an herb garden",
              "a record player", "a tent", "a sketchbook", "a kayak", "a telescope", "running shoes"],
    "past": ["yesterday", "last week", "last weekend", "two days ago", "this morning", "last month",
             "last Friday", "a few weeks ago", "last year", "three days ago"],
    "future": ["next month", "next week", "tomorrow", "this summer", "in the spring", "next weekend"],
    "feeling": ["so relaxing", "exhausting but fun", "a bit scary", "really inspiring", "harder than I expected",
                "the best part of my week", "surprisingly peaceful", "a total mess, honestly"],
}

STATEMENTS = [
    "I went to {activity} {past} with {person} and it was {feeling}.",
    "I finally bought {thing} {past}. I have wanted one for ages.",
    "{Person} and I are planning to visit {place} {future}.",
    "Do you remember {activity}? I want to try it again {future}.",
    "I have been thinking about {activity} a lot since {past}.",
    "We drove to {place} {past}, so everything feels new.",
    "My favourite thing right now is {thing}; I use it every day.",
    "I signed up for {activity} {future}, wish me luck!",
    "{Person} gave me {thing} for my birthday {past}.",
    "Work has been busy, but {activity} keeps me sane.",
    "I lost {thing} at {place} {past} and I am still upset about it.",
    "We are moving to {place} {future}, I can hardly believe it.",
]

REPLIES = [
    "That sounds {feeling}! What did you like most about it?",
    "Oh nice, how was {place}?",
    "I did {activity} {past} too, with {person}.",
    "Haha, you always loved {thing}.",
    "Tell me more about {activity}, I have never tried it.",
    "I hope {person} enjoyed it as well.",
    "Wow, {activity} {past}? That must have been {feeling}.",
    "I am so happy for you. {Person} would love {place}.",
    "Send me photos of {thing} when you can!",
    "Last time I was in {place} it rained the whole trip.",
]

SYLLABLES = """ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu ka ke ki ko ku la le
li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu
za ze zi zo zu bar ter mon len kin dor fel gar han lim nor pel ran sel tor vin wel""".split()

STOPWORDS = set("""the and with that this have been for but was are you your about what when where who how did
from they them then than just very really some into over after before will would could should there their it's
i'm wish luck ages time every since still feels hardly believe honestly never tried""".split())


def pseudo_word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


class Vocabulary:
    """Rare words, Zipf-like by rank, so each user's index keeps growing new terms."""

    def __init__(self, seed: int, size: int = 20000):
        rng = random.Random("soak-vocabulary-%d" % seed)
        words = []
        seen = set()
        while len(words) < size:
            word = pseudo_word(rng)
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        total = 0.0
        self.cum_weights = []
        for rank in range(size):
            total += 1.0 / (rank + 2.7)
            self.cum_weights.append(total)

    def pick(self, rng: random.Random, k: int) -> List[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)


def fill(template: str, rng: random.Random) -> str:
    def slot(match: "re.Match[str]") -> str:
        name = match.group(1)
        value = rng.choice(SLOTS[name.lower()])
        return value[0].upper() + value[1:] if name[0].isupper() else value

    return re.sub(r"\{(\w+)\}", slot, template)


def marker_word(tag: str, serial: int) -> str:
    """A made-up word unique to one Add (letters only, so every tokenizer keeps it whole)."""
    letters = "bcdfghjklmnprstvz"
    n, out = serial, []
    while True:
        n, r = divmod(n, len(letters))
        out.append(letters[r])
        if not n:
            break
    return "qx" + tag + "".join(out) + "o"


class User:
    """One user's conversation so far; clients take `lock` to write the next Add."""

    def __init__(self, user_id: str, index: int, seed: int):
        self.user_id = user_id
        self.lock = threading.Lock()
        rng = random.Random("soak-user-%d-%s" % (seed, user_id))
        self.speakers = rng.sample(NAMES, 2)
        self.time_ms = BASE_TIME_MS + rng.randrange(365) * DAY_MS + rng.randrange(DAY_MS)
        self.session_index = -1
        self.session_id = ""
        self.session_adds_left = 0
        self.session_position = 0
        self.adds = 0
        self.messages = 0
        self.sessions = 0
        # Recent message texts for questions, and the unique words of acknowledged Adds.
        self.recent: "collections.deque[str]" = collections.deque(maxlen=400)
        self.markers: "collections.deque[str]" = collections.deque(maxlen=50)
        self.view_lock = threading.Lock()  # guards recent/markers, read by searching clients


class Conversations:
    """Every user's next Add and next question, deterministic for a seed (per user)."""

    def __init__(self, n_users: int, seed: int, run_tag: str):
        self.seed = seed
        self.run_tag = run_tag
        self.vocabulary = Vocabulary(seed)
        self.users = [User("soak-%s-u%03d" % (run_tag, i), i, seed) for i in range(n_users)]
        self._serial = 0
        self._serial_lock = threading.Lock()

    def next_serial(self) -> int:
        with self._serial_lock:
            self._serial += 1
            return self._serial

    def next_add(self, user: User, rng: random.Random) -> Tuple[Dict[str, Any], str, List[str]]:
        """The user's next Add body (call with user.lock held), its marker word and its texts."""
        if user.session_adds_left == 0:
            user.session_index += 1
            user.sessions += 1
            user.session_id = "s%04d" % user.session_index
            user.session_adds_left = rng.randint(*SESSION_ADDS)
            user.session_position = 0
            user.time_ms += rng.randint(1, 10) * DAY_MS + rng.randrange(DAY_MS // 4)
        serial = self.next_serial()
        marker = marker_word(self.run_tag[:2], serial)
        marker_at = rng.randrange(ADD_SIZE)
        same_time = rng.random() < 0.3  # some sessions carry one timestamp, as the platform may send
        messages, texts = [], []
        for i in range(ADD_SIZE):
            pos = user.session_position + i
            speaker = user.speakers[pos % 2]
            text = fill(rng.choice(STATEMENTS if pos % 2 == 0 else REPLIES), rng)
            if rng.random() < 0.3:
                text += " It reminded me of %s and %s." % tuple(self.vocabulary.pick(rng, 2))
            if i == marker_at:
                text += " The code word for the locker is %s." % marker
            content = "%s: %s" % (speaker, text)
            texts.append(content)
            messages.append({
                "role": "user" if pos % 2 == 0 else "assistant",
                "content": content,
                "timestamp": user.time_ms + (0 if same_time else pos * 45000),
            })
        body = {
            "request_id": "%s-%s-a%03d-%d" % (user.user_id, user.session_id, user.session_position // ADD_SIZE, serial),
            "user_id": user.user_id,
            "session_id": "%s-%s" % (user.user_id, user.session_id),
            "messages": messages,
        }
        user.session_position += ADD_SIZE
        user.session_adds_left -= 1
        user.adds += 1
        user.messages += ADD_SIZE
        return body, marker, texts

    @staticmethod
    def acknowledged(user: User, marker: str, texts: List[str]) -> None:
        """An Add was answered 200: its words may now be asked about."""
        with user.view_lock:
            user.recent.extend(texts)
            user.markers.append(marker)

    def question(self, user: User, rng: random.Random) -> Tuple[Dict[str, Any], Optional[str]]:
        """A Search body for the user, and the marker word it must find (or None)."""
        with user.view_lock:
            recent = list(user.recent)
            markers = list(user.markers)
        top_k = 100 if rng.random() < TOP_KS[0][1] else TOP_KS[1][0]
        if markers and rng.random() < MARKER_SHARE:
            marker = rng.choice(markers)
            return {"query": "What is the code word %s?" % marker, "user_id": user.user_id, "top_k": top_k}, marker
        if recent:
            speaker, _, text = rng.choice(recent).partition(": ")
            words = [w.strip(".,;:!?'").lower() for w in text.split()]
            words = [w for w in words if len(w) > 3 and w not in STOPWORDS and not w.startswith("qx")] or ["week"]
        else:  # nothing acknowledged yet: an unknown or empty user must give a valid (maybe empty) list
            speaker, words = rng.choice(user.speakers), self.vocabulary.pick(rng, 3)
        about = " ".join(rng.sample(words, min(len(words), rng.randint(1, 3))))
        form = rng.choice([
            "What did {s} say about {a}?", "When did {s} mention {a}?", "Who talked about {a}?", "{a}",
            "Where did {s} go for {a}?", "How did {s} feel about {a}?", "Did {s} ever talk about {a}?",
        ])
        body: Dict[str, Any] = {"query": form.format(s=speaker, a=about), "user_id": user.user_id, "top_k": top_k}
        if rng.random() < OPTIONS_SHARE:
            options = [about] + [" ".join(self.vocabulary.pick(rng, rng.randint(1, 2))) for _ in range(3)]
            rng.shuffle(options)
            body["options"] = options
        return body, None


# -- the contract -----------------------------------------------------------------------


def check_add(body: Dict[str, Any], payload: Any) -> Optional[str]:
    """Why a 200 Add answer breaks the contract, or None."""
    if not isinstance(payload, dict):
        return "Add answer is not a JSON object"
    if payload.get("success") is not True:
        return "Add answer has no success: true"
    for key in ("request_id", "user_id", "session_id"):
        if payload.get(key) != body[key]:
            return "Add answer does not echo %s" % key
    return None


def check_search(body: Dict[str, Any], payload: Any) -> Optional[str]:
    """Why a 200 Search answer breaks the contract, or None."""
    if not isinstance(payload, dict):
        return "Search answer is not a JSON object"
    data = payload.get("data")
    if not isinstance(data, list):
        return "Search answer has no data list"
    if len(data) > max(0, body["top_k"]):
        return "Search answer has %d items, more than top_k %d" % (len(data), body["top_k"])
    ids = set()
    previous = None
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            return "data[%d] is not an object" % i
        if not isinstance(item.get("id"), str) or not item["id"]:
            return "data[%d] has no non-empty string id" % i
        if item["id"] in ids:
            return "data[%d] repeats id %s" % (i, item["id"])
        ids.add(item["id"])
        if not isinstance(item.get("content"), str) or not item["content"].strip():
            return "data[%d] has no non-empty string content" % i
        score = item.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            return "data[%d] has no finite numeric score" % i
        if previous is not None and score > previous:
            return "scores increase at data[%d]" % i
        previous = score
        created = item.get("created_at")
        if created is not None and not isinstance(created, str):
            return "data[%d].created_at is not a string" % i
    return None


# -- HTTP client ------------------------------------------------------------------------


def peer_closed(sock: Optional[socket.socket]) -> bool:
    """Whether an idle keep-alive socket was closed by the server (or holds bytes nobody asked for)."""
    if sock is None:
        return True
    try:
        if hasattr(select, "poll"):  # no FD_SETSIZE limit, unlike select()
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            readable = bool(poller.poll(0))
        else:
            readable = bool(select.select([sock], [], [], 0)[0])
        # Readable while idle: EOF, a reset, or an unsolicited answer (e.g. a 408 before closing): start over.
        return readable
    except (OSError, ValueError):
        return True


class Outcome:
    """One request: what happened and how long it took."""

    __slots__ = ("status", "payload", "latency_ms", "error_kind", "error_detail", "body_text")

    def __init__(self) -> None:
        self.status: Optional[int] = None
        self.payload: Any = None
        self.latency_ms: Optional[float] = None
        self.error_kind: Optional[str] = None  # None, "5xx", "non-200", "malformed", "connection"
        self.error_detail = ""
        self.body_text = ""


class KeepAliveClient:
    """One keep-alive connection; it reconnects only when the server closed it (counted)."""

    def __init__(self, host: str, port: int, timeout_s: float, headers: Dict[str, str]):
        self.host, self.port, self.timeout_s, self.headers = host, port, timeout_s, headers
        self.conn: Optional[http.client.HTTPConnection] = None
        self.connects = 0
        self.reconnects: "collections.Counter[str]" = collections.Counter()
        self._pending_reason: Optional[str] = None

    def _connect(self) -> None:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        self.conn = None
        conn.connect()
        self.conn = conn
        self.connects += 1

    def ready(self) -> None:
        """Make sure there is an open connection before a timed request (connecting is not timed)."""
        if self.conn is None:
            self._connect()
            if self._pending_reason:
                self.reconnects[self._pending_reason] += 1
                self._pending_reason = None
        elif self.conn.sock is None:  # http.client closed it: the server answered "Connection: close"
            self.reconnects["server closed after an answer"] += 1
            self._connect()
        elif peer_closed(self.conn.sock):
            self.reconnects["server closed an idle connection"] += 1
            self.conn.close()
            self._connect()

    def request(self, method: str, path: str, body: Optional[bytes]) -> Outcome:
        out = Outcome()
        try:
            self.ready()
        except OSError as e:
            out.error_kind, out.error_detail = "connection", "connect: %s" % type(e).__name__
            self.conn = None
            self._pending_reason = "after a connection error"
            return out
        assert self.conn is not None
        t0 = time.perf_counter()
        try:
            self.conn.request(method, path, body=body, headers=self.headers)
            response = self.conn.getresponse()
            raw = response.read()
            out.latency_ms = (time.perf_counter() - t0) * 1000.0
            out.status = response.status
        except (OSError, http.client.HTTPException) as e:
            out.latency_ms = (time.perf_counter() - t0) * 1000.0
            kind = "timeout" if isinstance(e, socket.timeout) else type(e).__name__
            out.error_kind, out.error_detail = "connection", kind
            self.conn.close()
            self.conn = None
            self._pending_reason = "after a connection error"
            return out
        if out.status != 200:
            out.error_kind = "5xx" if out.status >= 500 else "non-200"
            out.error_detail = "HTTP %d" % out.status
            out.body_text = raw[:300].decode("utf-8", "replace")
            return out
        try:
            out.payload = json.loads(raw)
        except ValueError:
            out.error_kind, out.error_detail = "malformed", "200 with a body that is not JSON"
            out.body_text = raw[:300].decode("utf-8", "replace")
        return out

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


# -- the soak ---------------------------------------------------------------------------


class Record:
    """What one client saw: a row per request, and its errors."""

    def __init__(self) -> None:
        # (start s since t0, endpoint, ms or None when no answer came, ok)
        self.rows: List[Tuple[float, str, Optional[float], bool]] = []
        self.marker_searches = 0
        self.errors: "collections.Counter[Tuple[str, str, str]]" = collections.Counter()  # (endpoint, kind, detail)
        self.examples: List[Dict[str, Any]] = []


class Soak:
    def __init__(self, args: argparse.Namespace, host: str, port: int, pid: Optional[int],
                 server: Optional[ServerProcess]):
        self.args = args
        self.host, self.port, self.pid, self.server = host, port, pid, server
        run_tag = "%s%04x" % ("abcdefghijklmnopqrstuvwxyz"[args.seed % 26], int(time.time() * 1000) % 0xFFFF)
        self.convo = Conversations(args.users, args.seed, run_tag)
        self.headers = auth_headers(args.api_key)
        self.stop = threading.Event()
        self.t0 = 0.0
        self.deadline = 0.0
        self.samples: List[Dict[str, Any]] = []
        self.records: List[Record] = []
        self.clients: List[KeepAliveClient] = []
        self.aborted: Optional[str] = None

    # one client thread
    def client(self, index: int, start: threading.Barrier) -> None:
        rng = random.Random("soak-client-%d-%d" % (self.args.seed, index))
        record = self.records[index]
        client = self.clients[index]
        try:
            client.ready()
        except OSError:
            pass  # the first request tries again, and counts the error if it fails too
        try:
            start.wait(120)
        except threading.BrokenBarrierError:
            return
        users = self.convo.users
        while not self.stop.is_set() and time.perf_counter() < self.deadline:
            if rng.random() < self.args.add_share:
                self.one_add(rng, users, client, record)
            else:
                self.one_search(rng, users, client, record)
        client.close()

    def pick_writable_user(self, rng: random.Random, users: Sequence[User]) -> User:
        """A random user whose previous Add is not still in flight (else wait for the last one tried)."""
        for _ in range(4):
            user = rng.choice(users)
            if user.lock.acquire(blocking=False):
                return user
        user.lock.acquire()
        return user

    def one_add(self, rng: random.Random, users: Sequence[User], client: KeepAliveClient, record: Record) -> None:
        user = self.pick_writable_user(rng, users)
        try:
            body, marker, texts = self.convo.next_add(user, rng)
            data = json.dumps(body).encode("utf-8")
            started = time.perf_counter() - self.t0
            out = client.request("POST", "/add", data)
            ok = out.error_kind is None
            if ok:
                problem = check_add(body, out.payload)
                if problem:
                    ok = False
                    out.error_kind, out.error_detail = "malformed", problem
                    out.body_text = json.dumps(out.payload)[:300]
            if ok:
                self.convo.acknowledged(user, marker, texts)
        finally:
            user.lock.release()
        self.note(record, "add", started, out, ok)

    def one_search(self, rng: random.Random, users: Sequence[User], client: KeepAliveClient, record: Record) -> None:
        user = rng.choice(users)
        body, marker = self.convo.question(user, rng)
        record.marker_searches += marker is not None
        started = time.perf_counter() - self.t0
        out = client.request("POST", "/search", json.dumps(body).encode("utf-8"))
        ok = out.error_kind is None
        if ok:
            problem = check_search(body, out.payload)
            if problem:
                ok = False
                out.error_kind, out.error_detail = "malformed", problem
                out.body_text = json.dumps(out.payload)[:300]
            elif marker is not None and not any(marker in item["content"] for item in out.payload["data"]):
                ok = False
                out.error_kind = "lost write"
                out.error_detail = "an acknowledged Add's unique word is not in the answer"
                out.body_text = "query %r, %d items" % (body["query"], len(out.payload["data"]))
        self.note(record, "search top_k=%d" % body["top_k"], started, out, ok)

    def note(self, record: Record, endpoint: str, started: float, out: Outcome, ok: bool) -> None:
        record.rows.append((started, endpoint, out.latency_ms if out.status is not None else None, ok))
        if not ok:
            record.errors[(endpoint, out.error_kind or "?", out.error_detail)] += 1
            if len(record.examples) < 3:
                record.examples.append({"t_s": round(started, 3), "endpoint": endpoint, "kind": out.error_kind,
                                        "detail": out.error_detail, "status": out.status, "body": out.body_text})

    # the server's memory
    def sample(self) -> Dict[str, Any]:
        status = proc_status(self.pid)
        s = {"t_s": time.perf_counter() - self.t0 if self.t0 else 0.0, "rss_kib": status.get("VmRSS"),
             "anon_kib": status.get("RssAnon"), "threads": status.get("Threads"), "cpu_s": proc_cpu_s(self.pid)}
        self.samples.append(s)
        return s

    def sampler(self) -> None:
        while not self.stop.wait(self.args.sample_interval):
            self.sample()
            if self.server is not None and not self.server.alive():
                self.aborted = "the server exited during the run (exit status %s)" % self.server.proc.returncode
                self.stop.set()

    def preload(self) -> Dict[str, Any]:
        """Before the clock: every user gets `--preload` messages over HTTP (8 connections)."""
        pending = list(self.convo.users)
        lock = threading.Lock()
        done = {"adds": 0, "failed": 0}
        examples: List[str] = []

        def work(i: int) -> None:
            rng = random.Random("soak-preload-%d-%d" % (self.args.seed, i))
            client = KeepAliveClient(self.host, self.port, self.args.timeout, self.headers)
            while True:
                with lock:
                    if not pending:
                        break
                    user = pending.pop()
                while user.messages < self.args.preload:
                    with user.lock:
                        body, marker, texts = self.convo.next_add(user, rng)
                    out = client.request("POST", "/add", json.dumps(body).encode("utf-8"))
                    problem = out.error_detail if out.error_kind else check_add(body, out.payload)
                    with lock:
                        done["adds"] += 1
                        if problem:
                            done["failed"] += 1
                            if len(examples) < 3:
                                examples.append(problem)
                    if not problem:
                        self.convo.acknowledged(user, marker, texts)
            client.close()

        t0 = time.perf_counter()
        workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(min(8, len(pending)))]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        return dict(done, seconds=time.perf_counter() - t0, messages_per_user=self.args.preload,
                    failures=examples)

    def run(self) -> Dict[str, Any]:
        args = self.args
        preload = None
        if args.preload > 0:
            log("[soak] preloading %d messages for each of %d users" % (args.preload, args.users))
            preload = self.preload()
        n = args.clients
        self.records = [Record() for _ in range(n)]
        self.clients = [KeepAliveClient(self.host, self.port, args.timeout, self.headers) for _ in range(n)]
        start = threading.Barrier(n + 1)
        threads = [threading.Thread(target=self.client, args=(i, start), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        start_sample = self.sample()  # before any load, every client connected or connecting
        # The clock is set before the clients are let go, so none of them sees a deadline of 0.
        self.t0 = time.perf_counter()
        self.deadline = self.t0 + args.duration
        cpu0 = os.times()
        start.wait(120)
        start_sample["t_s"] = 0.0
        sampler = threading.Thread(target=self.sampler, daemon=True)
        sampler.start()
        last_progress = self.t0
        try:
            while any(t.is_alive() for t in threads):
                time.sleep(0.5)
                now = time.perf_counter()
                if now - last_progress >= args.progress_interval:
                    last_progress = now
                    done = sum(len(r.rows) for r in self.records)
                    errors = sum(sum(r.errors.values()) for r in self.records)
                    last = self.samples[-1] if self.samples else {}
                    log("[soak] %4.0f s / %.0f s: %d requests, %d errors, server RSS %s MiB, %s threads" % (
                        now - self.t0, args.duration, done, errors, mib(last.get("rss_kib")), last.get("threads")))
                if now > self.deadline + args.timeout + 30:
                    self.aborted = self.aborted or "clients did not stop within %.0f s of the end" % (args.timeout + 30)
                    break
        except KeyboardInterrupt:
            self.aborted = "interrupted"
            self.stop.set()
            for t in threads:
                t.join(args.timeout + 5)
        load_end = time.perf_counter()
        cpu1 = os.times()
        self.stop.set()
        sampler.join(args.sample_interval + 5)
        end_sample = self.sample()
        server_cpu = None
        if start_sample.get("cpu_s") is not None and end_sample.get("cpu_s") is not None:
            server_cpu = end_sample["cpu_s"] - start_sample["cpu_s"]
        return {"wall_s": load_end - self.t0, "start_sample": start_sample, "end_sample": end_sample,
                "preload": preload,
                "client_cpu_s": (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system), "server_cpu_s": server_cpu}


# -- figures and the report -------------------------------------------------------------


def endpoint_rows(rows: Sequence[Tuple[float, str, Optional[float], bool]],
                  errors: Dict[Tuple[str, str, str], int], wall_s: float) -> List[Dict[str, Any]]:
    """Per endpoint: requests sent, errors, latency of the answered ones, answered requests per second."""
    def group(name: str) -> str:
        return "search" if name.startswith("search") else name

    attempts: Dict[str, int] = collections.Counter()
    latencies: Dict[str, List[float]] = collections.defaultdict(list)
    for _, endpoint, ms, _ in rows:
        for name in {endpoint, group(endpoint), "all"}:
            attempts[name] += 1
            if ms is not None:
                latencies[name].append(ms)
    err_by: Dict[str, int] = collections.Counter()
    for (endpoint, _, _), count in errors.items():
        for name in {endpoint, group(endpoint), "all"}:
            err_by[name] += count
    order = ["add", "search", "search top_k=100", "search top_k=10"]
    out = []
    for name in order + sorted(set(attempts) - set(order) - {"all"}) + ["all"]:
        if not attempts.get(name) and not err_by.get(name):
            continue
        lat = latencies.get(name, [])
        out.append({"endpoint": name, "requests": attempts.get(name, 0), "answered": len(lat),
                    "errors": err_by.get(name, 0), "latency": summary(lat),
                    "throughput_per_s": len(lat) / wall_s if wall_s else float("nan")})
    return out


def sample_at(samples: Sequence[Dict[str, Any]], t_s: float) -> Optional[Dict[str, Any]]:
    """The first sample with an RSS figure at or after t_s (else the last one with one)."""
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    for s in with_rss:
        if s["t_s"] >= t_s:
            return s
    return with_rss[-1] if with_rss else None


def sample_before(samples: Sequence[Dict[str, Any]], t_s: float) -> Optional[Dict[str, Any]]:
    """The last sample with an RSS figure at or before t_s (else the first one with one)."""
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    before = [s for s in with_rss if s["t_s"] <= t_s + 1e-6]
    return before[-1] if before else (with_rss[0] if with_rss else None)


def memory_figures(samples: Sequence[Dict[str, Any]], warmup_s: float, start: Dict[str, Any],
                   end: Dict[str, Any], messages_after_warmup: int) -> Dict[str, Any]:
    with_rss = [s for s in samples if s.get("rss_kib") is not None]
    if not with_rss:
        return {"available": False}
    warm = sample_at(samples, warmup_s)
    peak = max(with_rss, key=lambda s: s["rss_kib"])
    threads = [s["threads"] for s in with_rss if s.get("threads") is not None]
    end = end if end.get("rss_kib") is not None else with_rss[-1]
    start = start if start.get("rss_kib") is not None else with_rss[0]
    growth = anon_growth = per_message = None
    if warm and warm["rss_kib"]:
        growth = (end["rss_kib"] - warm["rss_kib"]) * 100.0 / warm["rss_kib"]
        if messages_after_warmup:
            per_message = (end["rss_kib"] - warm["rss_kib"]) * 1024.0 / messages_after_warmup
    if warm and warm.get("anon_kib") and end.get("anon_kib") is not None:
        anon_growth = (end["anon_kib"] - warm["anon_kib"]) * 100.0 / warm["anon_kib"]
    return {
        "available": True,
        "start": start, "after_warmup": warm, "end": end, "max": peak,
        "max_threads": max(threads) if threads else None,
        "growth_after_warmup_pct": growth,
        "anon_growth_after_warmup_pct": anon_growth,
        "messages_after_warmup": messages_after_warmup,
        "growth_bytes_per_message_added": per_message,
        "samples": len(with_rss),
    }


def over_time(rows: Sequence[Tuple[float, str, Optional[float], bool]], samples: Sequence[Dict[str, Any]],
              wall_s: float, slices: int) -> List[Dict[str, Any]]:
    """The run cut into equal slices: requests/s, latency and errors per slice, RSS at its end."""
    width = wall_s / slices if wall_s > 0 else 1.0
    out = []
    for i in range(slices):
        lo, hi = i * width, (i + 1) * width
        part = [r for r in rows if lo <= r[0] < hi or (i == slices - 1 and r[0] >= hi)]
        adds = [ms for _, e, ms, _ in part if e == "add" and ms is not None]
        searches = [ms for _, e, ms, _ in part if e.startswith("search") and ms is not None]
        s = sample_before(samples, hi) if samples else None
        out.append({
            "from_s": lo, "to_s": hi, "requests": len(part), "req_per_s": len(part) / width,
            "failed": sum(1 for r in part if not r[3]),
            "add_p50_ms": percentile(adds, 50), "add_p99_ms": percentile(adds, 99),
            "search_p50_ms": percentile(searches, 50), "search_p99_ms": percentile(searches, 99),
            "rss_kib": s["rss_kib"] if s else None, "threads": s.get("threads") if s else None,
        })
    return out


def report(figures: Dict[str, Any]) -> str:
    m = figures["machine"]
    p = figures["params"]
    out: List[str] = []
    add = out.append
    add("# flowmem soak\n")
    add("command: `%s`  " % figures["command"])
    add("machine: %s CPUs, %s, Python %s, SQLite %s  " % (m["cpu_count"], m["platform"], m["python"], m["sqlite"]))
    add("server: %s  " % figures["server"]["description"])
    add("load: %.0f s (ran %.1f s), %d keep-alive clients, %d users, add share %.2f (Adds of %d messages), "
        "seed %d, warm-up %.0f s  \n" % (p["duration"], figures["wall_s"], p["clients"], p["users"], p["add_share"],
                                         ADD_SIZE, p["seed"], figures["warmup_s"]))
    rows: List[Sequence[Any]] = [("endpoint", "requests", "errors", "p50 ms", "p95 ms", "p99 ms", "max ms", "req/s")]
    for e in figures["endpoints"]:
        lat = e["latency"]
        rows.append((e["endpoint"], e["requests"], e["errors"], fmt(lat["p50_ms"]), fmt(lat["p95_ms"]),
                     fmt(lat["p99_ms"]), fmt(lat["max_ms"], "%.1f"), fmt(e["throughput_per_s"], "%.1f")))
    add(markdown(rows))
    add("\nlatency: request sent to answer read, over answered requests (any status); req/s: answered requests "
        "per second of the run; clients and server share the machine's CPUs.\n")

    mem = figures["memory"]
    if mem.get("available"):
        rows = [("server", "t s", "RSS MiB", "of it anonymous MiB", "threads")]
        for label, key in (("start", "start"), ("after warm-up", "after_warmup"), ("end", "end")):
            s = mem.get(key) or {}
            rows.append((label, fmt(s.get("t_s"), "%.0f"), mib(s.get("rss_kib")), mib(s.get("anon_kib")),
                         fmt(s.get("threads"), "%d")))
        rows.append(("max (RSS at %s s; threads)" % fmt(mem["max"].get("t_s"), "%.0f"), "-",
                     mib(mem["max"].get("rss_kib")), mib(mem["max"].get("anon_kib")),
                     fmt(mem.get("max_threads"), "%d")))
        add(markdown(rows))
        add("\nRSS change from after warm-up to end: **%s** (limit %+.0f%%; anonymous memory %s), while %d messages "
            "were added: %s bytes of RSS per message added. VmHWM at end %s MiB; %d samples, every %.0f s.\n" % (
                fmt(mem["growth_after_warmup_pct"], "%+.1f%%"), p["max_rss_growth"],
                fmt(mem["anon_growth_after_warmup_pct"], "%+.1f%%"), mem["messages_after_warmup"],
                fmt(mem["growth_bytes_per_message_added"], "%.0f"), mib(figures["server"].get("vmhwm_kib")),
                mem["samples"], p["sample_interval"]))
    else:
        add("server RSS: not measured (give `--pid` of the server process with `--endpoint`; Linux only).\n")

    errs = figures["errors"]
    if errs:
        rows = [("errors", "kind", "detail", "count")]
        for e in errs:
            rows.append((e["endpoint"], e["kind"], e["detail"].replace("|", "/"), e["count"]))
        add(markdown(rows))
        add("")
        for ex in figures["error_examples"][:5]:
            add("- example at %.1f s: %s %s %s: %s  " % (ex["t_s"], ex["endpoint"], ex["kind"], ex["detail"],
                                                         ex["body"][:200].replace("\n", " ")))
        add("")
    else:
        add("errors: none (no 5xx, no other non-200, no malformed answer, no lost write, no connection error).\n")

    rows = [("time s", "req/s", "failed", "add p50 ms", "add p99 ms", "search p50 ms", "search p99 ms", "RSS MiB",
             "threads")]
    for s in figures["over_time"]:
        span = "%.0f-%.0f" if figures["wall_s"] >= 10 * len(figures["over_time"]) else "%.1f-%.1f"
        rows.append((span % (s["from_s"], s["to_s"]), fmt(s["req_per_s"], "%.1f"), s["failed"],
                     fmt(s["add_p50_ms"]), fmt(s["add_p99_ms"]), fmt(s["search_p50_ms"]), fmt(s["search_p99_ms"]),
                     mib(s["rss_kib"]), fmt(s["threads"], "%d")))
    add(markdown(rows))
    d = figures["data"]
    c = figures["connections"]
    add("\ndata: %d Adds acknowledged (%d messages) in %d sessions of %d users; %d Searches checked for an "
        "acknowledged Add's unique word  " % (d["adds_acknowledged"], d["messages_acknowledged"], d["sessions"],
                                              p["users"], d["marker_searches"]))
    if figures.get("preload"):
        pre = figures["preload"]
        add("preload: %d messages per user before the clock, %d Adds (%d failed) in %.0f s  " % (
            pre["messages_per_user"], pre["adds"], pre["failed"], pre["seconds"]))
    cpu = figures["cpu"]
    add("CPU during the load: server %s s (%s cores on average), soak clients %.0f s (%.2f cores)  " % (
        fmt(cpu["server_s"], "%.0f"), fmt(None if cpu["server_s"] is None else cpu["server_s"] / figures["wall_s"]),
        cpu["client_s"], cpu["client_s"] / figures["wall_s"]))
    add("connections: %d opened by %d clients; reconnects: %s  " % (
        c["connects"], p["clients"], ", ".join("%s %d" % kv for kv in sorted(c["reconnects"].items())) or "none"))
    srv = figures["server"]
    if srv.get("log_problems") is not None:
        lp = srv["log_problems"]
        add("server log: %d tracebacks, %d ERROR lines, %d logged 5xx; exit status after SIGTERM: %s  " % (
            lp["tracebacks"], lp["error_lines"], lp["logged_5xx"], srv.get("exit_status")))
    if srv.get("db_bytes") is not None:
        add("database: %.1f MB (+ WAL %.1f MB) at the end  " % (srv["db_bytes"] / 1e6, srv["wal_bytes"] / 1e6))
    add("\n**%s**" % ("PASS" if figures["passed"] else "FAIL: " + "; ".join(figures["failures"])))
    return "\n".join(out)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--duration", type=float, default=600.0, help="seconds of load (600)")
    p.add_argument("--clients", type=int, default=64, help="client threads, one keep-alive connection each (64)")
    p.add_argument("--users", type=int, default=50, help="users the clients write and ask for (50)")
    p.add_argument("--preload", type=int, default=0, metavar="MESSAGES",
                   help="before the clock starts, add this many messages to every user (0); with a small "
                        "--add-share this gives a steady state, where RSS should stop growing")
    p.add_argument("--add-share", type=float, default=0.2, help="fraction of requests that are Adds (0.2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", "--json", dest="out", metavar="PATH", help="also write every figure to this JSON file")
    p.add_argument("--api-key", help="send it as Authorization: Bearer; a server started here is given it "
                                     "(FLOWMEM_API_KEY)")
    p.add_argument("--endpoint", help="soak this running server instead of starting one (http://HOST:PORT)")
    p.add_argument("--pid", type=int, help="with --endpoint: the server's process id, for its RSS and threads")
    p.add_argument("--repo", default=REPO_ROOT, help="the flowmem checkout whose server is started (this one)")
    p.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for `flowmem serve` (repeatable), e.g. --serve-arg=--synchronous=NORMAL")
    p.add_argument("--warmup", type=float, help="seconds of warm-up before the RSS baseline "
                                                "(10%% of the run, at least 30 s, at most half of it)")
    p.add_argument("--max-rss-growth", type=float, default=10.0, help="percent RSS may grow after warm-up (10)")
    p.add_argument("--sample-interval", type=float, default=2.0, help="seconds between RSS samples (2)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a request may take before it counts as a "
                                                               "connection error (60)")
    p.add_argument("--slices", type=int, default=10, help="rows of the over-time table (10)")
    p.add_argument("--progress-interval", type=float, default=30.0, help="seconds between progress lines (30)")
    p.add_argument("--keep", action="store_true", help="keep the temporary database and server log")
    args = p.parse_args(argv)
    if not 0.0 <= args.add_share <= 1.0:
        p.error("--add-share must be between 0 and 1")
    if args.duration <= 0 or args.clients < 1 or args.users < 1:
        p.error("--duration, --clients and --users must be positive")
    if args.pid is not None and not args.endpoint:
        p.error("--pid goes with --endpoint")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    warmup_s = args.warmup if args.warmup is not None else min(max(0.1 * args.duration, 30.0), args.duration / 2)
    workdir = tempfile.mkdtemp(prefix="flowmem-soak-")
    server: Optional[ServerProcess] = None
    srv: Dict[str, Any] = {}
    try:
        if args.endpoint:
            host, port = parse_endpoint(args.endpoint)
            pid = args.pid
            srv["description"] = "%s (running; %s)" % (
                args.endpoint, "pid %d" % pid if pid else "no --pid, so no RSS figures")
        else:
            db = os.path.join(workdir, "soak.db")
            log("[soak] starting flowmem serve on %s" % db)
            server = ServerProcess(db, os.path.join(workdir, "serve.log"), args.repo, args.api_key, args.serve_arg)
            host, port, pid = server.host, server.port, server.pid
            srv["description"] = "started here: `%s` from %s, pid %d, %s" % (
                " ".join(shlex.quote(a) for a in ["python"] + server.argv[1:]), args.repo, pid, server.endpoint)
        health = wait_healthy(host, port)
    except (RuntimeError, ValueError, OSError) as e:
        log("[soak] cannot start: %s" % e)
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        return 2
    srv["health"] = health
    srv["open_files_limit"] = proc_open_files_limit(pid)

    log("[soak] %.0f s, %d clients, %d users, add share %.2f against %s:%d" % (
        args.duration, args.clients, args.users, args.add_share, host, port))
    soak = Soak(args, host, port, pid, server)
    result = soak.run()
    srv["vmhwm_kib"] = proc_status(pid).get("VmHWM")
    try:
        wait_healthy(host, port, 10)
        srv["healthy_at_end"] = True
    except RuntimeError:
        srv["healthy_at_end"] = False
    if server is not None:
        srv["exit_status"] = server.stop()
        srv["log_problems"] = log_problems(server.log_text())
        db = os.path.join(workdir, "soak.db")
        srv["db_bytes"] = os.path.getsize(db) if os.path.exists(db) else 0
        srv["wal_bytes"] = os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0
        srv["log_path"] = server.log_path if args.keep else None

    rows = sorted((r for rec in soak.records for r in rec.rows), key=lambda r: r[0])
    errors: "collections.Counter[Tuple[str, str, str]]" = collections.Counter()
    examples: List[Dict[str, Any]] = []
    for rec in soak.records:
        errors.update(rec.errors)
        examples.extend(rec.examples)
    examples.sort(key=lambda e: e["t_s"])
    wall_s = result["wall_s"]
    reconnects: "collections.Counter[str]" = collections.Counter()
    for c in soak.clients:
        reconnects.update(c.reconnects)
    users = soak.convo.users
    # What was acknowledged: Adds counted by the users' state include ones that failed; count the 200s.
    acked_adds = sum(1 for r in rows if r[1] == "add" and r[3])
    figures: Dict[str, Any] = {
        "command": command_line(),
        "machine": machine(),
        "params": {k: v for k, v in vars(args).items() if k != "api_key"},
        "warmup_s": warmup_s,
        "wall_s": wall_s,
        "server": srv,
        "endpoints": endpoint_rows(rows, errors, wall_s),
        "errors": [{"endpoint": e, "kind": k, "detail": d, "count": n}
                   for (e, k, d), n in sorted(errors.items(), key=lambda kv: -kv[1])],
        "error_examples": examples[:20],
        "memory": memory_figures(soak.samples, warmup_s, result["start_sample"], result["end_sample"],
                                 ADD_SIZE * sum(1 for r in rows if r[1] == "add" and r[3] and r[0] >= warmup_s)),
        "over_time": over_time(rows, soak.samples, wall_s, max(1, args.slices)),
        "samples": soak.samples,
        "data": {
            "adds_acknowledged": acked_adds,
            "messages_acknowledged": acked_adds * ADD_SIZE,
            "sessions": sum(u.sessions for u in users),
            "marker_searches": sum(rec.marker_searches for rec in soak.records),
        },
        "cpu": {"server_s": result["server_cpu_s"], "client_s": result["client_cpu_s"]},
        "preload": result["preload"],
        "connections": {"connects": sum(c.connects for c in soak.clients), "reconnects": dict(reconnects)},
        "aborted": soak.aborted,
    }

    failures = []
    if soak.aborted:
        failures.append(soak.aborted)
    n_errors = sum(errors.values())
    if n_errors:
        by_kind = collections.Counter()
        for (_, k, _), n in errors.items():
            by_kind[k] += n
        failures.append("%d errors (%s)" % (n_errors, ", ".join("%s %d" % kv for kv in sorted(by_kind.items()))))
    growth = figures["memory"].get("growth_after_warmup_pct")
    if growth is not None and growth > args.max_rss_growth:
        failures.append("RSS grew %.1f%% from after warm-up to the end (limit %.0f%%)" % (growth, args.max_rss_growth))
    if not srv.get("healthy_at_end"):
        failures.append("GET /health failed after the run")
    if server is not None and srv.get("exit_status") != 0:
        failures.append("the server's exit status after SIGTERM was %s" % srv.get("exit_status"))
    if not rows:
        failures.append("no request was answered")
    if result["preload"] and result["preload"]["failed"]:
        failures.append("%d preload Adds failed (%s)" % (result["preload"]["failed"],
                                                          "; ".join(result["preload"]["failures"])))
    figures["failures"] = failures
    figures["passed"] = not failures

    finish(report(figures), figures, args.out, workdir, args.keep, "soak")
    return 0 if figures["passed"] else 1


def finish(text: str, figures: Dict[str, Any], out: Optional[str], workdir: str, keep: bool, tool: str) -> None:
    """Print the report, write the figures as JSON to `out` if given, and remove `workdir` unless kept."""
    print(text)
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            json.dump(json_safe(figures), f, indent=2, sort_keys=True)
    if keep:
        log("[%s] kept %s" % (tool, workdir))
    else:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
