"""Which retrieval views a session has: pure functions over message positions and times.

A view is a contiguous run of one session's messages, named by its kind and its first
and last position (1-based, inclusive):

- `message`: one message;
- `window`: `window_size` consecutive messages, every start position (stride 1); a
  session shorter than that gets one window of all its messages;
- `segment`: the session cut greedily into pieces of at most `segment_max_messages`,
  a new piece also starting wherever consecutive timestamps are more than
  `segment_max_gap_s` apart.

Views never cross a session. When two kinds would cover exactly the same messages,
only the first of message, window, segment exists, so no view repeats another.

A session's turns (turn_spans()) are not views: a turn is a run of one speaker's
consecutive messages, as typed chat sends a thought in a burst of short messages. Search
reads them from the session cache to find a question's reply and a message's neighbours
(retrieval/signals.py); views stay runs of messages, windows of turns having measured
worse on typed chat (docs/typed_chat.md).

Sessions arrive in pieces (the platform sends at most 20 messages per Add), so the
planner works on a session's tail: everything before the start of the last segment is
final, and `plan_tail` returns the windows and segments that end at or after it. A
session added in any number of pieces ends with the same views as one added whole.

Forgetting a message (plan_removal()) changes few views: the later messages move up a
position and keep their views, moved up with them, but for the windows that held the
message and the segments around it. Segments are cut greedily from a boundary, so the
segments are planned again from the boundary before the message until the old and new
plans cut at the same message, from where on they are the old ones moved up (where no pause
cuts them, that is the session's end).
"""
from __future__ import annotations

from typing import Hashable, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

# The view kinds: the one place they are spelled. Storage, the index layout (fts.py) and
# retrieval all name a kind through these constants.
MESSAGE, WINDOW, SEGMENT = "message", "window", "segment"
KINDS = (MESSAGE, WINDOW, SEGMENT)  # in this order wherever kinds are listed or sorted


# A turn (turn_spans()) ends at a pause of over TURN_GAP_MS, or at TURN_MAX_MESSAGES messages. Both
# measured flat on the chat-style evaluations (docs/typed_chat.md), so neither is a setting.
TURN_GAP_MS = 600_000
TURN_MAX_MESSAGES = 8


class Span(NamedTuple):
    kind: str
    first: int
    last: int


def window_spans(n: int, size: int, min_last: int = 1) -> List[Span]:
    """Windows of a session of `n` messages that end at or after `min_last`."""
    if n < 2 or size < 2:
        return []
    if n < size:
        spans = [(1, n)]
    else:
        spans = [(i, i + size - 1) for i in range(max(1, min_last - size + 1), n - size + 2)]
    return [Span(WINDOW, a, b) for a, b in spans if b >= min_last]


def segment_spans(
    times: Mapping[int, Optional[int]], start: int, n: int, max_messages: int, max_gap_ms: int
) -> List[Span]:
    """Segments from `start` (a known segment boundary) to message `n`, cut greedily.

    `times` maps positions from `start` to `n` to Unix ms timestamps (None when unknown);
    a gap is only measured between two known timestamps.
    """
    spans = []
    first = start
    for seq in range(start + 1, n + 1):
        before, now = times.get(seq - 1), times.get(seq)
        gap = before is not None and now is not None and now - before > max_gap_ms
        if seq - first >= max_messages or gap:
            spans.append(Span(SEGMENT, first, seq - 1))
            first = seq
    if n >= start:
        spans.append(Span(SEGMENT, first, n))
    return spans


def plan_tail(
    times: Mapping[int, Optional[int]],
    n: int,
    segment_start: int,
    window_size: int,
    segment_max_messages: int,
    segment_max_gap_ms: int,
) -> Tuple[List[Span], int]:
    """Windows and segments of an `n`-message session that end at or after `segment_start`.

    `segment_start` is where the session's last segment began before this Add (1 for
    a new session); `times` must cover positions from `segment_start` to `n`. Returns
    the spans and the start of the new last segment, to be remembered for the next Add.
    """
    windows = window_spans(n, window_size, segment_start)
    segments = segment_spans(times, segment_start, n, segment_max_messages, segment_max_gap_ms)
    window_ranges = {(w.first, w.last) for w in windows}
    kept = list(windows)
    for s in segments:
        if s.first != s.last and (s.first, s.last) not in window_ranges:
            kept.append(s)
    new_start = segments[-1].first if segments else segment_start
    return kept, new_start


