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
renders it in its own query language through `render`.

"At least m of these n terms" is rendered factored, `(t1 AND atleast(rest, m-1)) OR
atleast(rest, m)`, not as the flat OR of every m-term conjunction: the flat form names each
common term C(n-1, m-1) times, and the engine reads the term's postings once per mention
(measured at 100k on FTS5: 5.9 ms for the flat form of a typical query, 4.1 ms factored, the
same rows).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

Row = TypeVar("Row")

EXACT_MATCHES = 5000
LARGE_STORE = 50_000  # documents; below this the exact query always runs
_MAX_COMMON = 6  # at most 6 common terms in the "at least m of them" part
STRICTER_STEPS = 2  # tiers tried before the planned bound: every common term, all but one


@dataclass(frozen=True, slots=True)
class Bound:
    """Rank a row when it holds any of `rare`, or at least `at_least` of `common` (none when
    `common` is empty)."""

    rare: tuple[str, ...]
    common: tuple[str, ...]
    at_least: int


def render(bound: Bound, term: Callable[[str], str], both: str, either: str) -> str:
    """The bound as a query: `term` quotes one term, `both` and `either` are the engine's AND
    and OR operators (with their spaces)."""
    parts = [term(t) for t in bound.rare]
    if bound.common:
        parts.append(_at_least([term(t) for t in bound.common], bound.at_least, both, either))
    return either.join(parts)


def _at_least(terms: list[str], m: int, both: str, either: str) -> str:
    """Rows holding at least `m` (1 <= m <= len(terms)) of the quoted `terms`, each named as
    few times as the recursion needs."""
    if m == 1:
        return terms[0] if len(terms) == 1 else "(" + either.join(terms) + ")"
    if m == len(terms):
        return "(" + both.join(terms) + ")"
    first, rest = terms[0], terms[1:]
    taken = f"({first}{both}{_at_least(rest, m - 1, both, either)})"
    return f"({taken}{either}{_at_least(rest, m, both, either)})"


def bounded_or_exact(
    ranked: Callable[[str | None], list[Row]], bounded: str | None, limit: int
) -> list[Row]:
    """The bounded pool when it fills `limit` rows, else the exact ranking (`ranked(None)`).

    A short pool may have left out a row the exact ranking would keep, so it is never returned.
    """
    return tiered_or_exact(ranked, [] if bounded is None else [bounded], limit)


def tiered_or_exact(
    ranked: Callable[[str | None], list[Row]], tiers: Sequence[str], limit: int
) -> list[Row]:
    """The pool of the first of `tiers` (strictest first, each admitting more rows than the one
    before) that fills `limit` rows, else the exact ranking (`ranked(None)`)."""
    for bounded in tiers:
        rows = ranked(bounded)
        if len(rows) >= limit:
            return rows
    return ranked(None)


def stricter(bound: Bound, steps: int = STRICTER_STEPS) -> list[Bound]:
    """Up to `steps` bounds asking for more common terms than `bound` does, strictest first:
    every common term, then all but one, ... (rare terms still admit a row alone).

    Common words that travel together (a two-word name, a stock phrase) defeat `plan`'s
    independence: at 100k on the bench's vocabulary its "at least 2 of 5" admitted 13,100 rows,
    while the 100 rows holding all five took 1 ms of GIN work to find, and "at least 4 of 5"
    filled a pool of 100 in about half the planned bound's time wherever all five did not. A row
    missing a common word has lost that word's whole share of the score, so when `limit` rows
    miss fewer, they are the pool (the price of the module's bound, a step further)."""
    if not bound.common:
        return []
    most = len(bound.common)
    least = max(bound.at_least + 1, most - steps + 1)
    return [Bound(bound.rare, bound.common, m) for m in range(most, least - 1, -1)]


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
    if len(common) < 2:
        common = []  # one common term alone bounds nothing
    if not rare and not common:
        return None
    shares = [frequency.get(t, 0) / total for t in common]
    at_least = smallest_share(shares, exact_matches / total) if common else 0
    return Bound(tuple(rare), tuple(common), at_least)


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
