"""The dense half of a recall's reads: window searches, and the vectors they carry.

A window search (`ContextStore.window_matches`) scores memories by their window vectors. On
PostgreSQL the server computes the cosines, and the search hands back each match's window and
own vectors with them (`WindowMatches`), so what a recall asks about the same memories later
costs no round trip:

- feedback re-scores the first pass's candidates against the moved query from their window
  vectors (`rescored`): at 100k that second scoring was 1.6-2.1 ms of server work a recall;
- feedback's best matches and the gate's survivors are among the matches, whose own vectors
  came along (`own_vectors`, `gate_vectors`).

SQLite scores in memory and carries nothing; every function here then asks the store, as a
recall did before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from functools import partial

import numpy as np

from cairn.context import Context
from cairn.embeddings.base import Vector
from cairn.store.base import MemoryFilter, WindowMatches

DENSE_POOL = 100


def window_cosines(
    ctx: Context, filt: MemoryFilter, vector: Vector, include: Sequence[int], k: int = DENSE_POOL
) -> dict[int, float]:
    """Window cosines of the `k` closest memories the filter admits, and of `include`."""
    return ctx.store.window_similarities(filt, ctx.embedder.identity, vector, k, include)


def window_matches(
    ctx: Context, filt: MemoryFilter, vector: Vector, include: Sequence[int], k: int = DENSE_POOL
) -> WindowMatches:
    """`window_cosines`, with the vectors where the store read them."""
    return ctx.store.window_matches(filt, ctx.embedder.identity, vector, k, include)


def joined(first: WindowMatches, then: WindowMatches) -> WindowMatches:
    """Both searches' matches; `then`'s where both scored a memory (the same cosine)."""
    return WindowMatches(
        {**first.cosines, **then.cosines},
        {**first.vectors, **then.vectors},
        {**first.own, **then.own},
    )


def own_vectors(ctx: Context, ids: Sequence[int], known: Mapping[int, Vector]) -> dict[int, Vector]:
    """The own vectors of `ids` (this embedder's): from those a search carried when it carried
    them all, else read from the store."""
    carried = _all_carried(ids, known)
    return carried if carried is not None else ctx.store.get_vectors(ids, ctx.embedder.identity)


def _all_carried(ids: Sequence[int], known: Mapping[int, Vector]) -> dict[int, Vector] | None:
    """The vectors of `ids` when `known` holds every one of them, else None."""
    return {i: known[i] for i in ids} if all(i in known for i in ids) else None


def gate_vectors(
    ctx: Context, ids: Sequence[int], carried: Mapping[int, Vector]
) -> Future[dict[int, Vector]] | None:
    """The own vectors the gate will read of the survivors among `ids`: those the searches
    carried when they carried them all, else read beside the rows where the store reads on two
    connections; None leaves the read to the gate."""
    known = _all_carried(ids, carried)
    if known is not None:
        done: Future[dict[int, Vector]] = Future()
        done.set_result(known)
        return done
    if ctx.store.concurrent_reads:
        return ctx.start_read(partial(ctx.store.get_vectors, ids, ctx.embedder.identity))
    return None


def rescored(
    ctx: Context,
    filt: MemoryFilter,
    vector: Vector,
    ids: Sequence[int],
    known: Mapping[int, Vector],
) -> dict[int, float]:
    """Window cosines of `ids` against `vector`: from the window vectors the first pass read
    when it read them all (PostgreSQL: no round trip, no second scoring on the server), else
    asked of the store. Computed as pgvector does, the dot over both norms (to 1e-6 of the
    server's float arithmetic); a zero vector scores 0."""
    if not ids or any(i not in known for i in ids):
        return window_cosines(ctx, filt, vector, include=ids, k=0)
    matrix = np.stack([np.asarray(known[i], dtype=np.float64) for i in ids])
    query = np.asarray(vector, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    dots = matrix @ query
    cosines = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0.0)
    return dict(zip(ids, np.clip(cosines, -1.0, 1.0).tolist(), strict=True))
