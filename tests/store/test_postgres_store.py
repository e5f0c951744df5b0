"""What only the PostgreSQL backend has: URL options, migrations, the write lock, the pool,
per-embedder HNSW indexes and filtered HNSW search, error translation. The behaviour it shares
with SQLite is tested in test_store_contract.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import Conflict, InvalidInput, StoreBusy, StoreError
from cairn.store import open_store
from cairn.store.base import Indexed, MemoryFilter, NearSearch
from cairn.store.migrations import load_migrations
from cairn.store.postgres import PoolOptions, PostgresStore
from cairn.store.postgres import vectors as pg_vectors
from cairn.store.postgres.connection import ANALYZE_MIN_ROWS
from cairn.store.postgres.lexical import MAX_LEXEME_BYTES, tsvector_literal
from cairn.store.postgres.options import redact, split_url
from storekit import IDENTITY, SCOPE, doc, new_event, new_memory, unit

# options (no server needed) -----------------------------------------------------------------


def test_cairn_parameters_leave_the_url_and_the_rest_stays() -> None:
    url = "postgresql://u:secret@db:5433/cairn?sslmode=disable&pool_max_size=4&busy_timeout_ms=50"
    conninfo, options = split_url(url, PoolOptions())
    assert conninfo == "postgresql://u:secret@db:5433/cairn?sslmode=disable"
    assert (options.pool_max_size, options.busy_timeout_ms, options.pool_min_size) == (4, 50, 1)
    _, kept = split_url("postgresql:///x?pool_timeout=2.5", PoolOptions(pool_timeout=9))
    assert kept.pool_timeout == 2.5


@pytest.mark.parametrize(
    "query",
    ["pool_max_size=0", "pool_min_size=5&pool_max_size=2", "busy_timeout_ms=x", "hnsw_ef_search=0"],
)
def test_bad_pool_parameters_are_refused(query: str) -> None:
    with pytest.raises(InvalidInput):
        split_url(f"postgresql:///x?{query}", PoolOptions())


def test_passwords_never_reach_messages() -> None:
    assert redact("postgresql://me:pw@h/db") == "postgresql://me:***@h/db"
    assert redact("postgresql://h/db?password=pw&sslmode=require") == (
        "postgresql://h/db?password=***&sslmode=require"
    )
    assert redact("postgresql:///db?host=/tmp/s") == "postgresql:///db?host=/tmp/s"


def test_tsvector_literals_keep_terms_fields_and_long_words() -> None:
    literal = tsvector_literal(doc("a b a", tags="a", source_ref="it's", reason="c\\d"))
    assert literal == "'a':1A,3A,4B 'b':2A 'it''s':5C 'c\\\\d':6D"
    long_term = "x" * (MAX_LEXEME_BYTES + 1)
    assert long_term not in tsvector_literal(doc(long_term))


def test_unreachable_server_says_what_to_check() -> None:
    with pytest.raises(StoreError) as caught:
        PostgresStore("postgresql://me:hunter2@127.0.0.1:1/cairn?connect_timeout=2")
    assert "cannot connect" in caught.value.message and "hunter2" not in caught.value.message


# with a server ------------------------------------------------------------------------------
needs_pg = pytest.mark.postgres


@pytest.fixture
def pg(postgres_database_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(postgres_database_url)
    try:
        yield opened
    finally:
        opened.close()


def _raw(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True)


@needs_pg
def test_factory_and_location(postgres_database_url: str) -> None:
    store = open_store(postgres_database_url)
    try:
        assert isinstance(store, PostgresStore)
        assert store.backend == "postgres" and store.location == redact(postgres_database_url)
    finally:
        store.close()


@needs_pg
def test_url_parameters_win_over_arguments(postgres_database_url: str) -> None:
    store = PostgresStore(postgres_database_url + "&pool_max_size=3", pool_max_size=7)
    try:
        assert store.options.pool_max_size == 3
        assert store.options.busy_timeout_ms == 30_000
    finally:
        store.close()


@needs_pg
def test_migrations_are_recorded_once_and_newer_schemas_refused(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    PostgresStore(postgres_database_url).close()
    with _raw(postgres_database_url) as conn:
        rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY 1").fetchall()
        shipped = load_migrations("cairn.store.postgres")
        assert rows == [(m.version, m.name) for m in shipped] and rows[0] == (1, "init")
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', now())")
    with pytest.raises(StoreError, match="newer than this cairn knows"):
        PostgresStore(postgres_database_url)


@needs_pg
def test_each_embedder_gets_its_own_hnsw_index(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    pg.put_vector(1, "small/3", unit(1, 0, 0))
    pg.put_vector(2, "small/3", unit(0, 1, 0))
    pg.put_vector(3, "other/4", unit(1, 0, 0, 0))
    wide = np.zeros(pg_vectors.HNSW_MAX_DIMS + 1, dtype=np.float32)
    wide[0] = 1.0
    pg.put_vector(4, "wide/2001", wide)
    with _raw(postgres_database_url) as conn:
        registry = conn.execute("SELECT identity, dims, index_name FROM vector_indexes").fetchall()
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes").fetchall()}
    assert sorted((r[0], r[1]) for r in registry) == [("other/4", 4), ("small/3", 3)]
    assert {pg_vectors.index_name("small/3", 3), pg_vectors.index_name("other/4", 4)} <= indexes
    memory_id = pg.add_memory(new_memory())
    pg.put_vector(memory_id, "wide/2001", wide)
    assert pg.nearest(MemoryFilter((SCOPE,)), "wide/2001", wide, 3)[0][0] == memory_id


@needs_pg
def test_the_first_memory_added_with_a_vector_of_an_embedder_indexes_it(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    wide = np.zeros(pg_vectors.HNSW_MAX_DIMS + 1, dtype=np.float32)
    wide[0] = 1.0
    added, _ = pg.add_memory_with_event(
        new_memory(),
        lambda made: new_event(memory_id=made),
        Indexed("new/3", unit(0, 0, 1), doc("x")),
    )
    pg.add_memory_with_event(
        new_memory(), lambda made: new_event(memory_id=made), Indexed("wide/2001", wide, doc("y"))
    )
    with _raw(postgres_database_url) as conn:
        registry = conn.execute("SELECT identity, dims FROM vector_indexes").fetchall()
    assert registry == [("new/3", 3)]  # none wider than pgvector indexes
    assert pg.nearest(MemoryFilter((SCOPE,)), "new/3", unit(0, 0, 1), 1)[0][0] == added  # indexed


@needs_pg
def test_a_claim_restated_word_for_word_costs_the_hash_lookup_alone(
    pg: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(20):
        pg.add_memory_with_event(
            new_memory(content=f"claim {i}"),
            lambda made: new_event(memory_id=made),
            Indexed(IDENTITY, unit(1, i, 0, 0), doc(f"claim {i}")),
        )
    sent: list[str] = []
    executing = psycopg.Cursor.execute
    claim_3 = partial(unit, 1, 3, 0, 0)

    def noted(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(query if isinstance(query, str) else query.as_string(None))
        return executing(cursor, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", noted)
    with pg.transaction():
        found = pg.resembling(SCOPE, "h-claim 3", NearSearch(IDENTITY, claim_3, 5, 0.5))
    assert found.same is not None and found.same.content == "claim 3" and found.near == ()
    assert [q for q in sent if "vector" in q] == []  # no search, no candidate list set
    sent.clear()
    with pg.transaction():
        near = pg.resembling(SCOPE, "h-none", NearSearch(IDENTITY, claim_3, 5, 0.99)).near
    assert [m.content for m, _ in near][:1] == ["claim 3"]
    assert sum("embedding" in q for q in sent) == 1  # one search, its rows joined


def _fill_for_filtered_search(pg: PostgresStore) -> tuple[list[int], np.ndarray]:
    """Many vectors in a big scope, a few in a small one; all point roughly the same way."""
    rng = np.random.default_rng(3)
    base = unit(1, 1, 1, 1)
    small: list[int] = []
    with pg.transaction():
        for i in range(400):
            scope = "project:small" if i % 100 == 0 else SCOPE
            memory_id = pg.add_memory(new_memory(content=f"v{i}", scope=scope))
            noisy = base + 0.2 * rng.standard_normal(4).astype(np.float32)
            pg.put_vector(memory_id, IDENTITY, (noisy / np.linalg.norm(noisy)).astype(np.float32))
            if scope == "project:small":
                small.append(memory_id)
    return small, base


@needs_pg
@pytest.mark.parametrize("iterative", ["relaxed_order", "off"])
def test_hnsw_with_a_selective_filter_still_finds_every_match(
    pg: PostgresStore, postgres_database_url: str, iterative: str
) -> None:
    small, query = _fill_for_filtered_search(pg)
    filt = MemoryFilter(scopes=("project:small",))
    with _raw(postgres_database_url) as conn:
        # Force the index path with a tiny candidate list, the worst case for post-filtering;
        # "off" is what pgvector before 0.8 does.
        conn.execute("SET TIME ZONE 'UTC'; SET enable_seqscan = off; SET enable_sort = off")
        conn.execute(f"SET hnsw.ef_search = 10; SET hnsw.iterative_scan = {iterative}")
        plan = conn.execute(
            b"EXPLAIN " + pg_vectors.nearest_sql(IDENTITY, 4, "m.scope = 'project:small'",
                                                   indexed=True).as_bytes(conn),
            {"query": pg_vectors.vector_param(query), "k": 10},
        ).fetchall()  # fmt: skip
        assert pg_vectors.index_name(IDENTITY, 4) in " ".join(str(r[0]) for r in plan)
        hits = pg_vectors.nearest(conn, filt, IDENTITY, query, 10, 10)
    assert sorted(i for i, _ in hits) == sorted(small)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert pg.nearest(filt, IDENTITY, query, 10) == hits


@needs_pg
def test_a_waiting_writer_gives_up_after_the_busy_timeout(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    impatient = PostgresStore(postgres_database_url + "&busy_timeout_ms=200")
    holding, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with pg.transaction():
            pg.add_memory(new_memory(content="holder"))
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert holding.wait(10)
        with pytest.raises(StoreBusy, match="busy_timeout_ms"):
            impatient.add_memory(new_memory(content="waiter"))
        assert impatient.count_by("type", None) == {}  # readers never wait for the lock
    finally:
        release.set()
        holder.join()
    impatient.add_memory(new_memory(content="after"))
    assert impatient.count_by("type", None) == {"fact": 2}
    impatient.close()


@needs_pg
def test_an_exhausted_pool_is_reported_as_busy(postgres_database_url: str) -> None:
    store = PostgresStore(postgres_database_url + "&pool_max_size=1&pool_timeout=0.2")
    holding, release = threading.Event(), threading.Event()

    def hold_the_connection() -> None:
        with store.transaction():
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold_the_connection)
    holder.start()
    try:
        assert holding.wait(10)
        with pytest.raises(StoreBusy, match="pool_max_size"):
            store.count_by("type", None)
    finally:
        release.set()
        holder.join()
    store.close()


@needs_pg
def test_two_stores_on_one_database_never_double_insert(postgres_database_url: str) -> None:
    stores = [PostgresStore(postgres_database_url) for _ in range(2)]
    barrier = threading.Barrier(4)

    def writer(n: int) -> None:
        store = stores[n % 2]
        barrier.wait()
        for h in range(30):
            with store.transaction():
                if store.find_current_by_hash(SCOPE, f"h{h}") is None:
                    store.add_memory(new_memory(content_hash=f"h{h}"))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(list(stores[0].iter_memories())) == 30
    for store in stores:
        store.close()


@needs_pg
def test_values_postgres_cannot_hold_are_refused_cleanly(pg: PostgresStore) -> None:
    with pytest.raises(InvalidInput, match="NUL"):
        pg.add_memory(new_memory(content="nul \x00 inside"))
    assert pg.add_memory(new_memory(content="fine")) > 0


@needs_pg
def test_a_failed_statement_rolls_the_whole_transaction_back(pg: PostgresStore) -> None:
    existing = pg.add_memory(new_memory(content="existing"))
    [memory] = pg.get_memories([existing])
    with pytest.raises(Conflict), pg.transaction():
        pg.add_memory(new_memory(content="lost with the transaction"))
        pg.import_memory(memory)
    assert [m.id for m in pg.iter_memories()] == [existing]


@needs_pg
def test_terms_longer_than_a_lexeme_still_match_themselves(pg: PostgresStore) -> None:
    long_term = "k" * (MAX_LEXEME_BYTES + 10)
    memory_id = pg.add_memory(new_memory(content="blob"))
    pg.put_lexical(memory_id, doc(f"key {long_term}"))
    rows = pg.lexical_candidates(MemoryFilter((SCOPE,)), [long_term], 5)
    assert [r.memory_id for r in rows] == [memory_id]
    assert rows[0].doc.content == f"key {long_term}"
    assert pg.lexical_stats(MemoryFilter((SCOPE,)), [long_term]).document_frequency == {
        long_term: 1
    }


@needs_pg
def test_a_closed_store_says_so(pg: PostgresStore) -> None:
    pg.close()
    with pytest.raises(StoreError, match="closed"):
        pg.count_by("type", None)


@needs_pg
def test_cairn_runs_on_postgres_end_to_end(postgres_database_url: str, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing", url=postgres_database_url)
    with Cairn.open(settings=settings, embedder=HashingEmbedder(), cwd=tmp_path) as mem:
        first = mem.remember("Deploys go through the staging cluster first", type="decision")
        again = mem.remember("Deploys go through the staging cluster first", type="decision")
        assert again.memory_id == first.memory_id and again.disposition == "matched"
        result = mem.recall("how do deploys work")
        assert result.refs[:1] == [first.memory_id]


@needs_pg
def test_a_grown_store_analyses_its_tables_without_waiting_for_autovacuum(
    pg: PostgresStore, postgres_database_url: str
) -> None:
    with _raw(postgres_database_url) as conn:
        conn.execute("ALTER TABLE memories SET (autovacuum_enabled = off)")  # no race with it

    def planned_rows() -> float:
        with _raw(postgres_database_url) as conn:
            row = conn.execute(
                "SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass"
            ).fetchone()
        assert row is not None
        return float(row[0])

    def add(count: int, start: int) -> None:
        with pg.transaction():
            for n in range(start, start + count):
                pg.add_memory(new_memory(content=f"fact number {n}"))

    add(ANALYZE_MIN_ROWS - 1, 0)
    assert planned_rows() <= 0  # never analysed: the planner would guess
    add(11, ANALYZE_MIN_ROWS)
    assert planned_rows() == ANALYZE_MIN_ROWS + 10  # analysed right after the commit
    add(5, 2 * ANALYZE_MIN_ROWS)
    assert planned_rows() == ANALYZE_MIN_ROWS + 10  # a few more rows do not analyse again


def _synchronous_commit(pg: PostgresStore) -> str:
    with pg._db.connection() as conn:
        row = conn.execute("SHOW synchronous_commit").fetchone()
    assert row is not None
    return str(row[0])


def _durable_url(url: str) -> str:
    """The URL with commits waiting for the flush, whatever the test server's default."""
    return url + ("&" if "?" in url else "?") + "options=-csynchronous_commit%3Don"


