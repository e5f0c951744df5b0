"""Two clients closing one session at once: exactly one wins, the other is told why."""

from __future__ import annotations

import threading
from pathlib import Path

from cairn import Cairn, CairnError
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder

SCOPE = "project:example/api"
ROUNDS = 5


def race(opened: list[Cairn], session_id: str, step: str) -> list[str]:
    """Commit from the first store handle and end from the second, released together."""
    barrier = threading.Barrier(len(opened))
    outcomes: list[str] = []

    def close(mem: Cairn, n: int) -> None:
        barrier.wait()
        try:
            if n == 0:
                mem.commit(
                    session_id, outcome="success", summary="done", procedure={"steps": [step]}
                )
            else:
                mem.end(session_id)
            outcomes.append("ok")
        except CairnError as exc:
            outcomes.append(exc.code)

    threads = [threading.Thread(target=close, args=(m, n)) for n, m in enumerate(opened)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_one_of_two_racing_closes_wins(store_location: str, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    opened = [
        Cairn.open(store_location, settings=settings, embedder=HashingEmbedder(), cwd=tmp_path)
        for _ in range(2)
    ]
    try:
        for n in range(ROUNDS):
            session_id = opened[0].activate(f"task {n}", scope=SCOPE).session_id
            assert sorted(race(opened, session_id, f"step {n}")) == ["conflict", "ok"]
            assert len(opened[0].store.episodes_for_sessions([session_id])) == 1
    finally:
        for mem in opened:
            mem.close()