def is_window(n: int, size: int, first: int, last: int) -> bool:
    """Whether messages `first` to `last` of an `n`-message session are one of its windows (window_spans())."""
    if n < 2 or size < 2:
        return False
    if n < size:
        return (first, last) == (1, n)
    return last - first + 1 == size and first >= 1 and last <= n


class Removal(NamedTuple):
    """The windows and segments that forgetting a message makes (plan_removal()), at the positions
    the session's messages take once it is gone."""

    windows: List[Span]  # the windows that hold its two neighbours (a short session's one window)
    segments: List[Span]  # those from `start` to old position `last` (less the one forgotten), as plan_tail keeps them
    last: int  # the old position up to which segments were planned again: later ones are the old ones, moved up
    segment_start: int  # the start of the session's last segment


def plan_removal(times: Iterable[Tuple[int, Optional[int]]], n: int, removed: int, start: int, segment_start: int,
                 window_size: int, segment_max_messages: int, segment_max_gap_ms: int) -> Removal:
    """What forgetting message `removed` of an `n`-message session makes of its windows and segments.

    `times` are (position, Unix ms or None) of the messages from `start` on, in order, read as
    far as needed: `start` is a boundary of the session's segments before `removed` (or 1), from
    where both the old and the new segments are cut greedily (segment_spans()) until both cut at
    the same message. `segment_start` is where the old last segment starts.
    """
    left = n - 1
    if left < window_size:
        windows = window_spans(left, window_size)
    else:
        windows = [w for w in window_spans(left, window_size, removed) if w.first < removed]
    raw: List[Span] = []
    old_first, new_first = start, 0  # the segment each plan is in (0: the new plan has no message yet)
    old_before: Optional[int] = None
    new_before: Optional[int] = None
    last, new_start = n, segment_start - 1
    size, gap = segment_max_messages, segment_max_gap_ms
    # A session left shorter than a window has one window of all its messages, which a segment
    # anywhere in it may now equal: its segments are all planned again.
    short = left < window_size
    for seq, now in times:
        old_cut = seq == start or seq - old_first >= size or _paused(old_before, now, gap)
        old_first, old_before = seq if old_cut else old_first, now
        if seq == removed:
            continue
        at = seq if seq < removed else seq - 1
        cut = not new_first or at - new_first >= size or _paused(new_before, now, gap)
        new_before = now
        if cut:
            if new_first:
                raw.append(Span(SEGMENT, new_first, at - 1))
            if old_cut and seq > removed and not short:  # both cut here: from here on the old ones, moved up
                last = seq - 1
                break
            new_first = at
    else:  # planned to the end: the last segment is a new one
        if new_first:
            raw.append(Span(SEGMENT, new_first, left))
        new_start = new_first or start
    kept = [s for s in raw if s.first != s.last and not is_window(left, window_size, s.first, s.last)]
    return Removal(windows, kept, last, new_start)


def turn_spans(speakers: Sequence[Hashable], times: Sequence[Optional[int]], max_gap_ms: int,
               max_messages: int) -> List[Tuple[int, int]]:
    """A session's turns: (first, last) positions of each run of consecutive messages of one speaker.

    `speakers[i]` and `times[i]` are message i+1's speaker (anything comparable: its role and
    label) and Unix ms time (None when unknown); a pause of more than `max_gap_ms` between two
    known times starts a new turn even for the same speaker, and so does a turn's
    `max_messages`-th message (notes sent one by one by one speaker are not one turn).
    """
    turns: List[Tuple[int, int]] = []
    for i, who in enumerate(speakers):
        if (i and who == speakers[i - 1] and not _paused(times[i - 1], times[i], max_gap_ms)
                and i + 1 - turns[-1][0] < max_messages):
            turns[-1] = (turns[-1][0], i + 1)
        else:
            turns.append((i + 1, i + 1))
    return turns


def _paused(before: Optional[int], now: Optional[int], max_gap_ms: int) -> bool:
    return before is not None and now is not None and now - before > max_gap_ms
