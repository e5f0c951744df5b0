"""Feedback moves memories in later recalls, within the ×0.5…×2 bounds (DESIGN §3)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from cairn import Cairn
from cairn.ranking.feedback import (
    MAX_MULTIPLIER,
    MIN_MULTIPLIER,
    feedback_multiplier,
    memory_feedback_multiplier,
)

SCOPE = "project:example/api"
QUERY = "postgres connection pool settings"


@given(st.integers(min_value=-5, max_value=10**6), st.integers(min_value=-5, max_value=10**6))
def test_multiplier_is_bounded(helped: int, harmed: int) -> None:
    value = feedback_multiplier(helped, harmed)
    assert MIN_MULTIPLIER <= value <= MAX_MULTIPLIER


@given(st.integers(min_value=0, max_value=1000), st.integers(min_value=0, max_value=1000))
def test_multiplier_is_monotone_and_symmetric(helped: int, harmed: int) -> None:
    value = feedback_multiplier(helped, harmed)
    assert feedback_multiplier(helped + 1, harmed) > value
    assert feedback_multiplier(helped, harmed + 1) < value
    assert math.isclose(value * feedback_multiplier(harmed, helped), 1.0)


def test_multiplier_values() -> None:
    assert feedback_multiplier(0, 0) == 1.0
    assert math.isclose(feedback_multiplier(1, 0), 2 ** (1 / 3))
    assert math.isclose(feedback_multiplier(0, 1), 2 ** (-1 / 3))
    assert 1.9 < feedback_multiplier(500, 0) < 2.0
    assert 0.5 < feedback_multiplier(0, 500) < 0.51
    assert 0.96 < feedback_multiplier(9, 10) < 1.0
    assert memory_feedback_multiplier({}) == 1.0
    assert memory_feedback_multiplier({"feedback": "junk"}) == 1.0
    assert memory_feedback_multiplier({"feedback": {"helped": True}}) == 1.0
    assert math.isclose(memory_feedback_multiplier({"feedback": {"helped": 1}}), 2 ** (1 / 3))


def seed_pair(mem: Cairn) -> None:
    mem.remember("Set the postgres connection pool max size to 20.", type="fact", scope=SCOPE)
    mem.remember(
        "The postgres connection pool settings live in config/db.toml.", type="fact", scope=SCOPE
    )
    mem.remember("Unrelated: the logo is blue.", type="fact", scope=SCOPE)


def rounds(mem: Cairn, effect_for: dict[str, str], times: int) -> None:
    """`times` recalls in one session, each assessed with the given effects; then commit."""
    brief = mem.activate("tune the pool", scope=SCOPE)
    shown = [{"ref": ref, "used": False, "effect": "unknown"} for ref in brief.refs]
    if shown:
        mem.feedback(brief.session_id, brief.retrieval_id, shown)
    for _ in range(times):
        found = mem.recall(QUERY, session_id=brief.session_id, cut=False)
        items = [{"ref": ref, "used": True, "effect": effect} for ref, effect in effect_for.items()]
        mem.feedback(brief.session_id, found.retrieval_id, items)
    mem.commit(brief.session_id, outcome="success", summary="Tuned the pool.")


def test_helpful_feedback_lifts_and_harmful_lowers(mem: Cairn) -> None:
    seed_pair(mem)
    before = mem.recall(QUERY, scope=SCOPE, explain=True)
    top, second = before.hits[0], before.hits[1]
    rounds(mem, {second.ref: "helped", top.ref: "harmed"}, times=1)
    # cut=False: applied before the cut, harmful feedback may push a memory out of a cut recall
    after = mem.recall(QUERY, scope=SCOPE, explain=True, cut=False)
    order = [h.ref for h in after.hits]
    assert order.index(second.ref) < order.index(top.ref), "helped rose above harmed"
    lifted = next(h for h in after.hits if h.ref == second.ref)
    lowered = next(h for h in after.hits if h.ref == top.ref)
    assert lifted.explain is not None and lowered.explain is not None
    assert math.isclose(lifted.explain["feedback"], 2 ** (1 / 3))
    assert math.isclose(lowered.explain["feedback"], 2 ** (-1 / 3))


def test_feedback_stays_within_bounds(mem: Cairn) -> None:
    seed_pair(mem)
    first = mem.recall(QUERY, scope=SCOPE, explain=True)
    up, down = first.hits[0].ref, first.hits[1].ref
    rounds(mem, {up: "helped", down: "harmed"}, times=12)
    after = {h.ref: h for h in mem.recall(QUERY, scope=SCOPE, explain=True, cut=False).hits}
    up_factor = after[up].explain["feedback"]  # type: ignore[index]
    down_factor = after[down].explain["feedback"]  # type: ignore[index]
    assert 1.7 < up_factor < MAX_MULTIPLIER
    assert MIN_MULTIPLIER < down_factor < 0.6
    tallies = mem.get_memory(up, scope=SCOPE).records[0].memory.evidence["feedback"]
    assert tallies["helped"] == 12 and tallies["used"] == 12


def test_feedback_reorders_the_brief_sections(mem: Cairn) -> None:
    a = mem.remember("Every endpoint requires auth.", type="constraint", scope=SCOPE)
    b = mem.remember("Tabs are banned in YAML files.", type="constraint", scope=SCOPE)
    brief = mem.activate("review", scope=SCOPE)
    assert [m.memory_id for m in brief.constraints] == [b.memory_id, a.memory_id]
    mem.feedback(
        brief.session_id,
        brief.retrieval_id,
        [{"ref": a.memory_id, "used": True, "effect": "helped"}],
    )
    mem.commit(brief.session_id, outcome="success", summary="Reviewed.")
    again = mem.activate("review", scope=SCOPE)
    assert [m.memory_id for m in again.constraints] == [a.memory_id, b.memory_id]
