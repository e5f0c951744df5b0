"""`cairn bench scale`: remember and recall latency as the store grows, on either backend.

For each size a fresh store is filled in bulk (`cairn.bench.scale_fill`: synthetic claims,
vectors mixed from a pool of real embeddings, the storage-side bulk path), then the normal
paths are timed one call at a time: `recall` (query embedding included) and `remember` with
deduplication on (embedding included). Beside them, in the same process and on the same
vectors, the exact numpy nearest-10 (the physical floor of the dense half) is timed, and a
fresh process is started twice: once as a one-shot CLI `recall` (wall time, the cold start),
once to report the resident memory of a process that opened the store and answered recalls.

Each size is measured in the same process, so the ratio to the smallest size means something
on a noisy shared machine even when the absolute numbers drift.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.bench.scale_fill import SCOPE, Pool, fill, synthetic_claims
from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings.base import Embedder

Progress = Callable[[str, int], Callable[[int], None]]
# A fresh interpreter that opens the store, answers recalls and reports its resident memory.
_PROBE = """
import json, resource, sys, time
from cairn.core import Cairn
from cairn.config import Settings
location, scope, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
start = time.perf_counter()
with Cairn.open(location, settings=Settings.from_env()) as mem:
    opened = time.perf_counter()
    mem.recall(queries[0], scope=scope)
    first = time.perf_counter()
    for q in queries[1:]:
        mem.recall(q, scope=scope)
# VmHWM is this process's own high-water mark; ru_maxrss would include the parent's resident
# memory at the fork (Linux carries it across exec).
try:
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
    peak = int(hwm) / 1024
except (OSError, IndexError):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"open_ms": (opened - start) * 1000, "first_recall_ms": (first - opened) * 1000,
                  "peak_rss_mb": peak}))
