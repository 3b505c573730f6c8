"""How a setting is declared: a dataclass field with its default, the group it is shown in and one line of help.

Each setting is declared once, by `setting()`, in the class of the layer whose code
reads it: how search ranks and what it returns in retrieval.ranking.Ranking, the rest
(the database, the server) in config.ServiceSettings. config.Config is made of those
classes (it inherits their fields, adding none), and the CLI's `--help`, the
`flowmem settings` table and its copy in docs/operations.md are made from these
declarations, so none of them can disagree with the code. This module lives in
storage, below every layer that declares settings, so that each can import it.
"""
from __future__ import annotations

import dataclasses
from typing import Any

# The groups settings are shown in (`--help`, `flowmem settings`), in this order: name -> title.
GROUPS = {
    "database": "the database (every command)",
    "server": "the server (serve only)",
    "index": "the index (fixed per database: leave them out to use the database's)",
    "results": "what a search returns",
    "ranking": "how a search ranks (defaults chosen by measurement: docs/results/settings.md)",
    "embedder": "the operator's own sentence model, off by default (docs/embedder.md)",
}


def setting(default: Any, group: str, help: str) -> Any:
    """A setting's field: its `default`, the `group` it is shown in (GROUPS) and its one-line `help`.

    The help says what the setting does and its unit; the CLI adds the default. An
    unknown group is a ValueError where the setting is declared.
    """
    if group not in GROUPS:
        raise ValueError("unknown settings group %r" % group)
    return dataclasses.field(default=default, metadata={"group": group, "help": help})
