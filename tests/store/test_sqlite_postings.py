"""The postings pool of a large SQLite store (`store/sqlite/postings_index.py`), exercised on small
stores with its thresholds lowered: it returns what FTS5's `bm25()` query returns (ids and
scores), through every kind of write, from another process, from a saved file, broken files
included; and purge leaves no word of a purged memory in the saved files."""

from __future__ import annotations

import math
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.storekit import active, at, in_another_process, new_memory

from cairn.store.base import LexicalDoc
from cairn.store.sqlite import dense_files, lexical, postings_index
from cairn.store.sqlite.sql import match_expression
from cairn.store.sqlite.store import SqliteStore

SCOPE = "project:a"
WORDS = ["alpha", "beta", "gamma", "delta", "x_y", "42", "épée", "naïve", "Zeta", "beta-gamma"]
QUERY_WORDS = [*(w.lower() for w in WORDS[:8]), "zeta", "absent", "Zeta", "x-y", "é"]
_FIELD = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
_DOC = st.tuples(_FIELD, _FIELD, _FIELD, _FIELD, _FIELD)
_QUERY = st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=5, unique=True)


@pytest.fixture(autouse=True)
def _small_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical, "POSTINGS_MIN", 0)  # every store takes the postings path
    monkeypatch.setattr(postings_index, "PERSIST_MIN", 0)  # and saves its pool


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(str(tmp_path / "m.db"))
    yield opened
    opened.close()


def _add(store: SqliteStore, fields: tuple[str, ...], scope: str = SCOPE) -> int:
    memory_id = store.add_memory(new_memory(content=fields[0] or "x", scope=scope))
    store.put_lexical(memory_id, LexicalDoc(*fields))
    return memory_id


def _fts5(store: SqliteStore, terms: list[str], limit: int) -> dict[int, float]:
    """What FTS5 ranks: the query the pool replaces, over every match."""
    rows = store._db.get().execute(
        f"SELECT rowid, {lexical.POOL_RANK} FROM lexical WHERE lexical MATCH ? "
        f"ORDER BY {lexical.POOL_RANK} LIMIT ?",
        (match_expression(terms), limit),
    )
    return {int(row[0]): float(row[1]) for row in rows}


def _agrees(store: SqliteStore, terms: list[str], limit: int) -> None:
    """The store's candidates are FTS5's; when the pool answers, with FTS5's scores."""
    expected = _fts5(store, terms, limit)
    got = store.lexical_candidates(active(SCOPE), terms, limit)
    assert sorted(row.memory_id for row in got) == sorted(expected)
    ranked = store._postings.ranked(store._db.get(), list(dict.fromkeys(terms)), limit)
    if ranked is not None:
        assert [memory_id for memory_id, _ in ranked] == sorted(expected)
        for memory_id, score in ranked:
            assert math.isclose(score, expected[memory_id], rel_tol=1e-12, abs_tol=1e-15)
    counted = store._postings.frequencies(store._db.get(), list(dict.fromkeys(terms)))
    if counted is not None:
        conn = store._db.get()
        for term, count in counted.items():
            sql = "SELECT count(*) FROM lexical WHERE lexical MATCH ?"
            assert count == conn.execute(sql, (match_expression([term]),)).fetchone()[0]


@pytest.mark.parametrize("rebuild_share", [postings_index.REBUILD_SHARE, 100.0])
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(_DOC, min_size=1, max_size=25),
    st.lists(st.tuples(st.sampled_from(["add", "relex", "unlex", "context"]), _DOC), max_size=8),
    st.lists(_QUERY, min_size=1, max_size=4),
    st.integers(1, 12),
)
def test_the_pool_is_fts5s_ranking_through_writes(
    monkeypatch: pytest.MonkeyPatch,
    rebuild_share: float,
    docs: list[tuple[str, ...]],
    writes: list[tuple[str, tuple[str, ...]]],
    queries: list[list[str]],
    limit: int,
) -> None:
    # At 100 every write is laid over the snapshot (masked, appended), never rebuilt away.
    monkeypatch.setattr(postings_index, "REBUILD_SHARE", rebuild_share)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(str(Path(tmp) / "m.db"))
        try:
            ids = [_add(store, fields) for fields in docs]
            for terms in queries:
                _agrees(store, terms, limit)
            pool = store._postings._pool
            for n, (kind, fields) in enumerate(writes):
                target = ids[n % len(ids)]
                if kind == "add":
                    ids.append(_add(store, fields))
                elif kind == "relex":  # INSERT OR REPLACE of the lengths
                    store.put_lexical(target, LexicalDoc(*fields))
                elif kind == "unlex":
                    store.delete_lexical(target)
                else:
                    store.set_lexical_context(target, fields[4])
                for terms in queries:
                    _agrees(store, terms, limit)
                if rebuild_share > 1 and pool is not None:
                    assert store._postings._pool is pool  # the writes were applied, not rebuilt
        finally:
            store.close()


