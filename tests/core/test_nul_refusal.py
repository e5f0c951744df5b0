"""NUL characters are refused in every text a caller gives, the same way on both backends
(PostgreSQL text cannot hold them, so SQLite refuses them too and stores stay movable)."""

from __future__ import annotations

from typing import Any

import pytest

from cairn import Cairn, InvalidInput, Refused

SCOPE = "project:example/api"
NUL = "before\x00after"


@pytest.mark.parametrize(
    ("field", "extra"),
    [
        ("content", {}),
        ("summary", {"summary": NUL}),
        ("reason", {"reason": NUL}),
        ("tags", {"tags": ["ok", NUL]}),
        ("diff_text", {"diff_text": NUL}),
        ("error_trace", {"error_trace": NUL}),
    ],
)
def test_remember_refuses_nul_in_any_field(mem: Cairn, field: str, extra: dict[str, Any]) -> None:
    content = NUL if field == "content" else "A plain claim."
    with pytest.raises(Refused, match=rf"{field} holds a NUL character .* remove it"):
        mem.remember(content, type="fact", scope=SCOPE, **extra)
    assert list(mem.store.iter_memories()) == []


def test_a_source_ref_with_nul_is_refused_too(mem: Cairn) -> None:
    for source_ref in (f"src/{NUL}.py", f"https://example.com/{NUL}"):
        with pytest.raises(InvalidInput):
            mem.remember("A plain claim.", type="fact", scope=SCOPE, source_ref=source_ref)
    assert list(mem.store.iter_memories()) == []


def test_corrections_sessions_and_pins_refuse_nul(mem: Cairn) -> None:
    ref = mem.remember("Builds use Bazel.", type="fact", scope=SCOPE).memory_id
    with pytest.raises(Refused, match="content holds a NUL"):
        mem.correct(ref, NUL, reason="fix", scope=SCOPE)
    with pytest.raises(Refused, match="reason holds a NUL"):
        mem.correct(ref, "Builds use Make.", reason=NUL, scope=SCOPE)
    with pytest.raises(Refused, match="reason holds a NUL"):
        mem.forget(ref, reason=NUL, scope=SCOPE)
    with pytest.raises(Refused, match="task holds a NUL"):
        mem.activate(NUL, scope=SCOPE)
    brief = mem.activate("move builds to make", scope=SCOPE)
    with pytest.raises(Refused, match="NUL"):
        mem.pin(NUL, scope=SCOPE)
    with pytest.raises(Refused, match="summary holds a NUL"):
        mem.end(brief.session_id, summary=NUL)
    [memory] = list(mem.store.iter_memories())
    assert memory.content == "Builds use Bazel." and memory.status == "active"
