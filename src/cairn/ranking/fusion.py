"""Fusing lexical and dense candidates and the relative cut.

The recipe (`RECIPE`) was chosen on LoCoMo turns mode (five conversations, 760 questions of
categories 1-4; the runs are in docs/benchmarks.md) by measurement, not by taste:

* A memory is read with its session neighbours: up to `window_before` earlier and
  `window_after` later memories of the same scope and session, in write order.
  - Dense: its *window vector* is the normalised sum of its own vector, weighted
    `window_self_weight`, and its neighbours' own vectors. A memory that only makes sense after
    the one before it ("Super good, rich and creamy!") is found through its neighbours, while
    the self weight keeps a self-contained memory on top. The window is built from stored
    vectors: no model call, nothing re-embedded when a neighbour arrives. Embedding the joined
    window text with the model was measured too and did no better (R@10 0.791 against 0.805
    with the same lexical part and date lift), at the price of re-embedding two memories per
    write.
  - Lexical: BM25F reads the neighbours' text as a `context` field weighted 0.45 beside
    content 1.0 (cairn.ranking.lexical).
* Normalised-score fusion beat reciprocal-rank fusion by 4-6 points of recall@10 at every
  setting tried: the lexical scores are divided by the best lexical score of the query (so the
  top keyword match is 1.0) and mixed with the raw window cosine, 0.3 lexical, 0.7 dense. Raw
  cosine is kept on purpose: its absolute level says how close the best memory really is,
  which rank-based fusion throws away.
* A query naming a date or a month lifts memories that occurred then (cairn.ranking.dates),
  ×`date_lift`.
* The dense search runs twice: the second time with the query moved towards its best
  first-pass memories (cairn.ranking.expansion, `feedback_weight`, `feedback_docs`).
* A query naming one speaker lowers what other speakers said, ×`other_speaker`
  (cairn.ranking.speakers).
* A query asking for a list can lower each session's later memories, ×`session_decay` per
  better-ranked memory of the same session (cairn.ranking.breadth); off in `RECIPE`.

`cairn bench locomo-fit` re-chooses the fusion-time constants (lexical weight, date lift,
speaker, feedback and session breadth) by leave-one-conversation-out and reports the held-out
figure.

Whether a memory covers the query enough to be returned at all is the gate's question
(cairn.ranking.gate), asked after the relative cut.

Every function is pure and works on `id -> score` maps so the store backends and `recall` can
feed it whatever candidate sets they hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

# Memory ids are ints in the store and strings in benchmarks; every map function keeps its key.
K = TypeVar("K", int, str)


@dataclass(frozen=True, slots=True)
class FusionRecipe:
    lexical_weight: float = 0.3
    # Share of the dense score taken from the memory's own cosine; the rest is the window cosine
    # (whose vector already holds the memory itself at `window_self_weight`). 0.0, 0.1 and 0.3
    # were within half a point of each other; 0.0 needs one cosine per candidate instead of two.
    own_embedding_weight: float = 0.0
    window_before: int = 2
    window_after: int = 2
    window_self_weight: float = 3.0
    context_field_weight: float = 0.45
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    date_lift: float = 1.25
    cut_ratio: float = 0.7
    # A memory said by another speaker than the one the query names (cairn.ranking.speakers).
    other_speaker: float = 0.8
    # Dense pseudo-relevance feedback (cairn.ranking.expansion): how far the query moves towards
    # the mean of its `feedback_docs` best first-pass memories; 0 turns it off.
    feedback_weight: float = 0.2
    feedback_docs: int = 5
    # A list question ("What books has Tim read?") lowers each session's n-th best memory by
    # `session_decay ** n` (cairn.ranking.breadth); 1 turns it off. Off: by leave-one-out it
    # lifted multi-hop but not the held-out total (R@10 0.816 without, 0.812 with 0.9 in the
    # grid), so `cairn bench locomo-fit` keeps it as a candidate, not a default.
    session_decay: float = 1.0


RECIPE = FusionRecipe()


def window_vector(
    own: npt.NDArray[np.float32], neighbours: Sequence[npt.NDArray[np.float32]], self_weight: float
) -> npt.NDArray[np.float32]:
    """Normalised `self_weight * own + sum(neighbours)`: the memory read in its session.

    All vectors are unit length (the embedders normalise); a degenerate sum falls back to `own`.
    """
    total = own.astype(np.float32) * np.float32(self_weight)
    for vector in neighbours:
        total = total + vector.astype(np.float32)
    norm = float(np.linalg.norm(total))
    if norm <= 1e-12:
        return own.astype(np.float32)
    return (total / np.float32(norm)).astype(np.float32)


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

    A memory missing a window cosine falls back to its own cosine alone.
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
