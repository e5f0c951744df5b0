"""The recall pipeline: candidates (lexical + dense), fusion, multipliers, cut, gate.

Backends hand over candidate documents, statistics and cosines; everything that decides an
order lives here and in the sibling modules, so SQLite and PostgreSQL rank identically.

For each phrasing (the query, then each of `also`):

1. Lexical candidates: the `LEXICAL_POOL` best keyword matches, scored with BM25F over the
   memory's fields and its neighbours' text (`context`), with per-scope statistics.
2. Dense candidates: the `DENSE_POOL` memories whose window vector (the memory read with its
   session neighbours, cairn.neighbours) is closest to the query, plus the cosine of every
   lexical candidate.
3. Fusion: 0.7 × window cosine + 0.3 × BM25 / best BM25 (cairn.ranking.fusion), times the date
   lift when the query names a time (cairn.ranking.dates).

Phrasings are merged by each memory's best score. The best `rerank_pool` memories are loaded
and multiplied by their life signals (cairn.ranking.signals: lifecycle, acts, resting, recency;
the feedback multiplier is applied by `cairn.sessions.enrich`). Then, with `cut`:

4. the relative cut drops memories under 0.7 × the best score (the best stays);
5. from `gate_min_scope_size` memories in the visible scopes, a memory neither close to the
   query (own cosine) nor covering enough of its words (idf-weighted coverage) is dropped, so an
   unanswerable question gets nothing; a memory passing by a small margin is `weak`.

`cut=False` skips 4 and 5 and returns the top `limit` by rank. Every part of a score is kept in
`Scored.parts`, which `recall(explain=True)` returns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from cairn.context import Context
from cairn.embeddings.base import Vector
from cairn.models import Memory
from cairn.ranking.dates import occurred_within, query_ranges
from cairn.ranking.fusion import RECIPE, blend_dense, covers_query, fuse_scores
from cairn.ranking.lexical import BM25F, DEFAULT_FIELD_WEIGHTS, CorpusStats, query_terms
from cairn.ranking.signals import recency_lift, signal_parts
from cairn.store.base import LEXICAL_FIELDS, LexicalDoc, MemoryFilter

LEXICAL_POOL = 100
DENSE_POOL = 100
RELATIVE_CUT = RECIPE.cut_ratio
FIELD_WEIGHTS = {**DEFAULT_FIELD_WEIGHTS, "context": RECIPE.context_field_weight}
# Fields that are the memory itself (not its neighbours): what coverage is measured on.
OWN_FIELDS = tuple(name for name in LEXICAL_FIELDS if name != "context")


@dataclass(frozen=True, slots=True)
class RecallQuery:
    text: str
    filt: MemoryFilter
    limit: int
    cut: bool = True
    also: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scored:
    memory: Memory
    score: float
    weak: bool = False
    parts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Lexical:
    """A phrasing's keyword matches: BM25F scores, and what coverage needs later."""

    scores: dict[int, float] = field(default_factory=dict)
    docs: dict[int, LexicalDoc] = field(default_factory=dict)
    idf: dict[str, float] = field(default_factory=dict)

    def coverage(self, memory_id: int) -> float:
        """Share of the query's idf mass whose terms the memory itself holds (not its context)."""
        doc = self.docs.get(memory_id)
        total = sum(self.idf.values())
        if doc is None or total <= 0.0:
            return 0.0
        own = set(" ".join(doc.field(name) for name in OWN_FIELDS).split())
        return sum(weight for term, weight in self.idf.items() if term in own) / total


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One phrasing's candidates and the parts of their scores."""

    text: str
    vector: Vector
    lexical: Lexical
    dense: dict[int, float]
    fused: dict[int, float]
    date: dict[int, float]

    def score(self, memory_id: int) -> float:
        return self.fused[memory_id] * self.date.get(memory_id, 1.0)


def rerank_pool(limit: int) -> int:
    """How many fused candidates are loaded for the life signals to re-order.

    The signals move a score by ×0.2 … ×3 but rarely far from ×1; loading twice the answer
    (at least 24) keeps the memory reads of a recall small.
    """
    return max(2 * limit, 24)


def retrieve(ctx: Context, query: RecallQuery) -> list[Scored]:
    now = ctx.clock()
    phrasings = [candidates(ctx, text, query.filt, now) for text in (query.text, *query.also)]
    best: dict[int, tuple[float, Phrasing]] = {}
    for phrasing in phrasings:
        for memory_id in phrasing.fused:
            value = phrasing.score(memory_id)
            if memory_id not in best or value > best[memory_id][0]:
                best[memory_id] = (value, phrasing)
    # Scores are compared to 6 decimals: float32 and float64 arithmetic on the two backends
    # differ in the last bits, and a true tie must fall to the newer memory on both.
    top = sorted(best, key=lambda i: (-round(best[i][0], 6), -i))[: rerank_pool(query.limit)]
    memories = {m.id: m for m in ctx.store.get_memories(top)}
    ranked = sorted(
        (_scored(memories[i], best[i][1], now) for i in top if i in memories),
        key=lambda s: (-round(s.score, 6), -s.memory.id),
    )
    if query.cut:
        ranked = _relative_cut(ranked)
        ranked = judge(ctx, ranked, {i: best[i][1] for i in best}, query.filt, query.limit)
    return ranked[: query.limit]


