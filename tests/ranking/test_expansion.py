"""Dense pseudo-relevance feedback: the query moved towards its best first-pass memories."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cairn.ranking.expansion import expanded_query, feedback_ids


def unit(values: list[float]) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_the_query_moves_towards_the_mean_of_its_best_matches() -> None:
    query, top = unit([1, 0, 0]), [unit([0, 1, 0]), unit([0, 1, 1])]
    moved = expanded_query(query, top, 0.2)
    centroid = np.mean(top, axis=0)
    assert np.isclose(np.linalg.norm(moved), 1.0, atol=1e-6)
    assert float(moved @ centroid) > float(query @ centroid)
    assert float(moved @ query) > 0.9  # a nudge, not a new query


def test_nothing_to_add_leaves_the_query_as_it_is() -> None:
    query = unit([0.3, 0.4, 0.5])
    assert np.array_equal(expanded_query(query, [], 0.2), query)
    assert np.array_equal(expanded_query(query, [unit([1, 0, 0])], 0.0), query)
    # A centroid cancelling the query exactly falls back to the query.
    assert np.array_equal(expanded_query(query, [-query], 1.0), query)


def test_feedback_takes_the_best_and_breaks_ties_to_the_newer() -> None:
    scores = {1: 0.5, 2: 0.9, 3: 0.5, 4: 0.1}
    assert feedback_ids(scores, 3) == [2, 3, 1]
    assert feedback_ids(scores, 0) == []
    assert feedback_ids({}, 5) == []


@given(
    arrays(np.float32, 8, elements=st.floats(-1, 1, width=32)),
    st.lists(arrays(np.float32, 8, elements=st.floats(-1, 1, width=32)), max_size=5),
    st.floats(0, 2),
)
def test_the_moved_query_is_finite_and_unit_length_or_the_query(
    query: np.ndarray, top: list[np.ndarray], weight: float
) -> None:
    moved = expanded_query(query, top, weight)
    assert moved.shape == query.shape and np.all(np.isfinite(moved))
    norm = float(np.linalg.norm(moved))
    assert np.isclose(norm, 1.0, atol=1e-4) or np.array_equal(moved, query)
