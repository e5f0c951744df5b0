"""Whole-store copy for the SQLite backend: rows in and out in the neutral encoding of
`cairn.store.tables`, the store's meta, and its AUTOINCREMENT positions.

A mixin of `SqliteStore`. Times are integer microseconds here, JSON and lists are JSON text,
vectors float32 blobs. The lexical table is FTS5: its key is the `rowid`, and loading a
document also writes its per-field lengths. Loading memories rebuilds their `memory_tags` rows;
loading anything the vector caches read bumps the `epoch` so caches reload. Explicit ids move
AUTOINCREMENT past them by themselves; `advance_sequences` also carries a source's high-water
marks, so ids freed by deleted rows are not handed out again.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from cairn.store.base import LEXICAL_FIELDS
from cairn.store.sql.copy import SharedCopyRows, page_query
from cairn.store.sql.dialect import Run
from cairn.store.sqlite.connection import BUMP_EPOCH, BUMP_LEXEPOCH
from cairn.store.sqlite.dialect import SQLITE
from cairn.store.tables import (
    TABLES,
    Converters,
    Table,
    neutral_row,
    parse_time,
    time_text,
    vector_blob,
)
from cairn.timeutil import from_micros, to_micros

# Physical names where they differ from the neutral ones.
_PHYSICAL = {("lexical", "memory_id"): "rowid"}
# Tables whose changes the in-process vector caches must notice.
_CACHED = frozenset({"memories", "vectors", "windows"})
# Columns only this backend stores, and the value a loaded row gets: a loaded window is not a
# rewrite the cache must patch (the epoch bump makes caches reload in full).
_EXTRA: dict[str, dict[str, Any]] = {"windows": {"rev": 0}}


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _time_value(value: int) -> str:
    return time_text(from_micros(value))


def _vector_value(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


FROM_DB: dict[str, Callable[[Any], Any]] = {
    "real": float,
    "bool": bool,
    "time": _time_value,
    "json": json.loads,
    "texts": json.loads,
    "ints": json.loads,
    "vector": _vector_value,
}


class CopyRows(SharedCopyRows):
    _LIST_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"
    _TO_DB: ClassVar[Converters] = {
        "real": float,
        "bool": int,
        "time": lambda text: to_micros(parse_time(text)),
        "json": _json_text,
        "texts": lambda items: _json_text(list(items)),
        "ints": lambda items: _json_text([int(i) for i in items]),
        "vector": vector_blob,
    }

    def _dump_page(
        self, spec: Table, after: Sequence[Any] | None, size: int
    ) -> list[dict[str, Any]]:
        selected = [physical(spec.name, name) for name in spec.names]
        keys = [physical(spec.name, name) for name in spec.key]
        sql, params = page_query(spec, selected, keys, after, size)
        rows = self._sql.all(sql, params)
        return [neutral_row(spec, row, FROM_DB) for row in rows]

    def _insert(
        self, run: Run, spec: Table, rows: Sequence[Mapping[str, Any]], values: list[list[Any]]
    ) -> None:
        extra = _EXTRA.get(spec.name, {})
        names = [f'"{name}"' for name in (*spec.names, *extra)]
        marks = ", ".join("?" for _ in names)
        run.many(
            f"INSERT INTO {spec.name} ({', '.join(names)}) VALUES ({marks})",
            [[*value, *extra.values()] for value in values],
        )

    def _load_lexical(self, run: Run, values: list[list[Any]]) -> None:
        fields = ", ".join(LEXICAL_FIELDS)
        marks = ", ".join("?" for _ in LEXICAL_FIELDS)
        run.many(f"INSERT INTO lexical (rowid, {fields}) VALUES (?, {marks})", values)
        run.many(
            f"INSERT INTO lexical_lengths (memory_id, {fields}) VALUES (?, {marks})",
            [[row[0], *(len((text or "").split()) for text in row[1:])] for row in values],
        )

    def _load_tags(self, run: Run, memory_ids: list[int]) -> None:
        for chunk in SQLITE.chunks(memory_ids):
            among, params = SQLITE.among("m.id", chunk)
            run.execute(
                "INSERT OR IGNORE INTO memory_tags (memory_id, tag) SELECT m.id, t.value"
                f" FROM memories m, json_each(m.tags) t WHERE {among}",
                params,
            )

    def _batch_loaded(self, run: Run, spec: Table, rows: Sequence[Mapping[str, Any]]) -> None:
        # Explicit ids move AUTOINCREMENT past them by themselves: only the caches need telling.
        if spec.name in _CACHED:
            run.execute(BUMP_EPOCH)

    def finish_load(self) -> None:
        self._sql.run(BUMP_EPOCH)
        self._sql.run(BUMP_LEXEPOCH)

    def sequences(self) -> dict[str, int]:
        rows = self._sql.all("SELECT name, seq FROM sqlite_sequence")
        found = {str(name): int(seq) for name, seq in rows if seq}
        return {
            spec.name: found[spec.name] for spec in TABLES if spec.serial and spec.name in found
        }

    def _move_sequence(self, run: Run, table: str, position: int) -> None:
        moved = run.count(
            "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", (position, table)
        )
        if not moved:
            run.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, position))


def physical(table: str, column: str) -> str:
    # Quoted, since some names are keywords (`key`); FTS5's `rowid` must stay bare.
    return _PHYSICAL.get((table, column), f'"{column}"')
