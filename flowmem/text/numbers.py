"""The numbers a text states, whatever their form: "3", "three", "3rd", "third", "a dozen", "5km", 十二, 两.

number_values() reads index tokens (tokenize.py: stemmed or not) and gives each number
they state as one canonical string ("1400", "3.5", "12"), so a question and a message
meet on a number however either writes it. The tokenizer has already dropped
thousands separators ("1,400" is the token "1400"). A unit written with the number
("5km", "20kg", "10k") keeps the number; a unit written apart ("5 km", "$20") is a
word of its own and the number token stands alone, so both meet "5" and "20".

English tens and units written apart ("twenty-five", "twenty five") make one number.
Chinese numerals are read from the tokens made only of numeral characters (single
characters and bigrams: 十二 is 12), which covers the numbers people say in passing.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence

from .stem import stem

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth"]
_OTHERS = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 1000000, "twentieth": 20, "thirtieth": 30,
           "hundredth": 100}
# "one", "first" and "second" say a number too rarely ("one of them", "a second look"): left out.
_TOO_COMMON = {"one", "first", "second"}


def _word_table() -> Dict[str, int]:
    """Number words by surface form and by Porter stem, so stemmed and unstemmed tokens both read."""
    words: Dict[str, int] = {}
    for value, word in enumerate(_UNITS):
        words[word] = value
    for value, word in enumerate(_ORDINALS):
        words[word] = value
    words.update(_TENS)
    words.update(_OTHERS)
    table = {w: v for w, v in words.items() if w not in _TOO_COMMON}
    table.update({stem(w): v for w, v in list(table.items())})
    return table


_WORDS = _word_table()
_TENS_STEMS = {stem(w) for w in _TENS} | set(_TENS)
_DIGITS = re.compile(r"(\d+(?:\.\d+)?)(?:st|nd|rd|th|[a-z]{1,3})?")
_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_CN_NUMERALS = frozenset(_CN_DIGITS) | frozenset(_CN_UNITS)
MAX_NUMBERS = 64  # numbers read from one text, at most


def _canonical(text: str) -> str:
    """"007" -> "7", "3.50" -> "3.5": one spelling per value."""
    if "." in text:
        whole, fraction = text.split(".", 1)
        fraction = fraction.rstrip("0")
        return (whole.lstrip("0") or "0") + ("." + fraction if fraction else "")
    return text.lstrip("0") or "0"


def chinese_value(token: str) -> Optional[int]:
    """The value of a token made only of Chinese numerals (三 3, 十二 12, 二十 20, 两 2), else None."""
    if not token or any(ch not in _CN_DIGITS and ch not in _CN_UNITS for ch in token):
        return None
    total, digit = 0, None
    for ch in token:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        else:
            total += (1 if digit is None else digit) * _CN_UNITS[ch]
            digit = None
    return total + (digit or 0)


def _value(token: str) -> Optional[str]:
    match = _DIGITS.fullmatch(token)
    if match:
        return _canonical(match.group(1))
    if token in _WORDS:
        return str(_WORDS[token])
    if not token or token[0] not in _CN_NUMERALS:
        return None  # the common case, decided without reading the whole token (chinese_value())
    cn = chinese_value(token)
    return None if cn is None else str(cn)


def _inside_chinese_number(tokens: Sequence[str], i: int) -> bool:
    """Whether tokens[i] is one character of a longer Chinese numeral (十 and 二 of 十, 十二, 二)."""
    if len(tokens[i]) != 1 or tokens[i] not in _CN_DIGITS and tokens[i] not in _CN_UNITS:
        return False
    return any(0 <= j < len(tokens) and len(tokens[j]) == 2 and chinese_value(tokens[j]) is not None
               for j in (i - 1, i + 1))


def number_values(tokens: Sequence[str]) -> List[str]:
    """The canonical value of every number the tokens state, in order, repeats kept (at most MAX_NUMBERS)."""
    out: List[str] = []
    skip = False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        value = _value(token)
        if value is None or _inside_chinese_number(tokens, i):
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token in _TENS_STEMS and following in _WORDS and 0 < _WORDS[following] < 10:
            value, skip = str(int(value) + _WORDS[following]), True  # "twenty five"
        out.append(value)
        if len(out) == MAX_NUMBERS:
            break
    return out
