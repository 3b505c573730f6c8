#!/usr/bin/env python3
"""Independent black-box conformance checker for the Add/Search wire contract.

Written only from the challenge's published contract (docs/api.md, The contract), never
from the implementation, so that a misreading of the contract in the server cannot be
mirrored here.

Usage:
    python tools/contract_check.py --endpoint http://127.0.0.1:8000 [--api-key KEY] [--verbose]

Every check prints one line, `PASS name`, `FAIL name: why` or `SKIP name: why`.
Exit status: 0 all checks passed, 1 some check failed, 2 endpoint unreachable.

Every user, request and session id is a fresh uuid4, so the checker can run
against a server holding other data; it leaves behind only its own users, whose
user_id starts with --user-prefix (default "contract-check-"). It says so on stderr
before it writes anything: point it at a scratch server.
Standard library only; Python 3.9 compatible.
"""
from __future__ import annotations

import argparse
import datetime
import http.client
import json
import math
import select
import socket
import ssl
import sys
import threading
import time
import unicodedata
import uuid
from collections import namedtuple
from urllib.parse import urlsplit

TIMEOUT_S = 10.0
# 2023-05-08T13:56:00Z: every timestamped message uses it, so created_at is predictable.
TS_MS = 1683554160000
TS_DT = datetime.datetime(2023, 5, 8, 13, 56, 0, tzinfo=datetime.timezone.utc)
BIG_TOP_K = 1000  # large enough to see every duplicate of a word the checker wrote

Response = namedtuple("Response", "status json headers")

_NO_BODY = object()
_print_lock = threading.Lock()
_added_words = []  # every distinctive word sent to /add; /health must reveal none
_added_words_lock = threading.Lock()


class CheckFailed(Exception):
    pass


def require(cond, why):
    if not cond:
        raise CheckFailed(why)


def log(msg):
    with _print_lock:
        print(msg, flush=True)


# --------------------------------------------------------------------------- HTTP


class Client:
    """One new connection per request: threads share nothing, and a server that
    closes a connection after an error cannot poison the next check."""

    def __init__(self, endpoint, api_key=None, verbose=False):
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("endpoint must look like http://host:port")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if self.scheme == "https" else 80)
        self.base = parts.path.rstrip("/")
        self.api_key = api_key
        self.verbose = verbose

    def auth_headers(self):
        return {"Authorization": "Bearer " + self.api_key} if self.api_key else {}

    def _connection(self):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=TIMEOUT_S)
        return http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT_S)

    def raw(self, method, path, body=None, headers=None, auth=True):
        """Send bytes, return (status, raw body bytes, lower-cased headers)."""
        h = dict(self.auth_headers()) if auth else {}
        if body is not None:
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        conn = self._connection()
        started = time.monotonic()
        try:
            conn.request(method, self.base + path, body=body, headers=h)
            resp = conn.getresponse()
            data = resp.read()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()
        if self.verbose:
            ms = (time.monotonic() - started) * 1000
            log("    %s %s -> %d (%.0f ms) %s" % (method, path, resp.status, ms, _short(data)))
        return resp.status, data, hdrs

    def call(self, method, path, obj=_NO_BODY, headers=None, auth=True, ascii_json=False):
        """JSON in, Response(status, parsed JSON or None, headers) out."""
        body = None
        if obj is not _NO_BODY:
            # Raw UTF-8 by default; ascii_json exercises \\u escapes (surrogate pairs for emoji).
            body = json.dumps(obj, ensure_ascii=ascii_json).encode("utf-8")
        status, data, hdrs = self.raw(method, path, body, headers, auth)
        return Response(status, _parse_json(data), hdrs)


def _parse_json(data):
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


def _short(data, limit=200):
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
    return text if len(text) <= limit else text[:limit] + "...(%d bytes)" % len(data)


# --------------------------------------------------------------------------- fixtures


# Every user the checker writes has a user_id that starts with this (--user-prefix), so an
# operator who ran it against a real database can find its users and delete them.
USER_PREFIX = "contract-check-"


def user_id(label):
    """A fresh user id: USER_PREFIX, then new_id(label)."""
    return USER_PREFIX + new_id(label)


def new_id(label):
    # Non-ASCII, spaces and emoji in every id: echo and scoping must be byte exact.
    return "%s é 🙂 %s" % (label, uuid.uuid4())


def word():
    """A made-up word no other data can contain, letters only so any tokenizer
    keeps it whole, ending in 'q' so stemmers leave it alone."""
    core = uuid.uuid4().hex[:12].translate(str.maketrans("0123456789", "ghijklmnop"))
    w = "zx" + core + "q"
    with _added_words_lock:
        _added_words.append(w)
    return w


def msg(content, ts=TS_MS, role="user"):
    m = {"role": role, "content": content}
    if ts is not None:
        m["timestamp"] = ts
    return m


def add_body(user, messages, rid=None, sid=None):
    return {
        "request_id": rid if rid is not None else new_id("req"),
        "user_id": user,
        "session_id": sid if sid is not None else new_id("sess"),
        "messages": messages,
    }


def add(client, body, **kw):
    return client.call("POST", "/add", body, **kw)


def add_ok(client, body, **kw):
    """Add that must succeed; checks the 200 body the platform insists on."""
    r = add(client, body, **kw)
    require(r.status == 200, "/add expected 200, got %d %s" % (r.status, _short(json.dumps(r.json))))
    check_add_body(r.json, body)
    return r


def check_add_body(got, sent):
    require(isinstance(got, dict), "/add 200 body is not a JSON object: %r" % (got,))
    require(got.get("success") is True, "/add 200 body lacks success: true: %r" % (got,))
    for key in ("request_id", "user_id", "session_id"):
        require(got.get(key) == sent[key],
                "/add echoed %s=%r, sent %r" % (key, got.get(key), sent[key]))


def search(client, user, query, top_k=100, **extra):
    body = {"query": query, "user_id": user, "top_k": top_k}
    body.update(extra)
    return client.call("POST", "/search", body)


def search_ok(client, user, query, top_k=100, **extra):
    """Search that must succeed. Every successful search is shape-checked,
    because one malformed 200 ends a platform evaluation stage."""
    r = search(client, user, query, top_k, **extra)
    require(r.status == 200, "/search expected 200, got %d %s" % (r.status, _short(json.dumps(r.json))))
    problems = search_shape_problems(r.json, top_k)
    require(not problems, "malformed /search body: " + "; ".join(problems[:3]))
    return r.json["data"]


