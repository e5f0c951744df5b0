"""Many agent processes on one PostgreSQL database: no write lost, no error surfaced to any
caller, and racing identical claims deduplicated by the write lock."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cairn import Cairn
from cairn.embeddings.hashing import HashingEmbedder

PROCESSES = 8
WRITES = 200
SCOPE = "project:example/concurrency"

# Each worker is a separate Python process with its own connection pool, as separate agents
# on separate machines would be.
WORKER = """
import random, sys
from cairn import Cairn
from cairn.embeddings.hashing import HashingEmbedder
url, worker, writes, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with Cairn.open(url, embedder=HashingEmbedder()) as mem:
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


def run_workers(url: str, writes: int, mode: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, str(w), str(writes), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(PROCESSES)
    ]
    errors = []
    for proc in procs:
        _, err = proc.communicate(timeout=1800)
        if proc.returncode != 0:
            errors.append(err)
    assert errors == []


@pytest.mark.slow
@pytest.mark.postgres
def test_eight_processes_two_hundred_writes_each(postgres_database_url: str) -> None:
    run_workers(postgres_database_url, WRITES, "distinct")
    with Cairn.open(postgres_database_url, embedder=HashingEmbedder()) as mem:
        memories = list(mem.store.iter_memories())
        assert len(memories) == PROCESSES * WRITES
        assert len({m.content for m in memories}) == PROCESSES * WRITES
        assert sorted(m.id for m in memories) == list(range(1, PROCESSES * WRITES + 1))
        remembered = [e for e in mem.store.iter_events() if e.kind == "remember"]
        assert len(remembered) == PROCESSES * WRITES


@pytest.mark.slow
@pytest.mark.postgres
def test_concurrent_identical_claims_create_one_memory(postgres_database_url: str) -> None:
    run_workers(postgres_database_url, 20, "same")
    with Cairn.open(postgres_database_url, embedder=HashingEmbedder()) as mem:
        assert len(list(mem.store.iter_memories())) == 1
        dispositions = [e.payload["disposition"] for e in mem.store.iter_events()]
        assert dispositions.count("created") == 1
        assert dispositions.count("matched") == PROCESSES * 20 - 1
