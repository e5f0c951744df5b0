"""Purge erases every byte (issue 12): every version of the memory, in every table, on both
backends; a purge that fails part-way changes nothing.

The purged memory is corrected twice, so its history chain has three rows; each version, its
tags, reason, source ref, diff and trace carry a marker word of their own. Markers are checked
by their tails (`...vorp`): FTS5 stores a term after the first on a page as a suffix of the
term before it, so a marker's first letters may be shared with its neighbour's, never its tail.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import Conflict, StoreBusy, StoreError
from cairn.models import Memory
from cairn.store.postgres.erase import VACUUM_FULL

SCOPE = "project:purge"
MARKERS = {
    "first": "zqxfirstvorp",
    "second": "zqxsecondvorp",
    "third": "zqxthirdvorp",
    "tag": "zqxtagvorp",
    "reason": "zqxreasonvorp",
    "why": "zqxwhyvorp",
    "source": "zqxsourcevorp",
    "diff": "zqxdiffvorp",
    "trace": "zqxtracevorp",
}
TAILS = [marker[3:] for marker in MARKERS.values()]


def write_chain(mem: Cairn) -> list[str]:
    """Three versions of one memory amid session neighbours; returns their refs, oldest first."""
    session = mem.activate("rotate the staging codename", scope=SCOPE).session_id
    for i in range(3):
        mem.remember(f"Staging note {i}: the build runs nightly.", type="fact", scope=SCOPE,
                     session_id=session, dedup=False)  # fmt: skip
    first = mem.remember(
        f"The staging codename is {MARKERS['first']}.",
        type="fact",
        scope=SCOPE,
        tags=[MARKERS["tag"]],
        reason=f"read in {MARKERS['reason']}",
        source_ref=f"docs/{MARKERS['source']}.md",
        diff_text=f"+codename = {MARKERS['diff']}",
        error_trace=f"KeyError: {MARKERS['trace']}",
        session_id=session,
    )
    for i in range(3):
        mem.remember(f"Release note {i}: the cache warms up first.", type="fact", scope=SCOPE,
                     session_id=session, dedup=False)  # fmt: skip
    second = mem.correct(first.memory_id, f"The staging codename is {MARKERS['second']}.",
                         reason=f"renamed, {MARKERS['why']}", scope=SCOPE)  # fmt: skip
    third = mem.correct(second.memory_id, f"The staging codename is {MARKERS['third']}.",
                        reason="renamed again", scope=SCOPE)  # fmt: skip
    return [first.memory_id, second.memory_id, third.memory_id]


def memories(mem: Cairn, refs: list[str]) -> list[Memory]:
    return [record.memory for record in mem.get_memory(refs, scope=SCOPE).records]


def rows_holding_markers(mem: Cairn) -> list[tuple[str, str]]:
    """(table, marker tail) for every row of every table, shadow tables included, whose text
    holds a marker; read with the backend's own driver, around the store's API."""
    if mem.store.backend == "sqlite":
        return list(_sqlite_rows(mem.store.location))
    return list(_postgres_rows(_url(mem)))


def _sqlite_rows(path: str) -> Iterator[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for name in names:
            for row in conn.execute(f'SELECT * FROM "{name}"'):
                yield from _hits(name, row)


def _postgres_rows(url: str) -> Iterator[tuple[str, str]]:
    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() AND table_type = 'BASE TABLE'"
        ).fetchall()
        for (name,) in tables:
            for (text,) in conn.execute(f'SELECT t::text FROM "{name}" t'):
                yield from _hits(name, (text,))
        stats = conn.execute(
            "SELECT tablename, concat(most_common_vals::text, histogram_bounds::text,"
            " most_common_elems::text) FROM pg_stats WHERE schemaname = current_schema()"
        ).fetchall()
        for name, text in stats:
            yield from _hits(f"pg_stats:{name}", (text,))


def _hits(table: str, row: tuple[Any, ...]) -> Iterator[tuple[str, str]]:
    for cell in row:
        data = cell if isinstance(cell, bytes) else str(cell).encode("utf-8")
        for tail in TAILS:
            if tail.encode() in data:
                yield table, tail


def _url(mem: Cairn) -> str:
    url = mem.store.location
    assert "://" in url
    return url


def test_purge_erases_every_version_and_keeps_a_tombstone_for_each(mem: Cairn) -> None:
    refs = write_chain(mem)
    assert rows_holding_markers(mem)  # the scan sees the markers before the purge
    tombstone = mem.purge(refs[-1], scope=SCOPE)
    for memory in memories(mem, refs):
        assert memory.status == "purged" and memory.content == "" and memory.tags == ()
        assert memory.reason is None and memory.source_ref is None and memory.diff_files == ()
        assert memory.summary == "[purged]" and memory.content_hash == "purged"
    purges = [e for e in mem.store.iter_events() if e.kind == "purge"]
    assert tombstone in [e.ref for e in purges]
    assert sorted(e.payload["purged"] for e in purges) == sorted(refs)
    ids = [int(ref[4:]) for ref in refs]
    assert mem.store.get_vectors(ids, mem.embedder.identity) == {}
    for marker in MARKERS.values():
        assert not set(refs) & set(mem.recall(marker, scope=SCOPE, cut=False).refs)
    with pytest.raises(Conflict, match="already purged"):
        mem.purge(refs[0], scope=SCOPE)


def test_no_row_of_any_table_holds_a_purged_word(mem: Cairn) -> None:
    refs = write_chain(mem)
    mem.purge(refs[1], scope=SCOPE)  # a middle version names the whole chain
    assert rows_holding_markers(mem) == []


def test_a_purge_that_fails_part_way_changes_nothing(
    mem: Cairn, monkeypatch: pytest.MonkeyPatch
) -> None:
    refs = write_chain(mem)
    before = memories(mem, refs)
    events = list(mem.store.iter_events())
    erase = mem.store.erase_memories

    def erase_then_fail(memory_ids: Any) -> None:
        erase(memory_ids)
        raise StoreError("the disk filled up")

    monkeypatch.setattr(mem.store, "erase_memories", erase_then_fail)
    with pytest.raises(StoreError, match="disk filled"):
        mem.purge(refs[-1], scope=SCOPE)
    assert memories(mem, refs) == before
    assert list(mem.store.iter_events()) == events
    ids = [int(ref[4:]) for ref in refs]
    assert set(mem.store.get_vectors(ids, mem.embedder.identity)) == set(ids)
    # Recalled by a word of its own, not the marker: a recall event records its query.
    assert refs[-1] in mem.recall("staging codename", scope=SCOPE, cut=False).refs
    monkeypatch.undo()
    mem.purge(refs[-1], scope=SCOPE)
    assert rows_holding_markers(mem) == []


# the files ---------------------------------------------------------------------------------
def file_tails(*paths: Path) -> dict[str, list[str]]:
    """Marker tails found in the raw bytes of each file that exists."""
    found: dict[str, list[str]] = {}
    for path in paths:
        data = path.read_bytes() if path.exists() else b""
        found[path.name] = [tail for tail in TAILS if tail.encode() in data]
    return found


def open_cairn(location: str, settings: Settings, tmp_path: Path) -> Cairn:
    return Cairn.open(location, settings=settings, embedder=HashingEmbedder(), cwd=tmp_path)


def test_sqlite_main_file_and_log_hold_no_purged_byte(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    files = (path, Path(f"{path}-wal"))
    mem = open_cairn(str(path), settings, tmp_path)
    refs = write_chain(mem)
    other = sqlite3.connect(path)  # another connection keeps the store open throughout
    assert other.execute("SELECT count(*) FROM memories").fetchone()[0] > 3
    assert any(file_tails(*files).values())
    mem.purge(refs[-1], scope=SCOPE)
    assert file_tails(*files) == {"memory.db": [], "memory.db-wal": []}
    assert files[1].stat().st_size == 0  # the log was emptied, not only checkpointed
    mem.close()
    other.close()
    assert file_tails(*files) == {"memory.db": [], "memory.db-wal": []}


def test_a_store_written_before_secure_delete_is_rebuilt_by_its_first_purge(
    settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "memory.db"
    mem = open_cairn(str(path), settings, tmp_path)
    assert mem.store.get_meta("freed_space") == "zeroed"  # a new store never freed unzeroed
    keep = mem.remember("The nightly build runs at two.", type="fact", scope=SCOPE)
    gone = mem.remember("A note to purge later.", type="fact", scope=SCOPE)
    mem.close()
    # An older cairn: no migration 0007, and a deleted row left in free space, not zeroed.
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA secure_delete = OFF")
        raw.execute("DELETE FROM schema_migrations WHERE name = 'secure_erase'")
        raw.execute("DELETE FROM meta WHERE key = 'freed_space'")
        raw.execute("INSERT INTO meta (key, value) VALUES ('old', ?)", (MARKERS["first"] * 4,))
        raw.execute("DELETE FROM meta WHERE key = 'old'")
    raw.close()
    assert file_tails(path)["memory.db"] == [TAILS[0]]
    mem = open_cairn(str(path), settings, tmp_path)
    assert mem.store.get_meta("freed_space") == "unscrubbed"
    mem.purge(gone.memory_id, scope=SCOPE)
    assert mem.store.get_meta("freed_space") == "zeroed"
    assert file_tails(path, Path(f"{path}-wal")) == {"memory.db": [], "memory.db-wal": []}
    assert mem.get_memory([keep.memory_id], scope=SCOPE).records[0].memory.status == "active"
    mem.close()


def test_a_reader_holding_the_log_open_makes_purge_say_so(
    settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "memory.db"
    mem = open_cairn(str(path), replace(settings, busy_timeout_ms=50), tmp_path)
    refs = write_chain(mem)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchone()  # holds its snapshot
    with pytest.raises(StoreBusy, match="-wal may still hold"):
        mem.purge(refs[-1], scope=SCOPE)
    assert {m.status for m in memories(mem, refs)} == {"purged"}  # the purge itself committed
    reader.execute("ROLLBACK")
    reader.close()
    mem.close()
    assert file_tails(path, Path(f"{path}-wal")) == {"memory.db": [], "memory.db-wal": []}


@pytest.mark.postgres
def test_postgres_data_files_hold_no_purged_byte_after_the_documented_vacuum_full(
    postgres_database_url: str, settings: Settings, tmp_path: Path
) -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert VACUUM_FULL in readme  # the command the README gives is the one tested here
    with open_cairn(postgres_database_url, settings, tmp_path) as mem:
        refs = write_chain(mem)
        with psycopg.connect(postgres_database_url, autocommit=True) as conn:
            root = _data_directory(conn)
            conn.execute("ANALYZE")  # statistics that sample the markers, as autovacuum would
            mem.purge(refs[-1], scope=SCOPE)
            assert rows_holding_markers(mem) == []
            conn.execute(VACUUM_FULL)
            conn.execute("CHECKPOINT")  # the rewritten pages reach the files
            files = _relation_files(conn, root)
    assert len(files) > 50
    assert [(f.name, t) for f in files for t in TAILS if t.encode() in f.read_bytes()] == []


def _data_directory(conn: psycopg.Connection[Any]) -> Path:
    """The server's data directory, or a skip when the tests cannot read it."""
    superuser = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    if superuser.fetchone() != (True,):
        pytest.skip("reading the data directory takes a superuser; the test server's role is not")
    row = conn.execute("SELECT current_setting('data_directory')").fetchone()
    root = Path(row[0]) if row and row[0] else None
    if root is None or not root.is_dir():
        pytest.skip("the PostgreSQL data directory is not on this machine")
    return root