def search_shape_problems(body, top_k):
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return ["body is not {\"data\": [...]}: %s" % _short(json.dumps(body))]
    data = body["data"]
    problems = []
    if isinstance(top_k, int) and not isinstance(top_k, bool) and len(data) > top_k:
        problems.append("%d items for top_k=%d" % (len(data), top_k))
    seen, prev = set(), None
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            problems.append("item %d is not an object" % i)
            continue
        iid, content, score = item.get("id"), item.get("content"), item.get("score")
        if not isinstance(iid, str) or not iid:
            problems.append("item %d id %r is not a non-empty string" % (i, iid))
        elif iid in seen:
            problems.append("item %d id %r repeats" % (i, iid))
        seen.add(iid)
        if not isinstance(content, str) or not content:
            problems.append("item %d content is not a non-empty string" % i)
        if not _is_number(score):
            problems.append("item %d score %r is not a finite number" % (i, score))
        else:
            if prev is not None and score > prev:
                problems.append("score rises at item %d (%r after %r)" % (i, score, prev))
            prev = score
        ca = item.get("created_at")
        if ca is not None and parse_iso(ca) is None:
            problems.append("item %d created_at %r is not ISO-8601" % (i, ca))
    return problems


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def parse_iso(s):
    if not isinstance(s, str) or not s:
        return None
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    try:
        return datetime.datetime.fromisoformat(s)
    except ValueError:
        return None


def hits(data, text):
    needle = text.casefold()
    return [it for it in data if isinstance(it, dict) and needle in str(it.get("content", "")).casefold()]


def count_hits(client, user, text):
    return len(hits(search_ok(client, user, text, BIG_TOP_K), text))


def expect_error(r, statuses, field=None):
    """Error status, the contract's error body, and (for 422) the field named."""
    if isinstance(statuses, int):
        statuses = (statuses,)
    require(r.status in statuses, "expected %s, got %d %s"
            % ("/".join(map(str, statuses)), r.status, _short(json.dumps(r.json))))
    require_error_shape(r.json)
    if field is not None:
        reason = r.json["detail"]["reason"]
        require(field in reason, "detail.reason %r does not name %r" % (reason, field))
    return r.status


def require_error_shape(body):
    ok = (isinstance(body, dict) and isinstance(body.get("detail"), dict)
          and isinstance(body["detail"].get("reason"), str) and body["detail"]["reason"])
    require(ok, "error body is not {\"detail\": {\"reason\": <string>}}: %s" % _short(json.dumps(body)))


def run_parallel(n, fn):
    """Run fn(i) in n threads released together; return results (or exceptions)."""
    barrier = threading.Barrier(n)
    results = [None] * n

    def worker(i):
        try:
            barrier.wait(TIMEOUT_S)
            results[i] = fn(i)
        except Exception as e:  # reported by the caller as a failure
            results[i] = e

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT_S * 6)
    return results


def with_overload_retry(send):
    """The platform retries 429 after Retry-After, so a 429 is only wrong without it."""
    for _ in range(5):
        r = send()
        if r.status != 429:
            return r
        require("retry-after" in r.headers, "429 without Retry-After header")
        time.sleep(min(float(r.headers["retry-after"] or 1), 2.0))
    return r


# --------------------------------------------------------------------------- health


def check_health_open(c):
    status, _, _ = c.raw("GET", "/health", auth=False)
    require(200 <= status < 300, "GET /health without credentials gave %d" % status)


def check_health_reveals_nothing(c):
    # Runs last, after every distinctive word has been written.
    status, data, _ = c.raw("GET", "/health", auth=False)
    require(200 <= status < 300, "GET /health gave %d" % status)
    text = data.decode("utf-8", "replace").casefold()
    with _added_words_lock:
        leaked = [w for w in _added_words if w.casefold() in text]
    require(not leaked, "/health body contains added content: %s" % ", ".join(leaked[:3]))
    return "%d words checked" % len(_added_words)


# --------------------------------------------------------------------------- add


def _tricky_ids():
    u = uuid.uuid4()
    return {
        "request_id": " req \"q\" \\ é 🙂 %s " % u,   # leading/trailing space, quote, backslash
        "user_id": USER_PREFIX + "usér 1 🙂 %s" % u,
        "session_id": "sess\u00a0中文 עברית 🙂 %s" % u,   # no-break space, CJK, RTL
    }


def check_add_happy_utf8(c):
    body = dict(_tricky_ids(), messages=[msg("Alice: I bought a %s yesterday." % word())])
    r = add_ok(c, body)
    extra = [k for k in ("memory_ids", "task_id", "task_ids") if k in r.json]
    require(not extra, "/add body carries %s, which the contract rules out" % extra)


def check_add_happy_ascii_escaped(c):
    body = dict(_tricky_ids(), messages=[msg("Alice: I bought a %s yesterday." % word())])
    add_ok(c, body, ascii_json=True)


def check_add_without_timestamps(c):
    user, w = user_id("user"), word()
    add_ok(c, add_body(user, [msg("Bob: my %s is blue." % w, ts=None),
                              msg("Alice: nice %s." % w, ts=None, role="assistant")]))
    found = hits(search_ok(c, user, w), w)
    require(found, "word added without timestamps not found")


def check_add_integral_float_timestamp(c):
    user, w = user_id("user"), word()
    add_ok(c, add_body(user, [msg("Bob: the %s is ready." % w, ts=float(TS_MS))]))
    require(hits(search_ok(c, user, w), w), "word added with float timestamp not found")


def check_add_any_role(c):
    user, w = user_id("user"), word()
    add_ok(c, add_body(user, [msg("Narrator: a %s appears." % w, role="narrator 🙂")]))
    require(hits(search_ok(c, user, w), w), "message with custom role not found")


def check_add_unknown_fields_ignored(c):
    user, w = user_id("user"), word()
    m = msg("Bob: about the %s." % w)
    m["name"] = "Bob"
    m["extra"] = {"nested": [1, 2]}
    body = add_body(user, [m])
    body.update({"metadata": {"k": "v"}, "app_id": "x", "agent_id": "y", "future_field": 1})
    add_ok(c, body)
    require(hits(search_ok(c, user, w), w), "message sent with unknown fields not found")


