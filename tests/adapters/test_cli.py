"""The CLI against a real temporary store (deterministic embedder via CAIRN_EMBEDDER)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.adapters.cli import main

SCOPE = "project:example/cli"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    monkeypatch.delenv("CAIRN_URL", raising=False)
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)

    return invoke


def remember(run, text: str, mtype: str = "fact", *extra: str) -> str:  # type: ignore[no-untyped-def]
    out = run("remember", text, "--type", mtype, "--scope", SCOPE, "--json", *extra)
    assert out.exit_code == 0, out.output
    return str(json.loads(out.output)["memory_id"])


def test_remember_then_recall_text_and_json(run) -> None:  # type: ignore[no-untyped-def]
    ref = remember(run, "Release notes live in docs/releases.md.", "fact", "--tag", "docs")
    text = run("recall", "where are release notes", "--scope", SCOPE)
    assert text.exit_code == 0
    assert ref in text.output and "release notes" in text.output.lower()
    data = json.loads(run("recall", "release notes", "--scope", SCOPE, "--json").output)
    assert data["hits"][0]["ref"] == ref
    assert data["retrieval_id"].startswith("ret_")


def test_recall_empty_says_so(run) -> None:  # type: ignore[no-untyped-def]
    out = run("recall", "anything at all", "--scope", SCOPE)
    assert out.exit_code == 0
    assert "nothing found" in out.output


def test_show_correct_forget_purge(run) -> None:  # type: ignore[no-untyped-def]
    ref = remember(run, "The API rate limit is 100 requests per minute.")
    new = json.loads(
        run(
            "correct",
            ref,
            "The API rate limit is 200 requests per minute.",
            "--reason",
            "raised in v2",
            "--scope",
            SCOPE,
            "--json",
        ).output
    )["memory_id"]
    shown = json.loads(run("show", ref, new, "mem_999", "--scope", SCOPE, "--json").output)
    assert [r["ref"] for r in shown["records"]] == [ref, new]
    assert shown["unknown"] == ["mem_999"]
    assert shown["records"][0]["replaced_by_chain"][0]["ref"] == new
    text = run("show", new, "--scope", SCOPE).output
    assert "replaced " + ref in text and "200 requests" in text
    assert run("forget", new, "--reason", "obsolete", "--scope", SCOPE).exit_code == 0
    assert run("purge", ref, "--yes", "--scope", SCOPE).exit_code == 0
    purged = json.loads(run("show", ref, "--scope", SCOPE, "--json").output)
    assert purged["records"][0]["memory"]["content"] == ""


def test_content_from_stdin(run) -> None:  # type: ignore[no-untyped-def]
    out = run("remember", "-", "--type", "lesson", "--scope", SCOPE, input="Piped lesson text.\n")
    assert out.exit_code == 0 and "created" in out.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["remember", "x", "--type", "musing", "--scope", SCOPE], "ten memory types"),
        (["remember", "   ", "--type", "fact", "--scope", SCOPE], "blank"),
        (["recall", "x", "--limit", "40", "--scope", SCOPE], "limit"),
        (["recall", "x", "--scope", "bad scope"], "scope"),
        (["show", "mem_1", "--scope", "nope"], "scope"),
        (["correct", "mem_77", "text", "--reason", "r", "--scope", SCOPE], "mem_77"),
        (["recall", "x", "--as-of", "last tuesday", "--scope", SCOPE], "as_of"),
    ],
)
def test_errors_print_one_line_and_exit_2(run, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    out = run(*args)
    assert out.exit_code == 2
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert message in lines[0]


def test_export_import_via_files(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    ref = remember(run, "Exports are JSON Lines.")
    dump = tmp_path / "dump.jsonl"
    assert run("export", str(dump)).exit_code == 0
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "other"))
    out = run("import", str(dump))
    assert out.exit_code == 0 and "imported 1 memories" in out.stdout
    assert "importing" in out.stderr and "importing" not in out.stdout  # progress on stderr
    shown = json.loads(run("show", ref, "--scope", SCOPE, "--json").output)
    assert shown["records"][0]["memory"]["content"] == "Exports are JSON Lines."
    # Into a store that is not empty the export merges claim by claim: nothing is doubled.
    again = run("import", str(dump))
    assert again.exit_code == 0 and "1 matched" in again.output


def test_stats(run) -> None:  # type: ignore[no-untyped-def]
    remember(run, "One.", "fact")
    remember(run, "Two is a decision.", "decision")
    data = json.loads(run("stats", "--scope", SCOPE, "--json").output)
    assert data["memories"] == 2
    assert data["by_type"] == {"decision": 1, "fact": 1}
    assert "size_bytes" in data["store"]


def test_installed_console_script_exits_2_on_error(tmp_path: Path) -> None:
    env = {**os.environ, "CAIRN_HOME": str(tmp_path), "CAIRN_EMBEDDER": "hashing"}
    script = Path(sys.executable).parent / "cairn"
    proc = subprocess.run(
        [str(script), "recall", "   ", "--scope", SCOPE],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def test_every_command_has_help_text() -> None:
    for name, command in main.commands.items():
        assert command.help, f"cairn {name} has no help text"


def test_query_and_kind(run) -> None:  # type: ignore[no-untyped-def]
    ref = remember(run, "The nightly job compacts the audit log.")
    data = json.loads(run("query", "audit log compaction", "--scope", SCOPE, "--json").output)
    assert data[0]["ref"] == ref
    pages = run("recall", "audit log", "--scope", SCOPE, "--kind", "pages", "--json")
    assert pages.exit_code == 0
    assert all(hit["kind"] == "page" for hit in json.loads(pages.output)["hits"])
    bad = run("query", "x", "--limit", "50", "--scope", SCOPE)
    assert bad.exit_code == 2 and "limit" in bad.output


def test_content_starting_with_a_dash_goes_after_double_dash(run) -> None:  # type: ignore[no-untyped-def]
    assert "goes after '--'" in run("remember", "--help").output
    assert "goes after '--'" in run("correct", "--help").output
    made = run("remember", "--type", "fact", "--scope", SCOPE, "--json", "--",
               "-v prints the version of the CLI.")  # fmt: skip
    assert made.exit_code == 0, made.output
    ref = json.loads(made.output)["memory_id"]
    fixed = run("correct", ref, "--reason", "renamed", "--scope", SCOPE, "--",
                "--version prints the version of the CLI.")  # fmt: skip
    assert fixed.exit_code == 0, fixed.output
    shown = run("show", ref, "--scope", SCOPE)
    assert "-v prints the version of the CLI." in shown.output
