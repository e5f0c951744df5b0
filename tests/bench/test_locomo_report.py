"""The labelled metric groups, the ceiling, and peers' scoring rules, on hand-made records."""

from __future__ import annotations

import math

import pytest

from cairn.bench.locomo_published import (
    hebb_session_any,
    mempalace_session,
    mempalace_turn,
    published,
    ranked_sessions,
)
from cairn.bench.locomo_report import Asked, ceiling, groups, render_groups


def asked(
    category: int,
    evidence: tuple[str, ...],
    found: list[tuple[str, ...]],
    *,
    conversation: str = "7",
    index: int = 0,
    listed: tuple[str, ...] | None = None,
    stored: tuple[str, ...] | None = None,
) -> Asked:
    return Asked(
        conversation=conversation,
        index=index,
        category=category,
        question=f"question {index}",
        evidence=evidence,
        listed=evidence if listed is None else listed,
        found=tuple(found),
        scores=tuple(1.0 / (i + 1) for i in range(len(found))),
        stored=evidence if stored is None else stored,
    )


ROWS = [
    # single-hop, found at rank 1
    asked(4, ("D1:1",), [("D1:1",), ("D2:1",)], index=0),
    # multi-hop over sessions 1 and 3: D1:2 at rank 2, D3:1 not found
    asked(1, ("D1:2", "D3:1"), [("D2:2",), ("D1:2",)], index=1, stored=("D1:2",)),
    # adversarial, evidence at rank 1
    asked(5, ("D2:2",), [("D2:2",)], index=2),
    # open-domain with no evidence: dropped from both groups
    asked(3, (), [("D1:1",)], index=3),
]


def test_groups_with_and_without_category_5_say_what_they_count() -> None:
    result = groups(ROWS)
    four, five = result["categories_1_4"], result["categories_1_5"]
    assert four["categories"] == [1, 2, 3, 4] and five["categories"] == [1, 2, 3, 4, 5]
    assert (four["questions"], five["questions"]) == (2, 3)
    assert four["dropped_without_evidence"] == five["dropped_without_evidence"] == 1
    assert four["conversations"] == 1
    assert four["counts"] == (
        "categories 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 2 questions with "
        "evidence from 1 conversation; 1 questions without evidence dropped"
    )
    assert "5 adversarial; 3 questions" in five["counts"]


def test_group_values_by_hand() -> None:
    four = groups(ROWS)["categories_1_4"]
    # R@1: (1 + 0) / 2; R@5: (1 + 0.5) / 2.
    assert four["turn"] == {"R@1": 0.5, "R@5": 0.75, "R@10": 0.75, "R@20": 0.75}
    # Multi-hop: session 1 at rank 2, session 3 never -> any from k=5, never all.
    assert four["session"]["recall_any@1"] == 0.5
    assert four["session"]["recall_any@5"] == 1.0
    assert four["session"]["recall_all@5"] == 0.5
    multi = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert four["nDCG@10"] == round((1.0 + multi) / 2, 4)
    assert four["ceiling"] == {"evidence_turns_stored": round(2 / 3, 4), "best_recall": 0.75}
    five = groups(ROWS)["categories_1_5"]
    assert five["turn"]["R@1"] == round(2 / 3, 4)


def test_a_group_with_nothing_to_score_has_only_its_label() -> None:
    result = groups([asked(3, (), [("D1:1",)])])
    assert result["categories_1_4"]["questions"] == 0
    assert "turn" not in result["categories_1_4"]
    assert ceiling([]) == {"evidence_turns_stored": None, "best_recall": None}


def test_the_ceiling_counts_each_conversations_turns_apart() -> None:
    rows = [
        asked(4, ("D1:1",), [], conversation="1", stored=()),
        asked(4, ("D1:1",), [], conversation="2"),
    ]
    assert ceiling(rows) == {"evidence_turns_stored": 0.5, "best_recall": 0.5}


def test_groups_render_as_tables() -> None:
    text = "\n".join(render_groups({"metrics": groups(ROWS)}))
    assert "| categories_1_4 | 0.500 | 0.750 | 0.750 | 0.750 |" in text
    assert "any@10 | all@10" in text


def test_mempalace_scores_the_raw_evidence_list() -> None:
    # 'D8:6; D9:17' is one entry to MemPalace: it never matches a dia_id.
    row = asked(1, ("D8:6", "D9:17"), [("D8:6",), ("D9:17",)], listed=("D8:6; D9:17",))
    assert mempalace_turn(row) == 0.0
    assert mempalace_turn(asked(4, ("D1:1",), [("D1:1",)], listed=("D1:1", "D1:1"))) == 1.0
    # No evidence scores 1.0; top 10 only.
    assert mempalace_turn(asked(3, (), [])) == 1.0
    late = asked(4, ("D1:1",), [("D9:9",)] * 10 + [("D1:1",)])
    assert mempalace_turn(late) == 0.0


def test_sessions_rank_by_their_first_memory() -> None:
    found = [("D3:1",), ("D1:1",), ("D3:2",), ("D12:1", "D2:1")]
    assert ranked_sessions(found) == ["3", "1", "12", "2"]
    row = asked(1, ("D2:5", "D3:9"), found)
    assert mempalace_session(row, 2) == 0.5
    assert mempalace_session(row, 10) == 1.0
    assert mempalace_session(asked(3, (), found)) == 1.0


def test_hebb_counts_questions_with_a_parseable_entry_and_any_session() -> None:
    row = asked(1, ("D1:1", "D5:5"), [("D5:5",)])
    assert hebb_session_any(row) == 1.0
    assert hebb_session_any(asked(1, ("D1:1",), [("D2:1",)])) == 0.0
    odd = asked(1, ("D8:6", "D9:17"), [("D8:6",)], listed=("D8:6; D9:17",))
    figures = published([row, odd])
    assert figures["hebb_session_recall_any@10"]["questions"] == 1  # `odd` has no parseable entry
    assert figures["hebb_session_recall_any@10"]["value"] == 1.0
    assert figures["mempalace_dialog_R@10"]["questions"] == 2
    assert figures["mempalace_dialog_R@10"]["value"] == pytest.approx(0.25)
    assert published([]) == {}