def check_add_twenty_messages(c):
    # The platform's largest chunk: 20 messages sharing one timestamp.
    user = user_id("user")
    words = [word() for _ in range(20)]
    msgs = [msg("%s: note %d mentions %s." % ("Alice" if i % 2 else "Bob", i, w),
                role="assistant" if i % 2 else "user") for i, w in enumerate(words)]
    add_ok(c, add_body(user, msgs))
    for w in (words[0], words[9], words[19]):
        require(hits(search_ok(c, user, w), w), "word %s of a 20-message add not found" % w)


def check_add_rejected_writes_nothing(c):
    user, w, rid = user_id("user"), word(), new_id("req")
    body = add_body(user, [msg("Alice: the %s is in the shed." % w), msg("")], rid=rid)
    expect_error(add(c, body), 422, "messages[1].content")
    require(not hits(search_ok(c, user, w, BIG_TOP_K), w),
            "valid first message of a rejected add is searchable")


def check_rejected_key_not_stored(c):
    # A rejected request must not claim its key, or its corrected retry would be dropped.
    user, w, rid = user_id("user"), word(), new_id("req")
    bad = add_body(user, [msg("Alice: the %s is here." % w), msg("")], rid=rid)
    expect_error(add(c, bad), 422, "messages[1].content")
    good = add_body(user, [msg("Alice: the %s is here." % w)], rid=rid, sid=bad["session_id"])
    add_ok(c, good)
    require(hits(search_ok(c, user, w), w), "corrected add with the rejected request_id was not stored")


# --------------------------------------------------------------------------- timestamps


def _timestamp_case(value, statuses=(422,)):
    def check(c):
        body = add_body(user_id("user"), [msg("Bob: hi %s" % word(), ts=value)])
        status = expect_error(add(c, body), statuses,
                              "messages[0].timestamp" if statuses == (422,) else None)
        return str(status)
    return check


def _raw_timestamp_case(literal):
    # NaN / Infinity are not JSON; a lenient parser might let them through as floats.
    def check(c):
        body = json.dumps(add_body(user_id("user"), [msg("Bob: hi %s" % word(), ts=0)]))
        body = body.replace('"timestamp": 0', '"timestamp": ' + literal).encode()
        status, data, _ = c.raw("POST", "/add", body)
        r = Response(status, _parse_json(data), {})
        return str(expect_error(r, (400, 422)))
    return check


def check_extreme_timestamps_no_5xx(c):
    # Integers the contract allows but that overflow naive date conversion.
    notes = []
    for ts in (0, -1, 10 ** 18, 10 ** 30):
        user, w = user_id("user"), word()
        body = add_body(user, [msg("Bob: the %s." % w, ts=ts)])
        r = add(c, body)
        require(r.status < 500, "timestamp %d gave %d" % (ts, r.status))
        if r.status == 200:
            check_add_body(r.json, body)
            search_ok(c, user, w)  # stored odd time must not break result rendering
        else:
            require_error_shape(r.json)
        notes.append("%s:%d" % (ts, r.status))
    return ", ".join(notes)


def check_created_at_without_timestamp(c):
    # "when known": absent or null is fine; anything present must parse.
    user, w = user_id("user"), word()
    add_ok(c, add_body(user, [msg("Bob: a %s." % w, ts=None)]))
    for it in hits(search_ok(c, user, w), w):
        ca = it.get("created_at")
        require(ca is None or parse_iso(ca) is not None, "created_at %r is not ISO-8601" % (ca,))


# --------------------------------------------------------------------------- read after write


def check_read_after_write(c):
    user, w = user_id("user"), word()
    add_ok(c, add_body(user, [msg("Alice: I adopted a %s last week." % w)]))
    require(hits(search_ok(c, user, w), w), "word not found by the search right after its add")


def check_question_form_query(c):
    # The platform sends the benchmark's question verbatim, not keywords.
    user, w = user_id("user"), word()
    add_ok(c, add_body(user, [msg("Alice: I adopted a %s last week." % w)]))
    q = "What did Alice say about the %s?" % w
    require(hits(search_ok(c, user, q), w), "question %r did not find the message" % q)


def check_cjk_read_after_write(c):
    # Some datasets are Chinese: a word inside an unspaced CJK sentence must be findable.
    user = user_id("user")
    add_ok(c, add_body(user, [msg("小明：我最喜欢的城市是杭州，每年都去。")]))
    require(hits(search_ok(c, user, "杭州"), "杭州"), "query 杭州 did not find the Chinese message")


# --------------------------------------------------------------------------- search shape

_shape_fixture = {}
_shape_lock = threading.Lock()


def shape_fixture(c):
    """One user, five timestamped messages sharing a word; searched once. Some
    messages also hold a second query word, so scores differ and order matters."""
    with _shape_lock:
        if not _shape_fixture:
            user, shared, second = user_id("user"), word(), word()
            msgs = [msg("%s: item %d of the %s list%s, also %s." % (n, i, shared,
                                                                  " with %s" % second if i % 2 else "", word()))
                    for i, n in enumerate(["Alice", "Bob", "Alice", "Bob", "Alice"])]
            add_ok(c, add_body(user, msgs))
            r = search(c, user, "%s %s" % (shared, second), 100)
            _shape_fixture.update(user=user, word=shared, resp=r)
        return _shape_fixture


def _shape_data(c):
    f = shape_fixture(c)
    r = f["resp"]
    require(r.status == 200, "/search gave %d" % r.status)
    require(isinstance(r.json, dict) and isinstance(r.json.get("data"), list),
            "body is not {\"data\": [...]}: %s" % _short(json.dumps(r.json)))
    require(hits(r.json["data"], f["word"]), "shared word not found, nothing to check")
    return f, r.json["data"]


def check_search_envelope(c):
    _shape_data(c)


def check_search_item_fields(c):
    _, data = _shape_data(c)
    for i, it in enumerate(data):
        require(isinstance(it, dict), "item %d is not an object" % i)
        require(isinstance(it.get("id"), str) and it["id"], "item %d id %r" % (i, it.get("id")))
        require(isinstance(it.get("content"), str) and it["content"], "item %d content empty" % i)
        require(_is_number(it.get("score")), "item %d score %r" % (i, it.get("score")))


def check_search_ids_unique(c):
    _, data = _shape_data(c)
    ids = [it.get("id") for it in data]
    require(len(ids) == len(set(ids)), "repeated ids: %r" % ids)


def check_search_scores_non_increasing(c):
    _, data = _shape_data(c)
    scores = [it.get("score") for it in data]
    require(all(_is_number(s) for s in scores), "non-numeric score in %r" % scores)
    require(all(a >= b for a, b in zip(scores, scores[1:])), "scores rise: %r" % scores)


