"""The recall pipeline: candidates (lexical + dense), fusion, multipliers, cut, gate.

Backends hand over candidate documents, statistics and cosines; everything that decides an
order lives here and in the sibling modules, so SQLite and PostgreSQL rank identically.

For each phrasing (the query, then each of `also`):

1. Lexical candidates: the `LEXICAL_POOL` best keyword matches, scored with BM25F over the
   memory's fields and its neighbours' text (`context`), with per-scope statistics.
2. Dense candidates: the `DENSE_POOL` memories whose window vector (the memory read with its
   session neighbours, cairn.neighbours) is closest to the query, plus the cosine of every
   lexical candidate. Where the store reads concurrently (PostgreSQL) the search for those
   memories runs during step 1, and the lexical candidates' cosines follow it.
3. Fusion: 0.7 × window cosine + 0.3 × BM25 / best BM25 (cairn.ranking.fusion), times the date
   lift when the query names a time (cairn.ranking.dates).
4. Feedback: the dense search runs again with the query moved towards the own vectors of the
   best few fused memories (cairn.ranking.expansion), and 2-3 are redone with it.

Phrasings are merged by each memory's best score. The best `rerank_pool` memories are loaded
and multiplied by their life signals (cairn.ranking.signals: lifecycle, acts, resting, recency;
the feedback multiplier is applied by `cairn.sessions.enrich`) and, when the query names one
speaker of `"<speaker>: ..."` memories, by the other speakers' multiplier
(cairn.ranking.speakers). When the recipe's `session_decay` is under 1 and the query asks for
a list ("What books has Tim read?"), each session's later memories are lowered so other
sessions get a place (cairn.ranking.breadth; off in `RECIPE`). Then, with `cut`:

5. the relative cut drops memories under 0.7 × the best score (the best stays);
6. the gate (cairn.ranking.gate), at every store size, drops a memory neither close to the
   query (own cosine) nor sharing enough of its words (idf-weighted coverage), so an
   unanswerable question gets nothing; a memory passing by a small margin is `weak`.

A memory whose vector another embedder wrote (the embedder changed; `cairn reindex` has not run)
has no cosine to offer. It is not cut for that: it competes on keywords alone, its lexical score
scaled as if it were as close as the best memory that has a current vector, and it is marked
`stale` (`stale_vector` on the hit).

Resting memories (idle, or contradicted twice) are candidates like any other and ranked lower by
the resting multiplier (×0.5, `resting` in explain; cairn.ranking.signals).

`cut=False` skips 5 and 6 and returns the top `limit` by rank. Every part of a score is kept in
`Scored.parts`, which `recall(explain=True)` returns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial

import numpy as np

from cairn.context import Context
from cairn.embeddings.base import Vector
from cairn.models import Memory
from cairn.ranking.breadth import asks_for_many, session_spread
from cairn.ranking.dates import DayRange, occurred_within, query_ranges
from cairn.ranking.dense import (
    gate_vectors,
    joined,
    own_vectors,
    rescored,
    window_matches,
)
from cairn.ranking.expansion import expanded_query, feedback_ids
from cairn.ranking.fusion import (
    RECIPE,
    FusionRecipe,
    blend_dense,
    fuse_scores,
    max_normalise,
)
from cairn.ranking.gate import GATE, Evidence, gate_idf, is_weak, passes
from cairn.ranking.lexical import BM25F, DEFAULT_FIELD_WEIGHTS, CorpusStats, query_terms
from cairn.ranking.signals import recency_lift, signal_parts
from cairn.ranking.speakers import speaker_factors
from cairn.store.base import LEXICAL_FIELDS, LexicalDoc, MemoryFilter, WindowMatches

LEXICAL_POOL = 100
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
    stale: bool = False  # no vector from the current embedder: ranked by keywords alone


@dataclass(frozen=True, slots=True)
class Lexical:
    """A phrasing's keyword matches: BM25F scores, and what coverage needs later."""

    scores: dict[int, float] = field(default_factory=dict)
    docs: dict[int, LexicalDoc] = field(default_factory=dict)
    # The gate's idf of each query term (cairn.ranking.gate.gate_idf), not BM25's.
    idf: dict[str, float] = field(default_factory=dict)
    scope_size: int = 0  # current memories in the visible scopes

    def held(self, memory_id: int) -> set[str]:
        """The query terms the memory itself holds (not its context)."""
        doc = self.docs.get(memory_id)
        if doc is None:
            return set()
        own = set(" ".join(doc.field(name) for name in OWN_FIELDS).split())
        return {term for term in self.idf if term in own}

    def coverage(self, memory_id: int) -> float:
        """Share of the query's idf mass whose terms the memory itself holds (not its context)."""
        total = sum(self.idf.values())
        if total <= 0.0:
            return 0.0
        return sum(self.idf[term] for term in self.held(memory_id)) / total


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One phrasing's candidates and the parts of their scores."""

    text: str
    vector: Vector
    lexical: Lexical
    dense: dict[int, float]
    fused: dict[int, float]
    date: dict[int, float]
    stale: frozenset[int] = frozenset()
    # Own vectors of candidates, where the store's search carried them (PostgreSQL).
    own: Mapping[int, Vector] = field(default_factory=dict)

    def score(self, memory_id: int) -> float:
        return self.fused[memory_id] * self.date.get(memory_id, 1.0)


