"""Every `cairn` command, fed hostile arguments: it answers (exit 0) or fails with one error
line (exit 2), never raises, and stores nothing when it fails.

Commands are found by walking `main` (subgroups included), so a new command is fuzzed without
being listed here. Values are drawn per parameter type: odd Unicode (no lone surrogates, which
argv cannot carry as text and `test_cli_failures` covers), NUL, very long strings, refs that
exist, deep JSON for JSON options, negative and huge numbers, NaN and infinity.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from cairn.adapters.cli import main
from cairn.models import MEMORY_TYPES

# Commands that serve forever, measure for minutes, or edit files outside the test's folder.
SKIPPED = {
    "bench",
    "serve",
    "ui",
    "mcp",
    "hook serve",
    "hook claude-code",
    "demo",
}
EXAMPLES = 20
JSON_OPTIONS = {"task_context", "args_json", "assessments_json", "procedure_json"}


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        if " ".join(path) in SKIPPED:
            continue
        found.append(path)
        if isinstance(command, click.Group):
            found.extend(_commands(command, path))
    return found


COMMANDS = _commands(main)


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return command


text = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
    st.sampled_from(
        [
            "",
            " ",
            "-",
            "--",
            "\x00",
            "a\x00b",
            "mem_1",
            "mem_999999999999999999999",
            "global",
            "project:x/y",
            "ret_1",
            "ses_0",
            "\u202e\u200b\ufeff",
            "😀" * 50,
            "x" * 70_000,
            "../../etc/passwd",
            "1e999",
            "fact",
            "lesson",
            "Edit",
            "The deploy script needs AWS_PROFILE set.",
            "2026-01-01",
        ]
    ),
)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(["nan", "inf", "-inf", "-0", "1e309", "0"]),
)
json_text = st.one_of(
    st.integers(min_value=1, max_value=50_000).map(lambda n: "[" * n),
    st.integers(min_value=1, max_value=50_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.sampled_from(['{"k": "v"}', "[]", "null", '{"k": "\\u0000"}', "1e999", "{"]),
    text,
)


# Values that get a call past its first check, so the fuzz reaches the code behind it.
SENSIBLE: dict[str, st.SearchStrategy[str]] = {
    "mtype": st.sampled_from(sorted(MEMORY_TYPES)),
    "scope": st.sampled_from(["global", "project:example/fuzz"]),
    "content": st.sampled_from(["The deploy script needs AWS_PROFILE set.", "Use tabs."]),
}


def _value(param: click.Parameter) -> st.SearchStrategy[str]:
    if param.name in SENSIBLE:
        return st.one_of(SENSIBLE[param.name], text)
    if param.name in JSON_OPTIONS:
        return json_text
    if isinstance(param.type, click.Choice):
        return st.one_of(st.sampled_from([str(c) for c in param.type.choices]), text)
    if isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
        return st.one_of(numbers, text)
    return text


@st.composite
def invocations(draw: st.DrawFn, path: tuple[str, ...]) -> list[str]:
    command = _command(path)
    args: list[str] = list(path)
    positional: list[str] = []
    for param in command.params:
        if not param.required and not draw(st.booleans()):
            continue
        if isinstance(param, click.Option):
            flag = max(param.opts, key=len)
            if param.is_flag:
                args.append(flag)
                continue
            repeats = draw(st.integers(1, 2)) if param.multiple else 1
            for _ in range(repeats):
                args += [flag, draw(_value(param))]
        elif isinstance(param, click.Argument):
            count = draw(st.integers(1, 2)) if param.nargs == -1 else max(param.nargs, 1)
            positional += [draw(_value(param)) for _ in range(count)]
    return args + positional


def _memories(store: Path) -> int:
    if not store.exists():
        return 0
    conn = sqlite3.connect(store)
    try:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    monkeypatch.delenv("CAIRN_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    seeded = CliRunner().invoke(
        main, ["remember", "The API listens on port 8080.", "--type", "fact", "--scope", "global"]
    )
    assert seeded.exit_code == 0, seeded.output
    return tmp_path / "home"


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_hostile_arguments(path: tuple[str, ...], home: Path) -> None:
    store = home / "memory.db"

    @hypothesis_settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(args=invocations(path))
    def run(args: list[str]) -> None:
        before = _memories(store)
        result = CliRunner().invoke(main, args, input="")
        shown: Any = (args[:6], result.output[-500:])
        assert result.exception is None or isinstance(result.exception, SystemExit), shown
        assert result.exit_code in (0, 2), shown
        if result.exit_code != 0:
            assert _memories(store) == before, shown
            errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
            assert len(errors) == 1, shown
            assert not errors[0].startswith("error: internal error"), shown

    run()


def test_every_command_is_fuzzed_or_named_as_skipped() -> None:
    names = {" ".join(p) for p in COMMANDS} | SKIPPED
    assert {"remember", "recall", "lessons", "tidy accept", "hook run", "check"} <= names
    assert all(os.sep not in name for name in names)
