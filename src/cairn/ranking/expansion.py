"""Pseudo-relevance feedback for the dense search: the query moved towards its best matches.

A question's own embedding is often far from the words its answer uses ("What books has Tim
read?" against "Tim: I just finished the Name of the Wind"). The first pass of a recall already
fuses keywords and the embedding; its best few memories are likely on topic, and their own
vectors carry the vocabulary the question lacks. The first pass's candidates are scored again
with `normalise(query + weight * mean(own vectors of the top `docs`))` (Rocchio, positive part
only): no model call and no second search, only the exact window cosines of the memories the
first pass found (`cairn.ranking.recall.candidates`).

The query's own vector stays what the gate judges (cairn.ranking.gate): feedback may re-order
candidates, never decide whether a question is answerable. `FusionRecipe.feedback_weight` and
`feedback_docs` were chosen by leave-one-conversation-out (`cairn bench locomo-fit`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from cairn.embeddings.base import Vector


def feedback_ids(scores: Mapping[int, float], docs: int) -> list[int]:
    """The `docs` best-scored memories, ties to the newer (higher id), as recall breaks them."""
    return sorted(scores, key=lambda key: (-round(scores[key], 6), -key))[: max(0, docs)]


def expanded_query(query: Vector, top: Sequence[Vector], weight: float) -> Vector:
    """normalise(query + weight * mean(top)); the query itself when there is nothing to add."""
    base = np.asarray(query, dtype=np.float32)
    if not top or weight <= 0.0:
        return base
    centroid = np.mean(np.stack([np.asarray(v, dtype=np.float32) for v in top]), axis=0)
    moved = base + np.float32(weight) * centroid
    norm = float(np.linalg.norm(moved))
    if norm <= 1e-12:
        return base
    result: Vector = (moved / np.float32(norm)).astype(np.float32)
    return result