def rerank_pool(limit: int) -> int:
    """How many fused candidates are loaded for the life signals to re-order.

    The signals move a score by ×0.2 … ×3 but rarely far from ×1; loading twice the answer
    (at least 24) keeps the memory reads of a recall small.
    """
    return max(2 * limit, 24)


def retrieve(ctx: Context, query: RecallQuery, recipe: FusionRecipe = RECIPE) -> list[Scored]:
    return retrieve_noting(ctx, query, recipe)[0]


def retrieve_noting(
    ctx: Context, query: RecallQuery, recipe: FusionRecipe = RECIPE
) -> tuple[list[Scored], bool]:
    """The ranked memories, and whether any candidate was waiting for `cairn reindex`.

    `recipe` is the fusion's constants; only `cairn bench locomo-fit` passes another."""
    now = ctx.clock()
    texts = (query.text, *query.also)
    phrasings = [candidates(ctx, text, query.filt, now, recipe) for text in texts]
    best: dict[int, tuple[float, Phrasing]] = {}
    for phrasing in phrasings:
        for memory_id in phrasing.fused:
            value = phrasing.score(memory_id)
            if memory_id not in best or value > best[memory_id][0]:
                best[memory_id] = (value, phrasing)
    # Scores are compared to 6 decimals: float32 and float64 arithmetic on the two backends
    # differ in the last bits, and a true tie must fall to the newer memory on both.
    top = sorted(best, key=lambda i: (-round(best[i][0], 6), -i))[: rerank_pool(query.limit)]
    # The gate reads the survivors' own vectors: carried by the searches, or read beside the rows.
    carried = {i: v for phrasing in phrasings for i, v in phrasing.own.items()}
    own = gate_vectors(ctx, top, carried) if query.cut else None
    memories = {m.id: m for m in ctx.store.get_memories(top)}
    speaker = _speaker_parts(memories, {i: best[i][1].text for i in memories}, recipe)
    ranked = sorted(
        (_scored(memories[i], best[i][1], now, speaker[i]) for i in top if i in memories),
        key=lambda s: (-round(s.score, 6), -s.memory.id),
    )
    if recipe.session_decay != 1.0 and asks_for_many(query.text):
        ranked = _spread(ranked, recipe.session_decay)
    if query.cut:
        ranked = _relative_cut(ranked)
        vectors = own.result() if own is not None else None
        ranked = judge(ctx, ranked, {i: best[i][1] for i in best}, query.limit, vectors)
    return ranked[: query.limit], any(phrasing.stale for phrasing in phrasings)


def candidates(
    ctx: Context, text: str, filt: MemoryFilter, now: datetime, recipe: FusionRecipe = RECIPE
) -> Phrasing:
    """Lexical and dense candidates of one phrasing, fused, with the date lift; then the first
    pass's candidates are scored again with the query moved towards its best matches
    (feedback). The moved query re-scores them with their exact window cosines instead of
    searching the store again: on LoCoMo the top ten stayed the same for 996 of 999 questions
    (R@k unchanged), and a second search was a whole dense scan on SQLite and a second HNSW
    search on PostgreSQL."""
    ranges = query_ranges(text, now)
    if ctx.store.concurrent_reads:
        vector, lexical, window = _searched_beside(ctx, filt, text)
    else:
        pending = ctx.start_query_embedding(text)  # the model runs while the keywords are read
        lexical = _lexical(ctx, filt, query_terms(text))
        vector = pending.result()
        window = window_matches(ctx, filt, vector, include=list(lexical.scores))
    first = _fused(ctx, vector, lexical, ranges, recipe, window.cosines)
    if recipe.feedback_weight > 0.0 and first.fused:
        top = feedback_ids(first.lifted(), recipe.feedback_docs)
        found = own_vectors(ctx, top, window.own)
        known = [found[i] for i in top if i in found]
        moved = expanded_query(vector, known, recipe.feedback_weight)
        again = rescored(ctx, filt, moved, list(first.dense), window.vectors)
        first = _fused(ctx, moved, lexical, ranges, recipe, again)
    # The gate reads the query's own vector: feedback re-orders, it never decides answerability.
    dense, fused, date, stale = first.dense, first.fused, first.date, first.stale
    return Phrasing(text, vector, lexical, dense, fused, date, stale, window.own)


