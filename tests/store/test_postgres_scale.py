"""PostgreSQL at scale, on small data: window vectors through their own HNSW index (the plan
shows it), the same answers as an exact search, and the bulk load that builds indexes once."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import psycopg
import pytest
from psycopg import sql

from cairn.store.base import MemoryFilter
from cairn.store.bulk import BulkMemory
from cairn.store.bulk_load import bulk_add
from cairn.store.postgres import PostgresStore
from cairn.store.postgres import vectors as pg_vectors
from cairn.store.postgres.bulk import finish_bulk
from storekit import SCOPE, doc, new_memory

pytestmark = pytest.mark.postgres
DIMS = 8


@pytest.fixture
def pg(postgres_database_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(postgres_database_url)
    try:
        yield opened
    finally:
        opened.close()


def _unit(rng: np.random.Generator) -> np.ndarray:  # type: ignore[type-arg]
    v = rng.standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


def _fill(pg: PostgresStore, owns: dict[int, np.ndarray] | None = None) -> dict[int, np.ndarray]:  # type: ignore[type-arg]
    """60 memories; every third has a window vector, which is what a window search must use
    (`owns`, when given, gets every memory's own vector)."""
    rng = np.random.default_rng(5)
    searched: dict[int, np.ndarray] = {}  # type: ignore[type-arg]
    with pg.transaction():
        for n in range(60):
            memory_id = pg.add_memory(new_memory(content=f"m{n}"))
            own = _unit(rng)
            pg.put_vector(memory_id, "e/8", own)
            searched[memory_id] = own
            if owns is not None:
                owns[memory_id] = own
            if n % 3 == 0:
                window = _unit(rng)
                pg.put_window(memory_id, "e/8", window)
                searched[memory_id] = window
    pg.maintain()
    return searched


def test_window_search_answers_what_an_exact_search_answers(pg: PostgresStore) -> None:
    searched = _fill(pg)
    rng = np.random.default_rng(9)
    for _ in range(5):
        query = _unit(rng)
        found = pg.window_similarities(MemoryFilter((SCOPE,)), "e/8", query, 10, [])
        exact = sorted(searched, key=lambda i: -float(searched[i] @ query))[:10]
        assert sorted(found) == sorted(exact)
        for memory_id, similarity in found.items():
            assert similarity == pytest.approx(float(searched[memory_id] @ query), abs=1e-5)


@pytest.mark.parametrize("k", [10, 100], ids=["indexes", "exact-scan"])
def test_window_matches_carry_the_vector_each_cosine_was_computed_from(
    pg: PostgresStore, k: int
) -> None:
    """Through the indexes, the exact scan (more asked for than the 60 memories the indexes
    hold) and `include`: every match comes with the vector it was scored by (the window vector
    where there is one) and its own vector, bit for bit, and the cosines are
    `window_similarities`' own."""
    owns: dict[int, np.ndarray] = {}  # type: ignore[type-arg]
    searched = _fill(pg, owns)
    ids = sorted(searched)
    rng = np.random.default_rng(9)
    filt = MemoryFilter((SCOPE,))
    for _ in range(3):
        query = _unit(rng)
        matches = pg.window_matches(filt, "e/8", query, k, ids[-3:])
        assert matches.cosines == pg.window_similarities(filt, "e/8", query, k, ids[-3:])
        assert set(matches.vectors) == set(matches.own) == set(matches.cosines) >= set(ids[-3:])
        assert all(np.array_equal(matches.own[i], owns[i]) for i in matches.own)
        assert any(not np.array_equal(matches.own[i], matches.vectors[i]) for i in matches.own)
        if k > len(ids):
            assert set(matches.cosines) == set(ids)  # the exact scan found every memory
        else:
            assert k <= len(matches.cosines) <= k + 3  # the best k, and those asked for
        for memory_id, vector in matches.vectors.items():
            assert vector.dtype == np.float32
            assert np.array_equal(vector, searched[memory_id])
            assert matches.cosines[memory_id] == pytest.approx(float(vector @ query), abs=1e-6)


def test_the_plan_of_a_window_search_uses_both_hnsw_indexes(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    _fill(pg)
    query = pg_vectors.vector_param(np.ones(DIMS, np.float32) / np.sqrt(DIMS))
    with psycopg.connect(postgres_database_url, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off; SET hnsw.iterative_scan = relaxed_order")
        statement = pg_vectors.window_sql("e/8", DIMS, f"m.scope = '{SCOPE}'")
        plan = " ".join(
            str(row[0])
            for row in conn.execute(
                b"EXPLAIN " + statement.as_bytes(conn), {"query": query, "k": 10}
            ).fetchall()
        )
        assert pg_vectors.index_name("e/8", DIMS, "windows") in plan
        assert pg_vectors.index_name("e/8", DIMS) in plan
        kinds = conn.execute("SELECT kind, identity FROM vector_indexes ORDER BY kind").fetchall()
    assert kinds == [("vectors", "e/8"), ("windows", "e/8")]


@pytest.fixture
def long_list(postgres_database_url: str) -> Iterator[PostgresStore]:
    """A store whose session candidate list is longer than a few-neighbour search's."""
    joiner = "&" if "?" in postgres_database_url else "?"
    opened = PostgresStore(f"{postgres_database_url}{joiner}hnsw_ef_search=400")
    try:
        yield opened
    finally:
        opened.close()


def test_a_search_for_fewer_neighbours_gets_a_shorter_candidate_list_never_a_longer_one() -> None:
    assert pg_vectors.candidates(5, 200) == pg_vectors.NEAR_EF_SEARCH == 100  # deduplication's
    assert pg_vectors.candidates(6, 200) == pg_vectors.candidates(10, 400) == 200
    assert pg_vectors.candidates(100, 400) == 400  # a recall pool: the session's
    assert pg_vectors.candidates(5, 40) == pg_vectors.candidates(10, 40) == 40


def test_a_search_for_a_few_sets_its_own_candidate_list_and_puts_the_session_s_back(
    long_list: PostgresStore,
) -> None:
    pg = long_list
    searched = _fill(pg)
    query = _unit(np.random.default_rng(4))
    filt = MemoryFilter(scopes=(SCOPE,))
    session = pg.options.hnsw_ef_search
    assert session > pg_vectors.FEW_EF_SEARCH  # 400 against 200
    setting = sql.SQL("SELECT current_setting('hnsw.ef_search')")
    with pg._db.connection() as conn:
        shown = pg_vectors._searched(conn, setting, {}, pg_vectors.FEW_EF_SEARCH, session)
        assert shown == [(str(pg_vectors.FEW_EF_SEARCH),)]
        assert conn.execute("SHOW hnsw.ef_search").fetchone() == (str(session),)
    with pg.transaction(), pg._db.connection() as conn:
        shown = pg_vectors._searched(conn, setting, {}, pg_vectors.NEAR_EF_SEARCH, session)
        assert shown == [(str(pg_vectors.NEAR_EF_SEARCH),)]
        assert conn.execute("SHOW hnsw.ef_search").fetchone() == (str(session),)
    with pg.transaction(), pg._db.connection() as conn:
        hits = pg.nearest(filt, "e/8", query, 5)
        assert conn.execute("SHOW hnsw.ef_search").fetchone() == (str(session),)
    own = pg.get_vectors(list(searched), "e/8")
    exact = sorted(own, key=lambda i: -float(own[i] @ query))[:5]
    assert [i for i, _ in hits] == exact  # 100 candidates among 60 vectors: every one seen
    with pg._db.connection() as conn:
        assert conn.execute("SHOW hnsw.ef_search").fetchone() == (str(session),)
    assert pg.nearest(filt, "e/8", query, 5) == hits


def test_a_bulk_load_builds_each_index_once_at_the_end(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    rng = np.random.default_rng(2)
    items = [
        BulkMemory(new_memory(content=f"bulk {n}"), _unit(rng), doc(f"bulk {n}"), {"n": n})
        for n in range(30)
    ]
    ids = bulk_add(pg, "e/8", items)
    assert ids == sorted(ids) and len(set(ids)) == 30
    with psycopg.connect(postgres_database_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM vector_indexes").fetchone() == (0,)
        assert finish_bulk(pg) == 1
        assert conn.execute("SELECT kind FROM vector_indexes").fetchall() == [("vectors",)]
        events = conn.execute(
            "SELECT count(*) FROM events e JOIN memories m ON m.source_event_id = e.id"
            " WHERE e.memory_id = m.id AND e.kind = 'remember'"
        ).fetchone()
    assert events == (30,)
    # The binary COPY of the vectors gives every float32 back bit for bit.
    assert np.array_equal(pg.get_vectors([ids[4]], "e/8")[ids[4]], items[4].vector)
    stored = pg.get_memories([ids[4]])[0]
    assert stored.content == "bulk 4"
    assert pg.nearest(MemoryFilter((SCOPE,)), "e/8", items[4].vector, 1)[0][0] == ids[4]
    assert pg.lexical_candidates(MemoryFilter((SCOPE,)), ["4"], 5)[0].memory_id == ids[4]


# the bounded lexical pool -----------------------------------------------------------------
WORDS = [f"w{i}" for i in range(10)]


def _skewed(pg: PostgresStore) -> None:
    """300 documents; low-numbered words common, high-numbered ones rare."""
    import random

    rng = random.Random(3)
    with pg.transaction():
        for n in range(300):
            memory_id = pg.add_memory(new_memory(content=f"s{n}"))
            words = [w for i, w in enumerate(WORDS) if rng.random() < 0.7 / (i + 1)]
            pg.put_lexical(memory_id, doc(" ".join(words) or "empty"))
    pg.maintain()


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from cairn.store.postgres import lexical as pg_lexical

    monkeypatch.setattr(pg_lexical, "EXACT_MATCHES", 150)
    monkeypatch.setattr(pg_lexical, "LARGE_STORE", 0)


def _holding(url: str, query: str) -> set[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute("SELECT memory_id FROM lexical WHERE doc @@ %s::tsquery", (query,))
        return {int(row[0]) for row in found}


@pytest.mark.usefixtures("bounded")
def test_the_bounded_pool_is_the_exact_ranking_of_the_rows_worth_ranking(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    from cairn.store.postgres import lexical as pg_lexical

    _skewed(pg)
    filt = MemoryFilter((SCOPE,))
    took: list[int] = []  # which tier each bounded pool came from
    for terms in (["w0", "w1", "w2"], ["w0", "w1", "w9"], ["w0", "w1", "w2", "w3", "w8"]):
        stats = pg.lexical_stats(filt, terms)
        tiers = pg_lexical.bounded_tiers(terms, stats)
        pool = [row.memory_id for row in pg.lexical_candidates(filt, terms, 20)]
        with pg._db.connection() as conn:  # the exact query: every match ranked
            exact = [
                row.memory_id for row in pg_lexical._ranked(conn, filt, terms, 10**6, stats, None)
            ]
        for tier, query in enumerate(tiers):
            worth = _holding(postgres_database_url, query)
            if len(worth) >= 20:
                took.append(tier)
                assert pool == [i for i in exact if i in worth][:20]  # the exact order there
                break
        else:
            assert pool == exact[:20]
    assert len(took) >= 2 and {0, 1} <= set(took)  # bounded pools, from both tiers


@pytest.mark.usefixtures("bounded")
def test_words_that_travel_together_are_ranked_from_the_rows_holding_them_all(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    """A two-word name in every other row defeats the planned bound (it admits most of the
    store); the strictest tier ranks the rows holding every word, and when too few hold them
    all the planned bound's pool comes back."""
    from cairn.store.postgres import lexical as pg_lexical

    with pg.transaction():
        for n in range(300):
            memory_id = pg.add_memory(new_memory(content=f"t{n}"))
            words = ["acme", "corp"] if n % 2 else ["zed"]
            words += [
                w for w, every in (("retry", 3), ("webhook", 5), ("long", 7)) if n % every == 0
            ]
            pg.put_lexical(memory_id, doc(" ".join([*words, *(["pad"] * (n % 4))])))
    pg.maintain()
    filt = MemoryFilter((SCOPE,))
    terms = ["acme", "corp", "retry", "webhook"]
    stats = pg.lexical_stats(filt, terms)
    strict, planned = pg_lexical.bounded_tiers(terms, stats)
    every = _holding(postgres_database_url, strict)
    assert len(every) == 10 and len(_holding(postgres_database_url, planned)) == 70
    with pg._db.connection() as conn:
        exact = [row.memory_id for row in pg_lexical._ranked(conn, filt, terms, 10**6, stats, None)]
    for limit in (5, 10):
        pool = [row.memory_id for row in pg.lexical_candidates(filt, terms, limit)]
        assert pool == [i for i in exact if i in every][:limit] == exact[:limit]
    worth = _holding(postgres_database_url, planned)
    pool = [row.memory_id for row in pg.lexical_candidates(filt, terms, 40)]
    assert pool == [i for i in exact if i in worth][:40]  # short of 40: the planned bound's


@pytest.mark.usefixtures("bounded")
def test_the_plan_of_a_bounded_pool_reads_the_gin_index(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    from cairn.store.postgres import lexical as pg_lexical

    _skewed(pg)
    stats = pg.lexical_stats(MemoryFilter((SCOPE,)), ["w0", "w1", "w2"])
    tiers = pg_lexical.bounded_tiers(["w0", "w1", "w2"], stats)
    query = tiers[-1] if tiers else None  # the planned bound, the one admitting the most rows
    assert query is not None and "&" in query
    with psycopg.connect(postgres_database_url, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN SELECT memory_id FROM lexical WHERE doc @@ %s::tsquery", (query,)
        ).fetchall()
    assert "lexical_doc" in " ".join(str(row[0]) for row in plan)
