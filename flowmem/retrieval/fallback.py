"""When nothing in a user's memory matches a question's words: the nearest in meaning, or the latest messages.

A question none of whose words (nor related words, nor a speaker it names) any message
holds is answered by the messages nearest it in meaning (retrieval/meaning.py), ranked
as any search is; their items carry `signals: {"fallback": "meaning", "meaning": rank,
...}`. Only when meaning finds nothing either (no word of the question has a vector, or
the user's messages none) do the latest messages stand in, as follows.

A user with memories who asks a question that none of their messages matches (no
word of it, no related word, no speaker it names; or a question of stopwords alone)
would get an empty list, and the answering model no context at all. The evidence
that is left to justify is what was said last: the latest session from its end
backwards, then the session before it. Under a search's filters, the latest messages
that pass them (filters.py): a filter that no message passes gives an empty list. Those
items score 0 and carry `signals: {"fallback": "latest_session"}`, so a caller can tell
them from matches and drop them if it would rather have nothing.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..storage.reader import Reader
from ..storage.views import MESSAGE
from .filters import DocFilter
from .items import Session, result_item
from .ranking import Ranking
from .selection import Pick

FALLBACK = "fallback"  # what a fallback item's `signals` report, with its kind
LATEST_SESSION = "latest_session"
NEAREST_MEANING = "meaning"  # what items found by meaning alone report as their fallback


def latest_items(reader: Reader, user_key: int, top_k: int, ranking: Ranking,
                 keep: Optional[DocFilter] = None) -> List[Dict[str, Any]]:
    """The user's last `top_k` messages as items, newest first, marked as a fallback.

    keep: the search's filter (filters.py): the last `top_k` messages that pass it, and
    none if none does. Identical contents appear once, as in every result.
    """
    items: List[Dict[str, Any]] = []
    seen_contents = set()
    views = reader.latest_message_views(user_key, top_k) if keep is None else keep.latest_message_views(top_k)
    for view in views:
        reader.session(view)  # brings the session's rows into this reader
        row = reader.message_row(view.session_key, view.first)
        pick = Pick(MESSAGE, view.session_key, view.first, view.last, 0.0, (view.session_key, view.first))
        item = result_item(pick, Session(view.session_id, view.tag), [row], {FALLBACK: LATEST_SESSION}, ranking)
        if item["content"] not in seen_contents:
            seen_contents.add(item["content"])
            items.append(item)
    return items
