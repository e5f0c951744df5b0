"""The seed-shaped remember (seed 003): scalar or batch, never both; per-item results."""

from __future__ import annotations

import pytest

from cairn import Cairn, InvalidInput, InvalidScope, NotFound
from cairn.models import RememberBatch, RememberResult, to_jsonable

SCOPE = "project:example/api"
OTHER = "project:example/web"
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_scalar_form(mem: Cairn) -> None:
    result = mem.remember_typed(
        "CI must pass before merge.",
        "constraint",
        scope=SCOPE,
        tags=["ci"],
        reason="two broken mains",
    )
    assert isinstance(result, RememberResult)
    assert (result.disposition, result.type, result.scope) == ("created", "constraint", SCOPE)
    stored = mem.get_memory(result.memory_id, scope=SCOPE).records[0].memory
    assert stored.tags == ("ci",) and stored.reason == "two broken mains"


def test_batch_form_reports_each_item(mem: Cairn) -> None:
    batch = mem.remember_typed(
        scope=SCOPE,
        memories=[
            {"content": "PostgreSQL is required in production.", "type": "constraint"},
            {"content": "Prefer pgBouncer pooling.", "type": "preference"},
            {
                "content": "Moved off Redis.",
                "type": "decision",
                "occurred_at": "2026-08-01T14:00:00Z",
            },
            {"content": "   ", "type": "fact"},
            {"content": f"deploy token {SECRET}", "type": "fact"},
            {"content": "Typed wrong.", "type": "rumour"},
            "not an object",
            {"content": "Elsewhere.", "type": "fact", "scope": OTHER},
        ],
    )
    assert isinstance(batch, RememberBatch) and batch.ok
    assert [r.index for r in batch.results] == list(range(8))
    assert [r.ok for r in batch.results] == [True, True, True, False, False, False, False, False]
    codes = [r.error.code for r in batch.results if r.error is not None]
    assert codes == ["refused", "refused", "unknown_type", "invalid_input", "invalid_input"]
    assert all(r.error.retryable is False for r in batch.results if r.error is not None)
    assert "inherit" in batch.results[7].error.message  # type: ignore[union-attr]
    assert SECRET not in str(to_jsonable(batch))
    assert {r.data.scope for r in batch.results if r.data is not None} == {SCOPE}
    data = to_jsonable(batch)
    assert set(data) == {"results", "ok"}
    assert set(data["results"][0]) == {"index", "ok", "data", "error"}


def test_scalar_and_batch_are_mutually_exclusive(mem: Cairn) -> None:
    item = [{"content": "A fact.", "type": "fact"}]
    with pytest.raises(InvalidInput, match="not both"):
        mem.remember_typed("A fact.", "fact", memories=item, scope=SCOPE)
    with pytest.raises(InvalidInput, match="not both"):
        mem.remember_typed(type="fact", memories=item, scope=SCOPE)
    with pytest.raises(InvalidInput, match="content and type"):
        mem.remember_typed(scope=SCOPE)
    with pytest.raises(InvalidInput, match="type is missing"):
        mem.remember_typed("A fact.", scope=SCOPE)
    with pytest.raises(InvalidInput, match="content is missing"):
        mem.remember_typed(type="fact", scope=SCOPE)
    with pytest.raises(InvalidInput, match="empty"):
        mem.remember_typed(memories=[], scope=SCOPE)
    with pytest.raises(InvalidInput, match="list"):
        mem.remember_typed(memories={"content": "x", "type": "fact"}, scope=SCOPE)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="in each item"):
        mem.remember_typed(memories=item, scope=SCOPE, tags=["x"])
    assert list(mem.store.iter_memories()) == []


def test_batch_in_a_session(mem: Cairn) -> None:
    ref = mem.remember("Use UTC.", type="instruction", scope=SCOPE).memory_id
    session_id = mem.activate("record decisions", scope=SCOPE).session_id
    batch = mem.remember_typed(
        session_id=session_id,
        memories=[
            {"content": "We use Alembic for migrations.", "type": "decision", "used": [ref]},
            {"content": "Migrations run in CI.", "type": "fact"},
        ],
    )
    assert isinstance(batch, RememberBatch) and all(r.ok for r in batch.results)
    for result in batch.results:
        assert result.data is not None and result.data.scope == SCOPE
        stored = mem.get_memory(result.data.memory_id, scope=SCOPE).records[0].memory
        assert stored.session_id == session_id
    assert mem.get_memory(ref, scope=SCOPE).records[0].memory.cited == 1
    with pytest.raises(InvalidScope):
        mem.remember_typed(
            session_id=session_id, scope=OTHER, memories=[{"content": "x", "type": "fact"}]
        )
    with pytest.raises(NotFound):
        mem.remember_typed(
            session_id="ses_" + "1" * 24, memories=[{"content": "x", "type": "fact"}]
        )
    own = mem.remember_typed(
        session_id=session_id,
        memories=[{"content": "x y z", "type": "fact", "session_id": session_id}],
    )
    assert isinstance(own, RememberBatch) and own.results[0].ok is False
