"""How a user's tokens live in the shared FTS5 index, and the SQL that reads them.

One FTS5 table holds every user's views, but no two users share an index term: each
token is stored as `<user_key>_<kind>_<token>` (user 7's "dog" in a message view is
`7_m_dog`, in a window `7_w_dog`, in a segment `7_s_dog`; the speaker "Dana" of a
message is `7_p_dana`, kept apart from what was said). A term lookup therefore
walks only the asking user's postings, of one view kind, whatever else the table
holds; a filter on a user column would walk everyone's. The prefixes also make
document frequencies per user and per kind, and flowmem keeps each user's document
count and total length itself (`user_stats`), so BM25 never sees other users' data.

Tokens contain only letters, digits, combining marks and a decimal point (see
tokenize.py); with the `ascii` tokenizer and `_` and `.` as token characters, FTS5
keeps each prefixed token whole, so the index term is exactly the string built here.
Nothing a client sends is ever parsed as FTS5 query syntax, and no statement binds
more than MAX_VARIABLES values: lookups of more terms are split (chunks()), so a
question of any length stays under SQLite's limit on bound parameters.
"""
from __future__ import annotations

from typing import Dict, Iterable, Iterator, List, Sequence, Tuple, TypeVar

from .views import MESSAGE, SEGMENT, WINDOW

TABLE = "view_index"
INSTANCES_TABLE = "view_index_instances"  # one row per occurrence: (term, doc)
ROWS_TABLE = "view_index_rows"  # one row per term: (term, number of documents)

T = TypeVar("T")

# Bound values per statement. SQLite refuses more than SQLITE_MAX_VARIABLE_NUMBER (999 before
# 3.32, 32766 after, other values in some builds); lookups of more terms are split.
MAX_VARIABLES = 500

KIND_LETTERS: Dict[str, str] = {MESSAGE: "m", WINDOW: "w", SEGMENT: "s"}
SPEAKER = "speaker"  # a message's speaker label is indexed apart from its text, as `<user>_p_<token>`
LETTERS: Dict[str, str] = dict(KIND_LETTERS, **{SPEAKER: "p"})

# FTS5's own merge settings are kept (merge every 4 segments of a level). Merging 16 at
# a time built the 1M-message isolation benchmark about 10% faster, but left so many
# segments that every term lookup of a small user in that big index cost 4x more:
# search 1.26x slower than in an empty database instead of 1.05x (tools/bench_isolation.py).
CREATE_SQL = [
    "CREATE VIRTUAL TABLE %s USING fts5(terms, content='', tokenize=\"ascii tokenchars '_.'\")" % TABLE,
    "CREATE VIRTUAL TABLE %s USING fts5vocab(%s, instance)" % (INSTANCES_TABLE, TABLE),
    "CREATE VIRTUAL TABLE %s USING fts5vocab(%s, row)" % (ROWS_TABLE, TABLE),
]


def term(user_key: int, kind: str, token: str) -> str:
    """The index term of `token` in views of `kind` (or as a SPEAKER) for the user with key `user_key`."""
    return "%d_%s_%s" % (user_key, LETTERS[kind], token)


def user_term_prefix(user_key: int) -> str:
    """Every index term of this user, and only this user's, starts with this."""
    return "%d_" % user_key


def kind_prefix(user_key: int, kind: str) -> str:
    """Every index term of this user and view kind (or SPEAKER), and only those, starts with this.

    It extends the user's prefix, so no term of one user can start with another's.
    """
    return "%s%s_" % (user_term_prefix(user_key), LETTERS[kind])


def document(user_key: int, kind: str, tokens: Iterable[str], speaker: Iterable[str] = ()) -> str:
    """The text indexed for a view of `kind` made of `tokens` (and for a message, its speaker's)."""
    prefix, speaker_prefix = kind_prefix(user_key, kind), kind_prefix(user_key, SPEAKER)
    return " ".join([prefix + t for t in tokens] + [speaker_prefix + t for t in speaker])


def insert_sql() -> str:
    """Index a view: params (doc_id, document)."""
    return "INSERT INTO %s(rowid, terms) VALUES (?, ?)" % TABLE


def delete_sql() -> str:
    """Unindex a view: params (doc_id, the exact document it was indexed with)."""
    return "INSERT INTO %s(%s, rowid, terms) VALUES ('delete', ?, ?)" % (TABLE, TABLE)


def delete_all_sql() -> str:
    """Empty the index (used before rebuilding it from the stored messages)."""
    return "INSERT INTO %s(%s) VALUES ('delete-all')" % (TABLE, TABLE)


def optimize_sql() -> str:
    """Merge the whole index into one b-tree, dropping deleted entries for good."""
    return "INSERT INTO %s(%s) VALUES ('optimize')" % (TABLE, TABLE)


def chunks(items: Sequence[T], size: int = MAX_VARIABLES) -> Iterator[Sequence[T]]:
    """`items` in consecutive slices of at most `size` (one SQL statement's bound values each)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _term_lookups(table: str, terms: Iterable[str], select: str = "term, doc") -> List[Tuple[str, List[str]]]:
    """Statements listing `select` (by default (term, doc)) of `table` for `terms`, at most MAX_VARIABLES terms each.

    The terms are sorted and deduplicated first, which is what SQLite does with one
    `IN (...)` list, so the rows come in the same order as from a single statement.
    """
    ordered = sorted(set(terms))
    return [("SELECT %s FROM %s WHERE term IN (%s)" % (select, table, ",".join("?" * len(chunk))), list(chunk))
            for chunk in chunks(ordered)]


def postings_sql(user_key: int, kind: str, tokens: Sequence[str]) -> List[Tuple[str, List[str]]]:
    """SQL and params listing (token, doc_id) once per occurrence of each token in views of `kind` (or SPEAKER).

    Reads the FTS5 index through its fts5vocab `instance` table, which answers a
    `term IN (...)` constraint from the index itself, so the cost is the number of
    occurrences of these terms for this user and kind. One statement per
    MAX_VARIABLES tokens: a question may hold any number of words. SQLite cuts the
    user's and kind's prefix off each term (substr), so the rows come out as they are
    used, with no Python work per row: a search reads thousands of them.
    """
    start = len(kind_prefix(user_key, kind)) + 1  # an int computed here, never client text
    return _term_lookups(INSTANCES_TABLE, (term(user_key, kind, t) for t in tokens), "substr(term, %d), doc" % start)


def doc_freq_sql(user_key: int, tokens: Sequence[str], kinds: Sequence[str]) -> List[Tuple[str, List[str]]]:
    """SQL and params listing (term, number of views holding it) for the tokens in views of `kinds`."""
    return _term_lookups(ROWS_TABLE, (term(user_key, kind, t) for kind in kinds for t in tokens))


def vocabulary_sql(user_key: int, kind: str, start: str, limit: int) -> Tuple[str, List[object]]:
    """SQL and params listing (token, number of views holding it) of the user's tokens of `kind` starting with `start`.

    A range on the fts5vocab `row` table, which walks only the index terms in it: the
    user's own of that kind and start, whatever else the table holds; at most `limit` rows.
    """
    low = kind_prefix(user_key, kind) + start
    high = low[:-1] + chr(ord(low[-1]) + 1)
    return ("SELECT substr(term, ?), doc FROM %s WHERE term >= ? AND term < ? LIMIT ?" % ROWS_TABLE,
            [len(kind_prefix(user_key, kind)) + 1, low, high, limit])


def integrity_check_sql() -> str:
    """FTS5's own check that the index is internally consistent (raises if not)."""
    return "INSERT INTO %s(%s) VALUES ('integrity-check')" % (TABLE, TABLE)
