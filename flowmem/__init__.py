"""flowmem: long-term memory for AI agents on SQLite FTS5, standard library only."""

__version__ = "0.1.0"
