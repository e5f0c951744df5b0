"""`cairn bench scale` on tiny stores: the report's shape, the bulk fill, the progress it shows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cairn.adapters.cli import main
from cairn.bench.scale import bench_scale, numpy_floor
from cairn.bench.scale_fill import SCOPE, Pool, fill
from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings.hashing import HashingEmbedder


def test_bench_scale_reports_each_size_with_ratios_and_progress() -> None:
    said: list[str] = []
    steps: list[tuple[str, int]] = []

    def progress(label: str, total: int):  # type: ignore[no-untyped-def]
        return lambda count: steps.append((label, count))

    report = bench_scale(
        HashingEmbedder(), [5, 300], ops=3, say=said.append, progress=progress, pool_size=50
    )
    assert json.dumps(report)
    assert said[0] == "scale: embedding a pool of 50 claims"
    assert said[-1] == "scale: timed 3 recalls and 3 remembers at 300 memories"
    assert [label for label, _ in steps] == ["filling 5", "filling 300"]
    assert sum(count for label, count in steps if label == "filling 300") == 300
    small, large = report["runs"]
    assert small["memories"] == 5 and large["memories"] == 300
    for run in report["runs"]:
        for op in ("recall", "remember", "numpy_exact_floor"):
            assert run[op]["n"] == 3
            assert 0 < run[op]["median_ms"] <= run[op]["p95_ms"]
        assert run["ingest_memories_per_s"] > 0
    assert small["recall_median_ratio_to_smallest"] == 1.0


def test_the_bulk_fill_makes_ordinary_memories_that_recall_and_dedup_find(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    pool = Pool.embedded(embedder, 40)
    kept: list[np.ndarray] = []  # type: ignore[type-arg]
    settings = Settings(home=tmp_path)
    with Cairn.open(tmp_path / "s.db", settings=settings, embedder=embedder) as mem:
        fill(mem.store, embedder.identity, pool, 120, lambda _n: None, kept.append)
        assert sum(len(v) for v in kept) == 120
        assert mem.store.count_by("scope", None) == {SCOPE: 120}
        content = mem.store.get_memories([7])[0].content
        hits = mem.recall(content, scope=SCOPE, limit=3)
        assert "mem_7" in json.dumps(hits, default=str)
        again = mem.remember(content, type="fact", scope=SCOPE)
        assert again.disposition == "matched" and again.memory_id == "mem_7"


def test_the_numpy_floor_times_one_query_each() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((50, 8)).astype(np.float32)
    floor = numpy_floor(matrix, matrix[:4])
    assert floor["n"] == 4


def test_the_cli_prints_progress_on_stderr_and_the_report_on_stdout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    out = CliRunner().invoke(
        main, ["bench", "scale", "--sizes", "4", "--ops", "2", "--pool", "3", "--json"]
    )
    assert out.exit_code == 0, out.output
    assert "filling 4" in out.stderr
    report = json.loads(out.stdout)
    (run,) = report["runs"]
    assert run["cli_recall_wall_ms"] > 0 and run["peak_rss_mb"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sizes", "10,x"], "give store sizes"),
        (["--sizes", "0"], "positive store sizes"),
        (["--ops", "0"], "at least 1"),
        (["--store", "/tmp/file.db"], "postgresql://"),
        (["--store", "postgresql://u@127.0.0.1:1/x"], "cannot reach the PostgreSQL server"),
    ],
)
def test_bad_options_get_one_line_and_exit_2(args: list[str], message: str) -> None:
    out = CliRunner().invoke(main, ["bench", "scale", *args])
    assert out.exit_code == 2
    assert message in out.output
    assert "Traceback" not in out.output
    assert len([line for line in out.output.splitlines() if "error" in line.lower()]) == 1


@pytest.mark.postgres
def test_bench_scale_on_postgres_fills_a_database_per_size_and_drops_it(
    postgres_database_url: str,
) -> None:
    import psycopg

    report = bench_scale(HashingEmbedder(), [20], ops=2, store=postgres_database_url, pool_size=10)
    (run,) = report["runs"]
    assert report["backend"] == "postgres" and run["memories"] == 20
    assert run["index_build_ms"] > 0 and run["vacuum_ms"] > 0 and run["recall"]["n"] == 2
    with psycopg.connect(postgres_database_url, autocommit=True) as conn:
        left = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'cairn_scale_%'"
        ).fetchall()
    assert left == []


@pytest.mark.postgres
def test_a_settled_bulk_load_leaves_its_tables_vacuumed(postgres_database_url: str) -> None:
    """Each loaded table vacuumed and analysed once, by hand, so no autovacuum is left to run
    through the timed calls."""
    import psycopg

    from cairn.store.postgres import PostgresStore
    from cairn.store.postgres.bulk import finish_bulk, settle

    store = PostgresStore(postgres_database_url)
    try:
        pool = Pool.embedded(HashingEmbedder(), 10)
        fill(store, HashingEmbedder().identity, pool, 300, lambda _n: None, lambda _v: None)
        finish_bulk(store)
        settle(store)
    finally:
        store.close()
    with psycopg.connect(postgres_database_url, autocommit=True) as conn:
        counts = conn.execute(
            "SELECT relname, vacuum_count, analyze_count FROM pg_stat_user_tables"
            " WHERE relname IN ('memories', 'vectors', 'lexical', 'events') ORDER BY relname"
        ).fetchall()
    assert [(name, vacuumed) for name, vacuumed, _ in counts] == [
        ("events", 1), ("lexical", 1), ("memories", 1), ("vectors", 1)
    ]  # fmt: skip
    assert all(analysed >= 1 for _, _, analysed in counts)
