"""SQLite's dialect for the shared queries: `?` marks, times as integer microseconds, JSON as
text, flags as 0/1, vectors as float32 blobs, `IN (?, ...)` lists of at most 500 values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from cairn.embeddings.base import Vector
from cairn.store.sql.dialect import Conn, Dialect, Run
from cairn.timeutil import from_micros, to_micros


class SqliteDialect(Dialect):
    name = "sqlite"
    greatest = "max"
    utc_day = "date({} / 1000000, 'unixepoch')"
    lexical_table = "lexical_lengths"
    chunk = 500  # keeps `IN (...)` lists under SQLite's variable limit

    def sql(self, text: str) -> str:
        return text

    def time(self, value: datetime) -> int:
        return to_micros(value)

    def read_time(self, value: Any) -> datetime:
        return from_micros(value)

    def json(self, value: Any, *, sort: bool = True) -> str:
        if not sort:
            return json.dumps(value, ensure_ascii=False)
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)

    def read_json(self, value: Any) -> Any:
        return json.loads(value)

    def texts(self, values: Sequence[Any]) -> str:
        return json.dumps(list(values), ensure_ascii=False)

    def read_texts(self, value: Any) -> tuple[Any, ...]:
        # Most rows hold an empty list; a recall reads dozens of rows, so skip the parse.
        return () if value == "[]" else tuple(json.loads(value))

    def flag(self, value: bool) -> int:
        return int(value)

    def vector(self, value: Vector) -> bytes:
        return np.asarray(value, dtype=np.float32).tobytes()

    def read_vector(self, value: Any) -> Vector:
        return np.frombuffer(value, dtype=np.float32)

    def among(
        self, column: str, values: Sequence[Any], kind: str = "bigint"
    ) -> tuple[str, list[Any]]:
        return f"{column} IN ({', '.join('?' for _ in values)})", list(values)

    def overlaps(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
        marks = ", ".join("?" for _ in values)
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value IN ({marks}))", list(values)

    def advance_sequence(self, run: Run, table: str, row_id: int) -> None:
        return  # AUTOINCREMENT keeps later ids above every id inserted

    def has_glob(self, column: str) -> str:
        return f"{column} GLOB '*[*?[]*'"

    def insert_id(self, conn: Conn, sql: str, params: Sequence[Any]) -> int:
        return int(conn.execute(sql, params).lastrowid or 0)

    def execute_many(self, conn: Conn, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        conn.executemany(sql, rows)  # type: ignore[attr-defined]


SQLITE = SqliteDialect()
