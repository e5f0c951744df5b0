"""What differs between two SQL engines for the queries both backends share.

A shared query is written once, with `?` parameter marks, and runs through `Sql`, which applies
the backend's `Dialect`: its parameter style, how it encodes times, JSON, lists, flags and
vectors, how it matches a column against a list of values and how an INSERT reports its id.
Anything beyond that (full-text search, dense search, locking, DDL) is no dialect's business:
each backend writes it itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any, Protocol, TypeVar

from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput

T = TypeVar("T")


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> Sequence[Any]: ...


class Conn(Protocol):
    def execute(self, query: Any, params: Any = ..., /) -> Any: ...


class Database(Protocol):
    """A backend's connections: `connection()` for reads (the thread's transaction when one is
    open), `transaction()` for writes (serialised, nested calls join the outermost)."""

    def connection(self) -> AbstractContextManager[Any]: ...

    def transaction(self, *, durable: bool = True) -> AbstractContextManager[Any]: ...

    def close(self) -> None: ...


class Dialect(ABC):
    """How one engine spells and encodes what the shared queries need."""

    name: str
    greatest: str  # the two-argument maximum: max() in SQLite, greatest() in PostgreSQL
    chunk: int  # most values one IN list may hold; 0: no limit
    lexical_table: str  # the lexical index's table with one row per indexed memory
    utc_day: str  # the UTC calendar day of the time column `{}`

    @abstractmethod
    def sql(self, text: str) -> str:
        """A shared statement (`?` marks) in this engine's parameter style."""

    @abstractmethod
    def time(self, value: datetime) -> Any: ...

    @abstractmethod
    def read_time(self, value: Any) -> datetime: ...

    @abstractmethod
    def json(self, value: Any, *, sort: bool = True) -> Any:
        """A JSON column's value: keys sorted unless `sort` is false, anything unknown (with
        sorted keys) as its str()."""

    @abstractmethod
    def read_json(self, value: Any) -> Any: ...

    @abstractmethod
    def texts(self, values: Sequence[Any]) -> Any:
        """A list column (a JSON list in SQLite, an array in PostgreSQL)."""

    @abstractmethod
    def read_texts(self, value: Any) -> tuple[Any, ...]: ...

    @abstractmethod
    def flag(self, value: bool) -> Any: ...

    @abstractmethod
    def vector(self, value: Vector) -> Any: ...

    @abstractmethod
    def read_vector(self, value: Any) -> Vector: ...

    @abstractmethod
    def among(
        self, column: str, values: Sequence[Any], kind: str = "bigint"
    ) -> tuple[str, list[Any]]:
        """`column` is one of `values` (at most `chunk` of them): the condition and its
        parameters. `kind` is the values' SQL type, for engines that need a typed array."""

    @abstractmethod
    def overlaps(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
        """The list column `column` (of ints) holds one of `values`: the condition, its
        parameters."""

    @abstractmethod
    def has_glob(self, column: str) -> str:
        """The condition that `column` holds a glob character (`*`, `?` or `[`)."""

    @abstractmethod
    def insert_id(self, conn: Conn, sql: str, params: Sequence[Any]) -> int:
        """Run a shared INSERT of one row and return the id the store gave it."""

    @abstractmethod
    def execute_many(self, conn: Conn, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    @abstractmethod
    def advance_sequence(self, run: Run, table: str, row_id: int) -> None:
        """After a row was inserted with its id given: later inserts must not collide with it
        (SQLite's AUTOINCREMENT sees to that by itself)."""

    def opt_time(self, value: datetime | None) -> Any:
        return None if value is None else self.time(value)

    def read_opt_time(self, value: Any) -> datetime | None:
        return None if value is None else self.read_time(value)

    def chunks(self, values: Sequence[T]) -> Iterator[list[T]]:
        items = list(values)
        step = self.chunk or len(items) or 1
        for start in range(0, len(items), step):
            yield items[start : start + step]


class Run:
    """One connection with the dialect applied: what the shared queries call."""

    __slots__ = ("conn", "dialect")

    def __init__(self, conn: Conn, dialect: Dialect) -> None:
        self.conn = conn
        self.dialect = dialect

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        cursor: Cursor = self.conn.execute(self.dialect.sql(sql), params)
        return cursor

    def all(self, sql: str, params: Sequence[Any] = ()) -> Sequence[Any]:
        return self.execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.execute(sql, params).fetchone()

    def count(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a write and return how many rows it changed."""
        return int(self.execute(sql, params).rowcount)

    def insert(self, sql: str, params: Sequence[Any]) -> int:
        return self.dialect.insert_id(self.conn, self.dialect.sql(sql), params)

    def select_in(
        self,
        sql: str,
        column: str,
        values: Sequence[Any],
        kind: str = "bigint",
        *,
        before: Sequence[Any] = (),
        after: Sequence[Any] = (),
    ) -> list[Any]:
        """Rows of `sql`, whose `{among}` becomes `column` being one of `values`, read in chunks
        the engine accepts; `before` and `after` are the other parameters around it."""
        d = self.dialect
        found: list[Any] = []
        for chunk in d.chunks(values):
            condition, params = d.among(column, chunk, kind)
            text = d.sql(sql.replace("{among}", condition))
            found.extend(self.conn.execute(text, (*before, *params, *after)).fetchall())
        return found

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.dialect.execute_many(self.conn, self.dialect.sql(sql), rows)


class Sql:
    """A backend's database and dialect: `read()` and `write()` hand out a `Run`."""

    __slots__ = ("db", "dialect")

    def __init__(self, db: Database, dialect: Dialect) -> None:
        self.db = db
        self.dialect = dialect

    @contextmanager
    def read(self) -> Iterator[Run]:
        with self.db.connection() as conn:
            yield Run(conn, self.dialect)

    @contextmanager
    def write(self) -> Iterator[Run]:
        with self.db.transaction() as conn:
            yield Run(conn, self.dialect)

    # The one-statement reads below skip `Run`: recall makes dozens of them per call.
    def all(self, sql: str, params: Sequence[Any] = ()) -> Sequence[Any]:
        with self.db.connection() as conn:
            rows: Sequence[Any] = conn.execute(self.dialect.sql(sql), params).fetchall()
            return rows

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self.db.connection() as conn:
            return conn.execute(self.dialect.sql(sql), params).fetchone()

    def insert(self, sql: str, params: Sequence[Any]) -> int:
        """One INSERT in its own transaction (or the caller's); the id the row was given."""
        with self.write() as run:
            return run.insert(sql, params)

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One write in its own transaction (or the caller's); how many rows it changed."""
        with self.write() as run:
            return run.count(sql, params)

    def select_in(
        self, sql: str, column: str, values: Sequence[Any], kind: str = "bigint", **around: Any
    ) -> list[Any]:
        """`Run.select_in` (and its `before`, `after`) on a connection of its own."""
        with self.db.connection() as conn:
            return Run(conn, self.dialect).select_in(sql, column, values, kind, **around)


def assignments(changes: Mapping[str, Any], allowed: frozenset[str], what: str) -> str:
    """`column = ?, ...` for an UPDATE of `changes`, refusing a column not in `allowed`;
    empty when there is nothing to change."""
    unknown = set(changes) - allowed
    if unknown:
        raise InvalidInput(f"cannot update {what} fields {sorted(unknown)}")
    return ", ".join(f"{column} = ?" for column in changes)