@pytest.fixture
def durable_pg(postgres_database_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(_durable_url(postgres_database_url))
    yield store
    store.close()


@needs_pg
def test_a_lazy_transaction_skips_the_flush_wait_and_only_the_outermost_block_decides(
    durable_pg: PostgresStore,
) -> None:
    pg = durable_pg
    assert _synchronous_commit(pg) == "on"
    with pg.transaction(durable=False):
        assert _synchronous_commit(pg) == "off"
        kept = pg.add_memory(new_memory(content="bookkeeping"))  # its own block joins
        assert _synchronous_commit(pg) == "off"
    with pg.transaction():  # SET LOCAL ended with the transaction: the next one is durable
        with pg.transaction(durable=False):
            assert _synchronous_commit(pg) == "on"
        pg.add_memory(new_memory(content="what the user said"))
    assert _synchronous_commit(pg) == "on"
    assert kept in {m.id for m in pg.iter_memories()}


@needs_pg
def test_a_lazy_transaction_is_still_all_or_nothing(durable_pg: PostgresStore) -> None:
    pg = durable_pg
    existing = pg.add_memory(new_memory(content="existing"))
    [memory] = pg.get_memories([existing])
    with pytest.raises(Conflict), pg.transaction(durable=False):
        pg.add_memory(new_memory(content="lost with the transaction"))
        pg.import_memory(memory)
    assert [m.id for m in pg.iter_memories()] == [existing]
    with pg.transaction(durable=False):
        assert _synchronous_commit(pg) == "off"  # the failed one left nothing behind


@needs_pg
def test_a_recall_commits_lazily_and_a_remember_durably(
    postgres_database_url: str, tmp_path: Path
) -> None:
    url = _durable_url(postgres_database_url)
    settings = Settings(home=tmp_path / "home", embedder="hashing", url=url)
    with Cairn.open(settings=settings, embedder=HashingEmbedder(), cwd=tmp_path) as mem:
        store = mem.store
        assert isinstance(store, PostgresStore)
        seen: list[str] = []
        original = store.add_event

        def noting(event: Any) -> int:
            seen.append(f"{event.kind}:{_synchronous_commit(store)}")
            return original(event)

        adding = store.add_memory_with_event

        def noting_memory(memory: Any, event: Any, *more: Any) -> tuple[int, int]:
            seen.append(f"{event(0).kind}:{_synchronous_commit(store)}")
            return adding(memory, event, *more)

        store.add_event = noting  # type: ignore[method-assign]
        store.add_memory_with_event = noting_memory  # type: ignore[method-assign]
        mem.remember("Deploys go through the staging cluster first", type="decision")
        mem.recall("how do deploys work")
        assert seen == ["remember:on", "recall:off"]
