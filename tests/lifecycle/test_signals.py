"""The lifecycle multipliers: decay by durability, access boost, acts, resting — all bounded."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.models import Memory
from cairn.ranking.signals import (
    access_boost,
    acts_multiplier,
    acts_part,
    decay_factor,
    lifecycle_multiplier,
    signal_parts,
    strength,
)

NOW = datetime(2026, 9, 1, tzinfo=UTC)


def memory(**changes: object) -> Memory:
    base = Memory(
        id=1, scope="project:x/y", type="fact", content="c", summary="c", durability="semantic",
        weight=0.5, tags=(), reason=None, source_ref=None, pinned=False, branch=None,
        session_id=None, source_event_id=None, diff_text=None, diff_files=(), error_trace=None,
        integration="python", content_hash="h", written_at=NOW, occurred_at=NOW, until=None,
        replaces=None, replaced_by=None, status="active",
    )  # fmt: skip
    return replace(base, **changes)  # type: ignore[arg-type]


def test_decay_rates_follow_durability() -> None:
    assert decay_factor("episodic", 10) == pytest.approx(math.exp(-1.5))
    assert decay_factor("semantic", 10) == pytest.approx(math.exp(-0.3))
    assert decay_factor("permanent", 1000) == 1.0
    assert decay_factor("episodic", 10, never=True) == 1.0


def test_a_fresh_default_memory_is_neutral() -> None:
    assert lifecycle_multiplier(memory(), NOW) == pytest.approx(1.0)
    assert signal_parts(memory(), NOW) == {
        "lifecycle": 1.0,
        "acts": 1.0,
        "feedback": 1.0,
        "resting": 1.0,
    }


def test_old_episodic_memories_fade_and_use_counteracts() -> None:
    old = memory(durability="episodic", written_at=NOW - timedelta(days=10))
    assert lifecycle_multiplier(old, NOW) < 0.9
    used = replace(old, access_count=30, cited=10)
    assert lifecycle_multiplier(used, NOW) > lifecycle_multiplier(old, NOW)
    assert access_boost(0) == 1.0 and access_boost(10) > access_boost(1)


def test_pinned_memories_and_preferences_never_decay() -> None:
    long_ago = NOW - timedelta(days=400)
    for kept in (
        memory(pinned=True, written_at=long_ago),
        memory(type="preference", written_at=long_ago),
    ):
        assert strength(kept, NOW) == pytest.approx(0.5)


def test_acts_lift_and_lower_symmetrically() -> None:
    assert acts_multiplier(0, 0) == 1.0
    assert acts_multiplier(1, 0) == pytest.approx(1 / acts_multiplier(0, 1))
    assert acts_multiplier(1, 1) == 1.0
    assert signal_parts(memory(status="resting"), NOW)["resting"] == 0.5


def test_acts_and_feedback_together_stay_within_bounds() -> None:
    lifted = memory(confirmed=50, evidence={"feedback": {"helped": 50, "harmed": 0}})
    feedback = 2.0 ** (50 / 52)
    assert acts_part(lifted) * feedback == pytest.approx(2.0)
    lowered = memory(contradicted=50, evidence={"feedback": {"helped": 0, "harmed": 50}})
    assert acts_part(lowered) * (2.0 ** (-50 / 52)) == pytest.approx(0.5)


@given(
    weight=st.floats(0, 1),
    days=st.floats(0, 3650),
    access=st.integers(0, 10_000),
    durability=st.sampled_from(["episodic", "semantic", "permanent"]),
    confirmed=st.integers(0, 1000),
    contradicted=st.integers(0, 1000),
)
def test_every_multiplier_is_bounded(
    weight: float, days: float, access: int, durability: str, confirmed: int, contradicted: int
) -> None:
    m = memory(weight=weight, durability=durability, access_count=access,
               written_at=NOW - timedelta(days=days), confirmed=confirmed,
               contradicted=contradicted)  # fmt: skip
    parts = signal_parts(m, NOW)
    assert 0.75 <= parts["lifecycle"] <= 1.25
    assert 0.5 <= parts["acts"] <= 2.0
