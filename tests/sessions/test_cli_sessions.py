"""The session verbs of the CLI against a real temporary store, each call a fresh open."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cairn.adapters.cli import main

SCOPE = "project:example/cli"
Run = Callable[..., Result]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    monkeypatch.delenv("CAIRN_URL", raising=False)
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(main, list(args), catch_exceptions=False)

    return invoke


def ok_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_loop_through_the_cli(run: Run) -> None:
    ref = ok_json(
        run(
            "remember",
            "Deploy with make release.",
            "--type",
            "instruction",
            "--scope",
            SCOPE,
            "--json",
        )
    )["memory_id"]
    brief = ok_json(
        run(
            "activate",
            "deploy the api",
            "--scope",
            SCOPE,
            "--task-context",
            '{"env": "staging"}',
            "--json",
        )
    )
    session, brief_ret = brief["session_id"], brief["retrieval_id"]
    assert brief["task_context"] == {"env": "staging"}
    # Relevant to the task, it shows among the memories (a memory shows once in a brief).
    assert [m["memory_id"] for m in brief["memories"]] == [ref] and brief["instructions"] == []

    found = ok_json(
        run("recall", "how do I deploy", "--session-id", session, "--evidence", "full", "--json")
    )
    assert found["session_id"] == session and found["hits"][0]["memory_id"] == ref
    assert found["evidence"][0]["content"] == "Deploy with make release."

    refused = run("commit", session, "--outcome", "success", "--summary", "Deployed.")
    assert refused.exit_code == 2
    assert brief_ret in refused.output and found["retrieval_id"] in refused.output

    text = run("feedback", session, brief_ret, f"{ref}:used:helped")
    assert text.exit_code == 0 and found["retrieval_id"] in text.output
    fed = ok_json(
        run(
            "feedback",
            session,
            found["retrieval_id"],
            "--assessments-json",
            json.dumps([{"memory_id": ref, "used": True, "effect": "helped"}]),
            "--json",
        )
    )
    assert fed["pending"] == []

    assert run("log-progress", session, "released to staging", "--used", ref).exit_code == 0
    done = ok_json(
        run(
            "commit",
            session,
            "--outcome",
            "success",
            "--summary",
            "Deployed.",
            "--step",
            "make release",
            "--step",
            "docker push",
            "--caveat",
            "staging first",
            "--used",
            ref,
            "--json",
        )
    )
    assert done["status"] == "committed" and done["procedure_id"].startswith("proc_")

    again = ok_json(run("recall", "deploy the api release", "--scope", SCOPE, "--json"))
    assert [p["procedure_id"] for p in again["procedures"]] == [done["procedure_id"]]
    assert again["procedures"][0]["steps"] == ["make release", "docker push"]
    shown = run("recall", "deploy the api release", "--scope", SCOPE)
    assert done["procedure_id"] in shown.output


def test_pin_history_and_episodes(run: Run) -> None:
    assert run("pin", "next: pick the best name", "--scope", SCOPE).exit_code == 0
    assert run("pin", "candidates: A, B", "--scope", SCOPE).exit_code == 0
    history = run("history", "--scope", SCOPE)
    assert history.exit_code == 0
    assert history.output.splitlines()[-1].endswith("pin: candidates: A, B")
    data = ok_json(run("history", "--scope", SCOPE, "--max-chars", "60", "--json"))
    assert [line["text"] for line in data["lines"]] == ["candidates: A, B"]
    assert data["truncated"] is True
    moment = data["lines"][0]["at"][:19].replace("T", " ")
    window = ok_json(run("episodes", moment, "--scope", SCOPE, "--json"))
    assert [line["text"] for line in window["lines"]] == [
        "next: pick the best name",
        "candidates: A, B",
    ]
    plain = run("episodes", moment, "--scope", SCOPE)
    assert "pin: next: pick the best name" in plain.output
    empty = run("history", "--scope", "project:example/empty")
    assert "nothing in the trace" in empty.output


def test_end_and_session_errors(run: Run) -> None:
    session = ok_json(run("activate", "look around", "--scope", SCOPE, "--json"))["session_id"]
    ended = run("end", session, "--summary", "nothing to do")
    assert ended.exit_code == 0 and "ended" in ended.output
    again = run("end", session)
    assert again.exit_code == 2 and "already ended" in again.output
    unknown = run("recall", "x", "--session-id", "ses_" + "0" * 24)
    assert unknown.exit_code == 2 and "activate" in unknown.output
    bad = run("feedback", session, "ret_1", "mem_1:maybe:helped")
    assert bad.exit_code == 2 and "REF:used|unused:EFFECT" in bad.output
    both = run(
        "commit",
        session,
        "--outcome",
        "success",
        "--summary",
        "x",
        "--procedure",
        '{"steps": ["a"]}',
        "--step",
        "b",
    )
    assert both.exit_code == 2
    not_json = run("activate", "x", "--scope", SCOPE, "--task-context", "{oops")
    assert not_json.exit_code == 2 and "not valid JSON" in not_json.output


def test_activate_prints_a_readable_brief(run: Run) -> None:
    run("remember", "Never deploy on Fridays.", "--type", "constraint", "--scope", SCOPE)
    run("remember", "The deploy script lives in ops/deploy.sh.", "--type", "fact", "--scope", SCOPE)
    out = run("activate", "deploy script changes", "--scope", SCOPE)
    assert out.exit_code == 0
    assert "constraint: mem_1  Never deploy on Fridays." in out.output
    assert "relevant: mem_2" in out.output
    assert out.output.startswith("session ses_")


def test_remember_cli_takes_relations_and_sessions(run: Run) -> None:
    hub = ok_json(
        run(
            "remember",
            "Deploys use the release pipeline.",
            "--type",
            "fact",
            "--scope",
            SCOPE,
            "--json",
        )
    )["memory_id"]
    session = ok_json(run("activate", "x", "--scope", SCOPE, "--json"))["session_id"]
    spoke = ok_json(
        run(
            "remember",
            "Canary stage lasts ten minutes.",
            "--type",
            "fact",
            "--session-id",
            session,
            "--relates-to",
            hub,
            "--used",
            hub,
            "--json",
        )
    )
    assert spoke["scope"] == SCOPE
    found = ok_json(
        run("recall", "release pipeline deploys", "--scope", SCOPE, "--limit", "1", "--json")
    )
    assert [(h["memory_id"], h["pathway"]) for h in found["hits"]] == [
        (hub, "direct"),
        (spoke["memory_id"], "associated"),
    ]
    text = run("recall", "release pipeline deploys", "--scope", SCOPE, "--limit", "1")
    assert f"associated via {hub}" in text.output
