"""The retrieval metrics peers publish for LoCoMo, computed from one question's ranked list.

A ranked list is what `recall` returned, best first, as the dia_ids each memory points to:
one id per memory in `turns` mode, one or more in `observations` mode. Evidence is the
question's dia_ids (`D3:7`: turn 7 of session 3).

- Turn-level R@k: the share of the evidence turns found among the top k memories.
- Session-level recall_any@k / recall_all@k (LongMemEval's names): the evidence collapsed to
  its sessions; a memory at rank i counts the session(s) of the turn(s) it points to. 1 when
  any (all) of the evidence sessions show up in the top k, else 0.
- nDCG@10: binary relevance - a memory is relevant when it points to an evidence turn no
  higher-ranked memory already pointed to (so a turn found twice is credited once), gain
  1/log2(rank+1); the ideal is that many relevant memories first, as many as there are
  evidence turns, at most 10.

Every function takes evidence with at least one id: with none, recall is undefined, and the
caller drops (and counts) such questions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Ranked = Sequence[tuple[str, ...]]


def session_of(dia_id: str) -> str:
    """'D3:7' -> 'D3' (the part before the colon; an id without one is its own session)."""
    return dia_id.split(":", 1)[0]


def _require(evidence: Sequence[str]) -> set[str]:
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question with no evidence has no recall; drop it before scoring.")
    return wanted


def turn_recall(found: Ranked, evidence: Sequence[str], k: int) -> float:
    """Share of the evidence dia_ids among the dia_ids of the top k memories."""
    wanted = _require(evidence)
    seen = {d for ids in found[:k] for d in ids}
    return len(wanted & seen) / len(wanted)


def session_recall(found: Ranked, evidence: Sequence[str], k: int) -> tuple[float, float]:
    """(recall_any@k, recall_all@k) over the evidence's sessions."""
    wanted = {session_of(d) for d in _require(evidence)}
    seen = {session_of(d) for ids in found[:k] for d in ids}
    hit = wanted & seen
    return (1.0 if hit else 0.0, 1.0 if hit == wanted else 0.0)


def ndcg(found: Ranked, evidence: Sequence[str], k: int = 10) -> float:
    """nDCG@k with binary relevance over the evidence turns (each credited once)."""
    wanted = _require(evidence)
    credited: set[str] = set()
    dcg = 0.0
    for rank, ids in enumerate(found[:k], start=1):
        new = (wanted & set(ids)) - credited
        if new:
            credited |= new
            dcg += 1.0 / math.log2(rank + 1)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def evidence_ranks(found: Ranked, evidence: Sequence[str]) -> dict[str, int | None]:
    """Each evidence id's 1-based rank (the first memory pointing to it), None when absent."""
    ranks: dict[str, int | None] = dict.fromkeys(evidence)
    for rank, ids in enumerate(found, start=1):
        for d in ids:
            if d in ranks and ranks[d] is None:
                ranks[d] = rank
    return ranks


def reachable_share(stored: set[str], evidence: Sequence[str]) -> float:
    """Share of the evidence ids some stored memory points to: the best R@k any ranking of
    this store can reach for the question (its ceiling)."""
    wanted = _require(evidence)
    return len(wanted & stored) / len(wanted)
