"""Dense vector rows on either SQL backend: the `Store` methods on vectors and window vectors
that are plain SQL. Writing a vector and searching by one stay with each backend (SQLite's numpy
cache, PostgreSQL's pgvector casts and HNSW indexes: `store/<backend>/vectors.py`).

A mixin of the SQL stores, with one hook: `_vectors_deleted`, after a vector or window row is
gone (SQLite's vector cache must reload: it cannot patch a row away).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.store.sql.dialect import Run, Sql


class VectorRows:
    _sql: Sql

    def _vectors_deleted(self, run: Run) -> None:
        """Inside the deleting transaction, after at least one row was deleted."""

    def delete_vector(self, memory_id: int) -> None:
        self._delete_dense("vectors", memory_id)

    def delete_window(self, memory_id: int) -> None:
        self._delete_dense("windows", memory_id)

    def _delete_dense(self, table: str, memory_id: int) -> None:
        with self._sql.write() as run:
            if run.count(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,)):
                self._vectors_deleted(run)

    def vector_identities(self) -> dict[str, int]:
        rows = self._sql.all("SELECT identity, count(*) FROM vectors GROUP BY identity")
        return {str(identity): int(count) for identity, count in rows}

    def stale_vectors(
        self, scopes: Sequence[str] | None, identity: str, limit: int
    ) -> tuple[int, list[int]]:
        """Memories with content whose vector is missing or another embedder's (Store protocol):
        how many, and the first `limit` of their ids."""
        where = "m.status <> 'purged' AND (v.identity IS NULL OR v.identity <> ?)"
        params: list[Any] = [identity]
        if scopes is not None:
            among, values = self._sql.dialect.among("m.scope", scopes, "text")
            where += f" AND {among}"
            params.extend(values)
        body = f"FROM memories m LEFT JOIN vectors v ON v.memory_id = m.id WHERE {where}"
        with self._sql.read() as run:
            count = run.one(f"SELECT count(*) {body}", params)[0]
            rows = run.all(f"SELECT m.id {body} ORDER BY m.id LIMIT ?", (*params, limit))
        return int(count), [int(row[0]) for row in rows]
