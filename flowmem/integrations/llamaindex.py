"""LlamaIndex adapter: a flowmem memory as a retriever, a query to scored nodes.

    from flowmem import Memory
    from flowmem.integrations.llamaindex import FlowmemRetriever

    retriever = FlowmemRetriever(Memory("memory.db"), user_id="alice", top_k=5)
    nodes = retriever.retrieve("where did I go in May?")

This module imports llama-index-core (`pip install llama-index-core`) when it is imported;
flowmem itself never imports it. It calls only `memory.search({...})`, the dict-level form a
Memory and a Client share.

A query is one Search (integrations/calls.py); each item becomes a NodeWithScore holding a
TextNode: its text the item's content, its id_ the item's id, its metadata the item's
provenance (id, score, created_at, session_id, source_message_ids, view, role, the search's
"evidence" grade: strong, weak or none, the same on every node of one call, and the item's own
metadata under "metadata"), its score the item's. Of that metadata, only
created_at and role reach the text an LLM is shown (the rest is bookkeeping that would fill
a prompt with ids), and none of it the text that is embedded: the content is what was said.
`filters` (session_id, since, until, role, metadata) narrow every search.
"""
from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence

from . import calls

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as e:
    raise calls.missing(__name__, "llama_index.core", "llama-index-core") from e

__all__ = ["FlowmemRetriever"]

# The provenance an LLM is not shown: ids, the score and the view are for the program, not the model.
_HIDDEN_FROM_LLM = ["id", "score", "session_id", "source_message_ids", "view", "evidence", "metadata"]


class FlowmemRetriever(BaseRetriever):
    """A flowmem memory as a LlamaIndex retriever: `retrieve(query)` -> NodeWithScore, best first."""

    def __init__(self, memory: Any, user_id: str, top_k: int = 10, filters: Optional[Mapping[str, Any]] = None,
                 options: Optional[Sequence[str]] = None, callback_manager: Optional[CallbackManager] = None,
                 verbose: bool = False):
        """memory: a flowmem Memory or Client; user_id: whose memory is searched; top_k: nodes at most;
        filters: the contract's (session_id, since, until, role, metadata); options: the Search's."""
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.memory = memory
        self.user_id = user_id
        self.top_k = top_k
        self.filters = dict(filters) if filters else None
        self.options = list(options) if options else None

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        found = calls.found(self.memory, query_bundle.query_str, self.user_id, self.top_k, self.filters,
                            self.options)
        return [NodeWithScore(node=node(item, found.evidence), score=item["score"]) for item in found.items]


def node(item: Mapping[str, Any], evidence: Optional[str] = None) -> TextNode:
    """A Search item as a TextNode, with its search's `evidence` grade (the module docstring says which
    metadata each mode shows)."""
    metadata = calls.provenance(item, evidence)
    return TextNode(text=item["content"], id_=item["id"], metadata=metadata,
                    excluded_llm_metadata_keys=list(_HIDDEN_FROM_LLM),
                    excluded_embed_metadata_keys=list(metadata))
