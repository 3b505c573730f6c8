"""What a Store holds in memory between transactions, and what tells it to let go.

A Store keeps the sessions search read (session_cache.py), users' message postings
(postings.py) and their meaning vectors (vectors.py), all in BoundedCaches (the last two
bounded by bytes, and admitting a user only in place of those idle longer: admission.py), and the
index generation and settings it reads with. Other writers change what those hold, in
this process or another, in two sizes:

- a reindex bumps the index generation (settings.py): everything held is dropped and the
  settings of the new index adopted (adopt());
- a deletion logs each session it removed, or the user it removed whole as one entry
  (schema.py `deletions`, writer.py): the caches forget those sessions (or all of that user's)
  and their users' postings and vectors, nothing of other users (forget()), or everything when
  the log no longer reaches back to the last deletion this Store saw: one that missed more
  than writer.DELETION_LOG_ROWS deletions, whatever their sizes.

Every transaction reads both marks first (check(), two rows of `meta`), so no read after a
change is answered from what was held before it, whichever process changed it.
"""
from __future__ import annotations

import logging
import sqlite3
import threading
from typing import List, Optional, Sequence, Tuple

from ..errors import StoreError
from ..text import stem
from .bounded_cache import BoundedCache
from .model_vectors import HeldModelVectors
from .postings import HeldPostings
from .session_cache import SessionCache
from .settings import IndexState, ViewSettings, decode_settings, index_problem, read_marks, read_meta
from .vectors import HeldVectors, nbytes as vector_bytes
from .writer import WHOLE_USER

log = logging.getLogger("flowmem.store")

Deletion = Tuple[int, int, int]  # (seq, user_key, session_key or WHOLE_USER): one row of the deletions log


class Held:
    """A Store's session, postings and vectors caches and its index state, kept current with the file."""

    def __init__(self, path: str, cache_messages: int, cache_postings_bytes: int, cache_vector_bytes: int = 0):
        self.path = path
        self.sessions = SessionCache(cache_messages)
        # Bounded by what they hold in bytes, and shared by users by admission (admission.py): a user
        # searched no sooner than those held waits outside rather than evicting the next one searched.
        self.postings: BoundedCache[HeldPostings] = BoundedCache(
            cache_postings_bytes, lambda held: held.n_messages, lambda held: held.nbytes, admission=True)
        self.vectors: BoundedCache[HeldVectors] = BoundedCache(
            cache_vector_bytes, lambda held: held.n_messages, vector_bytes, admission=True)
        # A user's own embedder's vectors (model_vectors.py), within the same bound as the built-in ones.
        self.model_vectors: BoundedCache[HeldModelVectors] = BoundedCache(
            cache_vector_bytes, lambda held: held.written, lambda held: held.nbytes(), admission=True)
        self.index = IndexState(-1, ViewSettings())  # the newest generation seen, the last deletion applied
        self._lock = threading.Lock()

    def check(self, conn: sqlite3.Connection) -> IndexState:
        """The index generation, settings and last deletion of the transaction's snapshot, adopted if newer.

        Another process's reindex bumps the generation: the caches then hold what that snapshot
        no longer has, and the settings may have changed. Its delete-user or delete-session
        logs the sessions deleted: the caches then hold those, and nothing else that changed.
        """
        generation, deletions = read_marks(conn)
        index = self.index
        if generation == index.generation:
            if deletions > index.deletions:
                self.forget(deletions_since(conn, index.deletions, deletions), index.deletions, deletions)
            return index._replace(deletions=deletions)
        meta = read_meta(conn)
        settings = decode_settings(meta, self.path)
        problem = index_problem(self.path, meta, settings, {})
        if problem:
            raise StoreError(problem)  # never answer from an index this flowmem cannot read
        seen = IndexState(generation, settings, deletions)
        if generation > index.generation:
            log.info("database %s changed (index generation %d -> %d, settings %s): caches cleared",
                     self.path, index.generation, generation, dict(settings._asdict()))
            self.adopt(seen)
        return seen

    def adopt(self, index: IndexState) -> None:
        """Read the index as `index` says from now on, with nothing kept in memory from before."""
        with self._lock:
            if index.generation <= self.index.generation:
                return
            self.index = index
            self.sessions.clear(index.generation)
            self.postings.clear(index.generation)
            self.vectors.clear(index.generation)
            self.model_vectors.clear(index.generation)
            stem.stem.cache_clear()  # words users said, kept to stem them faster

    def forget(self, deleted: Optional[Sequence[Deletion]], seen: int, upto: int) -> None:
        """Forget what is held of the sessions deleted after `seen` up to `upto`, `deleted` (None
        when the log no longer holds them all: then everything)."""
        with self._lock:
            if upto <= self.index.deletions:
                return  # another thread of this Store got there first
            if deleted is None or seen > self.index.deletions:
                self.sessions.forget_all(upto)
                self.postings.forget_all(upto)
                self.vectors.forget_all(upto)
                self.model_vectors.forget_all(upto)
            else:
                fresh = [row for row in deleted if row[0] > self.index.deletions]
                self.postings.forget({user_key for _, user_key, _ in fresh}, upto)
                self.vectors.forget({user_key for _, user_key, _ in fresh}, upto)
                self.model_vectors.forget({user_key for _, user_key, _ in fresh}, upto)
                self.sessions.forget({key for _, _, key in fresh if key != WHOLE_USER}, upto)
                self.sessions.forget_groups({user for _, user, key in fresh if key == WHOLE_USER}, upto)
            stem.stem.cache_clear()  # words users said: none of the deleted ones kept
            self.index = self.index._replace(deletions=upto)


def deletions_since(conn: sqlite3.Connection, seen: int, upto: int) -> Optional[List[Deletion]]:
    """The deletions logged after `seen` up to `upto`, in order; None when the log no longer holds
    them all (a Store that fell further behind than writer.DELETION_LOG_ROWS deletions)."""
    rows = conn.execute("SELECT seq, user_key, session_key FROM deletions WHERE seq > ? AND seq <= ? ORDER BY seq",
                        (seen, upto)).fetchall()
    return rows if len(rows) == upto - seen else None
