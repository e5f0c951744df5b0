"""The per-group lexical counts PostgreSQL keeps by triggers (migration 0010) always equal what a
scan of the rows gives, whatever sequence of writes; the statistics they answer for a filter of
scopes and statuses are the ones the join computes; and a purge leaves no term row behind."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.store.base import LexicalDoc, LexicalRow, MemoryFilter
from cairn.store.postgres import PostgresStore, lexical
from postgres_fixture import create_database, drop_database
from storekit import active, at, doc, new_memory

pytestmark = pytest.mark.postgres

_TEXT = st.text(alphabet="ab c\u00e9'\\", max_size=12)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(["project:a", "project:b"]), _TEXT, _TEXT),
        st.tuples(st.just("relex"), st.integers(0, 9), _TEXT, _TEXT),  # ON CONFLICT DO UPDATE
        st.tuples(st.just("unlex"), st.integers(0, 9)),
        st.tuples(st.just("context"), st.integers(0, 9), _TEXT),
        st.tuples(st.just("status"), st.integers(0, 9), st.sampled_from(["resting", "active"])),
        st.tuples(st.just("scope"), st.integers(0, 9), st.sampled_from(["project:a", "global"])),
        st.tuples(st.just("until"), st.integers(0, 9)),
        st.tuples(st.just("purge"), st.integers(0, 9)),
    ),
    max_size=15,
)
_SCANNED_GROUPS = (
    "SELECT m.scope, m.status, m.until IS NULL, count(*), sum(l.len_content),"
    " sum(l.len_tags), sum(l.len_source_ref), sum(l.len_reason), sum(l.len_context)"
    " FROM lexical l JOIN memories m ON m.id = l.memory_id GROUP BY 1, 2, 3"
)
_SCANNED_TERMS = (
    "SELECT term, m.scope, m.status, m.until IS NULL, count(*) FROM lexical l"
    " JOIN memories m ON m.id = l.memory_id, unnest(tsvector_to_array(l.doc)) AS term"
    " GROUP BY 1, 2, 3, 4"
)


def _rows(store: PostgresStore, query: str) -> set[tuple[object, ...]]:
    with store._db.connection() as conn:
        return {tuple(row) for row in conn.execute(query).fetchall()}


def _kept_equals_scan(store: PostgresStore) -> None:
    assert _rows(store, "SELECT * FROM lexical_groups") == _rows(store, _SCANNED_GROUPS)
    assert _rows(store, "SELECT * FROM lexical_terms") == _rows(store, _SCANNED_TERMS)


def _apply(store: PostgresStore, ids: list[int], op: tuple[object, ...]) -> None:
    kind, *args = op
    if kind == "add":
        scope, content, reason = args
        with store.transaction():
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
    elif kind == "scope":  # no store call moves a memory; the triggers serve any writer
        with store._db.connection() as conn:
            conn.execute("UPDATE memories SET scope = %s WHERE id = %s", (args[1], target))
    elif kind == "until":  # closed: no longer current, so a filter without as_of refuses it
        store.update_memory(target, {"until": at(60)})
    elif kind == "purge":
        with store.transaction():
            store.update_memory(target, {"status": "purged", "content": ""})
            store.erase_memories([target])


def _joined(filt: MemoryFilter) -> MemoryFilter:
    """The same memories through the join: a `since` every memory passes takes the filter off
    the kept counts' path."""
    return dataclasses.replace(filt, since=datetime(1970, 1, 1, tzinfo=UTC))


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_OPS)
def test_the_kept_counts_equal_a_scan_after_any_writes(
    postgres_url: str, ops: list[tuple[object, ...]]
) -> None:
    url = create_database()
    store = PostgresStore(url)
    try:
        ids: list[int] = []
        for op in ops:
            _apply(store, ids, op)
            _kept_equals_scan(store)
        terms = ["a", "b", "ab", "c", "t", "g", "x", "\u00e9"]
        for filt in (
            active("project:a"),
            active("project:a", "global", statuses=("active", "resting")),
        ):
            with store._db.connection() as conn:
                kept = lexical._averages(conn, filt)
                joined = lexical._averages(conn, _joined(filt))
                assert kept[0] == joined[0]
                assert kept[1:] == pytest.approx(joined[1:])
                assert lexical._frequencies(conn, filt, terms) == lexical._frequencies(
                    conn, _joined(filt), terms
                )
    finally:
        store.close()
        drop_database(urlsplit(url).path.lstrip("/"))


