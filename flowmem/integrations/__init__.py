"""Optional adapters that let agent frameworks use a flowmem memory: nothing here is imported by flowmem.

- flowmem.integrations.langchain: FlowmemRetriever (a LangChain retriever: a query to Documents)
  and FlowmemChatMessageHistory (one session as a LangChain chat message history);
- flowmem.integrations.llamaindex: FlowmemRetriever (a LlamaIndex retriever: a query to scored nodes);
- flowmem.integrations.calls: what both share (the Search they send, an item's provenance).

Each adapter module imports its framework when it is itself imported, and only then: flowmem
runs on the standard library alone, and `import flowmem` (or any of its other modules) never
loads a framework. Importing an adapter without its framework installed raises an ImportError
that names the package to install (`pip install langchain-core`, `pip install llama-index-core`).

Every adapter takes `memory`: a flowmem Memory (a database file in this process) or a Client (a
flowmem server), and calls only the dict-level forms both have, the contract's own bodies
(`search({...})`, `add({...})`) and the listing and delete calls, so one adapter serves both.
"""
