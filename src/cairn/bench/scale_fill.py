"""Filling a store for `cairn bench scale`: synthetic claims, a pool of real embeddings, bulk.

Embedding a million claims with the real model would take hours on two cores, so the fill
embeds a pool of distinct claims once and gives every memory a vector made from the pool: its
own claim's pool vector plus half of another pool vector and a little noise, normalised. The
vectors are real model outputs mixed, so they have the model's geometry (clusters, typical
cosines), and no two memories share a vector exactly. Queries are always embedded for real.

Memories go in through `cairn.store.bulk` (one transaction per batch), which is the number
reported as the storage-side ingest rate.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from cairn.embeddings.base import Embedder
from cairn.indexing import lexical_doc
from cairn.models import NewMemory, default_durability
from cairn.remember import content_hash, summarise
from cairn.store.base import Store
from cairn.store.bulk import BulkMemory
from cairn.store.bulk_load import bulk_add

BATCH = 5000
SCOPE = "project:bench/scale"
_TYPES = ("fact", "decision", "constraint", "lesson", "warning", "instruction")
_SUBJECTS = (
    "billing service", "auth middleware", "checkout flow", "search index", "CI pipeline",
    "mobile client", "payments worker", "feature flags", "audit log", "rate limiter",
    "session store", "email sender", "deploy script", "schema migration", "cache layer",
)  # fmt: skip
_VERBS = (
    "must retry", "drops", "caches", "validates", "logs", "rejects", "batches", "signs",
    "compresses", "times out on", "serialises", "encrypts", "deduplicates", "streams",
)  # fmt: skip
_OBJECTS = (
    "webhook payloads", "expired tokens", "large uploads", "unicode names", "null dates",
    "duplicate orders", "partial refunds", "stale sessions", "cold starts", "bulk exports",
)  # fmt: skip
_WHEN = (
    "under load", "after a deploy", "on Mondays", "in staging only", "for EU customers",
    "when Redis is down", "behind the proxy", "during backfills", "with HTTP/2", "at midnight",
)  # fmt: skip


def synthetic_claims(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"The {rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} "
        f"{rng.choice(_WHEN)} (note {seed}-{i})."
        for i in range(count)
    ]


@dataclass(frozen=True, slots=True)
class Pool:
    """Real embeddings of distinct claims, reused (mixed) for every memory of the fill."""

    claims: list[str]
    vectors: npt.NDArray[np.float32]

    @classmethod
    def embedded(cls, embedder: Embedder, size: int, seed: int = 7) -> Pool:
        claims = synthetic_claims(size, seed)
        vectors = np.asarray(embedder.embed_many(claims), dtype=np.float32)
        return cls(claims, vectors)

    def batch(self, start: int, count: int, seed: int) -> npt.NDArray[np.float32]:
        """Vectors of memories `start`..`start+count`: deterministic for a (seed, start)."""
        rng = np.random.default_rng((seed, start))
        size = len(self.claims)
        own = self.vectors[np.arange(start, start + count) % size]
        other = self.vectors[rng.integers(0, size, count)]
        noise = rng.standard_normal(own.shape).astype(np.float32) * 0.02
        mixed = own + 0.5 * other + noise
        unit: npt.NDArray[np.float32] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
        return unit.astype(np.float32)


def fill(
    store: Store,
    identity: str,
    pool: Pool,
    size: int,
    progress: Callable[[int], None],
    keep: Callable[[npt.NDArray[np.float32]], None],
) -> float:
    """Add `size` memories in batches; `progress` gets each batch's count, `keep` its vectors.

    Returns the seconds spent in the store (building the rows in Python is not counted)."""
    spent = 0.0
    for items, vectors in _batches(pool, size):
        start = time.perf_counter()
        bulk_add(store, identity, items)
        spent += time.perf_counter() - start
        keep(vectors)
        progress(len(items))
    return spent


def _batches(pool: Pool, size: int) -> Iterator[tuple[list[BulkMemory], npt.NDArray[np.float32]]]:
    # Written in the last minutes, in id order: a store of idle memories would be put to rest
    # (and rewritten) by the first recall of the day.
    base = datetime.now(UTC) - timedelta(milliseconds=size)
    for start in range(0, size, BATCH):
        count = min(BATCH, size - start)
        vectors = pool.batch(start, count, seed=size)
        items = []
        for n in range(count):
            i = start + n
            content = f"{pool.claims[i % len(pool.claims)][:-1]} #{i}."
            kind = _TYPES[i % len(_TYPES)]
            at = base + timedelta(milliseconds=i)
            memory = NewMemory(
                scope=SCOPE, type=kind, content=content, summary=summarise(content),
                durability=default_durability(kind), weight=0.5, tags=(), reason=None,
                source_ref=None, pinned=False, branch=None, session_id=None,
                source_event_id=None, diff_text=None, diff_files=(), error_trace=None,
                integration="bench", content_hash=content_hash(content), written_at=at,
                occurred_at=at,
            )  # fmt: skip
            event = {"content": content, "type": kind, "disposition": "created", "tags": []}
            items.append(
                BulkMemory(memory, vectors[n], lexical_doc(content, (), None, None), event)
            )
        yield items, vectors
