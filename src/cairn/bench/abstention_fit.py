"""Choosing the gate's constants by leave-one-conversation-out (`cairn bench abstention --fit`).

The abstention bench records, for every question in every store, what the gate reads of each
candidate that survives the relative cut (cosine, the query terms it holds, and the terms'
document frequencies). Any gate (cairn.ranking.gate.Gate) can then be replayed on those records
without asking again. For each conversation in turn, the gate is chosen on the questions of the
other four: among the grid (`gates`) meeting the targets at every store size on them, the
one with the fewest errors (answerable questions left empty plus absent-topic questions
answered); it is then scored on the held-out conversation. The held-out scores, pooled, are
the figure to report; the setting chosen on all five is what `GATE` holds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.bench.abstention import TARGET_ABSENT_EMPTY, TARGET_ANSWERABLE_MISS, Outcome
from cairn.ranking.gate import GATE, Gate, gate_idf

ALONE_COSINES = [round(0.25 + 0.025 * i, 3) for i in range(11)]
MIN_COSINES = [round(0.10 + 0.025 * i, 3) for i in range(13)]
MIN_COVERAGES = [round(0.3 + 0.1 * i, 2) for i in range(8)]
IDF_MIN_DOCS = [1, 50, 200]
PER_DECADE = [0.0, 0.02, 0.04, 0.06, 0.08]
STALE_MIN_COVERAGES = [round(0.1 + 0.05 * i, 2) for i in range(11)]

Flags = npt.NDArray[np.bool_]


class Replay:
    """The recorded candidates of many outcomes, flattened for fast replay of a gate."""

    def __init__(self, outcomes: Sequence[Outcome]) -> None:
        self.outcomes = list(outcomes)
        self.owner = np.array(
            [n for n, o in enumerate(self.outcomes) for _ in o.candidates], dtype=np.int64
        )
        self.cosine = np.array([c["cosine"] for o in self.outcomes for c in o.candidates])
        self.overlap = np.array([bool(c["held"]) for o in self.outcomes for c in o.candidates])
        self.decades = np.array(
            [math.log10(max(1, o.doc_count)) for o in self.outcomes for _ in o.candidates]
        )
        self._coverage: dict[int, npt.NDArray[np.float64]] = {}

    def coverage(self, min_docs: int) -> npt.NDArray[np.float64]:
        if min_docs not in self._coverage:
            values = [
                _coverage(o, c["held"], min_docs) for o in self.outcomes for c in o.candidates
            ]
            self._coverage[min_docs] = np.array(values, dtype=np.float64)
        return self._coverage[min_docs]

    def answered_stale(self, gate: Gate) -> Flags:
        """Per outcome: whether a keyword match would pass if no vector were the current
        embedder's (the gate then reads coverage alone, cairn.ranking.gate.passes)."""
        return np.array(
            [
                any(
                    held and _coverage(o, held, gate.idf_min_docs) >= gate.stale_min_coverage
                    for held in o.keyword_held
                )
                for o in self.outcomes
            ],
            dtype=bool,
        )

    def answered(self, gate: Gate) -> Flags:
        """Per outcome: whether any recorded candidate passes `gate`."""
        coverage = self.coverage(gate.idf_min_docs)
        lift = gate.per_decade * self.decades
        close = self.cosine >= gate.min_cosine + lift
        ok = (self.cosine >= gate.alone_cosine + lift) | (
            self.overlap & (close | (coverage >= gate.min_coverage))
        )
        counts = np.bincount(self.owner[ok], minlength=len(self.outcomes))
        answered: Flags = counts > 0
        return answered


def _coverage(outcome: Outcome, held: Sequence[str], min_docs: int) -> float:
    idf = {t: gate_idf(outcome.doc_count, df, min_docs) for t, df in outcome.terms.items()}
    total = sum(idf.values())
    return sum(idf[t] for t in held if t in idf) / total if total > 0 else 0.0


def gates() -> list[Gate]:
    out = []
    for alone, min_cos, min_cov, docs, decade in itertools.product(
        ALONE_COSINES, MIN_COSINES, MIN_COVERAGES, IDF_MIN_DOCS, PER_DECADE
    ):
        if min_cos <= alone:
            out.append(
                replace(
                    GATE,
                    alone_cosine=alone,
                    min_cosine=min_cos,
                    min_coverage=min_cov,
                    idf_min_docs=docs,
                    per_decade=decade,
                )
            )
    return out


