"""`cairn reindex`: re-embed the memories another embedder wrote, in resumable batches.

A store keeps each memory's vector with the identity of the embedder that wrote it. After the
embedder changes (`CAIRN_EMBEDDER`, another model), memories written before have no vector the
current model can compare with: recall ranks them by keywords alone (`stale_vector` on the hit,
cairn.ranking.recall) until this runs.

Each batch reads the first `batch` waiting memories, embeds their content with the current
embedder, and writes their vectors and the windows around them in one transaction. A run
killed midway keeps every finished batch; the next run starts from what is still waiting,
because "waiting" is read from the store (a vector missing or of another identity), never
from a checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cairn.context import Context
from cairn.errors import InvalidInput
from cairn.neighbours import after_reembed
from cairn.remember import text_for_embedding

DEFAULT_BATCH = 64
MAX_BATCH = 10_000


@dataclass(frozen=True, slots=True)
class ReindexReport:
    embedder: str
    reindexed: int
    remaining: int
    batches: int


def reindex(
    ctx: Context,
    *,
    batch: int = DEFAULT_BATCH,
    max_batches: int | None = None,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> ReindexReport:
    """Re-embed every memory whose vector is missing or another embedder's.

    `on_start(waiting)` is told how many wait; `on_batch(n)` after each committed batch of `n`.
    `max_batches` stops early (what is left waits for the next run)."""
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
        raise InvalidInput(f"batch {batch!r} is out of range; give 1 to {MAX_BATCH}.")
    if max_batches is not None and max_batches < 0:
        raise InvalidInput(f"max_batches {max_batches!r} is negative; give 0 or more.")
    store, embedder = ctx.store, ctx.embedder
    identity = embedder.identity
    waiting, ids = store.stale_vectors(None, identity, batch)
    if on_start is not None:
        on_start(waiting)
    done = batches = 0
    while ids and (max_batches is None or batches < max_batches):
        memories = store.get_memories(ids)
        vectors = embedder.embed_many([text_for_embedding(m.content) for m in memories])
        with store.transaction():
            for memory, vector in zip(memories, vectors, strict=True):
                store.put_vector(memory.id, identity, vector)
            after_reembed(store, [m.id for m in memories], identity)
        done += len(memories)
        batches += 1
        if on_batch is not None:
            on_batch(len(memories))
        left, following = store.stale_vectors(None, identity, batch)
        if following and following[0] <= ids[-1] and set(following) & set(ids):
            # A vector written above did not take: stop rather than loop over it forever.
            raise InvalidInput(f"mem_{following[0]} could not be re-embedded; check the store.")
        waiting, ids = left, following
    return ReindexReport(identity, done, waiting, batches)
