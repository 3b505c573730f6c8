"""What the framework adapters share: the Search they send, an item's provenance, the missing-framework error.

Standard library only, so the adapters' own logic is tested without any framework: each
adapter module is the thin part that builds its framework's objects from these dicts.

The Search is the contract's body, sent through `memory.search(body)`: the one form a Memory
and a Client both answer with `{"data": [item, ...], "evidence": grade}`, whatever keyword forms
either grows. The grade ("strong", "weak" or "none": how strong the items' evidence is, docs/api.md)
is the search's, not an item's: `found()` returns it beside the items, and each document or node
carries it in its metadata as "evidence" (`provenance(item, evidence)`).
An item's provenance (`provenance()`) is what a framework's document or node carries beside
its text: the item's id and score, when it was said, its session, the ids of the stored
messages it shows, its view and role, and the item's own metadata (the metadata its
messages were stored with, all alike) under "metadata", apart from flowmem's own fields so
that a key of the caller's (a "role" or an "id") can never hide one of them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence

# The item fields a document or node carries as its metadata, in this order.
PROVENANCE = ("id", "score", "created_at", "session_id", "source_message_ids", "view", "role")


def search_body(query: str, user_id: str, top_k: int, filters: Optional[Mapping[str, Any]] = None,
                options: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The contract's Search body; `filters` (session_id, since, until, role, metadata) and `options` only
    when given, so a body without them is exactly what a contract client sends."""
    body: Dict[str, Any] = {"query": query, "user_id": user_id, "top_k": top_k}
    if filters:
        body["filters"] = dict(filters)
    if options:
        body["options"] = list(options)
    return body


class Found(NamedTuple):
    """What a Search found: its items, best first, and its evidence grade (None: a server older than it)."""

    items: List[Dict[str, Any]]
    evidence: Optional[str]


def found(memory: Any, query: str, user_id: str, top_k: int, filters: Optional[Mapping[str, Any]] = None,
          options: Optional[Sequence[str]] = None) -> Found:
    """The items `memory` (a Memory or a Client) finds for `query` in `user_id`'s memory, best first,
    and the search's `evidence` grade.

    top_k: at most this many; filters, options: as the contract's Search takes them. Errors are
    flowmem's own (InvalidField for a malformed filter, Unavailable for a server out of reach).
    """
    answer = memory.search(search_body(query, user_id, top_k, filters, options))
    return Found(list(answer["data"]), answer.get("evidence"))


def search(memory: Any, query: str, user_id: str, top_k: int, filters: Optional[Mapping[str, Any]] = None,
           options: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
    """The items of found(), without the grade."""
    return found(memory, query, user_id, top_k, filters, options).items


def provenance(item: Mapping[str, Any], evidence: Optional[str] = None) -> Dict[str, Any]:
    """An item's fields a framework's document or node carries (PROVENANCE), the search's `evidence`
    grade when given, and the item's own "metadata" if any."""
    out = {name: item.get(name) for name in PROVENANCE}
    if evidence is not None:
        out["evidence"] = evidence
    if item.get("metadata"):
        out["metadata"] = dict(item["metadata"])
    return out


def missing(adapter: str, module: str, package: str) -> ImportError:
    """The ImportError the adapter module `adapter` raises when the framework's `module` cannot be
    imported: it names the pip `package` that brings it."""
    return ImportError("%s needs %s, which is not installed: pip install %s" % (adapter, module, package),
                       name=module)
