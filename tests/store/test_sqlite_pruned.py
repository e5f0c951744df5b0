"""The pruned dense scan of large SQLite stores (`cairn.store.sqlite.pruned`), on small stores
with its threshold lowered and a projection narrower than the vectors: the answer must be the
exact one, through appends, window rewrites, status changes, another process's writes, a new
process, and purge (no file may keep an image of a purged vector)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.storekit import active, new_memory

from cairn.store.base import MemoryFilter
from cairn.store.sqlite import dense_files, pruned
from cairn.store.sqlite import vectors as vectors_module
from cairn.store.sqlite.matrix import Matrix
from cairn.store.sqlite.store import SqliteStore

DIMS = 12


@pytest.fixture(autouse=True)
def _pruning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pruned, "PRUNE_MIN", 20)
    monkeypatch.setattr(vectors_module, "PRUNE_MIN", 20)
    monkeypatch.setattr(pruned, "DIMS", 3)  # a loose bound: many rows are rescored
    monkeypatch.setattr(pruned, "_FIRST", 1)  # only 4 k rows scored before the bound is used
    monkeypatch.setattr(dense_files, "PERSIST_MIN", 10)


def _vectors(count: int, seed: int) -> np.ndarray:  # type: ignore[type-arg]
    """Clustered unit vectors (a few directions plus noise), like embeddings of related text."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((4, DIMS))
    rows = centres[rng.integers(0, 4, count)] + 0.6 * rng.standard_normal((count, DIMS))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def _fill(store: SqliteStore, vectors: np.ndarray, scopes: int = 2) -> list[int]:  # type: ignore[type-arg]
    ids = []
    for n, vector in enumerate(vectors):
        memory_id = store.add_memory(new_memory(content=f"m{n}", scope=f"project:{n % scopes}"))
        store.put_vector(memory_id, "e", vector)
        ids.append(memory_id)
    return ids


def _exact(
    store: SqliteStore,
    effective: dict[int, np.ndarray],  # type: ignore[type-arg]
    filt: MemoryFilter,
    query: np.ndarray,  # type: ignore[type-arg]
    k: int,
) -> list[int]:
    admitted = store.filter_ids(filt, list(effective))
    return sorted(admitted, key=lambda i: -float(effective[i] @ query))[:k]


def _saved(
    path: str,
    vectors: np.ndarray,
    query: np.ndarray,  # type: ignore[type-arg]
) -> tuple[SqliteStore, dict[int, np.ndarray], MemoryFilter]:  # type: ignore[type-arg]
    """A store holding the first 40 `vectors`, its projection fitted and saved by one search:
    the store, its vectors by id, and the filter of its two scopes."""
    store = SqliteStore(path)
    ids = _fill(store, vectors[:40])
    filt = active("project:0", "project:1")
    store.nearest(filt, "e", query, 3)  # fits, projects and saves
    return store, dict(zip(ids, vectors[:40], strict=True)), filt