def test_ties_at_the_cut_keep_the_lowest_ids_as_fts5_does(store: SqliteStore) -> None:
    ids = [_add(store, ("alpha beta", "", "", "", "")) for _ in range(30)]
    _add(store, ("gamma", "", "", "", ""))
    ranked = store._postings.ranked(store._db.get(), ["alpha"], 7)
    assert ranked is not None and [memory_id for memory_id, _ in ranked] == ids[:7]
    _agrees(store, ["alpha", "gamma"], 7)


def test_terms_fts5_might_tokenize_otherwise_are_left_to_fts5(store: SqliteStore) -> None:
    _add(store, ("Zeta beta-gamma épée", "", "", "", ""))
    conn = store._db.get()
    assert store._postings.ranked(conn, ["Zeta"], 5) is None  # FTS5 folds it: not ours to say
    assert store._postings.ranked(conn, ["beta-gamma"], 5) is None  # a phrase of two tokens
    assert store._postings.ranked(conn, ["épée", "zeta"], 5) is not None  # tokens FTS5 holds
    for terms in (["Zeta"], ["beta-gamma"], ["épée", "zeta", "absent"]):
        _agrees(store, terms, 5)


def test_a_filter_that_refuses_a_memory_is_masked_out_of_the_pool(store: SqliteStore) -> None:
    kept = _add(store, ("alpha beta", "", "", "", ""))
    retired = _add(store, ("alpha", "", "", "", ""))
    other = _add(store, ("alpha alpha", "", "", "", ""), scope="project:b")
    assert {r.memory_id for r in store.lexical_candidates(active(SCOPE), ["alpha"], 10)} == {
        kept,
        retired,
    }
    store.update_memory(retired, {"status": "retired"})
    assert [r.memory_id for r in store.lexical_candidates(active(SCOPE), ["alpha"], 10)] == [kept]
    store.update_memory(other, {"until": at(5)})
    store.update_memory(retired, {"status": "active"})
    found = store.lexical_candidates(active(SCOPE, "project:b"), ["alpha"], 10)
    assert sorted(r.memory_id for r in found) == [kept, retired]
    stats = store.lexical_stats(active(SCOPE), ["alpha", "beta"])
    assert stats.document_frequency == {"alpha": 2, "beta": 1}


def test_a_purge_rebuilds_the_pool_and_a_status_change_does_not(store: SqliteStore) -> None:
    first = _add(store, ("alpha", "", "", "", ""))
    second = _add(store, ("alpha beta", "", "", "", ""))
    _agrees(store, ["alpha"], 5)
    pool = store._postings._pool
    store.update_memory(first, {"status": "retired"})
    assert [r.memory_id for r in store.lexical_candidates(active(SCOPE), ["alpha"], 5)] == [second]
    store.update_memory(first, {"status": "active"})
    _agrees(store, ["alpha"], 5)
    assert store._postings._pool is pool  # statuses are the filter's, read from `memories`
    with store.transaction():
        store.update_memory(second, {"status": "purged"})
        store.erase_memories([second])
    store.update_memory(second, {"status": "retired"})  # refused by the filter from now on
    _agrees(store, ["beta"], 5)
    assert store.lexical_candidates(active(SCOPE), ["beta"], 5) == []
    assert (
        store._postings._pool is not None and store._postings._pool.base.terms.find("beta") is None
    )
    assert store._postings._pool is not pool


