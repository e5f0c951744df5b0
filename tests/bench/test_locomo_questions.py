"""`cairn bench locomo --per-question` (schema, order, determinism), the new figures beside
the old ones, and `cairn bench locomo-diff`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.adapters.cli import main
from cairn.bench.locomo import LocomoSource, bench_locomo, render
from cairn.bench.locomo_questions import (
    FIELDS,
    diff,
    read_per_question,
    render_diff,
    write_per_question,
)
from cairn.bench.locomo_report import Asked
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import InvalidInput
from clocks import FakeClock

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

SECOND = {
    **CONVERSATION,
    "qa": [
        {"question": "Which game did Nate play?", "evidence": ["D2:3"], "category": 4},
        {"question": "What did Nate eat?", "evidence": [], "category": 2},
        # No observation points to D1:2: the observations ceiling misses it.
        {"question": "What did Nate ask about the ice cream?", "evidence": ["D1:2"], "category": 4},
    ],
}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    # "10" sorts after "9" as a number, before it as text.
    (folder / "9.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    (folder / "10.json").write_text(json.dumps(SECOND), encoding="utf-8")
    return folder


def run(data: Path, home: Path, out: Path, mode: str = "turns") -> dict[str, Any]:
    return bench_locomo(
        LocomoSource(data, mode),
        embedder=HashingEmbedder(),
        settings=Settings(home=home, embedder="hashing"),
        absent=("What is the capital of Peru?",),
        per_question=out,
        clock=FakeClock(),
    )


def lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line]


def test_one_line_per_question_in_a_fixed_order(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "q.jsonl"
    run(data, tmp_path / "home", out)
    records = lines(out)
    assert [(r["conversation"], r["index"]) for r in records] == [
        ("9", 0),
        ("9", 1),
        ("9", 2),
        ("9", 3),
        ("9", 4),
        ("10", 0),
        ("10", 1),
        ("10", 2),
    ]
    for r in records:
        assert list(r) == list(FIELDS)
        assert 0 < len(r["retrieved"]) <= 20
        assert all(isinstance(h["ids"], list) and h["score"] >= 0 for h in r["retrieved"])
        scores = [h["score"] for h in r["retrieved"]]
        assert scores == sorted(scores, reverse=True)
    by_key = {(r["conversation"], r["index"]): r for r in records}
    multi = by_key[("9", 1)]
    assert (multi["category"], multi["evidence"]) == (1, ["D2:1", "D2:3"])
    # recall@k agrees with the evidence ranks.
    for r in records:
        if r["evidence"]:
            ranks = r["evidence_rank"].values()
            found = sum(1 for rank in ranks if rank is not None and rank <= 10)
            assert r["recall@10"] == round(found / len(r["evidence"]), 4)
    # Category 5 is asked too; a question without evidence has no recall.
    assert by_key[("9", 4)]["category"] == 5
    assert by_key[("10", 1)]["recall@5"] is None
    assert by_key[("10", 1)]["evidence_rank"] == {}


def test_two_runs_write_the_same_file(data: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run(data, tmp_path / "home-a", first)
    run(data, tmp_path / "home-b", second)
    assert first.read_bytes() == second.read_bytes()
    assert diff(read_per_question(first), read_per_question(second))["better"] == []


@pytest.mark.parametrize("mode", ["turns", "observations"])
def test_the_old_figures_stay_and_the_new_ones_sit_beside_them(
    data: Path, tmp_path: Path, mode: str
) -> None:
    result = run(data, tmp_path / "home", tmp_path / "q.jsonl", mode)
    assert result["questions"] == 6  # categories 1-4 with evidence, as before
    old = result["recall"]["cairn"]["all"]
    four = result["metrics"]["categories_1_4"]
    assert four["turn"] == old  # the same questions and the same ranked lists
    assert four["questions"] == 6 and four["dropped_without_evidence"] == 1
    assert result["metrics"]["categories_1_5"]["questions"] == 7
    assert 0.0 <= four["nDCG@10"] <= 1.0
    names = {f"recall_{w}@{k}" for w in ("any", "all") for k in (1, 5, 10, 20)}
    assert set(four["session"]) == names
    # Six distinct evidence turns; in conversation 10 no observation points to D1:2.
    expected = 1.0 if mode == "turns" else round(5 / 6, 4)
    assert four["ceiling"] == {"evidence_turns_stored": expected, "best_recall": expected}
    assert result["ceiling"] == four["ceiling"]
    assert result["published"]["mempalace_dialog_R@10"]["questions"] == 8
    text = render(result)
    assert "categories_1_5: categories 1 multi-hop" in text
    assert f"ceiling ({mode}):" in text
    assert "hebb_session_recall_any@10" in text


def record(conversation: str, index: int, r10: float | None) -> dict[str, Any]:
    return {
        "conversation": conversation,
        "index": index,
        "category": 4,
        "question": f"q{index}",
        "evidence": ["D1:1"],
        "retrieved": [],
        "recall@5": r10,
        "recall@10": r10,
        "evidence_rank": {},
    }


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_diff_lists_better_and_worse_questions(tmp_path: Path) -> None:
    before = write_jsonl(
        tmp_path / "a.jsonl",
        [record("9", 0, 0.5), record("9", 1, 1.0), record("9", 2, 0.0), record("9", 3, None)],
    )
    after = write_jsonl(
        tmp_path / "b.jsonl",
        [record("9", 0, 1.0), record("9", 1, 0.5), record("9", 2, 0.0), record("9", 4, 1.0)],
    )
    result = diff(read_per_question(before), read_per_question(after))
    assert [(m["index"], m["before"], m["after"]) for m in result["better"]] == [(0, 0.5, 1.0)]
    assert [(m["index"], m["before"], m["after"]) for m in result["worse"]] == [(1, 1.0, 0.5)]
    assert (result["only_before"], result["only_after"]) == (["9#3"], ["9#4"])
    assert result["compared"] == 3
    assert "recall@10 better for 1, worse for 1" in render_diff(result)
    with pytest.raises(InvalidInput, match="recall@5 and recall@10"):
        diff({}, {}, 3)


@pytest.mark.parametrize(
    "content",
    ["not json\n", "[1]\n", '{"conversation": "9"}\n', json.dumps(record("9", True, 1.0)) + "\n"],
)
def test_diff_refuses_what_is_not_a_per_question_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidInput):
        read_per_question(path)


def test_a_repeated_question_is_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [record("9", 0, 1.0), record("9", 0, 0.0)])
    with pytest.raises(InvalidInput, match="repeats question 9#0"):
        read_per_question(path)


def test_the_cli_reads_locomo10_json_and_writes_and_diffs_per_question_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAIRN_EMBEDDER", "hashing")
    source = tmp_path / "locomo10.json"
    source.write_text(json.dumps([{"sample_id": "conv-9", **CONVERSATION}]), encoding="utf-8")
    out = tmp_path / "q.jsonl"
    runner = CliRunner()
    args = ["bench", "locomo", "--data", str(source), "--max-questions", "2"]
    ran = runner.invoke(main, [*args, "--per-question", str(out), "--json"])
    assert ran.exit_code == 0, ran.output
    parsed = json.loads([t for t in ran.output.splitlines() if t.startswith("{")][-1])
    assert parsed["conversations"] == ["9"]
    assert parsed["metrics"]["categories_1_4"]["questions"] == 2
    assert len(lines(out)) == 3  # two of categories 1-4, then the category-5 one
    same = runner.invoke(main, ["bench", "locomo-diff", str(out), str(out)])
    assert same.exit_code == 0, same.output
    assert "better for 0, worse for 0" in same.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n", encoding="utf-8")
    refused = runner.invoke(main, ["bench", "locomo-diff", str(out), str(bad)])
    assert refused.exit_code == 2
    assert refused.output.startswith("error:") and "line 1" in refused.output


dia = st.builds(lambda s, t: f"D{s}:{t}", st.integers(1, 3), st.integers(1, 3))
rows = st.lists(
    st.builds(
        lambda conv, index, cat, text, ev, found: Asked(
            conv, index, cat, text, tuple(ev), tuple(ev), tuple(found), (0.5,) * len(found), ()
        ),
        st.sampled_from(["2", "10", "conv-x"]),
        st.integers(0, 5),
        st.integers(1, 5),
        st.text(max_size=20),
        st.lists(dia, max_size=3, unique=True),
        st.lists(st.lists(dia, min_size=1, max_size=2).map(tuple), max_size=5),
    ),
    max_size=8,
    unique_by=lambda r: (r.conversation, r.index),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows)
def test_any_rows_round_trip_in_order(tmp_path: Path, asked: list[Asked]) -> None:
    path = tmp_path / "rows.jsonl"
    write_per_question(asked, path)
    read = read_per_question(path)
    assert set(read) == {(r.conversation, r.index) for r in asked}
    keys = [(r["conversation"], r["index"]) for r in lines(path)] if asked else []
    numeric = [k for k in keys if k[0].isdigit()]
    assert numeric == sorted(numeric, key=lambda k: (int(k[0]), k[1]))
    assert keys[: len(numeric)] == numeric  # numeric names first
    unchanged = diff(read, read)
    assert unchanged["better"] == unchanged["worse"] == []
