"""`cairn check` and the salvaging `cairn export`, on healthy stores of both backends and on a
SQLite store with a page overwritten in the middle of the file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cairn import Cairn
from cairn.adapters.cli import main
from cairn.config import Settings
from cairn.errors import StoreCorrupt, StoreFull
from cairn.integrity import check_store
from damagekit import checkpoint, damage_page_holding, fact, memory_row_marker, numbered_facts

COUNT = 300


def cli(store: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["--store", store, *args], catch_exceptions=False)


def fill(location: str, home: Path, count: int = COUNT) -> None:
    with Cairn.open(location, settings=Settings(home=home, embedder="hashing")) as mem:
        mem.remember_many(numbered_facts(count), dedup=False)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    monkeypatch.delenv("CAIRN_URL", raising=False)


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    path = tmp_path / "damaged.db"
    fill(str(path), tmp_path)
    checkpoint(path)
    damage_page_holding(path, memory_row_marker(COUNT // 2))
    return path


@pytest.mark.usefixtures("env")
def test_check_passes_a_healthy_store(store_location: str, tmp_path: Path) -> None:
    fill(store_location, tmp_path, count=20)
    out = cli(store_location, "check", "--json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["ok"] is True and report["problems"] == []
    assert cli(store_location, "check").stdout.startswith("ok: ")


@pytest.mark.usefixtures("env")
def test_check_finds_a_damaged_page(damaged: Path) -> None:
    out = cli(str(damaged), "check", "--json")
    assert out.exit_code == 2
    report = json.loads(out.stdout)
    assert report["ok"] is False and report["problems"]
    assert out.stderr.startswith("error: ") and "cairn export" in out.stderr


def test_check_finds_a_damaged_full_text_index(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    fill(str(path), tmp_path, count=20)
    conn = sqlite3.connect(path)
    # The index's own rows, dropped behind FTS5's back: the table is fine, the index is not.
    conn.execute("DELETE FROM lexical_data WHERE id > 10")
    conn.commit()
    conn.close()
    report = check_store(str(path))
    assert not report.ok
    assert any("full-text index lexical" in problem for problem in report.problems)


@pytest.mark.usefixtures("env")
def test_damaged_store_is_refused_with_store_corrupt(damaged: Path, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, embedder="hashing")
    with pytest.raises(StoreCorrupt), Cairn.open(str(damaged), settings=settings) as mem:
        mem.get_memory([f"mem_{i}" for i in range(1, COUNT + 1)], scope="global")


@pytest.mark.usefixtures("env")
def test_export_salvages_every_readable_row(damaged: Path, tmp_path: Path) -> None:
    target = tmp_path / "salvaged.jsonl"
    out = cli(str(damaged), "export", str(target), "--json")
    assert out.exit_code == 2
    summary = json.loads(out.stderr.splitlines()[0])
    assert summary["unreadable_rows"] > 0 and "memories" in summary["damaged_tables"]
    assert out.stderr.splitlines()[1].startswith("error: exported ")
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    memories = [r["row"] for r in lines if r.get("table") == "memories"]
    lost = summary["unreadable_by_table"]["memories"]
    assert len(memories) == COUNT - lost and 0 < lost < COUNT // 2
    assert fact(COUNT // 2) not in {m["content"] for m in memories}
    assert {fact(0), fact(COUNT - 1)} <= {m["content"] for m in memories}

    fresh = tmp_path / "fresh.db"
    assert cli(str(fresh), "import", str(target)).exit_code == 0
    assert cli(str(fresh), "check").exit_code == 0
    with Cairn.open(str(fresh), settings=Settings(home=tmp_path, embedder="hashing")) as mem:
        assert mem.stats(all_scopes=True)["memories"] == COUNT - lost


@pytest.mark.usefixtures("env")
def test_export_of_a_healthy_store_reports_nothing_lost(
    store_location: str, tmp_path: Path
) -> None:
    fill(store_location, tmp_path, count=30)
    target = tmp_path / "out.jsonl"
    out = cli(store_location, "export", str(target), "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stderr)["unreadable_rows"] == 0
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert sum(1 for r in rows if r.get("table") == "memories") == 30


def test_sqlite_full_is_reported_not_masked_by_rollback(tmp_path: Path) -> None:
    """A write that fills the store is rolled back by SQLite itself; the error must say the
    disk is full, not "cannot rollback - no transaction is active"."""
    path = tmp_path / "m.db"
    settings = Settings(home=tmp_path, embedder="hashing")
    with Cairn.open(str(path), settings=settings) as mem:
        mem.remember("The first claim fits.", type="fact", scope="global")
        conn = mem.store._db.get()  # type: ignore[attr-defined]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StoreFull) as caught:
            mem.remember(" ".join(f"word{i}" for i in range(3000)), type="fact", scope="global")
        assert "full" in caught.value.message
        assert "no transaction" not in caught.value.message
        conn.execute(f"PRAGMA max_page_count = {pages * 1000}")
        assert mem.stats(all_scopes=True)["memories"] == 1
