"""Issue 18, thirteenth round: the least a deduplicating PostgreSQL `remember` can take on this
machine and this schema, beside the product's own, in one process (docs/benchmarks.md,
"Thirteenth round"). Not product code: a measurement that reaches into the store's internals.

The "bare" remember does only what no implementation of the contract can skip, with none of
cairn's own work around it (no validation, no secret scan, no tags, no value comparison, no
Python between statements beyond building their parameters):

1. the claim's embedding (the same int8 MiniLM, one model call);
2. one round trip: the product's `BEGIN` with the lock timeout and the writers' advisory lock,
   the HNSW candidate list, and its content-hash lookup, as one simple query;
3. one round trip: the deduplication search (k 5, the scope's active and resting memories)
   with the hits' rows, the product's own statement;
4. one round trip: the memory, its event and vector (the product's one statement), the lexical
   entry, the `may_update` relation when a hit is at or over 0.82, and the durable `COMMIT`,
   pipelined.

Fresh claims of the bench's kind alternate between the product's `remember` and the bare one
on a store that `cairn bench scale` filled (HNSW built, vacuumed). Run from the repository root
with the server up:

    PYTHONPATH=src .venv/bin/python docs/experiments/issue18-remember-floor.py \
        'postgresql://postgres@/prof100k?host=/tmp' --calls 60 --ef 100

`--ef` sets the bare search's candidate list only (the product's stays 100): 40 is pgvector's
default and the least any deduplication here was measured to tolerate (990 of 1,000 sets right).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from psycopg import ClientCursor

from cairn.bench.scale import SCOPE
from cairn.bench.scale_fill import synthetic_claims
from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings import make_embedder
from cairn.embeddings.base import Embedder
from cairn.indexing import lexical_doc
from cairn.models import NewEvent, NewMemory
from cairn.remember import content_hash, summarise
from cairn.store.postgres import lexical
from cairn.store.postgres import store as pg_store
from cairn.store.postgres.dialect import POSTGRES
from cairn.store.postgres.filters import filter_sql
from cairn.store.postgres.vectors import HIT_ROWS, nearest_sql, vector_param
from cairn.store.sql.memories import CURRENT_BY_HASH, resembled_filter
from cairn.store.sql.rows import NEW_EVENTS, new_memory_params

AT_LEAST = 0.82  # Settings.dedup_threshold


def bare_remember(store: Any, embedder: Embedder, text: str, ef: int) -> None:
    now = datetime.now(UTC)
    vector = embedder.embed_many([text])[0]
    digest = content_hash(text)
    with store._db._pool.connection() as conn:
        # The product's own BEGIN-and-lock and hash lookup, its values inlined: one simple query.
        lookup = ClientCursor(conn).mogrify(POSTGRES.sql(CURRENT_BY_HASH), (SCOPE, digest))
        first = f"{store._db._begin}; SET LOCAL hnsw.ef_search = {int(ef)}; {lookup}"
        cursor = conn.execute(first)
        while cursor.nextset():
            pass
        if cursor.fetchone() is not None:  # a restatement: nothing to write
            conn.execute("COMMIT")
            return
        where, params = filter_sql(resembled_filter(SCOPE))
        params.update(query=vector_param(vector), k=5)
        search = nearest_sql(embedder.identity, 384, where, indexed=True, select=HIT_ROWS)
        near = [row[0] for row in conn.execute(search, params) if 1 - row[-1] >= AT_LEAST]
        statement, values = _write(embedder.identity, text, digest, vector, now)
        with conn.pipeline():
            conn.execute(statement, values)
            entry = lexical.entry_params(lexical_doc(text, (), None, None))
            conn.execute(pg_store._INDEX_NEW, entry)
            if near:
                conn.execute(
                    "INSERT INTO relations (from_id, to_id, kind, at) VALUES"
                    " (currval('memories_id_seq'), %s, 'may_update', %s) ON CONFLICT DO NOTHING",
                    (near[0], now),
                )
            conn.execute("COMMIT")


def _write(
    identity: str, text: str, digest: str, vector: Any, now: datetime
) -> tuple[str, dict[str, Any]]:
    """The product's memory-event-vector statement and its parameters for a plain fact."""
    memory = NewMemory(
        scope=SCOPE, type="fact", content=text, summary=summarise(text), durability="durable",
        weight=0.5, tags=(), reason=None, source_ref=None, pinned=False, branch=None,
        session_id=None, source_event_id=None, diff_text=None, diff_files=(), error_trace=None,
        integration=None, content_hash=digest, written_at=now, occurred_at=now,
    )  # fmt: skip
    row = new_memory_params(POSTGRES, memory)
    row.pop("source_event_id")
    event = NewEvent("remember", SCOPE, None, now, None, 0, {"content": text})
    columns = dict(zip(NEW_EVENTS.names, NEW_EVENTS.values(POSTGRES, event), strict=True))
    columns.pop("memory_id")
    values = {f"m_{k}": v for k, v in row.items()} | {f"e_{k}": v for k, v in columns.items()}
    values.update(v_identity=identity, v_dims=384, v_vector=vector_param(vector))
    statement = pg_store._add_with_event_sql(tuple(row), tuple(columns), tagged=False, indexed=True)
    return statement, values


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--calls", type=int, default=60, help="calls of each kind")
    parser.add_argument("--ef", type=int, default=100, help="the bare search's candidate list")
    args = parser.parse_args()
    settings = Settings(home=Path(tempfile.mkdtemp()))
    embedder = make_embedder(settings)
    claims = synthetic_claims(2 * args.calls + 20, seed=time.time_ns() % 1_000_000)
    product: list[float] = []
    bare: list[float] = []
    with Cairn.open(args.url, settings=settings, embedder=embedder) as mem:
        for claim in claims[:10]:  # warm both paths: pool, model, prepared statements
            mem.remember(claim, type="fact", scope=SCOPE)
        for claim in claims[10:20]:
            bare_remember(mem.store, embedder, claim, args.ef)
        for i, claim in enumerate(claims[20:]):
            start = time.perf_counter()
            if i % 2:
                bare_remember(mem.store, embedder, claim, args.ef)
                bare.append((time.perf_counter() - start) * 1000)
            else:
                mem.remember(claim, type="fact", scope=SCOPE)
                product.append((time.perf_counter() - start) * 1000)
    p, b = statistics.median(product), statistics.median(bare)
    print(
        f"product {p:.2f} ms (p95 {sorted(product)[int(0.95 * len(product))]:.2f})"
        f"  bare, ef {args.ef}: {b:.2f} ms (p95 {sorted(bare)[int(0.95 * len(bare))]:.2f})"
        f"  bare/product {b / p:.2f}"
    )


if __name__ == "__main__":
    main()
