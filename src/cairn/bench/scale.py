"""`cairn bench scale`: remember and recall latency as the store grows.

Synthetic but varied claims (templates x vocabularies, seeded) fill a fresh store in bulk; then
the normal paths are timed one call at a time: `remember` with deduplication on (embedding
included) and `recall` (query embedding included). Each size is measured in the same process,
so the ratio between sizes means something on a noisy shared machine even when the absolute
numbers drift.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings.base import Embedder

_SUBJECTS = (
    "billing service",
    "auth middleware",
    "checkout flow",
    "search index",
    "CI pipeline",
    "mobile client",
    "payments worker",
    "feature flags",
    "audit log",
    "rate limiter",
    "session store",
    "email sender",
    "deploy script",
    "schema migration",
    "cache layer",
)
_VERBS = (
    "must retry",
    "drops",
    "caches",
    "validates",
    "logs",
    "rejects",
    "batches",
    "signs",
    "compresses",
    "times out on",
    "serialises",
    "encrypts",
    "deduplicates",
    "streams",
)
_OBJECTS = (
    "webhook payloads",
    "expired tokens",
    "large uploads",
    "unicode names",
    "null dates",
    "duplicate orders",
    "partial refunds",
    "stale sessions",
    "cold starts",
    "bulk exports",
)
_WHEN = (
    "under load",
    "after a deploy",
    "on Mondays",
    "in staging only",
    "for EU customers",
    "when Redis is down",
    "behind the proxy",
    "during backfills",
    "with HTTP/2",
    "at midnight",
)
_TYPES = ("fact", "decision", "constraint", "lesson", "warning", "instruction")


def synthetic_claims(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"The {rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} "
        f"{rng.choice(_WHEN)} (note {seed}-{i})."
        for i in range(count)
    ]


def _timed(calls: Sequence[Callable[[], object]]) -> dict[str, float]:
    samples: list[float] = []
    for call in calls:
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {
        "median_ms": round(statistics.median(samples), 3),
        "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 3),
        "n": len(samples),
    }


def bench_size(
    embedder: Embedder,
    size: int,
    ops: int,
    workdir: Path,
    say: Callable[[str], None] = lambda _message: None,
) -> dict[str, Any]:
    settings = Settings(home=workdir)
    scope = "project:bench/scale"
    with Cairn.open(workdir / f"scale-{size}.db", settings=settings, embedder=embedder) as mem:
        claims = synthetic_claims(size, seed=size)
        start = time.perf_counter()
        for offset in range(0, size, 256):
            say(f"scale: filling {size} memories ({offset}/{size})")
            batch = [
                {"content": c, "type": _TYPES[i % len(_TYPES)], "scope": scope}
                for i, c in enumerate(claims[offset : offset + 256])
            ]
            mem.remember_many(batch, dedup=False)
        ingest_s = time.perf_counter() - start
        fresh = synthetic_claims(ops, seed=size + 1)
        say(f"scale: timing {ops} remembers and {ops} recalls at {size} memories")
        remember = _timed(
            [lambda c=c: mem.remember(c, type="fact", scope=scope) for c in fresh]  # type: ignore[misc]
        )
        queries = [" ".join(c.split()[1:6]) + "?" for c in synthetic_claims(ops, seed=size + 2)]
        recall = _timed([lambda q=q: mem.recall(q, scope=scope) for q in queries])  # type: ignore[misc]
    return {
        "memories": size,
        "ingest_memories_per_s": round(size / ingest_s, 1),
        "remember": remember,
        "recall": recall,
    }


def bench_scale(
    embedder: Embedder,
    sizes: Sequence[int],
    ops: int,
    say: Callable[[str], None] = lambda _message: None,
) -> dict[str, Any]:
    """Latency at each store size; `say` receives a progress line per step."""
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as tmp:
        runs = [bench_size(embedder, size, ops, Path(tmp), say) for size in sizes]
    base = runs[0]
    for run in runs:
        run["recall_median_ratio_to_smallest"] = round(
            run["recall"]["median_ms"] / base["recall"]["median_ms"], 2
        )
    return {"embedder": embedder.identity, "runs": runs}
