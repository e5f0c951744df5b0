"""The abstention gate's rule, on its own (the pipeline is tested in test_recall)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from cairn.ranking.gate import GATE, Evidence, Gate, gate_idf, is_weak, passes

GIVEN = Gate(alone_cosine=0.4, min_cosine=0.2, min_coverage=0.6, per_decade=0.05)


def test_close_meaning_passes_without_a_shared_word() -> None:
    assert passes(GIVEN, Evidence(0.45, 0.0, overlap=False))
    assert not passes(GIVEN, Evidence(0.35, 0.0, overlap=False))


def test_a_shared_word_needs_closeness_or_coverage() -> None:
    assert passes(GIVEN, Evidence(0.25, 0.1, overlap=True))
    assert passes(GIVEN, Evidence(0.05, 0.7, overlap=True))
    assert not passes(GIVEN, Evidence(0.15, 0.3, overlap=True))


def test_the_floors_rise_with_the_scope_size() -> None:
    small = Evidence(0.42, 0.0, overlap=False, scope_size=1)
    large = Evidence(0.42, 0.0, overlap=False, scope_size=1000)
    assert passes(GIVEN, small) and not passes(GIVEN, large)
    assert GIVEN.lift(1000) == 3 * 0.05


def test_a_stale_memory_is_judged_on_coverage_alone() -> None:
    assert passes(GIVEN, Evidence(None, 0.7, overlap=True))
    assert not passes(GIVEN, Evidence(None, 0.3, overlap=True))
    assert is_weak(GIVEN, Evidence(None, 0.7, overlap=True))


@given(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(1, 500))
def test_gate_idf_is_finite_and_positive(docs: int, df: int, floor: int) -> None:
    value = gate_idf(docs, df, floor)
    assert math.isfinite(value) and value > 0


def test_gate_idf_counts_at_least_the_floor() -> None:
    assert gate_idf(1, 1, 50) == gate_idf(50, 1, 50)
    assert gate_idf(100, 1, 50) > gate_idf(50, 1, 50)


@given(st.floats(-1, 1), st.floats(0, 1), st.booleans(), st.integers(1, 100_000), st.floats(0, 1))
def test_passing_is_monotone_in_cosine(
    cosine: float, coverage: float, overlap: bool, size: int, more: float
) -> None:
    if passes(GATE, Evidence(cosine, coverage, overlap, size)):
        assert passes(GATE, Evidence(min(1.0, cosine + more), coverage, overlap, size))