def test_the_migration_counts_rows_written_before_it(postgres_database_url: str) -> None:
    store = PostgresStore(postgres_database_url)
    for n in range(5):
        memory_id = store.add_memory(new_memory(content=f"m{n}", scope="project:a"))
        store.put_lexical(memory_id, doc(f"word{n} and more"))
    with store.transaction(), store._db.connection() as conn:  # as before migration 0010
        conn.execute("DELETE FROM lexical_groups; DELETE FROM lexical_terms")
        conn.execute("DELETE FROM schema_migrations WHERE version = 10")
        for table in ("lexical", "memories"):
            for event in ("insert", "update", "delete", "truncate"):
                conn.execute(f"DROP TRIGGER IF EXISTS {table}_counts_{event} ON {table}")
        conn.execute("DROP TABLE lexical_groups, lexical_terms")
        conn.execute(
            "DROP FUNCTION cairn_lexical_counts(), cairn_lexical_recount(),"
            " cairn_lexical_count_all(), cairn_lexical_apply(cairn_lexical_delta[])"
        )
        conn.execute("DROP TYPE cairn_lexical_delta")
    store.close()
    again = PostgresStore(postgres_database_url)
    try:
        _kept_equals_scan(again)
        with again._db.connection() as conn:
            assert lexical._frequencies(conn, active("project:a"), ["more", "word3"]) == {
                "more": 5,
                "word3": 1,
            }
    finally:
        again.close()


def test_a_purge_leaves_no_term_row_holding_the_word(postgres_database_url: str) -> None:
    store = PostgresStore(postgres_database_url)
    try:
        kept = store.add_memory(new_memory(content="kept", scope="project:a"))
        store.put_lexical(kept, doc("shared ordinary"))
        gone = store.add_memory(new_memory(content="secret", scope="project:a"))
        store.put_lexical(gone, doc("shared zanzibarword"))
        with store.transaction():
            store.update_memory(gone, {"status": "purged", "content": ""})
            store.erase_memories([gone])
        assert _rows(store, "SELECT term FROM lexical_terms WHERE term = 'zanzibarword'") == set()
        assert _rows(store, "SELECT term, docs FROM lexical_terms WHERE term = 'shared'") == {
            ("shared", 1)
        }
        _kept_equals_scan(store)
    finally:
        store.close()


def test_a_truncate_recounts(postgres_database_url: str) -> None:
    store = PostgresStore(postgres_database_url)
    try:
        memory_id = store.add_memory(new_memory(content="m", scope="project:a"))
        store.put_lexical(memory_id, doc("alpha beta"))
        with store.transaction(), store._db.connection() as conn:
            conn.execute("TRUNCATE lexical")
        assert _rows(store, "SELECT * FROM lexical_terms") == set()
        assert _rows(store, "SELECT * FROM lexical_groups") == set()
    finally:
        store.close()


def test_the_kept_frequencies_are_read_through_the_term_index(postgres_database_url: str) -> None:
    store = PostgresStore(postgres_database_url)
    try:
        for n in range(30):
            memory_id = store.add_memory(new_memory(content=f"m{n}", scope="project:a"))
            store.put_lexical(memory_id, doc(f"word{n} common"))
        store.maintain()
        with store._db.connection() as conn:
            # A small table is scanned whole whatever its indexes; forbid that to see whether
            # the statement's shape lets the primary key answer it, as it must at 100k terms.
            conn.execute("SET enable_seqscan = off")
            try:
                plan = " ".join(
                    str(row[0])
                    for row in conn.execute(
                        "EXPLAIN " + lexical._GROUP_FREQUENCIES,
                        {
                            "terms": ["common", "word3"],
                            "f_scopes": ["project:a"],
                            "f_statuses": ["active"],
                        },
                    ).fetchall()
                )
            finally:
                conn.execute("RESET enable_seqscan")
        assert "lexical_terms_pkey" in plan
        assert "term = ANY" in plan
    finally:
        store.close()


