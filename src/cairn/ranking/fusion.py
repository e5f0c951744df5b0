"""Fusing lexical and dense candidates, the relative cut and the coverage gate.

The recipe (`RECIPE`) was chosen on LoCoMo turns mode (five conversations, 760 questions of
categories 1-4; see docs/benchmarks.md) by measurement, not by taste:

* Each memory carries two embeddings: its own text, and its text inside a window of its
  neighbours (up to `window_before` earlier and `window_after` later memories of the same session,
  in source order). Its dense score is the mean of the two cosines. A memory that only makes sense
  after the one before it ("Super good, rich and creamy!") is found through its neighbours, while
  its own cosine keeps a self-contained memory on top.
* BM25F reads the neighbours' text too, as a `context` field weighted 0.45 beside content 1.0.
* Normalised-score fusion beat reciprocal-rank fusion by 4-6 points of recall@10 at every
  setting tried: the lexical scores are divided by the best lexical score of the query (so the
  top keyword match is 1.0) and mixed with the raw dense score, 0.35 lexical, 0.65 dense. Raw
  cosine is kept on purpose: its absolute level says how close the best memory really is, which
  rank-based fusion throws away.

The gate answers "does this memory cover enough of the query": a memory is returned only when its
own cosine reaches `min_cosine` or its lexical coverage (share of the query's idf mass whose terms
it holds) reaches `min_coverage`. On LoCoMo it leaves 0.8% of answerable questions with nothing and
99.2% of 50 absent-topic questions (geography, Kubernetes, SQL ...) with nothing.

Every function is pure and works on `id -> score` maps so the store backends and `recall` can
feed it whatever candidate sets they hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

# Memory ids are ints in the store and strings in benchmarks; every map function keeps its key.
K = TypeVar("K", int, str)


@dataclass(frozen=True, slots=True)
class FusionRecipe:
    lexical_weight: float = 0.35
    own_embedding_weight: float = 0.5
    window_before: int = 2
    window_after: int = 2
    context_field_weight: float = 0.45
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    cut_ratio: float = 0.7
    min_cosine: float = 0.35
    min_coverage: float = 0.6
    # Below this many memories in a scope idf is too noisy for the coverage gate (DESIGN §3.4).
    gate_min_scope_size: int = 50


RECIPE = FusionRecipe()


def neighbour_window(texts: Sequence[str], index: int, before: int, after: int) -> str:
    """The text at `index` with up to `before` earlier and `after` later texts, one per line.

    `texts` are the memories of one session in source order; the caller slices the session.
    """
    start = max(0, index - before)
    return "\n".join(texts[start : index + after + 1])


def neighbour_context(texts: Sequence[str], index: int, before: int, after: int) -> str:
    """Only the neighbours' text (without the memory itself): the BM25 `context` field."""
    start = max(0, index - before)
    return " ".join([*texts[start:index], *texts[index + 1 : index + after + 1]])


def max_normalise(scores: Mapping[K, float]) -> dict[K, float]:
    """Divide by the best score so the top is 1.0; empty or non-positive maps come back as zeros."""
    best = max(scores.values(), default=0.0)
    if best <= 0.0:
        return dict.fromkeys(scores, 0.0)
    return {key: value / best for key, value in scores.items()}


def blend_dense(
    own: Mapping[K, float], window: Mapping[K, float], own_weight: float
) -> dict[K, float]:
    """Dense score of each memory from its own cosine and its neighbour-window cosine.

    A memory missing its window embedding (written before its neighbours were known, or a scope
    without sessions) falls back to its own cosine alone.
    """
    return {
        key: own_weight * cos + (1.0 - own_weight) * window.get(key, cos)
        for key, cos in own.items()
    }


def fuse_scores(
    lexical: Mapping[K, float], dense: Mapping[K, float], lexical_weight: float
) -> dict[K, float]:
    """(1 - w) * dense + w * lexical / max(lexical), over the union of both candidate sets.

    The caller supplies a dense score for every lexical candidate (a cosine is cheap once the
    vectors are loaded); a memory absent from `dense` counts as cosine 0, one absent from
    `lexical` as no keyword match.
    """
    lex = max_normalise(lexical)
    keys = set(lex) | set(dense)
    return {
        key: (1.0 - lexical_weight) * dense.get(key, 0.0) + lexical_weight * lex.get(key, 0.0)
        for key in keys
    }


def reciprocal_rank(
    rankings: Sequence[Mapping[K, float]], weights: Sequence[float] | None = None, k: float = 60.0
) -> dict[K, float]:
    """Weighted reciprocal-rank fusion: sum of w / (k + rank) over the lists holding each key.

    Not the recall recipe (it lost on LoCoMo), but the right tool for merging lists whose scores
    are not comparable, such as the separate searches of `recall(also=...)`.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("reciprocal_rank needs one weight per ranking")
    fused: dict[K, float] = {}
    for scores, weight in zip(rankings, weights, strict=True):
        ordered = sorted(scores, key=lambda key: (-scores[key], key))
        for rank, key in enumerate(ordered, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


def ranked(scores: Mapping[K, float]) -> list[tuple[K, float]]:
    """Best first; ties broken by key so the order is deterministic."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def relative_cut(ranking: Iterable[tuple[K, float]], ratio: float) -> list[tuple[K, float]]:
    """Keep entries scoring at least `ratio` times the best; the best always stays."""
    items = list(ranking)
    if not items:
        return []
    floor = ratio * items[0][1]
    return [items[0]] + [item for item in items[1:] if item[1] >= floor]


def covers_query(cosine: float, coverage: float, *, min_cosine: float, min_coverage: float) -> bool:
    """Whether a memory covers enough of the query to be returned at all."""
    return cosine >= min_cosine or coverage >= min_coverage
