"""Session neighbours for the SQLite backend: window vectors, their cache, lexical context.

A memory's window vector (written by `cairn.neighbours`) changes when a later memory of its
session arrives, so unlike own vectors the rows are rewritten, not only appended. The cache
(`WindowIndex`) therefore follows two cursors:

- rows of `vectors` past the last id seen are appended, each with its window vector when it has
  one and its own vector otherwise (a memory without a session is its own window);
- rows of `windows` rewritten since the last `rev` seen are patched in place.

Anything that changes what the filter admits bumps the store's `epoch` as for own vectors, and
a cache that sees a new epoch reloads in full. The matrix is the cache; SQLite stays the truth.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cairn.embeddings.base import Vector
from cairn.store.base import MemoryFilter
from cairn.store.sql.neighbours import NeighbourRows
from cairn.store.sqlite.connection import BUMP_LEXGEN, Connections
from cairn.store.sqlite.sql import marks
from cairn.store.sqlite.vectors import _append, _Block, _mask, _top_k


@dataclass
class _WindowBlock(_Block):
    last_rev: int = 0


class WindowIndex:
    def __init__(self) -> None:
        self._blocks: dict[tuple[tuple[str, ...], str], _WindowBlock] = {}
        self._lock = threading.Lock()

    def similarities(
        self,
        conn: sqlite3.Connection,
        filt: MemoryFilter,
        identity: str,
        vector: Vector,
        k: int,
        include: Sequence[int],
        allowed: set[int] | None,
    ) -> dict[int, float]:
        query = vector.astype(np.float32)
        with self._lock:
            block = self._refresh(conn, tuple(sorted(filt.scopes)), identity)
            if block.ids.size == 0:
                return {}
            found: dict[int, float] = {}
            if k > 0:
                mask = _mask(block, filt)
                if allowed is not None:
                    mask &= np.isin(block.ids, np.fromiter(allowed, np.int64, len(allowed)))
                index = np.flatnonzero(mask)
                if index.size:
                    scores = block.matrix[index] @ query
                    for i in _top_k(scores, k):
                        found[int(block.ids[index[i]])] = float(scores[i])
            wanted = np.fromiter((i for i in include if i not in found), np.int64)
            if wanted.size:
                positions = np.searchsorted(block.ids, wanted)
                positions = positions[positions < block.ids.size]
                positions = positions[np.isin(block.ids[positions], wanted)]
                if positions.size:
                    scores = block.matrix[positions] @ query
                    found.update(zip(block.ids[positions].tolist(), scores.tolist(), strict=True))
            return found

    def _refresh(
        self, conn: sqlite3.Connection, scopes: tuple[str, ...], identity: str
    ) -> _WindowBlock:
        key = (scopes, identity)
        epoch = conn.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()[0]
        block = self._blocks.get(key)
        if block is None or block.epoch != epoch:
            block = _WindowBlock(epoch=epoch)
            self._blocks[key] = block
        # Read the rewrite cursor first: a window rewritten after this point is either read
        # below with the new row or patched on the next call, never replaced by an older copy.
        rev = int(conn.execute("SELECT value FROM meta WHERE key = 'window_rev'").fetchone()[0])
        known = block.last_id
        rows = conn.execute(
            "SELECT m.id, coalesce(w.vector, v.vector), m.status, m.type, m.written_at, "
            "m.occurred_at, m.until FROM vectors v CROSS JOIN memories m ON m.id = v.memory_id "
            "LEFT JOIN windows w ON w.memory_id = v.memory_id AND w.identity = v.identity "
            f"WHERE v.identity = ? AND v.memory_id > ? AND m.scope IN ({marks(scopes)}) "
            "ORDER BY v.memory_id",
            (identity, known, *scopes),
        ).fetchall()
        if rows:
            _append(block, rows)
        if rev > block.last_rev and known:
            self._patch(conn, block, identity, known, rev)
        block.last_rev = rev
        return block

    @staticmethod
    def _patch(
        conn: sqlite3.Connection, block: _WindowBlock, identity: str, known: int, rev: int
    ) -> None:
        rows = conn.execute(
            "SELECT memory_id, vector FROM windows WHERE rev > ? AND rev <= ? AND identity = ? "
            "AND memory_id <= ?",
            (block.last_rev, rev, identity, known),
        ).fetchall()
        if not rows:
            return
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        positions = np.searchsorted(block.ids, ids)
        inside = positions < block.ids.size
        for row, position, ok in zip(rows, positions, inside, strict=True):
            if ok and block.ids[position] == row[0]:
                block.matrix[position] = np.frombuffer(row[1], dtype=np.float32)


class ContextRows(NeighbourRows):
    """Mixin of `SqliteStore`: the `ContextStore` part of the Protocol."""

    _db: Connections

    def _window_index(self) -> WindowIndex:
        index: WindowIndex | None = getattr(self, "_windows_cache", None)
        if index is None:
            index = WindowIndex()
            self._windows_cache = index
        return index

    def put_window(self, memory_id: int, identity: str, vector: Vector) -> None:
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
                "WHERE key = 'window_rev'"
            )
            conn.execute(
                "INSERT OR REPLACE INTO windows (memory_id, identity, vector, rev) VALUES "
                "(?, ?, ?, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_rev'))",
                (memory_id, identity, blob),
            )

    def delete_window(self, memory_id: int) -> None:
        with self._db.transaction() as conn:
            cur = conn.execute("DELETE FROM windows WHERE memory_id = ?", (memory_id,))
            if cur.rowcount:
                # The cache cannot patch a row back to its own vector; reload it.
                conn.execute(
                    "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
                    "WHERE key = 'epoch'"
                )

    def window_similarities(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int, include: Sequence[int]
    ) -> dict[int, float]:
        conn = self._db.get()
        allowed: set[int] | None = None
        if filt.tags is not None:
            tags = list(filt.tags)
            rows = conn.execute(
                f"SELECT memory_id FROM memory_tags WHERE tag IN ({marks(tags)})", tags
            )
            allowed = {row[0] for row in rows}
        return self._window_index().similarities(conn, filt, identity, vector, k, include, allowed)

    def set_lexical_context(self, memory_id: int, context: str) -> None:
        with self._db.transaction() as conn:
            conn.execute(BUMP_LEXGEN)  # the cached BM25 statistics average this field too
            conn.execute("UPDATE lexical SET context = ? WHERE rowid = ?", (context, memory_id))
            conn.execute(
                "UPDATE lexical_lengths SET context = ? WHERE memory_id = ?",
                (len(context.split()), memory_id),
            )