def test_a_term_too_long_for_a_lexeme_is_counted_under_its_hash(postgres_database_url: str) -> None:
    store = PostgresStore(postgres_database_url)
    try:
        long_term = "k" * 3000  # over tsvector's 2046 bytes: stored as `~` and its SHA-256
        for n in range(3):
            memory_id = store.add_memory(new_memory(content=f"m{n}", scope="project:a"))
            text = f"{long_term} o'brien back\\slash" if n < 2 else "o'brien"
            store.put_lexical(memory_id, doc(text))
        filt = active("project:a")
        terms = [long_term, "o'brien", "back\\slash", "absent"]
        with store._db.connection() as conn:
            kept = lexical._frequencies(conn, filt, terms)
            assert kept == lexical._frequencies(conn, _joined(filt), terms)
        assert kept == {long_term: 2, "o'brien": 3, "back\\slash": 2, "absent": 0}
    finally:
        store.close()


def _pool(
    store: PostgresStore, filt: MemoryFilter, terms: list[str], limit: int, share: float
) -> list[LexicalRow]:
    with store._db.connection() as conn:
        stats = store._stats.stats(conn, filt, terms)
        return lexical._ranked(conn, filt, terms, limit, stats, None, share)


def test_ranking_before_the_filter_gives_the_joined_pool_and_never_another_scope(
    postgres_database_url: str,
) -> None:
    store = PostgresStore(postgres_database_url)
    try:
        # project:b holds the best matches (the word three times), project:a the most entries.
        for n in range(30):
            scope, text = ("project:b", "apple apple apple") if n < 12 else ("project:a", "apple")
            memory_id = store.add_memory(new_memory(content=f"m{n}", scope=scope))
            store.put_lexical(memory_id, doc(f"{text} n{n}"))
        filt = active("project:a")
        for limit in (3, 10, 18, 25):
            joined = _pool(store, filt, ["apple"], limit, 0.0)
            # share 1.0 ranks only 2 x limit rows first: for limit 3 they are all project:b's,
            # so the joined query must answer; for larger ones the deep rows suffice.
            first = _pool(store, filt, ["apple"], limit, 1.0)
            assert first == joined
            assert len(first) == min(limit, 18)
        with store._db.connection() as conn:
            scopes = {
                row[0]
                for row in conn.execute(
                    "SELECT scope FROM memories WHERE id = ANY(%s::bigint[])",
                    ([r.memory_id for r in _pool(store, filt, ["apple"], 10, 1.0)],),
                ).fetchall()
            }
        assert scopes == {"project:a"}
        assert [r.memory_id for r in store.lexical_candidates(filt, ["apple"], 10)] == [
            r.memory_id for r in _pool(store, filt, ["apple"], 10, 0.0)
        ]
    finally:
        store.close()


def test_a_ranked_first_pool_that_ranked_every_match_is_not_asked_again(
    postgres_database_url: str,
) -> None:
    """Fewer matches than the depth: the joined query could only return the same rows, so it
    is not sent; a pool that ranked only the deepest rows and came out short still sends it."""
    store = PostgresStore(postgres_database_url)
    try:
        for n in range(30):
            scope = "project:b" if n < 12 else "project:a"
            memory_id = store.add_memory(new_memory(content=f"m{n}", scope=scope))
            # project:b's rows rank first (the word thrice in a short row), project:a's below.
            text = "plum plum plum" if n < 12 else "plum and three more words"
            store.put_lexical(memory_id, doc(f"{text} n{n}"))
        filt = active("project:a")
        sent: list[str] = []
        with store._db.connection() as conn:
            real = conn.execute

            def counted(query: Any, params: Any = None, **kw: Any) -> Any:
                sent.append(str(query)[:9])
                return real(query, params, **kw)

            conn.execute = counted  # type: ignore[method-assign]
            try:
                stats = store._stats.stats(conn, filt, ["plum"])
                sent.clear()
                short = lexical._ranked(conn, filt, ["plum"], 25, stats, None, 1.0)
                assert (len(short), sent) == (18, ["WITH t AS"])  # depth 50 > 30 matches
                sent.clear()
                deep = lexical._ranked(conn, filt, ["plum"], 3, stats, None, 1.0)
                assert len(deep) == 3 and sent == ["WITH t AS", "SELECT l."]  # depth 6
                sent.clear()
                none = lexical._ranked(conn, active("project:c"), ["plum"], 25, stats, None, 1.0)
                assert (none, sent) == ([], ["WITH t AS"])  # all 30 ranked, none passed
            finally:
                del conn.execute
        assert [r.memory_id for r in short] == [
            r.memory_id for r in _pool(store, filt, ["plum"], 25, 0.0)
        ]
    finally:
        store.close()


