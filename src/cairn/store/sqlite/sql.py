"""SQL fragments the SQLite store's own queries (dense and lexical search) are built from: a
`MemoryFilter` as a WHERE clause (the shared one, `cairn.store.sql.filters`), an FTS5 match
expression and lists of `?` parameter marks. Id chunks are the dialect's (`SQLITE.chunks`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from cairn.store.base import MemoryFilter
from cairn.store.sql.filters import filter_sql as shared_filter_sql
from cairn.store.sqlite.dialect import SQLITE


def filter_sql(filt: MemoryFilter) -> tuple[str, tuple[Any, ...]]:
    where, params = shared_filter_sql(SQLITE, filt)
    return where, tuple(params)


def match_expression(terms: Sequence[str]) -> str:
    # Terms are analysed words; quoting keeps FTS5 from reading any of them as operators.
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in dict.fromkeys(terms))


def marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def tagged_ids(conn: sqlite3.Connection, filt: MemoryFilter) -> set[int] | None:
    """The memories holding one of the filter's tags; None when it names no tags. Dense search
    filters by it in Python (the cache holds no tags)."""
    if filt.tags is None:
        return None
    tags = list(filt.tags)
    rows = conn.execute(f"SELECT memory_id FROM memory_tags WHERE tag IN ({marks(tags)})", tags)
    return {row[0] for row in rows}
