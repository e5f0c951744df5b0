"""An import is item by item: a crash midway leaves whole items only, and a rerun resumes
(what was written is recognised, the rest written). The CLI prints the plan (`--dry-run`) or
what was done, with the same summary; both backends for the store, SQLite for the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn import Cairn
from cairn.adapters.cli import main
from cairn.importers import apply
from cairn.importers.agent_files import file_items
from cairn.importers.markdown import cut

RULES = "".join(f"- Rule number {n} is about topic {n * 7}.\n" for n in range(1, 6))


class Crash(Exception):
    pass


def test_a_crash_leaves_whole_items_and_a_rerun_resumes(
    mem: Cairn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "AGENTS.md").write_text(RULES)
    real = apply.store_claim
    calls = []

    def crashing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        result = real(*args, **kwargs)
        if len(calls) == 3:
            raise Crash  # after the memory is written, before its ledger event
        return result

    monkeypatch.setattr(apply, "store_claim", crashing)
    with pytest.raises(Crash):
        mem.import_memory("agent-files", tmp_path)
    assert len(list(mem.store.iter_memories())) == 2
    monkeypatch.setattr(apply, "store_claim", real)
    [report] = mem.import_memory("agent-files", tmp_path)
    assert report.counts["unchanged"] == 2 and report.counts["create"] == 3
    contents = sorted(m.content for m in mem.store.iter_memories())
    assert contents == sorted(f"Rule number {n} is about topic {n * 7}." for n in range(1, 6))


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    monkeypatch.delenv("CAIRN_URL", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def test_cli_dry_run_then_run_then_rerun(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "CLAUDE.md").write_text("- Never push on Fridays.\n- Use tabs.\n")
    dry = cli("import", "--from", "agent-files", str(repo), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "create: CLAUDE.md:1-1: Never push on Fridays." in dry.stdout
    assert "would import from agent-files" in dry.stdout and "2 created" in dry.stdout
    done = cli("import", "--from", "agent-files", str(repo))
    assert done.exit_code == 0 and "imported from agent-files" in done.stdout
    assert "2 created" in done.stdout
    again = cli("import", "--from", "agent-files", str(repo), "--json")
    [report] = json.loads(again.stdout)
    assert report["counts"]["unchanged"] == 2 and report["counts"]["create"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "mem0"], "needs the PATH"),
        (["--from", "mcp-memory", "nowhere.jsonl"], "is not a file"),
        (["--from", "mem0", "x" * 5000], "is not a file"),
        (["--from", "basic-memory", "x" * 5000], "is not a folder"),
        (["--dry-run", "x.jsonl"], "x.jsonl is not a file"),
        (["--user", "x.jsonl"], "go with --from"),
        (["missing.jsonl"], "cannot read missing.jsonl"),
        ([], "give the export file"),
    ],
)
def test_cli_errors_are_one_line(cli, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    out = cli("import", *args)
    assert out.exit_code == 2
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_any_text_cuts_into_blocks_inside_the_file(text: str) -> None:
    lines = text.splitlines()
    for block in cut(text):
        assert block.text.strip() == block.text and block.text
        assert 1 <= block.start <= block.end <= len(lines)
        assert block.text.splitlines()[0] in lines[block.start - 1]
    for item in file_items(text, "AGENTS.md", "codex"):
        assert item.type in ("instruction", "constraint", "preference")
        assert item.source_ref is not None and item.source_ref.startswith("AGENTS.md:")