def _entry(store: SqliteStore) -> vectors_module._Entry:
    return store._vectors._entries["e"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.integers(min_value=20, max_value=120),
    st.integers(min_value=1, max_value=30),
    st.integers(min_value=0, max_value=2**16),
    st.sampled_from([("project:0",), ("project:0", "project:1")]),
)
def test_the_pruned_scan_returns_the_exact_answer(
    tmp_path_factory: pytest.TempPathFactory,
    count: int,
    k: int,
    seed: int,
    scopes: tuple[str, ...],
) -> None:
    store = SqliteStore(str(tmp_path_factory.mktemp("p") / "m.db"))
    vectors = _vectors(count, seed)
    ids = _fill(store, vectors)
    own = dict(zip(ids, vectors, strict=True))
    rng = np.random.default_rng(seed + 1)
    windowed = dict(own)
    for memory_id in rng.choice(ids, count // 4, replace=False).tolist():
        window = _vectors(1, seed + memory_id)[0]
        store.put_window(memory_id, "e", window)
        windowed[memory_id] = window
    filt = active(*scopes)
    for query in _vectors(3, seed + 2):
        found = store.nearest(filt, "e", query, k)
        assert _entry(store).pruned is not None
        assert [i for i, _ in found] == _exact(store, own, filt, query, k)
        windows = store.window_similarities(filt, "e", query, k, [])
        assert sorted(windows, key=lambda i: -windows[i]) == _exact(store, windowed, filt, query, k)
        assert all(
            windows[i] == pytest.approx(float(windowed[i] @ query), abs=1e-5) for i in windows
        )


def test_appends_rewrites_and_status_changes_keep_the_answer_exact(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "m.db"))
    vectors = _vectors(60, seed=5)
    ids = _fill(store, vectors[:40])
    own = dict(zip(ids, vectors[:40], strict=True))
    filt = active("project:0", "project:1")
    query = vectors[50]
    assert [i for i, _ in store.nearest(filt, "e", query, 5)] == _exact(store, own, filt, query, 5)
    basis = _entry(store).pruned.basis  # type: ignore[union-attr]
    more = _fill(store, vectors[40:])  # appended: projected with the basis fitted before
    own.update(zip(more, vectors[40:], strict=True))
    assert [i for i, _ in store.nearest(filt, "e", query, 5)] == _exact(store, own, filt, query, 5)
    assert _entry(store).pruned.basis is basis  # type: ignore[union-attr]
    assert _entry(store).pruned.n == 60  # type: ignore[union-attr]
    best = _exact(store, own, filt, query, 1)[0]
    store.update_memory(best, {"status": "retired"})  # a new epoch: reloaded and refitted
    found = [i for i, _ in store.nearest(filt, "e", query, 5)]
    assert best not in found and found == _exact(store, own, filt, query, 5)
    windowed = dict(own)
    store.put_window(ids[3], "e", query)  # memory 4's window now is the query itself
    windowed[ids[3]] = query
    windows = store.window_similarities(filt, "e", query, 5, [])
    assert sorted(windows, key=lambda i: -windows[i]) == _exact(store, windowed, filt, query, 5)
    assert windows[ids[3]] == pytest.approx(1.0)


def test_a_new_process_maps_the_saved_projection_and_sees_other_writers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "m.db")
    vectors = _vectors(50, seed=9)
    first, own, filt = _saved(path, vectors, vectors[45])
    saved = list((tmp_path / "m.db-dense").rglob("head.npy"))
    assert len(saved) == 1

    def refit(_matrix: object) -> pruned.Pruned:
        raise AssertionError("a saved projection is mapped, never refitted")

    monkeypatch.setattr(pruned.Pruned, "fitted", classmethod(lambda cls, m: refit(m)))
    second = SqliteStore(path)  # another process
    later = _fill(second, vectors[40:])  # written by it: the first sees them on its next call
    own.update(zip(later, vectors[40:], strict=True))
    for store in (second, first, SqliteStore(path)):
        for query in vectors[40:43]:
            found = [i for i, _ in store.nearest(filt, "e", query, 4)]
            assert found == _exact(store, own, filt, query, 4)
            assert found[0] in later


def test_purge_leaves_no_projection_of_the_vector_in_any_file(tmp_path: Path) -> None:
    from cairn.config import Settings
    from cairn.core import Cairn
    from cairn.embeddings.hashing import HashingEmbedder

    path = tmp_path / "memory.db"
    with Cairn.open(str(path), settings=Settings(home=tmp_path), embedder=HashingEmbedder()) as mem:
        refs = [
            mem.remember(f"note {n}: the quokka-{n} rota", type="fact", scope="project:a").memory_id
            for n in range(30)
        ]
        mem.recall("quokka rota", scope="project:a")
        entry = mem.store._vectors._entries[HashingEmbedder().identity]  # type: ignore[attr-defined]
        victim = int(refs[3][4:])
        position = int(np.searchsorted(entry.rows.ids[: entry.rows.n], victim))
        assert entry.pruned is not None
        secret = np.asarray(entry.pruned.head.take(np.array([position]))[0]).tobytes()
        folder = tmp_path / "memory.db-dense"
        assert any(secret in f.read_bytes() for f in folder.rglob("head.npy"))
        mem.purge(refs[3], scope="project:a")
        mem.recall("quokka rota", scope="project:a")  # reloads, refits and saves afresh
        files = [f for f in folder.rglob("*") if f.is_file()]
        assert any(f.name == "head.npy" for f in files)
        assert not any(secret in f.read_bytes() for f in files)
        now = mem.store._vectors._entries[HashingEmbedder().identity]  # type: ignore[attr-defined]
        assert now.pruned is not None and victim not in now.rows.ids[: now.rows.n].tolist()


