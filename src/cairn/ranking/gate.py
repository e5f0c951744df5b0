"""The abstention gate: whether a candidate covers enough of the query to be returned at all.

A recall that finds nothing relevant must return nothing, whatever the size of the store: the
relative cut alone (cairn.ranking.recall) always keeps the best candidate, so in a store of two
memories any question used to get one of them back. The gate judges each candidate on what it
shares with the query, never on its rank:

- `cosine`: the memory's own vector against the query (not the window: a neighbour's topic
  must not carry a memory through);
- `coverage`: the share of the query's idf mass whose terms the memory itself holds. In a small
  scope raw idf says little (with one memory, a held term weighs a fifth of a missing one), so
  idf is computed as if the scope held at least `idf_min_docs` memories: below that the
  coverage of a memory is close to the plain share of the query's words it holds, above it the
  measure is unchanged;
- `overlap`: whether the memory holds any query term at all.

A memory passes when it is close in meaning even without a shared word (`cosine >=
alone_cosine`), or when it shares a word and is close enough (`cosine >= min_cosine`) or covers
most of the query (`coverage >= min_coverage`). Both cosine floors rise by `per_decade` for
every tenfold of the scope's size: the more memories, the closer the best chance match of an
unrelated query comes (the largest of n draws grows with n), so a fixed floor either lets junk
through in large stores or drops real answers in small ones. A memory whose vector another
embedder wrote (`cosine` None, waiting for `cairn reindex`) is judged on coverage alone.
Passing by a small margin marks the hit `weak`.

The constants were chosen for the default embedder (all-MiniLM-L6-v2, int8) by
leave-one-conversation-out on the five LoCoMo conversations, in stores of 1 to 1000 memories
(`cairn bench abstention --fit`): in every fold the same setting won but for one fold's
`alone_cosine` (0.25). Held out, at every size at least 97.8 % of absent-topic questions got
nothing and at most 0.42 % of answerable ones did. `idf_min_docs` 1 (plain idf) beat 50 and
200: what protects small stores is the `overlap` requirement, not a smoothed idf. Another
embedder spreads its cosines differently: rerun the fit before trusting these floors with it.

`stale_min_coverage` was chosen the same way, replaying each store as if no vector were the
current embedder's: keywords alone cannot meet both targets, so the floor keeps absent-topic
questions empty (held out, >= 96 % at every size) and accepts that 17 % (1000 memories) to
74 % (one memory) of answerable questions find nothing until `cairn reindex` runs; 0.6, the
fresh memories' coverage floor, would leave 38-88 % empty.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Gate:
    alone_cosine: float = 0.35
    min_cosine: float = 0.125
    min_coverage: float = 0.6
    weak_cosine: float = 0.42
    weak_coverage: float = 0.8
    idf_min_docs: int = 1
    per_decade: float = 0.08
    # Without a current vector only coverage speaks; chosen on its own (see above).
    stale_min_coverage: float = 0.4
    # The floors were measured on stores of up to 1000 memories; beyond, they stay put rather
    # than extrapolate a rise nobody measured.
    lift_max_size: int = 1000

    def lift(self, scope_size: int) -> float:
        """How much the cosine floors rise in a scope of this many memories."""
        return self.per_decade * math.log10(min(max(1, scope_size), self.lift_max_size))


GATE = Gate()


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a candidate shares with the query; `cosine` is None without a current vector."""

    cosine: float | None
    coverage: float
    overlap: bool
    scope_size: int = 1


def passes(gate: Gate, evidence: Evidence) -> bool:
    cosine, coverage = evidence.cosine, evidence.coverage
    if cosine is None:
        return evidence.overlap and coverage >= gate.stale_min_coverage
    lift = gate.lift(evidence.scope_size)
    if cosine >= gate.alone_cosine + lift:
        return True
    close = cosine >= gate.min_cosine + lift
    return evidence.overlap and (close or coverage >= gate.min_coverage)


def is_weak(gate: Gate, evidence: Evidence) -> bool:
    cosine = evidence.cosine if evidence.cosine is not None else -1.0
    return cosine < gate.weak_cosine and evidence.coverage < gate.weak_coverage


def gate_idf(doc_count: int, document_frequency: int, min_docs: int) -> float:
    """BM25 idf of a term, computed as if the scope held at least `min_docs` memories."""
    n = max(doc_count, min_docs)
    df = min(max(0, document_frequency), n)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))
