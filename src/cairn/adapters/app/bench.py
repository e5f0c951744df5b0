"""`cairn bench app`: the app's server time per page as the store grows (here, beside the app,
since nothing outside the adapters may import them).

Each size gets a fresh store filled in bulk through the store with pre-computed vectors (a
pool of real embeddings, reused: the fill measures nothing, so it should not wait for the
model), one memory a minute from 2026-01-01. Then every page is requested through the real
app (routes, guard, views, templates) in this process, one request at a time, and timed from
request to complete answer: the server's time, without a network or a browser. The smallest
size is the baseline the others are compared to, measured in the same process, since the
machine may be shared and noisy.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from cairn.adapters.app.routes import build_app
from cairn.bench.scale_fill import synthetic_claims
from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings.base import Embedder
from cairn.indexing import lexical_doc
from cairn.models import NewMemory, default_durability
from cairn.remember import content_hash, summarise

SCOPE = "project:bench/app"
POOL = 512  # distinct real vectors the fill cycles through
BATCH = 500
TYPES = ("fact", "decision", "constraint", "lesson", "warning", "instruction")
TAGS = ("billing", "auth", "deploy", "ci", "search", "payments", "cache")
TARGET_MS = 300.0  # a list page, server time, at 100k memories (issue 16)


def fill(mem: Cairn, embedder: Embedder, size: int, say: Callable[[str], None]) -> None:
    """Rows, vectors and lexical entries written straight through the store, a transaction per
    batch: what `remember` stores, without its per-call checks (the bench measures reads)."""
    pool = embedder.embed_many(synthetic_claims(POOL, seed=7))
    claims = synthetic_claims(size, seed=size)
    store, start = mem.store, datetime(2026, 1, 1, tzinfo=UTC)
    for offset in range(0, size, BATCH):
        say(f"app: filling {size} memories ({offset}/{size})")
        with store.transaction():
            for i, text in enumerate(claims[offset : offset + BATCH], start=offset):
                tags = (TAGS[i % len(TAGS)],)
                kind = TYPES[i % len(TYPES)]
                at = start + timedelta(minutes=i)
                memory_id = store.add_memory(
                    NewMemory(
                        scope=SCOPE,
                        type=kind,
                        content=text,
                        summary=summarise(text),
                        durability=default_durability(kind),
                        weight=0.5,
                        tags=tags,
                        reason=None,
                        source_ref=None,
                        pinned=False,
                        branch=None,
                        session_id=None,
                        source_event_id=None,
                        diff_text=None,
                        diff_files=(),
                        error_trace=None,
                        integration="bench",
                        content_hash=content_hash(text),
                        written_at=at,
                        occurred_at=at,
                    )
                )
                store.put_vector(memory_id, embedder.identity, pool[i % POOL])
                store.put_lexical(memory_id, lexical_doc(text, tags, None, None))


def pages(size: int) -> dict[str, str]:
    """The pages to time: the list (first and a deep page), filtered, searched, a card."""
    base = f"/memories?scope={SCOPE}"
    return {
        "list": base,
        "list_deep_page": f"{base}&cursor={size // 2}",
        "list_by_type": f"{base}&type=constraint",
        "list_by_tag": f"{base}&tag=deploy",
        "list_json": f"/memories.json?scope={SCOPE}",
        "search": f"{base}&q=why+does+the+billing+service+retry+webhook+payloads",
        "card": f"/memories/mem_{size // 3}?scope={SCOPE}",
        "scopes": "/scopes",
    }


def _timed(client: TestClient, path: str, requests: int) -> dict[str, float]:
    samples: list[float] = []
    for _ in range(requests):
        start = time.perf_counter()
        answer = client.get(path)
        samples.append((time.perf_counter() - start) * 1000)
        if answer.status_code != 200:
            raise RuntimeError(f"{path} answered {answer.status_code}: {answer.text[:200]}")
    samples.sort()
    return {
        "median_ms": round(statistics.median(samples), 2),
        "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 2),
        "n": len(samples),
    }


def bench_app_size(
    embedder: Embedder, size: int, requests: int, workdir: Path, say: Callable[[str], None]
) -> dict[str, Any]:
    settings = Settings(home=workdir / f"home-{size}", consolidate_interval=0)
    with Cairn.open(workdir / f"app-{size}.db", settings=settings, embedder=embedder) as mem:
        start = time.perf_counter()
        fill(mem, embedder, size, say)
        filled_s = time.perf_counter() - start
        client = TestClient(build_app(lambda: mem, token=None, loopback=True),
                            base_url="http://127.0.0.1:8766")  # fmt: skip
        timed: dict[str, Any] = {}
        for name, path in pages(size).items():
            say(f"app: timing {name} at {size} memories")
            client.get(path)  # warm: the first request loads caches and templates
            timed[name] = _timed(client, path, requests)
    return {"memories": size, "fill_s": round(filled_s, 1), "pages": timed}


def bench_app(
    embedder: Embedder,
    sizes: Sequence[int],
    requests: int,
    say: Callable[[str], None] = lambda _message: None,
) -> dict[str, Any]:
    """Server time per page at each size, and its ratio to the smallest size's."""
    with tempfile.TemporaryDirectory(prefix="cairn-bench-app-") as tmp:
        runs = [bench_app_size(embedder, size, requests, Path(tmp), say) for size in sizes]
    base = runs[0]["pages"]
    for run in runs:
        run["median_ratio_to_smallest"] = {
            name: round(timed["median_ms"] / max(base[name]["median_ms"], 0.01), 2)
            for name, timed in run["pages"].items()
        }
        worst = max(run["pages"][n]["median_ms"] for n in run["pages"] if n.startswith("list"))
        run["list_pages_within_target"] = worst <= TARGET_MS
    return {"embedder": embedder.identity, "target_ms": TARGET_MS, "runs": runs}
