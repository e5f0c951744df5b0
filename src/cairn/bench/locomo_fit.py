"""`cairn bench locomo-fit`: the fusion's constants chosen by leave-one-conversation-out.

Tuning the ranking on the same conversations it is scored on overstates it: on five LoCoMo
conversations kept out of `../shared/`, the recipe tuned in-sample lost 4-5 points of R@10.
This bench makes the honest figure reproducible. Each conversation is stored once, exactly as
`cairn bench locomo` stores it, and every question is asked through the product's own ranking
(`cairn.ranking.recall.retrieve`, `cut=False`) once for every recipe of the grid: the same code
the product runs, with other constants. Then, for each conversation in turn, the recipe with the
best R@5 + R@10 on the questions of the *other* conversations is chosen and scored on the
held-out one. The held-out scores, pooled, are the figure to report; the recipe chosen on all
conversations is what `RECIPE` should hold.

The "before" figure is the same procedure restricted to the recipes without the newest
mechanism (`NEW_MECHANISMS`: the session breadth of list questions), i.e. the grid of the
constants that existed before it, so the two figures differ only by what it adds out of
sample.

Asking through `retrieve` counts no access, so no recipe's questions can move another's.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from cairn.bench.locomo import LocomoSource, ingest, scratch_cairn
from cairn.bench.locomo_data import CATEGORIES, Conversation
from cairn.bench.locomo_metrics import turn_recall
from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings import make_embedder
from cairn.embeddings.base import Embedder
from cairn.errors import InvalidInput
from cairn.ranking.fusion import RECIPE, FusionRecipe
from cairn.ranking.recall import RecallQuery, retrieve
from cairn.scope import visible_scopes
from cairn.store.base import MemoryFilter

FIT_KS = (5, 10)
# The constants re-chosen per fold: the ones that act at query time, so a store is ingested once.
# Each mechanism is on at one value or off: a finer grid would only tune closer to the five.
GRID: dict[str, tuple[float, ...]] = {
    "lexical_weight": (0.25, 0.3, 0.35),
    "date_lift": (1.0, 1.25),
    "other_speaker": (1.0, 0.8),
    "feedback_weight": (0.0, 0.2),
    "session_decay": (1.0, 0.9),
}
# The mechanism the "before" figure leaves out, with the value that turns it off: the breadth
# of list questions (cairn.ranking.breadth, off in RECIPE until this fit shows it carries over).
# The speaker multiplier and the dense feedback, the "after" of the previous round, are in both.
NEW_MECHANISMS = {"session_decay": 1.0}


@dataclass(frozen=True, slots=True)
class Scores:
    """R@5 and R@10 of every question of one conversation under one recipe."""

    categories: tuple[int, ...]
    recall: tuple[tuple[float, float], ...]


def recipes(grid: dict[str, tuple[float, ...]], base: FusionRecipe = RECIPE) -> list[FusionRecipe]:
    """Every combination of the grid's values, `base` for the other fields; `base` first when
    it is in the grid, so a tie falls to the shipped recipe."""
    names = list(grid)
    out = [replace(base, **_fields(names, values)) for values in _product(grid)]
    if base in out:
        out.remove(base)
        out.insert(0, base)
    return list(dict.fromkeys(out))


def _fields(names: Sequence[str], values: Sequence[float]) -> dict[str, Any]:
    return dict(zip(names, values, strict=True))


def _product(grid: dict[str, tuple[float, ...]]) -> list[tuple[float, ...]]:
    for name, values in grid.items():
        if not values:
            raise InvalidInput(f"the grid gives {name} no value; give it at least one.")
    return list(itertools.product(*grid.values()))


def fit_locomo(
    source: LocomoSource,
    *,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    grid: dict[str, tuple[float, ...]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Ask every question under every recipe, then choose and score by leave-one-out."""
    convs = source.load()
    if len(convs) < 2:
        raise InvalidInput("leave-one-out needs at least two conversations; give more.")
    candidates = recipes(GRID if grid is None else grid)
    base = settings or Settings.from_env()
    embedder = embedder or make_embedder(base)
    table: dict[str, list[Scores]] = {}
    with scratch_cairn(base, embedder, "cairn-locomo-fit-") as mem:
        for conv in convs:
            table[conv.name] = _ask_all(mem, conv, source, candidates)
            if progress is not None:
                progress(f"conversation {conv.name}: {len(candidates)} recipes asked")
    return summarise(table, candidates, source.mode)


def _ask_all(
    mem: Cairn,
    conv: Conversation,
    source: LocomoSource,
    candidates: Sequence[FusionRecipe],
) -> list[Scores]:
    scope = f"project:locomo/{conv.name}"
    refs = ingest(mem, conv, scope, source.mode)
    filt = MemoryFilter(scopes=visible_scopes(scope))
    questions = [q for q in conv.questions[: source.max_questions] if q.evidence]
    ctx = mem._ctx  # the bench asks the ranking itself, as `cairn bench locomo` reads candidates
    out = []
    for recipe in candidates:
        rows = []
        for q in questions:
            hits = retrieve(ctx, RecallQuery(q.text, filt, max(FIT_KS), cut=False), recipe)
            found = [refs.get(s.memory.ref, ()) for s in hits]
            rows.append((turn_recall(found, q.evidence, 5), turn_recall(found, q.evidence, 10)))
        out.append(Scores(tuple(q.category for q in questions), tuple(rows)))
    return out