def rates(outcomes: Sequence[Outcome], answered: Flags, mask: Flags) -> dict[int, Any]:
    """Per size, over the outcomes in `mask`: (absent questions left empty, answerable ones
    left empty, how many of each)."""
    out: dict[int, Any] = {}
    for size, absent, answerable in _groups(outcomes, mask):
        out[size] = (
            float(np.mean(~answered[absent])) if absent.any() else math.nan,
            float(np.mean(~answered[answerable])) if answerable.any() else math.nan,
            int(absent.sum()),
            int(answerable.sum()),
        )
    return out


def _groups(outcomes: Sequence[Outcome], mask: Flags) -> list[tuple[int, Flags, Flags]]:
    sizes = np.array([o.size for o in outcomes])
    absent = np.array([o.absent for o in outcomes], dtype=bool)
    return [
        (int(size), mask & absent & (sizes == size), mask & ~absent & (sizes == size))
        for size in sorted(set(sizes[mask].tolist()))
    ]


def choose(
    outcomes: Sequence[Outcome],
    table: Flags,
    mask: Flags,
    grid: Sequence[Gate],
    miss_target: float = TARGET_ANSWERABLE_MISS,
) -> Gate:
    """The gate with the fewest errors among those meeting the targets at every size (or, if
    none does, the one missing them by the least). `table[g, n]`: gate g answers outcome n.
    `miss_target` 1.0 holds only the absent-topic target (keywords alone cannot meet both)."""
    violation = np.zeros(len(grid))
    errors = np.zeros(len(grid))
    for _, absent, answerable in _groups(outcomes, mask):
        empty = 1.0 - table[:, absent].mean(axis=1) if absent.any() else np.ones(len(grid))
        miss = 1.0 - table[:, answerable].mean(axis=1) if answerable.any() else np.zeros(len(grid))
        short = np.maximum(0.0, TARGET_ABSENT_EMPTY - empty)
        violation = np.maximum(violation, short + np.maximum(0.0, miss - miss_target))
        errors += (1.0 - empty) + miss
    best = int(np.lexsort((errors, violation))[0])
    return grid[best]


def leave_one_out(
    outcomes: Sequence[Outcome], grid: Sequence[Gate] | None = None
) -> dict[str, Any]:
    """Held-out rates per size, the gate of each fold, and the gate chosen on everything."""
    replay = Replay(outcomes)
    grid = list(grid) if grid is not None else gates()
    table = np.stack([replay.answered(gate) for gate in grid])
    names = sorted({o.conversation for o in outcomes})
    conversation = np.array([o.conversation for o in outcomes])
    held_out = np.zeros(len(outcomes), dtype=bool)
    chosen: dict[str, dict[str, Any]] = {}
    for name in names:
        gate = choose(outcomes, table, conversation != name, grid)
        chosen[name] = asdict(gate)
        test = conversation == name
        held_out[test] = replay.answered(gate)[test]
    everything = np.ones(len(outcomes), dtype=bool)
    final = choose(outcomes, table, everything, grid)
    stale_grid = [replace(final, stale_min_coverage=floor) for floor in STALE_MIN_COVERAGES]
    stale_table = np.stack([replay.answered_stale(gate) for gate in stale_grid])
    stale_held_out = np.zeros(len(outcomes), dtype=bool)
    for name in names:
        gate = choose(outcomes, stale_table, conversation != name, stale_grid, miss_target=1.0)
        chosen[name]["stale_min_coverage"] = gate.stale_min_coverage
        test = conversation == name
        stale_held_out[test] = replay.answered_stale(gate)[test]
    stale_final = choose(outcomes, stale_table, everything, stale_grid, miss_target=1.0)
    return {
        "held_out": _table(rates(outcomes, held_out, everything)),
        "chosen_per_fold": chosen,
        "chosen_on_all": asdict(final),
        "in_sample": _table(rates(outcomes, replay.answered(final), everything)),
        "current_gate": _table(rates(outcomes, replay.answered(GATE), everything)),
        # In a store whose every vector awaits `cairn reindex`: the floor on coverage alone.
        "stale_min_coverage_on_all": stale_final.stale_min_coverage,
        "all_stale_held_out": _table(rates(outcomes, stale_held_out, everything)),
        "all_stale_current_gate": _table(rates(outcomes, replay.answered_stale(GATE), everything)),
    }


def _table(per_size: dict[int, Any]) -> list[dict[str, Any]]:
    return [
        {
            "size": size,
            "absent": n_absent,
            "absent_empty": round(absent, 4),
            "answerable": n_answerable,
            "answerable_miss": round(miss, 4),
        }
        for size, (absent, miss, n_absent, n_answerable) in per_size.items()
    ]
