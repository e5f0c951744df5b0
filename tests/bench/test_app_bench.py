"""`cairn bench app` on tiny stores: every page answers, the report's shape and ratios, the
fill writes what the list shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn import Cairn
from cairn.adapters.app.bench import SCOPE, bench_app, fill, pages
from cairn.adapters.cli import main
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder


def test_bench_app_times_every_page_at_each_size() -> None:
    said: list[str] = []
    report = bench_app(HashingEmbedder(), [30, 120], requests=2, say=said.append)
    assert json.dumps(report)
    small, big = report["runs"]
    assert set(small["pages"]) == set(pages(30)) and big["memories"] == 120
    assert all(timed["n"] == 2 and timed["median_ms"] > 0 for timed in big["pages"].values())
    assert small["median_ratio_to_smallest"]["list"] == 1.0
    assert big["list_pages_within_target"] in (True, False)
    assert "app: timing search at 120 memories" in said


def test_the_fill_is_what_the_list_shows(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    settings = Settings(home=tmp_path, consolidate_interval=0)
    with Cairn.open(tmp_path / "m.db", settings=settings, embedder=embedder) as mem:
        fill(mem, embedder, 1200, lambda _line: None)
        page = mem.list_memories(scope=SCOPE, size=5)
        assert page.total == 1200 and page.items[0].memory.ref == "mem_1200"
        assert mem.list_memories(scope=SCOPE, tags=["deploy"]).total == 1200 // 7 + 1
        assert mem.list_memories(scope=SCOPE, query="billing service retry").items


def test_the_cli_runs_the_app_bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    out = CliRunner().invoke(main, ["bench", "app", "--sizes", "20", "--requests", "1", "--json"])
    assert out.exit_code == 0, out.output
    assert "app: timing list at 20 memories" in out.stderr
    assert json.loads(out.stdout)["runs"][0]["memories"] == 20
