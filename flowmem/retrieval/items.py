"""Result items: what the contract returns for a chosen view, with its provenance.

An item's content is its view's stored messages verbatim, one per line, each line
that starts a new day prefixed with it and resolved relative times after the text
(render()); its id and source_message_ids are the public ids of the view and its
messages (storage/ids.py); created_at is its first known time, in ISO-8601 UTC; role is
its first message's role, as stored (a message item: its own).
"""
from __future__ import annotations

import datetime
from typing import Any, Dict, NamedTuple, Optional, Sequence

from ..storage import metadata_index
from ..storage.ids import message_id, view_id
from ..text import timeexpr
from .ranking import Ranking
from .selection import Pick


class Session(NamedTuple):
    """What an item tells of the session its view belongs to."""

    session_id: str
    tag: str


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def iso_time(timestamp_ms: Optional[int]) -> Optional[str]:
    """Unix milliseconds as ISO-8601 UTC (`2023-05-08T13:56:00.000+00:00`), None if unknown."""
    if timestamp_ms is None:
        return None
    return (_EPOCH + datetime.timedelta(milliseconds=timestamp_ms)).isoformat(timespec="milliseconds")


def render(rows: Sequence[Any], date_prefix: bool, time_annotations: bool) -> str:
    """A view's content: its messages verbatim, one per line, each line that starts a new day
    prefixed with it ("[2023-05-08] "), resolved relative times after the text."""
    lines = []
    previous_day = None
    for row in rows:
        line = row.content
        if time_annotations and row.annotation:
            line = "%s %s" % (line, row.annotation)
        day = timeexpr.day_of(row.timestamp_ms)
        if date_prefix and day is not None and day != previous_day:
            line = "[%s] %s" % (day.isoformat(), line)
        previous_day = day
        lines.append(line)
    return "\n".join(lines)


def result_item(pick: Pick, session: Session, rows: Sequence[Any], audit: Dict[str, Any],
                ranking: Ranking) -> Dict[str, Any]:
    """One contract item with provenance: content is the view's stored messages (render()).

    session: the (session_id, tag) of the pick's session; rows: the stored rows of the
    pick's messages, in order; audit: what the item's `signals` report (signal -> the
    anchor's rank; the state-update rerank's role; a fallback's kind); ranking: its
    date_prefix and time_annotations say how content is rendered.
    """
    known = [r.timestamp_ms for r in rows if r.timestamp_ms is not None]
    item = {
        # Ids name the positions the messages were added at (MessageRow.number): past a deleted message they stay.
        "id": view_id(pick.kind, session.tag, rows[0].number, rows[-1].number),
        "content": render(rows, ranking.date_prefix, ranking.time_annotations),
        "score": pick.score,
        "created_at": iso_time(known[0] if known else None),
        "view": pick.kind,
        "source_message_ids": [message_id(session.tag, r.number) for r in rows],
        "session_id": session.session_id,
        "role": rows[0].role,
        "signals": audit,
    }
    shared = shared_metadata(rows)
    if shared:
        item["metadata"] = shared
    return item


def shared_metadata(rows: Sequence[Any]) -> Dict[str, Any]:
    """The metadata every one of `rows` holds alike (key and value): a message's own, a window's common part."""
    if rows[0].metadata is None:
        return {}
    shared = metadata_index.loads(rows[0].metadata)
    for row in rows[1:]:
        other = metadata_index.loads(row.metadata)
        shared = {k: v for k, v in shared.items() if k in other and metadata_index.value_text(other[k])
                  == metadata_index.value_text(v)}
        if not shared:
            break
    return shared
