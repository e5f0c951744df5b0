"""Issue 19, tenth round: a fusion recipe per question type, chosen by leave-one-conversation-out
(docs/benchmarks.md, "Tenth round"). Not product code: a replay over the product's own ranking.

Run from the repository root, one heavy step at a time (`ask` stores the five conversations and
asks all 760 questions under each of 96 recipes: about 11 minutes on two shared cores, load 1-3;
`fit` and `ceiling` take seconds and re-read the saved table):

    export PYTHONPATH=src
    PY=.venv/bin/python
    EXP=docs/experiments/issue19-question-types.py
    $PY $EXP types --data ../shared/bench/locomo            # type x LoCoMo category counts
    $PY $EXP ask --data ../shared/bench/locomo --out /tmp/qtype-table.json
    $PY $EXP fit /tmp/qtype-table.json                      # the harness grid (48 recipes)
    $PY $EXP fit /tmp/qtype-table.json --grid wide          # lexical 0.15-0.45 as well (96)
    # variants looked at after the two above (so not clean held-out tests):
    $PY $EXP fit /tmp/qtype-table.json --grid wide --vary lexical_weight
    $PY $EXP fit /tmp/qtype-table.json --grid wide --vary lexical_weight --anchor shipped
    $PY $EXP ceiling /tmp/qtype-table.json [--grid wide]    # in-sample upper bounds

`ask` stores each conversation once, as `cairn bench locomo-fit` does (one scratch store, one
scope per conversation, turns mode), and asks every question with evidence through the
product's own `retrieve(..., cut=False)` under every recipe of the WIDE grid (the harness's
`GRID` with the lexical weight widened to 0.15 ... 0.45); it keeps each question's R@5 and
R@10 per recipe with its text and LoCoMo category. `fit` then, for each conversation held out:

1. chooses the global recipe on the four others (best mean R@5 + R@10, ties to the earlier
   recipe, the shipped one first): what `cairn bench locomo-fit` does;
2. classifies every question by its wording alone (`question_type`, below; LoCoMo's category
   is never read by it) and, for each type with at least `--min-train` questions among the
   four training conversations (20, fixed after the type counts, before any recall was seen),
   chooses the type's own recipe the same way on those questions only; a type with fewer
   keeps the global recipe;
3. scores the held-out conversation's questions, each under its type's recipe.

The five held-out results are pooled and printed beside the shipped `RECIPE` and the global
leave-one-out in the same table, per LoCoMo category, with each fold's choices, the in-sample
figure (types chosen on all five, scored on all five: not a figure to report) and a variant
whose fall-back threshold is itself chosen by an inner leave-one-conversation-out on the four
training conversations (from 10 / 20 / 40 / 80 / never).

`--vary lexical_weight` lets a type change only the lexical weight of the global recipe;
`--anchor shipped` makes the global recipe the shipped `RECIPE` instead of the fold's choice.
`ceiling` prints two in-sample bounds: a recipe per LoCoMo category (as if a classifier knew
the category) and the best recipe of each question (an oracle, biased high by the max).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cairn.bench.locomo import LocomoSource, ingest, scratch_cairn
from cairn.bench.locomo_data import CATEGORIES, load_conversations
from cairn.bench.locomo_fit import GRID, recipes
from cairn.bench.locomo_metrics import turn_recall
from cairn.config import Settings
from cairn.embeddings import make_embedder
from cairn.ranking.breadth import asks_for_many
from cairn.ranking.fusion import RECIPE
from cairn.ranking.recall import RecallQuery, retrieve
from cairn.scope import visible_scopes
from cairn.store.base import MemoryFilter

WIDE = {**GRID, "lexical_weight": (0.15, 0.2, 0.25, 0.3, 0.35, 0.45)}
MIN_TRAIN = 20  # fixed after the type counts, before any recall result was seen
THRESHOLDS = (10, 20, 40, 80, 10**9)  # for the nested variant; 10**9 = never per type

# question types ----------------------------------------------------------------------------
# From the wording only. Each rule reads as well on an agent's questions about a project
# ("Why did we drop Python 3.9?", "When did the migration land?", "Would moving to Postgres
# break the importer?", "What endpoints does the API expose?") as on LoCoMo's.
TYPES = ("guess", "time", "list", "reason", "fact")
_GUESS = re.compile(
    r"\b(?:would|wouldn't|might|could|likely|unlikely|probably|possibly|perhaps|based on)\b",
    re.IGNORECASE,
)
_TIME = re.compile(
    r"^\s*(?:when\b|since when\b|how long\b|(?:in\s+)?(?:what|which)\s+"
    r"(?:year|month|week|day|date|time|season)\b)",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"\b(?:both|in common|share|shared|how many|what are some|(?:what|which)\s+(?:kinds?|types?)"
    r"\s+of\s+\w+s)\b",
    re.IGNORECASE,
)
_REASON = re.compile(r"^\s*(?:why\b|how\s+(?:did|does|do|is|was|has|have|can)\b)", re.IGNORECASE)


def question_type(text: str) -> str:
    """guess: asks for an inference ("Would ...", "might", "likely"); time: asks when; list:
    asks for many things (a plural noun before the auxiliary, "both", "how many"); reason: why
    or how; fact: any other."""
    if _GUESS.search(text):
        return "guess"
    if _TIME.match(text):
        return "time"
    if asks_for_many(text) or _LIST.search(text):
        return "list"
    if _REASON.match(text):
        return "reason"
    return "fact"


# ask ---------------------------------------------------------------------------------------
def ask(data: Path, out: Path) -> None:
    source = LocomoSource(data)
    convs = source.load()
    candidates = recipes(WIDE)
    settings = Settings.from_env()
    embedder = make_embedder(settings)
    rows: list[dict[str, Any]] = []
    with scratch_cairn(settings, embedder, "cairn-qtype-") as mem:
        for conv in convs:
            started = time.monotonic()
            scope = f"project:locomo/{conv.name}"
            refs = ingest(mem, conv, scope, source.mode)
            filt = MemoryFilter(scopes=visible_scopes(scope))
            questions = [q for q in conv.questions if q.evidence]
            scores: list[list[tuple[float, float]]] = [[] for _ in questions]
            for recipe in candidates:
                for n, q in enumerate(questions):
                    query = RecallQuery(q.text, filt, 10, cut=False)
                    hits = retrieve(mem._ctx, query, recipe)
                    found = [refs.get(s.memory.ref, ()) for s in hits]
                    scores[n].append(
                        (turn_recall(found, q.evidence, 5), turn_recall(found, q.evidence, 10))
                    )
            rows += [
                {"conv": conv.name, "category": q.category, "text": q.text, "recall": s}
                for q, s in zip(questions, scores, strict=True)
            ]
            print(
                f"conversation {conv.name}: {len(questions)} questions x {len(candidates)} "
                f"recipes, {time.monotonic() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    knobs = [{name: asdict(r)[name] for name in WIDE} for r in candidates]
    out.write_text(json.dumps({"recipes": knobs, "questions": rows}))


# fit ---------------------------------------------------------------------------------------
Row = dict[str, Any]


def _objective(rows: Sequence[Row], index: int) -> float:
    return statistics.fmean(sum(r["recall"][index]) for r in rows) if rows else 0.0


def _best(rows: Sequence[Row], allowed: Sequence[int]) -> int:
    return max(allowed, key=lambda i: (_objective(rows, i), -i))


KNOBS: list[dict[str, float]] = []  # the table's recipes, set by `fit`
VARY: tuple[str, ...] = ()  # the constants a type may change; all of the grid's when empty
ANCHOR: list[int] = []  # with `--anchor shipped`: the shipped recipe, always the global one


def _siblings(allowed: Sequence[int], base: int) -> list[int]:
    """The allowed recipes that differ from `base` only in the constants of `VARY`."""
    if not VARY:
        return list(allowed)
    fixed = {n: v for n, v in KNOBS[base].items() if n not in VARY}
    return [i for i in allowed if all(KNOBS[i][n] == v for n, v in fixed.items())]


def choose(rows: Sequence[Row], allowed: Sequence[int], min_train: int) -> dict[str, int]:
    """The recipe per type chosen on `rows`: its own best with at least `min_train` questions,
    the global best otherwise ("*" holds the global one). With `VARY`, a type may change only
    those constants of the global recipe."""
    chosen = {"*": ANCHOR[0] if ANCHOR else _best(rows, allowed)}
    per_type = _siblings(allowed, chosen["*"])
    for kind in {r["type"] for r in rows}:
        own = [r for r in rows if r["type"] == kind]
        # the global recipe first among the type's candidates, so a tie keeps it
        ordered = [chosen["*"], *[i for i in per_type if i != chosen["*"]]]
        chosen[kind] = _best_ordered(own, ordered) if len(own) >= min_train else chosen["*"]
    return chosen


def _best_ordered(rows: Sequence[Row], ordered: Sequence[int]) -> int:
    """The best of `ordered` on `rows`; a tie falls to the earlier one."""
    return max(ordered, key=lambda i: (_objective(rows, i), -ordered.index(i)))


def _pair(values: Sequence[float]) -> tuple[float, float]:
    return (float(values[0]), float(values[1]))


def _score(rows: Sequence[Row], chosen: dict[str, int]) -> list[tuple[Row, tuple[float, float]]]:
    return [(r, _pair(r["recall"][chosen.get(r["type"], chosen["*"])])) for r in rows]


def _nested_threshold(train: Sequence[Row], convs: Sequence[str], allowed: Sequence[int]) -> int:
    """The fall-back threshold best by an inner leave-one-conversation-out on `train`."""

    def inner(threshold: int) -> float:
        scored = []
        for held in convs:
            rest = [r for r in train if r["conv"] != held]
            # scale the threshold to the inner training size (3 conversations instead of 4)
            chosen = choose(rest, allowed, round(threshold * 3 / 4))
            scored += _score([r for r in train if r["conv"] == held], chosen)
        return statistics.fmean(a + b for _, (a, b) in scored)

    return max(THRESHOLDS, key=lambda t: (inner(t), t))


def _pooled(scored: Sequence[tuple[Row, tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    groups: dict[str, list[tuple[float, float]]] = {"all": [s for _, s in scored]}
    for number, label in CATEGORIES.items():
        groups[label] = [s for r, s in scored if r["category"] == number]
    return {
        g: (statistics.fmean(a for a, _ in v), statistics.fmean(b for _, b in v))
        for g, v in groups.items()
        if v
    }


def _mean_text(values: Sequence[tuple[float, float]]) -> str:
    at5 = statistics.fmean(x for x, _ in values)
    at10 = statistics.fmean(y for _, y in values)
    return f"{at5:.3f} / {at10:.3f}"


def _knob_text(knobs: dict[str, float]) -> str:
    short = {
        "lexical_weight": "lex",
        "date_lift": "date",
        "other_speaker": "spk",
        "feedback_weight": "fb",
        "session_decay": "decay",
    }
    return " ".join(f"{short[k]} {v:g}" for k, v in knobs.items())


def fit(table_path: Path, grid: str, min_train: int, vary: tuple[str, ...], anchor: str) -> None:
    global VARY
    table = json.loads(table_path.read_text())
    knobs: list[dict[str, float]] = table["recipes"]
    KNOBS[:] = knobs
    VARY = vary
    rows: list[Row] = table["questions"]
    for r in rows:
        r["type"] = question_type(r["text"])
    want = GRID if grid == "harness" else WIDE
    allowed = [i for i, k in enumerate(knobs) if all(k[n] in want[n] for n in want)]
    shipped_knobs = {n: asdict(RECIPE)[n] for n in WIDE}
    shipped = knobs.index(shipped_knobs)
    ANCHOR[:] = [shipped] if anchor == "shipped" else []
    convs = list(dict.fromkeys(r["conv"] for r in rows))
    print(
        f"grid {grid}: {len(allowed)} recipes; fall-back under {min_train} training questions; "
        f"a type may change {', '.join(vary) or 'every constant'}; global recipe: "
        f"{'the shipped one' if ANCHOR else 'chosen by leave-one-out'}\n"
    )

    counts = Counter((r["type"], r["category"]) for r in rows)
    print("| type | " + " | ".join(CATEGORIES.values()) + " | all |")
    print("|---|" + "---|" * (len(CATEGORIES) + 1))
    for kind in TYPES:
        cells = [counts[(kind, c)] for c in CATEGORIES]
        print(f"| {kind} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    print()

    shipped_scored = _score(rows, {"*": shipped})
    global_scored: list[tuple[Row, tuple[float, float]]] = []
    typed_scored: list[tuple[Row, tuple[float, float]]] = []
    nested_scored: list[tuple[Row, tuple[float, float]]] = []
    folds = []
    for held in convs:
        train = [r for r in rows if r["conv"] != held]
        test = [r for r in rows if r["conv"] == held]
        chosen = choose(train, allowed, min_train)
        global_scored += _score(test, {"*": chosen["*"]})
        typed_scored += _score(test, chosen)
        others = [c for c in convs if c != held]
        threshold = _nested_threshold(train, others, allowed)
        nested_scored += _score(test, choose(train, allowed, threshold))
        sizes = Counter(r["type"] for r in train)
        folds.append(
            (
                held,
                chosen,
                sizes,
                threshold,
                _pooled(_score(test, chosen))["all"],
                _pooled(_score(test, {"*": shipped}))["all"],
            )
        )
    in_sample = _score(rows, choose(rows, allowed, round(min_train * 5 / 4)))

    columns = {
        "shipped RECIPE": _pooled(shipped_scored),
        "global LOO": _pooled(global_scored),
        "per type LOO": _pooled(typed_scored),
        "per type, nested threshold": _pooled(nested_scored),
        "per type in-sample": _pooled(in_sample),
    }
    print("| group | " + " | ".join(f"{c} R@5 / R@10" for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for group in columns["shipped RECIPE"]:
        texts = [f"{v[group][0]:.4f} / {v[group][1]:.4f}" for v in columns.values()]
        print(f"| {group} | " + " | ".join(texts) + " |")
    print()

    print("held-out questions by type, shipped -> per type LOO (R@5 / R@10):")
    for kind in TYPES:
        a = [s for r, s in shipped_scored if r["type"] == kind]
        b = [s for r, s in typed_scored if r["type"] == kind]
        if a:
            print(f"  {kind} ({len(a)}): {_mean_text(a)} -> {_mean_text(b)}")
    print()

    print("| held out | type (training questions) | chosen | held-out R@5 / R@10 (shipped) |")
    print("|---|---|---|---|")
    for held, chosen, sizes, threshold, score, base in folds:
        for kind in ("*", *TYPES):
            label = "global" if kind == "*" else f"{kind} ({sizes[kind]})"
            fallback = " (fall-back)" if kind != "*" and sizes[kind] < min_train else ""
            print(
                f"| {held} | {label} | {_knob_text(knobs[chosen[kind]])}{fallback} | "
                + (
                    f"{score[0]:.3f} / {score[1]:.3f} ({base[0]:.3f} / {base[1]:.3f})"
                    if kind == "*"
                    else ""
                )
                + " |"
            )
        print(f"| {held} | nested threshold | {threshold if threshold < 10**9 else 'never'} | |")
    print()
    all_chosen = choose(rows, allowed, round(min_train * 5 / 4))
    print("chosen on all five (in-sample):")
    for kind in ("*", *TYPES):
        print(f"  {kind}: {_knob_text(knobs[all_chosen[kind]])}")
    better = sum(
        1 for (_, a), (_, b) in zip(shipped_scored, typed_scored, strict=True) if b[1] > a[1]
    )
    worse = sum(
        1 for (_, a), (_, b) in zip(shipped_scored, typed_scored, strict=True) if b[1] < a[1]
    )
    print(f"\nR@10 per question, per type LOO against shipped: better {better}, worse {worse}")


def ceiling(table_path: Path, grid: str) -> None:
    """In-sample upper bounds (diagnostics, not figures to report): a recipe per LoCoMo
    category, as if a classifier knew it, and the best recipe of every single question."""
    table = json.loads(table_path.read_text())
    knobs: list[dict[str, float]] = table["recipes"]
    rows: list[Row] = table["questions"]
    want = GRID if grid == "harness" else WIDE
    allowed = [i for i, k in enumerate(knobs) if all(k[n] in want[n] for n in want)]
    shipped = knobs.index({n: asdict(RECIPE)[n] for n in WIDE})
    for r in rows:
        r["type"] = str(r["category"])
    by_category = choose(rows, allowed, 1)
    per_question = [(r, _pair(r["recall"][_best([r], allowed)])) for r in rows]
    columns = {
        "shipped": _pooled(_score(rows, {"*": shipped})),
        "a recipe per LoCoMo category": _pooled(_score(rows, by_category)),
        "a recipe per question": _pooled(per_question),
    }
    print(f"grid {grid}, in-sample on all five")
    print("| group | " + " | ".join(f"{c} R@5 / R@10" for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for group in columns["shipped"]:
        cells = [f"{v[group][0]:.4f} / {v[group][1]:.4f}" for v in columns.values()]
        print(f"| {group} | " + " | ".join(cells) + " |")
    for number, label in CATEGORIES.items():
        print(f"  {label}: {_knob_text(knobs[by_category[str(number)]])}")


def types(data: Path) -> None:
    rows = [
        (q.category, question_type(q.text))
        for conv in load_conversations(data)
        for q in conv.questions
        if q.evidence
    ]
    counts = Counter(rows)
    print("| type | " + " | ".join(CATEGORIES.values()) + " | all |")
    print("|---|" + "---|" * (len(CATEGORIES) + 1))
    for kind in TYPES:
        cells = [counts[(c, kind)] for c in CATEGORIES]
        print(f"| {kind} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("types")
    p.add_argument("--data", type=Path, required=True)
    p = sub.add_parser("ask")
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("ceiling")
    p.add_argument("table", type=Path)
    p.add_argument("--grid", choices=("harness", "wide"), default="harness")
    p = sub.add_parser("fit")
    p.add_argument("table", type=Path)
    p.add_argument("--grid", choices=("harness", "wide"), default="harness")
    p.add_argument("--min-train", type=int, default=MIN_TRAIN)
    p.add_argument(
        "--vary", default="", help="comma-separated constants a type may change (default: all)"
    )
    p.add_argument(
        "--anchor",
        choices=("loo", "shipped"),
        default="loo",
        help="the global recipe a type falls back to and varies: chosen per fold, or RECIPE",
    )
    args = parser.parse_args()
    if args.command == "types":
        types(args.data)
    elif args.command == "ceiling":
        ceiling(args.table, args.grid)
    elif args.command == "ask":
        ask(args.data, args.out)
    else:
        vary = tuple(v for v in args.vary.split(",") if v)
        fit(args.table, args.grid, args.min_train, vary, args.anchor)


if __name__ == "__main__":
    main()
