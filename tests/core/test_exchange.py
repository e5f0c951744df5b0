"""Export then import into an empty store reproduces it exactly: every table, on either
backend, and version 1 files still load."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn import Cairn, Conflict, InvalidInput, Refused
from cairn.embeddings.hashing import HashingEmbedder
from cairn.timeutil import Clock
from copykit import build_rich, git_repo, snapshot

SCOPE = "project:example/api"

# Text that may hold anything a user could paste, minus what remember refuses by design.
texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300
).filter(lambda s: s.strip() != "")


def build(mem: Cairn, contents: list[str], corrections: list[str]) -> None:
    refs = []
    for i, content in enumerate(contents):
        try:
            refs.append(
                mem.remember(
                    content,
                    type="fact",
                    scope=SCOPE,
                    tags=[f"t{i}"],
                    reason=content[:50],
                    source_ref=f"https://example.com/spec/{i}" if i % 2 else f"commit:abcd{i:04d}",
                    dedup=False,
                ).memory_id
            )
        except Refused:  # generated text that looks like a secret (or holds NUL) is refused
            continue
    for ref, text in zip(refs, corrections, strict=False):
        try:
            mem.correct(ref, text, reason="fix", scope=SCOPE)
        except Refused:
            continue
    run_session(mem, contents)
    if len(refs) > len(corrections):
        mem.forget(refs[-1], reason="gone", scope=SCOPE)
    if refs:
        mem.purge(refs[0], scope=SCOPE)


def run_session(mem: Cairn, contents: list[str]) -> None:
    """A session with feedback on everything it was given, closed with a procedure."""
    # The task and query are fixed text so a session always exists; the generated text goes
    # into the procedure, where a refusal falls back to `end`.
    brief = mem.activate("round-trip the store", scope=SCOPE, task_context={"note": "export"})
    found = mem.recall("what was remembered", session_id=brief.session_id)
    for retrieval in dict.fromkeys([brief.retrieval_id, found.retrieval_id]):
        record = mem.store.get_retrieval(int(retrieval.removeprefix("ret_")))
        assert record is not None
        if not record.refs:  # every generated memory was refused: nothing to assess
            continue
        assessments = [{"memory_id": r, "used": True, "effect": "helped"} for r in record.refs]
        mem.feedback(brief.session_id, retrieval, assessments)
    try:
        mem.commit(
            brief.session_id,
            outcome="success",
            summary=contents[-1],
            procedure={"steps": contents, "caveats": contents[:1]},
        )
    except Refused:
        mem.end(brief.session_id)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(contents=st.lists(texts, min_size=1, max_size=5), corrections=st.lists(texts, max_size=2))
def test_export_import_round_trip(
    tmp_path: Path, contents: list[str], corrections: list[str]
) -> None:
    # A fresh directory per example: Hypothesis replays examples within one tmp_path.
    workdir = Path(tempfile.mkdtemp(dir=tmp_path))
    embedder = HashingEmbedder()
    with Cairn.open(workdir / "a.db", embedder=embedder, cwd=workdir) as source:
        build(source, contents, corrections)
        buffer = io.StringIO()
        source.export(buffer)
        before = snapshot(source.store)
    assert before["sessions"] or not before["memories"]
    with Cairn.open(workdir / "b.db", embedder=embedder, cwd=workdir) as target:
        target.import_(io.StringIO(buffer.getvalue()))
        assert snapshot(target.store) == before
        second = io.StringIO()
        target.export(second)
        assert second.getvalue() == buffer.getvalue()


def test_imported_store_answers_recall_like_the_original(
    mem: Cairn, tmp_path: Path, clock: Clock
) -> None:
    mem.remember("The release train leaves on Thursdays.", type="fact", scope=SCOPE)
    buffer = io.StringIO()
    mem.export(buffer)
    # The copy reads the same "now" as the original: with the real clock months later, the
    # uncited memory would (rightly) have rested.
    with Cairn.open(
        tmp_path / "copy.db", embedder=HashingEmbedder(), cwd=tmp_path, clock=clock
    ) as copy:
        copy.import_(io.StringIO(buffer.getvalue()))
        assert (
            copy.recall("release train", scope=SCOPE).refs
            == mem.recall("release train", scope=SCOPE).refs
        )
        fresh = copy.remember("A new claim after import.", type="fact", scope=SCOPE)
        assert int(fresh.memory_id[4:]) > 1


def test_import_refuses_a_non_empty_store(mem: Cairn) -> None:
    mem.remember("Something.", type="fact", scope=SCOPE)
    buffer = io.StringIO()
    mem.export(buffer)
    with pytest.raises(Conflict, match="empty"):
        mem.import_(io.StringIO(buffer.getvalue()))


def test_import_refuses_garbage(tmp_path: Path) -> None:
    with Cairn.open(tmp_path / "x.db", embedder=HashingEmbedder()) as mem:
        with pytest.raises(InvalidInput, match="not a cairn export"):
            mem.import_(io.StringIO('{"hello": 1}\n'))
        with pytest.raises(InvalidInput, match="line 1"):
            mem.import_(io.StringIO("not json\n"))
        assert list(mem.store.iter_memories()) == []


def test_every_table_survives_export_and_import(mem: Cairn, tmp_path: Path, clock: Clock) -> None:
    build_rich(mem, git_repo(tmp_path / "repo"))
    before = snapshot(mem.store)
    empty = [name for name, rows in before.items() if not rows]
    assert set(empty) <= {"acts", "lessons_given", "lesson_sessions", "page_files", "pages"}
    buffer = io.StringIO()
    mem.export(buffer)
    with Cairn.open(tmp_path / "copy.db", embedder=HashingEmbedder(), clock=clock) as copy:
        counts = copy.import_(io.StringIO(buffer.getvalue()))
        assert snapshot(copy.store) == before
        assert counts == {name: len(rows) for name, rows in before.items() if rows}
        assert copy.store.sequences() == mem.store.sequences()
        again = io.StringIO()
        copy.export(again)
    backend = f'"backend": "{mem.store.backend}"'
    assert again.getvalue() == buffer.getvalue().replace(backend, '"backend": "sqlite"', 1)


@pytest.mark.postgres
def test_an_export_loads_into_postgres(
    tmp_path: Path, clock: Clock, postgres_database_url: str
) -> None:
    with Cairn.open(tmp_path / "a.db", embedder=HashingEmbedder(), clock=clock) as source:
        build_rich(source, git_repo(tmp_path / "repo"))
        buffer = io.StringIO()
        source.export(buffer)
        before = snapshot(source.store)
        hits = source.recall("deploys staging canary", scope=SCOPE).refs
    with Cairn.open(postgres_database_url, embedder=HashingEmbedder(), clock=clock) as target:
        target.import_(io.StringIO(buffer.getvalue()))
        assert snapshot(target.store) == before
        assert target.recall("deploys staging canary", scope=SCOPE).refs == hits


V1_FILE = [
    {"format": "cairn-export", "version": 1, "backend": "sqlite"},
    {"record": "memory", "id": 1, "scope": SCOPE, "type": "fact",
     "content": "The release train leaves on Thursdays.", "summary": "Release train Thursdays",
     "durability": "semantic", "weight": 0.5, "tags": ["release"], "reason": None,
     "source_ref": None, "pinned": False, "branch": None, "session_id": None,
     "source_event_id": 1, "diff_text": None, "diff_files": [], "error_trace": None,
     "integration": "cli", "content_hash": "abc", "written_at": "2026-08-01T12:00:00+00:00",
     "occurred_at": "2026-08-01T12:00:00+00:00", "until": None, "replaces": None,
     "replaced_by": None, "status": "active", "confirmed": 0, "cited": 0, "contradicted": 0,
     "evidence": {}, "last_cited_at": None, "access_count": 2,
     "last_accessed_at": "2026-08-02T09:30:00.250000+00:00"},
    {"record": "event", "id": 1, "kind": "remember", "scope": SCOPE, "session_id": None,
     "at": "2026-08-01T12:00:00+00:00", "integration": "cli", "memory_id": 1,
     "payload": {"disposition": "created"}},
]  # fmt: skip


def test_version_1_files_still_import(tmp_path: Path, clock: Clock) -> None:
    embedder = HashingEmbedder()
    vector = embedder.embed_many(["The release train leaves on Thursdays."])[0]
    record = {"record": "vector", "memory_id": 1, "identity": embedder.identity}
    lines = [json.dumps(r) for r in V1_FILE]
    with Cairn.open(tmp_path / "v2.db", embedder=embedder, clock=clock) as probe:
        probe.store.put_vector(1, embedder.identity, vector)
        [row] = list(probe.store.dump_table("vectors"))
    lines.append(json.dumps({**record, "vector": row["vector"]}))
    with Cairn.open(tmp_path / "v1.db", embedder=embedder, clock=clock) as mem:
        counts = mem.import_(io.StringIO("\n".join(lines)))
        assert counts == {"memories": 1, "lexical": 1, "events": 1, "vectors": 1}
        [memory] = mem.store.get_memories([1])
        assert memory.tags == ("release",) and memory.access_count == 2
        assert memory.last_accessed_at is not None and memory.last_accessed_at.microsecond == 250000
        assert mem.recall("release train", scope=SCOPE).refs == ["mem_1"]
        assert mem.remember("Another claim.", type="fact", scope=SCOPE).memory_id == "mem_2"
