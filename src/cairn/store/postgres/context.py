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
from cairn.store.base import MemoryFilter
from cairn.store.postgres import lexical
from cairn.store.postgres.connection import Database
from cairn.store.postgres.filters import filter_sql
from cairn.store.postgres.vectors import put_vector, similarity, vector_param, window_nearest
from cairn.store.sql.neighbours import NeighbourRows

_WINDOW = "coalesce(w.embedding, v.embedding) <=> %(query)b::vector"
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
        if not filt.scopes:
            return {}
        base: dict[str, Any] = {
            "query": vector_param(vector),
            "identity": identity,
            "dims": int(vector.shape[0]),
        }
        found: dict[int, float] = {}
        with self._db.connection() as conn:
            indexed = window_nearest(conn, filt, identity, vector, k)
            found.update(indexed)
            if k > 0 and len(indexed) < k:
                found.clear()  # the indexes' scans ran out: the exact scan answers alone
                where, params = filter_sql(filt)
                params.update(base, k=k)
                rows = conn.execute(
                    sql.SQL(
                        f"SELECT v.memory_id, {_WINDOW} AS distance {_FROM}"
                        " WHERE v.identity = %(identity)s AND v.dims = %(dims)s AND {where}"
                        " ORDER BY distance, v.memory_id LIMIT %(k)s"
                    ).format(where=sql.SQL(where)),
                    params,
                ).fetchall()
                found.update((int(i), similarity(d)) for i, d in rows)
            wanted = [i for i in dict.fromkeys(include) if i not in found]
            if wanted:
                rows = conn.execute(
                    f"SELECT v.memory_id, {_WINDOW} {_FROM} WHERE v.identity = %(identity)s"
                    " AND v.dims = %(dims)s AND v.memory_id = ANY(%(ids)s::bigint[])",
                    {**base, "ids": wanted},
                ).fetchall()
                found.update((int(i), similarity(d)) for i, d in rows)
        return found

    def set_lexical_context(self, memory_id: int, context: str) -> None:
        with self._db.transaction() as conn:
            lexical.set_context(conn, memory_id, context)