"""


def _summary(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)
    return {
        "median_ms": round(statistics.median(samples), 3),
        "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 3),
        "n": len(samples),
    }


def _timed(calls: Sequence[Callable[[], object]]) -> dict[str, float]:
    samples: list[float] = []
    for call in calls:
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return _summary(samples)


def numpy_floor(
    matrix: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]
) -> dict[str, float]:
    """Exact nearest-10 by one matrix product and a partial sort, per query."""
    samples: list[float] = []
    for query in queries:
        start = time.perf_counter()
        scores = matrix @ query
        k = min(10, scores.size)
        top = np.argpartition(-scores, k - 1)[:k] if k else scores[:0]
        top[np.argsort(-scores[top])]
        samples.append((time.perf_counter() - start) * 1000)
    return _summary(samples)


@contextmanager
def fresh_location(store: str | None, workdir: Path, size: int) -> Iterator[str]:
    """A new empty store: a file under `workdir`, or a new database on the server of `store`."""
    if store is None:
        yield str(workdir / f"scale-{size}.db")
        return
    from cairn.bench.scale_pg import fresh_database

    with fresh_database(store, f"cairn_scale_{size}_{uuid.uuid4().hex[:8]}") as url:
        yield url


def _probe(location: str, queries: list[str], embedder_name: str, home: Path) -> dict[str, Any]:
    env = {**os.environ, "CAIRN_EMBEDDER": embedder_name, "CAIRN_HOME": str(home)}
    start = time.perf_counter()
    cli = subprocess.run(
        [sys.executable, "-c", "from cairn.adapters.cli import main; main()", "--store",
         location, "recall", queries[0], "--scope", SCOPE, "--json"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = (time.perf_counter() - start) * 1000
    if cli.returncode != 0:
        raise RuntimeError(f"the one-shot recall failed: {cli.stderr.strip()[-500:]}")
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, location, SCOPE, json.dumps(queries[:5])],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        raise RuntimeError(f"the memory probe failed: {probe.stderr.strip()[-500:]}")
    found: dict[str, Any] = json.loads(probe.stdout.strip().splitlines()[-1])
    return {"cli_recall_wall_ms": round(wall, 1), **{k: round(v, 1) for k, v in found.items()}}


def bench_size(
    embedder: Embedder,
    pool: Pool,
    size: int,
    ops: int,
    location: str,
    progress: Progress,
    home: Path,
    embedder_name: str | None = None,
) -> dict[str, Any]:
    settings = Settings(home=home)
    kept: list[npt.NDArray[np.float32]] = []
    with Cairn.open(location, settings=settings, embedder=embedder) as mem:
        ingest_s = fill(mem.store, embedder.identity, pool, size, progress(f"filling {size}", size),
             kept.append)  # fmt: skip
        build_ms = _build_index(mem)
        settle_ms = _settle(mem)
        queries = [" ".join(c.split()[1:6]) + "?" for c in synthetic_claims(ops, seed=size + 2)]
        matrix = np.concatenate(kept) if kept else np.zeros((0, embedder.dimensions), np.float32)
        floor = numpy_floor(matrix, np.asarray(embedder.embed_many(queries), np.float32))
        del kept, matrix
        recall = _timed([lambda q=q: mem.recall(q, scope=SCOPE) for q in queries])  # type: ignore[misc]
        fresh = synthetic_claims(ops, seed=size + 1)
        remember = _timed(
            [lambda c=c: mem.remember(c, type="fact", scope=SCOPE) for c in fresh]  # type: ignore[misc]
        )
    report: dict[str, Any] = {
        "memories": size,
        "ingest_memories_per_s": round(size / ingest_s, 1) if ingest_s > 0 else None,
        "index_build_ms": round(build_ms, 1),
        "vacuum_ms": round(settle_ms, 1),
        "recall": recall,
        "remember": remember,
        "numpy_exact_floor": floor,
    }
    if embedder_name is not None:
        report.update(_probe(location, queries, embedder_name, home))
    return report


def _build_index(mem: Cairn) -> float:
    """Time to make the filled store searchable: PostgreSQL's HNSW build, SQLite's first load."""
    start = time.perf_counter()
    if mem.store.backend == "postgres":
        from cairn.store.postgres.bulk import finish_bulk

        finish_bulk(mem.store)  # type: ignore[arg-type]
        mem.store.maintain()
    else:
        mem.recall("warm the dense index", scope=SCOPE)
    return (time.perf_counter() - start) * 1000


def _settle(mem: Cairn) -> float:
    """Time to vacuum the loaded tables (PostgreSQL), so no autovacuum runs through the timed
    calls; SQLite has nothing to do."""
    start = time.perf_counter()
    if mem.store.backend == "postgres":
        from cairn.store.postgres.bulk import settle

        settle(mem.store)  # type: ignore[arg-type]
    return (time.perf_counter() - start) * 1000


def _no_progress(_label: str, _total: int) -> Callable[[int], None]:
    return lambda _count: None


def bench_scale(
    embedder: Embedder,
    sizes: Sequence[int],
    ops: int,
    say: Callable[[str], None] = lambda _message: None,
    *,
    store: str | None = None,
    progress: Progress = _no_progress,
    pool_size: int = 2000,
    embedder_name: str | None = None,
) -> dict[str, Any]:
    """Latency at each store size. `store` is None (SQLite files in a temporary directory) or
    a `postgresql://` URL of a server where a database per size is created and dropped;
    `embedder_name` (CAIRN_EMBEDDER's value) enables the fresh-process probes."""
    if store is not None:
        from cairn.bench.scale_pg import connect

        connect(store).close()  # refuse an unreachable server before the slow steps
    say(f"scale: embedding a pool of {pool_size} claims")
    pool = Pool.embedded(embedder, min(pool_size, max(sizes, default=1)))
    runs = []
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as tmp:
        for size in sizes:
            with fresh_location(store, Path(tmp), size) as location:
                runs.append(
                    bench_size(
                        embedder, pool, size, ops, location, progress, Path(tmp), embedder_name
                    )
                )
                say(f"scale: timed {ops} recalls and {ops} remembers at {size} memories")
    base = runs[0]
    for run in runs:
        for op in ("recall", "remember"):
            run[f"{op}_median_ratio_to_smallest"] = round(
                run[op]["median_ms"] / max(base[op]["median_ms"], 1e-9), 2
            )
    backend = "sqlite" if store is None else "postgres"
    return {"embedder": embedder.identity, "backend": backend, "pool": pool_size, "runs": runs}
