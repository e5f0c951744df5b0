"""Associations: relates_to, corrections relating versions, the `associated` pathway."""

from __future__ import annotations

import pytest

from cairn import Cairn, InvalidInput, InvalidRef
from cairn.models import RememberResult
from cairn.refs import parse_memory_refs

SCOPE = "project:example/api"
OTHER = "project:example/web"


def _decision_and_its_lesson(mem: Cairn) -> tuple[RememberResult, RememberResult]:
    db = mem.remember("We store sessions in PostgreSQL.", type="decision", scope=SCOPE)
    why = mem.remember(
        "Redis lost sessions on eviction twice in May.",
        type="lesson",
        scope=SCOPE,
        relates_to=[db.memory_id],
    )
    return db, why


def test_related_memories_come_back_associated(mem: Cairn) -> None:
    db, why = _decision_and_its_lesson(mem)
    found = mem.recall("where are sessions stored", scope=SCOPE, limit=1)
    assert [(h.ref, h.pathway) for h in found.hits] == [
        (db.memory_id, "direct"),
        (why.memory_id, "associated"),
    ]
    associated = found.hits[1]
    assert associated.via == db.memory_id
    assert associated.score < found.hits[0].score
    assert why.memory_id in found.refs


def test_a_recall_reads_the_relations_of_its_hits_once(
    mem: Cairn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One read of the relations around the hits serves the update links and the associations."""
    db, why = _decision_and_its_lesson(mem)
    store = type(mem.store)
    reads: list[list[int]] = []
    original = store.relations_of

    def counted(self: object, ids: list[int]) -> object:
        reads.append(list(ids))
        return original(self, ids)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "relations_of", counted)
    found = mem.recall("where are sessions stored", scope=SCOPE, limit=1)
    assert [(h.ref, h.pathway) for h in found.hits] == [
        (db.memory_id, "direct"),
        (why.memory_id, "associated"),
    ]
    assert reads == [parse_memory_refs([db.memory_id])]


def test_relations_work_both_ways_and_not_twice(mem: Cairn) -> None:
    a = mem.remember("The billing service owns invoices.", type="fact", scope=SCOPE)
    b = mem.remember(
        "Invoices are rendered by the PDF worker.",
        type="fact",
        scope=SCOPE,
        relates_to=[a.memory_id, a.memory_id],
    )
    found = mem.recall("billing service invoices owner", scope=SCOPE, limit=1, cut=True)
    refs = [h.ref for h in found.hits]
    assert len(refs) == len(set(refs))
    assert {a.memory_id, b.memory_id} <= set(refs)


def test_associated_do_not_count_toward_limit(mem: Cairn) -> None:
    hub = mem.remember("Deploys go through the release pipeline.", type="fact", scope=SCOPE)
    spokes = [
        mem.remember(text, type="fact", scope=SCOPE, relates_to=[hub.memory_id]).memory_id
        for text in ("Canary stage lasts ten minutes.", "Rollbacks use the previous image tag.")
    ]
    found = mem.recall("release pipeline deploys", scope=SCOPE, limit=1)
    direct = [h for h in found.hits if h.pathway == "direct"]
    linked = [h.ref for h in found.hits if h.pathway == "associated"]
    assert len(direct) == 1 and direct[0].ref == hub.memory_id
    assert sorted(linked) == sorted(spokes)


def test_relates_to_is_checked(mem: Cairn) -> None:
    foreign = mem.remember("Web uses React.", type="fact", scope=OTHER)
    with pytest.raises(InvalidRef, match="do not exist in scope"):
        mem.remember("API fact.", type="fact", scope=SCOPE, relates_to=[foreign.memory_id])
    with pytest.raises(InvalidRef, match="mem_999"):
        mem.remember("API fact.", type="fact", scope=SCOPE, relates_to=["mem_999"])
    with pytest.raises(InvalidRef):
        mem.remember("API fact.", type="fact", scope=SCOPE, relates_to=["proc_1"])
    with pytest.raises(InvalidInput):
        mem.remember("API fact.", type="fact", scope=SCOPE, relates_to=[1])  # type: ignore[list-item]
    assert not any(m.scope == SCOPE for m in mem.store.iter_memories())


def test_global_memories_can_be_related_and_show_their_origin(mem: Cairn) -> None:
    rule = mem.remember("Timestamps are stored in UTC.", type="constraint", scope="global")
    local = mem.remember(
        "The events table has an indexed timestamp column.",
        type="fact",
        scope=SCOPE,
        relates_to=[rule.memory_id],
    )
    found = mem.recall("events table timestamp column index", scope=SCOPE, limit=1)
    linked = {h.ref: h for h in found.hits if h.pathway == "associated"}
    assert found.hits[0].ref == local.memory_id
    assert rule.memory_id in linked
    assert linked[rule.memory_id].provenance is not None
    assert linked[rule.memory_id].provenance.origin_scope == "global"
    # From another scope the project memory stays invisible, even though it relates to global.
    elsewhere = mem.recall("timestamps UTC", scope=OTHER)
    assert local.memory_id not in elsewhere.refs


def test_correct_relates_the_versions_and_keeps_associations(mem: Cairn) -> None:
    db = mem.remember("We store sessions in Redis.", type="decision", scope=SCOPE)
    why = mem.remember(
        "Session lookups must stay under 5 ms.",
        type="constraint",
        scope=SCOPE,
        relates_to=[db.memory_id],
    )
    new = mem.correct(
        db.memory_id, "We store sessions in PostgreSQL.", reason="moved off Redis", scope=SCOPE
    )
    relations = mem.store.relations_of([int(new.memory_id.removeprefix("mem_"))])
    kinds = {(r.kind, r.to_id) for r in relations}
    assert ("version", int(db.memory_id.removeprefix("mem_"))) in kinds
    found = mem.recall("session lookups latency under 5 ms", scope=SCOPE, limit=1)
    assert found.hits[0].ref == why.memory_id
    linked = [h.ref for h in found.hits if h.pathway == "associated"]
    assert linked == [new.memory_id], "the current version, never the replaced one"


def test_forgotten_memories_are_not_associated(mem: Cairn) -> None:
    hub = mem.remember("Deploys go through the release pipeline.", type="fact", scope=SCOPE)
    gone = mem.remember(
        "Deploys need a manual approval.", type="fact", scope=SCOPE, relates_to=[hub.memory_id]
    )
    mem.forget(gone.memory_id, reason="approval step removed", scope=SCOPE)
    found = mem.recall("release pipeline", scope=SCOPE, limit=1)
    assert gone.memory_id not in found.refs


def test_a_restated_claim_gains_the_relation(mem: Cairn) -> None:
    hub = mem.remember("Deploys go through the release pipeline.", type="fact", scope=SCOPE)
    note = mem.remember("Canary stage lasts ten minutes.", type="fact", scope=SCOPE)
    again = mem.remember(
        "Canary stage lasts ten minutes.", type="fact", scope=SCOPE, relates_to=[hub.memory_id]
    )
    assert again.disposition == "matched" and again.memory_id == note.memory_id
    found = mem.recall("release pipeline deploys", scope=SCOPE, limit=1)
    assert note.memory_id in [h.ref for h in found.hits if h.pathway == "associated"]