def test_another_process_writes_and_the_pool_sees_it(store: SqliteStore) -> None:
    ids = [_add(store, (f"alpha {'beta ' * n}", "", "", "", "")) for n in range(6)]
    _agrees(store, ["alpha", "beta"], 4)
    script = (
        "import sys\n"
        "from cairn.store.base import LexicalDoc\n"
        "from cairn.store.sqlite.store import SqliteStore\n"
        "from tests.storekit import new_memory\n"
        "s = SqliteStore(sys.argv[1])\n"
        "for n in range(3):\n"
        "    i = s.add_memory(new_memory(content='w', scope='project:a'))\n"
        "    s.put_lexical(i, LexicalDoc('beta beta beta gamma', '', '', '', ''))\n"
        f"s.delete_lexical({ids[5]})\n"
        f"s.put_lexical({ids[0]}, LexicalDoc('gamma', 'alpha', '', '', ''))\n"
        "s.close()\n"
    )
    in_another_process(script, store.location)
    for terms in (["alpha", "beta"], ["gamma"], ["beta"], ["alpha"]):
        _agrees(store, terms, 4)


def test_a_gap_in_the_log_or_a_log_behind_the_pool_rebuilds(store: SqliteStore) -> None:
    for n in range(5):
        _add(store, (f"alpha {'beta ' * n}", "", "", "", ""))
    _agrees(store, ["beta"], 3)
    conn = store._db.get()
    with store.transaction():
        _add(store, ("beta beta beta beta beta beta", "", "", "", ""))
        _add(store, ("beta", "", "", "", ""))
        newest = conn.execute("SELECT max(seq) FROM lexical_log").fetchone()[0]
        conn.execute("DELETE FROM lexical_log WHERE seq < ?", (newest,))  # as the trim would
    _agrees(store, ["beta"], 3)
    with store.transaction():
        conn.execute("DELETE FROM lexical_log")  # a store whose log starts over
        _add(store, ("beta " * 9, "", "", "", ""))
    _agrees(store, ["beta"], 3)


def test_the_log_keeps_its_newest_rows_only(store: SqliteStore) -> None:
    memory_id = _add(store, ("alpha", "", "", "", ""))
    conn = store._db.get()
    with store.transaction():
        conn.execute("INSERT INTO lexical_log (seq, memory_id) VALUES (50001, ?)", (memory_id,))
        _add(store, ("beta", "", "", "", ""))
    assert [row[0] for row in conn.execute("SELECT seq FROM lexical_log")] == [50001, 50002]


def test_many_changes_rebuild_instead_of_piling_up(store: SqliteStore) -> None:
    for _ in range(40):
        _add(store, ("alpha", "", "", "", ""))
    _agrees(store, ["alpha"], 5)
    for n in range(10):
        _add(store, (f"alpha {'beta ' * n}", "", "", "", ""))
        _agrees(store, ["alpha", "beta"], 5)
    pool = store._postings._pool
    assert pool is not None and pool.added + pool.dead <= 0.05 * pool.documents + 1


def _saved(store: SqliteStore) -> Path:
    folder = dense_files.folder(store.location)
    assert folder is not None
    return folder


def test_a_new_process_maps_the_saved_pool_and_applies_what_changed(
    store: SqliteStore,
) -> None:
    for n in range(40):  # one more document is under the 5% that makes a rebuild
        _add(store, (f"alpha {'beta ' * (n % 9)}", "gamma", "", "", ""))
    _agrees(store, ["alpha", "beta"], 3)
    assert (_saved(store) / "postings.json").exists()
    _add(store, ("beta " * 20, "", "", "", ""))
    fresh = SqliteStore(store.location)
    try:
        _agrees(fresh, ["alpha", "beta"], 3)
        assert fresh._postings._pool is not None and fresh._postings._pool.added == 1
    finally:
        fresh.close()


