"""One hash of every result list a dataset gets: proof that a change moved no result at all.

    python3 -m tools.result_hash locomo PATH/locomo10-dev.json
    python3 -m tools.result_hash synthetic [fixtures/synthetic-small.json]

Replays the dataset into a fresh in-process memory (default settings, as `make eval`),
asks every question with top_k 100, and prints the SHA-256 of the responses, each
serialized with sorted keys, in question order. Equal hashes before and after a
refactor mean byte-identical results (ids, contents, scores, signals).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from typing import Dict, Optional

from flowmem.config import load
from tools import data_paths
from tools.evalkit import dataset as datasets
from tools.evalkit.replay import InProcessClient, ask, replay
from tools.evalkit.settings import parse_settings

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SYNTHETIC = os.path.join(REPO_ROOT, "fixtures", "synthetic-small.json")


def result_hash(dataset: datasets.Dataset, settings: Optional[Dict[str, str]] = None) -> tuple:
    """(hex digest, number of questions) of all of `dataset`'s result lists, under `settings` (flowmem's, by name)."""
    digest = hashlib.sha256()
    questions = 0
    with tempfile.TemporaryDirectory(prefix="flowmem-hash-") as workdir:
        client = InProcessClient(load(dict(settings or {}, db=os.path.join(workdir, "hash.db"), synchronous="OFF"),
                                           environ={}))
        try:
            for conversation in dataset.conversations:
                replay(client, conversation)
            for conversation in dataset.conversations:
                for question in conversation.questions:
                    items, _ = ask(client, conversation, question, 100)
                    digest.update(json.dumps(items, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n")
                    questions += 1
        finally:
            client.close()
    return digest.hexdigest(), questions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("locomo", "synthetic"))
    parser.add_argument("path", nargs="?")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a flowmem setting")
    args = parser.parse_args()
    if args.kind == "locomo":
        dataset = data_paths.load_locomo(args.path or data_paths.DEFAULT_LOCOMO)
    else:
        dataset = datasets.load_json(args.path or SYNTHETIC)
    digest, questions = result_hash(dataset, parse_settings(args.set))
    print("%s  %s (%d questions)" % (digest, args.kind, questions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
