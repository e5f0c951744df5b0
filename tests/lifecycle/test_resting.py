"""Resting after 30 days uncited and unrestated; decay in the ranking; time moved by hand."""

from __future__ import annotations

from typing import Any

from cairn import Cairn
from cairn.adapters.mcp_render import hit_line

SCOPE = "project:example/lifecycle"


def status(mem: Cairn, ref: str) -> str:
    return mem.get_memory([ref], scope=SCOPE).records[0].memory.status


def test_an_uncited_memory_rests_after_thirty_days(mem: Cairn, clock: Any) -> None:
    ref = mem.remember("The nightly job rotates the logs", type="fact", scope=SCOPE).memory_id
    clock.advance(days=29)
    assert ref in mem.recall("nightly job logs", scope=SCOPE).refs
    clock.advance(days=2)
    found = mem.recall("nightly job logs", scope=SCOPE, explain=True)
    record = mem.get_memory([ref], scope=SCOPE).records[0]
    assert record.memory.status == "resting" and record.memory.evidence["rest"] == "idle"
    assert found.refs == [ref] and found.hits[0].resting  # still found, marked resting
    assert (found.hits[0].explain or {})["resting"] == 0.5
    assert mem.get_memory([ref], scope=SCOPE).records[0].memory.status == "resting"
    assert any(e.kind == "rest" and e.memory_id == int(ref[4:]) for e in mem.store.iter_events())


def test_pinned_memories_and_preferences_never_rest(mem: Cairn, clock: Any) -> None:
    pinned = mem.remember("Deploys need a ticket", type="constraint", scope=SCOPE, pinned=True)
    liked = mem.remember("Prefer tabs in the makefile", type="preference", scope=SCOPE)
    clock.advance(days=400)
    mem.recall("anything at all", scope=SCOPE)
    assert status(mem, pinned.memory_id) == "active"
    assert status(mem, liked.memory_id) == "active"


def test_cites_and_restatements_keep_a_memory_awake(mem: Cairn, clock: Any) -> None:
    cited = mem.remember("Retries use exponential backoff", type="fact", scope=SCOPE).memory_id
    restated = mem.remember("The cache lives in Redis", type="fact", scope=SCOPE).memory_id
    clock.advance(days=20)
    mem.remember("Webhook retries were tuned", type="fact", scope=SCOPE, used=[cited])
    mem.remember("The cache lives in Redis", type="fact", scope=SCOPE)
    clock.advance(days=11)
    mem.recall("retries cache", scope=SCOPE)
    assert status(mem, cited) == "active"
    assert status(mem, restated) == "active"
    clock.advance(days=20)
    mem.recall("retries cache", scope=SCOPE)
    assert status(mem, cited) == "resting"
    assert status(mem, restated) == "resting"


def test_a_cite_or_a_restatement_wakes_a_resting_memory(mem: Cairn, clock: Any) -> None:
    first = mem.remember("Builds run on arm64 runners", type="fact", scope=SCOPE).memory_id
    second = mem.remember("Artifacts expire after a week", type="fact", scope=SCOPE).memory_id
    clock.advance(days=31)
    mem.recall("builds artifacts", scope=SCOPE)
    assert status(mem, first) == "resting" and status(mem, second) == "resting"
    mem.remember("Moved builds to the new pool", type="fact", scope=SCOPE, used=[first])
    again = mem.remember("Artifacts expire after a week", type="fact", scope=SCOPE)
    assert again.memory_id == second and again.disposition == "matched"
    assert status(mem, first) == "active"
    assert status(mem, second) == "active"
    assert "rest" not in mem.get_memory([first], scope=SCOPE).records[0].memory.evidence


def test_decay_lowers_old_episodic_memories_in_the_ranking(mem: Cairn, clock: Any) -> None:
    task = mem.remember("Fix the flaky upload test today", type="task", scope=SCOPE).memory_id
    clock.advance(days=10)
    fact = mem.remember("The upload test is flaky on CI", type="fact", scope=SCOPE).memory_id
    result = mem.recall("flaky upload test", scope=SCOPE, cut=False, explain=True)
    parts = {hit.ref: hit.explain for hit in result.hits}
    assert parts[task] is not None and parts[fact] is not None
    assert parts[task]["lifecycle"] < 0.85 < parts[fact]["lifecycle"]
    assert result.refs.index(fact) < result.refs.index(task)


def test_a_resting_memory_ranks_below_an_active_one_and_stays_out_of_briefs(
    mem: Cairn, clock: Any
) -> None:
    old = mem.remember("The nightly job rotates the logs at midnight", type="constraint",
                       scope=SCOPE).memory_id  # fmt: skip
    clock.advance(days=31)
    mem.recall("anything", scope=SCOPE)  # the sweep rests the idle memory
    assert status(mem, old) == "resting"
    new = mem.remember("The nightly job rotates the logs at two", type="constraint",
                       scope=SCOPE, dedup=False).memory_id  # fmt: skip
    hits = mem.recall("nightly job rotates logs", scope=SCOPE, cut=False).hits
    assert [h.ref for h in hits] == [new, old]
    assert [h.resting for h in hits] == [False, True] and hits[1].score < hits[0].score
    cli_line = hit_line(hits[1])
    assert " resting" in cli_line
    brief = mem.activate("rotate the nightly job logs", scope=SCOPE)
    assert old not in brief.refs and new in brief.refs
