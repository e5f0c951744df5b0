"""PostgreSQL's dialect for the shared queries: `%s` marks, `timestamptz` read back as
`datetime.UTC`, `json` columns written with SQLite's JSON options, arrays for lists, `real[]`
for plain vectors, `= ANY(%s::type[])` for lists of any length."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import numpy as np
from psycopg.types.json import Json

from cairn.embeddings.base import Vector
from cairn.store.sql.dialect import Conn, Dialect, Run
from cairn.timeutil import as_utc


class PostgresDialect(Dialect):
    name = "postgres"
    greatest = "greatest"
    utc_day = "({} AT TIME ZONE 'UTC')::date"
    lexical_table = "lexical"
    chunk = 0

    def sql(self, text: str) -> str:
        return _psycopg_marks(text)

    def time(self, value: datetime) -> datetime:
        return as_utc(value)

    def read_time(self, value: Any) -> datetime:
        moment: datetime = value.astimezone(UTC)
        return moment

    def json(self, value: Any, *, sort: bool = True) -> Json:
        return Json(value, dumps=_dumps if sort else _plain_dumps)

    def read_json(self, value: Any) -> Any:
        return value

    def texts(self, values: Sequence[Any]) -> list[Any]:
        return list(values)

    def read_texts(self, value: Any) -> tuple[Any, ...]:
        return tuple(value)

    def flag(self, value: bool) -> bool:
        return bool(value)

    def vector(self, value: Vector) -> list[float]:
        return [float(x) for x in np.asarray(value, dtype=np.float32)]

    def read_vector(self, value: Any) -> Vector:
        return np.asarray(value, dtype=np.float32)

    def among(
        self, column: str, values: Sequence[Any], kind: str = "bigint"
    ) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?::{kind}[])", [list(values)]

    def overlaps(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
        return f"{column} && ?::bigint[]", [list(values)]

    def advance_sequence(self, run: Run, table: str, row_id: int) -> None:
        run.execute(
            f"SELECT setval('{table}_id_seq', greatest(?, s.last_value)) FROM {table}_id_seq s",
            (row_id,),
        )

    def has_glob(self, column: str) -> str:
        # chr(63) is `?`, which a shared statement may not hold (it is the parameter mark).
        return f"({column} ~ '[*[]' OR strpos({column}, chr(63)) > 0)"

    def insert_id(self, conn: Conn, sql: str, params: Sequence[Any]) -> int:
        row = conn.execute(sql + " RETURNING id", params).fetchone()
        return int(row[0]) if row else 0

    def execute_many(self, conn: Conn, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with conn.cursor() as cur:  # type: ignore[attr-defined]
            cur.executemany(sql, rows)


@lru_cache(maxsize=1024)
def _psycopg_marks(text: str) -> str:
    # Shared statements hold no literal `?` or `%`: values always travel as parameters.
    return text.replace("%", "%%").replace("?", "%s")


def _plain_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


POSTGRES = PostgresDialect()
