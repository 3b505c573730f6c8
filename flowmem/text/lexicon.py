"""Words related in meaning, in index-term space: the vocabulary bridges of search.

A question says "wedding" where the memory says "married", "bicycle" where it says
"bike". data/lexicon.tsv.gz maps each index term (a Porter stem, as tokenize.py makes
them) to related terms, each with a strength, 0 to 1 (how surely the relation and the
sense that make it say the same thing); it is derived from
Princeton WordNet 3.0 (data/WORDNET-LICENSE) by tools/build_lexicon.py, which documents
the relations (synonyms, derivations, pertainyms, similar adjectives, and the rarer
words of a sense's definition: "hometown" -> "grew") and the command that regenerates it.

The file (1.6 MB, 59,000 terms) is read once, on first use, under a lock, and kept
(about 12 MB of memory by tracemalloc, read in about 70 ms). related() answers from
that table alone, so it is deterministic.
"""
from __future__ import annotations

import gzip
import os
import threading
from functools import lru_cache
from typing import Dict, Optional, Tuple

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "lexicon.tsv.gz")

Related = Tuple[Tuple[str, float], ...]

_lock = threading.Lock()
_table: Optional[Dict[str, str]] = None


def _load() -> Dict[str, str]:
    """term -> the rest of its line, read once; lines are parsed when asked for."""
    global _table
    with _lock:
        if _table is None:
            table = {}
            with gzip.open(PATH, "rt", encoding="utf-8") as f:
                for line in f:
                    if not line.startswith("#"):
                        term, _, rest = line.rstrip("\n").partition("\t")
                        table[term] = rest
            _table = table
        return _table


@lru_cache(maxsize=8192)  # a question's terms recur across searches; each entry is a short tuple
def related(term: str) -> Related:
    """The terms related to `term`, strongest first (file order), each with its strength, 0 to 1."""
    table = _table if _table is not None else _load()
    line = table.get(term)
    if not line:
        return ()
    out = []
    for entry in line.split(" "):
        other, _, ninths = entry.rpartition(":")
        out.append((other, int(ninths) / 9.0))
    return tuple(out)


def size() -> int:
    """The number of terms the lexicon relates to others."""
    return len(_load())
