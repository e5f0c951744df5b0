"""`cairn bench scale` on a tiny store: the report's shape and the progress it prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.adapters.cli import main
from cairn.bench.scale import bench_scale
from cairn.embeddings.hashing import HashingEmbedder


def test_bench_scale_reports_each_size_and_says_what_it_is_doing() -> None:
    said: list[str] = []
    report = bench_scale(HashingEmbedder(), [5, 300], ops=3, say=said.append)
    assert json.dumps(report)
    assert said[0] == "scale: filling 5 memories (0/5)"
    assert "scale: filling 300 memories (256/300)" in said
    assert said[-1] == "scale: timing 3 remembers and 3 recalls at 300 memories"


def test_the_cli_prints_progress_on_stderr_and_the_report_on_stdout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    out = CliRunner().invoke(main, ["bench", "scale", "--sizes", "4", "--ops", "2", "--json"])
    assert out.exit_code == 0, out.output
    assert "scale: timing 2 remembers" in out.stderr
    assert json.loads(out.stdout)
