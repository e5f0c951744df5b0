"""The plan that compares a fresh read with the ledger: every item is accounted for once, every
entry at most once, an unchanged read plans nothing but `unchanged`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cairn.importers.ledger import distinct, plan
from cairn.importers.model import Entry, Item
from cairn.remember import content_hash

WORDS = st.sampled_from(["use uv", "never push", "prefer tabs", "run tests", "keep prs small"])
ITEMS = st.lists(
    st.builds(
        lambda origin, section, text, keyed: Item(
            origin, section, text, "instruction", key=f"k{len(text)}" if keyed else None
        ),
        st.sampled_from(["CLAUDE.md", "AGENTS.md"]),
        st.sampled_from(["", "Testing"]),
        WORDS.flatmap(lambda w: st.sampled_from([w, w + " always", w.upper()])),
        st.booleans(),
    ),
    max_size=10,
)


def entries_for(items: list[Item]) -> list[Entry]:
    return [
        Entry("g", i.origin, i.section, i.key, content_hash(i.content), f"mem_{n}", True, i.content)
        for n, i in enumerate(distinct(items), start=1)
    ]


@given(ITEMS, ITEMS)
def test_every_item_once_every_entry_at_most_once(before: list[Item], now: list[Item]) -> None:
    steps = plan(now, entries_for(before))
    planned = [s.item for s in steps if s.item is not None]
    assert sorted(map(repr, planned)) == sorted(map(repr, distinct(now)))
    used = [s.entry.memory for s in steps if s.entry is not None]
    assert len(used) == len(set(used)) and len(set(used)) <= len(distinct(before))
    for step in steps:
        if step.action == "unchanged":
            assert step.item is not None and step.entry is not None
            assert step.entry.hash == content_hash(step.item.content)


@given(ITEMS)
def test_reading_the_same_again_plans_nothing(items: list[Item]) -> None:
    assert {s.action for s in plan(items, entries_for(items))} <= {"unchanged"}