def _pooled(rows: Sequence[tuple[int, tuple[float, float]]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[tuple[float, float]]] = {"all": [r for _, r in rows]}
    for number, label in CATEGORIES.items():
        picked = [r for category, r in rows if category == number]
        if picked:
            groups[label] = picked
    return {
        group: {
            f"R@{k}": round(statistics.fmean(r[i] for r in values), 4) for i, k in enumerate(FIT_KS)
        }
        for group, values in groups.items()
    }


def _rows(scores: Scores) -> list[tuple[int, tuple[float, float]]]:
    return list(zip(scores.categories, scores.recall, strict=True))


def _objective(table: dict[str, list[Scores]], names: Sequence[str], index: int) -> float:
    rows = [r for name in names for _, r in _rows(table[name][index])]
    return statistics.fmean(a + b for a, b in rows) if rows else 0.0


def leave_one_out(
    table: dict[str, list[Scores]], allowed: Sequence[int]
) -> tuple[list[tuple[str, int]], dict[str, dict[str, float]]]:
    """Per held-out conversation, the allowed recipe best on the others; the pooled held-out
    scores. Ties fall to the earlier recipe (the shipped one comes first)."""
    picks = []
    for held in table:
        others = [name for name in table if name != held]
        best = max(allowed, key=lambda i: (_objective(table, others, i), -i))
        picks.append((held, best))
    pooled = [row for held, best in picks for row in _rows(table[held][best])]
    return picks, _pooled(pooled)


def summarise(
    table: dict[str, list[Scores]], candidates: Sequence[FusionRecipe], mode: str
) -> dict[str, Any]:
    names = list(table)
    every = list(range(len(candidates)))
    before = [i for i, r in enumerate(candidates) if _without_new(r)] or every
    picks, held_out = leave_one_out(table, every)
    old_picks, old_held_out = leave_one_out(table, before)
    chosen = max(every, key=lambda i: (_objective(table, names, i), -i))
    shipped = candidates.index(RECIPE) if RECIPE in candidates else None
    return {
        "mode": mode,
        "conversations": names,
        "recipes": len(candidates),
        "held_out": held_out,
        "held_out_before": old_held_out,
        "folds": [_fold(held, candidates[i], table[held][i]) for held, i in picks],
        "folds_before": [_fold(held, candidates[i], table[held][i]) for held, i in old_picks],
        "chosen_on_all": _knobs(candidates[chosen]),
        "shipped_in_sample": None
        if shipped is None
        else _pooled([row for name in names for row in _rows(table[name][shipped])]),
    }


def _without_new(recipe: FusionRecipe) -> bool:
    return all(getattr(recipe, name) == off for name, off in NEW_MECHANISMS.items())


def _knobs(recipe: FusionRecipe) -> dict[str, float]:
    values = asdict(recipe)
    return {name: values[name] for name in GRID}


def _fold(held: str, recipe: FusionRecipe, scores: Scores) -> dict[str, Any]:
    return {"held_out": held, "chosen": _knobs(recipe), "score": _pooled(_rows(scores))["all"]}


def render_fit(result: dict[str, Any]) -> str:
    """The fit as Markdown: held-out R@5/R@10 before and after, per category, and the folds."""
    lines = [
        f"LoCoMo {result['mode']} mode, leave-one-conversation-out over "
        f"{len(result['conversations'])} conversations, {result['recipes']} recipes",
        "",
        "| group | before R@5 | before R@10 | held-out R@5 | held-out R@10 |",
        "|---|---|---|---|---|",
    ]
    after, before = result["held_out"], result["held_out_before"]
    for group, values in after.items():
        old = before.get(group, {})
        lines.append(
            f"| {group} | {old.get('R@5', float('nan')):.3f} | {old.get('R@10', float('nan')):.3f}"
            f" | {values['R@5']:.3f} | {values['R@10']:.3f} |"
        )
    lines += ["", "| held out | chosen on the others | R@5 | R@10 |", "|---|---|---|---|"]
    for fold in result["folds"]:
        knobs = ", ".join(f"{k} {v:g}" for k, v in fold["chosen"].items())
        lines.append(
            f"| {fold['held_out']} | {knobs} | {fold['score']['R@5']:.3f} | "
            f"{fold['score']['R@10']:.3f} |"
        )
    chosen = ", ".join(f"{k} {v:g}" for k, v in result["chosen_on_all"].items())
    lines += ["", f"chosen on all conversations: {chosen}"]
    shipped = result.get("shipped_in_sample")
    if shipped:
        lines.append(
            f"shipped recipe in-sample (not a figure to report): R@5 {shipped['all']['R@5']:.3f}, "
            f"R@10 {shipped['all']['R@10']:.3f}"
        )
    return "\n".join(lines)
