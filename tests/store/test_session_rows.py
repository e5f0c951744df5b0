"""The session part of the `Store` contract, unchanged on SQLite and PostgreSQL (`store`)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from cairn.errors import InvalidInput
from cairn.models import Contribution, ProcedureEvidence
from cairn.records.sessions import (
    NewEpisode,
    NewProcedure,
    Relation,
    Retrieval,
    Session,
    StoredAssessment,
)
from cairn.store.base import Store
from storekit import OTHER, SCOPE, T0, at, new_event, new_memory, unit

SID = "ses_" + "ab" * 12


def session(**overrides: object) -> Session:
    values: dict[str, object] = {
        "id": SID,
        "scope": SCOPE,
        "task": "migrate ✓",
        "task_context": {"db": "pg", "n": [1]},
        "status": "open",
        "opened_at": T0,
        "integration": "claude-code",
        "branch": "main",
    }
    values.update(overrides)
    return Session(**values)  # type: ignore[arg-type]


def procedure(**overrides: object) -> NewProcedure:
    values: dict[str, object] = {
        "scope": SCOPE,
        "goal": "Apply migrations",
        "summary": "dry run first",
        "context": {"tool": "alembic"},
        "steps": ("dry run", "apply"),
        "caveats": ("backup",),
        "outcome": "success",
        "outcome_summary": "ok",
        "session_id": SID,
        "content_hash": "hash-1",
        "written_at": T0,
    }
    values.update(overrides)
    return NewProcedure(**values)  # type: ignore[arg-type]


def test_sessions_round_trip_and_update(store: Store) -> None:
    store.add_session(session())
    assert store.get_session(SID) == session()
    assert store.get_session("ses_missing") is None
    store.update_session(
        SID,
        {
            "status": "committed",
            "closed_at": at(5),
            "episode_id": 3,
            "task_context": {"db": "pg", "more": "ü"},
        },
    )
    got = store.get_session(SID)
    assert got is not None and (got.status, got.closed_at, got.episode_id) == (
        "committed",
        at(5),
        3,
    )
    assert got.task_context == {"db": "pg", "more": "ü"} and not got.is_open
    with pytest.raises(InvalidInput):
        store.update_session(SID, {"scope": OTHER})


def test_retrievals_and_assessments(store: Store) -> None:
    store.add_retrieval(Retrieval(40, SID, T0, "activate", ("mem_1", "proc_2")))
    store.add_retrieval(Retrieval(41, SID, at(1), "recall", ()))
    store.add_retrieval(Retrieval(42, "ses_other", at(2), "recall", ("mem_1",)))
    assert [r.id for r in store.session_retrievals(SID)] == [40, 41]
    got = store.get_retrieval(40)
    assert got == Retrieval(40, SID, T0, "activate", ("mem_1", "proc_2"))
    assert got.needs_feedback and not store.session_retrievals(SID)[1].needs_feedback
    store.mark_feedback(40, at(3))
    assert store.get_retrieval(40).feedback_at == at(3)  # type: ignore[union-attr]
    assert store.get_retrieval(999) is None
    first = StoredAssessment(40, SID, "mem_1", True, "helped", at(3))
    assert store.put_assessment(first) is None
    replaced = store.put_assessment(StoredAssessment(40, SID, "mem_1", False, "harmed", at(4)))
    assert replaced == first
    store.put_assessment(StoredAssessment(40, SID, "proc_2", True, "no_effect", at(4)))
    assert [(a.ref, a.used, a.effect) for a in store.session_assessments(SID)] == [
        ("mem_1", False, "harmed"),
        ("proc_2", True, "no_effect"),
    ]


def test_episodes(store: Store) -> None:
    first = store.add_episode(NewEpisode(SID, SCOPE, "t", "success", "done", 4, T0, at(9)))
    second = store.add_episode(NewEpisode("ses_b", SCOPE, "u", "unknown", "x", None, T0, at(1)))
    assert [e.id for e in store.get_episodes([second, first, 999])] == [second, first]
    [episode] = store.episodes_for_sessions([SID])
    assert (episode.ref, episode.procedure_id, episode.ended_at) == (f"ep_{first}", 4, at(9))


def test_relations_read_both_ways_once(store: Store) -> None:
    store.add_relation(1, 2, "relates_to", T0)
    store.add_relation(1, 2, "relates_to", at(1))
    store.add_relation(3, 1, "version", T0)
    store.add_relation(4, 5, "relates_to", T0)
    assert store.relations_of([1]) == [
        Relation(1, 2, "relates_to"),
        Relation(3, 1, "version"),
    ]
    assert store.relations_of([2, 5]) == [
        Relation(1, 2, "relates_to"),
        Relation(4, 5, "relates_to"),
    ]
    assert store.relations_of([]) == []


def test_trace_reads_one_scope_by_time(store: Store) -> None:
    ids = [store.add_event(new_event(kind="pin", at=at(n), payload={"n": n})) for n in range(6)]
    tie = store.add_event(new_event(kind="pin", at=at(2), payload={"n": "tie"}))
    store.add_event(new_event(kind="pin", scope=OTHER, at=at(3)))
    before = store.trace_before(SCOPE, at(2), 10)
    assert [e.id for e in before] == [tie, ids[2], ids[1], ids[0]]
    assert [e.id for e in store.trace_after(SCOPE, at(2), 2)] == [ids[3], ids[4]]
    assert [e.id for e in store.trace_before(SCOPE, None, 2)] == [ids[5], ids[4]]
    assert store.trace_after(SCOPE, at(10), 5) == []


def test_select_memories_by_importance(store: Store) -> None:
    low = store.add_memory(new_memory(content="a", type="constraint", weight=0.2))
    high = store.add_memory(new_memory(content="b", type="constraint", weight=0.9))
    pinned = store.add_memory(new_memory(content="c", type="fact", pinned=True, weight=0.1))
    store.add_memory(new_memory(content="d", type="constraint", scope=OTHER))
    gone = store.add_memory(new_memory(content="e", type="constraint", weight=1.0))
    store.update_memory(gone, {"status": "retired", "until": at(1)})
    glob = store.add_memory(new_memory(content="f", type="warning", scope="global"))
    scopes = (SCOPE, "global")
    found = store.select_memories(scopes, types=("constraint",), pinned_only=False, limit=10)
    assert [m.id for m in found] == [high, low]
    assert [m.id for m in store.select_memories(scopes, types=None, pinned_only=True, limit=5)] == [
        pinned
    ]
    everything = store.select_memories(scopes, types=None, pinned_only=False, limit=2)
    assert [m.id for m in everything] == [pinned, high]
    warnings = store.select_memories(scopes, types=("warning",), pinned_only=False, limit=5)
    assert [m.id for m in warnings] == [glob]


def test_procedures_round_trip_with_tallies_and_contributions(store: Store) -> None:
    pid = store.add_procedure(procedure())
    [got] = store.get_procedures([pid])
    assert (got.goal, got.steps, got.caveats, got.context) == (
        "Apply migrations",
        ("dry run", "apply"),
        ("backup",),
        {"tool": "alembic"},
    )
    assert got.evidence == ProcedureEvidence() and got.contributions == ()
    assert got.written_at == got.updated_at == T0
    for n, outcome in enumerate(("success", "partial", "failure", "unknown")):
        store.add_contribution(pid, SID, Contribution("helped", "used", outcome, f"#{n}", at(n)))
    store.tally_procedure(pid, "helped", 2)
    store.tally_procedure(pid, "harmed", -1)
    store.update_procedure(
        pid, {"outcome": "failure", "outcome_summary": "broke", "updated_at": at(9)}
    )
    [got] = store.get_procedures([pid])
    assert got.evidence == ProcedureEvidence(helped=2)
    assert [c.outcome for c in got.contributions] == ["unknown", "failure", "partial"]
    assert (got.outcome, got.outcome_summary, got.updated_at) == ("failure", "broke", at(9))
    with pytest.raises(InvalidInput):
        store.tally_procedure(pid, "loved")
    with pytest.raises(InvalidInput):
        store.update_procedure(pid, {"goal": "x"})


def test_procedure_lookups(store: Store) -> None:
    old = store.add_procedure(procedure(content_hash="h-old", written_at=T0))
    new = store.add_procedure(procedure(content_hash="h-new", written_at=at(10)))
    store.add_procedure(procedure(scope=OTHER, content_hash="h-old"))
    assert [p.id for p in store.procedures_in((SCOPE,), as_of=None, limit=10)] == [new, old]
    assert [p.id for p in store.procedures_in((SCOPE,), as_of=at(5), limit=10)] == [old]
    assert [p.id for p in store.procedures_in((SCOPE,), as_of=None, limit=1)] == [new]
    found = store.find_procedure(SCOPE, "h-old")
    assert found is not None and found.id == old
    assert store.find_procedure(SCOPE, "h-none") is None


def test_procedure_vectors(store: Store) -> None:
    pid = store.add_procedure(procedure())
    vector = unit(0.1, 0.2, 0.3, 0.4)
    store.put_procedure_vector(pid, "emb/4", vector)
    store.put_procedure_vector(pid, "emb/4", unit(0.4, 0.3, 0.2, 0.1))
    got = store.get_procedure_vectors([pid, 999], "emb/4")
    assert list(got) == [pid]
    assert np.allclose(got[pid], unit(0.4, 0.3, 0.2, 0.1))
    assert store.get_procedure_vectors([pid], "other/4") == {}


def test_times_come_back_as_utc(store: Store) -> None:
    from datetime import timezone

    local = T0.astimezone(timezone(timedelta(hours=5)))
    store.add_session(session(opened_at=local))
    got = store.get_session(SID)
    assert got is not None and got.opened_at == T0 and got.opened_at.utcoffset() == timedelta(0)
