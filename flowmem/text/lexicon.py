"""Words related in meaning, in index-term space: the vocabulary bridges of search.

A question says "wedding" where the memory says "married", "bicycle" where it says
"bike". data/lexicon.tsv.gz maps each index term (a Porter stem, as tokenize.py makes
them) to related terms, each with a strength, 0 to 1 (how surely the relation and the
sense that make it say the same thing); it is derived from
Princeton WordNet 3.0 (data/WORDNET-LICENSE) by tools/build_lexicon.py, which documents
the relations (synonyms, derivations, pertainyms, similar adjectives, and the rarer
words of a sense's definition: "hometown" -> "grew") and the command that regenerates it.

Chinese has no stems and no spaces: data/lexicon-zh.tsv.gz maps simplified-Chinese
words of 2-4 characters to related words ("老板" -> "上司", both glossed "boss"), derived
from CC-CEDICT (CC BY-SA 4.0, data/CEDICT-LICENSE; the derived file is CC BY-SA 4.0 too)
by tools/build_zh_lexicon.py. A question holds no Chinese words as terms (tokenize.py
makes characters and bigrams), so retrieval/bridges.py finds them with is_chinese_word().

Each file is read once, on first use, under a lock, and kept (the English one: 1.6 MB,
59,000 terms, about 12 MB of memory by tracemalloc, read in about 70 ms). related() and
related_chinese() answer from those tables alone, so they are deterministic. A file is
read with pkgutil.get_data, not open(): that works too when flowmem runs from a zip
archive (`make pyz`), where the files are members of the archive, not paths.
"""
from __future__ import annotations

import gzip
import io
import os
import pkgutil
import threading
from functools import lru_cache
from typing import Dict, Optional, Tuple

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "lexicon.tsv.gz")
CHINESE_PATH = os.path.join(os.path.dirname(PATH), "lexicon-zh.tsv.gz")

Related = Tuple[Tuple[str, float], ...]

_lock = threading.Lock()
_tables: Dict[str, Dict[str, str]] = {}


def _load(path: str) -> Dict[str, str]:
    """word -> the rest of its line, read once; lines are parsed when asked for."""
    with _lock:
        if path not in _tables:
            table = {}
            data = pkgutil.get_data(__name__.rpartition(".")[0], "data/" + os.path.basename(path))
            if data is None:  # no loader that reads data: never for a directory or a zip
                raise FileNotFoundError(path)
            with gzip.open(io.BytesIO(data), "rt", encoding="utf-8") as f:
                for line in f:
                    if not line.startswith("#"):
                        term, _, rest = line.rstrip("\n").partition("\t")
                        table[term] = rest
            _tables[path] = table
        return _tables[path]


def _table(path: str) -> Dict[str, str]:
    table = _tables.get(path)
    return table if table is not None else _load(path)


def _parse(line: Optional[str]) -> Related:
    """A line's related words with their strengths, 0 to 1, in file order (strongest first)."""
    if not line:
        return ()
    out = []
    for entry in line.split(" "):
        other, _, ninths = entry.rpartition(":")
        out.append((other, int(ninths) / 9.0))
    return tuple(out)


@lru_cache(maxsize=8192)  # a question's terms recur across searches; each entry is a short tuple
def related(term: str) -> Related:
    """The terms related to `term`, strongest first (file order), each with its strength, 0 to 1."""
    return _parse(_table(PATH).get(term))


@lru_cache(maxsize=8192)
def related_chinese(word: str) -> Related:
    """The Chinese words related to the Chinese `word`, strongest first, each with its strength, 0 to 1."""
    return _parse(_table(CHINESE_PATH).get(word))


def is_chinese_word(text: str) -> bool:
    """Whether `text` is a Chinese word the lexicon relates to others."""
    return text in _table(CHINESE_PATH)


def size() -> int:
    """The number of terms the lexicon relates to others."""
    return len(_table(PATH))
