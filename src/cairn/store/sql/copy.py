"""The parts of a whole-store copy (`CopyStore`) that read the same on every SQL backend:
counting a table, paging through it in key order, the steps of loading a batch of rows, moving
id sequences, the meta notes. What each backend does its own way is a hook of
`store/<backend>/copy.py`: physical column names, binary vectors, how rows are inserted, the
lexical index, tag rows, and what follows a loaded batch."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from cairn.errors import InvalidInput
from cairn.store.sql.dialect import Run, Sql
from cairn.store.sql.meta import MetaRows
from cairn.store.tables import TABLES, Converters, Table, keyset_pages, stored_values, table_spec

PAGE = 1000  # rows per page of a dump


def page_query(
    spec: Table,
    selected: Sequence[str],
    keys: Sequence[str],
    after: Sequence[Any] | None,
    size: int,
) -> tuple[str, list[Any]]:
    """The shared statement (`?` marks) and parameters reading up to `size` rows of `spec` in
    key order, those after the key `after` only when given: `selected` and `keys` are the
    backend's expressions for the columns and the key columns."""
    params: list[Any] = []
    text = f"SELECT {', '.join(selected)} FROM {spec.name}"
    if after is not None:
        if len(after) != len(spec.key):
            raise InvalidInput(f"{spec.name} is resumed by {len(spec.key)} key values")
        text += f" WHERE ({', '.join(keys)}) > ({', '.join('?' for _ in keys)})"
        params.extend(after)
    text += f" ORDER BY {', '.join(keys)} LIMIT ?"
    return text, [*params, size]


class SharedCopyRows(MetaRows, ABC):
    """Each backend's `CopyRows` supplies the query that lists its tables, the converters to
    its stored encoding, and the abstract parts: how it reads a page of a table in the neutral
    encoding, inserts a batch, loads lexical documents and tag rows, finishes a loaded batch,
    and moves an id sequence."""

    _sql: Sql
    _LIST_TABLES: ClassVar[str]  # the names of the tables in the store's schema
    _TO_DB: ClassVar[Converters]  # a neutral value of a kind as the backend stores it

    def table_names(self) -> list[str]:
        present = {str(row[0]) for row in self._sql.all(self._LIST_TABLES)}
        return [spec.name for spec in TABLES if spec.name in present]

    @abstractmethod
    def _dump_page(
        self, spec: Table, after: Sequence[Any] | None, size: int
    ) -> list[dict[str, Any]]: ...

    @abstractmethod
    def _insert(
        self, run: Run, spec: Table, rows: Sequence[Mapping[str, Any]], values: list[list[Any]]
    ) -> None:
        """Insert a batch: `values` are `rows` converted for storage, in column order."""

    @abstractmethod
    def _load_lexical(self, run: Run, values: list[list[Any]]) -> None:
        """Insert lexical documents (memory id, then the fields), refusing a taken id."""

    @abstractmethod
    def _load_tags(self, run: Run, memory_ids: list[int]) -> None:
        """Write the `memory_tags` rows of memories just loaded, from their `tags`."""

    @abstractmethod
    def _batch_loaded(self, run: Run, spec: Table, rows: Sequence[Mapping[str, Any]]) -> None:
        """What must follow a loaded batch in its transaction (caches, id sequences)."""

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

    def load_rows(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        spec = table_spec(table)
        if not rows:
            return
        values = [stored_values(spec, row, self._TO_DB) for row in rows]
        with self._sql.write() as run:
            if spec.name == "lexical":
                self._load_lexical(run, values)
            else:
                self._insert(run, spec, rows, values)
            if spec.name == "memories":
                self._load_tags(run, [int(row["id"]) for row in rows])
            self._batch_loaded(run, spec, rows)

    def advance_sequences(self, positions: Mapping[str, int]) -> None:
        present = set(self.table_names())
        with self._sql.write() as run:
            for name, position in positions.items():
                if table_spec(name).serial and name in present:
                    self._move_sequence(run, name, int(position))