def check_search_created_at_iso(c):
    f, data = _shape_data(c)
    for it in hits(data, f["word"]):
        ca = it.get("created_at")
        require(isinstance(ca, str), "item from a timestamped message has created_at %r" % (ca,))
        require(parse_iso(ca) is not None, "created_at %r is not ISO-8601" % ca)


def check_search_created_at_value(c):
    # created_at is "the evidence time": the message timestamp, not ingestion time.
    f, data = _shape_data(c)
    for it in hits(data, f["word"]):
        got = parse_iso(it.get("created_at"))
        require(got is not None, "created_at %r unparsable" % (it.get("created_at"),))
        if len(it["created_at"]) == 10:  # date only
            require(got.date() == TS_DT.date(), "created_at %r, expected %s" % (it["created_at"], TS_DT.date()))
            continue
        if got.tzinfo is None:
            got = got.replace(tzinfo=datetime.timezone.utc)
        require(abs((got - TS_DT).total_seconds()) < 1,
                "created_at %r, expected %s" % (it["created_at"], TS_DT.isoformat()))


def check_search_top_k_limit(c):
    f = shape_fixture(c)
    for k in (1, 2, 3):
        data = search_ok(c, f["user"], f["word"], k)
        require(len(data) <= k, "top_k=%d returned %d items" % (k, len(data)))


def _empty(r) -> bool:
    """An empty Search answer: `data` is [] (extra top-level fields, such as flowmem's `evidence`, are the
    server's own: the platform reads `data`)."""
    return isinstance(r.json, dict) and r.json.get("data") == []


def check_search_top_k_zero(c):
    f = shape_fixture(c)
    r = search(c, f["user"], f["word"], 0)
    require(r.status == 200 and _empty(r), "top_k=0 gave %d %s" % (r.status, _short(json.dumps(r.json))))


def check_search_top_k_negative(c):
    f = shape_fixture(c)
    expect_error(search(c, f["user"], f["word"], -1), 422, "top_k")


def check_search_top_k_huge(c):
    f = shape_fixture(c)
    for k in (100000, 10 ** 30):
        data = search_ok(c, f["user"], f["word"], k)
        require(hits(data, f["word"]), "top_k=%d lost the results" % k)


def check_search_unknown_user(c):
    r = search(c, new_id("nobody"), "anything at all", 10)
    require(r.status == 200 and _empty(r), "got %d %s" % (r.status, _short(json.dumps(r.json))))


def check_search_options_accepted(c):
    f = shape_fixture(c)
    require(hits(search_ok(c, f["user"], f["word"], 10, options=["A) red", "B) 蓝色 🙂"]), f["word"]),
            "search with options lost the results")
    search_ok(c, f["user"], f["word"], 10, options=[])


def check_search_unknown_fields_ignored(c):
    f = shape_fixture(c)
    # Not `filters`: flowmem reads that field (docs/api.md, The contract) and refuses unknown filters.
    require(hits(search_ok(c, f["user"], f["word"], 10, metadata={"x": 1}, session_id="zz"), f["word"]),
            "search with unknown fields lost the results")


def check_search_ids_stable(c):
    f = shape_fixture(c)
    a = {it["content"]: it["id"] for it in search_ok(c, f["user"], f["word"], 100)}
    b = {it["content"]: it["id"] for it in search_ok(c, f["user"], f["word"], 100)}
    changed = [k for k in a if k in b and a[k] != b[k]]
    require(not changed, "ids changed between identical searches for %d items" % len(changed))


def check_search_spans_sessions(c):
    # session_id groups messages but never filters Search.
    user, w1, w2 = user_id("user"), word(), word()
    add_ok(c, add_body(user, [msg("Alice: the %s story." % w1)]))
    add_ok(c, add_body(user, [msg("Bob: the %s story." % w2)]))
    require(hits(search_ok(c, user, w1), w1), "first session's word not found")
    require(hits(search_ok(c, user, w2), w2), "second session's word not found")


def check_search_blank_user_id(c):
    # Contract does not say non-blank for search user_id: accept an empty answer or 422.
    r = search(c, "", "anything", 10)
    if r.status == 200:
        require(_empty(r), "blank user_id returned data: %s" % _short(json.dumps(r.json)))
    else:
        expect_error(r, 422, "user_id")
    return str(r.status)


# --------------------------------------------------------------------------- isolation


def check_isolation_other_user(c):
    a, b, wa, wb = user_id("userA"), user_id("userB"), word(), word()
    add_ok(c, add_body(a, [msg("Alice: my secret is %s." % wa)]))
    add_ok(c, add_body(b, [msg("Bob: my secret is %s." % wb)]))
    for q in (wa, "%s %s" % (wa, wb), "What is my secret?"):
        leaked = hits(search_ok(c, b, q, BIG_TOP_K), wa)
        require(not leaked, "user B sees user A's word for query %r" % q)
    require(hits(search_ok(c, a, wa), wa), "user A cannot find their own word")


def check_isolation_similar_ids(c):
    # user_id is compared as an exact string: no case folding, trimming or Unicode normalisation.
    base = USER_PREFIX + "Usér Ω %s" % uuid.uuid4()
    w = word()
    add_ok(c, add_body(base, [msg("Alice: the %s code." % w)]))
    variants = {"upper": base.upper(), "lower": base.lower(), "trailing space": base + " ",
                "leading space": " " + base, "NFD": unicodedata.normalize("NFD", base)}
    for name, other in variants.items():
        require(other != base, "variant %s equals base" % name)
        require(not hits(search_ok(c, other, w, BIG_TOP_K), w),
                "user_id variant (%s) sees the base user's memory" % name)


# --------------------------------------------------------------------------- idempotency


ADD_FIELDS = ("success", "request_id", "user_id", "session_id")


def contract_part(answer):
    """The fields of an Add answer the contract defines (what the platform reads): a server may add its
    own (flowmem's `stored`, false on a repeat), as it may to Search items."""
    return {k: answer.get(k) for k in ADD_FIELDS} if isinstance(answer, dict) else answer


