"""Which documents are worth ranking for a query of common words, for both backends' pools.

FTS5's `bm25()` and PostgreSQL's `ts_rank` run once per matching row: a five-word query of common
words matches a third of a 100k store, and ranking those rows is most of a recall. When the
query's terms together match more than `EXACT_MATCHES` rows (the sum of their document
frequencies) on a store of `LARGE_STORE` documents or more, only the rows that could make the
pool are ranked: those holding a rare term (one matching at most `EXACT_MATCHES / terms` rows),
or at least `m` of the common ones, `m` the smallest number for which that set is expected to
stay under `EXACT_MATCHES` rows (term occurrences taken as independent). Every row ranked is
ranked with all the query's terms; a row holding fewer common words and no rare one is left out,
although the ranking could have put it in the pool (a very short one, say), which is the price.
When the pool comes out short, each backend runs its exact query. The plan is pure; each backend
renders it in its own query language. The term counts it needs are cached (`GenerationCache`).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

Row = TypeVar("Row")

EXACT_MATCHES = 5000
LARGE_STORE = 50_000  # documents; below this the exact query always runs
_MAX_COMMON = 6  # at most C(6, 3) = 20 conjunctions in the pruned expression


@dataclass(frozen=True, slots=True)
class Bound:
    """Rank a row when it holds any of `rare`, or every term of one of `groups`."""

    rare: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]


def bounded_or_exact(
    ranked: Callable[[str | None], list[Row]], bounded: str | None, limit: int
) -> list[Row]:
    """The bounded pool when it fills `limit` rows, else the exact ranking (`ranked(None)`).

    A short pool may have left out a row the exact ranking would keep, so it is never returned.
    """
    if bounded is not None:
        rows = ranked(bounded)
        if len(rows) >= limit:
            return rows
    return ranked(None)


def plan(
    terms: Sequence[str],
    frequency: Mapping[str, int],
    total: int,
    exact_matches: int = EXACT_MATCHES,
    large_store: int = LARGE_STORE,
) -> Bound | None:
    """The rows worth ranking, or None when ranking every match is cheap (or the store small)."""
    if len(terms) < 2 or sum(frequency.get(t, 0) for t in terms) <= exact_matches:
        return None
    total = max(total, 1)
    if total < large_store:
        return None
    rare = [t for t in terms if frequency.get(t, 0) <= exact_matches / len(terms)]
    common = sorted((t for t in terms if t not in rare), key=lambda t: frequency.get(t, 0))
    common = common[:_MAX_COMMON]
    groups: list[tuple[str, ...]] = []
    if len(common) >= 2:
        shares = [frequency.get(t, 0) / total for t in common]
        at_least = smallest_share(shares, exact_matches / total)
        groups = list(itertools.combinations(common, at_least))
    if not rare and not groups:
        return None
    return Bound(tuple(rare), tuple(groups))


def smallest_share(shares: list[float], budget: float) -> int:
    """The smallest m >= 2 for which P(a row holds at least m of the terms) <= budget, with
    each term held independently with its share (the Poisson binomial tail)."""
    exactly = [1.0]
    for share in shares:
        step = [0.0] * (len(exactly) + 1)
        for count, p in enumerate(exactly):
            step[count] += p * (1 - share)
            step[count + 1] += p * share
        exactly = step
    for m in range(2, len(shares) + 1):
        if sum(exactly[m:]) <= budget:
            return m
    return len(shares)


class GenerationCache:
    """BM25 statistics kept while the store's generation counters, which every process's writes
    to the lexical index or a filtered column move, read the same; `size` entries at most."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._generation: object = None
        self._items: dict[Any, Any] = {}

    def current(self, generation: object) -> dict[Any, Any]:
        """The entries counted under `generation` (None: no counter to trust, nothing kept)."""
        with self._lock:
            if generation is None:
                return {}
            if generation != self._generation or len(self._items) > self._size:
                self._items = {}
                self._generation = generation
            return self._items
