"""The lexical totals and memory counts SQLite keeps by triggers (migration 0009), and the
lexical lengths per (scope, status, open) group (migration 0011), always equal what a scan of
the rows gives, whatever sequence of writes, and the averages they answer are the ones the
join computes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.storekit import active, at, doc, joined_averages, new_memory

from cairn.store.base import LexicalDoc
from cairn.store.sqlite import lexical
from cairn.store.sqlite.store import SqliteStore

_TEXT = st.text(alphabet="ab c\u00e9\n", max_size=12)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(["project:a", "project:b"]), _TEXT, _TEXT),
        st.tuples(st.just("relex"), st.integers(0, 9), _TEXT, _TEXT),  # INSERT OR REPLACE
        st.tuples(st.just("unlex"), st.integers(0, 9)),
        st.tuples(st.just("context"), st.integers(0, 9), _TEXT),
        st.tuples(st.just("status"), st.integers(0, 9), st.sampled_from(["retired", "active"])),
        st.tuples(st.just("until"), st.integers(0, 9)),
        st.tuples(st.just("purge"), st.integers(0, 9)),
    ),
    max_size=25,
)


def _scanned(store: SqliteStore) -> tuple[tuple[int, ...], set[tuple[str, str, int, int]]]:
    conn = store._db.get()
    totals = conn.execute(
        "SELECT count(*), coalesce(sum(content), 0), coalesce(sum(tags), 0), "
        "coalesce(sum(source_ref), 0), coalesce(sum(reason), 0), coalesce(sum(context), 0) "
        "FROM lexical_lengths"
    ).fetchone()
    counts = conn.execute(
        "SELECT scope, status, until IS NULL, count(*) FROM memories GROUP BY 1, 2, 3"
    ).fetchall()
    return tuple(totals), {tuple(row) for row in counts}


_GROUP_SCAN = (
    "SELECT m.scope, m.status, m.until IS NULL, count(*), sum(l.content), sum(l.tags), "
    "sum(l.source_ref), sum(l.reason), sum(l.context) "
    "FROM lexical_lengths l JOIN memories m ON m.id = l.memory_id GROUP BY 1, 2, 3"
)


def _groups(store: SqliteStore) -> tuple[set[tuple[object, ...]], set[tuple[object, ...]]]:
    """(the kept groups holding documents, the same from a scan); emptied groups must be zero."""
    conn = store._db.get()
    kept = conn.execute("SELECT * FROM lexical_groups").fetchall()
    assert all(row[3:] == (0,) * 6 for row in kept if row[3] == 0), kept
    scanned = {tuple(row) for row in conn.execute(_GROUP_SCAN)}
    return {tuple(row) for row in kept if row[3] != 0}, scanned


def _kept(store: SqliteStore) -> tuple[tuple[int, ...], set[tuple[str, str, int, int]]]:
    conn = store._db.get()
    totals = conn.execute(
        "SELECT docs, content, tags, source_ref, reason, context FROM lexical_totals"
    ).fetchone()
    counts = conn.execute("SELECT scope, status, open, n FROM memory_counts WHERE n > 0")
    return tuple(totals), {tuple(row) for row in counts}


def _apply(store: SqliteStore, ids: list[int], op: tuple[object, ...]) -> None:
    kind, *args = op
    if kind == "add":
        scope, content, reason = args
        memory_id = store.add_memory(new_memory(content=str(content) or "x", scope=str(scope)))
        store.put_lexical(memory_id, LexicalDoc(str(content), "", "", str(reason), ""))
        ids.append(memory_id)
        return
    if not ids:
        return
    target = ids[int(args[0]) % len(ids)]  # type: ignore[call-overload]
    if kind == "relex":
        store.put_lexical(target, LexicalDoc(str(args[1]), "t g", "", str(args[2]), ""))
    elif kind == "unlex":
        store.delete_lexical(target)
    elif kind == "context":
        store.set_lexical_context(target, str(args[1]))
    elif kind == "status":
        store.update_memory(target, {"status": args[1]})
    elif kind == "until":  # closed: no longer current, so a filter without as_of refuses it
        store.update_memory(target, {"until": at(60)})
    elif kind == "purge":
        store.erase_memories([target])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_OPS)
def test_the_kept_totals_equal_a_scan_after_any_writes(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[object, ...]]
) -> None:
    store = SqliteStore(str(tmp_path_factory.mktemp("t") / "m.db"))
    ids: list[int] = []
    for op in ops:
        _apply(store, ids, op)
        assert _kept(store) == _scanned(store)
        kept, scanned = _groups(store)
        assert kept == scanned
    conn = store._db.get()
    for scope in ("project:a", "project:b"):  # each refuses the other's memories, if any
        joined = joined_averages(conn, scope)
        found = lexical.averages(conn, active(scope), {})
        assert found[0] == joined[0]
        assert found[1:] == pytest.approx(joined[1:])


def test_the_migration_counts_rows_written_before_it(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    store = SqliteStore(path)
    for n in range(5):
        memory_id = store.add_memory(new_memory(content=f"m{n}", scope="project:a"))
        store.put_lexical(memory_id, doc(f"word{n} and more"))
    with store._db.transaction() as tx:  # as a store written before migration 0009 would be
        for name in ("lexical_totals", "memory_counts"):
            tx.execute(f"DROP TABLE {name}")
        triggers = tx.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
        for (trigger,) in triggers:
            if trigger.startswith(("lexical_totals_", "memory_counts_")):
                tx.execute(f"DROP TRIGGER {trigger}")
        tx.execute("DELETE FROM schema_migrations WHERE version = 9")
    store.close()
    again = SqliteStore(path)
    assert _kept(again) == _scanned(again)
    assert _kept(again)[0][0] == 5


def test_a_filter_that_refuses_a_memory_is_answered_by_the_join(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "m.db"))
    first = store.add_memory(new_memory(content="a", scope="project:a"))
    store.put_lexical(first, doc("alpha beta gamma"))
    second = store.add_memory(new_memory(content="b", scope="project:b"))
    store.put_lexical(second, doc("delta"))
    conn = store._db.get()
    assert lexical.averages(conn, active("project:a", "project:b"), {})[0] == 2  # the totals
    assert lexical.averages(conn, active("project:a"), {})[0] == 1  # project:b is refused
    store.update_memory(second, {"status": "retired"})
    assert lexical.averages(conn, active("project:a", "project:b"), {})[0] == 1


def test_a_length_row_written_before_its_memory_row_is_counted_once(tmp_path: Path) -> None:
    """A copy loads the tables in its own order: the groups count an entry once both rows are
    there, whichever came first, and take it out when either goes."""
    store = SqliteStore(str(tmp_path / "m.db"))
    first = store.add_memory(new_memory(content="a", scope="project:a"))
    store.put_lexical(first, doc("alpha beta"))
    with store._db.transaction() as tx:
        tx.execute(
            "INSERT INTO lexical_lengths (memory_id, content, tags, source_ref, reason, context) "
            "VALUES (?, 3, 1, 0, 2, 0)",
            (first + 1,),
        )
    assert _groups(store)[0] == _groups(store)[1]
    second = store.add_memory(new_memory(content="b", scope="project:b"))
    assert second == first + 1
    kept, scanned = _groups(store)
    assert kept == scanned and ("project:b", "active", 1, 1, 3, 1, 0, 2, 0) in kept
    with store._db.transaction() as tx:
        tx.execute("DELETE FROM memories WHERE id = ?", (second,))
    assert _groups(store)[0] == _groups(store)[1]
    assert lexical.averages(store._db.get(), active("project:b"), {})[0] == 0


def test_migration_0011_counts_rows_written_before_it(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    store = SqliteStore(path)
    for n, scope in enumerate(["project:a", "project:b", "project:a"]):
        memory_id = store.add_memory(new_memory(content=f"m{n}", scope=scope))
        store.put_lexical(memory_id, doc(f"word{n} and more"))
    with store._db.transaction() as tx:  # as a store written before migration 0011 would be
        tx.execute("DROP TABLE lexical_groups")
        tx.execute("DROP VIEW lexical_group_moves")  # and its INSTEAD OF trigger
        triggers = tx.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
        for (trigger,) in triggers:
            if trigger.startswith("lexical_groups_"):
                tx.execute(f"DROP TRIGGER {trigger}")
        tx.execute("DELETE FROM schema_migrations WHERE version = 11")
    store.close()
    again = SqliteStore(path)
    kept, scanned = _groups(again)
    assert kept == scanned and sum(int(str(row[3])) for row in kept) == 3
    assert lexical.averages(again._db.get(), active("project:a"), {})[0] == 2
