"""Many agent processes on one store: no write lost, no error surfaced to any caller, and
racing identical claims deduplicated by the write transaction. The same workers run against
a SQLite file (4 processes, as on one machine) and a PostgreSQL database (8 processes, as
separate agents with their own connection pools)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.embeddings.hashing import HashingEmbedder

WRITES = 200
SCOPE = "project:example/concurrency"

# Each worker is a separate Python process, as separate agents would be.
WORKER = """
import random, sys
from cairn import Cairn
from cairn.embeddings.hashing import HashingEmbedder
location, worker, writes, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with Cairn.open(location, embedder=HashingEmbedder()) as mem:
    for i in range(writes):
        if mode == "distinct":
            rng = random.Random(worker * 100_000 + i)
            words = [rng.choice("abcdefghijklmnopqrstuvwxyz") * rng.randint(2, 3) +
                     rng.choice(["on", "ex", "ar", "ul", "im"]) + str(rng.randint(0, 999))
                     for _ in range(12)]
            text = f"Worker {worker} note {i}: " + " ".join(words) + "."
        else:
            text = "Everyone agrees the build uses Bazel."
        mem.remember(text, type="fact", scope="SCOPE_VALUE")
""".replace("SCOPE_VALUE", SCOPE)


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite-4"),
        pytest.param("postgres", id="postgres-8", marks=pytest.mark.postgres),
    ]
)
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, int]:
    """A store location and how many writer processes share it."""
    if request.param == "sqlite":
        return str(tmp_path / "shared.db"), 4
    url: str = request.getfixturevalue("postgres_database_url")
    return url, 8


def run_workers(location: str, processes: int, writes: int, mode: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, location, str(w), str(writes), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(processes)
    ]
    errors = []
    for proc in procs:
        _, err = proc.communicate(timeout=1800)
        if proc.returncode != 0:
            errors.append(err)
    assert errors == []


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(shared: tuple[str, int]) -> None:
    location, processes = shared
    run_workers(location, processes, WRITES, "distinct")
    with Cairn.open(location, embedder=HashingEmbedder()) as mem:
        memories = list(mem.store.iter_memories())
        assert len(memories) == processes * WRITES
        assert len({m.content for m in memories}) == processes * WRITES
        assert sorted(m.id for m in memories) == list(range(1, processes * WRITES + 1))
        remembered = [e for e in mem.store.iter_events() if e.kind == "remember"]
        assert len(remembered) == processes * WRITES


@pytest.mark.slow
def test_concurrent_identical_claims_create_one_memory(shared: tuple[str, int]) -> None:
    location, processes = shared
    run_workers(location, processes, 20, "same")
    with Cairn.open(location, embedder=HashingEmbedder()) as mem:
        assert len(list(mem.store.iter_memories())) == 1
        dispositions = [e.payload["disposition"] for e in mem.store.iter_events()]
        assert dispositions.count("created") == 1
        assert dispositions.count("matched") == processes * 20 - 1
