"""What the app reads through the facade: pages of memories (newest first, or in recall's
ranking), their filters, scope counts, sessions, procedures, writes per day, pin and unpin.
Both backends."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn import Cairn, Conflict, InvalidInput, NotFound
from cairn.browse import check_request
from cairn.config import Settings
from cairn.embeddings.hashing import HashingEmbedder
from cairn.store.base import MemoryFilter
from clocks import FakeClock

SCOPE = "project:example/browse"
OTHER = "project:example/elsewhere"


def fill(mem: Cairn, n: int, scope: str = SCOPE) -> list[str]:
    return [
        mem.remember(f"Deploy note {i}: the {i}th runbook step", type="fact", scope=scope,
                     tags=["odd"] if i % 2 else ["even"], dedup=False).memory_id
        for i in range(n)
    ]  # fmt: skip


def walk(mem: Cairn, size: int, **filters: object) -> list[str]:
    """Every ref the list shows, page after page, following `next_cursor`."""
    seen: list[str] = []
    cursor = None
    for _ in range(100):
        page = mem.list_memories(scope=SCOPE, size=size, cursor=cursor, **filters)  # type: ignore[arg-type]
        seen.extend(item.memory.ref for item in page.items)
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor
    raise AssertionError("the pages never ended")


def test_pages_walk_every_memory_once_newest_first(mem: Cairn) -> None:
    refs = fill(mem, 23)
    page = mem.list_memories(scope=SCOPE, size=10)
    assert page.total == 23 and len(page.items) == 10 and not page.ranked
    assert walk(mem, 10) == list(reversed(refs))
    assert walk(mem, 23) == list(reversed(refs))


def test_filters_by_type_tag_and_status(mem: Cairn) -> None:
    refs = fill(mem, 6)
    rule = mem.remember("Never force-push main", type="constraint", scope=SCOPE).memory_id
    assert walk(mem, 5, types=["constraint"]) == [rule]
    assert walk(mem, 5, tags=["odd"]) == [refs[5], refs[3], refs[1]]
    mem.store.update_memory(int(refs[0][4:]), {"status": "resting"})
    assert walk(mem, 5, statuses=["resting"]) == [refs[0]]
    assert mem.list_memories(scope=SCOPE, statuses=["resting"]).total == 1
    mem.forget(refs[2], reason="no longer true", scope=SCOPE)
    assert refs[2] not in walk(mem, 50)


def test_the_list_shows_the_scope_and_global_only(mem: Cairn) -> None:
    mine = fill(mem, 2)
    fill(mem, 3, scope=OTHER)
    shared = mem.remember("Tabs are four spaces wide", type="preference", scope="global")
    assert set(walk(mem, 10)) == {*mine, shared.memory_id}


def test_a_search_is_recall_ranking_and_records_no_recall(mem: Cairn) -> None:
    fill(mem, 5)
    python = mem.remember("CI runs Python 3.11 on every push", type="constraint", scope=SCOPE)
    before = len(mem.store.events_of_kind(["recall"], None))
    page = mem.list_memories(scope=SCOPE, query="which python does CI run")
    assert page.ranked and page.items[0].memory.ref == python.memory_id
    assert page.items[0].score is not None and page.items[0].score > 0
    assert all(item.score for item in page.items)  # an unrelated memory is not a match
    assert len(mem.store.events_of_kind(["recall"], None)) == before
    assert mem.get_memory([python.memory_id], scope=SCOPE).records[0].memory.access_count == 0
    typed = mem.list_memories(scope=SCOPE, query="python push runbook", types=["fact"])
    assert typed.items and all(i.memory.type == "fact" for i in typed.items)


def test_a_search_pages_by_offset(mem: Cairn) -> None:
    fill(mem, 12)
    first = mem.list_memories(scope=SCOPE, query="runbook step deploy", size=5)
    assert first.total == 12 and first.next_cursor == "5"
    second = mem.list_memories(scope=SCOPE, query="runbook step deploy", size=5, cursor="5")
    third = mem.list_memories(scope=SCOPE, query="runbook step deploy", size=5, cursor="10")
    refs = [i.memory.ref for p in (first, second, third) for i in p.items]
    assert len(refs) == len(set(refs)) == 12 and third.next_cursor is None


def test_a_citation_filter_without_citations(mem: Cairn) -> None:
    refs = fill(mem, 3)
    assert walk(mem, 2, citation="unchecked") == list(reversed(refs))
    assert walk(mem, 2, citation="gone") == []


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("types", ["factoid"], "type 'factoid' is not one of"),
        ("statuses", ["purged"], "status 'purged' is not one of"),
        ("citation", "broken", "citation 'broken' is not one of"),
        ("cursor", "-3", "is not a page cursor"),
        ("cursor", "12abc", "is not a page cursor"),
        ("size", 0, "page size 0 is out of range"),
        ("size", 101, "page size 101 is out of range"),
        ("query", "a\ud800b", "surrogate"),
    ],
)
def test_bad_list_arguments_say_what_to_fix(
    mem: Cairn, field: str, value: object, says: str
) -> None:
    with pytest.raises(InvalidInput, match=says):
        mem.list_memories(scope=SCOPE, **{field: value})  # type: ignore[arg-type]


def test_scopes_count_by_type_and_status(mem: Cairn) -> None:
    fill(mem, 3)
    mem.remember("Never force-push main", type="constraint", scope=OTHER)
    mem.remember("Answer in English", type="preference", scope="global")
    counts = {c.scope: c for c in mem.scopes()}
    assert mem.scopes()[0].scope == "global"
    assert counts[SCOPE].total == 3 and counts[SCOPE].by_type == {"fact": 3}
    assert counts[SCOPE].by_status == {"active": 3}
    assert counts[OTHER].by_type == {"constraint": 1}


def test_pin_and_unpin_record_an_event(mem: Cairn) -> None:
    ref = fill(mem, 1)[0]
    assert mem.set_pinned(ref, True, scope=SCOPE).pinned
    assert mem.get_memory([ref], scope=SCOPE).records[0].memory.pinned
    assert mem.set_pinned(ref, True, scope=SCOPE).pinned  # again: nothing more happens
    assert not mem.set_pinned(ref, False, scope=SCOPE).pinned
    kinds = [e.kind for e in mem.store.events_of_kind(["pin_memory", "unpin_memory"], None)]
    assert kinds == ["pin_memory", "unpin_memory"]


def test_pin_refuses_what_cannot_be_pinned(mem: Cairn) -> None:
    ref = fill(mem, 1)[0]
    with pytest.raises(InvalidInput, match="pinned must be true or false"):
        mem.set_pinned(ref, "yes", scope=SCOPE)  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        mem.set_pinned(ref, True, scope=OTHER)
    mem.forget(ref, reason="wrong", scope=SCOPE)
    with pytest.raises(Conflict, match="forgotten"):
        mem.set_pinned(ref, True, scope=SCOPE)


def test_timeline_counts_writes_per_day_and_type(mem: Cairn, clock: FakeClock) -> None:
    fill(mem, 2)
    clock.advance(days=2)
    mem.remember("Never force-push main", type="constraint", scope=SCOPE)
    days = [(d.day.isoformat(), d.type, d.count) for d in mem.timeline(scope=SCOPE)]
    assert days == [("2026-08-01", "fact", 2), ("2026-08-03", "constraint", 1)]
    assert mem.timeline(scope=OTHER) == []


def test_sessions_with_outcomes_and_procedures(mem: Cairn) -> None:
    brief = mem.activate("Add a retry to the webhook sender", scope=SCOPE)
    open_one = mem.activate("Look at the flaky test", scope=SCOPE)
    mem.commit(brief.session_id, outcome="success", summary="retries with backoff",
               procedure={"steps": ["Wrap the send in a retry", "Back off"]})  # fmt: skip
    rows = {row.session.id: row for row in mem.sessions(scope=SCOPE)}
    assert rows[brief.session_id].episode is not None
    assert rows[brief.session_id].episode.outcome == "success"
    assert rows[open_one.session_id].episode is None
    assert mem.sessions(scope=SCOPE)[0].session.id == open_one.session_id
    procedures = mem.procedures(scope=SCOPE)
    assert len(procedures) == 1 and procedures[0].steps[0] == "Wrap the send in a retry"
    assert mem.sessions(scope=OTHER) == []


@settings(max_examples=60, deadline=None)
@given(
    cursor=st.one_of(st.none(), st.text(max_size=14), st.integers(-5, 10**13)),
    size=st.integers(-2, 150),
    citation=st.one_of(st.none(), st.text(max_size=10)),
)
def test_list_arguments_are_checked_or_refused_never_crash(
    cursor: object, size: int, citation: str | None
) -> None:
    try:
        request = check_request(
            (SCOPE,), query=None, types=None, tags=None, statuses=None,
            citation=citation, cursor=cursor, size=size,  # type: ignore[arg-type]
        )  # fmt: skip
    except InvalidInput:
        return
    assert 1 <= request.size <= 100
    assert request.cursor is None or request.cursor >= 0


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    count=st.integers(0, 30),
    size=st.integers(1, 12),
    dropped=st.sets(st.integers(0, 29), max_size=8),
)
def test_pages_cover_the_store_exactly_whatever_the_sizes(
    tmp_path: Path, count: int, size: int, dropped: set[int]
) -> None:
    home = Path(tempfile.mkdtemp(dir=tmp_path))
    cfg = Settings(home=home, embedder="hashing", consolidate_interval=0)
    with Cairn.open(home / "m.db", settings=cfg, embedder=HashingEmbedder()) as mem:
        refs = fill(mem, count)
        for i in sorted(dropped):
            if i < count:
                mem.forget(refs[i], reason="test", scope=SCOPE)
        kept = [r for i, r in enumerate(refs) if i not in dropped]
        assert walk(mem, size) == list(reversed(kept))
        assert mem.list_memories(scope=SCOPE, size=size).total == len(kept)


def test_one_tag_pages_like_any_filter(mem: Cairn) -> None:
    refs = fill(mem, 15)
    odd = [r for i, r in enumerate(refs) if i % 2]
    assert walk(mem, 2, tags=["odd"]) == list(reversed(odd))
    assert walk(mem, 3, tags=["odd", "even"]) == list(reversed(refs))
    assert mem.list_memories(scope=SCOPE, tags=["odd"]).total == len(odd)


def test_counts_stop_at_the_limit(mem: Cairn) -> None:
    fill(mem, 8)
    filt = MemoryFilter(scopes=(SCOPE,), statuses=("active", "resting"))
    assert mem.store.count_memories(filt, at_most=5) == 5
    assert mem.store.count_memories(filt, at_most=50) == 8
    tagged = MemoryFilter(scopes=(SCOPE,), tags=("odd",))
    assert mem.store.count_memories(tagged, at_most=2) == 2
    assert not mem.list_memories(scope=SCOPE).at_least
