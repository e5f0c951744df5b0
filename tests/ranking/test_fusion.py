from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.ranking.fusion import (
    RECIPE,
    blend_dense,
    fuse_scores,
    max_normalise,
    neighbour_context,
    ranked,
    reciprocal_rank,
    relative_cut,
    window_vector,
)


def test_max_normalise_puts_the_best_at_one() -> None:
    assert max_normalise({"a": 4.0, "b": 1.0}) == {"a": 1.0, "b": 0.25}
    assert max_normalise({"a": 0.0}) == {"a": 0.0}
    assert max_normalise({}) == {}


def test_fuse_mixes_normalised_lexical_with_raw_dense() -> None:
    fused = fuse_scores({"a": 10.0, "b": 5.0}, {"a": 0.2, "b": 0.6, "c": 0.5}, lexical_weight=0.4)
    assert fused["a"] == pytest.approx(0.6 * 0.2 + 0.4 * 1.0)
    assert fused["b"] == pytest.approx(0.6 * 0.6 + 0.4 * 0.5)
    assert fused["c"] == pytest.approx(0.6 * 0.5)


def test_fuse_lets_a_strong_keyword_match_beat_a_vague_neighbour() -> None:
    fused = fuse_scores({"exact": 8.0}, {"exact": 0.30, "vague": 0.45}, RECIPE.lexical_weight)
    assert ranked(fused)[0][0] == "exact"


def test_blend_dense_falls_back_to_own_cosine_without_a_window() -> None:
    blended = blend_dense({"a": 0.4, "b": 0.6}, {"a": 0.8}, own_weight=0.5)
    assert blended == {"a": pytest.approx(0.6), "b": pytest.approx(0.6)}


def test_neighbour_context_stays_inside_the_list() -> None:
    texts = ["t0", "t1", "t2", "t3", "t4"]
    assert neighbour_context(texts, 2, 1, 1) == "t1 t3"
    assert neighbour_context(texts, 2, 2, 2) == "t0 t1 t3 t4"
    assert neighbour_context(texts, 0, 2, 0) == ""


def test_window_vector_weights_the_memory_itself_and_normalises() -> None:
    own = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    left = np.array([0.0, 1.0, 0.0], dtype=np.float32)
    right = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    window = window_vector(own, [left, right], self_weight=3.0)
    assert float(np.linalg.norm(window)) == pytest.approx(1.0)
    assert window == pytest.approx(np.array([3.0, 1.0, 1.0]) / np.sqrt(11.0))
    assert float(window @ own) > float(window @ left) > 0.0
    assert window_vector(own, [], self_weight=3.0) == pytest.approx(own)


def test_window_vector_falls_back_to_own_when_the_sum_vanishes() -> None:
    own = np.array([1.0, 0.0], dtype=np.float32)
    assert window_vector(own, [-own, -own, -own], self_weight=3.0) == pytest.approx(own)


def test_reciprocal_rank_rewards_agreement() -> None:
    fused = reciprocal_rank([{"a": 3.0, "b": 2.0}, {"b": 0.9, "c": 0.8}], k=1.0)
    assert ranked(fused)[0][0] == "b"
    with pytest.raises(ValueError, match="one weight per ranking"):
        reciprocal_rank([{"a": 1.0}], weights=[1.0, 2.0])


def test_relative_cut_keeps_the_best_and_near_ties() -> None:
    cut = relative_cut([("a", 1.0), ("b", 0.75), ("c", 0.69)], ratio=0.7)
    assert [key for key, _ in cut] == ["a", "b"]
    assert relative_cut([], 0.7) == []
    assert relative_cut([("only", 0.0)], 0.7) == [("only", 0.0)]


def test_ranked_is_deterministic_on_ties() -> None:
    assert ranked({"b": 1.0, "a": 1.0, "c": 2.0}) == [("c", 2.0), ("a", 1.0), ("b", 1.0)]


@given(
    st.dictionaries(st.text(min_size=1, max_size=3), st.floats(0, 50), max_size=8),
    st.dictionaries(st.text(min_size=1, max_size=3), st.floats(-1, 1), max_size=8),
)
def test_fused_scores_stay_bounded(lexical: dict[str, float], dense: dict[str, float]) -> None:
    fused = fuse_scores(lexical, dense, 0.35)
    assert set(fused) == set(lexical) | set(dense)
    for value in fused.values():
        assert -1.0 <= value <= 1.0 + 1e-9
