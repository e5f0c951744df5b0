"""Score multipliers from a memory's life: durability decay, access boost, acts, resting.

Pure functions of a memory and the current instant; `recall.py` multiplies a fused score by
them and shows each in the `explain` breakdown. Every one is bounded so relevance stays the
main signal:

- lifecycle ×0.75 … ×1.25 — the memory's *strength*: its weight (initial importance, default
  0.5) decayed exponentially by durability since it was written (episodic 0.15/day, semantic
  0.03/day, permanent never; pinned memories and preferences never decay), the decay offset by
  use (access and cites, logarithmically) up to the weight. A fresh default memory gets ×1.
- acts ×0.5 … ×2 — confirmations (merges, other clients restating it) lift, contradictions
  (reverts, discards) lower: `2 ** ((confirmed - contradicted) / (confirmed + contradicted + 2))`,
  the same shape as the feedback multiplier, so one of each cancels. Acts and feedback together
  stay within ×0.5 … ×2 (DESIGN §3): the acts part is whatever keeps their product in bounds.
- feedback ×0.5 … ×2 — `helped` lifts, `harmed` lowers (`cairn.ranking.feedback`), applied with
  the other signals before the cut, so feedback can lift a memory back over the line.
- resting ×0.5 — a resting memory (idle or contradicted) is still found but ranks below
  active ones.
- recency ×1 … ×1.05 (`recency_lift`, applied by `recall.py`) — a newer near-tie comes first.
"""

from __future__ import annotations

import math
from datetime import datetime

from cairn.models import DECAY_PER_DAY, Memory
from cairn.ranking.feedback import memory_feedback_multiplier

LIFECYCLE_FLOOR = 0.75
LIFECYCLE_SPAN = 0.5  # floor + span * strength; strength 0.5 → ×1
ACCESS_GAIN = 0.2
RESTING_FACTOR = 0.5
RECENCY_GAIN = 0.05
RECENCY_DAYS = 30.0
MIN_ACTS = 0.5
MAX_ACTS = 2.0
_DAY_SECONDS = 86_400.0


def decay_factor(durability: str, days: float, *, never: bool = False) -> float:
    """exp(-rate × days) for the durability; 1 for permanent memories or when `never`."""
    rate = DECAY_PER_DAY.get(durability, 0.0)
    if never or rate <= 0 or days <= 0:
        return 1.0
    return math.exp(-rate * days)


def access_boost(access_count: int, cited: int = 0) -> float:
    """1 + 0.2 × ln(1 + uses): being found and cited counteracts decay, with diminishing gain."""
    uses = max(0, access_count) + max(0, cited)
    return 1.0 + ACCESS_GAIN * math.log1p(uses)


def strength(memory: Memory, now: datetime) -> float:
    """Weight × decay, with use counteracting the decay (never lifting past the weight): in 0…1.

    Use only offsets decay because a recall counts as an access: if access could lift a memory
    above its weight, every repeated question would make its own answers rank higher."""
    days = max(0.0, (now - memory.written_at).total_seconds() / _DAY_SECONDS)
    never = memory.pinned or memory.type == "preference"
    kept = decay_factor(memory.durability, days, never=never)
    return memory.weight * min(1.0, kept * access_boost(memory.access_count, memory.cited))


def lifecycle_multiplier(memory: Memory, now: datetime) -> float:
    return LIFECYCLE_FLOOR + LIFECYCLE_SPAN * strength(memory, now)


def acts_multiplier(confirmed: int, contradicted: int) -> float:
    up, down = max(0, confirmed), max(0, contradicted)
    value: float = 2.0 ** ((up - down) / (up + down + 2))
    return min(MAX_ACTS, max(MIN_ACTS, value))


def acts_part(memory: Memory) -> float:
    """The acts multiplier, capped so that acts × feedback stays within ×0.5 … ×2."""
    feedback = memory_feedback_multiplier(memory.evidence)
    combined = acts_multiplier(memory.confirmed, memory.contradicted) * feedback
    return min(MAX_ACTS, max(MIN_ACTS, combined)) / feedback


def recency_lift(memory: Memory, now: datetime) -> float:
    """1 + 0.05 × exp(−age / 30 days), by when the memory occurred: at most ×1.05.

    Slight on purpose (DESIGN §3): it only decides between near-ties, so of two memories saying
    much the same thing the newer one comes first; it cannot lift an off-topic memory over a
    relevant one.
    """
    days = max(0.0, (now - memory.occurred_at).total_seconds() / _DAY_SECONDS)
    return 1.0 + RECENCY_GAIN * math.exp(-days / RECENCY_DAYS)


def resting_factor(memory: Memory) -> float:
    return RESTING_FACTOR if memory.status == "resting" else 1.0


def signal_parts(memory: Memory, now: datetime) -> dict[str, float]:
    """Each multiplier by name, for the score and the `explain` breakdown."""
    return {
        "lifecycle": lifecycle_multiplier(memory, now),
        "acts": acts_part(memory),
        "feedback": memory_feedback_multiplier(memory.evidence),
        "resting": resting_factor(memory),
    }
