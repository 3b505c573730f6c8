"""The retrieval layer: from a question to ranked, provenance-carrying evidence items.

What a question asks, the candidate pool, one ranking per signal, their fusion, the
state-update rerank, which views fill the slots, and the items with their content
and ids. It reads the database through flowmem.storage and text through
flowmem.text, and imports nothing above it: not config, not the service.
"""
