"""Index settings: what a database's index holds, kept in its `meta` table.

Index settings are fixed per database: a Store adopts those in `meta`, and refuses
settings given explicitly that differ, naming the `flowmem reindex` that would apply
them (index_problem(), reindex_command()); nothing rebuilds implicitly. `meta` also
holds the index version this flowmem reads (INDEX_VERSION) and the index
`generation`, bumped by a rebuild, which changes every user's index; a deleted session
(or user) is written to the `deletions` log instead (schema.py), so that caches forget
that user's entries and nobody else's. Every transaction reads both first (read_marks()).
"""
from __future__ import annotations

import shlex
import sqlite3
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple, Union

from ..errors import StoreError


class ViewSettings(NamedTuple):
    """What the index holds: view sizes, and how message text becomes tokens.

    Fixed per database (stored in `meta`); these defaults, the only ones, are what a
    new database gets for every setting not given. Field names are Config's.
    """

    window_size: int = 3
    segment_max_messages: int = 8
    segment_max_gap_s: int = 1800
    stem: bool = True  # index Porter stems, not surface words
    split_speakers: bool = True  # index a leading "Name: " label as the speaker, not as text
    resolve_times: bool = True  # resolve and index the dates messages mean (timeexpr.py)


# Bump when tokenization or what a view indexes changes: stored indexes must then be rebuilt
# (`flowmem reindex`); a Store refuses an index of another version.
# 7: dates written next to Chinese characters ("我2022-10-04那天") are resolved and indexed.
# 8: each message's meaning vector (text/meaning.py) is stored beside its tokens.
INDEX_VERSION = 8

SettingsRequest = Union[ViewSettings, Mapping[str, Any], None]


class IndexState(NamedTuple):
    """What a Store reads the index with: the settings of one index generation, and the last
    entry of the deletions log that a snapshot holds (or, as the Store's own, that it has applied)."""

    generation: int
    settings: ViewSettings
    deletions: int = 0


def requested_settings(settings: SettingsRequest) -> Dict[str, Any]:
    """The index settings asked for by name (a ViewSettings asks for all of them)."""
    if settings is None:
        return {}
    given = settings._asdict() if isinstance(settings, ViewSettings) else dict(settings)
    unknown = sorted(set(given) - set(ViewSettings._fields))
    if unknown:
        raise ValueError("not index settings: %s" % ", ".join(unknown))
    return {name: given[name] for name in ViewSettings._fields if given.get(name) is not None}


def flag_value(value: Any) -> str:
    """A setting's value as a flag takes it (booleans as 1 and 0), as `meta` stores it too."""
    return str(int(value)) if isinstance(value, bool) else str(value)


def reindex_command(path: str, settings: Mapping[str, Any]) -> str:
    """The `flowmem reindex` command line that rebuilds `path`'s index with `settings`."""
    flags = "".join(" --%s %s" % (name.replace("_", "-"), flag_value(settings[name]))
                    for name in ViewSettings._fields if name in settings)
    return "flowmem reindex --db %s%s" % (shlex.quote(path), flags)


def read_meta(conn: sqlite3.Connection) -> Dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def read_marks(conn: sqlite3.Connection) -> Tuple[int, int]:
    """(index generation, seq of the last deletion logged) of the connection's snapshot: two rows
    of `meta` by its primary key, read at every transaction's start."""
    marks = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'deletions')").fetchall())
    return int(marks.get("generation", 0)), int(marks.get("deletions", 0))


def write_deletions_mark(conn: sqlite3.Connection, seq: int) -> None:
    """Record `seq` as the last deletion logged (schema.py `deletions`), what read_marks() reads."""
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('deletions', ?)", (str(seq),))


def write_meta(conn: sqlite3.Connection, settings: ViewSettings, generation: int) -> None:
    """The index's description: its version, `settings` and `generation` (the deletions mark is kept)."""
    conn.execute("DELETE FROM meta WHERE key != 'deletions'")
    rows = [("index_version", str(INDEX_VERSION)), ("generation", str(generation))]
    rows += [(name, flag_value(value)) for name, value in settings._asdict().items()]
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(rows))


def decode_settings(meta: Mapping[str, str], path: str) -> ViewSettings:
    """The settings `meta` records (flowmem before schema 2 wrote the gap in ms, booleans as True/False)."""
    values = dict(meta)
    if "segment_max_gap_ms" in values:
        values["segment_max_gap_s"] = str(int(values.pop("segment_max_gap_ms")) // 1000)
    out: Dict[str, Any] = {}
    try:
        for name, default in ViewSettings()._asdict().items():
            raw = values[name]
            out[name] = raw in ("1", "True") if isinstance(default, bool) else int(raw)
    except (KeyError, ValueError) as e:
        raise StoreError("database %s has an unreadable index description (meta): %s" % (path, e)) from e
    return ViewSettings(**out)


def index_problem(path: str, meta: Mapping[str, str], stored: ViewSettings,
                  requested: Mapping[str, Any]) -> Optional[str]:
    """Why an index cannot be read as asked (another index version, other settings given), or None."""
    differing = {name: value for name, value in requested.items() if getattr(stored, name) != value}
    command = reindex_command(path, differing)
    try:
        version = int(meta.get("index_version", INDEX_VERSION))
    except ValueError:
        return "database %s has an unreadable index version %r" % (path, meta["index_version"])
    if version > INDEX_VERSION:
        return ("the index of %s was built by a newer flowmem (index version %d; this one reads %d): upgrade "
                "flowmem, or rebuild the index for this one with `%s`" % (path, version, INDEX_VERSION, command))
    if version < INDEX_VERSION:
        return ("the index of %s was built by an older flowmem (index version %d; this one reads %d): rebuild it "
                "with `%s` (safe while a server runs)" % (path, version, INDEX_VERSION, command))
    if differing:
        said = "; ".join("%s is %s there, %s given" % (name, flag_value(getattr(stored, name)), flag_value(value))
                         for name, value in differing.items())
        return ("database %s was indexed with other settings (%s): rebuild its index with `%s` (safe while a "
                "server runs), or leave those settings out to use the database's" % (path, said, command))
    return None
