"""Result shape (seed 001): content capped, provenance, evidence records and their bounds."""

from __future__ import annotations

from pathlib import Path

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.models import to_jsonable

SCOPE = "project:example/api"


def test_hits_carry_the_seed_fields(mem: Cairn) -> None:
    long = "The deploy checklist: " + "verify each step carefully. " * 60
    ref = mem.remember(long, type="instruction", scope=SCOPE).memory_id
    found = mem.recall("deploy checklist", scope=SCOPE)
    hit = found.hits[0]
    assert hit.memory_id == ref and hit.pathway == "direct"
    assert hit.content is not None and len(hit.content) == 500
    full = mem.get_memory(ref, scope=SCOPE).records[0].memory.content
    assert full == long, "get_memory has the whole text"
    data = to_jsonable(found)
    assert data["hits"][0]["memory_id"] == ref
    assert set(data["hits"][0]["provenance"]) == {
        "source_kind",
        "integration",
        "integration_version",
        "origin_scope",
    }


def test_provenance_names_the_client_and_its_version(
    store_location: str, tmp_path: Path, embedder: HashingEmbedder
) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    with Cairn.open(
        store_location,
        settings=settings,
        embedder=embedder,
        cwd=tmp_path,
        integration="claude-code",
        integration_version="1.2.3",
    ) as mem:
        ref = mem.remember("Staging runs on k3s.", type="fact", scope=SCOPE).memory_id
        new = mem.correct(ref, "Staging runs on k3s 1.30.", reason="upgraded", scope=SCOPE)
        glob = mem.remember("Dates are ISO 8601 everywhere.", type="preference", scope="global")
        found = mem.recall("staging k3s dates ISO", scope=SCOPE, cut=False)
    by_ref = {h.ref: h.provenance for h in found.hits}
    corrected = by_ref[new.memory_id]
    assert corrected is not None
    assert (corrected.source_kind, corrected.integration, corrected.integration_version) == (
        "correct",
        "claude-code",
        "1.2.3",
    )
    assert corrected.origin_scope is None
    foreign = by_ref[glob.memory_id]
    assert foreign is not None and foreign.origin_scope == "global"
    assert foreign.source_kind == "remember" and foreign.integration_version == "1.2.3"


def test_references_mode_lists_records_without_text(mem: Cairn) -> None:
    ref = mem.remember(
        "Backups run nightly at 02:00 UTC.",
        type="fact",
        scope=SCOPE,
        occurred_at="2026-07-01T02:00:00Z",
    ).memory_id
    found = mem.recall("when do backups run", scope=SCOPE)
    assert found.evidence_mode == "references" and found.evidence_truncated is False
    [record] = found.evidence
    assert record.source_kind == "event" and record.evidence_id.startswith("evt_")
    assert record.source_ref == {"kind": "event", "id": int(record.evidence_id[4:])}
    assert record.supports == (ref,)
    assert record.content is None and record.truncated is None
    assert record.occurred_at.isoformat() == "2026-07-01T02:00:00+00:00"
    assert record.recorded_at > record.occurred_at


def test_full_mode_adds_text_capped_at_1000(mem: Cairn) -> None:
    long = "Incident report: " + "the queue backed up again. " * 80
    mem.remember(long, type="lesson", scope=SCOPE)
    mem.remember("Short note: queues are monitored.", type="fact", scope=SCOPE)
    found = mem.recall("queue backed up incident", scope=SCOPE, evidence="full", cut=False)
    assert found.evidence_mode == "full"
    texts = {r.supports[0]: r for r in found.evidence}
    cut = [r for r in texts.values() if r.truncated]
    whole = [r for r in texts.values() if r.truncated is False]
    assert len(cut) == 1 and cut[0].content is not None and len(cut[0].content) == 1000
    assert len(whole) == 1 and whole[0].content == "Short note: queues are monitored."


def test_episodes_are_evidence_of_what_a_session_wrote(mem: Cairn) -> None:
    brief = mem.activate("investigate the slow queue", scope=SCOPE)
    ref = mem.remember(
        "The queue slows down when the worker pool is below 4.",
        type="lesson",
        session_id=brief.session_id,
    ).memory_id
    done = mem.commit(brief.session_id, outcome="success", summary="Raised the pool to 8.")
    found = mem.recall("why does the queue slow down", scope=SCOPE, evidence="full")
    kinds = {r.source_kind: r for r in found.evidence if ref in r.supports}
    assert set(kinds) == {"event", "episode"}
    episode = kinds["episode"]
    assert episode.evidence_id == done.episode_id
    assert episode.content is not None and "Raised the pool to 8." in episode.content
    assert episode.source_ref == {"kind": "episode", "id": int(done.episode_id[3:])}


def test_evidence_is_bounded_and_says_so(
    store_location: str, tmp_path: Path, embedder: HashingEmbedder
) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing", max_evidence_records=2)
    with Cairn.open(store_location, settings=settings, embedder=embedder, cwd=tmp_path) as mem:
        refs = [
            mem.remember(
                f"Queue fact {word}: the queue is watched.", type="fact", scope=SCOPE, dedup=False
            ).memory_id
            for word in ("alpha", "bravo", "charlie")
        ]
        mem.remember("Queue fact alpha: the queue is watched.", type="fact", scope=SCOPE)
        found = mem.recall("queue fact watched", scope=SCOPE, cut=False)
        assert {h.ref for h in found.hits} == set(refs)
    assert len(found.evidence) == 2 and found.evidence_truncated is True
    supported = [r.supports[0] for r in found.evidence]
    assert len(set(supported)) == 2, "round-robin: two hits get one record each first"