def check_idempotent_retry(c):
    user, w = user_id("user"), word()
    body = add_body(user, [msg("Alice: the %s is mine." % w), msg("Bob: ok, %s noted." % w, role="assistant")])
    first = add_ok(c, body)
    n1 = count_hits(c, user, w)
    require(n1 >= 1, "word not found after first write")
    for i in range(3):
        r = add_ok(c, body)
        require(contract_part(r.json) == contract_part(first.json),
                "retry %d answered %r, first %r" % (i + 1, r.json, first.json))
    n2 = count_hits(c, user, w)
    require(n2 == n1, "items containing the word: %d after first write, %d after retries" % (n1, n2))


def check_first_write_wins(c):
    user, w1, w2 = user_id("user"), word(), word()
    body = add_body(user, [msg("Alice: it is %s." % w1)])
    first = add_ok(c, body)
    n1 = count_hits(c, user, w1)
    second = dict(body, messages=[msg("Alice: it is %s." % w2)])  # same key, same ids, new content
    r = add_ok(c, second)
    require(contract_part(r.json) == contract_part(first.json), "repeat answered %r, first %r" % (r.json, first.json))
    require(not hits(search_ok(c, user, w2, BIG_TOP_K), w2), "second body under a stored key was written")
    require(count_hits(c, user, w1) == n1, "first body's items changed after the repeat")


def check_overlapping_retries(c):
    # Control: the same shape written once, to know how many items one write yields.
    ctrl_user, ctrl_w = user_id("user"), word()
    add_ok(c, add_body(ctrl_user, [msg("Alice: the %s arrived." % ctrl_w), msg("Bob: great.", role="assistant")]))
    expected = count_hits(c, ctrl_user, ctrl_w)
    require(expected >= 1, "control write not found")

    user, w = user_id("user"), word()
    body = add_body(user, [msg("Alice: the %s arrived." % w), msg("Bob: great.", role="assistant")])
    results = run_parallel(16, lambda i: add(c, body))
    errors = [r for r in results if not isinstance(r, Response)]
    require(not errors, "%d of 16 concurrent retries raised: %s" % (len(errors), errors[0] if errors else ""))
    bad = [r.status for r in results if r.status != 200]
    require(not bad, "concurrent retries got statuses %s" % sorted(set(bad)))
    for r in results:
        check_add_body(r.json, body)
    got = count_hits(c, user, w)
    require(got == expected,
            "16 overlapping retries left %d items with the word; one write leaves %d" % (got, expected))


def check_same_request_id_other_user(c):
    a, b, w = user_id("userA"), user_id("userB"), word()
    body_a = add_body(a, [msg("Alice: shared %s." % w)])
    add_ok(c, body_a)
    body_b = dict(body_a, user_id=b)  # identical except user_id
    add_ok(c, body_b)
    require(hits(search_ok(c, b, w), w), "same request_id under another user_id was not written")
    require(hits(search_ok(c, a, w), w), "first user's write lost")


# --------------------------------------------------------------------------- validation

def _set(path, value):
    def mutate(b):
        target = b
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _drop(path):
    def mutate(b):
        target = b
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


ADD_CASES = []
for _f in ("request_id", "user_id", "session_id"):
    ADD_CASES += [
        (_f + "_missing", _drop([_f]), _f),
        (_f + "_null", _set([_f], None), _f),
        (_f + "_empty", _set([_f], ""), _f),
        (_f + "_whitespace", _set([_f], " \t "), _f),
        (_f + "_number", _set([_f], 123), _f),
        (_f + "_array", _set([_f], ["x"]), _f),
    ]
ADD_CASES += [
    ("messages_missing", _drop(["messages"]), "messages"),
    ("messages_null", _set(["messages"], None), "messages"),
    ("messages_empty", _set(["messages"], []), "messages"),
    ("messages_string", _set(["messages"], "Alice: hi"), "messages"),
    ("messages_object", _set(["messages"], {"role": "user", "content": "hi"}), "messages"),
    ("message_not_object", _set(["messages", 1], "Alice: hi"), "messages[1]"),
    ("message_role_missing", _drop(["messages", 1, "role"]), "messages[1].role"),
    ("message_role_empty", _set(["messages", 1, "role"], ""), "messages[1].role"),
    ("message_role_whitespace", _set(["messages", 1, "role"], "  "), "messages[1].role"),
    ("message_role_number", _set(["messages", 1, "role"], 7), "messages[1].role"),
    ("message_content_missing", _drop(["messages", 2, "content"]), "messages[2].content"),
    ("message_content_null", _set(["messages", 2, "content"], None), "messages[2].content"),
    ("message_content_empty", _set(["messages", 2, "content"], ""), "messages[2].content"),
    ("message_content_whitespace", _set(["messages", 2, "content"], " \n\t "), "messages[2].content"),
    ("message_content_array", _set(["messages", 2, "content"], ["hi"]), "messages[2].content"),
]


def _add_case(mutate, field):
    def check(c):
        body = add_body(user_id("user"), [msg("Alice: one %s." % word()), msg("Bob: two.", role="assistant"),
                                         msg("Alice: three.")])
        mutate(body)
        expect_error(add(c, body), 422, field)
    return check


SEARCH_CASES = [
    ("query_missing", _drop(["query"]), "query"),
    ("query_null", _set(["query"], None), "query"),
    ("query_empty", _set(["query"], ""), "query"),
    ("query_whitespace", _set(["query"], "  \n "), "query"),
    ("query_number", _set(["query"], 42), "query"),
    ("user_id_missing", _drop(["user_id"]), "user_id"),
    ("user_id_null", _set(["user_id"], None), "user_id"),
    ("user_id_number", _set(["user_id"], 42), "user_id"),
    ("top_k_missing", _drop(["top_k"]), "top_k"),
    ("top_k_null", _set(["top_k"], None), "top_k"),
    ("top_k_string", _set(["top_k"], "10"), "top_k"),
    ("top_k_fractional", _set(["top_k"], 2.5), "top_k"),
    ("top_k_boolean", _set(["top_k"], True), "top_k"),
    ("top_k_negative", _set(["top_k"], -5), "top_k"),
    ("options_string", _set(["options"], "A) red"), "options"),
    ("options_non_string_item", _set(["options"], ["A", 1]), "options"),
]


def _search_case(mutate, field):
    def check(c):
        body = {"query": "what happened?", "user_id": user_id("user"), "top_k": 10}
        mutate(body)
        expect_error(c.call("POST", "/search", body), 422, field)
    return check


# --------------------------------------------------------------------------- malformed requests

INVALID_JSON = [b"{", b'{"query": "x",', b"not json", b"", b"{'query': 'single quotes'}",
                b'{"query": "x"} trailing']
