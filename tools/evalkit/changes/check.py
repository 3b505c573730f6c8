"""Check one change life against BRIEF.md: python3 -m tools.evalkit.changes.check FILE.json

Prints a PROBLEM line for each thing the brief asks that the file does not do, then a
summary; exits 1 when there is a problem. The writers ran it on their own file (from the
repository root, as the brief said).
"""
from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any, Dict, List

from tools.evalkit.natural import paraphrased

KINDS = {"current": (18, 40), "past": (6, 12), "coexist": (2, 6), "absent": (2, 6)}


def problems(life: Dict[str, Any]) -> List[str]:
    out: List[str] = []
    stamps: Dict[str, datetime] = {}
    text: Dict[str, str] = {}
    last = None
    for s in life.get("sessions", []):
        for m in s.get("messages", []):
            when = datetime.fromisoformat(m["timestamp"].replace("Z", "+00:00"))
            if last is not None and when < last:
                out.append("message %s is earlier than the one before it" % m["id"])
            last = when
            if m["id"] in stamps:
                out.append("message id %s is used twice" % m["id"])
            if m.get("role") not in ("user", "assistant"):
                out.append("message %s: role must be user or assistant" % m["id"])
            stamps[m["id"]], text[m["id"]] = when, m["content"]
    if not 90 <= len(stamps) <= 170:
        out.append("%d messages: write 90 to 170" % len(stamps))
    kinds: Dict[str, int] = {}
    changes: Dict[str, Dict[str, int]] = {}
    for q in life.get("questions", []):
        kind = q.get("kind")
        kinds[kind] = kinds.get(kind, 0) + 1
        ids = list(q.get("evidence", [])) + list(q.get("stale", []))
        for i in ids:
            if i not in stamps:
                out.append("question %s names message %s, which does not exist" % (q["id"], i))
        if any(i not in stamps for i in ids):
            continue
        if kind == "absent":
            if q.get("evidence") or q.get("stale"):
                out.append("question %s is absent: evidence and stale must be []" % q["id"])
            continue
        if not q.get("evidence"):
            out.append("question %s has no evidence" % q["id"])
            continue
        if kind in ("current", "past"):
            if not q.get("stale") or not q.get("change"):
                out.append("question %s (%s) needs stale ids and a change name" % (q["id"], kind))
                continue
            newest_evidence = max(stamps[i] for i in q["evidence"])
            oldest_evidence = min(stamps[i] for i in q["evidence"])
            if kind == "current" and any(stamps[i] >= oldest_evidence for i in q["stale"]):
                out.append("question %s is current: every stale message must be older than its evidence" % q["id"])
            if kind == "past" and any(stamps[i] <= newest_evidence for i in q["stale"]):
                out.append("question %s is past: every stale message must be newer than its evidence" % q["id"])
            changes.setdefault(q["change"], {}).setdefault(kind, 0)
            changes[q["change"]][kind] += 1
        if kind == "coexist" and len({stamps[i].date() for i in q["evidence"]}) < 2:
            out.append("question %s is coexist: its evidence must be said on different days" % q["id"])
    for kind, (low, high) in KINDS.items():
        if not low <= kinds.get(kind, 0) <= high:
            out.append("%d %s questions: write %d to %d" % (kinds.get(kind, 0), kind, low, high))
    for name, counts in sorted(changes.items()):
        if counts.get("current", 0) < 3 or counts.get("past", 0) < 1:
            out.append("change %s: needs at least 3 current questions and 1 past question, has %s" % (name, counts))
    return out


def main(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        life = json.load(f)
    found = problems(life)
    for p in found:
        print("PROBLEM " + p)
    text = {m["id"]: m["content"] for s in life["sessions"] for m in s["messages"]}
    asked = [q for q in life["questions"] if q["kind"] in ("current", "past") and all(i in text for i in q["evidence"])]
    other = sum(paraphrased(q["question"], [text[i] for i in q["evidence"]]) for q in asked)
    print("PARAPHRASED %d of %d current and past questions share no content word with their evidence (want >= half)"
          % (other, len(asked)))
    if asked and other * 2 < len(asked):
        print("PROBLEM fewer than half of the current and past questions are paraphrased")
        return 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
