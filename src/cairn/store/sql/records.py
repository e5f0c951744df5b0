"""Records <-> rows for the tables whose record fields are their columns, on either SQL backend.

`store/tables.py` declares every copied table's columns and their neutral kinds once; a
`Columns` reads that spec for one record type, so the column list, the parameter marks and
each value's encoding are written once instead of per query. A column is encoded and decoded
by its kind through the dialect (`time`: `d.time` / `d.read_time`, `json`, `texts`, `ints`,
`bool`); NULL stays NULL. A JSON list comes back as a tuple and an object as a dict, as the
frozen records hold them. The memory rows, which a recall reads by the dozen, keep their own
decoders built once per dialect (`store/sql/rows.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, fields
from functools import cache
from typing import Any, Generic, TypeVar

from cairn.store.sql.dialect import Dialect, assignments
from cairn.store.tables import table_spec

R = TypeVar("R")


class Columns(Generic[R]):
    """The columns of `table` that are fields of `record` (or the ones `names` lists)."""

    __slots__ = ("_kinds", "columns", "kinds", "names", "record", "table")

    def __init__(self, table: str, record: type[R], names: str | None = None) -> None:
        spec = table_spec(table)
        kinds = {column.name: column.kind for column in spec.columns}
        own = {f.name: f for f in fields(record)}  # type: ignore[arg-type]
        chosen = names.split() if names else [c.name for c in spec.columns if c.name in own]
        missing = [
            name
            for name, f in own.items()
            if name not in chosen and f.default is MISSING and f.default_factory is MISSING
        ]
        if missing or not set(chosen) <= set(kinds):
            raise ValueError(f"{record.__name__} does not match {table}'s columns: {missing}")
        self.table = spec.name
        self.record = record
        self.names = tuple(chosen)
        self.columns = ", ".join(chosen)
        self.kinds = kinds
        self._kinds = tuple(kinds[name] for name in chosen)

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
        return [
            encode(d, kind, getattr(record, name))
            for name, kind in zip(self.names, self._kinds, strict=True)
        ]

    def read(self, d: Dialect, row: Sequence[Any]) -> R:
        return self.record(
            **{
                name: decode(d, kind, value)
                for name, kind, value in zip(self.names, self._kinds, row, strict=True)
            }
        )


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


def decode(d: Dialect, kind: str, value: Any) -> Any:
    """One stored value of a column of `kind`, as a record holds it."""
    codec = codecs(d).get(kind)
    return value if value is None or codec is None else codec[1](value)


def _plain(value: Any) -> Any:
    # Records hold read-only mappings and tuples; JSON wants dicts and lists.
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | list):
        return [dict(item) if isinstance(item, Mapping) else item for item in value]
    return value
