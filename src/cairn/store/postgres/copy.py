"""Whole-store copy for the PostgreSQL backend: rows in and out in the neutral encoding of
`cairn.store.tables`, the store's meta, and its sequences.

A mixin of `PostgresStore`, the SQLite backend's `CopyRows` in PostgreSQL terms:

- rows are read in the table key's order with text keys compared `COLLATE "C"` (bytewise, as
  SQLite compares them), so both backends list a table in the same order; vectors are read as
  `real[]` in binary, bit-exact;
- rows are written with `executemany` (pipelined); vectors go in as `real[]`, cast to the
  column's type (`vector` or `real[]`); a loaded lexical document is written by the same code
  as `put_lexical`, which builds its tsvector;
- vectors are loaded without HNSW indexes, which `finish_load` builds once at the end (index
  upkeep row by row costs far more than one build);
- after a batch of a table whose ids come from a sequence, the sequence moves past the
  largest id loaded (`setval`), so later inserts never collide with copied rows.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, cast

import numpy as np
from psycopg import sql
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg.types.json import Json

from cairn.errors import Conflict
from cairn.store.base import LexicalDoc
from cairn.store.postgres import lexical, vectors
from cairn.store.postgres.connection import Conn, Database
from cairn.store.postgres.dialect import POSTGRES
from cairn.store.sql.copy import SharedCopyRows, page_query
from cairn.store.sql.dialect import Run
from cairn.store.tables import (
    Converters,
    Table,
    neutral_row,
    parse_time,
    table_spec,
    time_text,
    vector_blob,
    vector_text,
)

# Physical names where they differ from the neutral ones.
_PHYSICAL = {("vectors", "vector"): "embedding", ("windows", "vector"): "embedding"}
# Columns only this backend stores, computed from the neutral row.
_EXTRA: dict[str, dict[str, Callable[[Mapping[str, Any]], Any]]] = {
    "windows": {"dims": lambda row: len(vector_blob(row["vector"])) // 4},
}
_MARKS = {"texts": "%s::text[]", "ints": "%s::bigint[]", "vector": "%b::real[]"}
_FLOAT4_ARRAY_OID = 1021
_ARRAY_HEADER = struct.Struct(">iiiii")  # dimensions, has nulls, element oid, length, lower bound


class Float4Array(bytes):
    """A float4[] in PostgreSQL's binary array format, built by numpy in one pass: psycopg's
    own list dumpers handle one Python float at a time, which made loading vectors ~15x slower."""


class _Float4ArrayDumper(Dumper):
    format = Format.BINARY
    oid = _FLOAT4_ARRAY_OID

    def dump(self, obj: Any) -> bytes:
        return bytes(obj)


def float4_array(text: str) -> Float4Array:
    values = np.frombuffer(vector_blob(text), dtype="<f4")
    items = np.empty(values.size, dtype=[("length", ">i4"), ("value", ">f4")])
    items["length"] = 4
    items["value"] = values
    header = _ARRAY_HEADER.pack(1, 0, 700, values.size, 1)  # 700: float4
    return Float4Array(header + items.tobytes())


def _json(value: Any) -> Json:
    return Json(value, dumps=lambda v: json.dumps(v, ensure_ascii=False))


# psycopg reads and writes these kinds as the same Python types, so one converter serves both
# ways; reading JSON needs none (psycopg parses jsonb).
_BOTH_WAYS: dict[str, Callable[[Any], Any]] = {
    "real": float,
    "bool": bool,
    "ints": lambda items: [int(i) for i in items],
}
_FROM_DB: dict[str, Callable[[Any], Any]] = {
    **_BOTH_WAYS,
    "time": time_text,
    "texts": list,
    "vector": vector_text,
}


class CopyRows(SharedCopyRows):
    _db: Database
    _LIST_TABLES = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    _TO_DB: ClassVar[Converters] = {
        **_BOTH_WAYS,
        "time": parse_time,
        "json": _json,
        "texts": lambda items: [str(i) for i in items],
        "vector": float4_array,
    }

    def _dump_page(
        self, spec: Table, after: Sequence[Any] | None, size: int
    ) -> list[dict[str, Any]]:
        # Vectors are read as real[] in binary, bit-exact; text keys compare bytewise, as in
        # SQLite, so both backends list a table in the same order.
        selected = [
            f"{_physical(spec, c.name)}::real[]" if c.kind == "vector" else _physical(spec, c.name)
            for c in spec.columns
        ]
        keys = [_key_expr(spec, name) for name in spec.key]
        text, params = page_query(spec, selected, keys, after, size)
        with self._db.connection() as conn:
            rows = conn.execute(POSTGRES.sql(text), params, binary=True).fetchall()
        return [neutral_row(spec, row, _FROM_DB) for row in rows]

    def _insert(
        self, run: Run, spec: Table, rows: Sequence[Mapping[str, Any]], values: list[list[Any]]
    ) -> None:
        extra = _EXTRA.get(spec.name, {})
        columns = [sql.Identifier(_PHYSICAL.get((spec.name, n), n)) for n in (*spec.names, *extra)]
        marks = [sql.SQL(_MARKS.get(c.kind, "%s")) for c in spec.columns]
        marks += [sql.SQL("%s") for _ in extra]
        query = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
            sql.Identifier(spec.name), sql.SQL(", ").join(columns), sql.SQL(", ").join(marks)
        )
        params = [
            [*value, *(compute(row) for compute in extra.values())]
            for value, row in zip(values, rows, strict=True)
        ]
        with cast(Conn, run.conn).cursor() as cur:
            cur.adapters.register_dumper(Float4Array, _Float4ArrayDumper)
            cur.executemany(query, params)

    def _load_lexical(self, run: Run, values: list[list[Any]]) -> None:
        """Documents go in through `put_lexical` (which builds the tsvector); it replaces an
        existing document, so a collision is looked for first, as a primary key would."""
        conn = cast(Conn, run.conn)
        ids = [int(value[0]) for value in values]
        taken = conn.execute(
            "SELECT memory_id FROM lexical WHERE memory_id = ANY(%s::bigint[]) ORDER BY memory_id",
            (ids,),
        ).fetchall()
        if taken or len(set(ids)) != len(ids):
            shown = taken[0][0] if taken else next(i for i in ids if ids.count(i) > 1)
            raise Conflict(
                f"the write collides with a row the store at {self._db.display} already holds"
                f" (lexical memory_id={shown}); import into an empty store or skip records"
                " already copied."
            )
        for value in values:
            lexical.put_lexical(conn, int(value[0]), LexicalDoc(*value[1:]))

    def _load_tags(self, run: Run, memory_ids: list[int]) -> None:
        run.execute(
            "INSERT INTO memory_tags (memory_id, tag) SELECT DISTINCT id, unnest(tags)"
            " FROM memories WHERE id = ANY(?::bigint[]) ON CONFLICT DO NOTHING",
            (memory_ids,),
        )

    def _batch_loaded(self, run: Run, spec: Table, rows: Sequence[Mapping[str, Any]]) -> None:
        # Later inserts take ids from the sequence: move it past the largest id loaded.
        if spec.serial:
            self._move_sequence(run, spec.name, max(int(row["id"]) for row in rows))

    def finish_load(self) -> None:
        with self._db.transaction() as conn:
            vectors.build_missing_indexes(conn)
            for name in self.table_names():
                # Fresh tables have no planner statistics until autovacuum gets to them.
                conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(name)))

    def sequences(self) -> dict[str, int]:
        found: dict[str, int] = {}
        with self._db.connection() as conn:
            for name in self.table_names():
                if table_spec(name).serial:
                    row = conn.execute(
                        "SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, 'id')::regclass)",
                        (name,),
                    ).fetchone()
                    if row and row[0]:
                        found[name] = int(row[0])
        return found

    def _move_sequence(self, run: Run, table: str, position: int) -> None:
        _move_sequence(cast(Conn, run.conn), table, position)


def _physical(spec: Table, column: str) -> str:
    # Quoted, as `sql.Identifier` would: the names are the fixed ones of `cairn.store.tables`.
    return f'"{_PHYSICAL.get((spec.name, column), column)}"'


def _key_expr(spec: Table, column: str) -> str:
    kinds = {c.name: c.kind for c in spec.columns}
    if kinds[column] == "text":
        return f'{_physical(spec, column)} COLLATE "C"'
    return _physical(spec, column)


def _move_sequence(conn: Conn, table: str, position: int) -> None:
    """Move the table's id sequence to `position` unless it is already there or past it."""
    if position < 1:
        return
    conn.execute(
        "SELECT setval(s.seq, %(pos)s) FROM (SELECT pg_get_serial_sequence(%(table)s, 'id')"
        "::regclass AS seq) s WHERE %(pos)s > coalesce(pg_sequence_last_value(s.seq), 0)",
        {"table": table, "pos": position},
    )
