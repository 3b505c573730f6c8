"""The meaning channel alone, per word-vector table: each question's messages ranked by its cosine only.

    python -m tools.build_meaning.channel LOCOMO_DEV.json TABLE [TABLE ...]

Build time (numpy, as in the build's virtualenv). For LoCoMo development and the natural
lives of the tuning half (tools/evalkit/natural.py; never the report half), every message
of a conversation is given its vector as flowmem makes it (text/meaning.py, the speaker
label out) and each question its idf-weighted vector; the messages are ranked by cosine,
and the counts of questions with an evidence message in the first 1, 3 and 10 printed, one
JSON line per table. docs/meaning.md has the figures.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from flowmem.retrieval import bm25
from flowmem.text import meaning
from flowmem.text.tokenize import query_terms, split_speaker
from tools.evalkit import natural
from tools.evalkit.dataset import Dataset, load_locomo

Rank = Tuple[str, str, Optional[int]]  # question id, category, rank of its first evidence message


def ranks(dataset: Dataset) -> List[Rank]:
    """Every question's first evidence rank by the channel's cosine alone (None: the question has no vector)."""
    import numpy as np

    out: List[Rank] = []
    for c in dataset.conversations:
        turns = [t for s in c.sessions for t in s.turns]
        stems = [meaning.text_stems(split_speaker(t.content)[1]) for t in turns]
        vectors = [meaning.mean_vector(s) for s in stems]
        held = np.array([v is not None for v in vectors])
        matrix = np.array([v if v is not None else [0] * meaning.table().dims for v in vectors], dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1)
        norms[norms == 0] = 1
        df: Dict[str, int] = {}
        for s in stems:
            for w in set(s):
                df[w] = df.get(w, 0) + 1
        ids = [t.turn_id for t in turns]
        for q in c.questions:
            words = meaning.content_words(query_terms(q.question))
            idf = {w: bm25.idf(len(turns), df.get(w, 0)) for w in words}
            most = max(idf.values(), default=0.0)
            vector = meaning.mean_vector(words, [max(1, round(8 * idf[w] / most)) if most else 1 for w in words])
            if vector is None:
                out.append((q.qid, q.category, None))
                continue
            score = np.where(held, matrix @ np.array(vector, dtype=np.float64) / norms, -1e9)
            order = sorted(range(len(turns)), key=lambda i: (-score[i], i))
            gold = set(q.gold)
            out.append((q.qid, q.category, next(r for r, i in enumerate(order, 1) if ids[i] in gold)))
    return out


def counts(found: List[Rank]) -> Dict[str, Any]:
    return dict({"n": len(found)}, **{"@%d" % k: sum(1 for _, _, r in found if r is not None and r <= k)
                                      for k in (1, 3, 10)})


def main(argv: List[str]) -> int:
    if len(argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    locomo, tune = load_locomo(argv[0]), natural.load("tune")[0]
    for path in argv[1:]:
        meaning._table = meaning.read_table(path)  # the table asked for, in place of the shipped one
        row = {"table": os.path.basename(path), "locomo": counts(ranks(locomo)), "natural": counts(ranks(tune))}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
