"""Recall on PostgreSQL runs its dense search beside its keyword search (`concurrent_reads`):
the same ranking as one search after the other, no deadlock under concurrent recalls, and no
read on another thread while a transaction holds writes only its connection sees."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.config import Settings
from cairn.context import EMBED_WORKERS
from cairn.embeddings.hashing import HashingEmbedder
from cairn.ranking.fusion import RECIPE
from cairn.ranking.lexical import query_terms
from cairn.ranking.recall import LEXICAL_POOL, RecallQuery, candidates, retrieve
from cairn.refs import parse_memory_refs
from cairn.scope import visible_scopes
from cairn.store.base import MemoryFilter
from cairn.store.postgres import PostgresStore
from clocks import FakeClock

pytestmark = pytest.mark.postgres

SCOPE = "project:acme/api"
TINY = "project:acme/tiny"
_WORDS = ["deploy", "staging", "cluster", "cache", "token", "rotate", "schema", "migration"]
_WORDS += ["queue", "retry", "worker"]
QUERIES = [
    "how do deploys reach the staging cluster",
    "cache token rotation",
    "schema migration retry",
    "queue worker",
    "nothing in here matches",
]


@pytest.fixture
def mem(postgres_database_url: str, tmp_path: Path) -> Iterator[Cairn]:
    settings = Settings(home=tmp_path / "home", embedder="hashing", url=postgres_database_url)
    # A fixed clock: recency lifts would otherwise move between two rankings of one query.
    clock = FakeClock()
    with Cairn.open(
        settings=settings, embedder=HashingEmbedder(), cwd=tmp_path, clock=clock
    ) as opened:
        for n in range(330):  # more than the dense pool of 100 in the scope
            words = [_WORDS[(n * 7 + k) % len(_WORDS)] for k in range(1 + n % 4)]
            scope = SCOPE if n % 3 else "project:other/team"  # another scope the filter refuses
            filler = f"alpha{n % 17} beta{n % 29} gamma{n % 11} delta{n % 5}"
            opened.remember(f"note {n}: {' '.join(words)} {filler}", type="fact", scope=scope)
        yield opened


def _ranked(mem: Cairn, text: str) -> list[tuple[int, float, tuple[tuple[str, float], ...]]]:
    # Uncut and deep, so a candidate scored differently anywhere in the pool shows.
    filt = MemoryFilter(scopes=visible_scopes(SCOPE))
    query = RecallQuery(text=text, filt=filt, limit=100, cut=False)
    return [
        (s.memory.id, round(s.score, 9), tuple(sorted(s.parts.items())))
        for s in retrieve(mem._ctx, query)
    ]


def _first_pass(mem: Cairn, text: str) -> tuple[dict[int, float], dict[int, float]]:
    """The dense and fused scores of the pass before feedback (which re-scores the dense pool
    on the caller's thread, and would hide a first pass that went wrong)."""
    recipe = replace(RECIPE, feedback_weight=0.0)
    filt = MemoryFilter(scopes=visible_scopes(SCOPE))
    found = candidates(mem._ctx, text, filt, mem._ctx.clock(), recipe)
    return found.dense, found.fused


def test_the_concurrent_searches_rank_as_the_serial_ones(
    mem: Cairn, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert mem.store.concurrent_reads
    together = {q: _ranked(mem, q) for q in QUERIES}
    first = {q: _first_pass(mem, q) for q in QUERIES}
    monkeypatch.setattr(PostgresStore, "concurrent_reads", property(lambda _self: False))
    assert not mem.store.concurrent_reads
    apart = {q: _ranked(mem, q) for q in QUERIES}
    assert together == apart
    assert first == {q: _first_pass(mem, q) for q in QUERIES}
    assert any(together.values())  # the corpus answers some of them
    assert any(_outside_the_dense_pool(mem, q) for q in QUERIES)  # the split had work to do


def _outside_the_dense_pool(mem: Cairn, text: str) -> bool:
    """Whether some keyword match of `text` is not among its dense pool's 100."""
    filt = MemoryFilter(scopes=visible_scopes(SCOPE))
    terms = query_terms(text)
    lexical = {row.memory_id for row in mem.store.lexical_candidates(filt, terms, LEXICAL_POOL)}
    vector = mem._ctx.embed_query(text)
    dense = mem.store.window_similarities(filt, mem._ctx.embedder.identity, vector, 100, ())
    return bool(lexical - set(dense))


def test_more_concurrent_recalls_than_workers_all_finish(mem: Cairn) -> None:
    expected = {q: _ranked(mem, q) for q in QUERIES}
    asked = [QUERIES[n % len(QUERIES)] for n in range(3 * EMBED_WORKERS)]
    callers = ThreadPoolExecutor(len(asked))
    try:
        futures = [callers.submit(_ranked, mem, q) for q in asked]
        wait(futures, timeout=60)
        assert all(f.done() for f in futures), "a recall waited forever"
    finally:
        callers.shutdown(wait=False)  # a stuck recall must fail the test, not hang it
    assert [f.result() for f in futures] == [expected[q] for q in asked]


def test_inside_a_transaction_reads_stay_on_its_connection(mem: Cairn) -> None:
    store = mem.store
    with store.transaction():
        assert not store.concurrent_reads
        added = mem.remember("zebra quagga okapi", type="fact", scope=TINY)
        [new_id] = parse_memory_refs([added.memory_id])
        # Not committed yet: only this connection sees it. A query sharing none of its words
        # finds it through the dense pool alone (the only memory of its scope).
        query = RecallQuery(
            text="deploy cluster", filt=MemoryFilter(scopes=(TINY,)), limit=100, cut=False
        )
        assert new_id in [s.memory.id for s in retrieve(mem._ctx, query)]
    assert store.concurrent_reads
