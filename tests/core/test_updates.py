"""A near-duplicate with other values is stored and linked as a possible update: get_memory
shows the link, recall puts the newer claim first and marks the conflict, tidy proposes the
correction and accepting it replaces the older version. Both backends."""

from __future__ import annotations

from datetime import timedelta

import pytest

from cairn import Cairn, Conflict, InvalidInput, NotFound, history
from cairn.embeddings.base import MAX_EMBED_CHARS
from clocks import FakeClock

SCOPE = "project:example/updates"
OLD = "Python 3.11 is required for CI."
NEW = "Python 3.12 is required for CI."


def pair(mem: Cairn, clock: FakeClock) -> tuple[str, str]:
    old = mem.remember(OLD, type="constraint", scope=SCOPE).memory_id
    clock.advance(days=1)
    new = mem.remember(NEW, type="constraint", scope=SCOPE)
    assert new.disposition == "created" and new.may_update == old
    return old, new.memory_id


def test_a_changed_version_is_stored_and_linked_both_ways(mem: Cairn, clock: FakeClock) -> None:
    old = mem.remember(OLD, type="constraint", scope=SCOPE).memory_id
    result = mem.remember(NEW, type="constraint", scope=SCOPE)
    assert (result.disposition, result.may_update, result.changed) == (
        "created", old, "3.11 → 3.12"
    )  # fmt: skip
    assert result.similarity is not None and result.similarity >= 0.82
    records = {r.ref: r for r in mem.get_memory([old, result.memory_id], scope=SCOPE).records}
    assert records[result.memory_id].memory.content == NEW
    assert records[result.memory_id].may_update == (old,)
    assert records[old].may_be_updated_by == (result.memory_id,)
    assert records[old].memory.status == "active"  # nothing is decided until tidy is accepted
    event = [e for e in mem.store.iter_events() if e.kind == "remember"][-1]
    assert event.payload["may_update"] == old and event.payload["disposition"] == "created"


def test_recall_puts_the_newer_claim_first_and_marks_the_conflict(
    mem: Cairn, clock: FakeClock
) -> None:
    old, new = pair(mem, clock)
    found = mem.recall("which python is required for CI", scope=SCOPE)
    refs = [h.ref for h in found.hits]
    assert refs.index(new) < refs.index(old)
    hits = {h.ref: h for h in found.hits}
    assert hits[new].conflicts_with == (old,) and hits[old].conflicts_with == (new,)


def test_recall_brings_the_newer_claim_when_only_the_older_matched(
    mem: Cairn, clock: FakeClock
) -> None:
    old, new = pair(mem, clock)
    # The query names the old value: alone, the older claim would rank first.
    found = mem.recall("python 3.11", scope=SCOPE, limit=1, cut=False)
    assert [h.ref for h in found.hits] == [new]
    assert found.hits[0].conflicts_with == (old,)
    both = mem.recall("python 3.11", scope=SCOPE, limit=2, cut=False)
    assert [h.ref for h in both.hits] == [new, old]
    assert both.hits[0].score >= both.hits[1].score


def test_a_decided_or_unbelieved_pair_is_no_conflict(mem: Cairn, clock: FakeClock) -> None:
    old, new = pair(mem, clock)
    day_before = (clock.now - timedelta(days=1)).date().isoformat()
    before = mem.recall("which python is required for CI", scope=SCOPE, as_of=day_before)
    assert [h.ref for h in before.hits] == [old] and before.hits[0].conflicts_with == ()
    mem.forget(new, reason="3.12 broke the build", scope=SCOPE)
    after = mem.recall("which python is required for CI", scope=SCOPE)
    assert [h.ref for h in after.hits] == [old] and after.hits[0].conflicts_with == ()


def test_a_changed_identifier_and_a_negation_are_not_boosted(mem: Cairn) -> None:
    blue = mem.remember("The primary database is db-blue.", type="fact", scope=SCOPE)
    green = mem.remember("The primary database is db-green.", type="fact", scope=SCOPE)
    assert green.disposition == "created" and green.may_update == blue.memory_id
    assert green.changed == "db-blue → db-green"
    text = "The billing worker retries failed webhook deliveries with backoff."
    yes = mem.remember(text, type="fact", scope=SCOPE)
    no = mem.remember(text.replace("retries", "never retries"), type="fact", scope=SCOPE)
    assert no.disposition == "created" and no.may_update == yes.memory_id


def test_a_restatement_still_boosts(mem: Cairn) -> None:
    first = mem.remember(OLD, type="constraint", scope=SCOPE)
    again = mem.remember("Python 3.11 is required for CI!", type="constraint", scope=SCOPE)
    assert again.disposition == "boosted" and again.memory_id == first.memory_id
    assert again.may_update is None


def test_the_whole_text_is_compared_not_what_the_embedder_reads(mem: Cairn) -> None:
    start = "The deploy pipeline restores the cache and builds the image. " * 40
    assert len(start) > MAX_EMBED_CHARS
    first = mem.remember(start + "It listens on port 8080.", type="fact", scope=SCOPE)
    port = mem.remember(start + "It listens on port 9090.", type="fact", scope=SCOPE)
    assert port.disposition == "created" and port.may_update == first.memory_id
    words = mem.remember(start + "It is rolled out region by region.", type="fact", scope=SCOPE)
    assert words.disposition == "created"
    same = mem.remember(start + "It listens on port 8080.", type="fact", scope=SCOPE)
    assert same.disposition == "matched" and same.memory_id == first.memory_id
    assert mem.get_memory([port.memory_id], scope=SCOPE).records[0].memory.content.endswith("9090.")