NON_OBJECTS = [b"[]", b'[{"query": "x"}]', b'"a string"', b"42", b"null", b"true"]


def _invalid_json_case(path):
    def check(c):
        for raw in INVALID_JSON:
            status, data, _ = c.raw("POST", path, raw)
            try:
                expect_error(Response(status, _parse_json(data), {}), 400)
            except CheckFailed as e:
                raise CheckFailed("body %r: %s" % (raw, e)) from e
    return check


def _non_object_case(path):
    def check(c):
        seen = []
        for raw in NON_OBJECTS:
            status, data, _ = c.raw("POST", path, raw)
            try:
                expect_error(Response(status, _parse_json(data), {}), (400, 422))
            except CheckFailed as e:
                raise CheckFailed("body %r: %s" % (raw, e)) from e
            seen.append("%s->%d" % (raw.decode(), status))
        return "contract says 400; got " + ", ".join(seen)
    return check


def check_invalid_utf8_no_5xx(c):
    status, data, _ = c.raw("POST", "/search", b'{"query": "caf\xc3\x28", "user_id": "u", "top_k": 1}')
    require(status < 500, "invalid UTF-8 gave %d" % status)
    if status >= 400:
        require_error_shape(_parse_json(data))
    return str(status)


def check_deep_nesting_no_5xx(c):
    # A recursive JSON parser can blow its stack here; bad input must never be a 5xx.
    for path in ("/add", "/search"):
        raw = b'{"query": ' + b"[" * 100000 + b"]" * 100000 + b"}"
        status, data, _ = c.raw("POST", path, raw)
        require(400 <= status < 500, "%s deep nesting gave %d" % (path, status))
        require_error_shape(_parse_json(data))


def check_unknown_path(c):
    for method, path in (("GET", "/no-such-path-%s" % uuid.uuid4().hex), ("POST", "/v1/add"),
                         ("POST", "/add/extra")):
        body = b"{}" if method == "POST" else None
        status, data, _ = c.raw(method, path, body)
        try:
            expect_error(Response(status, _parse_json(data), {}), 404)
        except CheckFailed as e:
            raise CheckFailed("%s %s: %s" % (method, path, e)) from e


def check_wrong_method(c):
    # Contract names no status for this; any 4xx in the contract's error shape is fine.
    notes = []
    for method, path in (("GET", "/add"), ("GET", "/search"), ("DELETE", "/add")):
        status, data, _ = c.raw(method, path)
        require(400 <= status < 500, "%s %s gave %d" % (method, path, status))
        require_error_shape(_parse_json(data))
        notes.append("%s %s->%d" % (method, path, status))
    return ", ".join(notes)


