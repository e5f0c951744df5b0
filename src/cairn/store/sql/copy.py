"""The parts of a whole-store copy (`CopyStore`) that read the same on every SQL backend:
counting a table, paging through it in key order, moving id sequences, the meta notes. How a
backend reads and writes a page of rows in the neutral encoding is its own (`store/<backend>/
copy.py`): physical column names, binary vectors, the lexical index."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from cairn.store.sql.dialect import Run, Sql
from cairn.store.sql.meta import MetaRows
from cairn.store.tables import TABLES, Table, keyset_pages, table_spec

PAGE = 1000  # rows per page of a dump


class SharedCopyRows(MetaRows, ABC):
    """Each backend's `CopyRows` supplies the query that lists its tables and the two abstract
    parts: how it reads a page of one in the neutral encoding, and how it moves an id
    sequence."""

    _sql: Sql
    _LIST_TABLES: str  # the names of the tables in the store's schema

    def table_names(self) -> list[str]:
        present = {str(row[0]) for row in self._sql.all(self._LIST_TABLES)}
        return [spec.name for spec in TABLES if spec.name in present]

    @abstractmethod
    def _dump_page(
        self, spec: Table, after: Sequence[Any] | None, size: int
    ) -> list[dict[str, Any]]: ...

    @abstractmethod
    def _move_sequence(self, run: Run, table: str, position: int) -> None: ...

    def count_rows(self, table: str) -> int:
        spec = table_spec(table)  # a known table, so its name is safe to splice in
        row = self._sql.one(f"SELECT count(*) FROM {spec.name}")
        return int(row[0]) if row else 0

    def dump_table(
        self, table: str, *, after: Sequence[Any] | None = None, limit: int | None = None
    ) -> Iterator[dict[str, Any]]:
        spec = table_spec(table)
        return keyset_pages(
            spec, lambda start, size: self._dump_page(spec, start, size), after=after,
            limit=limit, page=PAGE,
        )  # fmt: skip

    def advance_sequences(self, positions: Mapping[str, int]) -> None:
        present = set(self.table_names())
        with self._sql.write() as run:
            for name, position in positions.items():
                if table_spec(name).serial and name in present:
                    self._move_sequence(run, name, int(position))
