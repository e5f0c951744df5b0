"""Session neighbours for the PostgreSQL backend: window vectors and lexical context.

A mixin of `PostgresStore`, statement for statement the SQLite backend's `ContextRows`. Window
vectors have their own partial HNSW index per embedder (created by the first window written,
like own vectors'); a window search asks both indexes (windows, and own vectors of memories
without a window) and keeps the closest `k`, and when the indexes return fewer than `k` the
exact scan answers instead. A memory without a window row counts with its own vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import sql

from cairn.embeddings.base import Vector
from cairn.store.base import MemoryFilter, WindowMatches
from cairn.store.postgres import lexical
from cairn.store.postgres.connection import Database
from cairn.store.postgres.filters import filter_sql
from cairn.store.postgres.vectors import (
    WindowHit,
    put_vector,
    vector_param,
    window_hits,
    window_nearest,
)
from cairn.store.sql.neighbours import NeighbourRows

_WINDOW = "coalesce(w.embedding, v.embedding) <=> %(query)b::vector"
_VECTORS = "w.embedding, v.embedding"  # the window vector (NULL without one), the own vector
_FROM = (
    "FROM vectors v JOIN memories m ON m.id = v.memory_id"
    " LEFT JOIN windows w ON w.memory_id = v.memory_id AND w.identity = v.identity"
)


class ContextRows(NeighbourRows):
    _db: Database

    def put_window(self, memory_id: int, identity: str, vector: Vector) -> None:
        with self._db.transaction() as conn:
            put_vector(conn, memory_id, identity, vector, table="windows")

    def window_similarities(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int, include: Sequence[int]
    ) -> dict[int, float]:
        return self.window_matches(filt, identity, vector, k, include).cosines

    def window_matches(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int, include: Sequence[int]
    ) -> WindowMatches:
        if not filt.scopes:
            return WindowMatches({}, {}, {})
        base: dict[str, Any] = {
            "query": vector_param(vector),
            "identity": identity,
            "dims": int(vector.shape[0]),
        }
        found: dict[int, WindowHit] = {}
        with self._db.connection() as conn:
            indexed = window_nearest(conn, filt, identity, vector, k)
            found.update((hit.memory_id, hit) for hit in indexed)
            if k > 0 and len(indexed) < k:
                found.clear()  # the indexes' scans ran out: the exact scan answers alone
                where, params = filter_sql(filt)
                params.update(base, k=k)
                statement = sql.SQL(
                    f"SELECT v.memory_id, {_WINDOW} AS distance, {_VECTORS} {_FROM}"
                    " WHERE v.identity = %(identity)s AND v.dims = %(dims)s AND {where}"
                    " ORDER BY distance, v.memory_id LIMIT %(k)s"
                ).format(where=sql.SQL(where))
                rows = conn.execute(statement, params, binary=True).fetchall()
                found.update((hit.memory_id, hit) for hit in window_hits(rows))
            wanted = [i for i in dict.fromkeys(include) if i not in found]
            if wanted:
                rows = conn.execute(
                    f"SELECT v.memory_id, {_WINDOW}, {_VECTORS} {_FROM} WHERE v.identity ="
                    " %(identity)s AND v.dims = %(dims)s AND v.memory_id = ANY(%(ids)s::bigint[])",
                    {**base, "ids": wanted},
                    binary=True,
                ).fetchall()
                found.update((hit.memory_id, hit) for hit in window_hits(rows))
        return WindowMatches(
            {i: hit.cosine for i, hit in found.items()},
            {i: hit.window for i, hit in found.items()},
            {i: hit.own for i, hit in found.items()},
        )

    def set_lexical_context(self, memory_id: int, context: str) -> None:
        with self._db.transaction() as conn:
            lexical.set_context(conn, memory_id, context)
