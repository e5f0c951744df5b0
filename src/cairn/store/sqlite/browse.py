"""What the app's lists read on the SQLite backend: keyset pages of memories, their count, and
how many were written each day by type."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from cairn.models import Memory
from cairn.store.base import MemoryFilter
from cairn.store.sqlite.connection import Connections
from cairn.store.sqlite.rows import MEMORY_COLUMNS, memory_from_row
from cairn.store.sqlite.sql import filter_sql, marks


class BrowseRows:
    _db: Connections

    def page_memories(
        self, filt: MemoryFilter, *, before_id: int | None, limit: int, cited_only: bool = False
    ) -> list[Memory]:
        where, params = _browse_where(filt, before_id, cited_only)
        rows = self._db.get().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where} ORDER BY m.id DESC LIMIT ?",
            (*params, limit),
        )
        return [memory_from_row(row) for row in rows.fetchall()]

    def count_memories(self, filt: MemoryFilter, *, cited_only: bool = False) -> int:
        where, params = _browse_where(filt, None, cited_only)
        row = self._db.get().execute(f"SELECT count(*) FROM memories m WHERE {where}", params)
        return int(row.fetchone()[0])

    def memory_days(self, scopes: Sequence[str] | None) -> list[tuple[date, str, int]]:
        sql = (
            "SELECT date(m.written_at / 1000000, 'unixepoch') AS day, m.type, count(*) "
            "FROM memories m WHERE m.status != 'purged'"
        )
        params: tuple[str, ...] = ()
        if scopes is not None:
            sql += f" AND m.scope IN ({marks(list(scopes))})"
            params = tuple(scopes)
        rows = self._db.get().execute(sql + " GROUP BY day, m.type ORDER BY day, m.type", params)
        return [(date.fromisoformat(day), kind, int(n)) for day, kind, n in rows.fetchall()]


def _browse_where(
    filt: MemoryFilter, before_id: int | None, cited_only: bool
) -> tuple[str, tuple[Any, ...]]:
    where, params = filter_sql(filt)
    if before_id is not None:
        where += " AND m.id < ?"
        params = (*params, before_id)
    if cited_only:
        where += " AND m.source_ref IS NOT NULL"
    return where, params
