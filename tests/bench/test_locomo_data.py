"""The LoCoMo loader on both layouts (our per-conversation files and locomo10.json), and on
hostile files."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.bench.locomo_data import load_conversations, parse_session_date
from cairn.errors import InvalidInput

TURNS_1 = [
    {"speaker": "Joanna", "dia_id": "D1:1", "text": "I made coconut milk ice cream!"},
    {"speaker": "Nate", "dia_id": "D1:2", "text": "Look at my turtles."},
]
TURNS_2 = [{"speaker": "Nate", "dia_id": "D2:1", "text": "I won a Street Fighter tournament."}]
OBSERVATION_1 = {"Joanna": [["Joanna made coconut milk ice cream.", "D1:1"]]}
OBSERVATION_2 = {"Nate": [["Nate won a tournament.", ["D2:1"]]]}
QA = [
    {"question": "What ice cream did Joanna make?", "evidence": ["D1:1"], "category": 4},
    {"question": "What does Nate keep?", "evidence": [], "category": 3},
    {"question": "What did Joanna win?", "evidence": ["D2:1"], "category": 5},
    {"question": "Which game did Nate win?", "evidence": ["D1:2; D2:1"], "category": 1},
]
SESSIONS = {
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": TURNS_1,
    "session_2_date_time": "10:37 am on 27 June, 2023",
    "session_2": TURNS_2,
}
# ../shared/bench/locomo/7.json: one conversation, observations beside the sessions.
SHARED = {
    "speaker_a": "Joanna",
    "speaker_b": "Nate",
    **SESSIONS,
    "session_1_observation": OBSERVATION_1,
    "session_2_observation": OBSERVATION_2,
    "qa": QA,
}
# locomo10.json: a list of samples, the sessions under `conversation`, the observations
# under `observation`.
SAMPLE = {
    "sample_id": "conv-7",
    "conversation": {"speaker_a": "Joanna", "speaker_b": "Nate", **SESSIONS},
    "observation": {
        "session_1_observation": OBSERVATION_1,
        "session_2_observation": OBSERVATION_2,
    },
    "session_summary": {"session_1_summary": "They talk."},
    "qa": QA,
}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_both_layouts_load_the_same_conversation(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    write(shared / "7.json", SHARED)
    full = write(tmp_path / "locomo10.json", [SAMPLE, {**SAMPLE, "sample_id": "conv-8"}])
    (one,) = load_conversations(shared)
    seven, eight = load_conversations(full)
    assert (one.name, seven.name, eight.name) == ("7", "7", "8")
    assert one == seven
    assert [s.number for s in one.sessions] == [1, 2]
    assert one.sessions[1].observations == (("Nate won a tournament.", ("D2:1",)),)
    # The bench's own questions: categories 1-4 with evidence, in file order.
    assert [(q.index, q.category, q.evidence) for q in one.questions] == [
        (0, 4, ("D1:1",)),
        (3, 1, ("D1:2", "D2:1")),
    ]
    assert one.questions[1].listed == ("D1:2; D2:1",)
    # The rest: no evidence, and category 5.
    assert [(q.index, q.category) for q in one.others] == [(1, 3), (2, 5)]


def test_a_folder_holding_locomo10_json_and_only_filters(tmp_path: Path) -> None:
    write(tmp_path / "locomo10.json", [SAMPLE, {**SAMPLE, "sample_id": "conv-8"}])
    assert [c.name for c in load_conversations(tmp_path)] == ["7", "8"]
    assert [c.name for c in load_conversations(tmp_path, ["8"])] == ["8"]


def test_a_conversation_given_twice_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "7.json", SHARED)
    write(tmp_path / "locomo10.json", [SAMPLE])
    with pytest.raises(InvalidInput, match="conversation 7 appears twice"):
        load_conversations(tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read"),
        ("[1, 2]", "neither a conversation nor a list"),
        ('"text"', "neither a conversation nor a list"),
        ('{"conversation": [1]}', "is not an object"),
        ('{"qa": [{"question": "q", "category": "x"}]}', "bad category"),
        ('{"qa": [{"question": "q", "category": Infinity}]}', "bad category"),
    ],
)
def test_hostile_files_are_refused_with_a_reason(
    tmp_path: Path, content: str, message: str
) -> None:
    (tmp_path / "x.json").write_text(content, encoding="utf-8")
    with pytest.raises(InvalidInput, match=message):
        load_conversations(tmp_path)


def test_an_empty_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"no LoCoMo \.json files"):
        load_conversations(tmp_path)


def test_malformed_turns_observations_and_questions_are_skipped(tmp_path: Path) -> None:
    data = {
        "session_1": [{"dia_id": "D1:1"}, "turn", {"speaker": "A", "dia_id": "D1:2", "text": "x"}],
        "session_1_observation": {"A": [["only a fact"], "junk", ["fact", "D1:2"]]},
        "qa": [
            {"category": 4, "evidence": ["D1:2"]},
            "junk",
            {"question": "q?", "evidence": "D1:2"},
        ],
    }
    (conv,) = load_conversations(write(tmp_path / "9.json", data))
    assert [t["dia_id"] for t in conv.sessions[0].turns] == ["D1:2"]
    assert conv.sessions[0].observations == (("fact", ("D1:2",)),)
    # The question with no text is skipped; a string of evidence is one entry.
    assert [(q.index, q.evidence) for q in conv.others] == [(2, ("D1:2",))]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["qa", "session_1", "conversation", "observation", "category", "x"])
            | st.text(max_size=6),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(json_values)
def test_any_json_loads_or_is_refused_with_invalid_input(tmp_path: Path, value: Any) -> None:
    path = write(tmp_path / "h.json", value)
    with contextlib.suppress(InvalidInput):
        load_conversations(path)


questions = st.fixed_dictionaries(
    {"question": json_values, "category": json_values, "evidence": json_values}
)
turns = st.fixed_dictionaries({"speaker": json_values, "dia_id": json_values, "text": json_values})
shaped = st.fixed_dictionaries(
    {
        "session_1": st.lists(turns | json_values, max_size=3),
        "session_1_date_time": json_values,
        "session_1_observation": json_values | st.dictionaries(st.text(max_size=3), json_values),
        "observation": json_values,
        "qa": st.lists(questions | json_values, max_size=3),
    }
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shaped, st.booleans())
def test_conversation_shaped_junk_loads_or_is_refused(
    tmp_path: Path, value: dict[str, Any], as_list: bool
) -> None:
    path = write(tmp_path / "h.json", [{"sample_id": "conv-1", **value}] if as_list else value)
    try:
        convs = load_conversations(path)
    except InvalidInput:
        return
    for q in convs[0].questions:
        assert q.category in (1, 2, 3, 4) and q.evidence


@pytest.mark.parametrize("text", ["1:56 pm on 31 February, 2023", "1:75 pm on 8 May, 2023", ""])
def test_a_date_that_names_no_moment_is_none(text: str) -> None:
    assert parse_session_date(text) is None


date_like = st.builds(
    lambda h, m, half, d, month, y: f"{h}:{m:02d} {half} on {d} {month}, {y:04d}",
    st.integers(0, 99),
    st.integers(0, 99),
    st.sampled_from(["am", "pm", "PM"]),
    st.integers(0, 99),
    st.sampled_from(["May", "February", "Sept", "Smarch"]),
    st.integers(0, 9999),
)


@given(st.text(max_size=40) | date_like)
def test_any_date_text_parses_or_is_none(text: str) -> None:
    when = parse_session_date(text)
    assert when is None or when.tzinfo is not None
