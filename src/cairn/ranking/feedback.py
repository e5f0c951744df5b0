"""The feedback multiplier: what `helped` and `harmed` assessments do to a score.

    multiplier = 2 ** ((helped - harmed) / (helped + harmed + 2))

It is bounded strictly inside ×0.5 … ×2 (DESIGN §3), is 1 with no evidence, and moves less on
mixed evidence than on agreeing evidence: one `helped` gives ×1.26, three give ×1.68, ten give
×1.78; nine `helped` against ten `harmed` stay near ×1. The `+ 2` is a prior of one neutral
vote each way, so a single assessment cannot swing a ranking to a bound. Working in powers of
two keeps the effect symmetric: one `harmed` gives exactly the inverse of one `helped`.

Pure functions only; the recall pipeline and the brief read the tallies from memories
(`evidence["feedback"]`) and procedures and apply this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MIN_MULTIPLIER = 0.5
MAX_MULTIPLIER = 2.0


def feedback_multiplier(helped: int, harmed: int) -> float:
    """The bounded score multiplier for these tallies (negative tallies count as zero)."""
    helped, harmed = max(0, int(helped)), max(0, int(harmed))
    value: float = 2.0 ** ((helped - harmed) / (helped + harmed + 2))
    return min(MAX_MULTIPLIER, max(MIN_MULTIPLIER, value))


def memory_feedback_multiplier(evidence: Mapping[str, Any]) -> float:
    """The multiplier for a memory, from the `feedback` tallies in its evidence mapping."""
    tallies = evidence.get("feedback")
    if not isinstance(tallies, Mapping):
        return 1.0
    return feedback_multiplier(_count(tallies, "helped"), _count(tallies, "harmed"))


def _count(tallies: Mapping[str, Any], name: str) -> int:
    value = tallies.get(name, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
