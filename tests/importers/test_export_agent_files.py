"""`cairn export --to agent-files`: the scope's pinned rules between cairn's markers in an agent
file, nothing outside the markers touched, stable on re-export, and not imported back (no echo).
Both backends for the store; the CLI on SQLite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn import Cairn
from cairn.adapters.cli import main
from cairn.errors import CairnError, InvalidInput
from cairn.importers.markdown import MARK_BEGIN, MARK_END

HUMAN = "# Notes for agents\r\n\r\n- Written by a human.\r\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "AGENTS.md").write_bytes(HUMAN.encode())
    return root


def pin(mem: Cairn, repo: Path) -> None:
    scope = mem.scope_for(cwd=repo)
    mem.remember("Never force-push to main.", type="constraint", scope=scope, pinned=True)
    mem.remember("Prefer ruff over flake8.\nIt is faster.", type="preference", scope=scope,
                 pinned=True)  # fmt: skip
    mem.remember("Run make check first.", type="instruction", scope=scope, pinned=True)
    mem.remember("Not pinned, not exported.", type="instruction", scope=scope)
    mem.remember("The API is on port 80.", type="fact", scope=scope, pinned=True)


def test_writes_between_markers_and_is_stable(mem: Cairn, repo: Path) -> None:
    pin(mem, repo)
    first = mem.export_agent_file(cwd=repo)
    assert first.memories == 3 and first.changed
    text = (repo / "AGENTS.md").read_bytes().decode()
    assert text.startswith(HUMAN)  # outside the markers, byte for byte (CRLF kept)
    section = text[len(HUMAN) :]
    assert section.startswith("\n" + MARK_BEGIN) and section.endswith(MARK_END + "\n")
    order = [section.index(s) for s in ("Never force", "Run make", "Prefer ruff")]
    assert order == sorted(order)  # constraints, instructions, preferences
    assert "  It is faster." in section and "Not pinned" not in section and "port 80" not in text
    again = mem.export_agent_file(cwd=repo)
    assert not again.changed and (repo / "AGENTS.md").read_bytes().decode() == text
    (repo / "AGENTS.md").write_bytes((text + "- Added after the section.\n").encode())
    mem.remember("Never commit secrets.", type="constraint", scope=mem.scope_for(cwd=repo),
                 pinned=True)  # fmt: skip
    assert mem.export_agent_file(cwd=repo).memories == 4
    updated = (repo / "AGENTS.md").read_bytes().decode()
    assert updated.startswith(HUMAN)
    assert updated.endswith(MARK_END + "\n- Added after the section.\n")
    assert updated.count(MARK_BEGIN) == 1 and "Never commit secrets." in updated


def test_exported_rules_do_not_echo_on_import(mem: Cairn, repo: Path) -> None:
    pin(mem, repo)
    mem.export_agent_file(cwd=repo)
    [report] = mem.import_memory("agent-files", repo)
    assert report.counts["create"] == 1  # the human's bullet; the section is cairn's own
    assert report.counts["matched"] == 0 and report.counts["boosted"] == 0


def test_refuses_unpaired_markers_links_and_outside_paths(
    mem: Cairn, repo: Path, tmp_path: Path
) -> None:
    (repo / "CLAUDE.md").write_text(f"{MARK_END}\nx\n{MARK_BEGIN}\n")
    with pytest.raises(InvalidInput, match="out of order"):
        mem.export_agent_file("CLAUDE.md", cwd=repo)
    assert (repo / "CLAUDE.md").read_text() == f"{MARK_END}\nx\n{MARK_BEGIN}\n"
    outside = tmp_path / "elsewhere.md"
    outside.write_text("keep\n")
    os.symlink(outside, repo / "GEMINI.md")
    with pytest.raises(InvalidInput, match="leads outside"):
        mem.export_agent_file("GEMINI.md", cwd=repo)
    with pytest.raises(InvalidInput, match="outside the checkout"):
        mem.export_agent_file("../x.md", cwd=repo)
    assert outside.read_text() == "keep\n"


def test_cli_export_to_agent_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    monkeypatch.delenv("CAIRN_URL", raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    runner = CliRunner()
    made = runner.invoke(main, ["remember", "Never skip CI.", "--type", "constraint", "--pinned",
                                "--cwd", str(repo)])  # fmt: skip
    assert made.exit_code == 0, made.output
    out = runner.invoke(main, ["export", "--to", "agent-files", "CLAUDE.md", "--cwd", str(repo)])
    assert out.exit_code == 0 and "1 pinned rules written to" in out.output
    assert "- constraint: Never skip CI." in (repo / "CLAUDE.md").read_text()
    again = runner.invoke(main, ["export", "--to", "agent-files", "CLAUDE.md", "--cwd", str(repo)])
    assert "already up to date" in again.output
    bad = runner.invoke(main, ["export", "x.jsonl", "--cwd", str(repo)])
    assert bad.exit_code == 2 and "go with --to" in bad.output


def test_a_name_too_long_is_one_clear_error(mem: Cairn, repo: Path) -> None:
    with pytest.raises(CairnError, match=r"cannot write x+ .*choose another file"):
        mem.export_agent_file("x" * 5000, cwd=repo)


@pytest.mark.parametrize("name", ["", ".", "sub/.."])
def test_a_path_naming_no_file_is_refused(mem: Cairn, repo: Path, name: str) -> None:
    with pytest.raises(InvalidInput, match="names no file"):
        mem.export_agent_file(name, cwd=repo)


def test_a_folder_named_like_an_agent_file_is_refused(mem: Cairn, repo: Path) -> None:
    (repo / "CLAUDE.md").mkdir()
    with pytest.raises(InvalidInput, match="not a regular file"):
        mem.export_agent_file("CLAUDE.md", cwd=repo)
    [report] = mem.import_memory("agent-files", repo)
    assert any("CLAUDE.md: not a regular file" in p for p in report.problems)
