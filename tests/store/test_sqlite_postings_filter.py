"""The postings pool under filters that refuse some documents (`store/sqlite/postings_filter.py`),
on small stores with its threshold lowered: over random corpora of several scopes, statuses,
forgets, purges and tags it returns exactly what FTS5 returns with the filter joined (ids in
order) and counts what FTS5 counts, and it never returns a memory the filter refuses."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.storekit import T0, at, in_another_process, new_memory

from cairn.store.base import LexicalDoc, MemoryFilter
from cairn.store.sqlite import lexical, postings_filter, postings_index
from cairn.store.sqlite.sql import filter_sql, match_expression
from cairn.store.sqlite.store import SqliteStore

SCOPES = ["project:a", "project:b", "global"]
TYPES = ["fact", "decision", "lesson"]
TAGS = ["red", "blue", "green"]
WORDS = ["alpha", "beta", "gamma", "delta", "x_y", "42"]
_TEXT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
_MEMORY = st.tuples(
    st.sampled_from(SCOPES),
    st.sampled_from(TYPES),
    st.lists(st.sampled_from(TAGS), max_size=2, unique=True),
    st.integers(0, 20),  # minutes after T0 it occurred
    _TEXT,
    _TEXT,
)
_WRITE = st.tuples(
    st.sampled_from(["add", "forget", "rest", "purge", "retag", "relex", "unlex"]),
    st.integers(0, 1000),
    _MEMORY,
)
_FILTER = st.builds(
    MemoryFilter,
    scopes=st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True).map(tuple),
    as_of=st.none() | st.integers(0, 20).map(at),
    statuses=st.sampled_from([("active",), ("active", "resting"), ("resting",)]),
    types=st.none() | st.lists(st.sampled_from(TYPES), min_size=1, max_size=2).map(tuple),
    tags=st.none() | st.lists(st.sampled_from(TAGS), min_size=1, max_size=2).map(tuple),
    since=st.none() | st.integers(0, 20).map(at),
    until=st.none() | st.integers(0, 20).map(at),
)
_QUERY = st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=4, unique=True)
Drawn = tuple[str, str, list[str], int, str, str]  # scope, type, tags, minutes, content, reason
Write = tuple[str, int, Drawn]


@pytest.fixture(autouse=True)
def _small_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical, "POSTINGS_MIN", 0)  # every store takes the postings path


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(str(tmp_path / "m.db"))
    yield opened
    opened.close()


def _add(store: SqliteStore, memory: Drawn) -> int:
    scope, kind, tags, minutes, content, reason = memory
    when = at(minutes)
    memory_id = store.add_memory(
        new_memory(
            scope=scope, type=kind, tags=tuple(tags), content=content, written_at=when,
            occurred_at=when,
        )
    )  # fmt: skip
    store.put_lexical(memory_id, LexicalDoc(content, " ".join(tags), "", reason))
    return memory_id


def _write(store: SqliteStore, ids: list[int], write: Write) -> None:
    kind, pick, memory = write
    target = ids[pick % len(ids)]
    if kind == "add":
        ids.append(_add(store, memory))
    elif kind == "forget":
        store.update_memory(target, {"status": "retired", "until": T0 + timedelta(minutes=10)})
    elif kind == "rest":
        store.update_memory(target, {"status": "resting"})
    elif kind == "purge":
        with store.transaction():
            store.update_memory(target, {"status": "purged"})
            store.erase_memories([target])
    elif kind == "retag":
        store.update_memory(target, {"tags": tuple(memory[2])})
    elif kind == "relex":
        store.put_lexical(target, LexicalDoc(memory[4], "", memory[5], ""))
    else:
        store.delete_lexical(target)


def _fts5_ids(store: SqliteStore, filt: MemoryFilter, terms: list[str], limit: int) -> list[int]:
    """What FTS5 returns with the filter joined: the query the pool replaces, unbounded."""
    conn = store._db.get()
    rows = lexical._query(conn, filt, list(dict.fromkeys(terms)), limit, None, False)
    return [row.memory_id for row in rows]


def _fts5_count(store: SqliteStore, filt: MemoryFilter, term: str) -> int:
    where, params = filter_sql(filt)
    sql = (
        "SELECT count(*) FROM lexical JOIN memories m ON m.id = lexical.rowid "
        f"WHERE lexical MATCH ? AND {where}"
    )
    found = store._db.get().execute(sql, (match_expression([term]), *params)).fetchone()[0]
    return int(found)


def _refused(store: SqliteStore, filt: MemoryFilter, ids: list[int]) -> set[int]:
    return set(ids) - store.filter_ids(filt, ids)


def _agrees(store: SqliteStore, filt: MemoryFilter, terms: list[str], limit: int) -> None:
    expected = _fts5_ids(store, filt, terms, limit)
    got = [row.memory_id for row in store.lexical_candidates(filt, terms, limit)]
    assert got == expected
    assert not _refused(store, filt, got)
    ranked = store._postings.ranked(store._db.get(), list(dict.fromkeys(terms)), limit, filt)
    assert ranked is not None  # plain words: the pool answered, not FTS5
    assert [memory_id for memory_id, _ in ranked] == expected
    counted = store.lexical_stats(filt, terms).document_frequency
    assert counted == {term: _fts5_count(store, filt, term) for term in dict.fromkeys(terms)}


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(_MEMORY, min_size=1, max_size=25),
    st.lists(_WRITE, max_size=8),
    st.lists(st.tuples(_FILTER, _QUERY), min_size=1, max_size=4),
    st.integers(1, 10),
)
def test_a_refusing_filter_gets_fts5s_ranking_through_writes(
    memories: list[Drawn],
    writes: list[Write],
    queries: list[tuple[MemoryFilter, list[str]]],
    limit: int,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(str(Path(tmp) / "m.db"))
        try:
            ids = [_add(store, memory) for memory in memories]
            for filt, terms in queries:
                _agrees(store, filt, terms, limit)
            for write in writes:
                _write(store, ids, write)
                for filt, terms in queries:
                    _agrees(store, filt, terms, limit)
        finally:
            store.close()


def test_another_scope_is_never_returned(store: SqliteStore) -> None:
    mine = [_add(store, ("project:a", "fact", [], 0, "alpha", "")) for _ in range(3)]
    theirs = [_add(store, ("project:b", "fact", [], 0, "alpha alpha alpha", "")) for _ in range(5)]
    filt = MemoryFilter(scopes=("project:a",))
    assert [r.memory_id for r in store.lexical_candidates(filt, ["alpha"], 4)] == mine
    both = MemoryFilter(scopes=("project:a", "project:b"))
    assert [r.memory_id for r in store.lexical_candidates(both, ["alpha"], 5)] == theirs
    assert store.lexical_stats(filt, ["alpha"]).document_frequency == {"alpha": 3}


def test_a_write_that_moves_no_counter_still_refuses(store: SqliteStore) -> None:
    ids = [_add(store, ("project:a", "fact", [], 0, "alpha " * n, "")) for n in range(1, 5)]
    _add(store, ("project:b", "fact", [], 0, "alpha", ""))  # so the filter refuses one
    filt = MemoryFilter(scopes=("project:a",))
    _agrees(store, filt, ["alpha"], 3)
    # Another program's write, past every counter the cache is keyed by.
    with store.transaction():
        store._db.get().execute("UPDATE memories SET scope = 'project:b' WHERE id = ?", (ids[3],))
    got = [row.memory_id for row in store.lexical_candidates(filt, ["alpha"], 3)]
    assert ids[3] not in got
    assert got == _fts5_ids(store, filt, ["alpha"], 3)


def test_inside_a_transaction_its_writes_count_and_a_rollback_leaves_nothing(
    store: SqliteStore,
) -> None:
    first = _add(store, ("project:a", "fact", ["red"], 0, "alpha", ""))
    second = _add(store, ("project:a", "fact", [], 0, "alpha beta", ""))
    red = MemoryFilter(scopes=("project:a",), tags=("red",))
    _agrees(store, red, ["alpha"], 5)

    class Undo(Exception):
        pass

    with pytest.raises(Undo), store.transaction():
        store.update_memory(first, {"tags": ()})
        assert store.lexical_candidates(red, ["alpha"], 5) == []
        assert _fts5_ids(store, red, ["alpha"], 5) == []
        raise Undo
    # A commit that moves the counters to where the rolled-back write had them.
    store.update_memory(second, {"tags": ("red",)})
    _agrees(store, red, ["alpha"], 5)
    assert [row.memory_id for row in store.lexical_candidates(red, ["alpha"], 5)] == [first, second]


@given(
    st.lists(st.integers(1, 2**40), max_size=30, unique=True),
    st.lists(st.integers(1, 2**40), max_size=30, unique=True),
    st.booleans(),
)
def test_the_mask_is_membership_for_dense_and_sparse_ids(
    admitted: list[int], positions: list[int], dense: bool
) -> None:
    if dense:  # ids a store numbers from 1: the lookup table
        admitted, positions = [i % 500 + 1 for i in admitted], [i % 500 + 1 for i in positions]
    ids = np.unique(np.asarray(admitted, dtype=np.int64))
    at = np.asarray(positions, dtype=np.int64)
    assert postings_filter._mask_of(ids, at).tolist() == np.isin(at, ids).tolist()


def test_another_process_forgets_and_the_pool_refuses_it(store: SqliteStore) -> None:
    ids = [_add(store, ("project:a", "fact", [], 0, "alpha " * n, "")) for n in range(1, 5)]
    _add(store, ("project:b", "fact", [], 0, "alpha", ""))
    filt = MemoryFilter(scopes=("project:a",))
    _agrees(store, filt, ["alpha"], 3)
    script = (
        "import sys\n"
        "from cairn.store.sqlite.store import SqliteStore\n"
        "s = SqliteStore(sys.argv[1])\n"
        f"s.update_memory({ids[3]}, {{'status': 'retired'}})\n"
        f"s.update_memory({ids[2]}, {{'tags': ('red',)}})\n"
        "s.close()\n"
    )
    in_another_process(script, store.location)
    assert [row.memory_id for row in store.lexical_candidates(filt, ["alpha"], 3)] == ids[:3]
    _agrees(store, filt, ["alpha"], 3)
    _agrees(store, MemoryFilter(scopes=("project:a",), tags=("red",)), ["alpha"], 3)


def test_a_kept_mask_extended_over_appended_documents_is_the_mask_anew(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a `remember` (only `lexgen` moves) the kept mask is extended, not recomputed: it
    must be what a fresh computation gives. The winners' re-check would hide a wrong one from
    the ranking, so the mask itself is compared."""
    monkeypatch.setattr(postings_index, "REBUILD_SHARE", 100.0)  # the pool takes the appends
    for n in range(4):
        _add(store, (SCOPES[n % 2], "fact", [], 0, "alpha beta", ""))
    filt = MemoryFilter(scopes=("project:a", "global"))
    _agrees(store, filt, ["alpha"], 10)
    kept = store._postings._admissions._kept[filt]
    for n in range(7):
        _add(store, (SCOPES[n % 3], "fact", [], n, "alpha gamma", ""))
    # The counts first: they read the mask with no re-check of winners behind them.
    conn = store._db.get()
    assert store._postings.frequencies(conn, ["alpha"], filt) == {"alpha": 2 + 5}
    extended = store._postings._admissions._kept[filt]
    pool = store._postings._pool
    assert pool is not None and extended.pool() is pool and extended.mask is not kept.mask
    anew = postings_filter._mask_of(postings_filter._admitted(conn, filt), pool.ids)
    assert extended.positions == pool.ids.shape[0] == 11
    assert np.array_equal(extended.mask, anew) and int(anew.sum()) == 2 + 5
    _agrees(store, filt, ["alpha"], 10)
    store.update_memory(1, {"status": "resting"})  # `epoch` moves: computed anew
    _agrees(store, filt, ["alpha"], 10)
    assert np.array_equal(
        store._postings._admissions._kept[filt].mask,
        postings_filter._mask_of(postings_filter._admitted(conn, filt), pool.ids),
    )
