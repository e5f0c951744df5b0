"""Dense search for the PostgreSQL backend: pgvector, one partial HNSW index per embedder.

Column typing. Embedders differ in dimensions (384 for the default model, 768 or 1024 for
others), and a store holds the vectors of every embedder it has seen until `cairn reindex`
drops the old ones. `vectors.embedding` is therefore an untyped `vector`, and each
(identity, dims) pair gets its own partial expression index, created by the first `put_vector`
of that pair inside the writer's transaction and recorded in `vector_indexes`:

    CREATE INDEX vectors_hnsw_<hash> ON vectors
        USING hnsw ((embedding::vector(384)) vector_cosine_ops)
        WHERE identity = '<identity>' AND dims = 384

Queries name the identity and dimensions as literals (never parameters), so the planner can
prove the partial predicate even for prepared statements. pgvector indexes at most 2000
dimensions; larger vectors are searched exactly (the same query, no index to use).

Filtering. The filter lives on `memories`, so a plain HNSW scan returns `ef_search` graph
neighbours and the join then drops the ones the filter refuses, which can leave fewer than `k`
(a small scope inside a large store, a `types` filter, `as_of`). These measures keep results
complete at a bounded cost:

- `hnsw.iterative_scan = relaxed_order` (pgvector >= 0.8, set per connection) makes the index
  scan continue until `k` rows pass the filter or `hnsw.max_scan_tuples` are visited; the
  relaxed order is re-sorted by exact distance outside the index scan;
- `hnsw.ef_search` defaults to 200 rather than pgvector's 40, settable with `hnsw_ef_search`
  in the URL. The SQLite backend searches exactly, and recall should rank the same on both:
  measured on 20k clustered 384-d vectors (k=100, 20 queries), ef_search 40 / 100 / 200 / 400
  kept 0.69 / 0.78 / 0.89 / 0.96 of the exact top 100 and 0.91 / 0.90 / 0.96 / 1.00 of the
  exact top 10, found the exact nearest for k=1 in 0.60 / 0.90 / 1.00 / 1.00 of queries, at
  5-7 ms a query against 32 ms for the exact scan. It was 400 until the bench's 100k store
  (60 queries, k=100) showed what 400 bought there: a top-100 overlap of 0.9995 against 0.996
  at 200 and 0.987 at 100, the top 10 exact at all three, the same recall hits in the same
  order as an exact scan (index scans off) in 60 of 60 at 100, 200 and 400, LoCoMo's recall
  blocks identical at 100, 400 and exact; and 200 halves the search (10.6-12.6 ms against
  18-20 ms at load 5.6). On the clustered set 200 keeps 0.96 of the top 10 against 400's
  1.00, the price of the halved search; `hnsw_ef_search=400` buys it back;
- a search for a few neighbours (deduplication's 5, a `query` of up to 10) runs with at most
  `FEW_EF_SEARCH` = 200 candidates, set for its own statement (`SET LOCAL`) when the session's
  list is longer: it needs a shorter list than a recall pool of 100. On the bench's 100k store
  (k=5, 60 claims, 52 with a neighbour over the deduplication threshold) 100 and 200 both
  returned the exact top 5 and the exact set over the threshold in 60 of 60 (40: 59), in 7.4
  ms against 10.4 ms at load 5; it stays 200 because on the clustered set above 100 found the
  exact nearest in 0.90 of queries and 0.90 of the top 10, where 200 found 1.00 and 0.96: a
  missed neighbour there is a duplicate stored or a `query` answer lost;
- deduplication's search for `NEAR` = 5 runs with `NEAR_EF_SEARCH` = 100: what it needs is
  every neighbour over the threshold (0.82), not the exact order below it. On a set built to be
  hard for it (96k vectors in 8,000 tight clusters of 12, 1,000 queries from the clusters, 512
  with a neighbour over 0.82) 100 and 200 both found the exact set over the threshold for 999
  of 1,000 (64: 998, 40: 990), in 2.24 against 3.96 ms; on the bench's 100k store (200 claims)
  200 of 200 at 64 and 100, in 1.43 against 2.68 ms;
- when the index path still returns fewer than `k` rows, the query is repeated as an exact
  scan (ordering by an expression no index covers), which is cheap precisely when few rows
  pass the filter - the usual reason for a short answer.

The planner remains free to skip the index and scan exactly when the filter is selective.
Similarity is `1 - cosine distance`; a zero vector (cosine undefined, NaN) scores 0.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.adapt import Dumper
from psycopg.pq import Format, TransactionStatus

from cairn.embeddings.base import Vector
from cairn.store.base import MemoryFilter
from cairn.store.postgres.connection import Conn
from cairn.store.postgres.filters import filter_sql
from cairn.store.sql.rows import MEMORY_COLUMNS

HNSW_MAX_DIMS = 2000  # pgvector's limit for indexing the `vector` type
FEW = 10  # at most this many neighbours is a "few" search (see the module's docstring)
FEW_EF_SEARCH = 200
NEAR = 5  # deduplication's neighbours (`remember.NEAR_POOL`)
NEAR_EF_SEARCH = 100
_PAGE = 500


def vector_bytes(vector: Vector) -> bytes:
    """pgvector's binary form of a vector: its dimensions, a zero, then big-endian float4."""
    values = np.asarray(vector, dtype=">f4")
    return struct.pack(">HH", int(values.shape[0]), 0) + values.tobytes()


