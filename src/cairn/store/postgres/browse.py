"""What the app's lists read on the PostgreSQL backend, statement for statement the SQLite
backend's `BrowseRows`: keyset pages of memories, their count, and writes per day by type."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from cairn.models import Memory
from cairn.store.base import COUNT_LIMIT, MemoryFilter
from cairn.store.postgres.connection import Database
from cairn.store.postgres.filters import filter_sql
from cairn.store.postgres.rows import MEMORY_COLUMNS, memory_from_row


class BrowseRows:
    _db: Database

    def page_memories(
        self, filt: MemoryFilter, *, before_id: int | None, limit: int, cited_only: bool = False
    ) -> list[Memory]:
        where, params = _browse_where(filt, before_id, cited_only)
        params["b_limit"] = limit
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where} "
                "ORDER BY m.id DESC LIMIT %(b_limit)s",
                params,
            ).fetchall()
        return [memory_from_row(row) for row in rows]

    def count_memories(
        self, filt: MemoryFilter, *, cited_only: bool = False, at_most: int = COUNT_LIMIT
    ) -> int:
        where, params = _browse_where(filt, None, cited_only)
        params["b_at_most"] = at_most
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {where} "
                "LIMIT %(b_at_most)s) AS capped",
                params,
            ).fetchone()
        return int(row[0]) if row else 0

    def memory_days(self, scopes: Sequence[str] | None) -> list[tuple[date, str, int]]:
        sql = (
            "SELECT (m.written_at AT TIME ZONE 'UTC')::date AS day, m.type, count(*) "
            "FROM memories m WHERE m.status <> 'purged'"
        )
        params: dict[str, Any] = {}
        if scopes is not None:
            sql += " AND m.scope = ANY(%(scopes)s::text[])"
            params["scopes"] = list(scopes)
        with self._db.connection() as conn:
            rows = conn.execute(
                sql + " GROUP BY day, m.type ORDER BY day, m.type", params
            ).fetchall()
        return [(day, str(kind), int(n)) for day, kind, n in rows]


def _browse_where(
    filt: MemoryFilter, before_id: int | None, cited_only: bool
) -> tuple[str, dict[str, Any]]:
    where, params = filter_sql(filt)
    if before_id is not None:
        where += " AND m.id < %(b_before)s"
        params["b_before"] = before_id
    if cited_only:
        where += " AND m.source_ref IS NOT NULL"
    return where, params
