"""The session loop end to end on PostgreSQL: the same verbs, the other backend."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

if str(Path(__file__).parents[1]) not in sys.path:
    # --import-mode=importlib puts no test directory on sys.path (as in tests/store/conftest.py).
    sys.path.insert(0, str(Path(__file__).parents[1]))

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from postgres_fixture import postgres_database_url, postgres_url

__all__ = ["postgres_database_url", "postgres_url"]  # fixtures, re-exported for pytest

pytestmark = pytest.mark.postgres
SCOPE = "project:example/api"


@pytest.fixture
def pg_mem(postgres_database_url: str, tmp_path: Path) -> Iterator[Cairn]:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    with Cairn.open(
        postgres_database_url,
        settings=settings,
        embedder=HashingEmbedder(),
        cwd=tmp_path,
        integration="claude-code",
        integration_version="2.0",
    ) as mem:
        yield mem


def test_loop_on_postgres(pg_mem: Cairn) -> None:
    mem = pg_mem
    db = mem.remember("We store sessions in PostgreSQL.", type="decision", scope=SCOPE)
    why = mem.remember(
        "Redis lost sessions twice.", type="lesson", scope=SCOPE, relates_to=[db.memory_id]
    )
    rule = mem.remember("Never deploy on Fridays.", type="constraint", scope=SCOPE)
    brief = mem.activate("move sessions to postgres", scope=SCOPE, task_context={"db": "pg"})
    assert [m.memory_id for m in brief.constraints] == [rule.memory_id]
    found = mem.recall(
        "where are sessions stored", session_id=brief.session_id, evidence="full", limit=1
    )
    assert [(h.ref, h.pathway) for h in found.hits] == [
        (db.memory_id, "direct"),
        (why.memory_id, "associated"),
    ]
    provenance = found.hits[0].provenance
    assert provenance is not None and provenance.integration_version == "2.0"
    shown = [{"ref": ref, "used": True, "effect": "helped"} for ref in brief.refs]
    mem.feedback(brief.session_id, brief.retrieval_id, shown)
    mem.feedback(
        brief.session_id,
        found.retrieval_id,
        [{"ref": db.memory_id, "used": True, "effect": "helped"}],
    )
    mem.pin("next: drop redis", session_id=brief.session_id)
    mem.log_progress(brief.session_id, "moved the sessions", used=[db.memory_id])
    done = mem.commit(
        brief.session_id,
        outcome="success",
        summary="Moved the sessions.",
        procedure={"steps": ["migrate sessions to postgres"]},
        used=[db.memory_id],
    )
    again = mem.recall("migrate sessions postgres", scope=SCOPE)
    assert [p.procedure_id for p in again.procedures] == [done.procedure_id]
    history = mem.history(scope=SCOPE)
    assert "next: drop redis" in history.text
    assert mem.episodes(history.lines[-1].at, scope=SCOPE).lines
    stored = mem.get_memory(db.memory_id, scope=SCOPE).records[0].memory
    assert stored.evidence["feedback"]["helped"] == 2 and stored.cited == 2