def candidates(ctx: Context, text: str, filt: MemoryFilter, now: datetime) -> Phrasing:
    """Lexical and dense candidates of one phrasing, fused, with the date lift."""
    pending = ctx.start_query_embedding(text)  # the model runs while the keywords are read
    lexical = _lexical(ctx, filt, query_terms(text))
    vector = pending.result()
    window = ctx.store.window_similarities(
        filt, ctx.embedder.identity, vector, DENSE_POOL, list(lexical.scores)
    )
    dense = window
    if RECIPE.own_embedding_weight > 0.0:
        own = _own_cosines(ctx, list(window), vector)
        dense = blend_dense(own, window, RECIPE.own_embedding_weight)
    fused = fuse_scores(lexical.scores, dense, RECIPE.lexical_weight)
    return Phrasing(text, vector, lexical, dense, fused, _date_lifts(ctx, text, fused, now))


def _lexical(ctx: Context, filt: MemoryFilter, terms: Sequence[str]) -> Lexical:
    """BM25F over the memory's fields and its neighbours' text, per-scope statistics."""
    if not terms:
        return Lexical()
    rows = ctx.store.lexical_candidates(filt, terms, LEXICAL_POOL)
    if not rows:
        return Lexical()
    stats = ctx.store.lexical_stats(filt, terms)
    scorer = BM25F(
        CorpusStats(stats.doc_count, stats.document_frequency, stats.average_length),
        field_weights=FIELD_WEIGHTS,
        k1=RECIPE.bm25_k1,
        b=RECIPE.bm25_b,
    )
    idf = {term: scorer.idf(term) for term in terms}
    docs = {row.memory_id: row.doc for row in rows}
    scores = {
        memory_id: scorer.score_joined(
            terms, {name: doc.field(name) for name in LEXICAL_FIELDS}, idf
        )
        for memory_id, doc in docs.items()
    }
    return Lexical(scores, docs, idf)


def _own_cosines(ctx: Context, ids: Sequence[int], vector: Vector) -> dict[int, float]:
    found = ctx.store.get_vectors(ids, ctx.embedder.identity)
    query = np.asarray(vector, dtype=np.float32)
    return {memory_id: float(own @ query) for memory_id, own in found.items()}


def _date_lifts(
    ctx: Context, text: str, fused: dict[int, float], now: datetime
) -> dict[int, float]:
    ranges = query_ranges(text, now)
    if not ranges or not fused:
        return {}
    times = ctx.store.occurred_times(list(fused))
    return {
        memory_id: RECIPE.date_lift
        for memory_id, at in times.items()
        if occurred_within(at, ranges)
    }


def _scored(memory: Memory, phrasing: Phrasing, now: datetime) -> Scored:
    memory_id = memory.id
    parts = {
        "lexical": phrasing.lexical.scores.get(memory_id, 0.0),
        "dense": phrasing.dense.get(memory_id, 0.0),
        "fused": phrasing.fused[memory_id],
        "date": phrasing.date.get(memory_id, 1.0),
    }
    factors = {**signal_parts(memory, now), "recency": recency_lift(memory, now)}
    parts.update(factors)
    score = phrasing.score(memory_id) * math.prod(factors.values())
    return Scored(memory, score, parts=parts)


def _relative_cut(ranked: list[Scored]) -> list[Scored]:
    if not ranked:
        return ranked
    floor = ranked[0].score * RELATIVE_CUT
    return [ranked[0], *(s for s in ranked[1:] if s.score >= floor)]


def judge(
    ctx: Context,
    ranked: list[Scored],
    phrasing_of: dict[int, Phrasing],
    filt: MemoryFilter,
    limit: int,
) -> list[Scored]:
    """Mark barely passing memories weak and, in a large enough scope, drop uncovered ones."""
    if not ranked:
        return ranked
    gate = _scope_size(ctx, filt) >= RECIPE.gate_min_scope_size
    vectors = ctx.store.get_vectors([s.memory.id for s in ranked], ctx.embedder.identity)
    kept: list[Scored] = []
    for scored in ranked:
        memory_id = scored.memory.id
        phrasing = phrasing_of[memory_id]
        own = vectors.get(memory_id)
        cosine = (
            float(own @ np.asarray(phrasing.vector, dtype=np.float32)) if own is not None else 0.0
        )
        coverage = phrasing.lexical.coverage(memory_id)
        covered = covers_query(
            cosine, coverage, min_cosine=RECIPE.min_cosine, min_coverage=RECIPE.min_coverage
        )
        if gate and not covered:
            continue
        weak = cosine < RECIPE.weak_cosine and coverage < RECIPE.weak_coverage
        parts = {**scored.parts, "cosine": cosine, "coverage": coverage}
        kept.append(replace(scored, weak=weak, parts=parts))
        if len(kept) >= limit:
            break
    return kept


def _scope_size(ctx: Context, filt: MemoryFilter) -> int:
    """Current memories in the visible scopes: below the gate's threshold idf is too noisy.

    Read from the lexical statistics (every memory is indexed), which the SQLite backend caches
    between writes, rather than counting rows on every recall."""
    return ctx.store.lexical_stats(MemoryFilter(scopes=filt.scopes), ()).doc_count
