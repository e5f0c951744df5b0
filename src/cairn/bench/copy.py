"""`cairn bench migrate`: how long a whole-store copy takes, there and back.

A SQLite store of `memories` synthetic memories is built in a temporary directory (each with a
384-d unit vector, a lexical document and an event, loaded through `load_rows`, so no model is
needed), copied with `cairn.migrate` into the given empty store (a `postgresql://` URL, or a
path), and copied back into a second temporary SQLite file. Each copy's time includes its
verification. The time `finish_load` spends (PostgreSQL: building the HNSW index) is reported
on its own.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from cairn.exchange import require_empty
from cairn.migrate import migrate
from cairn.store import open_store
from cairn.store.base import Store
from cairn.store.tables import time_text, vector_text

# fmt: off
_WORDS = (
    "deploy", "staging", "canary", "build", "bazel", "release", "train", "thursday", "service",
    "pipeline", "api", "postgres", "cache", "index", "schema", "migration", "rollback", "queue",
    "worker", "token", "budget", "review", "branch", "merge",
)
# fmt: on
_SCOPE = "project:bench/migrate"
_BATCH = 1000
_DIMS = 384


def bench_migrate(target: str, *, memories: int = 20_000, seed: int = 1) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="cairn-bench-migrate-") as tmp,
        _opened(str(Path(tmp) / "source.db")) as source,
        _opened(target) as middle,
        _opened(str(Path(tmp) / "back.db")) as back,
    ):
        require_empty(middle, "the migrate bench", "point --store")
        start = time.perf_counter()
        _fill(source, memories, seed)
        built = time.perf_counter() - start
        there = _timed(source, middle)
        again = _timed(middle, back)
        backend = middle.backend
    return {
        "memories": memories,
        "rows": there["rows"],
        "target": backend,
        "build_source_seconds": round(built, 1),
        f"sqlite_to_{backend}": there,
        f"{backend}_to_sqlite": again,
    }


@contextmanager
def _opened(location: str) -> Iterator[Store]:
    store = open_store(location)
    try:
        yield store
    finally:
        store.close()


def _timed(source: Store, target: Store) -> dict[str, Any]:
    start = time.perf_counter()
    result = migrate(source, target)
    return {
        "rows": result.copied,
        "seconds": round(time.perf_counter() - start, 1),
        "finish_load_seconds": round(result.finish_seconds, 1),
    }


def _fill(store: Store, memories: int, seed: int) -> None:
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed)
    at = time_text(datetime(2026, 8, 1, tzinfo=UTC))
    for first in range(1, memories + 1, _BATCH):
        rows: dict[str, list[dict[str, Any]]] = {}
        for i in range(first, min(memories, first + _BATCH - 1) + 1):
            text = " ".join(rng.choice(_WORDS) for _ in range(12))
            for name, row in _rows(i, text, vector_text(_unit(vectors)), at).items():
                rows.setdefault(name, []).append(row)
        with store.transaction():
            for name, batch in rows.items():
                store.load_rows(name, batch)
    store.finish_load()


def _rows(memory_id: int, text: str, vector: str, at: str) -> dict[str, dict[str, Any]]:
    lexical = {"content": text, "tags": "bench", "source_ref": "", "reason": "", "context": ""}
    return {
        "memories": _memory(memory_id, text, at),
        "vectors": {"memory_id": memory_id, "identity": "bench/384", "dims": _DIMS,
                    "vector": vector},
        "lexical": {"memory_id": memory_id, **lexical},
        "events": {"id": memory_id, "kind": "remember", "scope": _SCOPE, "session_id": None,
                   "at": at, "integration": "bench", "memory_id": memory_id,
                   "payload": {"disposition": "created"}},
    }  # fmt: skip


def _unit(rng: np.random.Generator) -> Any:
    vector = rng.normal(size=_DIMS).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _memory(memory_id: int, text: str, at: str) -> dict[str, Any]:
    return {
        "id": memory_id, "scope": _SCOPE, "type": "fact", "content": text,
        "summary": text[:60], "durability": "semantic", "weight": 0.5, "tags": ["bench"],
        "reason": None, "source_ref": None, "pinned": False, "branch": None, "session_id": None,
        "source_event_id": memory_id, "diff_text": None, "diff_files": [], "error_trace": None,
        "integration": "bench", "content_hash": f"bench-{memory_id}", "written_at": at,
        "occurred_at": at, "until": None, "replaces": None, "replaced_by": None,
        "status": "active", "confirmed": 0, "cited": 0, "contradicted": 0, "evidence": {},
        "last_cited_at": None, "access_count": 0, "last_accessed_at": None,
    }  # fmt: skip