def test_a_restatement_of_one_near_duplicate_boosts_it_over_a_nearer_other_value(
    mem: Cairn,
) -> None:
    eleven = mem.remember(OLD, type="constraint", scope=SCOPE, dedup=False).memory_id
    twelve = mem.remember(NEW, type="constraint", scope=SCOPE, dedup=False).memory_id
    again = mem.remember("Python 3.12 is required for CI!", type="constraint", scope=SCOPE)
    assert again.disposition == "boosted" and again.memory_id == twelve != eleven


def test_tidy_proposes_the_update_and_accepting_replaces_the_older(
    mem: Cairn, clock: FakeClock
) -> None:
    old, new = pair(mem, clock)
    proposals = [p for p in mem.tidy(scope=SCOPE) if p.kind == "update"]
    assert len(proposals) == 1 and [p.kind for p in mem.tidy(scope=SCOPE)] == ["update"]
    proposal = proposals[0]
    assert proposal.refs == (old, new)
    assert proposal.summary.startswith(f"{new} looks like an update of {old} (3.11 → 3.12)")
    assert (proposal.detail["keep"], proposal.detail["replace"]) == (new, old)
    clock.advance(hours=1)
    decision = mem.tidy_accept(proposal.id, scope=SCOPE)
    assert (decision.status, decision.changed) == ("accepted", (old,))
    records = {r.ref: r for r in mem.get_memory([old, new], scope=SCOPE).records}
    assert records[old].memory.status == "replaced"
    assert records[old].memory.until == clock.now
    assert records[old].memory.replaced_by == int(new[4:])
    assert records[old].memory.content == OLD  # nothing is lost
    assert records[new].memory.replaces == int(old[4:])
    assert records[new].memory.status == "active"
    assert [e.ref for e in records[new].replaced] == [old]
    assert [e.ref for e in records[old].replaced_by_chain] == [new]
    found = mem.recall("which python is required for CI", scope=SCOPE)
    assert [h.ref for h in found.hits] == [new] and found.hits[0].conflicts_with == ()
    assert mem.tidy(scope=SCOPE) == []
    correct = [e for e in mem.store.iter_events() if e.kind == "correct"][-1]
    assert correct.payload["replaces"] == old and correct.payload["by"] == new


def test_a_declined_update_is_not_proposed_again(mem: Cairn, clock: FakeClock) -> None:
    pair(mem, clock)
    proposal = mem.tidy(scope=SCOPE)[0]
    mem.tidy_decline(proposal.id, scope=SCOPE)
    assert mem.tidy(scope=SCOPE) == []


def test_an_update_whose_side_changed_is_stale(mem: Cairn, clock: FakeClock) -> None:
    old, _ = pair(mem, clock)
    proposal = mem.tidy(scope=SCOPE)[0]
    mem.correct(old, "Python 3.13 is required for CI.", reason="moved on", scope=SCOPE)
    with pytest.raises(Conflict, match="stale"):
        mem.tidy_accept(proposal.id, scope=SCOPE)


def test_unlinked_similar_memories_with_swapped_values_are_an_update_not_a_merge(
    mem: Cairn,
) -> None:
    old = mem.remember(OLD, type="constraint", scope=SCOPE, dedup=False).memory_id
    new = mem.remember(NEW, type="constraint", scope=SCOPE, dedup=False).memory_id
    proposals = mem.tidy(scope=SCOPE)
    assert [(p.kind, p.refs) for p in proposals] == [("update", (old, new))]


def test_a_session_brief_shows_the_newer_claim_first_with_its_conflict(
    mem: Cairn, clock: FakeClock
) -> None:
    # Facts, not constraints: the brief lists constraints in a section of their own.
    old = mem.remember(OLD, type="fact", scope=SCOPE).memory_id
    clock.advance(days=1)
    new = mem.remember(NEW, type="fact", scope=SCOPE).memory_id
    brief = mem.activate("which python is required for CI", scope=SCOPE)
    hits = {h.ref: h for h in brief.memories}
    refs = [h.ref for h in brief.memories]
    assert refs.index(new) < refs.index(old)
    assert hits[new].conflicts_with == (old,) and hits[old].conflicts_with == (new,)


def test_supersede_refuses_what_cannot_be_a_next_version(mem: Cairn, clock: FakeClock) -> None:
    old, new = pair(mem, clock)
    with pytest.raises(InvalidInput, match="two memories"):
        history.supersede(mem._ctx, old, old, "same", SCOPE)
    other = mem.remember("Node 20 is required.", type="fact", scope="project:example/other")
    with pytest.raises(NotFound):
        history.supersede(mem._ctx, old, other.memory_id, "elsewhere", SCOPE)
    mem.forget(new, reason="wrong", scope=SCOPE)
    with pytest.raises(Conflict, match="forgotten"):
        history.supersede(mem._ctx, old, new, "retired", SCOPE)
    assert mem.get_memory([old], scope=SCOPE).records[0].memory.status == "active"
