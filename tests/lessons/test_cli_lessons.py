"""`cairn lessons`, its mute rules and `cairn confirm` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from lessonkit import Repo

from cairn import Cairn
from cairn.adapters.cli import main


@pytest.fixture
def store_location(tmp_path: Path) -> str:
    return str(tmp_path / "memory.db")  # the CLI is an adapter; the core runs on both backends


def run(store: str, repo: Repo, *args: str) -> str:
    result = CliRunner().invoke(main, ["--store", store, *args, "--cwd", str(repo.path)])
    assert result.exit_code == 0, result.output
    return result.output


def test_lessons_mute_list_unmute_and_confirm(
    repo: Repo, writer: Cairn, store_location: str
) -> None:
    ref = writer.remember("Never run `npm publish` by hand", type="warning",
                          cwd=repo.path).memory_id  # fmt: skip
    out = run(store_location, repo, "lessons", "--command", "npm publish")
    assert out.startswith("cairn memory: 1 lesson before this Bash call:")
    assert f"{ref} [warning]" in out and "warning about `npm publish`" in out
    data = json.loads(run(store_location, repo, "lessons", "--tool", "Bash", "--args",
                          '{"command": "npm publish"}', "--json"))  # fmt: skip
    assert data["lessons"][0]["ref"] == ref and data["text"]
    quiet = run(store_location, repo, "lessons", "--command", "ls -la")
    assert quiet.startswith("nothing worth saying before this Bash call")
    assert "muted for type warning" in run(store_location, repo, "lessons", "mute", "--type",
                                           "warning")  # fmt: skip
    assert "type warning" in run(store_location, repo, "lessons", "list")
    muted = run(store_location, repo, "lessons", "--command", "npm publish")
    assert muted.startswith("nothing worth saying") and "1 muted" in muted
    assert run(store_location, repo, "lessons", "unmute", "--type", "warning").startswith(
        "mute rule removed"
    )
    assert run(store_location, repo, "lessons", "list").startswith("no lessons are muted")
    confirmed = run(store_location, repo, "confirm", ref)
    assert confirmed.startswith(f"{ref} confirmed by person")  # a person, not the cli client


def test_lessons_needs_a_call(store_location: str, repo: Repo) -> None:
    result = CliRunner().invoke(main, ["--store", store_location, "lessons"])
    assert result.exit_code == 2 and "--tool" in result.output
    bad = CliRunner().invoke(main, ["--store", store_location, "lessons", "mute", "--type", "x",
                                    "--cwd", str(repo.path)])  # fmt: skip
    assert bad.exit_code == 2 and "is not a memory type" in bad.output


def test_lessons_stdin_uses_the_cwd_option(
    repo: Repo, writer: Cairn, store_location: str, tmp_path: Path
) -> None:
    ref = writer.remember("Never run `npm publish` by hand", type="warning",
                          cwd=repo.path).memory_id  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    payload = json.dumps({"tool": "Bash", "args": {"command": "npm publish"}})

    def ask(*args: str, stdin: str = payload) -> dict[str, object]:
        result = CliRunner().invoke(main, ["--store", store_location, "lessons", "--stdin", *args],
                                    input=stdin)  # fmt: skip
        assert result.exit_code == 0, result.output
        answer: dict[str, object] = json.loads(result.output)
        return answer

    found = ask("--cwd", str(repo.path))
    assert found["scope"] == "project:github.com/acme/shop", found
    assert [lesson["ref"] for lesson in found["lessons"]] == [ref]  # type: ignore[attr-defined]
    # the option wins over the input's own cwd
    with_cwd = json.dumps({"tool": "Bash", "args": {"command": "npm publish"},
                           "cwd": str(elsewhere)})  # fmt: skip
    assert ask("--cwd", str(repo.path), stdin=with_cwd)["scope"] == found["scope"]
    assert ask(stdin=with_cwd)["scope"] != found["scope"]
    limited = ask("--cwd", str(repo.path), "--limit", "11")
    assert limited["error"]["code"] == "invalid_input"  # type: ignore[index]
