"""The Store's browsing reads against a plain Python model of the same rows, both backends:
`page_memories` pages (newest first, below a cursor, any filter), `count_memories` counts up to
its limit, `memory_days` groups by UTC day and type. Hypothesis picks the filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn import Cairn
from cairn.models import Memory
from cairn.store.base import MemoryFilter
from clocks import FakeClock

SCOPES = ("project:example/a", "project:example/b", "global")
TYPES = ("fact", "decision", "constraint")
TAGS = ("red", "green", "blue")


@pytest.fixture
def rows(mem: Cairn, clock: FakeClock) -> list[Memory]:
    """36 memories over three scopes, types, tag sets, days; some resting, some forgotten."""
    refs = []
    for i in range(36):
        clock.now = datetime(2026, 8, 1, 23, 30, tzinfo=UTC) + timedelta(hours=7 * i)
        tags = [TAGS[i % 3]] + ([TAGS[(i + 1) % 3]] if i % 4 == 0 else [])
        cited = "README.md" if i % 5 == 0 else None
        written = mem.remember(f"claim {i} about the rows", type=TYPES[i % 3],
                               scope=SCOPES[i % 3], tags=tags, dedup=False,
                               source_ref=cited)  # fmt: skip
        refs.append(written.memory_id)
    for i in range(0, 36, 7):
        mem.store.update_memory(int(refs[i][4:]), {"status": "resting"})
    for i in range(3, 36, 11):
        mem.forget(refs[i], reason="wrong", scope=SCOPES[i % 3])
    return sorted(mem.store.iter_memories(), key=lambda m: -m.id)


def admitted(memory: Memory, filt: MemoryFilter, cited_only: bool) -> bool:
    return (
        memory.scope in filt.scopes
        and memory.status in filt.statuses
        and memory.until is None
        and (filt.types is None or memory.type in filt.types)
        and (filt.tags is None or bool(set(filt.tags) & set(memory.tags)))
        and (not cited_only or memory.source_ref is not None)
    )


filters = st.builds(
    MemoryFilter,
    scopes=st.lists(st.sampled_from(SCOPES), min_size=1, max_size=3, unique=True).map(tuple),
    statuses=st.sampled_from([("active",), ("resting",), ("active", "resting")]),
    types=st.none() | st.lists(st.sampled_from(TYPES), min_size=1, unique=True).map(tuple),
    tags=st.none() | st.lists(st.sampled_from(TAGS), min_size=1, unique=True).map(tuple),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(filt=filters, size=st.integers(1, 9), cited_only=st.booleans(), at_most=st.integers(1, 40))
def test_pages_and_counts_match_the_model(
    mem: Cairn, rows: list[Memory], filt: MemoryFilter, size: int, cited_only: bool, at_most: int
) -> None:
    expected = [m.id for m in rows if admitted(m, filt, cited_only)]
    seen: list[int] = []
    before = None
    while True:
        page = mem.store.page_memories(filt, before_id=before, limit=size, cited_only=cited_only)
        seen.extend(m.id for m in page)
        if len(page) < size:
            break
        before = page[-1].id
    assert seen == expected
    counted = mem.store.count_memories(filt, cited_only=cited_only, at_most=at_most)
    assert counted == min(len(expected), at_most)


def test_days_group_by_utc_day_and_type(mem: Cairn, rows: list[Memory]) -> None:
    days = mem.store.memory_days(list(SCOPES[:1]))
    expected: dict[tuple[str, str], int] = {}
    for m in rows:
        if m.scope == SCOPES[0]:
            key = (m.written_at.astimezone(UTC).date().isoformat(), m.type)
            expected[key] = expected.get(key, 0) + 1
    assert {(d.isoformat(), t): n for d, t, n in days} == expected
    assert [d for d, _, _ in days] == sorted(d for d, _, _ in days)
    assert sum(n for _, _, n in mem.store.memory_days(None)) == len(rows)