class VectorParam:
    """A query parameter sent in pgvector's binary form (`%b`, cast to `vector` in the SQL).

    One numpy conversion, exact, where a float8[] of Python floats is dumped element by
    element: a statement with two 384-dimension vectors took 0.15 ms so against 0.32 ms
    (300 statements each, alternating)."""

    __slots__ = ("values",)

    def __init__(self, vector: Vector) -> None:
        self.values = vector


class _VectorDumper(Dumper):
    format = Format.BINARY  # no oid: the statement's `::vector` cast gives the parameter its type

    def dump(self, obj: VectorParam) -> bytes:
        return vector_bytes(obj.values)


psycopg.adapters.register_dumper(VectorParam, _VectorDumper)  # cairn's own type: no one else's


def vector_param(vector: Vector) -> VectorParam:
    return VectorParam(vector)


def from_array(values: Sequence[float]) -> Vector:
    return np.asarray(values, dtype=np.float32)


def index_name(identity: str, dims: int, table: str = "vectors") -> str:
    digest = hashlib.sha256(f"{identity}\x00{dims}".encode()).hexdigest()[:16]
    return f"{table}_hnsw_{digest}"


def put_vector(
    conn: Conn, memory_id: int, identity: str, vector: Vector, table: str = "vectors"
) -> None:
    """Insert or replace one vector of `table` (own vectors, or windows: the same columns); the
    first vector of an embedder in that table creates its index."""
    dims = int(vector.shape[0])
    row = conn.execute(
        sql.SQL(
            "WITH up AS ("
            " INSERT INTO {table} (memory_id, identity, dims, embedding)"
            " VALUES (%(id)s, %(identity)s, %(dims)s, %(vector)b::vector)"
            " ON CONFLICT (memory_id) DO UPDATE SET identity = EXCLUDED.identity,"
            " dims = EXCLUDED.dims, embedding = EXCLUDED.embedding RETURNING 1)"
            " SELECT EXISTS (SELECT 1 FROM vector_indexes WHERE kind = %(table)s"
            " AND identity = %(identity)s AND dims = %(dims)s) FROM up"
        ).format(table=sql.Identifier(table)),
        {
            "id": memory_id,
            "identity": identity,
            "dims": dims,
            "vector": vector_param(vector),
            "table": table,
        },
    ).fetchone()
    if row is not None and not row[0]:
        first_vector_indexed(conn, identity, vector, table)