def test_the_ranked_first_pool_reads_the_gin_index(postgres_database_url: str) -> None:
    store = PostgresStore(postgres_database_url)
    try:
        for n in range(20):
            memory_id = store.add_memory(new_memory(content=f"m{n}", scope="project:a"))
            store.put_lexical(memory_id, doc(f"pear n{n}"))
        store.maintain()
        statements: list[str] = []
        with store._db.connection() as conn:
            conn.execute("SET enable_seqscan = off")  # a 20-row table is scanned otherwise
            real = conn.execute

            def explained(query: Any, params: Any = None, **kw: Any) -> Any:
                if isinstance(query, str) and query.startswith("WITH t AS"):
                    plan = real("EXPLAIN " + query, params).fetchall()
                    statements.append(" ".join(str(row[0]) for row in plan))
                return real(query, params, **kw)

            conn.execute = explained  # type: ignore[method-assign]
            try:
                stats = store._stats.stats(conn, active("project:a"), ["pear"])
                lexical._ranked(conn, active("project:a"), ["pear"], 5, stats, None, 1.0)
            finally:
                del conn.execute
                conn.execute("RESET enable_seqscan")
        assert statements and "lexical_doc" in statements[0]
    finally:
        store.close()


def _fruit(store: PostgresStore) -> tuple[MemoryFilter, MemoryFilter]:
    """12 entries of one scope (every third says kiwi, the others date); the filter of its
    active memories and the scope's."""
    for n in range(12):
        memory_id = store.add_memory(new_memory(content=f"m{n}", scope="project:a"))
        store.put_lexical(memory_id, doc(f"fig {'date' if n % 3 else 'kiwi'} n{n}"))
    return active("project:a"), MemoryFilter(scopes=("project:a",))


def _pool_statements(
    store: PostgresStore, filt: MemoryFilter, terms: list[str], sized: MemoryFilter
) -> tuple[lexical.LexicalPool, list[str]]:
    """`lexical_pool` on one connection, and the statements it sent."""
    statements: list[str] = []
    with store._db.connection() as conn:
        real = conn.execute

        def counted(query: Any, params: Any = None, **kw: Any) -> Any:
            statements.append(str(query))
            return real(query, params, **kw)

        conn.execute = counted  # type: ignore[method-assign]
        try:
            pool = lexical.lexical_pool(conn, store._stats, filt, terms, 5, sized)
        finally:
            del conn.execute
    return pool, statements


def test_a_recall_s_keyword_half_reads_the_lexical_generation_once(
    postgres_database_url: str,
) -> None:
    """`lexical_pool` answers what the three calls answer, with one `lexgen` read, not three."""
    store = PostgresStore(postgres_database_url)
    try:
        filt, sized = _fruit(store)
        pool, statements = _pool_statements(store, filt, ["fig", "kiwi"], sized)
        reads = ["lexgen" for statement in statements if "lexgen" in statement]
        assert reads == ["lexgen"]
        assert pool.rows == store.lexical_candidates(filt, ["fig", "kiwi"], 5)
        assert pool.stats == store.lexical_stats(filt, ["fig", "kiwi"])
        assert pool.sized == 12
    finally:
        store.close()


def test_a_word_new_to_the_statistics_costs_no_statement_of_its_own(
    postgres_database_url: str,
) -> None:
    """The `lexgen` read carries the counts of the query's words: once a filter's averages are
    kept, a keyword half is two statements (generation with counts, pool), however many of its
    words are new; and a write that moves the generation is counted afresh."""
    store = PostgresStore(postgres_database_url)
    try:
        filt, sized = _fruit(store)
        terms = ["fig", "kiwi", "date", "absent"]
        _pool_statements(store, filt, ["fig"], sized)  # keeps the averages and totals
        pool, statements = _pool_statements(store, filt, terms, sized)
        assert len(statements) == 2
        assert pool.stats == store.lexical_stats(filt, terms)
        assert pool.stats is not None and pool.stats.document_frequency["absent"] == 0
        added = store.add_memory(new_memory(content="m12", scope="project:a"))
        store.put_lexical(added, doc("kiwi absent"))
        pool, _ = _pool_statements(store, filt, terms, sized)
        assert pool.stats == store.lexical_stats(filt, terms)
        assert pool.stats is not None and pool.stats.document_frequency["absent"] == 1
    finally:
        store.close()
