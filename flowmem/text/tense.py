"""The tense of the words around a date expression: past, future (a plan), or unknown.

`tense(text, start, end)` reads the clause holding text[start:end]: from the last sentence
mark (". ", "! ", "? ", "; " or a line break) before it to the first after it, at most WINDOW
words on either side, the expression's own words left out. Each word may be a cue:

- past: was, were, did, had and their negations; been, gotten, already, yesterday, ago; an
  irregular past form (went, came, saw, met, told, said, got, ...: _PAST); a word of four
  letters or more ending in -ed (proposed, visited) that is not a known non-verb or feeling
  (need, hundred, excited, tired: _NOT_PAST) and does not follow a present "be" ("we're
  booked": a state, not a past event); could / would / should / might / must followed by
  have ("could've");
- future, a plan: will, 'll, shall, won't, gonna, wanna, gotta, plan(s / ning), hope, hoping,
  want(s), need(s), next, tomorrow, soon, upcoming, coming; going (not after was / were);
  can / could / would / should / might / may / must (not followed by have); "have / has to";
  "can't wait", "looking forward", "see you", "let's", "I'd love / like"; booked, scheduled,
  planned or set followed by "for" or after a present "be"; a present "be" (am, is, are, I'm,
  we're, it's, Tom's ...) followed by an -ing word or "off" ("we're off to", "I'm seeing him");
  a present "be" before the expression with only on / at / for / the / this / due / by / until
  between ("the gig is 21 nov", "the party is on friday": a scheduled event), unless its
  subject is "it" or "today" ("it's friday", "today is saturday" name the day it is);
- habitual: usually, always, often, every, each, normally, sometimes, typically, generally,
  rarely, never: the clause names no one day ("we always went on sunday") and is UNKNOWN
  whatever else it says.

The cue nearest the expression (counted in words, on either side) decides; cues of both
tenses equally near, or none at all, give UNKNOWN. Deterministic, and a few dictionary
look-ups per word: it runs only on the few expressions that need it (dayforms.py).
"""
from __future__ import annotations

import re
from typing import List, Optional, Set, Tuple

PAST, FUTURE, UNKNOWN = "past", "future", ""
WINDOW = 12  # words read on either side of the expression, at most
_CHARS = 200  # characters looked at on either side for them

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n")

_PAST = frozenset((
    "was", "were", "did", "had", "didn't", "wasn't", "weren't", "hadn't", "been", "gotten", "already", "yesterday",
    "ago", "went", "came", "saw", "met", "told", "said", "made", "took", "gave", "found", "left", "felt", "thought",
    "bought", "brought", "ran", "won", "lost", "ate", "drank", "spent", "sent", "began", "became", "kept", "heard",
    "knew", "wrote", "drove", "flew", "swam", "sang", "sat", "stood", "wore", "threw", "caught", "taught", "fought",
    "held", "built", "paid", "sold", "slept", "woke", "broke", "chose", "spoke", "forgot", "fell", "rode", "got",
    "grew", "drew", "hung", "meant", "understood", "shook", "stole", "hid", "dug", "lit", "led", "fed", "sought",
    "wound", "froze", "tore", "blew", "bit", "slid", "swore", "dreamt", "learnt", "burnt", "spun", "sank"))
_FUTURE = frozenset((
    "will", "shall", "won't", "gonna", "wanna", "gotta", "plan", "plans", "planning", "hope", "hoping", "want",
    "wants", "need", "needs", "next", "tomorrow", "soon", "upcoming", "coming", "let's"))
_MODALS = frozenset(("can", "could", "would", "should", "might", "may", "must"))
_HABITUAL = frozenset(("usually", "always", "often", "every", "each", "normally", "sometimes", "typically",
                       "generally", "rarely", "never"))
_BE = frozenset(("am", "is", "are", "isn't", "aren't"))
_BOOKED = frozenset(("booked", "scheduled", "planned", "set"))
_NOT_PAST = frozenset((  # -ed words that are no past event: nouns, adjectives, feelings
    "need", "feed", "seed", "speed", "breed", "bleed", "greed", "weed", "reed", "deed", "indeed", "shed", "sled",
    "hundred", "kindred", "sacred", "naked", "wicked", "rugged", "ragged", "beloved", "aged", "bred", "embed",
    "excited", "thrilled", "tired", "interested", "worried", "scared", "pleased", "stoked", "pumped", "psyched",
    "bored", "stressed", "relaxed", "surprised", "amazed", "delighted", "blessed", "obsessed", "exhausted",
    "overwhelmed", "prepared", "supposed", "used", "planned", "booked", "scheduled"))
