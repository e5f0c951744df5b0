"""Session neighbours for the SQLite backend: window vectors and lexical context.

A memory's window vector (written by `cairn.neighbours`) changes when a later memory of its
session arrives, so unlike own vectors the rows are rewritten, not only appended: each write
moves meta `window_rev`, which the dense cache (`cairn.store.sqlite.vectors`) follows to patch
the rows it holds. A memory without a window row is searched with its own vector.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.embeddings.base import Vector
from cairn.store.base import MemoryFilter, WindowMatches
from cairn.store.sql.neighbours import NeighbourRows
from cairn.store.sqlite.connection import BUMP_LEXGEN, BUMP_WINDOW_REV, Connections
from cairn.store.sqlite.dialect import SQLITE
from cairn.store.sqlite.sql import tagged_ids
from cairn.store.sqlite.vectors import VectorIndex


class ContextRows(NeighbourRows):
    """Mixin of `SqliteStore`: the `ContextStore` part of the Protocol."""

    _db: Connections

    _vectors: VectorIndex  # the store's dense cache holds the window vectors too

    def put_window(self, memory_id: int, identity: str, vector: Vector) -> None:
        with self._db.transaction() as conn:
            conn.execute(BUMP_WINDOW_REV)
            conn.execute(
                "INSERT OR REPLACE INTO windows (memory_id, identity, vector, rev) VALUES "
                "(?, ?, ?, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_rev'))",
                (memory_id, identity, SQLITE.vector(vector)),
            )

    def window_similarities(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int, include: Sequence[int]
    ) -> dict[int, float]:
        conn = self._db.get()
        allowed = tagged_ids(conn, filt)
        return self._vectors.similarities(conn, filt, identity, vector, k, include, allowed)

    def window_matches(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int, include: Sequence[int]
    ) -> WindowMatches:
        """The cosines alone: scoring again in memory costs what reading vectors out would."""
        return WindowMatches(self.window_similarities(filt, identity, vector, k, include), {}, {})

    def set_lexical_context(self, memory_id: int, context: str) -> None:
        with self._db.transaction() as conn:
            conn.execute(BUMP_LEXGEN)  # the cached BM25 statistics average this field too
            conn.execute("UPDATE lexical SET context = ? WHERE rowid = ?", (context, memory_id))
            conn.execute(
                "UPDATE lexical_lengths SET context = ? WHERE memory_id = ?",
                (len(context.split()), memory_id),
            )