def _searched_beside(
    ctx: Context, filt: MemoryFilter, text: str
) -> tuple[Vector, Lexical, WindowMatches]:
    """The query's vector, keyword matches, and window cosines of its dense pool and of every
    keyword match, for a store that reads on two connections at once (PostgreSQL).

    The model and then the dense search run on the worker while the keywords are read. The
    keyword matches' cosines are read as soon as the vector exists, while the dense search
    still runs (at 100k the HNSW search outlasts the keyword search); when it has already
    finished, only the matches it missed are read, as one search after the other would."""
    early = ctx.start_query_search(text, partial(window_matches, ctx, filt, include=()))
    lexical = _lexical(ctx, filt, query_terms(text))
    keyword = list(lexical.scores)
    if keyword and not early.searched():
        beside = window_matches(ctx, filt, early.vector(), include=keyword, k=0)
        vector, window = early.result()
        return vector, lexical, joined(beside, window)
    vector, window = early.result()
    missing = [i for i in keyword if i not in window.cosines]
    if missing:
        window = joined(window, window_matches(ctx, filt, vector, include=missing, k=0))
    return vector, lexical, window


@dataclass(frozen=True, slots=True)
class _Pass:
    """One dense search fused with the keyword matches."""

    dense: dict[int, float]
    fused: dict[int, float]
    date: dict[int, float]
    stale: frozenset[int]

    def lifted(self) -> dict[int, float]:
        return {key: value * self.date.get(key, 1.0) for key, value in self.fused.items()}


def _fused(
    ctx: Context,
    vector: Vector,
    lexical: Lexical,
    ranges: list[DayRange],
    recipe: FusionRecipe,
    window: dict[int, float],
) -> _Pass:
    """`window`: the window cosines of the dense pool and of every keyword match."""
    dense = window
    if recipe.own_embedding_weight > 0.0:
        own = _own_cosines(ctx, list(window), vector)
        dense = blend_dense(own, window, recipe.own_embedding_weight)
    # A keyword match the window search did not score has no vector from this embedder.
    stale = frozenset(i for i in lexical.scores if i not in window)
    fused = fuse_scores(lexical.scores, dense, recipe.lexical_weight)
    fused.update(keyword_only(lexical.scores, stale, dense, recipe.lexical_weight))
    return _Pass(dense, fused, _date_lifts(ctx, ranges, fused, recipe.date_lift), stale)


def keyword_only(
    lexical: dict[int, float],
    stale: frozenset[int],
    dense: dict[int, float],
    weight: float,
) -> dict[int, float]:
    """Fused scores for memories without a current vector, so they compete instead of losing
    the dense 70 %: each is scored as if its cosine were its normalised keyword score times the
    best cosine of this query (at least the gate's `min_cosine`, so a store whose every vector
    is stale still ranks by keywords)."""
    if not stale:
        return {}
    fresh = [value for key, value in dense.items() if key not in stale]
    reference = max([*fresh, GATE.min_cosine])
    normalised = max_normalise(lexical)
    return {
        key: normalised[key] * ((1.0 - weight) * reference + weight)
        for key in stale
        if key in normalised
    }


def _lexical(ctx: Context, filt: MemoryFilter, terms: Sequence[str]) -> Lexical:
    """BM25F over the memory's fields and its neighbours' text, per-scope statistics."""
    pool = ctx.store.lexical_pool(filt, terms, LEXICAL_POOL, MemoryFilter(scopes=filt.scopes))
    doc_count, rows, stats = pool.sized, pool.rows, pool.stats
    if not rows or stats is None:
        return Lexical(scope_size=doc_count)
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
    # The gate's rarity is read against the visible scopes' size (cached by the stores), so a
    # `types` or `tags` filter does not change whether a memory covers the query.
    coverage_idf = {
        term: gate_idf(doc_count, stats.document_frequency.get(term, 0), GATE.idf_min_docs)
        for term in terms
    }
    return Lexical(scores, docs, coverage_idf, doc_count)


