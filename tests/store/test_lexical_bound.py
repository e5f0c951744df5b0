"""The bounded pool's plan, rendered: the factored "at least m of n" admits exactly the rows the
bound means, and names each common term fewer times than the flat OR of conjunctions."""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from cairn.store.lexical_bound import Bound, plan, render, stricter, tiered_or_exact

TERMS = [f"t{i}" for i in range(8)]


def holds(expression: str, present: set[str]) -> bool:
    """Evaluate a rendered expression (terms quoted `"t3"`, operators ` AND `/` OR `) for a row
    holding `present`, by rewriting it into a Python boolean."""
    python = re.sub(r'"(t\d+)"', lambda m: str(m.group(1) in present), expression)
    python = python.replace(" AND ", " and ").replace(" OR ", " or ")
    assert set(re.sub(r"True|False|and|or|[() ]", "", python)) == set()  # nothing else in it
    return bool(eval(python))  # safe: only True/False/and/or/parentheses are left (checked)


def quoted(term: str) -> str:
    return f'"{term}"'


@st.composite
def bounds(draw: st.DrawFn) -> Bound:
    terms = draw(st.lists(st.sampled_from(TERMS), min_size=1, max_size=8, unique=True))
    split = draw(st.integers(0, len(terms)))
    rare, common = terms[:split], terms[split:]
    if len(common) < 2:
        return Bound(tuple(terms), (), 0)
    return Bound(tuple(rare), tuple(common), draw(st.integers(2, len(common))))


@given(bounds())
def test_a_row_passes_when_it_holds_a_rare_term_or_enough_common_ones(bound: Bound) -> None:
    expression = render(bound, quoted, " AND ", " OR ")
    named = [*bound.rare, *bound.common]
    for present in subsets(named):  # every row the bound could meet, at most 2^8
        expected = bool(present & set(bound.rare)) or (
            bool(bound.common) and len(present & set(bound.common)) >= bound.at_least
        )
        assert holds(expression, present) is expected, (expression, present)


def subsets(terms: list[str]) -> list[set[str]]:
    return [
        set(chosen) for k in range(len(terms) + 1) for chosen in itertools.combinations(terms, k)
    ]


def test_the_factored_form_names_common_terms_less_often_than_the_flat_one() -> None:
    common = tuple(TERMS[:6])
    factored = render(Bound((), common, 3), quoted, " AND ", " OR ")
    flat = " OR ".join(
        "(" + " AND ".join(map(quoted, group)) + ")" for group in itertools.combinations(common, 3)
    )
    assert factored.count('"t') < flat.count('"t')  # 60 mentions in the flat form
    for present in map(
        set, itertools.chain.from_iterable(itertools.combinations(common, k) for k in range(7))
    ):
        assert holds(factored, present) is holds(flat, present)


def test_the_plan_keeps_rare_terms_alone_and_orders_common_ones_rarest_first() -> None:
    frequency = {"a": 40_000, "b": 30_000, "c": 20_000, "rare": 100}
    bound = plan(["a", "b", "c", "rare"], frequency, total=100_000)
    assert bound is not None
    assert bound.rare == ("rare",)
    assert bound.common == ("c", "b", "a")
    assert 2 <= bound.at_least <= 3
    assert plan(["a", "b"], {"a": 10, "b": 10}, total=100_000) is None  # cheap: rank them all
    assert plan(["a", "b", "c"], frequency, total=10_000) is None  # small store


@given(bounds())
def test_the_stricter_bounds_ask_for_every_common_term_then_all_but_one(bound: Bound) -> None:
    tiers = stricter(bound)
    wanted = [m for m in (len(bound.common), len(bound.common) - 1) if m > bound.at_least]
    assert [tier.at_least for tier in tiers] == (wanted if bound.common else [])
    terms = [*bound.rare, *bound.common]
    rendered = [render(b, quoted, " AND ", " OR ") for b in [*tiers, bound]]
    for present in map(
        set, itertools.chain.from_iterable(itertools.combinations(terms, k) for k in range(9))
    ):
        admitted = [holds(expression, present) for expression in rendered]
        for tier, ok in zip(tiers, admitted, strict=False):
            held = len(present & set(bound.common))
            assert ok is (bool(present & set(bound.rare)) or held >= tier.at_least)
        assert admitted == sorted(admitted)  # each tier admits what the ones before did


def test_the_tiers_run_strictest_first_until_one_fills_the_pool() -> None:
    asked: list[str | None] = []
    pools = {"strict": [1], "planned": [1, 2, 3], None: [1, 2, 3, 4]}

    def ranked(bounded: str | None) -> list[int]:
        asked.append(bounded)
        return pools[bounded]

    assert tiered_or_exact(ranked, ["strict", "planned"], 3) == [1, 2, 3]
    assert asked == ["strict", "planned"]
    asked.clear()
    assert tiered_or_exact(ranked, ["strict", "planned"], 4) == [1, 2, 3, 4]  # both short
    assert asked == ["strict", "planned", None]
    asked.clear()
    assert tiered_or_exact(ranked, ["strict"], 1) == [1]
    assert asked == ["strict"]
