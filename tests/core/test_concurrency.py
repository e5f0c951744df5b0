"""Many agent processes on one store file: no write lost, no error surfaced to any caller."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.embeddings.hashing import HashingEmbedder

PROCESSES = 4
WRITES = 200
SCOPE = "project:example/concurrency"

# Each worker is a separate Python process, as separate agents would be.
WORKER = """
import random, sys
from cairn import Cairn
from cairn.embeddings.hashing import HashingEmbedder
path, worker, writes, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with Cairn.open(path, embedder=HashingEmbedder()) as mem:
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


def run_workers(path: str, writes: int, mode: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, path, str(w), str(writes), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(PROCESSES)
    ]
    errors = []
    for proc in procs:
        _, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            errors.append(err)
    assert errors == []


@pytest.mark.slow
def test_four_processes_two_hundred_writes_each(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    run_workers(path, WRITES, "distinct")
    with Cairn.open(path, embedder=HashingEmbedder()) as mem:
        memories = list(mem.store.iter_memories())
        assert len(memories) == PROCESSES * WRITES
        assert len({m.content for m in memories}) == PROCESSES * WRITES
        remembered = [e for e in mem.store.iter_events() if e.kind == "remember"]
        assert len(remembered) == PROCESSES * WRITES


@pytest.mark.slow
def test_concurrent_identical_claims_create_one_memory(tmp_path: Path) -> None:
    path = str(tmp_path / "race.db")
    run_workers(path, 20, "same")
    with Cairn.open(path, embedder=HashingEmbedder()) as mem:
        assert len(list(mem.store.iter_memories())) == 1
        dispositions = [e.payload["disposition"] for e in mem.store.iter_events()]
        assert dispositions.count("created") == 1
        assert dispositions.count("matched") == PROCESSES * 20 - 1