def _own_cosines(ctx: Context, ids: Sequence[int], vector: Vector) -> dict[int, float]:
    found = ctx.store.get_vectors(ids, ctx.embedder.identity)
    query = np.asarray(vector, dtype=np.float32)
    return {memory_id: float(own @ query) for memory_id, own in found.items()}


def _date_lifts(
    ctx: Context, ranges: list[DayRange], fused: dict[int, float], lift: float
) -> dict[int, float]:
    if not ranges or not fused:
        return {}
    times = ctx.store.occurred_times(list(fused))
    return {memory_id: lift for memory_id, at in times.items() if occurred_within(at, ranges)}


def _speaker_parts(
    memories: dict[int, Memory], text_of: dict[int, str], recipe: FusionRecipe
) -> dict[int, float]:
    """Each loaded memory's speaker multiplier, judged against the phrasing that found it."""
    contents = {i: memory.content for i, memory in memories.items()}
    parts: dict[int, float] = {}
    for text in dict.fromkeys(text_of.values()):
        mine = {i for i, found_by in text_of.items() if found_by == text}
        factors = speaker_factors(text, contents, recipe.other_speaker)
        parts.update({i: factors[i] for i in mine})
    return parts


def _scored(memory: Memory, phrasing: Phrasing, now: datetime, speaker: float = 1.0) -> Scored:
    memory_id = memory.id
    stale = memory_id in phrasing.stale
    parts = {
        "lexical": phrasing.lexical.scores.get(memory_id, 0.0),
        "dense": phrasing.dense.get(memory_id, 0.0),
        "fused": phrasing.fused[memory_id],
        "date": phrasing.date.get(memory_id, 1.0),
    }
    if stale:
        parts["stale_vector"] = 1.0
    factors = {**signal_parts(memory, now), "recency": recency_lift(memory, now)}
    parts.update(factors)
    if speaker != 1.0:
        parts["speaker"] = speaker
    score = phrasing.score(memory_id) * speaker * math.prod(factors.values())
    return Scored(memory, score, parts=parts, stale=stale)


def _spread(ranked: list[Scored], decay: float) -> list[Scored]:
    """A list question's ranking with each session's later memories lowered (breadth)."""
    factors = session_spread([(s.memory.id, s.memory.session_id) for s in ranked], decay)
    spread = [
        replace(s, score=s.score * factors[s.memory.id], parts={**s.parts, "breadth": factor})
        if (factor := factors[s.memory.id]) != 1.0
        else s
        for s in ranked
    ]
    return sorted(spread, key=lambda s: (-round(s.score, 6), -s.memory.id))


def _relative_cut(ranked: list[Scored]) -> list[Scored]:
    if not ranked:
        return ranked
    floor = ranked[0].score * RELATIVE_CUT
    return [ranked[0], *(s for s in ranked[1:] if s.score >= floor)]


def judge(
    ctx: Context,
    ranked: list[Scored],
    phrasing_of: dict[int, Phrasing],
    limit: int,
    vectors: Mapping[int, Vector] | None = None,
) -> list[Scored]:
    """Drop memories that do not cover the query (cairn.ranking.gate); mark narrow passes weak.

    `vectors`: own vectors already read for (at least) the ranked memories."""
    if not ranked:
        return ranked
    if vectors is None:
        vectors = ctx.store.get_vectors([s.memory.id for s in ranked], ctx.embedder.identity)
    kept: list[Scored] = []
    for scored in ranked:
        memory_id = scored.memory.id
        phrasing = phrasing_of[memory_id]
        evidence = gate_evidence(phrasing, memory_id, vectors.get(memory_id))
        if not passes(GATE, evidence):
            continue
        parts = {**scored.parts, "coverage": evidence.coverage}
        if evidence.cosine is not None:
            parts["cosine"] = evidence.cosine
        kept.append(replace(scored, weak=is_weak(GATE, evidence), parts=parts))
        if len(kept) >= limit:
            break
    return kept


def gate_evidence(phrasing: Phrasing, memory_id: int, own: Vector | None) -> Evidence:
    """What the gate reads of one candidate: own cosine (None when stale), coverage, overlap."""
    cosine = None
    if own is not None and memory_id not in phrasing.stale:
        cosine = float(own @ np.asarray(phrasing.vector, dtype=np.float32))
    lexical = phrasing.lexical
    held = bool(lexical.held(memory_id))
    return Evidence(cosine, lexical.coverage(memory_id), held, lexical.scope_size)
