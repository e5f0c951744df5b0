"""The abstention bench and its leave-one-conversation-out fit, on two tiny conversations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cairn.adapters.cli import main
from cairn.bench.abstention import _Cached, bench_abstention, render, stores
from cairn.bench.abstention_fit import Replay, gates, leave_one_out
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.ranking.gate import GATE

ABSENT = ("What is the capital of Peru?", "How do I configure Kubernetes ingress?")


def _conversation(a: str, b: str, topic: str) -> dict[str, Any]:
    turns = [
        {"speaker": a, "dia_id": "D1:1", "text": f"I started learning {topic} last week."},
        {"speaker": b, "dia_id": "D1:2", "text": "That sounds fun, how is it going?"},
        {"speaker": a, "dia_id": "D1:3", "text": f"My {topic} teacher is very patient."},
        {"speaker": b, "dia_id": "D1:4", "text": "I adopted a grey cat named Pixel."},
    ]
    return {
        "conversation": {
            "speaker_a": a,
            "speaker_b": b,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "qa": [
            {"question": f"What did {a} start learning?", "evidence": ["D1:1"], "category": 4},
            {"question": f"What is {b}'s cat called?", "evidence": ["D1:4"], "category": 4},
            {"question": "Who is patient?", "evidence": ["D1:3", "D1:1"], "category": 1},
        ],
    }


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "1.json").write_text(json.dumps(_conversation("Ana", "Ben", "pottery")))
    (folder / "2.json").write_text(json.dumps(_conversation("Cleo", "Dan", "violin")))
    return folder


def test_bench_reports_each_size(data: Path, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    result, outcomes = bench_abstention(
        data, sizes=(1, 3), embedder=HashingEmbedder(), settings=settings, absent=ABSENT,
        features=True,
    )  # fmt: skip
    rows = {row["size"]: row for row in result["sizes"]}
    assert set(rows) == {1, 3}
    for size, row in rows.items():
        assert row["absent"] > 0 and row["answerable"] > 0
        assert 0.0 <= row["absent_empty"] <= 1.0 and 0.0 <= row["answerable_miss"] <= 1.0
        asked = [o for o in outcomes if o.size == size and o.absent]
        assert len(asked) == row["absent"]
    assert {o.conversation for o in outcomes} == {"1", "2"}
    # The replayed current gate agrees with what recall itself answered.
    replayed = Replay(outcomes).answered(GATE)
    assert [not a for a in replayed] == [o.empty for o in outcomes]
    assert "| 1 |" in render(result) and "targets" in render(result)
    fit = leave_one_out(outcomes, gates()[::97])
    assert [row["size"] for row in fit["held_out"]] == [1, 3]
    assert set(fit["chosen_per_fold"]) == {"1", "2"}
    assert [row["size"] for row in fit["all_stale_held_out"]] == [1, 3]
    assert 0.0 < fit["stale_min_coverage_on_all"] <= 1.0


def test_sizes_larger_than_a_conversation_borrow_other_turns(data: Path, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    result, outcomes = bench_abstention(
        data, sizes=(6,), embedder=HashingEmbedder(), settings=settings, absent=ABSENT
    )
    assert result["sizes"][0]["size"] == 6 and len(outcomes) > 0
    assert stores(1) > stores(1000) >= 10


def test_cached_embedder_embeds_each_text_once() -> None:
    calls: list[int] = []
    inner = HashingEmbedder()

    class Counting:
        identity = inner.identity
        dimensions = inner.dimensions

        def embed_many(self, texts: Any) -> Any:
            calls.append(len(texts))
            return inner.embed_many(texts)

    cached = _Cached(Counting())
    first = cached.embed_many(["a b", "c d"])
    again = cached.embed_many(["c d", "a b", "a b"])
    assert calls == [2] and np.allclose(first[0], again[1]) and cached.identity == inner.identity


def test_cli_runs_the_bench(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    done = CliRunner().invoke(
        main, ["bench", "abstention", "--data", str(data), "--sizes", "1,2", "--json"]
    )
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert [row["size"] for row in result["sizes"]] == [1, 2]
    bad = CliRunner().invoke(main, ["bench", "abstention", "--data", str(data), "--sizes", "0"])
    assert bad.exit_code == 2
