"""Deduplication's reads on PostgreSQL in one round trip.

A new claim is compared with its scope first by content hash, then by its vector's closest
memories, whose rows deduplication then reads. The shared way (`sql/memories.py`) makes three
round trips of it inside remember's write transaction; here the hash lookup, the search with
its candidate list (`vectors.queue_search`) and the hits' rows (joined in the search) go out
pipelined, and answer together.
"""

from __future__ import annotations

from cairn.embeddings.base import Vector
from cairn.store.base import Resembling
from cairn.store.postgres.connection import Conn
from cairn.store.postgres.dialect import POSTGRES
from cairn.store.postgres.filters import filter_sql
from cairn.store.postgres.vectors import (
    candidates,
    in_transaction,
    nearest_sql,
    queue_search,
    similarity,
    vector_param,
)
from cairn.store.sql.memories import CURRENT_BY_HASH, resembled_filter
from cairn.store.sql.rows import memory_from_row


def resembling(
    conn: Conn,
    scope: str,
    content_hash: str,
    search: tuple[str, Vector, int, float],
    *,
    session_ef: int,
) -> Resembling:
    """`Store.resembling` on one connection; `search` is its (identity, vector, k, at_least),
    `session_ef` the connection's HNSW candidate list."""
    identity, vector, k, at_least = search
    dims = int(vector.shape[0])
    where, params = filter_sql(resembled_filter(scope))
    params.update(query=vector_param(vector), k=k)
    inside = in_transaction(conn)
    with conn.pipeline():
        same = conn.execute(POSTGRES.sql(CURRENT_BY_HASH), (scope, content_hash))
        statement = nearest_sql(identity, dims, where, indexed=True, rows=True)
        near = queue_search(conn, statement, params, candidates(k, session_ef), session_ef,
                            inside=inside)  # fmt: skip
    row = same.fetchone()
    if row is not None:
        return Resembling(memory_from_row(POSTGRES, row))
    rows = near.fetchall()
    if len(rows) < k:  # the index's scan ran out (see `vectors.nearest`): search exactly
        exact = nearest_sql(identity, dims, where, indexed=False, rows=True)
        rows = conn.execute(exact, params).fetchall()
    hits = ((memory_from_row(POSTGRES, hit[:-1]), similarity(hit[-1])) for hit in rows)
    return Resembling(
        None, tuple((memory, cosine) for memory, cosine in hits if cosine >= at_least)
    )
