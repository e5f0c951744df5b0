"""`cairn bench locomo --store`: the bench runs in a given empty store on either backend, so
PostgreSQL's recall can be compared with SQLite's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.bench.locomo import LocomoSource, bench_locomo, render
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import Conflict

CONVERSATION = {
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Joanna", "dia_id": "D1:1", "text": "I made coconut milk ice cream!"},
        {"speaker": "Nate", "dia_id": "D1:2", "text": "Look at my turtles."},
        {"speaker": "Nate", "dia_id": "D1:3", "text": "I won a Street Fighter tournament."},
    ],
    "qa": [
        {"question": "What ice cream did Joanna make?", "evidence": ["D1:1"], "category": 4},
        {"question": "Which game did Nate win?", "evidence": ["D1:3"], "category": 1},
    ],
}


def test_the_bench_runs_in_the_given_store(store_location: str, tmp_path: Path) -> None:
    data = tmp_path / "locomo"
    data.mkdir()
    (data / "7.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    settings = Settings(home=tmp_path / "home", embedder="hashing")

    def run() -> dict[str, object]:
        return bench_locomo(
            LocomoSource(data),
            embedder=HashingEmbedder(),
            settings=settings,
            store=store_location,
            absent=(),
        )

    result = run()
    expected = "sqlite" if store_location.endswith(".db") else "postgres"
    assert result["backend"] == expected and result["memories"] == 3
    assert result["questions"] == 2
    assert f"{expected} store" in render(result)
    with pytest.raises(Conflict, match="needs an empty store"):
        run()
