"""The LoCoMo retrieval metrics on hand-made rankings whose answers are worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.bench.locomo_metrics import (
    evidence_ranks,
    ndcg,
    reachable_share,
    session_of,
    session_recall,
    turn_recall,
)

# Turns mode: one dia_id per memory.
RANKED = [("D1:1",), ("D1:2",), ("D2:1",), ("D3:4",)]


def test_turn_recall_counts_the_evidence_found_in_the_top_k() -> None:
    evidence = ["D1:2", "D2:1"]
    assert turn_recall(RANKED, evidence, 1) == 0.0
    assert turn_recall(RANKED, evidence, 2) == 0.5
    assert turn_recall(RANKED, evidence, 3) == 1.0
    # k past the end of the list is the whole list.
    assert turn_recall(RANKED, evidence, 50) == 1.0
    assert turn_recall([], evidence, 10) == 0.0


def test_a_turn_listed_twice_in_the_evidence_counts_once() -> None:
    assert turn_recall(RANKED, ["D1:2", "D1:2", "D9:9"], 10) == 0.5


def test_an_observation_pointing_to_two_turns_finds_both() -> None:
    found = [("D5:1", "D5:3"), ("D1:1",)]
    assert turn_recall(found, ["D5:3", "D1:1"], 1) == 0.5
    assert turn_recall(found, ["D5:3", "D5:1"], 1) == 1.0


def test_no_evidence_has_no_recall() -> None:
    for metric in (
        lambda: turn_recall(RANKED, [], 5),
        lambda: session_recall(RANKED, [], 5),
        lambda: ndcg(RANKED, [], 10),
        lambda: reachable_share({"D1:1"}, []),
    ):
        with pytest.raises(ValueError, match="no evidence"):
            metric()


def test_sessions_are_the_part_before_the_colon() -> None:
    assert session_of("D3:7") == "D3"
    assert session_of("D10:1") == "D10"  # not D1
    assert session_of("D4") == "D4"


def test_session_recall_collapses_evidence_and_hits_to_sessions() -> None:
    # Evidence in sessions 1 (twice) and 3; the ranking reaches session 1 at rank 1 (a
    # different turn of it) and session 3 only at rank 4.
    evidence = ["D1:1", "D1:5", "D3:2"]
    found = [("D1:9",), ("D1:7",), ("D2:1",), ("D3:4",)]
    assert session_recall(found, evidence, 1) == (1.0, 0.0)
    assert session_recall(found, evidence, 3) == (1.0, 0.0)
    assert session_recall(found, evidence, 4) == (1.0, 1.0)
    assert session_recall(found, evidence, 100) == (1.0, 1.0)
    assert session_recall([("D2:1",)], evidence, 10) == (0.0, 0.0)
    # Session 10 is not session 1.
    assert session_recall([("D10:1",)], ["D1:1"], 10) == (0.0, 0.0)


def test_one_evidence_session_makes_any_and_all_the_same() -> None:
    assert session_recall([("D2:9",)], ["D2:1", "D2:2"], 1) == (1.0, 1.0)


def test_ndcg_by_hand() -> None:
    assert ndcg([("D1:1",)], ["D1:1"]) == 1.0
    # The only evidence turn at rank 2: 1/log2(3).
    assert ndcg([("D9:9",), ("D1:1",)], ["D1:1"]) == pytest.approx(1 / math.log2(3))
    # Two evidence turns at ranks 1 and 3: (1 + 1/2) / (1 + 1/log2(3)).
    found = [("D1:1",), ("D9:9",), ("D2:2",)]
    assert ndcg(found, ["D1:1", "D2:2"]) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    # Outside the top 10 counts nothing.
    assert ndcg([("D9:9",)] * 10 + [("D1:1",)], ["D1:1"]) == 0.0


def test_ndcg_credits_an_evidence_turn_once() -> None:
    # An observation pointing to both evidence turns is one relevant memory, and a second
    # memory pointing to an already credited turn adds nothing.
    found = [("D1:1", "D1:2"), ("D1:1",)]
    assert ndcg(found, ["D1:1", "D1:2"]) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_ndcg_ideal_is_capped_at_ten() -> None:
    evidence = [f"D1:{i}" for i in range(1, 13)]
    found = [(d,) for d in evidence[:10]]
    assert ndcg(found, evidence) == pytest.approx(1.0)


def test_evidence_ranks_are_the_first_memory_pointing_to_each() -> None:
    found = [("D1:1",), ("D1:2", "D1:1"), ("D1:2",)]
    assert evidence_ranks(found, ("D1:2", "D1:1", "D7:7")) == {"D1:2": 2, "D1:1": 1, "D7:7": None}
    assert evidence_ranks([], ("D1:1",)) == {"D1:1": None}
    assert evidence_ranks(found, ()) == {}


def test_reachable_share_is_the_ceiling_of_a_question() -> None:
    assert reachable_share({"D1:1", "D1:2"}, ["D1:1", "D4:4"]) == 0.5


dia = st.builds(lambda s, t: f"D{s}:{t}", st.integers(1, 4), st.integers(1, 4))
rankings = st.lists(st.lists(dia, min_size=1, max_size=3).map(tuple), max_size=15)
evidences = st.lists(dia, min_size=1, max_size=5)


@given(rankings, evidences)
def test_metric_bounds_and_orders(found: list[tuple[str, ...]], evidence: list[str]) -> None:
    previous = 0.0
    for k in (1, 5, 10, 20):
        value = turn_recall(found, evidence, k)
        assert previous <= value <= 1.0
        previous = value
        hit_any, hit_all = session_recall(found, evidence, k)
        assert hit_all <= hit_any
        # A found evidence turn is a found evidence session.
        assert value == 0.0 or hit_any == 1.0
        assert value < 1.0 or hit_all == 1.0
    assert 0.0 <= ndcg(found, evidence) <= 1.0 + 1e-12


@given(rankings, evidences, st.integers(1, 20))
def test_ranks_agree_with_recall(found: list[tuple[str, ...]], evidence: list[str], k: int) -> None:
    ranks = evidence_ranks(found, evidence)
    within = {d for d, rank in ranks.items() if rank is not None and rank <= k}
    assert turn_recall(found, evidence, k) == len(within) / len(set(evidence))


@given(st.lists(dia, min_size=1, max_size=10, unique=True))
def test_evidence_ranked_first_scores_a_perfect_ndcg(evidence: list[str]) -> None:
    found = [(d,) for d in evidence] + [("D9:9",)]
    assert ndcg(found, evidence) == pytest.approx(1.0)
    assert turn_recall(found, evidence, len(evidence)) == 1.0
