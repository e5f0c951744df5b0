"""`confirm(ref)`: a confirmation by this client, counted by the evidence rules."""

from __future__ import annotations

import pytest
from lessonkit import Repo

from cairn import Cairn, Conflict, NotFound
from cairn.errors import InvalidRef


def warning(writer: Cairn, repo: Repo) -> str:
    return writer.remember("charge() must stay idempotent", type="warning",
                           source_ref="src/billing.py:8-11", cwd=repo.path).memory_id  # fmt: skip


def confirmed(mem: Cairn, ref: str) -> int:
    return mem.get_memory(ref).records[0].memory.confirmed


def test_another_client_confirms_once_per_session(repo: Repo, writer: Cairn, agent: Cairn) -> None:
    ref = warning(writer, repo)
    first = agent.confirm(ref, cwd=repo.path, session_id="claude-a")
    assert first.outcome == "confirmation" and first.counted and first.confirmed == 1
    again = agent.confirm(ref, cwd=repo.path, session_id="claude-a")
    assert again.outcome == "repeat" and not again.counted and again.confirmed == 1
    other = agent.confirm(ref, cwd=repo.path, session_id="claude-b")
    assert other.counted and confirmed(writer, ref) == 2
    evidence = writer.get_memory(ref).records[0].memory.evidence
    assert evidence["clients"]["claude-code"]["confirmed"] == 2


def test_outside_sessions_once_a_day(
    repo: Repo, writer: Cairn, agent: Cairn, clock: object
) -> None:
    ref = warning(writer, repo)
    assert agent.confirm(ref, cwd=repo.path).counted
    assert agent.confirm(ref, cwd=repo.path).outcome == "repeat"
    clock.advance(days=1)  # type: ignore[attr-defined]
    assert agent.confirm(ref, cwd=repo.path).counted
    assert confirmed(writer, ref) == 2


def test_the_writer_confirming_itself_is_an_echo(repo: Repo, writer: Cairn) -> None:
    ref = warning(writer, repo)
    result = writer.confirm(ref, cwd=repo.path)
    assert result.outcome == "echo" and not result.counted and result.confirmed == 0
    assert "echo" in result.message and "another client" in result.message


def test_confirming_keeps_an_idle_memory_awake(
    repo: Repo, writer: Cairn, agent: Cairn, clock: object
) -> None:
    ref = warning(writer, repo)
    clock.advance(days=31)  # type: ignore[attr-defined]
    writer.recall("idempotent charge", cwd=repo.path)
    assert writer.get_memory(ref).records[0].memory.status == "resting"
    assert agent.confirm(ref, cwd=repo.path).status == "active"
    clock.advance(hours=2)  # type: ignore[attr-defined]
    writer.recall("idempotent charge", cwd=repo.path)  # the next idle sweep
    assert writer.get_memory(ref).records[0].memory.status == "active"


def test_confirm_refuses_what_it_cannot_confirm(repo: Repo, writer: Cairn, agent: Cairn) -> None:
    ref = warning(writer, repo)
    with pytest.raises(InvalidRef):
        agent.confirm("mem_x", cwd=repo.path)
    with pytest.raises(NotFound):
        agent.confirm("mem_999", cwd=repo.path)
    with pytest.raises(NotFound):
        agent.confirm(ref, scope="project:elsewhere/other")
    newer = writer.correct(ref, "charge() is idempotent by key", reason="keyed", cwd=repo.path)
    with pytest.raises(Conflict, match=newer.memory_id):
        agent.confirm(ref, cwd=repo.path)
    writer.forget(newer.memory_id, reason="gone", cwd=repo.path)
    with pytest.raises(Conflict, match="retired"):
        agent.confirm(newer.memory_id, cwd=repo.path)


def test_confirm_is_in_the_trace(repo: Repo, writer: Cairn, agent: Cairn) -> None:
    ref = warning(writer, repo)
    agent.confirm(ref, cwd=repo.path, session_id="claude-a")
    lines = agent.history(cwd=repo.path).lines
    assert any(line.kind == "confirm" for line in lines)
