"""Turn text into index tokens, the same way for stored messages and for questions.

Tokens are case-folded, NFKC-normalised words. Latin, Greek and Cyrillic lose their
diacritics (so "café" meets "cafe"), while scripts whose marks carry meaning
(Devanagari vowel signs, for instance) keep them. Scripts written without spaces
(Han, kana, Hangul, Thai and neighbours) become single characters plus overlapping
bigrams, so a two-character word in a question meets the same two characters in a
message without a dictionary.

English words are then reduced to their Porter stem (stem.py), in stored text and in
questions alike, so "painted" meets "paint".

A token never contains anything but letters, digits, combining marks and a decimal
point between digits; that is what lets the FTS layer quote tokens without escaping.

Messages usually begin with a speaker label ("Dana: ..."). `split_speaker` takes
it off, so that the speaker's name is not indexed as if it were said in every one of
their messages; search treats the speaker as a signal of its own.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable, List, Tuple

from .stem import stem

# Tokens longer than this are cut: nothing useful is that long, and FTS5 has a limit.
MAX_TOKEN_CHARS = 64

# Words of the question itself ("what did ... do") that say nothing about the
# evidence. They are removed from queries only; stored text keeps every word.
QUESTION_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me might more most must my myself no nor not
    now of off on once only or other our ours ourselves out over own same shall she
    should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which
    while who whom whose why will with would you your yours yourself yourselves
    ever much many s t also yet still would've
    什么 吗 呢 的 了 是 在 有 和 哪 哪里 哪个 谁 怎么 为什么 吧 啊 么 个
    """.split()
)

# The same words as index tokens (stemmed), for filtering stored text.
STEMMED_STOPWORDS = frozenset(stem(w) for w in QUESTION_STOPWORDS)

_ASCII_TOKEN = re.compile(r"\d+(?:\.\d+)+|[a-z0-9]+")
# Each starts with the character it removes and only then looks behind it (`'(?<=\w')`, not
# `(?<=\w)'`): the same matches, but the regex engine can skip ahead to that character
# instead of trying the look-behind at every position, which made these three a third of
# the time spent tokenising a conversation turn.
_POSSESSIVE = re.compile(r"['\u2019](?<=\w['\u2019])s\b")
_INNER_APOSTROPHE = re.compile(r"['\u2019](?<=\w['\u2019])(?=\w)")
_THOUSANDS = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")


def _is_spaceless(ch: str) -> bool:
    """Scripts written without spaces between words: tokenised as characters and bigrams."""
    cp = ord(ch)
    return (
        0x3040 <= cp <= 0x30FF  # hiragana, katakana
        or 0x3400 <= cp <= 0x4DBF  # CJK extension A
        or 0x4E00 <= cp <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= cp <= 0xFAFF  # CJK compatibility ideographs
        or 0x20000 <= cp <= 0x3134F  # CJK extensions B..G
        or 0x1100 <= cp <= 0x11FF  # Hangul jamo
        or 0xAC00 <= cp <= 0xD7AF  # Hangul syllables
        or 0x31F0 <= cp <= 0x31FF  # katakana phonetic extensions
        or 0x0E00 <= cp <= 0x0EFF  # Thai, Lao
        or 0x1000 <= cp <= 0x109F  # Myanmar
        or 0x1780 <= cp <= 0x17FF  # Khmer
    )


def _strips_marks(base: str) -> bool:
    """Diacritics are noise on Latin, Greek and Cyrillic letters, meaning elsewhere."""
    cp = ord(base)
    return cp < 0x0530 or 0x1E00 <= cp <= 0x1FFF