_ADVERBS = frozenset(("so", "really", "very", "super", "just", "also", "still", "finally", "actually", "all",
                      "totally", "now", "pretty", "quite", "kinda", "definitely", "not", "already"))
_BEFORE_EXPRESSION = frozenset(("on", "at", "for", "the", "this", "due", "by", "until", "till"))
_NAMES_TODAY = frozenset(("it", "today", "it's", "today's", "its"))


def _words(text: str) -> List[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def _clause(text: str, start: int, end: int) -> Tuple[List[str], List[str]]:
    """The words of the clause before and after text[start:end], at most WINDOW each."""
    before = text[max(0, start - _CHARS): start]
    ends = [m.end() for m in _SENTENCE_END.finditer(before)]
    if ends:
        before = before[ends[-1]:]
    after = text[end: end + _CHARS]
    stop = _SENTENCE_END.search(after)
    if stop:
        after = after[: stop.start()]
    return _words(before)[-WINDOW:], _words(after)[:WINDOW]


def _is_be(word: str) -> bool:
    """A present "be": am / is / are, or a contraction of it (I'm, we're, it's, Tom's)."""
    return word in _BE or word.endswith(("'m", "'re", "'s"))


def _after_be(words: List[str], i: int) -> bool:
    """Whether words[i] follows a present "be", perhaps past an adverb ("we're so booked")."""
    j = i - 1
    if j >= 0 and words[j] in _ADVERBS:
        j -= 1
    return j >= 0 and _is_be(words[j])


def _be_cue(words: List[str], i: int, here: int) -> Optional[str]:
    """A present "be": FUTURE before a progressive or "off", or right before the expression."""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    if nxt in _ADVERBS and i + 2 < len(words):
        nxt = words[i + 2]
    if nxt == "off" or (len(nxt) > 4 and nxt.endswith("ing")):
        return FUTURE
    names_today = words[i] in _NAMES_TODAY or (i > 0 and words[i - 1] in _NAMES_TODAY)
    if i < here and not names_today and all(w in _BEFORE_EXPRESSION for w in words[i + 1: here]):
        return FUTURE
    return None


def _cue(words: List[str], i: int, here: int) -> Optional[str]:
    """The tense words[i] marks (`here`: the expression's place in `words`), or None."""
    w = words[i]
    prev = words[i - 1] if i > 0 else ""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    if w in _FUTURE or w.endswith("'ll"):
        return FUTURE
    if w in _MODALS:
        return PAST if nxt in ("have", "'ve") else FUTURE
    if w.endswith("'ve") and w[:-3] in _MODALS:
        return PAST
    if w == "going":
        return None if prev in ("was", "were") else FUTURE
    if (w == "wait" and prev in ("can't", "cant", "cannot")) or (w == "forward" and prev == "looking"):
        return FUTURE
    if (w == "see" and nxt in ("you", "ya", "u")) or (w in ("have", "has") and nxt == "to"):
        return FUTURE
    if w.endswith("'d") and nxt in ("love", "like", "rather"):
        return FUTURE
    if w in _BOOKED and (nxt == "for" or _after_be(words, i)):
        return FUTURE
    if _is_be(w):
        return _be_cue(words, i, here)
    if w in _PAST:
        return None if w == "got" and (prev in ("have", "has") or prev.endswith("'ve")) else PAST
    if len(w) >= 4 and w.endswith("ed") and w not in _NOT_PAST and not _after_be(words, i):
        return PAST
    return None


def tense(text: str, start: int, end: int) -> str:
    """PAST, FUTURE or UNKNOWN: what the clause around text[start:end] says of when it is (module docstring)."""
    before, after = _clause(text, start, end)
    if any(w in _HABITUAL for w in before) or any(w in _HABITUAL for w in after):
        return UNKNOWN
    words = before + [""] + after  # "" holds the expression's place
    here = len(before)
    nearest: Optional[int] = None
    found: Set[str] = set()
    for i in range(len(words)):
        if i == here:
            continue
        cue = _cue(words, i, here)
        if cue is None:
            continue
        distance = abs(i - here)
        if nearest is None or distance < nearest:
            nearest, found = distance, {cue}
        elif distance == nearest:
            found.add(cue)
    return found.pop() if len(found) == 1 else UNKNOWN
