"""The episodic trace: pin, log_progress, episodes around a moment, the rolling history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cairn import Cairn, InvalidRef
from cairn.sessions.trace import LINE_CHARS

SCOPE = "project:example/api"
OTHER = "project:example/web"


def test_pin_goes_to_the_trace_and_nowhere_else(mem: Cairn) -> None:
    written = mem.pin("candidates: A) Launch Day B) We're Live", scope=SCOPE)
    assert written.event_id.startswith("evt_") and written.scope == SCOPE
    assert list(mem.store.iter_memories()) == [], "pins are not memories"
    [line] = mem.history(scope=SCOPE).lines
    assert line.kind == "pin" and line.text == "candidates: A) Launch Day B) We're Live"
    assert line.line == "2026-08-01 12:00:00 pin: candidates: A) Launch Day B) We're Live"
    assert mem.recall("launch day candidates", scope=SCOPE).hits == ()


def test_history_is_the_newest_lines_within_budget(mem: Cairn, clock: object) -> None:
    for n in range(30):
        clock.advance(minutes=1)  # type: ignore[attr-defined]
        mem.pin(f"note number {n:02d}", scope=SCOPE)
    mem.pin("elsewhere", scope=OTHER)
    whole = mem.history(scope=SCOPE)
    assert [line.text for line in whole.lines] == [f"note number {n:02d}" for n in range(30)]
    assert whole.truncated is False and whole.max_chars == mem.settings.max_history
    one = len(whole.lines[0].line)
    recent = mem.history(one * 5 + 4, scope=SCOPE)
    assert [line.text for line in recent.lines] == [f"note number {n:02d}" for n in range(25, 30)]
    assert recent.truncated is True
    assert len(recent.text) <= one * 5 + 4
    tiny = mem.history(30, scope=SCOPE)
    assert len(tiny.text) <= 30 and tiny.lines[0].text.endswith("…")


def test_history_shows_events_of_every_kind(mem: Cairn) -> None:
    brief = mem.activate("ship the release", scope=SCOPE)
    ref = mem.remember(
        "Release notes live in docs/releases.md.", type="fact", session_id=brief.session_id
    ).memory_id
    mem.recall("release notes", session_id=brief.session_id)
    mem.log_progress(brief.session_id, "drafted the notes", used=[ref])
    mem.pin("next: tag the release", session_id=brief.session_id)
    mem.end(brief.session_id, summary="paused for the freeze")
    kinds = [line.kind for line in mem.history(scope=SCOPE).lines]
    assert kinds == ["activate", "remember", "recall", "progress", "pin", "end"]
    text = mem.history(scope=SCOPE).text
    assert f"{ref} created [fact] Release notes" in text
    assert f"drafted the notes (used {ref})" in text
    assert "paused for the freeze" in text


def test_long_lines_are_capped(mem: Cairn) -> None:
    mem.pin("word " * 400, scope=SCOPE)
    [line] = mem.history(scope=SCOPE).lines
    assert len(line.text) == LINE_CHARS and "\n" not in line.line


def test_episodes_are_centred_on_the_timestamp(mem: Cairn, clock: object) -> None:
    for n in range(40):
        clock.advance(minutes=1)  # type: ignore[attr-defined]
        mem.pin(f"minute {n + 1}", scope=SCOPE)
    window = mem.episodes("2026-08-01 12:20:00", scope=SCOPE)
    texts = [line.text for line in window.lines]
    assert len(texts) == mem.settings.max_episode_lines == 20
    assert texts[0] == "minute 11" and texts[-1] == "minute 30"
    assert "minute 20" in texts[9]
    assert window.at == datetime(2026, 8, 1, 12, 20, tzinfo=UTC)
    early = mem.episodes("2026-08-01 12:02:00", scope=SCOPE)
    assert [line.text for line in early.lines][:3] == ["minute 1", "minute 2", "minute 3"]
    assert len(early.lines) == 20, "a window near the start fills from after"
    late = mem.episodes("2026-08-02", scope=SCOPE)
    assert late.lines[-1].text == "minute 40" and len(late.lines) == 20
    assert mem.episodes("2026-08-01 12:20:00", scope=OTHER).lines == ()


def test_log_progress_counts_cites(mem: Cairn, clock: object) -> None:
    ref = mem.remember(
        "Use the staging bucket for uploads.", type="instruction", scope=SCOPE
    ).memory_id
    brief = mem.activate("upload the assets", scope=SCOPE)
    clock.advance(minutes=3)  # type: ignore[attr-defined]
    written = mem.log_progress(brief.session_id, "uploaded to staging", used=[ref])
    assert written.session_id == brief.session_id and written.scope == SCOPE
    memory = mem.get_memory(ref, scope=SCOPE).records[0].memory
    assert memory.cited == 1 and memory.last_cited_at == written.at
    with pytest.raises(InvalidRef, match="mem_404"):
        mem.log_progress(brief.session_id, "again", used=["mem_404"])
    assert [line.text for line in mem.history(scope=SCOPE).lines].count("again") == 0


def test_used_on_remember_and_commit_counts_cites(mem: Cairn) -> None:
    ref = mem.remember(
        "Use the staging bucket for uploads.", type="instruction", scope=SCOPE
    ).memory_id
    brief = mem.activate("upload", scope=SCOPE)
    mem.remember(
        "Uploads larger than 1 GB need multipart.",
        type="lesson",
        session_id=brief.session_id,
        used=[ref],
    )
    mem.feedback(
        brief.session_id,
        brief.retrieval_id,
        [{"ref": r, "used": True, "effect": "helped"} for r in brief.refs],
    )
    mem.commit(brief.session_id, outcome="success", summary="Uploaded.", used=[ref])
    assert mem.get_memory(ref, scope=SCOPE).records[0].memory.cited == 2
