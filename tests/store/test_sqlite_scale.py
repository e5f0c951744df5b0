"""The SQLite backend's large-store paths, exercised on small stores with their thresholds lowered:
the bounded lexical pool, the dense cache's growth and window overrides, the bulk load."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.storekit import active, doc, joined_averages, new_memory

from cairn.errors import InvalidInput
from cairn.store.bulk import BulkMemory
from cairn.store.bulk_load import bulk_add
from cairn.store.lexical_bound import smallest_share
from cairn.store.sqlite import dense_files, lexical
from cairn.store.sqlite import vectors as vectors_module
from cairn.store.sqlite.sql import match_expression
from cairn.store.sqlite.store import SqliteStore

WORDS = [f"w{i}" for i in range(12)]


def _corpus(store: SqliteStore, count: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(count):
        memory_id = store.add_memory(new_memory(content="x", scope="project:a"))
        # Skewed word use: low-numbered words are common, high-numbered ones rare.
        words = [w for n, w in enumerate(WORDS) if rng.random() < 0.6 / (n + 1)]
        store.put_lexical(memory_id, doc(" ".join(words) or "empty"))


@pytest.fixture
def small(tmp_path: Path) -> SqliteStore:
    store = SqliteStore(str(tmp_path / "m.db"))
    _corpus(store, 400, seed=3)
    return store


def _pool(store: SqliteStore, terms: list[str], exact_matches: int, limit: int = 20) -> list[int]:
    old = (lexical.EXACT_MATCHES, lexical.LARGE_STORE)
    lexical.EXACT_MATCHES, lexical.LARGE_STORE = exact_matches, 0
    try:
        rows = store.lexical_candidates(active("project:a"), terms, limit)
        return [row.memory_id for row in rows]
    finally:
        lexical.EXACT_MATCHES, lexical.LARGE_STORE = old


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(WORDS), min_size=2, max_size=6, unique=True))
def test_the_bounded_pool_is_the_exact_ranking_of_the_rows_worth_ranking(
    small: SqliteStore, terms: list[str]
) -> None:  # the store is only read: sharing it between examples is safe
    conn = small._db.get()
    old = (lexical.EXACT_MATCHES, lexical.LARGE_STORE)
    lexical.EXACT_MATCHES, lexical.LARGE_STORE = 40, 0
    try:
        expression = lexical._pruned_expression(conn, terms, {})
    finally:
        lexical.EXACT_MATCHES, lexical.LARGE_STORE = old
    # The pool comes back as a set (in id order): compare bm25 scores, best first, since equal
    # scores may fall either way at the pool's edge.
    score = dict(
        conn.execute(
            f"SELECT rowid, {lexical.POOL_RANK} FROM lexical WHERE lexical MATCH ?",
            (match_expression(terms),),
        ).fetchall()
    )
    bounded = _pool(small, terms, 40)
    worth = score.keys()
    if expression is not None:
        worth = {
            row[0]
            for row in conn.execute(
                "SELECT rowid FROM lexical WHERE lexical MATCH ?", (expression,)
            )
        }
        assert set(bounded) <= worth or len(worth) < 20  # short: the exact query ran instead
        if len(worth) < 20:
            worth = score.keys()
    expected = sorted(score[i] for i in worth)[:20]
    assert sorted(score[i] for i in bounded) == pytest.approx(expected)


def test_the_pruned_expression_keeps_rare_terms_and_asks_for_several_common_ones(
    small: SqliteStore,
) -> None:
    conn = small._db.get()
    old = (lexical.EXACT_MATCHES, lexical.LARGE_STORE)
    lexical.EXACT_MATCHES, lexical.LARGE_STORE = 60, 0
    try:
        expression = lexical._pruned_expression(conn, ["w0", "w1", "w2", "w11"], {})
        cheap = lexical._pruned_expression(conn, ["w11", "w10"], {})
    finally:
        lexical.EXACT_MATCHES, lexical.LARGE_STORE = old
    assert expression is not None
    assert '"w11"' in expression.split(" OR ")  # rare: alone
    assert '("w2" AND "w1" AND "w0")' in expression.split(" OR ")  # common: all three at once
    assert cheap is None  # rare words only: ranking all their rows is cheap
    assert lexical._pruned_expression(conn, ["w0", "w1", "w2", "w11"], {}) is None  # small store


def test_the_poisson_binomial_tail_picks_the_smallest_count() -> None:
    assert smallest_share([0.5, 0.5, 0.5], 0.5) == 2  # P(>=2) = 0.5
    assert smallest_share([0.5, 0.5, 0.5], 0.2) == 3  # P(>=3) = 0.125
    assert smallest_share([0.9, 0.9], 0.01) == 2  # never fewer than two


def _vector(seed: int) -> np.ndarray:  # type: ignore[type-arg]
    v = np.random.default_rng(seed).standard_normal(8).astype(np.float32)
    return v / np.linalg.norm(v)


def test_the_dense_cache_grows_past_its_capacity_and_matches_exact_search(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "m.db"))
    vectors: dict[int, np.ndarray] = {}  # type: ignore[type-arg]
    query = _vector(0)
    for n in range(1, 1500):  # past the first capacity (1024 rows), one append at a time
        memory_id = store.add_memory(new_memory(content=f"m{n}", scope=f"project:{n % 3}"))
        vectors[memory_id] = _vector(n)
        store.put_vector(memory_id, "e", vectors[memory_id])
        if n in (1, 700, 1100, 1499):
            filt = active("project:1", "project:2")
            found = store.nearest(filt, "e", query, 5)
            admitted = [i for i in vectors if store.get_memories([i])[0].scope != "project:0"]
            best = sorted(admitted, key=lambda i: -float(vectors[i] @ query))[:5]
            assert [i for i, _ in found] == best


def test_window_vectors_replace_own_vectors_in_recall_but_not_in_dedup(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "m.db"))
    ids = [store.add_memory(new_memory(content=f"m{n}", scope="project:a")) for n in range(3)]
    for n, memory_id in enumerate(ids):
        store.put_vector(memory_id, "e", _vector(n + 1))
    filt = active("project:a")
    target = _vector(1)
    assert store.window_similarities(filt, "e", target, 1, [])[ids[0]] == pytest.approx(1.0)
    store.put_window(ids[2], "e", target)  # memory 3's window now looks exactly like memory 1
    windows = store.window_similarities(filt, "e", target, 3, [])
    assert windows[ids[2]] == pytest.approx(1.0)
    assert dict(store.nearest(filt, "e", target, 3))[ids[2]] < 0.99
    store.delete_window(ids[2])
    assert store.window_similarities(filt, "e", target, 3, [])[ids[2]] < 0.99


def test_bulk_add_refuses_session_memories_and_writes_nothing(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "m.db"))
    item = BulkMemory(new_memory(content="a", session_id="s1"), _vector(1), doc("a"), {})
    with pytest.raises(InvalidInput, match="session"):
        bulk_add(store, "e", [item])
    assert store.count_by("scope", None) == {}


# the dense cache on disk -----------------------------------------------------------------------
@pytest.fixture
def persisting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dense_files, "PERSIST_MIN", 10)


def _filled(path: Path, count: int) -> tuple[SqliteStore, dict[int, np.ndarray]]:  # type: ignore[type-arg]
    store = SqliteStore(str(path))
    vectors = {}
    for n in range(count):
        memory_id = store.add_memory(new_memory(content=f"m{n}", scope="project:a"))
        vectors[memory_id] = _vector(100 + n)
        store.put_vector(memory_id, "e", vectors[memory_id])
    return store, vectors


def _exact(vectors: dict[int, np.ndarray], query: np.ndarray, k: int) -> list[int]:  # type: ignore[type-arg]
    return sorted(vectors, key=lambda i: -float(vectors[i] @ query))[:k]


@pytest.mark.usefixtures("persisting")
def test_a_new_process_maps_the_saved_cache_and_reads_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, vectors = _filled(tmp_path / "m.db", 30)
    query = _vector(0)
    filt = active("project:a")
    assert [i for i, _ in first.nearest(filt, "e", query, 5)] == _exact(vectors, query, 5)
    assert (tmp_path / "m.db-dense").is_dir()  # 30 rows >= PERSIST_MIN: saved
    later = first.add_memory(new_memory(content="later", scope="project:a"))
    vectors[later] = query  # written after the save: the next process must still see it
    first.put_vector(later, "e", query)

    read: list[int] = []
    original = vectors_module._append_new

    def counting(conn, entry, identity, known):  # type: ignore[no-untyped-def]
        read.append(known)
        return original(conn, entry, identity, known)

    monkeypatch.setattr(vectors_module, "_append_new", counting)
    second = SqliteStore(str(tmp_path / "m.db"))  # as another process would open it
    found = second.nearest(filt, "e", query, 5)
    assert [i for i, _ in found] == _exact(vectors, query, 5)
    assert found[0][0] == later
    assert read == [later - 1]  # it started from the saved rows, not from the first row


@pytest.mark.usefixtures("persisting")
def test_a_saved_cache_from_another_epoch_is_never_used(tmp_path: Path) -> None:
    first, vectors = _filled(tmp_path / "m.db", 20)
    first.nearest(active("project:a"), "e", _vector(0), 3)
    (victim,) = list(vectors)[:1]
    first.update_memory(victim, {"status": "retired"})  # moves the epoch
    second = SqliteStore(str(tmp_path / "m.db"))
    found = second.nearest(active("project:a"), "e", vectors[victim], 20)
    assert victim not in dict(found)


@pytest.mark.usefixtures("persisting")
def test_purge_deletes_the_saved_cache_and_no_file_keeps_the_vector(tmp_path: Path) -> None:
    from cairn.config import Settings
    from cairn.core import Cairn
    from cairn.embeddings.hashing import HashingEmbedder

    path = tmp_path / "memory.db"
    settings = Settings(home=tmp_path)
    with Cairn.open(str(path), settings=settings, embedder=HashingEmbedder()) as mem:
        refs = [
            mem.remember(f"note {n}: the quokka-{n} rota", type="fact", scope="project:a").memory_id
            for n in range(15)
        ]
        mem.recall("quokka rota", scope="project:a")
        folder = tmp_path / "memory.db-dense"
        blob = mem.store.get_vectors([int(refs[3][4:])], HashingEmbedder().identity)
        secret = next(iter(blob.values())).tobytes()
        assert any(secret in f.read_bytes() for f in folder.rglob("*") if f.is_file())
        mem.purge(refs[3], scope="project:a")
        leftovers = [f for f in folder.rglob("*") if f.is_file()] if folder.exists() else []
        assert not any(secret in f.read_bytes() for f in leftovers)
        mem.recall("quokka rota", scope="project:a")  # reloads from SQLite and saves afresh
        files = [f for f in folder.rglob("*") if f.is_file()]
        assert files and not any(secret in f.read_bytes() for f in files)


def test_document_frequencies_count_only_admitted_rows_whichever_way_they_are_counted(
    small: SqliteStore,
) -> None:
    filt = active("project:a")
    conn = small._db.get()
    fast = lexical.document_frequencies(conn, filt, WORDS, {})
    assert lexical._admits_everything(conn, filt, {})  # one scope, nothing retired
    slow = {
        word: conn.execute(
            "SELECT count(*) FROM lexical JOIN memories m ON m.id = lexical.rowid "
            "WHERE lexical MATCH ? AND m.status = 'active'",
            (match_expression([word]),),
        ).fetchone()[0]
        for word in WORDS
    }
    assert fast == slow
    holder = conn.execute(
        "SELECT rowid FROM lexical WHERE lexical MATCH ? LIMIT 1", (match_expression(["w0"]),)
    ).fetchone()[0]
    small.update_memory(holder, {"status": "retired"})
    assert not lexical._admits_everything(conn, filt, {})
    after = lexical.document_frequencies(conn, filt, ["w0"], {})
    assert after == {"w0": slow["w0"] - 1}
    pool = small.lexical_candidates(filt, ["w0"], 1000)
    assert holder not in {row.memory_id for row in pool}


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=6),
    st.integers(min_value=1, max_value=17),
)
def test_the_chunked_matrix_is_one_matrix_to_every_reader(batches: list[int], chunk: int) -> None:
    from io import BytesIO

    from cairn.store.sqlite import matrix as matrix_module

    rng = np.random.default_rng(len(batches) * 100 + chunk)
    whole = rng.standard_normal((sum(batches), 4)).astype(np.float32)
    old = matrix_module.CHUNK_ROWS
    matrix_module.CHUNK_ROWS = chunk  # many chunk edges on a few rows
    try:
        grown = matrix_module.Matrix.of(whole[: batches[0]].copy())  # a "mapped" first chunk
        start = batches[0]
        for size in batches[1:]:
            grown.append(whole[start : start + size])
            start += size
    finally:
        matrix_module.CHUNK_ROWS = old
    query = rng.standard_normal(4).astype(np.float32)
    assert grown.n == len(whole)
    # One product per chunk sums in another order than one over the whole: float32 rounding,
    # which a relative tolerance alone rejects for a score near zero.
    assert np.allclose(grown.product(query), whole @ query, atol=1e-5)
    positions = rng.permutation(len(whole))[: max(1, len(whole) // 2)]
    assert np.array_equal(grown.take(positions), whole[positions])
    out = BytesIO()
    grown.write_npy(out)
    out.seek(0)
    assert np.array_equal(np.load(out), whole)


@pytest.mark.usefixtures("persisting")
def test_a_saved_cache_left_by_another_store_at_the_same_path_is_never_used(
    tmp_path: Path,
) -> None:
    first, _ = _filled(tmp_path / "m.db", 20)
    first.nearest(active("project:a"), "e", _vector(0), 3)
    first.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'm.db'}{suffix}").unlink(missing_ok=True)
    assert (tmp_path / "m.db-dense").is_dir()  # left behind by the deleted store
    second, vectors = _filled(tmp_path / "m.db", 5)  # a new store, epoch 0 again
    query = _vector(3)
    found = second.nearest(active("project:a"), "e", query, 5)
    assert [i for i, _ in found] == _exact(vectors, query, 5)


def test_bulk_add_stores_what_add_memory_stores(tmp_path: Path) -> None:
    from dataclasses import replace

    store = SqliteStore(str(tmp_path / "m.db"))
    new = new_memory(content="tagged", tags=("infra", "db"), diff_files=("a.py",), pinned=True)
    one_by_one = store.add_memory(new)
    (bulk,) = bulk_add(store, "e", [BulkMemory(new, _vector(1), doc("tagged"), {"k": 1})])
    first, second = store.get_memories([one_by_one, bulk])
    assert replace(second, id=first.id, source_event_id=None) == first
    event = store.get_events([second.source_event_id or 0])[0]
    assert (event.kind, event.memory_id, dict(event.payload)) == ("remember", bulk, {"k": 1})
    assert store.filter_ids(active(tags=("db",)), [one_by_one, bulk]) == {one_by_one, bulk}


def test_average_lengths_are_the_same_with_or_without_the_join(small: SqliteStore) -> None:
    filt = active("project:a")
    conn = small._db.get()
    joined = joined_averages(conn, "project:a")
    assert lexical.averages(conn, filt, {}) == pytest.approx(joined)
    small.update_memory(1, {"status": "retired"})
    after = lexical.averages(conn, filt, {})
    assert after[0] == joined[0] - 1