def check_body_too_large(c):
    user = user_id("user")
    body = json.dumps(add_body(user, [msg("Alice: " + "filler text " * (9 * 1024 * 1024 // 12))])).encode()
    status, resp_body, note = post_large(c, "/add", body)
    require(status is not None, "no HTTP status line received (%s)" % note)
    require(status == 413, "9 MiB body gave %d (%s)" % (status, note))
    if resp_body:
        require_error_shape(_parse_json(resp_body))
    else:
        note += "; body not received, shape unchecked"
    hs, _, _ = c.raw("GET", "/health", auth=False)
    require(200 <= hs < 300, "server unhealthy (%d) after the oversized request" % hs)
    return note


def post_large(c, path, body):
    """Send a big body on a raw socket while watching for an early reply: a server
    may answer 413 and close before reading everything, and http.client would then
    report only a broken pipe. Returns (status or None, response body, note)."""
    head = ["POST %s HTTP/1.1" % (c.base + path), "Host: %s:%d" % (c.host, c.port),
            "Content-Type: application/json", "Content-Length: %d" % len(body), "Connection: close"]
    head += ["%s: %s" % kv for kv in c.auth_headers().items()]
    sock = socket.create_connection((c.host, c.port), timeout=TIMEOUT_S)
    if c.scheme == "https":
        sock = ssl.create_default_context().wrap_socket(sock, server_hostname=c.host)
    received, sent, note = b"", 0, "sent whole body"
    deadline = time.monotonic() + TIMEOUT_S * 3
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        sock.setblocking(False)
        while sent < len(body) and time.monotonic() < deadline:
            readable, writable, _ = select.select([sock], [sock], [], 1.0)
            if readable:
                try:
                    chunk = _recv(sock)
                except ConnectionResetError:
                    note = "connection reset after %d of %d bytes" % (sent, len(body))
                    break
                if chunk is None:  # spurious wake-up: nothing to read yet
                    continue
                if not chunk:
                    note = "server closed after %d of %d bytes" % (sent, len(body))
                    break
                received += chunk
                note = "server answered after %d of %d bytes" % (sent, len(body))
                break
            if writable:
                try:
                    sent += sock.send(body[sent:sent + 65536])
                except BlockingIOError:
                    pass
                except (BrokenPipeError, ConnectionResetError) as e:
                    note = "%s after %d of %d bytes" % (type(e).__name__, sent, len(body))
                    break
        sock.setblocking(True)
        sock.settimeout(TIMEOUT_S)
        while not _response_complete(received):
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout) as e:
                note += "; %s while reading reply" % type(e).__name__
                break
            if not chunk:
                break
            received += chunk
    finally:
        sock.close()
    if not received.startswith(b"HTTP/"):
        return None, b"", note
    try:
        status = int(received.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None, b"", note + "; garbled status line"
    return status, _response_body(received), note


def _recv(sock):
    """Bytes read, b"" when the peer closed, None when nothing is ready."""
    try:
        return sock.recv(65536)
    except (BlockingIOError, ssl.SSLWantReadError):
        return None


def _split_response(raw):
    head, sep, rest = raw.partition(b"\r\n\r\n")
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        headers[k.strip().lower()] = v.strip()
    return (headers, rest) if sep else (None, b"")


def _response_complete(raw):
    headers, rest = _split_response(raw)
    if headers is None:
        return False
    if b"content-length" in headers:
        return len(rest) >= int(headers[b"content-length"])
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        return rest.endswith(b"0\r\n\r\n")
    return False  # read until close


def _response_body(raw):
    headers, rest = _split_response(raw)
    if headers is None:
        return b""
    if headers.get(b"transfer-encoding", b"").lower() != b"chunked":
        return rest
    out = b""
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2:]
    return out


# --------------------------------------------------------------------------- hostile queries

HOSTILE_QUERIES = [
    ("double_quotes", 'What did "Alice" say about the park?'),
    ("lone_quote", '"'),
    ("unbalanced_quote", 'Alice said "hello'),
    ("near_function", "NEAR(alice bob, 3)"),
    ("near_operator", "alice NEAR bob"),
    ("lone_star", "*"),
    ("prefix_star", "ali* bo*"),
    ("colon", "content: alice"),
    ("column_filter", "user_id:someone OR session_id:x"),
    ("parentheses", "((alice) OR (bob"),
    ("boolean_ops", "alice AND bob OR NOT carol"),
    ("lone_not", "NOT"),
    ("only_operators", "AND OR NOT NEAR"),
    ("plus_minus_caret", "^alice -bob +carol ~dave"),
    ("sql_injection", "'; DROP TABLE memories; --"),
    ("like_wildcards", "100% _match_ [a-z]"),
    ("backslashes", "C:\\path\\to\\file \\\" \\u0000"),
    ("braces", "{alice} [bob] <carol>"),
    ("punctuation_only", "?!.,;:-"),
    ("emoji", "🙂🎉 what party? 👨‍👩‍👧"),
    ("chinese", "她上周在公园里做了什么？"),
    ("arabic", "ماذا قالت أليس عن الحديقة؟"),
    ("bidi_marks", "\u200falice\u200e \u202ebob\u202c"),
    ("long_10kb", ("Where did Alice go last summer with Bob and why? " * 220)[:10240]),
    ("many_terms", " ".join("term%d" % i for i in range(1500))),
]
# Control characters are arguably odd input: 200 or a 422 are both fine, never 5xx.
CONTROL_QUERIES = [
    ("control_chars", "alice\x01\x02\x1f\x7f bob"),
    ("nul_char", "alice\x00bob"),
]

_hostile_user = {}
_hostile_lock = threading.Lock()


def hostile_user(c):
    # Data must exist, or a server could skip the full-text engine entirely.
    with _hostile_lock:
        if not _hostile_user:
            user = user_id("user")
            add_ok(c, add_body(user, [msg("Alice: Bob and I went to the park; NOT bad, \"quoted\" (fun) %s." % word()),
                                      msg("Bob: 我们去了公园。 ذهبنا إلى الحديقة 🙂", role="assistant")]))
            _hostile_user["id"] = user
        return _hostile_user["id"]


def _hostile_case(query, allow_422=False):
    def check(c):
        user = hostile_user(c)
        r = search(c, user, query, 10)
        require(r.status < 500, "query gave %d" % r.status)
        if allow_422 and r.status == 422:
            require_error_shape(r.json)
            return "422"
        search_ok(c, user, query, 10)
        return None if not allow_422 else "200"
    return check


# --------------------------------------------------------------------------- load


def check_concurrent_add_then_search(c):
    # Adds and Searches for one user interleave on the platform; each add must be
    # visible to its own next search even while others are writing.
    user = user_id("user")

    def one(i):
        w = word()
        body = add_body(user, [msg("Alice: fact %d is %s." % (i, w))])
        r = with_overload_retry(lambda: add(c, body))
        require(r.status == 200, "add %d gave %d" % (i, r.status))
        check_add_body(r.json, body)
        s = with_overload_retry(lambda: search(c, user, w, 10))
        require(s.status == 200, "search %d gave %d" % (i, s.status))
        problems = search_shape_problems(s.json, 10)
        require(not problems, "; ".join(problems[:2]))
        require(hits(s.json["data"], w), "word of add %d not found right after it" % i)
        return True

    results = run_parallel(32, one)
    failures = [r for r in results if r is not True]
    require(not failures, "%d of 32 workers failed, first: %s" % (len(failures), failures[0] if failures else ""))


# --------------------------------------------------------------------------- auth


def check_auth_missing(c):
    expect_error(c.call("POST", "/add", add_body(user_id("user"), [msg("Alice: hi.")]), auth=False), 401)
    expect_error(c.call("POST", "/search", {"query": "x", "user_id": user_id("user"), "top_k": 1}, auth=False), 401)


def _credential_headers(key):
    return [{"Authorization": "Bearer " + key}, {"Authorization": "Token " + key}, {"X-Api-Key": key}]


def _describe(h):
    # Name the header form without printing the secret.
    (name, value), = h.items()
    return "%s: %s" % (name, value.split(" ")[0] if " " in value else "<key>")


def check_auth_wrong_key(c):
    wrong = c.api_key + "x"
    # Also a bare key without scheme, and a scheme without key.
    for h in _credential_headers(wrong) + [{"Authorization": c.api_key}, {"Authorization": "Bearer"}]:
        r = c.call("POST", "/search", {"query": "x", "user_id": user_id("user"), "top_k": 1}, headers=h, auth=False)
        try:
            expect_error(r, 401)
        except CheckFailed as e:
            raise CheckFailed("%s: %s" % (_describe(h), e)) from e


def check_auth_accepted_forms(c):
    for h in _credential_headers(c.api_key):
        name = _describe(h)
        user, w = user_id("user"), word()
        body = add_body(user, [msg("Alice: key test %s." % w)])
        r = c.call("POST", "/add", body, headers=h, auth=False)
        require(r.status == 200, "/add with %s gave %d" % (name, r.status))
        r = c.call("POST", "/search", {"query": w, "user_id": user, "top_k": 5}, headers=h, auth=False)
        require(r.status == 200, "/search with %s gave %d" % (name, r.status))
        require(not search_shape_problems(r.json, 5) and hits(r.json["data"], w),
                "/search with %s did not find the word" % name)


def check_auth_rejected_add_writes_nothing(c):
    user, w = user_id("user"), word()
    r = c.call("POST", "/add", add_body(user, [msg("Alice: sneaky %s." % w)]), auth=False)
    expect_error(r, 401)
    require(not hits(search_ok(c, user, w, BIG_TOP_K), w), "unauthenticated add was stored")


# --------------------------------------------------------------------------- runner


def build_checks(api_key):
    checks = [
        ("health.open_without_credentials", check_health_open),
        ("add.happy_path_utf8_ids_echoed", check_add_happy_utf8),
        ("add.happy_path_ascii_escaped_ids_echoed", check_add_happy_ascii_escaped),
        ("add.without_timestamps", check_add_without_timestamps),
        ("add.integral_float_timestamp", check_add_integral_float_timestamp),
        ("add.any_nonblank_role", check_add_any_role),
        ("add.unknown_fields_ignored", check_add_unknown_fields_ignored),
        ("add.twenty_message_chunk", check_add_twenty_messages),
        ("add.rejected_request_writes_nothing", check_add_rejected_writes_nothing),
        ("add.rejected_request_key_not_stored", check_rejected_key_not_stored),
        ("timestamp.rejects_fractional_float", _timestamp_case(TS_MS + 0.5)),
        ("timestamp.rejects_string", _timestamp_case(str(TS_MS))),
        ("timestamp.rejects_boolean", _timestamp_case(True)),
        ("timestamp.rejects_array", _timestamp_case([TS_MS])),
        ("timestamp.rejects_nan", _raw_timestamp_case("NaN")),
        ("timestamp.rejects_infinity", _raw_timestamp_case("Infinity")),
        ("timestamp.extreme_integers_no_5xx", check_extreme_timestamps_no_5xx),
        ("search.created_at_without_timestamp", check_created_at_without_timestamp),
        ("raw.read_after_write", check_read_after_write),
        ("raw.question_form_query", check_question_form_query),
        ("raw.chinese_read_after_write", check_cjk_read_after_write),
        ("search.envelope_data_list", check_search_envelope),
        ("search.item_fields", check_search_item_fields),
        ("search.ids_unique", check_search_ids_unique),
        ("search.scores_non_increasing", check_search_scores_non_increasing),
        ("search.created_at_iso8601", check_search_created_at_iso),
        ("search.created_at_is_message_time", check_search_created_at_value),
        ("search.top_k_is_maximum", check_search_top_k_limit),
        ("search.top_k_zero_empty", check_search_top_k_zero),
        ("search.top_k_negative_422", check_search_top_k_negative),
        ("search.top_k_huge_clamped", check_search_top_k_huge),
        ("search.unknown_user_empty", check_search_unknown_user),
        ("search.options_accepted", check_search_options_accepted),
        ("search.unknown_fields_ignored", check_search_unknown_fields_ignored),
        ("search.ids_stable", check_search_ids_stable),
        ("search.session_never_filters", check_search_spans_sessions),
        ("search.blank_user_id", check_search_blank_user_id),
        ("isolation.other_user", check_isolation_other_user),
        ("isolation.similar_user_ids", check_isolation_similar_ids),
        ("idempotency.retry_same_body", check_idempotent_retry),
        ("idempotency.first_write_wins", check_first_write_wins),
        ("idempotency.overlapping_retries_16", check_overlapping_retries),
        ("idempotency.same_request_id_other_user", check_same_request_id_other_user),
    ]
    checks += [("add.validation." + n, _add_case(m, f)) for n, m, f in ADD_CASES]
    checks += [("search.validation." + n, _search_case(m, f)) for n, m, f in SEARCH_CASES]
    checks += [
        ("errors.invalid_json_add_400", _invalid_json_case("/add")),
        ("errors.invalid_json_search_400", _invalid_json_case("/search")),
        ("errors.non_object_add", _non_object_case("/add")),
        ("errors.non_object_search", _non_object_case("/search")),
        ("errors.invalid_utf8_no_5xx", check_invalid_utf8_no_5xx),
        ("errors.deep_nesting_no_5xx", check_deep_nesting_no_5xx),
        ("errors.unknown_path_404", check_unknown_path),
        ("errors.wrong_method_4xx", check_wrong_method),
        ("errors.body_too_large_413", check_body_too_large),
    ]
    checks += [("search.hostile_query." + n, _hostile_case(q)) for n, q in HOSTILE_QUERIES]
    checks += [("search.hostile_query." + n, _hostile_case(q, allow_422=True)) for n, q in CONTROL_QUERIES]
    checks += [("load.concurrent_add_then_search_32", check_concurrent_add_then_search)]
    auth = [
        ("auth.missing_credentials_401", check_auth_missing),
        ("auth.wrong_key_401", check_auth_wrong_key),
        ("auth.all_three_header_forms_accepted", check_auth_accepted_forms),
        ("auth.rejected_add_writes_nothing", check_auth_rejected_add_writes_nothing),
    ]
    if api_key:
        checks += auth
    else:
        checks += [(n, None) for n, _ in auth]
    checks += [("health.reveals_no_memory_content", check_health_reveals_nothing)]
    return checks


def run_check(client, name, fn):
    if fn is None:
        log("SKIP %s: no --api-key given" % name)
        return True
    try:
        note = fn(client)
    except CheckFailed as e:
        log("FAIL %s: %s" % (name, e))
        return False
    except Exception as e:  # a crash or socket error is a failure of this check, not the run
        log("FAIL %s: %s: %s" % (name, type(e).__name__, e))
        return False
    log("PASS %s%s" % (name, " (%s)" % note if note else ""))
    return True


def main(argv=None):
    global USER_PREFIX
    p = argparse.ArgumentParser(description="Black-box conformance checker for the memory Add/Search contract.")
    p.add_argument("--endpoint", required=True, help="base URL, e.g. http://127.0.0.1:8000")
    p.add_argument("--api-key", help="memory system key; enables the auth checks")
    p.add_argument("--verbose", action="store_true", help="log every request")
    p.add_argument("--user-prefix", default=USER_PREFIX,
                   help="start of every user_id the checker writes (default: %(default)s)")
    args = p.parse_args(argv)
    USER_PREFIX = args.user_prefix  # the fixtures read it, as they read the module's other state

    try:
        client = Client(args.endpoint, args.api_key, args.verbose)
    except ValueError as e:
        print("bad --endpoint: %s" % e, file=sys.stderr)
        return 2
    try:
        client.raw("GET", "/health", auth=False)
    except (OSError, http.client.HTTPException) as e:
        print("endpoint unreachable: %s: %s" % (args.endpoint, e), file=sys.stderr)
        return 2

    print("warning: the checks write test users (user_id starting %r) into the memory behind %s, and leave them "
          "there: point it at a scratch server" % (USER_PREFIX, args.endpoint), file=sys.stderr, flush=True)
    if not args.api_key:
        probe = search(client, user_id("probe"), "probe", 1)
        if probe.status == 401:
            print("note: the server answers 401 without credentials; pass --api-key", file=sys.stderr)

    checks = build_checks(args.api_key)
    failed = sum(0 if run_check(client, name, fn) else 1 for name, fn in checks)
    total = len([1 for _, fn in checks if fn is not None])
    log("%d/%d checks passed" % (total - failed, total))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