@pytest.mark.parametrize(
    "damage",
    ["truncate docs.npy", "garbage counts.npy", "garbage stamp", "doc out of range", "other terms"],
)
def test_a_damaged_saved_pool_is_ignored_and_rebuilt(store: SqliteStore, damage: str) -> None:
    for n in range(8):
        _add(store, (f"alpha {'beta ' * n}", "", "", "", ""))
    _agrees(store, ["alpha", "beta"], 3)
    folder = _saved(store)
    (save,) = [p for p in folder.iterdir() if p.is_dir() and p.name.startswith("postings-")]
    if damage == "truncate docs.npy":
        data = (save / "docs.npy").read_bytes()
        (save / "docs.npy").write_bytes(data[: len(data) - 8])
    elif damage == "garbage counts.npy":
        (save / "counts.npy").write_bytes(b"\x93NUMPY not an array at all")
    elif damage == "garbage stamp":
        (folder / "postings.json").write_text("{not json", encoding="utf-8")
    elif damage == "doc out of range":
        import numpy as np

        docs = np.load(save / "docs.npy")
        docs[-1] = 10_000
        np.save(save / "docs.npy", docs)
    else:
        (save / "terms.bin").write_bytes(b"alpha")
    fresh = SqliteStore(store.location)
    try:
        _agrees(fresh, ["alpha", "beta"], 3)
        _agrees(fresh, ["beta"], 20)
    finally:
        fresh.close()


def test_purge_leaves_no_purged_word_in_the_saved_pool(store: SqliteStore) -> None:
    kept = _add(store, ("alpha harbour", "", "", "", ""))
    gone = _add(store, ("zanzibarword harbour", "quokkatag", "", "", ""))
    _agrees(store, ["harbour"], 5)
    folder = _saved(store)
    assert any(b"zanzibarword" in p.read_bytes() for p in folder.rglob("*") if p.is_file())
    with store.transaction():
        store.update_memory(gone, {"status": "purged"})
        store.erase_memories([gone])
    assert not folder.exists()  # dropped inside the purge
    store.erase_freed()
    store.update_memory(gone, {"status": "retired"})
    store.update_memory(gone, {"status": "purged"})
    _add(store, ("harbour again", "", "", "", ""))
    fresh = SqliteStore(store.location)
    try:
        _agrees(fresh, ["harbour", "alpha"], 5)
        _agrees(store, ["harbour", "zanzibarword"], 5)
    finally:
        fresh.close()
    assert kept in {r.memory_id for r in store.lexical_candidates(active(SCOPE), ["alpha"], 5)}
    assert (folder / "postings.json").exists()  # saved again, from the purged store
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"zanzibarword" not in data and b"quokkatag" not in data


def test_a_write_rolled_back_never_reaches_the_pool(store: SqliteStore) -> None:
    for n in range(5):
        _add(store, (f"alpha {'beta ' * n}", "", "", "", ""))
    _agrees(store, ["beta"], 3)
    with pytest.raises(RuntimeError), store.transaction():
        _add(store, ("beta " * 8, "", "", "", ""))
        _agrees(store, ["beta"], 3)  # the transaction's own view, from FTS5
        raise RuntimeError("roll it back")
    _add(store, ("gamma beta", "", "", "", ""))  # takes the rolled-back write's log sequence
    _agrees(store, ["beta"], 3)
    _agrees(store, ["gamma"], 3)


def test_a_file_restored_from_a_backup_does_not_take_a_later_save(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    store = SqliteStore(path)
    for n in range(40):
        _add(store, (f"alpha {'beta ' * (n % 5)}", "", "", "", ""))
    backup = sqlite3.connect(str(tmp_path / "backup.db"))
    store._db.get().backup(backup)
    backup.close()
    for _ in range(5):  # the same ids and log sequences the restored file will reuse
        _add(store, ("laterword " * 3, "", "", "", ""))
    _agrees(store, ["laterword", "alpha"], 5)  # rebuilt (5 of 45 > 5%) and saved at that point
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(path + suffix).unlink(missing_ok=True)
    shutil.copy(tmp_path / "backup.db", path)
    restored = SqliteStore(path)
    try:
        for _ in range(6):
            _add(restored, ("otherword gamma", "", "", "", ""))
        _agrees(restored, ["laterword", "otherword", "alpha"], 5)
        _agrees(restored, ["laterword"], 5)
    finally:
        restored.close()
