"""SQL fragments the SQLite store's own queries (dense and lexical search) are built from: a
`MemoryFilter` as a WHERE clause (the shared one, `cairn.store.sql.filters`), an FTS5 match
expression and lists of `?` parameter marks. Id chunks are the dialect's (`SQLITE.chunks`)."""

from __future__ import annotations

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
