"""The storage layer: the SQLite file, what it holds and how it is written and read.

Schema and migrations, the index settings a database keeps, the Add write path and
views, read snapshots and the session cache, backup, and SQLite's errors as flowmem's.
It imports flowmem.text and flowmem.errors only: retrieval and the service read
through it, it knows nothing of them.
"""
