#!/usr/bin/env python3
"""Make the LoCoMo development split that `make eval` and the README's figures use, from locomo10.json.

    python -m tools.locomo_dev PATH/locomo10.json [--out data/locomo10-dev.json]
    make locomo-dev LOCOMO10=PATH/locomo10.json      # the same; then `make eval` finds it

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) does not ship with flowmem: get
`data/locomo10.json` from https://github.com/snap-research/locomo. Its ten conversations
are split in two: the five of DEV_IDS are the development split every figure in the
README was tuned and measured on; the other five are a holdout, never tuned on. This
writes the five as a JSON list in the same format (json.dumps, ensure_ascii=False), and
says whether the result is byte-identical to the file the README's figures came from
(DEV_SHA256): if the upstream file changed, the figures may differ.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from typing import List, Optional, Sequence

from tools.data_paths import DEFAULT_LOCOMO, locomo_path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEV_IDS = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")
DEV_SHA256 = "b3728531ada8e9e9b44f7fa5e628051269bf1bd8b497a6de9f44c39bc7258c49"


def dev_split(samples: List[dict]) -> bytes:
    """The development split of LoCoMo's `samples`, as the bytes of its JSON file; ValueError if one is missing."""
    chosen = [s for s in samples if isinstance(s, dict) and s.get("sample_id") in DEV_IDS]
    missing = sorted(set(DEV_IDS) - {s["sample_id"] for s in chosen})
    if missing:
        raise ValueError("the file has no conversation %s: is it LoCoMo's locomo10.json?" % ", ".join(missing))
    return json.dumps(chosen, ensure_ascii=False).encode("utf-8")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("locomo10", help="LoCoMo's data/locomo10.json")
    parser.add_argument("--out", default=DEFAULT_LOCOMO, help="where to write it (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        with open(locomo_path(args.locomo10), encoding="utf-8") as f:
            data = dev_split(json.load(f))
    except ValueError as e:
        print("error: %s: %s" % (args.locomo10, e), file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "wb") as f:
        f.write(data)
    same = hashlib.sha256(data).hexdigest() == DEV_SHA256
    print("wrote %s (%s): %s" % (args.out, ", ".join(DEV_IDS), "byte-identical to the split the README's figures "
                                "were measured on" if same else "NOT the bytes the README's figures were measured "
                                "on (a different locomo10.json?): figures may differ"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
