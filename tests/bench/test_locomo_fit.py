"""`cairn bench locomo-fit`: leave-one-conversation-out on hand-made tables and a small slice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.adapters.cli import main
from cairn.bench.locomo import LocomoSource
from cairn.bench.locomo_fit import (
    Scores,
    fit_locomo,
    leave_one_out,
    recipes,
    render_fit,
    summarise,
)
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import InvalidInput
from cairn.ranking.fusion import RECIPE

from .test_locomo_bench import CONVERSATION


def scores(*recall: tuple[float, float], category: int = 4) -> Scores:
    return Scores(tuple(category for _ in recall), tuple(recall))


def test_each_fold_is_chosen_on_the_other_conversations_only() -> None:
    # Recipe 1 wins on a and b, recipe 0 only on c: holding c out must still pick recipe 1,
    # and c is then scored with recipe 1's (worse) figures, not its own best.
    table = {
        "a": [scores((0.0, 0.0)), scores((1.0, 1.0))],
        "b": [scores((0.0, 0.0)), scores((1.0, 1.0))],
        "c": [scores((1.0, 1.0)), scores((0.5, 0.5))],
    }
    picks, pooled = leave_one_out(table, [0, 1])
    assert dict(picks) == {"a": 1, "b": 1, "c": 1}
    assert pooled["all"] == {
        "R@5": pytest.approx(5 / 6, abs=1e-4),
        "R@10": pytest.approx(5 / 6, abs=1e-4),
    }


def test_a_tie_falls_to_the_earlier_recipe_and_allowed_limits_the_choice() -> None:
    table = {"a": [scores((0.5, 0.5)), scores((0.5, 0.5)), scores((1.0, 1.0))]} | {
        "b": [scores((0.5, 0.5)), scores((0.5, 0.5)), scores((1.0, 1.0))]
    }
    picks, _ = leave_one_out(table, [0, 1])
    assert dict(picks) == {"a": 0, "b": 0}


def test_the_grid_lists_the_shipped_recipe_first_and_refuses_an_empty_axis() -> None:
    grid = {
        "lexical_weight": (0.25, RECIPE.lexical_weight),
        "other_speaker": (RECIPE.other_speaker,),
    }
    listed = recipes(grid)
    assert listed[0] == RECIPE and len(listed) == 2
    with pytest.raises(InvalidInput, match="no value"):
        recipes({"lexical_weight": ()})


def test_before_is_the_grid_without_the_new_mechanism() -> None:
    grid = {"session_decay": (1.0, 0.9), "feedback_weight": (0.0, 0.2)}
    listed = recipes(grid)
    # Only the recipe with the session breadth on is any good: "before" cannot reach it, while
    # the older mechanisms (feedback) stay in both.
    table = {
        name: [
            scores((1.0, 1.0))
            if r.session_decay == 0.9 and r.feedback_weight == 0.2
            else scores((0.0, 0.0))
            for r in listed
        ]
        for name in ("a", "b")
    }
    result = summarise(table, listed, "turns")
    assert result["held_out"]["all"] == {"R@5": 1.0, "R@10": 1.0}
    assert result["held_out_before"]["all"] == {"R@5": 0.0, "R@10": 0.0}
    assert all(f["chosen"]["session_decay"] == 1.0 for f in result["folds_before"])
    assert {f["chosen"]["feedback_weight"] for f in result["folds_before"]} <= {0.0, 0.2}
    assert "| all | 0.000 | 0.000 | 1.000 | 1.000 |" in render_fit(result)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    for name in ("7", "8"):
        (folder / f"{name}.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return folder


def test_the_fit_runs_the_product_ranking_on_every_recipe(data: Path, tmp_path: Path) -> None:
    settings = Settings.from_env().with_overrides(home=tmp_path / "home")
    grid = {"other_speaker": (1.0, 0.8), "session_decay": (1.0, 0.9)}
    result = fit_locomo(
        LocomoSource(data), embedder=HashingEmbedder(), settings=settings, grid=grid
    )
    assert result["conversations"] == ["7", "8"] and result["recipes"] == 4
    assert [f["held_out"] for f in result["folds"]] == ["7", "8"]
    # Four answerable questions per conversation; the tiny conversations are easy.
    assert 0.5 <= result["held_out"]["all"]["R@10"] <= 1.0
    assert set(result["held_out"]) >= {"all", "single-hop", "multi-hop"}
    assert "held-out R@10" in render_fit(result)


def test_one_conversation_or_a_bad_mode_is_refused(data: Path, tmp_path: Path) -> None:
    settings = Settings.from_env().with_overrides(home=tmp_path / "home")
    with pytest.raises(InvalidInput, match="at least two"):
        fit_locomo(
            LocomoSource(data, conversations=["7"]), embedder=HashingEmbedder(), settings=settings
        )
    with pytest.raises(InvalidInput, match="mode"):
        fit_locomo(LocomoSource(data, "summaries"), embedder=HashingEmbedder(), settings=settings)


def test_the_cli_says_what_was_wrong_in_one_line(data: Path) -> None:
    result = CliRunner().invoke(
        main, ["bench", "locomo-fit", "--data", str(data), "--conversation", "7"]
    )
    assert result.exit_code == 2
    assert "error:" in result.output and "at least two" in result.output
    assert "Traceback" not in result.output
    bad = CliRunner().invoke(
        main, ["bench", "locomo-fit", "--data", str(data), "--max-questions", "-1"]
    )
    assert bad.exit_code == 2 and "Traceback" not in bad.output
