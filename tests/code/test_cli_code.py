"""The code-awareness verbs of the CLI against a real store and a real repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cairn.adapters.cli import main

from .conftest import Repo


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    monkeypatch.delenv("CAIRN_URL", raising=False)
    store = str(tmp_path / "cli.db")
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        result = runner.invoke(main, ["--store", store, *args], catch_exceptions=False)
        return result

    return invoke


def data(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_branch_goal_and_brief(run: Any, repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature/cli")
    cwd = str(repo.path)
    shown = run("branch", "goal", "--cwd", cwd)
    assert shown.exit_code == 0 and "no goal set" in shown.output
    goal = data(run("branch", "goal", "Make the CLI friendly", "--cwd", cwd, "--json"))
    assert goal["branch"] == "feature/cli" and goal["goal"] == "Make the CLI friendly"
    assert "feature/cli: Make the CLI friendly" in run("branch", "goal", "--cwd", cwd).output
    data(run("remember", "Add --json everywhere", "--type", "task", "--cwd", cwd, "--json"))
    brief = run("branch", "brief", "--cwd", cwd)
    assert "Make the CLI friendly" in brief.output and "Add --json everywhere" in brief.output
    recall = run("recall", "what is in progress", "--cwd", cwd)
    assert recall.output.splitlines()[0].startswith("brief:feature/cli")


def test_observe_undo_and_show(run: Any, repo: Repo) -> None:
    cwd = str(repo.path)
    ref = data(run("remember", "Prefer dataclasses", "--type", "preference", "--cwd", cwd,
                   "--json"))["memory_id"]  # fmt: skip
    repo.git("checkout", "-q", "-b", "feature/dc")
    data(run("remember", "Converted models", "--type", "fact", "--cwd", cwd, "--used", ref,
             "--json"))  # fmt: skip
    repo.git("checkout", "-q", "main")
    act = data(run("observe", "merge", "feature/dc", "--cwd", cwd, "--json"))
    assert act["confirmed"] == [ref]
    shown = run("show", ref, "--cwd", cwd)
    assert f"{act['act_id']}: merge feature/dc confirmed" in shown.output
    assert f"cairn undo-act {act['act_id']}" in shown.output
    assert "by client: cli (cited 1, echo 1)" in shown.output
    text = run("undo-act", act["act_id"], "--cwd", cwd)
    assert text.exit_code == 0 and "undone" in text.output
    again = run("undo-act", act["act_id"], "--cwd", cwd)
    assert again.exit_code == 2 and "already undone" in again.output
    discard = run("observe", "discard", "feature/dc", "--cwd", cwd)
    assert (
        "contradicted: " + ref in discard.output and "undo with: cairn undo-act" in discard.output
    )


def test_hook_install_and_tidy(run: Any, repo: Repo) -> None:
    cwd = str(repo.path)
    installed = data(run("hook", "install", "--cwd", cwd, "--json"))
    assert "post-merge" in installed["written"]
    assert "already installed" in run("hook", "install", "--cwd", cwd).output
    for _ in range(2):
        data(run("remember", "Run the linter before pushing any branch", "--type", "instruction",
                 "--cwd", cwd, "--no-dedup", "--json"))  # fmt: skip
    listed = data(run("tidy", "--cwd", cwd, "--json"))
    assert [p["kind"] for p in listed] == ["merge"]
    proposal = listed[0]["id"]
    assert "decide with" in run("tidy", "--cwd", cwd).output
    declined = run("tidy", "decline", proposal, "--cwd", cwd)
    assert declined.exit_code == 0 and f"{proposal} declined" in declined.output
    assert data(run("tidy", "--cwd", cwd, "--json")) == []
    assert "nothing to tidy" in run("tidy", "--cwd", cwd).output


def test_stats_report_citations_rates_and_freshness(run: Any, repo: Repo) -> None:
    cwd = str(repo.path)
    data(run("remember", "helper adds one", "--type", "fact", "--cwd", cwd,
             "--source-ref", "src/app.py:4-5", "--json"))  # fmt: skip
    data(run("recall", "helper adds one", "--cwd", cwd, "--json"))
    stats = data(run("stats", "--cwd", cwd, "--json"))
    assert stats["citations"] == {"same": 1, "changed": 0, "gone": 0, "unchecked": 0}
    assert stats["recall"]["recalls"] == 1 and stats["recall"]["hit_rate"] == 1.0
    assert stats["index"]["fresh"] is True and stats["index"]["current"] == 1
    text = run("stats", "--cwd", cwd).output
    assert "citations: same=1" in text and "recall: recalls=1" in text
