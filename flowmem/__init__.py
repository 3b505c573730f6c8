"""flowmem: long-term memory for AI agents on SQLite FTS5, standard library only.

`flowmem.Memory` (a memory on a database file), `flowmem.Client` (a flowmem server,
called as a Memory is) and `flowmem.AsyncClient` (the same over asyncio) are imported
when first named (PEP 562), not with the package:
every module imports this package for its version, so importing them here would make
the lowest layers load the whole service (and import it in a cycle), and a program that
needs only one of them would pay for both.
"""

__version__ = "0.1.0"

__all__ = ["AsyncClient", "Client", "Memory", "__version__"]

# name -> module that defines it, loaded on first use
_LAZY = {"Memory": "flowmem.memory", "Client": "flowmem.client", "AsyncClient": "flowmem.async_client"}


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups find it without coming here
        return value
    raise AttributeError("module 'flowmem' has no attribute %r" % name)


def __dir__():  # type: ignore[no-untyped-def]
    return sorted(list(globals()) + list(_LAZY))
