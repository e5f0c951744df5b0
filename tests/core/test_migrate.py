"""`cairn migrate`: a whole store copied between backends, verified, resumable, and refused
when the target holds rows that did not come from the source."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn import Cairn
from cairn.adapters.cli import main
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import Conflict, InvalidInput, StoreError
from cairn.migrate import MARKER, migrate, rows_to_copy, verify
from cairn.store import open_store
from cairn.store.base import Store
from cairn.timeutil import Clock
from copykit import SCOPE, build_rich, git_repo, snapshot

QUERY = "deploys staging canary"


class Interrupted(Exception):
    """Stands in for Ctrl-C or a lost connection between two batches."""


@pytest.fixture
def source_path(tmp_path: Path, clock: Clock) -> Path:
    """A SQLite store with rows in most tables, built through the real tools."""
    path = tmp_path / "source.db"
    with Cairn.open(path, embedder=HashingEmbedder(), clock=clock) as mem:
        build_rich(mem, git_repo(tmp_path / "repo"))
        for i in range(25):
            mem.remember(f"Service {i} deploys from its own pipeline.", type="fact", scope=SCOPE)
    return path


@pytest.fixture
def source(source_path: Path) -> Iterator[Store]:
    store = open_store(str(source_path))
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def target(store_location: str) -> Iterator[Store]:
    """An empty store on each backend."""
    store = open_store(store_location)
    try:
        yield store
    finally:
        store.close()


def recall_refs(location: str, clock: Clock) -> list[str]:
    with Cairn.open(location, embedder=HashingEmbedder(), clock=clock) as mem:
        return mem.recall(QUERY, scope=SCOPE).refs


@pytest.mark.postgres
def test_sqlite_to_postgres_to_sqlite_is_the_same_store(
    source: Store, source_path: Path, postgres_database_url: str, tmp_path: Path, clock: Clock
) -> None:
    before = snapshot(source)
    middle = open_store(postgres_database_url)
    end = open_store(str(tmp_path / "end.db"))
    try:
        there = migrate(source, middle, batch_size=7)
        back = migrate(middle, end, batch_size=1000)
        assert snapshot(middle) == before and snapshot(end) == before
        assert there.copied == back.copied == rows_to_copy(source)
        assert not there.resumed and not back.resumed
        assert {t.table: t.rows for t in there.tables} == {k: len(v) for k, v in before.items()}
        assert there.tables == back.tables  # same counts and checksums on all three
        assert end.sequences() == source.sequences()
        assert middle.sequences() == source.sequences()
    finally:
        middle.close()
        end.close()
    expected = recall_refs(str(source_path), clock)
    assert recall_refs(postgres_database_url, clock) == expected
    assert recall_refs(str(tmp_path / "end.db"), clock) == expected
    with Cairn.open(postgres_database_url, embedder=HashingEmbedder(), clock=clock) as mem:
        fresh = mem.remember("Written after the move.", type="fact", scope=SCOPE)
        assert int(fresh.memory_id[4:]) > max(row["id"] for row in before["memories"])


def test_an_interrupted_migration_resumes_to_an_equal_copy(source: Store, target: Store) -> None:
    calls: list[int] = []

    def crash_after_five(_table: str, rows: int) -> None:
        calls.append(rows)
        if len(calls) == 5:
            raise Interrupted

    with pytest.raises(Interrupted):
        migrate(source, target, batch_size=4, progress=crash_after_five)
    partial = sum(target.count_rows(name) for name in target.table_names())
    assert partial == sum(calls) > 0
    seen: list[tuple[str, int]] = []
    result = migrate(source, target, batch_size=4, progress=lambda t, n: seen.append((t, n)))
    assert result.resumed
    assert result.copied == rows_to_copy(source) - partial
    assert sum(n for _, n in seen) == rows_to_copy(source)  # the bar starts where it left off
    assert snapshot(target) == snapshot(source)
    again = migrate(source, target)  # a finished copy only verifies again
    assert again.resumed and again.copied == 0


def test_a_row_changed_in_the_target_is_caught(source: Store, target: Store) -> None:
    def stop_after_memories(table: str, _rows: int) -> None:
        if table == "events":
            raise Interrupted

    with pytest.raises(Interrupted):
        migrate(source, target, batch_size=50, progress=stop_after_memories)
    target.update_memory(3, {"summary": "tampered"})
    with pytest.raises(StoreError, match=r"table memories: .* different checksums .*id=3"):
        migrate(source, target, batch_size=50)


def test_a_source_written_during_the_copy_is_caught(source: Store, target: Store) -> None:
    migrate(source, target)
    source.increment(1, "access_count")
    source.set_meta("note", "meta is never copied")
    with pytest.raises(StoreError, match="stop every writer"):
        verify(source, target)


def test_targets_holding_other_rows_are_refused(
    source: Store, target: Store, tmp_path: Path, store_location: str
) -> None:
    with Cairn.open(store_location, embedder=HashingEmbedder()) as mem:
        mem.remember("Already here.", type="fact", scope=SCOPE)
    with pytest.raises(Conflict, match=r"needs an empty store.*1 memories"):
        migrate(source, target)
    assert target.get_meta(MARKER) is None
    with pytest.raises(InvalidInput, match="same store"):
        migrate(source, source)
    other = open_store(str(tmp_path / "other.db"))
    fresh = open_store(str(tmp_path / "fresh.db"))
    try:
        migrate(other, fresh)
        with pytest.raises(Conflict, match="another store"):
            migrate(source, fresh)
    finally:
        other.close()
        fresh.close()


def test_the_command_copies_with_a_progress_bar(source_path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    target = tmp_path / "copy.db"
    done = runner.invoke(
        main, ["migrate", "--from", str(source_path), "--to", str(target), "--batch-size", "9"]
    )
    assert done.exit_code == 0, done.output
    assert "counts and checksums match" in done.stdout
    assert "copying" in done.stderr
    again = runner.invoke(main, ["migrate", "--from", str(source_path), "--to", str(target)])
    assert again.exit_code == 0 and "resumed: copied 0 rows" in again.stdout
    refused = runner.invoke(main, ["migrate", "--from", str(target), "--to", str(target)])
    assert refused.exit_code == 2 and refused.stderr.startswith("error: ")
