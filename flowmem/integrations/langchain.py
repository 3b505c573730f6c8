"""LangChain adapters: a flowmem memory as a retriever, and one of its sessions as a chat message history.

    from flowmem import Memory
    from flowmem.integrations.langchain import FlowmemChatMessageHistory, FlowmemRetriever

    memory = Memory("memory.db")                      # or Client("http://127.0.0.1:8000", api_key)
    retriever = FlowmemRetriever(memory, user_id="alice", top_k=5)
    documents = retriever.invoke("where did I go in May?")
    history = FlowmemChatMessageHistory(memory, user_id="alice", session_id="chat-1")

This module imports langchain-core (`pip install langchain-core`) when it is imported; flowmem
itself never imports it. It calls only the dict-level forms a Memory and a Client share.

FlowmemRetriever: a query is one Search (integrations/calls.py); each item becomes a Document
whose page_content is the item's content and whose metadata is its provenance (id, score,
created_at, session_id, source_message_ids, view, role, the search's "evidence" grade: strong,
weak or none, the same on every Document of one call, and the item's own metadata under
"metadata"). `filters` (session_id, since, until, role, metadata) narrow every search, and
`retriever.invoke(query, filters=..., top_k=...)` replaces them for one call.

FlowmemChatMessageHistory: the messages of one (user_id, session_id) in their stored order,
read back page by page, roles "user", "assistant" and "system" as Human, AI and System
messages (any other role as a ChatMessage of that role); add_messages() writes one Add;
clear() deletes the session. flowmem stores text: a message with no text in it (an AI
message that only calls tools, an image) is not stored. Each Add's request_id is derived
from the user, the session, the id of the session's last stored message and the messages
themselves: the same call on the same history is the same Add (a retry of one that never
arrived stores it once), while the same words said again later are a new Add, as a chat
needs ("ok" twice is two messages). A retry after an Add that was stored but whose answer
was lost sees a new last message and stores the messages a second time; and words re-added
right after the session's last message was deleted are taken for that earlier Add and
stored nothing (its `stored` says false).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .. import paging
from . import calls

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.documents import Document
    from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage
    from langchain_core.retrievers import BaseRetriever
except ImportError as e:
    raise calls.missing(__name__, "langchain_core", "langchain-core") from e

__all__ = ["FlowmemChatMessageHistory", "FlowmemRetriever"]


class FlowmemRetriever(BaseRetriever):
    """A flowmem memory as a LangChain retriever: `invoke(query)` -> Documents, best first."""

    memory: Any
    user_id: str
    top_k: int = 10
    filters: Optional[Dict[str, Any]] = None
    options: Optional[List[str]] = None

    def __init__(self, memory: Any, user_id: str, **fields: Any):
        """memory: a flowmem Memory or Client; user_id: whose memory is searched; fields: top_k (10),
        filters (the contract's: session_id, since, until, role, metadata), options, and LangChain's own."""
        super().__init__(memory=memory, user_id=user_id, **fields)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                filters: Optional[Mapping[str, Any]] = None,
                                top_k: Optional[int] = None) -> List[Document]:
        found = calls.found(self.memory, query, self.user_id, self.top_k if top_k is None else top_k,
                            self.filters if filters is None else filters, self.options)
        return [Document(page_content=item["content"], metadata=calls.provenance(item, found.evidence),
                         id=item["id"]) for item in found.items]


# A stored role as a LangChain message class; roles written for LangChain's own message kinds.
_MESSAGE_OF_ROLE = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}
_ROLE_OF_KIND = ((HumanMessage, "user"), (AIMessage, "assistant"), (SystemMessage, "system"))


class FlowmemChatMessageHistory(BaseChatMessageHistory):
    """One session of a user's flowmem memory as a LangChain chat message history."""

    def __init__(self, memory: Any, user_id: str, session_id: str, metadata: Optional[Mapping[str, Any]] = None,
                 page_size: int = 100):
        """memory: a flowmem Memory or Client; user_id, session_id: the session read and written;
        metadata: stored with every message this history adds (flowmem's rules: a small flat JSON
        object); page_size: messages read per listing call."""
        self.memory = memory
        self.user_id = user_id
        self.session_id = session_id
        self.metadata = dict(metadata) if metadata else None
        self.page_size = page_size

    @property
    def messages(self) -> List[BaseMessage]:
        """The session's messages, oldest first, each with its flowmem message id as its id."""
        listed = paging.walk(lambda cursor: self.memory.list_messages(
            self.user_id, session_id=self.session_id, limit=self.page_size, cursor=cursor))
        return [langchain_message(message) for message in listed]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store `messages` (those with text) as one Add, after the session's last message."""
        stored = [m for m in (flowmem_message(message) for message in messages) if m is not None]
        if not stored:
            return
        last = self.memory.list_messages(self.user_id, session_id=self.session_id, limit=1, order="desc")["data"]
        body: Dict[str, Any] = {"user_id": self.user_id, "session_id": self.session_id, "messages": stored}
        if self.metadata:
            body["metadata"] = self.metadata
        body["request_id"] = request_id(body, last[0]["id"] if last else None)
        self.memory.add(body)

    def clear(self) -> None:
        """Delete the session from the memory, as completely as flowmem deletes a session."""
        self.memory.delete_session(self.user_id, self.session_id)


def langchain_message(message: Mapping[str, Any]) -> BaseMessage:
    """A listed flowmem message as the LangChain message of its role."""
    kind = _MESSAGE_OF_ROLE.get(message["role"])
    if kind is None:
        return ChatMessage(content=message["content"], role=message["role"], id=message["id"])
    return kind(content=message["content"], id=message["id"])


def flowmem_message(message: BaseMessage) -> Optional[Dict[str, Any]]:
    """A LangChain message as an Add's message, or None if it has no text to store."""
    content = message.content
    if isinstance(content, str):
        text = content
    else:  # content blocks: their text, as LangChain's own `text` joins it
        text = "".join(block if isinstance(block, str) else str(block.get("text", "")) for block in content
                       if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text"))
    if not text.strip():
        return None
    role = next((name for kind, name in _ROLE_OF_KIND if isinstance(message, kind)), None)
    if role is None:
        role = message.role if isinstance(message, ChatMessage) else message.type
    return {"role": role, "content": text}


def request_id(body: Mapping[str, Any], after: Optional[str]) -> str:
    """The request_id of an Add `body` (without one) written after the message `after` (None: first)."""
    key = json.dumps([body["user_id"], body["session_id"], after, body.get("metadata"), body["messages"]],
                     ensure_ascii=False, sort_keys=True)
    return "langchain-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]
