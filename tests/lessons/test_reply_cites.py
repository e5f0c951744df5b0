"""Refs an agent names in its own replies count as cites, once per session per ref: from the
Claude Code transcript (read at Stop and SessionEnd, as hostile input) and from a commit's
summary. On both backends."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lessonkit import Repo

from cairn import Cairn
from cairn.adapters.agent_hooks import claude_code_answer
from cairn.evidence import refs_named_in
from cairn.lessons import transcript
from cairn.lessons.transcript import reply_text

SESSION = "5f0c1e2a-7b4d-4e8f-9a61-2c3d4e5f6a7b"


def cited(mem: Cairn, ref: str) -> int:
    return mem.get_memory(ref).records[0].memory.cited


def two(writer: Cairn, repo: Repo) -> tuple[str, str]:
    first = writer.remember("Charges go through the idempotent provider call", type="decision",
                            cwd=repo.path).memory_id  # fmt: skip
    second = writer.remember("Invoices total their lines", type="fact", cwd=repo.path).memory_id
    return first, second


def assistant(*blocks: dict[str, Any] | str) -> str:
    content: Any = blocks[0] if len(blocks) == 1 and isinstance(blocks[0], str) else list(blocks)
    return json.dumps({"type": "assistant", "message": {"role": "assistant", "content": content}})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def stop(
    repo: Repo, path: Path | str, name: str = "Stop", session: str = SESSION
) -> dict[str, Any]:
    return {"session_id": SESSION, "transcript_path": str(path), "cwd": str(repo.path),
            "hook_event_name": name, "stop_hook_active": False}  # fmt: skip


def test_refs_named_in_text() -> None:
    assert refs_named_in("see mem_12, mem_3 and mem_12 again") == [12, 3]
    assert refs_named_in("xmem_4 mem_5a my-mem_6 mem_7.") == [7]
    assert refs_named_in("mem_" + "9" * 13) == []


def test_cite_replies_counts_once_per_session(repo: Repo, writer: Cairn, agent: Cairn) -> None:
    first, second = two(writer, repo)
    said = f"I kept {first} in mind ({first}), and mem_999999 is not a memory."
    assert agent.cite_replies(said, session_id="claude-a", cwd=repo.path) == (first,)
    assert agent.cite_replies(said + f" Also {second}.", session_id="claude-a",
                              cwd=repo.path) == (second,)  # fmt: skip
    assert cited(writer, first) == 1 and cited(writer, second) == 1
    assert agent.cite_replies(said, session_id="claude-b", cwd=repo.path) == (first,)
    memory = writer.get_memory(first).records[0].memory
    assert memory.cited == 2 and memory.last_cited_at is not None
    assert memory.evidence["clients"]["claude-code"]["cited"] == 2
    assert agent.cite_replies(said, session_id="claude-c", scope="project:other/x") == ()


def test_stop_and_session_end_read_the_transcript(
    repo: Repo, writer: Cairn, agent: Cairn, tmp_path: Path
) -> None:
    first, second = two(writer, repo)
    path = tmp_path / f"{SESSION}.jsonl"
    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": f"use {second}"}}),
        assistant(text(f"Following {first}, the charge stays idempotent."),
                  {"type": "tool_use", "name": "Edit", "input": {"note": second}}),
        "{not json",
        json.dumps(["a", "list"]),
        assistant(f"Done; {first} held."),
        "",
    ]  # fmt: skip
    path.write_text("\n".join(lines), encoding="utf-8")
    claude_code_answer(agent, stop(repo, path))
    assert (cited(writer, first), cited(writer, second)) == (1, 0)  # the user's and the tool's
    claude_code_answer(agent, stop(repo, path))  # the next turn's Stop reads it all again
    assert cited(writer, first) == 1
    with path.open("a", encoding="utf-8") as out:
        out.write(assistant(text(f"Then {second} mattered too.")) + "\n")
    assert claude_code_answer(agent, stop(repo, path, "SessionEnd")) is None
    assert (cited(writer, first), cited(writer, second)) == (1, 1)


def test_a_hostile_transcript_says_nothing(
    repo: Repo, writer: Cairn, agent: Cairn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = two(writer, repo)
    real = tmp_path / "real.jsonl"
    real.write_text(assistant(f"{first} helped") + "\n", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    plain = tmp_path / "notes.txt"
    plain.write_text(assistant(f"{first} helped") + "\n", encoding="utf-8")
    for path in (link, fifo, tmp_path, "real.jsonl", tmp_path / "missing.jsonl", "", "a\0b",
                 plain):  # fmt: skip
        assert reply_text(str(path)) == ""
        claude_code_answer(agent, stop(repo, path))
    assert reply_text(None) == "" and reply_text(12) == ""
    assert cited(writer, first) == 0
    # Huge: only the tail is read, and an over-long line is skipped.
    monkeypatch.setattr(transcript, "MAX_BYTES", 4096)
    monkeypatch.setattr(transcript, "MAX_LINE_BYTES", 2048)
    big = tmp_path / "big.jsonl"
    early = assistant("mem_1 said long ago")
    long_line = assistant("x" * 3000 + f" {first}")
    big.write_text("\n".join([early, "y" * 10_000, long_line, assistant(f"ok {first}")]) + "\n",
                   encoding="utf-8")  # fmt: skip
    assert reply_text(str(big)) == f"ok {first}"


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=400) | st.lists(st.text(max_size=40)).map(lambda t: "\n".join(
    assistant(x) for x in t).encode()))  # fmt: skip
def test_any_transcript_reads_without_raising(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(raw)
    assert isinstance(reply_text(str(path)), str)


def test_a_commit_summary_naming_refs_cites_them_once(mem: Cairn) -> None:
    scope = "project:example/api"
    a = mem.remember("Sessions live in PostgreSQL", type="decision", scope=scope).memory_id
    b = mem.remember("CI runs on Python 3.11", type="constraint", scope=scope).memory_id
    session_id = mem.activate("unrelated chores", scope=scope).session_id
    pending = mem.store.session_retrievals(session_id)
    for retrieval in pending:
        if retrieval.refs:
            mem.feedback(session_id, retrieval.ref, [{"ref": r, "used": False, "effect": "unknown"}
                                                      for r in retrieval.refs])  # fmt: skip
    summary = f"Kept {a} and {b} in mind; {b} decided it. mem_424242 is no ref."
    done = mem.commit(session_id, outcome="success", used=[a], summary=summary)
    assert done.cited == (a, b)
    assert mem.get_memory(a, scope=scope).records[0].memory.cited == 1
    assert mem.get_memory(b, scope=scope).records[0].memory.cited == 1