def first_vector_indexed(conn: Conn, identity: str, vector: Vector, table: str = "vectors") -> None:
    """After the first vector of an embedder in `table`: its index, when pgvector can index it."""
    dims = int(vector.shape[0])
    if dims <= HNSW_MAX_DIMS:
        _create_index(conn, identity, dims, table)


def _create_index(conn: Conn, identity: str, dims: int, table: str = "vectors") -> None:
    name = index_name(identity, dims, table)
    conn.execute(
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw"
            " ((embedding::vector({dims})) vector_cosine_ops)"
            " WHERE identity = {identity} AND dims = {dims}"
        ).format(
            name=sql.Identifier(name),
            table=sql.Identifier(table),
            dims=sql.SQL(str(int(dims))),
            identity=sql.Literal(identity),
        )
    )
    conn.execute(
        "INSERT INTO vector_indexes (kind, identity, dims, index_name, created_at)"
        " VALUES (%s, %s, %s, %s, now()) ON CONFLICT DO NOTHING",
        (table, identity, dims, name),
    )


def build_missing_indexes(conn: Conn) -> int:
    """Create the HNSW index of every embedder whose vectors were loaded without one.

    A whole-store copy inserts vectors without indexes and builds each index once at the end:
    keeping an HNSW graph up to date row by row costs far more than building it in one pass.
    """
    built = 0
    for table in ("vectors", "windows"):
        rows = conn.execute(
            sql.SQL(
                "SELECT DISTINCT v.identity, v.dims FROM {table} v WHERE v.dims <= %s AND NOT"
                " EXISTS (SELECT 1 FROM vector_indexes x WHERE x.kind = %s"
                " AND x.identity = v.identity AND x.dims = v.dims)"
            ).format(table=sql.Identifier(table)),
            (HNSW_MAX_DIMS, table),
        ).fetchall()
        for identity, dims in rows:
            _create_index(conn, str(identity), int(dims), table)
        built += len(rows)
    return built


def get_vectors(conn: Conn, ids: Sequence[int], identity: str) -> dict[int, Vector]:
    rows = conn.execute(
        "SELECT memory_id, embedding::real[] FROM vectors"
        " WHERE identity = %s AND memory_id = ANY(%s::bigint[])",
        (identity, list(ids)),
        binary=True,  # float4 arrives bit-exact
    ).fetchall()
    return {int(memory_id): from_array(values) for memory_id, values in rows}


def nearest(
    conn: Conn, filt: MemoryFilter, identity: str, vector: Vector, k: int, ef_search: int
) -> list[tuple[int, float]]:
    """The `k` closest vectors the filter admits; `ef_search` is the session's candidate list."""
    if k <= 0 or not filt.scopes:
        return []
    dims = int(vector.shape[0])
    where, params = filter_sql(filt)
    params.update(query=vector_param(vector), k=k)
    statement = nearest_sql(identity, dims, where, indexed=True)
    rows = _searched(conn, statement, params, candidates(k, ef_search), ef_search)
    if len(rows) < k:
        rows = conn.execute(nearest_sql(identity, dims, where, indexed=False), params).fetchall()
    return [(int(memory_id), similarity(distance)) for memory_id, distance in rows]


def candidates(k: int, session: int) -> int:
    """The HNSW candidate list for a search of `k` neighbours (see the module's docstring)."""
    if k <= NEAR:
        return min(session, NEAR_EF_SEARCH)
    if k <= FEW:
        return min(session, FEW_EF_SEARCH)
    return session


def _searched(
    conn: Conn, statement: sql.Composed, params: dict[str, Any], ef_search: int, session: int
) -> list[tuple[Any, ...]]:
    """The rows of `statement` run with `hnsw.ef_search` = `ef_search`, one round trip."""
    if ef_search == session:
        return conn.execute(statement, params).fetchall()
    inside = in_transaction(conn)
    with conn.pipeline():
        cursor = queue_search(conn, statement, params, ef_search, session, inside=inside)
    rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows


