"""A data file that ships in flowmem/text/data/, written so that a rebuild gives the same bytes."""
from __future__ import annotations

import gzip
import os
from typing import List


def write_data(folder: str, name: str, header: str, lines: List[str], licence_name: str, licence: bytes) -> None:
    """Write a lexicon file (gzip without a timestamp, so rebuilds are byte-identical) and its source's licence."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
            out.write((header + "\n".join(lines) + "\n").encode("utf-8"))
    with open(os.path.join(folder, licence_name), "wb") as f:
        f.write(licence)
