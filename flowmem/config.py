"""All settings in one dataclass, read from defaults, then FLOWMEM_* variables, then flags.

Every field `name` can be set by the environment variable `FLOWMEM_<NAME>` and by the
command-line flag `--<name with dashes>` (`--api-key` warns that a command line shows in
`ps`); a flag wins over the environment, which wins over the default.

Each setting is declared once, here: its type, its default and its help text
(`setting()`), and the group it belongs to. The CLI's `--help`, the `flowmem settings`
table and the copy of that table in docs/operations.md are all made from these declarations, so
they cannot disagree with the code.

Config is also the one place that turns settings into what each layer takes, by
keyword: `index_settings()` for storage (the index settings asked for explicitly;
None leaves one to the database, and a new database's defaults live in
storage.settings.ViewSettings only) and `ranking()` for retrieval (retrieval.ranking.
Ranking, from which retrieval builds its pool's Limits, again by keyword). Retrieval
declares no defaults for these values (Ranking and bm25.py take every one): a value
not passed is a TypeError, not a silent second default.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from .config_values import kind_of, parse_value, to_bool
from .errors import ConfigError
from .retrieval.ranking import Ranking
from .storage import views
from .storage.settings import ViewSettings

ENV_PREFIX = "FLOWMEM_"

# The groups settings are shown in (`--help`, `flowmem settings`), in this order: name -> title.
GROUPS = {
    "database": "the database (every command)",
    "server": "the server (serve only)",
    "index": "the index (fixed per database: leave them out to use the database's)",
    "results": "what a search returns",
    "ranking": "how a search ranks (defaults chosen by measurement: docs/design.md)",
}


def setting(default: Any, group: str, help: str) -> Any:
    """A Config field: its `default`, the `group` it is shown in (GROUPS) and its one-line `help`.

    The help says what the setting does and its unit; the CLI adds the default.
    """
    if group not in GROUPS:
        raise ValueError("unknown settings group %r" % group)
    return dataclasses.field(default=default, metadata={"group": group, "help": help})


_MEANING_PLACES = ",".join(map(str, [2, 5] + list(range(10, 101, 5))))  # docs/meaning.md
@dataclasses.dataclass(frozen=True)
class Config:
    """flowmem's settings. Retrieval defaults are the measured ones (docs/results.md)."""

    db: str = setting("flowmem.db", "database", "the SQLite database file (WAL mode)")
    host: str = setting("127.0.0.1", "server", "the address to listen on")
    port: int = setting(8000, "server", "the TCP port to listen on")
    api_key: Optional[str] = setting(
        None, "server", "the key every route then requires but /health, /openapi.json, /docs and the inspector (/, "
        "/ui), as Authorization: Bearer KEY, Authorization: Token KEY or X-Api-Key: KEY")
    api_key_file: Optional[str] = setting(
        None, "server", "a file whose first line is the API key, when FLOWMEM_API_KEY is not set")
    max_body_bytes: int = setting(8 * 1024 * 1024, "server", "the largest request body, in bytes; larger gets 413")
    max_inflight: int = setting(
        512, "server", "requests received whole and not yet answered, at most; more get 429")
    # 8 workers: 40 s soaks of 64 clients (`python tools/soak.py --duration 40 --preload 300 --serve-arg=--workers=N`)
    # ran 77-97 requests/s from 4 to 16 workers, 78 and 77 at 32 and 64 (GIL contention); runs differ by ~10%.
    request_timeout_s: float = setting(
        10.0, "server", "seconds for a request to arrive whole (from its first byte, or from connecting) and for a "
        "response to be read; else the connection is closed (408 if part of a request came)")
    keepalive_timeout_s: float = setting(30.0, "server", "seconds an idle keep-alive connection stays open")
    shutdown_timeout_s: float = setting(
        10.0, "server", "seconds after SIGTERM for received requests to finish and half-sent ones to complete")
    max_connections: int = setting(
        1024, "server", "open connections, at most; one more makes the one that has waited longest for (the rest "
        "of) a request give way")
    workers: int = setting(8, "server", "threads that answer requests, a quarter of them (at least one) the Adds; "
                                        "imports get as many again of their own")
    # Browsers (http/guard.py): on a public address, no allowed host means any.
    allowed_hosts: str = setting(
        "", "server", "Host names answered besides localhost and IP literals, comma-separated; on a public address, "
        "none means any")
    allowed_origins: str = setting("", "server", "web page origins allowed to call flowmem (CORS), comma-separated")
    top_k_cap: int = setting(100, "results", "the largest top_k a Search gets; a larger one is clamped to it")
    # docs/results.md's Speed section measures what the two caches cost in RSS and save in search time.
    cache_messages: int = setting(
        200_000, "database", "messages search keeps in memory between searches, one per 2,000 characters of a long "
        "one (about 1.2 KB of RSS per short message)")
    cache_vectors: int = setting(20_000, "database", "messages whose meaning vectors search keeps (about 1.3 KB each)")
    cache_words: int = setting(
        5_000_000, "database", "words of users' messages whose postings search keeps in memory (about 7 bytes "
        "each); a user with more is read from the index at every search")
    # Index settings: fixed per database. None means "as the database was built"; a new database
    # gets the defaults of storage.settings.ViewSettings (the only place they are written). A value given
    # that differs from the database's is refused, naming the `flowmem reindex` that applies it.
    window_size: Optional[int] = setting(None, "index", "messages in a window view")
    segment_max_messages: Optional[int] = setting(None, "index", "messages in a segment view, at most")
    segment_max_gap_s: Optional[int] = setting(
        None, "index", "seconds: a longer pause between two messages ends a segment")
    stem: Optional[bool] = setting(None, "index", "index (and read questions as) Porter stems, not surface words")
    split_speakers: Optional[bool] = setting(
        None, "index", 'index a leading "Name: " label as the speaker, not as text')
    resolve_times: Optional[bool] = setting(
        None, "index", "index the dates messages mean, relative times resolved against their day")
    date_prefix: bool = setting(True, "results", "start each item's lines with their day: [2023-05-08]")
    time_annotations: bool = setting(
        True, "results", "follow a resolved relative time with its dates: (yesterday = 2023-05-07)")
    bm25_k1: float = setting(1.2, "ranking", "BM25 k1: how soon repeats of a word stop adding to a score")
    bm25_b: float = setting(0.75, "ranking", "BM25 b: how much a longer text is penalised, 0 (not) to 1")
    rrf_k: float = setting(60.0, "ranking", "rank fusion constant k: each ranking adds weight / (k + rank)")
    weight_bm25: float = setting(0.1, "ranking", "weight of the message's own BM25")
    weight_window: float = setting(1.0, "ranking", "weight of the best BM25 of a window holding the message")
    weight_segment: float = setting(0.5, "ranking", "weight of the BM25 of the message's segment")
    weight_coverage: float = setting(0.05, "ranking", "weight of the share of the question's terms in the message")
    weight_phrase: float = setting(
        0.1, "ranking", "weight of the question's adjacent word pairs found side by side in the message")
    # 0 still after the redesign (names by rarity; months, weekdays, speakers' short forms left out): LoCoMo dev
    # (`python tools/tune.py --show --set weight_names=W`, weight_numbers 0.3) 0.7051 at 0, 0.7048 at 0.03, 0.7045
    # at 0.1, 0.7047 at 0.3; its questions name few non-speakers, and BM25 already weighs a name by its idf.
    weight_names: float = setting(
        0.0, "ranking", "weight of the names the question mentions (not speakers) in the message's text")
    weight_speaker: float = setting(0.1, "ranking", "weight of the message being said by someone the question names")
    # 0.5, measured with numbers read as values (text/numbers.py), dates and "which two ..." counts aside:
    # LoCoMo dev (`python tools/tune.py --show --set weight_numbers=W`) objective 0.7049 at 0 and 0.1, 0.7054
    # at 0.5, 0.7057 at 1.0 and 2.0 (hit@1 0.444 -> 0.445 at 0.5, 0.446 at 1.0). 0.5, not 1.0: only 20 of
    # 993 questions state a number, and the last +0.0003 is one question; paired at 0.5 (tools/eval.py locomo
    # --out): "third screenplay" 19 -> 2, "fourth tournament" 3 -> 1, "first two turtles" 22 -> 27, "third
    # tourney" 27 -> 28. Synthetic (`python tools/eval.py synthetic`) hit@1 0.823 -> 0.828 at 0.3 to 1.0.
    weight_numbers: float = setting(
        0.5, "ranking", 'weight of the question\'s numbers in the message, in any form ("3", "three", "3rd", 三)')
    weight_options: float = setting(0.3, "ranking", "weight of each answer option's BM25 ranking")
    # options_boost_max, weight_options: LoCoMo dev as multiple choice (`python tools/tune.py --choices
    # --show --set ...`: each question's answer among three other answers of its conversation).
    # Objective 0.7208 with weight_options 0; weight_options 0.2/0.3/0.4/0.5/1.0 gave 0.7708/0.7757/
    # 0.7782/0.7710/0.7227 while options kept the question's words, 0.7757/0.7813/0.7821/0.7753
    # without them; with 0.3, options_boost_max 3/5/10/20 gave 0.7849/0.7848/0.7852/0.7855 (a linear
    # boost, 1 + gain * genericness, peaked at 0.7872 but never lifted the option over a question of
    # common words: tests/test_options.py). With spread and reply as shipped: 0.7833 at 10, 0.7791 at 1.
    options_boost_max: float = setting(
        10.0, "ranking", "the most weight_options is multiplied by, when the options' words are rarer than the "
        "question's (by the ratio of their idf); 1 turns it off")
    weight_time: float = setting(
        0.1, "ranking", 'weight of time order (earliest or latest first) for "first"/"last" questions')
    weight_adjacency: float = setting(
        0.05, "ranking", "weight of being next to one of the best adjacency_top messages")
    # LoCoMo dev (`tools/tune.py --show --set weight_period=W`): 0.7044 at 0, 0.7069 at 0.3, 0.7064 at 0.5.
    weight_period: float = setting(
        0.3, "ranking", 'weight of the message being said, or naming a date, inside the period a question names')
    # weight_reply, LoCoMo dev (`tools/tune.py --show --set weight_reply=W`): objective 0.7044 at 0, 0.7090
    # at 0.05, 0.7166 at 0.1, 0.7215 at 0.12, 0.7186 at 0.15, 0.7095 at 0.2, 0.6944 at 0.5 (past 0.15 a reply
    # outranks the question that names the evidence); rechecked once a reply that asks back no longer counts:
    # 0.7231 at 0.1, 0.7277 at 0.12, 0.7288 at 0.15, 0.7248 at 0.2; synthetic (`python tools/eval.py synthetic
    # --set weight_reply=W`) hit@1 0.734 at 0.12, 0.730 at 0.15: kept 0.12, the LoCoMo peak being narrow.
    weight_reply: float = setting(
        0.12, "ranking", "weight of answering (being the next message after) one of the best adjacency_top "
        "messages that asks a question")
    weight_dated: float = setting(
        0.3, "ranking", 'weight of the message stating or implying a date, for "when" questions')
    # Vocabulary bridges (retrieval/bridges.py). Chosen on LoCoMo dev, the dataset prepared once and scored at
    # each pair of weights with tools/tune.py's score() (`python tools/tune.py --show --set weight_related=R
    # --set weight_typo=T` gives the same figures). Objective (hit@1, hit@10, MRR): no bridges (both 0) 0.7044
    # (0.443, 0.855, 0.577); R 0.05 T 0: 0.7071 (0.449, 0.855, 0.581); R 0.03 T 0.1: 0.7069; R 0.05 T 0.1:
    # 0.7075; R 0.06 T 0.1: 0.7074; R 0.07 T 0.1: 0.7067; R 0.05 T 0.3: 0.7072; R 0.06 T 0.2: 0.7078 (0.450,
    # 0.856, 0.583), chosen; R 0.3 T 0: 0.6891 (hit@1 0.408): a related word is weaker evidence than the
    # question's own. Above weight_adjacency (0.05), a message found only by related words ranks above its
    # neighbours. The synthetic suite's paraphrase questions do not move at any R (`python tools/eval.py
    # synthetic --set weight_related=R`, R 0.05 to 1.0: Hit@10 0.286): WordNet does not link their words.
    weight_related: float = setting(
        0.06, "ranking", "weight of the words related in meaning to the question's (WordNet, CC-CEDICT) in the message")
    weight_typo: float = setting(
        0.2, "ranking", "weight of near spellings of question words the memory never holds in the message")
    # Off: with every other mechanism in, LoCoMo dev (`python tools/tune.py --show --set related_share=S`) scores
    # 0.7282 at 0 and 0.7278 at 1.0, and temporal Hit@10 0.923 against 0.910 (`python tools/eval.py locomo ...`);
    # synthetic (`python tools/eval.py synthetic --set related_share=1`) gains a question each in paraphrase
    # (Hit@10 0.294 -> 0.324) and typo (0.625 -> 0.688). Expanding every question word, or windows' and
    # segments' BM25 too: paraphrase 0.382-0.471 but LoCoMo dev 0.7173-0.7253. Stand-ins as a ranking of their
    # own at weight 0.05 / 0.1 / 0.3 / 1.0: LoCoMo dev 0.7279 / 0.7267 / 0.7218 / 0.6941, paraphrase Hit@10 0.324 /
    # 0.324 / 0.353 / 0.441 (the Chinese lexicon in): on real conversations they are mostly noise.
    related_share: float = setting(
        0.0, "ranking", "share of its idf x strength a related word of a question word the memory never "
        "holds counts for in the message's BM25 (0: related words only feed weight_related)")
    weight_meaning: float = setting(0.5, "ranking", "weight of nearness in meaning in the head, times the gate")
    meaning_closed_at: float = setting(0.15, "ranking", "share of the question's words matched that shuts the gate")
    meaning_places: str = setting(_MEANING_PLACES, "ranking", "places the nearest in meaning move up to, one each")
    meaning_unseen: float = setting(0.5, "ranking", "share of the question's words unseen for head places to apply")
    meaning_rrf_k: float = setting(5.0, "ranking", "the meaning signal's own k in weight / (k + rank)")
    tail_weight_meaning: float = setting(0.05, "ranking", "weight of nearness in meaning past the first head_size")
    meaning_pool: int = setting(20, "ranking", "messages nearest in meaning that join the candidates; 0 turns it off")
    meaning_scan: int = setting(5_000, "ranking", "a user's latest messages compared in meaning: its cost's bound")
    adjacency_top: int = setting(3, "ranking", "best messages whose neighbours the adjacency ranking brings up")
    # 500, was 1000: LoCoMo dev and synthetic the same, --haystack 10000 within 0.002 (`tools/eval.py ... compare`;
    # 300 lost 0.005 there); a 10k/100k-message user's p50 39 -> 28 / 62 -> 55 ms (`tools/bench_locomo.py --set`).
    candidate_pool: int = setting(
        500, "ranking", "messages a search considers, at most; past it, those with the best BM25")
    context_pool: int = setting(150, "ranking", "best messages whose windows and segments are scored")
    head_size: int = setting(
        10, "ranking", "places at the top ranked with the weight_* settings; the rest with the tail_weight_* too")
    feedback_docs: int = setting(
        5, "ranking", "best messages whose distinctive words are searched for too (pseudo-relevance feedback); "
        "0 turns it off")
    # 20, not tune.py's 40: equal on LoCoMo dev, p50 1.4 ms lower (docs/results.md, Known gaps).
    feedback_terms: int = setting(20, "ranking", "distinctive words that feedback searches for, at most")
    # 2000, was 5000: LoCoMo dev and synthetic the same; --haystack 10000 Hit@1/Hit@10/R@100/MRR +0.003/+0.001/+0.002/
    # +0.003 (1000: Hit@10 -0.009); p50 there 27.5 -> 22.8 ms (`tools/eval.py locomo ... --set postings_budget=N`).
    postings_budget: int = setting(
        2000, "ranking", "postings read for the question's words (and again for feedback's), at most; the commonest "
        "words past it are skipped")
    # On LoCoMo dev the pool then held nearly every message of a conversation (candidate_pool 1000), so 0, 20,
    # 50 and 100 score the same (objective 0.7065 each, weight_period 0.3); 50 lets a period's sessions in where
    # the question's words miss them (a LoCoMo dev session: 21.6 messages on average) and bounds a question's cost.
    period_pool: int = setting(
        50, "ranking", "messages dated in the period a question names that join the pool without sharing its words")
    tail_weight_feedback: float = setting(
        0.2, "ranking", "weight of pseudo-relevance feedback past the first head_size places")
    tail_weight_speaker: float = setting(
        0.5, "ranking", "weight of the speaker ranking past the first head_size places")
    view_kind: str = setting(
        views.WINDOW, "results", "what fills the slots after the single messages: window, segment, or message (none)")
    message_share: float = setting(
        0.9, "results", "share of the top_k slots that hold single messages, 0 to 1")
    state_update_window: int = setting(
        20, "ranking", "best messages the state-update rerank reads and may reorder; 0 turns it off")
    # Spread (spread.py), for list and count questions (query.asks_many()). On LoCoMo dev
    # (`python tools/eval.py locomo ... --set spread_gap=G --set spread_keep=K`; from weight_reply
    # 0.12, options as now): multi-hop recall@10 0.415 -> 0.446 and hit@10 0.727 -> 0.734 with gap 1,
    # keep 3, slots 10; objective 0.7215 -> 0.7211 (hit@1 0.481 either way, hit@10 0.857 -> 0.855).
    # Gap 2: recall@10 0.428; gap 4: 0.426; keep 2/4/5: 0.433/0.435/0.431; slots 15 = slots 10.
    # Rejected: at most N messages per session (N=2: recall@10 0.443 but objective 0.7203; applied
    # to every question, not only list ones, single-hop hit@10 fell 0.887 -> 0.748).
    spread_keep: int = setting(3, "ranking", "first places a list question keeps in fused order before spreading")
    spread_slots: int = setting(
        10, "ranking", "first places of a list question in which no message is within spread_gap of another")
    spread_gap: int = setting(
        1, "ranking", "positions in a session around a placed message whose messages wait past spread_slots; "
        "0 turns spreading off")
    synchronous: str = setting(
        "FULL", "database", "SQLite durability: OFF, NORMAL, FULL or EXTRA; FULL means an acknowledged Add "
        "survives power loss")
    log_level: str = setting("INFO", "server", "the lowest level logged: DEBUG, INFO, WARNING or ERROR")
    # Beside Litestream flowmem's truncating checkpoints wait out its read lock (docs/cluster.md).
    checkpoints: str = setting(
        "flowmem", "database", "who checkpoints the WAL: flowmem (a background thread, and after delete-user), or "
        "external: never flowmem (Litestream, replicating the file, does it)")
    pause_gc: bool = setting(True, "database", "pause Python's cyclic garbage collector during each search")
    # docs/page_bytes.md: what six listings at once hold in RSS at each bound, and why this one.
    page_max_bytes: int = setting(
        2 * 1024 * 1024, "database", "text a page of a listing or an export holds, at most, in bytes (a page "
        "ends early, with its next_cursor; one row larger than this is a page alone)")
    metrics_public: bool = setting(
        False, "server", "serve GET /metrics without the API key (to a scraper that cannot send one)")

    def key(self) -> Optional[str]:
        """The API key: `api_key` if set, else the first line of `api_key_file`, else None."""
        if self.api_key:
            return self.api_key
        if self.api_key_file:
            try:
                with open(self.api_key_file, encoding="utf-8") as f:
                    key = f.readline().strip()
            except OSError as e:
                raise ConfigError("cannot read api key file %s: %s" % (self.api_key_file, e.strerror)) from e
            if not key:
                raise ConfigError("api key file %s is empty" % self.api_key_file)
            return key
        return None

    def index_settings(self) -> Dict[str, Any]:
        """The index settings given explicitly, by name, for storage; those left None are the database's.

        A new database takes storage.settings.ViewSettings's defaults for the rest; an
        existing one refuses a value that differs from its own (storage.settings.index_problem).
        """
        return {name: getattr(self, name) for name in ViewSettings._fields if getattr(self, name) is not None}

    def ranking(self, index: ViewSettings) -> Ranking:
        """The Ranking these settings describe, for searching an index built with `index`'s settings.

        `stem` and `resolve_times` are the index's, never the Config's: a question must
        be read as the messages were (search() takes them again from the snapshot it reads).
        """
        return Ranking(
            k1=self.bm25_k1,
            b=self.bm25_b,
            rrf_k=self.rrf_k,
            weights=self.weights(),
            adjacency_top=self.adjacency_top,
            options_boost_max=self.options_boost_max,
            pool_size=self.candidate_pool,
            context_size=self.context_pool,
            head_size=self.head_size,
            feedback_docs=self.feedback_docs,
            feedback_terms=self.feedback_terms,
            postings_budget=self.postings_budget,
            period_size=self.period_pool,
            related_share=self.related_share,
            meaning_pool=self.meaning_pool,
            meaning_scan=self.meaning_scan,
            meaning_closed_at=self.meaning_closed_at,
            meaning_rrf_k=self.meaning_rrf_k,
            meaning_unseen=self.meaning_unseen,
            meaning_places=tuple(int(p) for p in self.meaning_places.split(",") if p.strip()),
            tail_weights=self.tail_weights(),
            view_kind=self.view_kind,
            message_share=self.message_share,
            state_update_window=self.state_update_window,
            spread_keep=self.spread_keep,
            spread_slots=self.spread_slots,
            spread_gap=self.spread_gap,
            stem=index.stem,
            resolve_times=index.resolve_times,
            date_prefix=self.date_prefix,
            time_annotations=self.time_annotations,
        )

    def weights(self) -> Tuple[Tuple[str, float], ...]:
        """(signal, weight) pairs of every `weight_<signal>` setting, in a stable order."""
        return tuple((f.name[len("weight_"):], getattr(self, f.name))
                     for f in dataclasses.fields(self) if f.name.startswith("weight_"))

    def tail_weights(self) -> Tuple[Tuple[str, float], ...]:
        """(signal, weight) pairs of every `tail_weight_<signal>` setting: weights that differ in the tail."""
        return tuple((f.name[len("tail_weight_"):], getattr(self, f.name))
                     for f in dataclasses.fields(self) if f.name.startswith("tail_weight_"))

    def validate(self) -> "Config":
        """Raise ConfigError for values no part of flowmem could work with."""
        positive = ("port", "max_body_bytes", "max_inflight", "top_k_cap", "window_size", "segment_max_messages",
                    "max_connections", "workers", "page_max_bytes")
        for name in positive:
            if getattr(self, name) is not None and getattr(self, name) < (0 if name == "port" else 1):
                raise ConfigError("%s must be positive, got %r" % (name, getattr(self, name)))
        if self.port > 65535:
            raise ConfigError("port must be at most 65535, got %r" % self.port)
        if self.rrf_k < 0 or any(w < 0 for _, w in self.weights() + self.tail_weights()):
            raise ConfigError("rrf_k and every weight_* and tail_weight_* must not be negative")
        for name in ("request_timeout_s", "keepalive_timeout_s", "shutdown_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigError("%s must be positive, got %r" % (name, getattr(self, name)))
        if self.segment_max_gap_s is not None and self.segment_max_gap_s < 0:
            raise ConfigError("segment_max_gap_s must not be negative")
        if self.view_kind not in views.KINDS:
            raise ConfigError("view_kind must be one of %s, got %r" % (", ".join(views.KINDS), self.view_kind))
        if not 0.0 <= self.message_share <= 1.0:
            raise ConfigError("message_share must be between 0 and 1")
        if self.synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ConfigError("synchronous must be OFF, NORMAL, FULL or EXTRA, got %r" % self.synchronous)
        if self.checkpoints not in ("flowmem", "external"):
            raise ConfigError("checkpoints must be flowmem or external, got %r" % self.checkpoints)
        return self


def field_type(name: str) -> Any:
    """What parses the text of setting `name`: int, float, to_bool or str (for CLI flags)."""
    kind = next(kind_of(f) for f in dataclasses.fields(Config) if f.name == name)
    return {"int": int, "float": float, "bool": to_bool}.get(kind, str)


def _parse(field: dataclasses.Field, raw: str) -> Any:
    return parse_value(field, raw, ENV_PREFIX + field.name.upper())


def load(flags: Optional[Mapping[str, Any]] = None, environ: Optional[Mapping[str, str]] = None) -> Config:
    """Build a Config from `environ` (default: os.environ) and `flags` (None values are unset)."""
    environ = os.environ if environ is None else environ
    flags = flags or {}
    values = {}
    for field in dataclasses.fields(Config):
        env_name = ENV_PREFIX + field.name.upper()
        if flags.get(field.name) is not None:
            # Text for a typed setting (tools pass NAME=VALUE pairs) is read as the environment's is.
            flag = flags[field.name]
            values[field.name] = _parse(field, flag) if isinstance(flag, str) else flag
        elif environ.get(env_name, "") != "":
            values[field.name] = _parse(field, environ[env_name])
    return Config(**values).validate()


def field_names() -> List[str]:
    """Names of all settings, for building CLI flags."""
    return [f.name for f in dataclasses.fields(Config)]


class Setting(NamedTuple):
    """One setting as declared: what `--help` and the settings table show."""

    name: str
    group: str  # a key of GROUPS
    help: str
    default: Any
    variable: str  # the environment variable, FLOWMEM_<NAME>


def settings() -> List[Setting]:
    """Every setting, in the order Config declares them."""
    return [Setting(f.name, f.metadata["group"], f.metadata["help"], f.default, ENV_PREFIX + f.name.upper())
            for f in dataclasses.fields(Config)]