def test_a_loose_bound_falls_back_to_the_full_product(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "m.db"))
    rng = np.random.default_rng(4)
    noise = rng.standard_normal((40, DIMS)).astype(np.float32)  # no structure: the bound is loose
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    ids = _fill(store, noise)
    own = dict(zip(ids, noise, strict=True))
    filt = active("project:0", "project:1")
    calls: list[int] = []
    original = vectors_module._Entry.scores

    def counted(self, query, windowed):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(self, query, windowed)

    vectors_module._Entry.scores = counted  # type: ignore[method-assign]
    try:
        found = [i for i, _ in store.nearest(filt, "e", noise[0], 3)]
    finally:
        vectors_module._Entry.scores = original  # type: ignore[method-assign]
    assert found == _exact(store, own, filt, noise[0], 3)
    assert calls == [1]  # the bound admits over a quarter of the rows: one full product instead


def test_an_empty_cache_is_never_fitted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_module, "PRUNE_MIN", 0)  # as LoCoMo was run to check exactness
    store = SqliteStore(str(tmp_path / "m.db"))
    filt = active("project:0", "project:1")
    vectors = _vectors(5, seed=2)
    query = vectors[0]
    assert store.nearest(filt, "e", query, 3) == []  # nothing held: nothing to fit on
    ids = _fill(store, vectors)
    assert [i for i, _ in store.nearest(filt, "e", query, 1)] == [ids[0]]
    assert _entry(store).pruned is not None


@settings(max_examples=30, deadline=None)
@given(
    st.integers(min_value=1, max_value=3_000),
    st.integers(min_value=0, max_value=2**16),
    st.sampled_from([0.0, 0.5, 0.999]),
)
def test_the_sampled_threshold_picks_the_largest_rows(
    count: int, seed: int, refused: float
) -> None:
    rng = np.random.default_rng(seed)
    n = 140_000  # large enough for the sampled threshold (a stride of 8 rows or more)
    values = rng.integers(-50, 50, n).astype(np.float32)  # many ties
    values[rng.random(n) < refused] = -np.inf  # rows a filter refuses
    picked = pruned._best_rows(values, count)
    assert picked.shape == (count,) and np.unique(picked).shape == (count,)
    assert np.array_equal(np.sort(values[picked]), np.sort(values)[-count:])


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=0, max_value=2**16), st.integers(min_value=1, max_value=40))
def test_the_head_scan_and_tail_refinement_are_exact_on_a_large_cache(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    n, dims = 140_000, 24
    centres = rng.standard_normal((6, dims))
    rows = centres[rng.integers(0, 6, n)] + 0.7 * rng.standard_normal((n, dims))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    matrix = Matrix.of(rows)
    projection = pruned.Pruned.fitted(matrix)
    assert projection.split == 2  # DIMS is 3 here: a head of 2 columns, a tail of 1
    mask = rng.random(n) < 0.9
    query = rows[int(rng.integers(0, n))] + 0.1 * rng.standard_normal(dims).astype(np.float32)
    found = pruned.exact_top(
        projection.bounds(query, None), mask, k, lambda p: matrix.take(p) @ query, n
    )
    assert found is not None
    positions, scores = found
    best = positions[np.argsort(-scores, kind="stable")[:k]]
    truth = np.where(mask, rows @ query, -np.inf)
    assert np.allclose(np.sort(truth[best]), np.sort(truth)[-k:], atol=1e-6)


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("head", np.zeros(7, np.float32)),  # flat
        ("tail", np.zeros((3, 1), np.float32)),  # too few rows
        ("head_residual", np.zeros((40, 2), np.float32)),  # not one norm per row
        ("basis", np.zeros((5, 3), np.float32)),  # another embedder's dimensions
    ],
)
def test_a_damaged_saved_projection_is_refitted(
    tmp_path: Path,
    name: str,
    damage: np.ndarray,  # type: ignore[type-arg]
) -> None:
    path = str(tmp_path / "m.db")
    vectors = _vectors(45, seed=11)
    _first, own, filt = _saved(path, vectors, vectors[41])
    (saved,) = (tmp_path / "m.db-dense").rglob(f"{name}.npy")
    np.save(saved, damage)
    second = SqliteStore(path)  # another process: the projection on disk no longer fits
    for query in vectors[40:45]:
        assert [i for i, _ in second.nearest(filt, "e", query, 4)] == _exact(
            second, own, filt, query, 4
        )
    assert _entry(second).pruned is not None and _entry(second).pruned.n == 40  # type: ignore[union-attr]
