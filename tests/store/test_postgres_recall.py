"""Recall on PostgreSQL runs its dense search beside its keyword search (`concurrent_reads`):
the same ranking as one search after the other, no deadlock under concurrent recalls, and no
read on another thread while a transaction holds writes only its connection sees."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cairn import Cairn
from cairn.config import Settings
from cairn.context import EMBED_WORKERS, QuerySearch
from cairn.embeddings.hashing import HashingEmbedder
from cairn.ranking.dense import rescored
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


@pytest.mark.parametrize("searched", [False, True], ids=["search-outlasts", "search-first"])
def test_keyword_cosines_read_beside_the_search_rank_as_the_serial_ones(
    mem: Cairn, monkeypatch: pytest.MonkeyPatch, searched: bool
) -> None:
    """Whichever of the dense search and the keyword search finishes first, the keyword
    matches' cosines (read beside a search still running, or only the missed ones after it),
    the gate's vectors read beside the rows, and so the cut answer are the serial ones."""

    def finished(self: QuerySearch[object]) -> bool:
        if searched:
            self.result()  # wait, so the matches the search missed are read after it
        return searched

    monkeypatch.setattr(QuerySearch, "searched", finished)
    together = {q: (_ranked(mem, q), _answered(mem, q)) for q in QUERIES}
    monkeypatch.setattr(PostgresStore, "concurrent_reads", property(lambda _self: False))
    assert together == {q: (_ranked(mem, q), _answered(mem, q)) for q in QUERIES}
    assert any(answer for _, answer in together.values())  # the gate let some through


def _answered(mem: Cairn, text: str) -> list[tuple[int, float, bool]]:
    """The cut and gated answer, as `recall` gives it."""
    filt = MemoryFilter(scopes=visible_scopes(SCOPE))
    query = RecallQuery(text=text, filt=filt, limit=8, cut=True)
    return [(s.memory.id, round(s.score, 9), s.weak) for s in retrieve(mem._ctx, query)]


def test_feedback_rescores_from_the_first_pass_vectors_as_the_server_would(
    mem: Cairn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The moved query's cosines come from the window vectors the first pass read: what the
    server computes to 1e-6, with no statement; a memory without one sends all to the store."""
    filt = MemoryFilter(scopes=visible_scopes(SCOPE))
    identity = mem._ctx.embedder.identity
    first = mem.store.window_matches(filt, identity, mem._ctx.embed_query(QUERIES[1]), 100, [])
    moved = mem._ctx.embed_query(QUERIES[2])
    ids = list(first.cosines)
    served = mem.store.window_similarities(filt, identity, moved, 0, ids)
    asked: list[list[int]] = []
    real = PostgresStore.window_similarities

    def counted(self: PostgresStore, *args: Any) -> dict[int, float]:
        asked.append(list(args[-1]))
        return real(self, *args)

    monkeypatch.setattr(PostgresStore, "window_similarities", counted)
    local = rescored(mem._ctx, filt, moved, ids, first.vectors)
    assert asked == [] and local.keys() == served.keys() and len(ids) == 100
    assert all(local[i] == pytest.approx(served[i], abs=1e-6) for i in ids)
    partial_vectors = {i: v for i, v in first.vectors.items() if i != ids[0]}
    assert rescored(mem._ctx, filt, moved, ids, partial_vectors) == served
    assert asked == [ids]


def test_own_vectors_the_searches_carried_are_not_read_again(
    mem: Cairn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Feedback's best matches and the gate's survivors are among the searches' matches, whose
    own vectors came with them: a cut recall reads no vector after its searches."""
    expected = {q: _answered(mem, q) for q in QUERIES}
    reads: list[list[int]] = []
    real = PostgresStore.get_vectors

    def counted(self: PostgresStore, ids: Any, identity: str) -> Any:
        reads.append(list(ids))
        return real(self, ids, identity)

    monkeypatch.setattr(PostgresStore, "get_vectors", counted)
    assert {q: _answered(mem, q) for q in QUERIES} == expected
    assert reads == []


def test_the_answer_around_the_hits_read_beside_is_the_serial_one(
    mem: Cairn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Procedures and the direct hits' events read on the worker, the associated memories'
    events after: the same hits, provenance and evidence records as one read after another,
    with each memory's share of the records cut as one read for all would cut it."""
    claim = "Deploy keys rotate every Friday at noon."
    first = mem.remember(claim, type="fact", scope=SCOPE)
    mem.remember(
        "The audit trail is kept in HashiCorp Vault.",
        type="fact",
        scope=SCOPE,
        relates_to=[first.memory_id],
    )
    for _ in range(20):  # restated: more events under the hit than its share of the records
        mem.remember(claim, type="fact", scope=SCOPE)

    def answer() -> tuple[object, ...]:
        found = mem.recall("when do deploy keys rotate", scope=SCOPE, evidence="full")
        hits = [(h.ref, h.pathway, h.via, h.provenance) for h in found.hits]
        return hits, found.evidence, found.evidence_truncated, found.procedures

    together = answer()
    monkeypatch.setattr(PostgresStore, "concurrent_reads", property(lambda _self: False))
    assert answer() == together
    hits, evidence, _, _ = together
    assert [pathway for _, pathway, _, _ in hits] == ["direct", "associated"]
    # 21 events under the hit, cut to its share of 20 records between two memories (11), as
    # one read for both would have cut them; the associated memory's one event follows.
    under_hit = [r for r in evidence if r.supports == (first.memory_id,)]  # type: ignore[attr-defined]
    assert len(under_hit) == -(-(mem.settings.max_evidence_records + 1) // 2) == 11
    assert len(evidence) == 12  # type: ignore[arg-type]


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