def in_transaction(conn: Conn) -> bool:
    return conn.info.transaction_status == TransactionStatus.INTRANS


def queue_search(
    conn: Conn,
    statement: sql.Composed,
    params: dict[str, Any],
    ef_search: int,
    session: int,
    *,
    inside: bool,
) -> Any:
    """Send `statement` with `hnsw.ef_search` = `ef_search`, the session's value after; its
    cursor, to read once the caller's pipeline has synced (without one, at once).

    SET LOCAL lasts until the transaction ends, so `inside` the caller's transaction
    (remember's deduplication) the session's value is put back for what follows; outside, a
    transaction of its own holds the setting. Pipelined, the setting, the search and the
    restore cost one round trip instead of three."""
    if ef_search == session:
        return conn.execute(statement, params)
    if inside:
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
        cursor = conn.execute(statement, params)
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(session)}")
        return cursor
    with conn.transaction():
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
        return conn.execute(statement, params)


HITS = "SELECT memory_id, distance FROM hits ORDER BY distance, memory_id"
# Each hit's memory row before its distance.
HIT_ROWS = (
    f"SELECT {MEMORY_COLUMNS}, h.distance FROM hits h JOIN memories ON memories.id = h.memory_id"
)


def nearest_sql(
    identity: str,
    dims: int,
    where: str,
    *,
    indexed: bool,
    table: str = "vectors",
    extra: str = "",
    select: str = HITS,
    carry: str = "",
) -> sql.Composed:
    """The best `k` as CTE `hits` (memory_id, distance, then the columns `carry` lists): `extra`
    adds to its condition, and `select` is the statement's own SELECT over it (default `HITS`:
    the ids and distances in order; `HIT_ROWS`: each hit's memory row before its distance)."""
    typed = sql.SQL(str(int(dims)))
    distance: sql.Composable
    if indexed:
        # The partial HNSW index's expression, ordered by distance alone so the scan can stop.
        distance = sql.SQL("v.embedding::vector({d}) <=> %(query)b::vector({d})").format(d=typed)
        order = sql.SQL("distance")
    else:
        # No index covers the bare column: an exact scan with a deterministic tie-break.
        distance = sql.SQL("v.embedding <=> %(query)b::vector")
        order = sql.SQL("distance, v.memory_id")
    return sql.SQL(
        "WITH hits AS MATERIALIZED ("
        " SELECT v.memory_id, {selected}"
        " FROM {table} v JOIN memories m ON m.id = v.memory_id"
        " WHERE v.identity = {identity} AND v.dims = {dims} AND {where}{extra}"
        " ORDER BY {order} LIMIT %(k)s) {select}"
    ).format(
        select=sql.SQL(select),
        selected=sql.Composed([distance, sql.SQL(f" AS distance{carry}")]),
        table=sql.Identifier(table),
        identity=sql.Literal(identity),
        dims=typed,
        where=sql.SQL(where),
        extra=sql.SQL(extra),
        order=order,
    )


# A memory is searched by its window vector when it has one from the same embedder, and by its
# own vector otherwise: the two halves of a window search, each served by its table's index.
_HAS_VECTOR = (
    " AND EXISTS (SELECT 1 FROM vectors o WHERE o.memory_id = v.memory_id"
    " AND o.identity = v.identity)"
)
_NO_WINDOW = (
    " AND NOT EXISTS (SELECT 1 FROM windows w WHERE w.memory_id = v.memory_id"
    " AND w.identity = v.identity)"
)


# Each hit's window vector (NULL when it has none) and own vector after its distance.
HITS_WITH_VECTORS = "SELECT memory_id, distance, wvec, ovec FROM hits ORDER BY distance, memory_id"
_OWN = (
    "(SELECT o.embedding FROM vectors o WHERE o.memory_id = v.memory_id"
    " AND o.identity = v.identity)"
)


