"""Many agent processes on one store file: no write lost, no error surfaced."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.embeddings.hashing import HashingEmbedder

PROCESSES = 4
WRITES = 200
SCOPE = "project:example/concurrency"


def writer(path: str, worker: int, failures: "multiprocessing.Queue[str]") -> None:
    try:
        with Cairn.open(path, embedder=HashingEmbedder()) as mem:
            for i in range(WRITES):
                mem.remember(
                    f"Worker {worker} observation number {i}: queue depth was {worker * 1000 + i}.",
                    type="fact", scope=SCOPE,
                )  # fmt: skip
    except BaseException as exc:  # noqa: BLE001 - report anything to the parent
        failures.put(f"worker {worker}: {type(exc).__name__}: {exc}")


@pytest.mark.slow
def test_four_processes_two_hundred_writes_each(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    Cairn.open(path, embedder=HashingEmbedder()).close()  # create the schema once
    ctx = multiprocessing.get_context("spawn")
    failures: multiprocessing.Queue[str] = ctx.Queue()
    procs = [ctx.Process(target=writer, args=(path, w, failures)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
    errors = []
    while not failures.empty():
        errors.append(failures.get())
    assert errors == []
    assert all(p.exitcode == 0 for p in procs)
    with Cairn.open(path, embedder=HashingEmbedder()) as mem:
        memories = list(mem.store.iter_memories())
        assert len(memories) == PROCESSES * WRITES
        assert len({m.content for m in memories}) == PROCESSES * WRITES
        remembered = [e for e in mem.store.iter_events() if e.kind == "remember"]
        assert len(remembered) == PROCESSES * WRITES


@pytest.mark.slow
def test_concurrent_identical_claims_create_one_memory(tmp_path: Path) -> None:
    path = str(tmp_path / "race.db")
    Cairn.open(path, embedder=HashingEmbedder()).close()
    ctx = multiprocessing.get_context("spawn")
    failures: multiprocessing.Queue[str] = ctx.Queue()
    procs = [ctx.Process(target=same_claim, args=(path, failures)) for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert failures.empty()
    with Cairn.open(path, embedder=HashingEmbedder()) as mem:
        assert len(list(mem.store.iter_memories())) == 1


def same_claim(path: str, failures: "multiprocessing.Queue[str]") -> None:
    try:
        with Cairn.open(path, embedder=HashingEmbedder()) as mem:
            for _ in range(20):
                mem.remember("Everyone agrees the build uses Bazel.", type="fact", scope=SCOPE)
    except BaseException as exc:  # noqa: BLE001
        failures.put(f"{type(exc).__name__}: {exc}")
