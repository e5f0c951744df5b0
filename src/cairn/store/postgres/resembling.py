"""Deduplication's reads on PostgreSQL in two round trips instead of three.

A new claim is compared with its scope first by content hash, then by its vector's closest
memories, whose rows deduplication then reads. The shared way (`sql/memories.py`) makes three
round trips of it inside remember's write transaction. Here a claim restated word for word
costs the hash lookup alone, as before; any other claim's search goes out with its hits' rows
joined in, pipelined with its candidate list's `SET LOCAL` and the restore
(`vectors.queue_search`). One statement for both, the search gated by the lookup, was tried:
the gate held (the HNSW scan never ran), but the statement took 0.7-0.8 ms where the lookup
alone takes 0.2 ms, and restatements are common.
"""

from __future__ import annotations

from typing import Any

from cairn.models import Memory
from cairn.store.base import NearSearch, Resembling
from cairn.store.postgres.connection import Conn
from cairn.store.postgres.dialect import POSTGRES
from cairn.store.postgres.filters import filter_sql
from cairn.store.postgres.vectors import (
    HIT_ROWS,
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
    search: NearSearch,
    *,
    session_ef: int,
) -> Resembling:
    """`Store.resembling` on one connection; `session_ef` is its HNSW candidate list."""
    identity, k = search.identity, search.k
    same = conn.execute(POSTGRES.sql(CURRENT_BY_HASH), (scope, content_hash)).fetchone()
    if same is not None:
        return Resembling(memory_from_row(POSTGRES, same))
    vector = search.vector()
    dims = int(vector.shape[0])
    where, params = filter_sql(resembled_filter(scope))
    params.update(query=vector_param(vector), k=k)
    statement = nearest_sql(identity, dims, where, indexed=True, select=HIT_ROWS)
    inside = in_transaction(conn)
    with conn.pipeline():
        found = queue_search(conn, statement, params, candidates(k, session_ef), session_ef,
                             inside=inside)  # fmt: skip
    rows: list[tuple[Any, ...]] = found.fetchall()
    if len(rows) < k:  # the index's scan ran out (see `vectors.nearest`): search exactly
        exact = nearest_sql(identity, dims, where, indexed=False, select=HIT_ROWS)
        rows = conn.execute(exact, params).fetchall()
    return Resembling(None, _close(rows, search.at_least))


def _close(rows: list[tuple[Any, ...]], at_least: float) -> tuple[tuple[Memory, float], ...]:
    """The hits at least `at_least` similar, most similar first (ties: the older memory)."""
    hits = [(memory_from_row(POSTGRES, row[:-1]), similarity(row[-1])) for row in rows]
    hits.sort(key=lambda hit: (-hit[1], hit[0].id))
    return tuple((memory, cosine) for memory, cosine in hits if cosine >= at_least)