def window_sql(identity: str, dims: int, where: str) -> sql.Composed:
    """Both halves of a window search in one statement (one round trip, one plan), each the
    best `k` of its own index with the vector it was scored by and its own vector (the same for
    the half without windows); the caller keeps the best `k` of the two."""
    halves = [
        sql.SQL("({})").format(
            nearest_sql(
                identity,
                dims,
                where,
                indexed=True,
                table=table,
                extra=extra,
                select=HITS_WITH_VECTORS,
                carry=carry,
            )
        )
        for table, extra, carry in (
            ("windows", _HAS_VECTOR, f", v.embedding AS wvec, {_OWN} AS ovec"),
            ("vectors", _NO_WINDOW, ", NULL::vector AS wvec, v.embedding AS ovec"),
        )
    ]
    return sql.SQL(" UNION ALL ").join(halves)


@dataclass(frozen=True, slots=True)
class WindowHit:
    """A memory scored by its window vector (its own when it has none), with both vectors."""

    memory_id: int
    cosine: float
    window: Vector
    own: Vector


def window_hits(rows: Sequence[tuple[Any, ...]]) -> list[WindowHit]:
    """(memory_id, distance, window vector or NULL, own vector) rows, vectors in binary."""
    owns = vectors_from_binary([row[3] for row in rows])
    windows = iter(vectors_from_binary([row[2] for row in rows if row[2] is not None]))
    return [
        WindowHit(int(row[0]), similarity(row[1]), own if row[2] is None else next(windows), own)
        for row, own in zip(rows, owns, strict=True)
    ]


def window_nearest(
    conn: Conn, filt: MemoryFilter, identity: str, vector: Vector, k: int
) -> list[WindowHit]:
    """The `k` memories whose window vector (own vector when it has none) is closest, through
    the two HNSW indexes, with their vectors; fewer than `k` when the indexes' scans ran out
    (the caller then searches exactly)."""
    dims = int(vector.shape[0])
    if k <= 0 or not filt.scopes or dims > HNSW_MAX_DIMS:
        return []
    where, params = filter_sql(filt)
    params.update(query=vector_param(vector), k=k)
    rows = conn.execute(window_sql(identity, dims, where), params, binary=True).fetchall()
    return window_hits(sorted(rows, key=lambda row: (float(row[1]), int(row[0])))[:k])


def vectors_from_binary(values: Sequence[bytes]) -> list[Vector]:
    """Vectors sent in pgvector's binary form (`vector_bytes`), decoded in one pass when they
    share their length (a 100-row search: 0.05 ms instead of 0.4 one by one)."""
    if not values:
        return []
    if len({len(value) for value in values}) > 1:
        return [_vector_from_binary(value) for value in values]
    width = len(values[0]) // 4  # the 4-byte header (dimensions, zero) takes one float's place
    joined = np.frombuffer(b"".join(values), dtype=">f4").reshape(len(values), width)
    matrix = joined[:, 1:].astype(np.float32)
    return list(matrix)


def _vector_from_binary(value: bytes) -> Vector:
    return np.frombuffer(value, dtype=">f4", offset=4).astype(np.float32)


def similarity(distance: float | None) -> float:
    """A cosine distance as a similarity; a zero vector (distance NaN) scores 0."""
    if distance is None or math.isnan(distance):
        return 0.0
    return 1.0 - float(distance)


def vector_page(conn: Conn, after: int) -> list[tuple[int, str, Vector]]:
    """Up to one page of vectors with ids above `after`, by id (whole-store copy)."""
    rows: list[tuple[Any, ...]] = conn.execute(
        "SELECT memory_id, identity, embedding::real[] FROM vectors"
        " WHERE memory_id > %s ORDER BY memory_id LIMIT %s",
        (after, _PAGE),
        binary=True,
    ).fetchall()
    return [(int(mid), str(identity), from_array(values)) for mid, identity, values in rows]
