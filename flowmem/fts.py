"""How a user's tokens live in the shared FTS5 index, and the SQL that reads them.

One FTS5 table holds every user's views, but no two users share an index term: each
token is stored as `<user_key>_<token>` (user 7's "dog" is `7_dog`). A term lookup
therefore walks only the asking user's postings, whatever else the table holds; a
filter on a user column would walk everyone's. The same prefix keeps document
frequencies per user, and flowmem keeps each user's document count and total length
itself (`users.n_docs`, `users.total_length`), so BM25 never sees other users' data.

Tokens contain only letters, digits, combining marks and a decimal point (see
tokenize.py); with the `ascii` tokenizer and `_` and `.` as token characters, FTS5
keeps each prefixed token whole, so the index term is exactly the string built here.
Nothing a client sends is ever parsed as FTS5 query syntax.
"""
from __future__ import annotations

from typing import Iterable, List, Sequence, Tuple

TABLE = "view_index"
TERMS_TABLE = "view_index_terms"

# FTS5 merges its index segments as the table grows. Merging 16 segments of a level
# at a time (default 4), with crisis merges only at 64 (default 16), rewrites the
# index fewer times: building the 1M-message isolation benchmark took 96 s instead
# of 104-112 s, with the same search latency (tools/bench_isolation.py, README).
AUTOMERGE = 16
CRISISMERGE = 64

CREATE_SQL = [
    "CREATE VIRTUAL TABLE %s USING fts5(terms, content='', tokenize=\"ascii tokenchars '_.'\")" % TABLE,
    "CREATE VIRTUAL TABLE %s USING fts5vocab(%s, instance)" % (TERMS_TABLE, TABLE),
    "INSERT INTO %s(%s, rank) VALUES ('automerge', %d)" % (TABLE, TABLE, AUTOMERGE),
    "INSERT INTO %s(%s, rank) VALUES ('crisismerge', %d)" % (TABLE, TABLE, CRISISMERGE),
]


def term(user_key: int, token: str) -> str:
    """The index term of `token` for the user with internal key `user_key`."""
    return "%d_%s" % (user_key, token)


def user_term_prefix(user_key: int) -> str:
    """Every index term of this user, and only this user's, starts with this."""
    return "%d_" % user_key


def document(user_key: int, tokens: Iterable[str]) -> str:
    """The text indexed for a view made of `tokens`."""
    return " ".join(term(user_key, t) for t in tokens)


def insert_sql() -> str:
    """Index a view: params (doc_id, document)."""
    return "INSERT INTO %s(rowid, terms) VALUES (?, ?)" % TABLE


def delete_sql() -> str:
    """Unindex a view: params (doc_id, the exact document it was indexed with)."""
    return "INSERT INTO %s(%s, rowid, terms) VALUES ('delete', ?, ?)" % (TABLE, TABLE)


def optimize_sql() -> str:
    """Merge the whole index into one b-tree, dropping deleted entries for good."""
    return "INSERT INTO %s(%s) VALUES ('optimize')" % (TABLE, TABLE)


def postings_sql(user_key: int, tokens: Sequence[str]) -> Tuple[str, List[str]]:
    """SQL and params listing (term, doc_id) once per occurrence of each token.

    Reads the FTS5 index through its fts5vocab `instance` table, which answers a
    `term IN (...)` constraint from the index itself, so the cost is the number of
    occurrences of these terms for this user.
    """
    terms = [term(user_key, t) for t in tokens]
    placeholders = ",".join("?" * len(terms))
    return "SELECT term, doc FROM %s WHERE term IN (%s)" % (TERMS_TABLE, placeholders), terms


def user_terms_sql(user_key: int) -> Tuple[str, List[str]]:
    """SQL and params listing every index term of a user (used to prove deletion)."""
    prefix = user_term_prefix(user_key)
    # A range on term uses the index; the upper bound is the prefix with "_" bumped to "`".
    return (
        "SELECT DISTINCT term FROM %s WHERE term >= ? AND term < ?" % TERMS_TABLE,
        [prefix, prefix[:-1] + chr(ord("_") + 1)],
    )
