"""Records <-> rows for the tables whose record fields are their columns, on either SQL backend.

`store/tables.py` declares every copied table's columns and their neutral kinds once; a
`Columns` reads that spec for one record type, so the column list, the parameter marks and
each value's encoding are written once instead of per query. A column is encoded and decoded
by its kind through the dialect (`time`: `d.time` / `d.read_time`, `json`, `texts`, `ints`,
`bool`); NULL stays NULL. A JSON list comes back as a tuple and an object as a dict, as the
frozen records hold them. The coders are looked up once per dialect, and a record whose fields
are the columns in order is built positionally. The memory rows keep codecs of their own
(`store/sql/rows.py`): their evidence JSON keeps its key order, and a recall reads dozens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, fields
from functools import cache
from typing import Any, Generic, TypeVar

from cairn.store.sql.dialect import Dialect, assignments
from cairn.store.tables import table_spec

R = TypeVar("R")
Coders = tuple[Callable[[Any], Any] | None, ...]


class Columns(Generic[R]):
    """The columns of `table` that are fields of `record`, in the table's order."""

    __slots__ = ("_coders", "_kinds", "_positional", "columns", "kinds", "names", "record", "table")

    def __init__(self, table: str, record: type[R]) -> None:
        spec = table_spec(table)
        kinds = {column.name: column.kind for column in spec.columns}
        own = {f.name: f for f in fields(record)}  # type: ignore[arg-type]
        chosen = [c.name for c in spec.columns if c.name in own]
        missing = [
            name
            for name, f in own.items()
            if name not in chosen and f.default is MISSING and f.default_factory is MISSING
        ]
        if missing:
            raise ValueError(f"{record.__name__} does not match {table}'s columns: {missing}")
        self.table = spec.name
        self.record = record
        self.names = tuple(chosen)
        self.columns = ", ".join(chosen)
        self.kinds = kinds
        self._kinds = tuple(kinds[name] for name in chosen)
        # A record whose fields are the columns in order is built positionally (cheaper).
        self._positional = self.names == tuple(own)
        self._coders: dict[Dialect, tuple[Coders, Coders]] = {}

    def select(self, rest: str) -> str:
        """`SELECT <columns> FROM <table> <rest>`."""
        return f"SELECT {self.columns} FROM {self.table} {rest}"

    def insert(self, rest: str = "", *, also: tuple[str, ...] = ()) -> str:
        """`INSERT INTO <table> (<columns>, <also>) VALUES (?, ...)`, then `rest` (an ON
        CONFLICT); the values of `also` follow the record's."""
        names = (*self.names, *also)
        marks = ", ".join("?" for _ in names)
        return f"INSERT INTO {self.table} ({', '.join(names)}) VALUES ({marks}){rest}"

    def assign(
        self, d: Dialect, changes: Mapping[str, Any], allowed: frozenset[str], what: str
    ) -> tuple[str, list[Any]]:
        """`column = ?, ...` for an UPDATE of `changes` and their encoded values, refusing a
        column not in `allowed`; empty when there is nothing to change."""
        columns = assignments(changes, allowed, what)
        return columns, [encode(d, self.kinds[name], value) for name, value in changes.items()]

    def values(self, d: Dialect, record: R) -> list[Any]:
        writers = self._coders_for(d)[0]
        return [
            value if value is None or write is None else write(value)
            for write, value in zip(writers, (getattr(record, n) for n in self.names), strict=True)
        ]

    def read(self, d: Dialect, row: Sequence[Any]) -> R:
        readers = self._coders_for(d)[1]
        values = [
            value if value is None or read is None else read(value)
            for read, value in zip(readers, row, strict=True)
        ]
        if self._positional:
            return self.record(*values)
        return self.record(**dict(zip(self.names, values, strict=True)))

    def _coders_for(self, d: Dialect) -> tuple[Coders, Coders]:
        """Per column, the dialect's encoder and decoder (None: the value passes unchanged)."""
        found = self._coders.get(d)
        if found is None:
            known = codecs(d)
            writers = tuple(known[kind][0] if kind in known else None for kind in self._kinds)
            readers = tuple(known[kind][1] if kind in known else None for kind in self._kinds)
            found = self._coders[d] = (writers, readers)
        return found


Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]  # (encode, decode) of a non-NULL value


@cache
def codecs(d: Dialect) -> dict[str, Codec]:
    """How the dialect writes and reads each neutral kind; kinds not listed pass unchanged."""

    def read_json(value: Any) -> Any:
        parsed = d.read_json(value)
        return tuple(parsed) if isinstance(parsed, list) else parsed

    return {
        "time": (d.time, d.read_time),
        "json": (lambda value: d.json(_plain(value)), read_json),
        "texts": (d.texts, d.read_texts),
        "ints": (
            lambda items: d.texts([int(item) for item in items]),
            lambda value: tuple(int(item) for item in d.read_texts(value)),
        ),
        "bool": (d.flag, bool),
    }


def encode(d: Dialect, kind: str, value: Any) -> Any:
    """One value as a column of `kind` stores it."""
    codec = codecs(d).get(kind)
    return value if value is None or codec is None else codec[0](value)


def _plain(value: Any) -> Any:
    # Records hold read-only mappings and tuples; JSON wants dicts and lists.
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | list):
        return [dict(item) if isinstance(item, Mapping) else item for item in value]
    return value
