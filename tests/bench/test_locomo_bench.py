"""The LoCoMo bench's plumbing on a small slice (the full run is a benchmark, not a test)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.adapters.cli import main
from cairn.bench import locomo
from cairn.bench.locomo import (
    LocomoSource,
    bench_locomo,
    evidence_ids,
    load_conversations,
    parse_session_date,
    render,
    turn_text,
)
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder

CONVERSATION = {
    "speaker_a": "Joanna",
    "speaker_b": "Nate",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Joanna", "dia_id": "D1:1", "text": "I made coconut milk ice cream!"},
        {"speaker": "Nate", "dia_id": "D1:2", "text": "How did it turn out?"},
        {"speaker": "Joanna", "dia_id": "D1:3", "text": "Super good, rich and creamy."},
        {
            "speaker": "Nate",
            "dia_id": "D1:4",
            "text": "Look at my turtles.",
            "blip_caption": "a photo of two turtles on a rock",
        },
    ],
    "session_2_date_time": "10:37 am on 27 June, 2023",
    "session_2": [
        {"speaker": "Nate", "dia_id": "D2:1", "text": "I won my first gaming tournament."},
        {"speaker": "Joanna", "dia_id": "D2:2", "text": "Congrats! Which game was it?"},
        {"speaker": "Nate", "dia_id": "D2:3", "text": "Street Fighter, the regional finals."},
    ],
    "session_1_observation": {
        "Joanna": [["Joanna made coconut milk ice cream.", "D1:1"]],
        "Nate": [["Nate has turtles.", ["D1:4"]]],
    },
    "session_2_observation": {
        "Nate": [["Nate won a Street Fighter tournament.", ["D2:1", "D2:3"]]]
    },
    "qa": [
        {"question": "What ice cream did Joanna make?", "evidence": ["D1:1"], "category": 4},
        {
            "question": "Which game did Nate win a tournament in?",
            "evidence": ["D2:1; D2:3"],
            "category": 1,
        },
        {
            "question": "When did Nate win his first tournament?",
            "evidence": ["D2:1"],
            "category": 2,
        },
        {"question": "What does Nate keep as pets?", "evidence": ["D1:4"], "category": 3},
        {"question": "What did Joanna bake?", "evidence": ["D1:9"], "category": 5},
    ],
}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "7.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return folder


def test_session_dates_and_evidence_are_parsed() -> None:
    assert parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_session_date("12:05 am on 1 January, 2024") == datetime(
        2024, 1, 1, 0, 5, tzinfo=UTC
    )
    assert parse_session_date("sometime") is None
    assert evidence_ids(["D8:6; D9:17", "D9:17", "D10:1"]) == ("D8:6", "D9:17", "D10:1")


def test_conversations_load_with_sessions_questions_and_observations(data: Path) -> None:
    (conv,) = load_conversations(data)
    assert conv.name == "7"
    assert [s.number for s in conv.sessions] == [1, 2]
    assert [q.category for q in conv.questions] == [4, 1, 2, 3]  # category 5 is left out
    assert conv.questions[1].evidence == ("D2:1", "D2:3")
    assert conv.sessions[1].observations == (
        ("Nate won a Street Fighter tournament.", ("D2:1", "D2:3")),
    )
    assert turn_text(conv.sessions[0].turns[3]) == (
        "Nate: Look at my turtles. [image: a photo of two turtles on a rock]"
    )


@pytest.mark.parametrize("mode", ["turns", "observations"])
def test_the_bench_runs_through_the_product(data: Path, tmp_path: Path, mode: str) -> None:
    result = bench_locomo(
        LocomoSource(data, mode),
        embedder=HashingEmbedder(),
        settings=Settings(home=tmp_path / "home", embedder="hashing"),
        absent=("What is the capital of Peru?", "How do I tune the JVM garbage collector?"),
    )
    assert result["memories"] == (7 if mode == "turns" else 3)
    assert result["questions"] == 4
    assert set(result["recall"]) == {"cairn", "lexical", "dense", "query"}
    overall = result["recall"]["cairn"]["all"]
    assert 0.0 < overall["R@1"] <= overall["R@5"] <= overall["R@10"] <= overall["R@20"] <= 1.0
    assert overall["R@20"] == 1.0  # every memory of a tiny conversation is in the top 20
    assert set(result["recall"]["cairn"]) == {
        "all",
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
    }
    assert result["abstention"]["absent_questions"] == 2
    assert result["recall_ms"]["median"] > 0
    assert result["ingest_memories_per_second"] > 0
    assert "| cairn | all |" in render(result)


def test_the_embedder_comes_from_the_callers_home_so_its_model_cache_is_reused(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store lives in a temporary home; a model built from that home would export the
    # local model again on every run (seconds, and the time would count as ingest).
    homes: list[Path] = []

    def make(settings: Settings) -> HashingEmbedder:
        homes.append(settings.home)
        return HashingEmbedder()

    monkeypatch.setattr(locomo, "make_embedder", make)
    home = tmp_path / "home"
    source = LocomoSource(data, max_questions=1)
    bench_locomo(source, settings=Settings(home=home, embedder="hashing"), absent=())
    assert homes == [home]


def test_the_ice_cream_question_finds_its_turn_first(data: Path, tmp_path: Path) -> None:
    result = bench_locomo(
        LocomoSource(data, max_questions=1),
        embedder=HashingEmbedder(),
        settings=Settings(home=tmp_path / "home", embedder="hashing"),
        absent=(),
    )
    assert result["recall"]["cairn"]["single-hop"]["R@1"] == 1.0


def test_the_cli_command_is_registered(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    run = CliRunner().invoke(
        main, ["bench", "locomo", "--data", str(data), "--max-questions", "2", "--json"]
    )
    assert run.exit_code == 0, run.output
    line = [text for text in run.output.splitlines() if text.startswith("{")][-1]
    parsed = json.loads(line)
    assert parsed["mode"] == "turns" and parsed["questions"] == 2