def _relation_files(conn: psycopg.Connection[Any], root: Path) -> list[Path]:
    """Every relation file of the database: tables, TOAST, indexes, catalogs."""
    paths = conn.execute(
        "SELECT pg_relation_filepath(oid) FROM pg_class WHERE relkind IN ('r', 't', 'i', 'm')"
    ).fetchall()
    return [root / p for (p,) in paths if p is not None and (root / p).is_file()]


def chain_of(mem: Cairn, length: int, neighbours: int) -> list[str]:
    """`length` versions of one memory, each with a marker, `neighbours` memories after the
    first in its session."""
    session = mem.activate("write a chain", scope=SCOPE).session_id
    first = mem.remember(f"Version zero says {MARKERS['first']}.", type="fact", scope=SCOPE,
                         tags=[MARKERS["tag"]], session_id=session)  # fmt: skip
    for i in range(neighbours):
        mem.remember(f"Neighbour {i} about the nightly build.", type="fact", scope=SCOPE,
                     session_id=session, dedup=False)  # fmt: skip
    refs = [first.memory_id]
    for marker in list(MARKERS.values())[1:length]:
        new = mem.correct(refs[-1], f"Now it says {marker}.", reason=f"as {MARKERS['why']}",
                          scope=SCOPE)  # fmt: skip
        refs.append(new.memory_id)
    return refs


@hsettings(max_examples=12, deadline=None)
@given(
    length=st.integers(min_value=1, max_value=4),
    named=st.integers(min_value=0, max_value=3),
    neighbours=st.integers(min_value=0, max_value=3),
)
def test_naming_any_version_erases_the_whole_chain_from_the_files(
    length: int, named: int, neighbours: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "memory.db"
        with open_cairn(str(path), Settings(home=root / "home", embedder="hashing"), root) as mem:
            refs = chain_of(mem, length, neighbours)
            mem.purge(refs[named % length], scope=SCOPE)
            assert {m.status for m in memories(mem, refs)} == {"purged"}
            assert list(_sqlite_rows(str(path))) == []
            assert file_tails(path, Path(f"{path}-wal")) == {"memory.db": [], "memory.db-wal": []}
