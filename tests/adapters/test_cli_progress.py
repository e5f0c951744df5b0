"""Export progress: a bar on a terminal's stderr, nothing on a captured one."""

from __future__ import annotations

import io

import pytest

from cairn.adapters.cli_progress import writing_with_progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def export(lines: int) -> str:
    out = io.StringIO()
    with writing_with_progress(out, lines, "exporting") as counted:
        for i in range(lines):
            counted.write(f'{{"row": {i}}}\n')
    return out.getvalue()


def test_a_terminal_sees_the_bar_fill_while_every_line_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    written = export(40)
    assert written.count("\n") == 40
    shown = terminal.getvalue()
    assert "exporting" in shown and "100%" in shown


def test_a_captured_stderr_gets_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    captured = io.StringIO()
    monkeypatch.setattr("sys.stderr", captured)
    assert export(40).count("\n") == 40
    assert captured.getvalue() == ""
