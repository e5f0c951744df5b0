"""cairn's LoCoMo figures scored exactly the way peers score theirs.

Each function reproduces one published scoring rule (the source code is cited) on cairn's own
ranked lists, so the figure sits beside the peer's with the same definition. Only the scoring
is reproduced: the retrieval is cairn's, and the conversations are those the bench was given
(the peers ran all ten LoCoMo conversations).

- MemPalace, `benchmarks/locomo_bench.py` (`compute_retrieval_recall`, granularity `dialog`):
  every question of every category; evidence is the raw `evidence` list (an entry such as
  `'D8:6; D9:17'` is not split, so it never matches); recall is the share of those entries
  among the top-10 dia_ids; a question with no evidence scores 1.0.
- MemPalace, the same file with granularity `session`: the top 10 retrieved items are whole
  sessions there. Here the sessions are taken in the order their first memory appears in
  cairn's ranked list (at most 20 memories deep, so fewer than 10 sessions can show: a lower
  bound); recall is the share of the evidence's sessions (`D<n>:` prefixes) among them; no
  evidence scores 1.0.
- Hebb Mind, `eval/benchmarks/locomo_bench.py` (`_evidence_recall`): a question counts when
  its evidence holds at least one entry matching `D<n>:<m>` exactly; it scores 1 when any of
  those sessions is the session of one of the top 10 memories (recall_any@10), all categories.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from typing import Any

from cairn.bench.locomo_report import Asked

_HEBB_DIA = re.compile(r"^\s*D\s*(\d+)\s*:\s*\d+\s*$", re.IGNORECASE)
_MEMPALACE_SESSION = re.compile(r"D(\d+):")


def mempalace_turn(row: Asked, k: int = 10) -> float:
    wanted = set(row.listed)
    if not wanted:
        return 1.0
    seen = {d for ids in row.found[:k] for d in ids}
    return sum(1 for e in wanted if e in seen) / len(wanted)


def ranked_sessions(found: Sequence[tuple[str, ...]]) -> list[str]:
    """Session numbers in the order their first memory appears in the ranked list."""
    order: list[str] = []
    for ids in found:
        for d in ids:
            match = _MEMPALACE_SESSION.match(d)
            if match and match.group(1) not in order:
                order.append(match.group(1))
    return order


def mempalace_session(row: Asked, k: int = 10) -> float:
    wanted = {m.group(1) for e in row.listed if (m := _MEMPALACE_SESSION.match(e))}
    if not wanted:
        return 1.0
    top = set(ranked_sessions(row.found)[:k])
    return len(wanted & top) / len(wanted)


def hebb_sessions(row: Asked) -> set[str]:
    return {m.group(1) for e in row.listed if (m := _HEBB_DIA.match(e))}


def hebb_session_any(row: Asked, k: int = 10) -> float:
    wanted = hebb_sessions(row)
    seen = {m.group(1) for ids in row.found[:k] for d in ids if (m := _HEBB_DIA.match(d))}
    return 1.0 if wanted & seen else 0.0


def published(rows: Sequence[Asked]) -> dict[str, Any]:
    """cairn's figure under each peer's rule, with the question count it averages over."""
    if not rows:
        return {}
    hebb = [r for r in rows if hebb_sessions(r)]
    return {
        "mempalace_dialog_R@10": {
            "counts": "all categories, all questions (no evidence scores 1.0), raw evidence "
            "entries, share of them among the top-10 dia_ids",
            "questions": len(rows),
            "value": round(statistics.fmean(mempalace_turn(r) for r in rows), 4),
        },
        "mempalace_session_R@10_lower_bound": {
            "counts": "all categories, all questions (no evidence scores 1.0), share of the "
            "evidence sessions among the first 10 distinct sessions of the top-20 memories",
            "questions": len(rows),
            "value": round(statistics.fmean(mempalace_session(r) for r in rows), 4),
        },
        "hebb_session_recall_any@10": {
            "counts": "all categories, questions with a parseable D<n>:<m> evidence entry; 1 "
            "when a top-10 memory's session is an evidence session",
            "questions": len(hebb),
            "value": round(statistics.fmean(hebb_session_any(r) for r in hebb), 4)
            if hebb
            else None,
        },
    }


def render_published(figures: dict[str, Any]) -> list[str]:
    if not figures:
        return []
    lines = ["", "Scored the way peers score theirs (cairn's ranking):"]
    for name, figure in figures.items():
        value = figure["value"]
        shown = "n/a" if value is None else f"{value:.3f}"
        lines.append(f"- {name}: {shown} over {figure['questions']} questions ({figure['counts']})")
    return lines