def normalize(text: str) -> str:
    """Case-fold and normalise `text` the way every token is normalised."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    kept = []
    base = ""
    for ch in decomposed:
        if unicodedata.combining(ch):
            if base and _strips_marks(base):
                continue
        else:
            base = ch
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))


def _clusters(run: str) -> List[str]:
    """Split a run into base characters, each with its following combining marks."""
    out: List[str] = []
    for ch in run:
        if out and _is_mark(ch):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _spaceless_tokens(run: str) -> List[str]:
    chars = _clusters(run)
    out: List[str] = []
    for i, ch in enumerate(chars):
        out.append(ch)
        if i + 1 < len(chars):
            out.append(ch + chars[i + 1])
    return out


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "M"


def _word_tokens(text: str) -> List[str]:
    """Tokens of already-normalised non-ASCII text, scanned character by character."""
    out: List[str] = []
    word: List[str] = []
    spaceless: List[str] = []

    def flush_word() -> None:
        if word:
            joined = "".join(word)
            # ASCII words go through the same pattern as all-ASCII text, so a word
            # tokenises the same whatever text surrounds it.
            out.extend(_ASCII_TOKEN.findall(joined) if joined.isascii() else [joined])
            word.clear()

    def flush_spaceless() -> None:
        if spaceless:
            out.extend(_spaceless_tokens("".join(spaceless)))
            spaceless.clear()

    last = len(text) - 1
    for i, ch in enumerate(text):
        if _is_spaceless(ch) or (spaceless and _is_mark(ch)):
            flush_word()
            spaceless.append(ch)
        elif ch.isalnum() or (word and _is_mark(ch)) or (
            ch == "." and word and word[-1].isdigit() and i < last and text[i + 1].isdigit()
        ):
            flush_spaceless()
            word.append(ch)
        else:
            flush_spaceless()
            flush_word()
    flush_spaceless()
    flush_word()
    return out


def words(text: str) -> List[str]:
    """The normalised words of `text`, in order, repeats kept (not stemmed)."""
    text = normalize(text)
    text = _POSSESSIVE.sub("", text)
    text = _INNER_APOSTROPHE.sub("", text)
    text = _THOUSANDS.sub("", text)
    raw = _ASCII_TOKEN.findall(text) if text.isascii() else _word_tokens(text)
    if max(map(len, raw), default=0) <= MAX_TOKEN_CHARS:  # the usual case: no token to cut, no copy
        return raw
    return [t[:MAX_TOKEN_CHARS] for t in raw]


def tokenize(text: str, stemmed: bool = True) -> List[str]:
    """The index tokens of `text`: its words, stemmed (unless not `stemmed`), in order, repeats kept."""
    if len(text) <= _SHORT_CHARS:
        return list(_short_tokens(text, stemmed))
    return list(map(stem, words(text))) if stemmed else words(text)


# Short texts recur: a speaker's label is tokenised with each of their messages, and "Yes!"
# or "Haha" are said again and again. Their tokens are kept rather than made anew each time.
_SHORT_CHARS = 64


@lru_cache(maxsize=4096)
def _short_tokens(text: str, stemmed: bool) -> Tuple[str, ...]:
    return tuple(map(stem, words(text))) if stemmed else tuple(words(text))


# A label is one to five words ("Dr. Mary-Jane O'Neil") starting with a letter, then ": " (or a full-width colon).
_SPEAKER = re.compile(r"^\s*([^\W\d_][^\W_]*(?:[ .'\-]+[^\W_]+){0,4})\s*(?::\s|\uff1a)")


def split_speaker(content: str) -> Tuple[str, str]:
    """("Dana", "I went ...") for "Dana: I went ..."; ("", content) without a label."""
    match = _SPEAKER.match(content)
    if not match:
        return "", content
    return match.group(1), content[match.end():]


def unique(tokens: Iterable[str]) -> List[str]:
    """Tokens without repeats, in order of first appearance."""
    seen = set()
    out = []
    for t in tokens:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def query_terms(question: str, stemmed: bool = True) -> List[str]:
    """Distinct search terms of a question: its stemmed words minus question stopwords.

    A question made only of stopwords ("what is it?") keeps them, so it can still
    match something rather than nothing.
    """
    surface = unique(words(question))
    content = [w for w in surface if w not in QUESTION_STOPWORDS] or surface
    return unique(stem(w) for w in content) if stemmed else content
