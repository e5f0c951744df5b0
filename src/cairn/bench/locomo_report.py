"""One record per LoCoMo question asked, and the labelled metric groups built from them.

The bench's original figures (`recall`: categories 1-4 with evidence, turn-level R@k) stay as
they were; these groups add what peers publish, each saying exactly what it counts: which
categories, how many questions from how many conversations, and how many questions were
dropped for having no evidence.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cairn.bench.locomo_metrics import ndcg, reachable_share, session_recall, turn_recall

KS = (1, 5, 10, 20)
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
GROUPS = {"categories_1_4": (1, 2, 3, 4), "categories_1_5": (1, 2, 3, 4, 5)}


@dataclass(frozen=True, slots=True)
class Asked:
    """A question and what the cairn ranking returned for it.

    `found` holds the dia_ids of each returned memory, best first (at most max(KS)), with
    `scores` beside them; `listed` is the evidence exactly as the data file lists it (peers
    score that raw list); `stored` the evidence ids some stored memory points to."""

    conversation: str
    index: int
    category: int
    question: str
    evidence: tuple[str, ...]
    listed: tuple[str, ...]
    found: tuple[tuple[str, ...], ...]
    scores: tuple[float, ...]
    stored: tuple[str, ...]


def groups(rows: Sequence[Asked]) -> dict[str, dict[str, Any]]:
    """The labelled groups (categories 1-4, and 1-5 with the adversarial category)."""
    return {name: _group(rows, cats) for name, cats in GROUPS.items()}


def _group(rows: Sequence[Asked], categories: tuple[int, ...]) -> dict[str, Any]:
    inside = [r for r in rows if r.category in categories]
    scored = [r for r in inside if r.evidence]
    dropped = len(inside) - len(scored)
    conversations = len({r.conversation for r in rows})
    names = ", ".join(f"{c} {CATEGORY_NAMES[c]}" for c in categories)
    counts = (
        f"categories {names}; {len(scored)} questions with evidence from {conversations} "
        f"conversation{'s' if conversations != 1 else ''}; {dropped} questions without "
        "evidence dropped"
    )
    out: dict[str, Any] = {
        "counts": counts,
        "categories": list(categories),
        "questions": len(scored),
        "conversations": conversations,
        "dropped_without_evidence": dropped,
    }
    if not scored:
        return out

    def mean(values: list[float]) -> float:
        return round(statistics.fmean(values), 4)

    out["turn"] = {
        f"R@{k}": mean([turn_recall(r.found, r.evidence, k) for r in scored]) for k in KS
    }
    session: dict[str, float] = {}
    for k in KS:
        pairs = [session_recall(r.found, r.evidence, k) for r in scored]
        session[f"recall_any@{k}"] = mean([any_ for any_, _ in pairs])
        session[f"recall_all@{k}"] = mean([all_ for _, all_ in pairs])
    out["session"] = session
    out["nDCG@10"] = mean([ndcg(r.found, r.evidence, 10) for r in scored])
    out["ceiling"] = ceiling(scored)
    return out


def ceiling(rows: Sequence[Asked]) -> dict[str, float | None]:
    """What no ranking can beat: `evidence_turns_stored` is the share of the distinct evidence
    turns some stored memory points to (in `observations` mode, that any observation points
    to); `best_recall` the mean over questions of their share of such turns, the highest
    R@k any ranking of the same store could score."""
    if not rows:
        return {"evidence_turns_stored": None, "best_recall": None}
    turns = {(r.conversation, d) for r in rows for d in r.evidence}
    stored = {(r.conversation, d) for r in rows for d in r.stored}
    best = statistics.fmean(reachable_share(set(r.stored), r.evidence) for r in rows)
    return {
        "evidence_turns_stored": round(len(turns & stored) / len(turns), 4),
        "best_recall": round(best, 4),
    }


def render_groups(result: dict[str, Any]) -> list[str]:
    """The labelled groups as Markdown: turn level, session level, nDCG and the ceiling."""
    metrics = result.get("metrics") or {}
    lines = ["", "Labelled groups (cairn ranking):"]
    for name, group in metrics.items():
        lines.append(f"- {name}: {group['counts']}")
    lines += [
        "",
        "| group | R@1 | R@5 | R@10 | R@20 | nDCG@10 | ceiling |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, group in metrics.items():
        if "turn" in group:
            t = group["turn"]
            lines.append(
                f"| {name} | {t['R@1']:.3f} | {t['R@5']:.3f} | {t['R@10']:.3f} | "
                f"{t['R@20']:.3f} | {group['nDCG@10']:.3f} | "
                f"{group['ceiling']['best_recall']:.3f} |"
            )
    header = " | ".join(f"any@{k} | all@{k}" for k in KS)
    lines += ["", f"| group (session level) | {header} |", "|---" * (1 + 2 * len(KS)) + "|"]
    for name, group in metrics.items():
        if "session" in group:
            s = group["session"]
            cells = " | ".join(
                f"{s[f'recall_any@{k}']:.3f} | {s[f'recall_all@{k}']:.3f}" for k in KS
            )
            lines.append(f"| {name} | {cells} |")
    return lines
