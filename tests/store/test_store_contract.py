"""The `Store` contract: every test runs unchanged on SQLite and on PostgreSQL (`store` fixture)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest

from cairn.errors import InvalidInput
from cairn.models import Event
from cairn.records.sessions import Relation
from cairn.store import open_store
from cairn.store.base import Indexed, LexicalDoc, MemoryFilter, NearSearch, Store
from storekit import (
    IDENTITY,
    OTHER,
    SCOPE,
    active,
    as_stored,
    at,
    doc,
    new_event,
    new_memory,
    unit,
)


# memories -----------------------------------------------------------------------------------
def test_memory_round_trips_exactly(store: Store) -> None:
    new = new_memory(
        content="Ünïcödé ✓ emoji 🧭🚀 and CJK 日本語 — " + "long text " * 3000,
        summary="résumé 🧭",
        tags=("naïve", "🏷", "db"),
        reason="because ☃",
        source_ref="src/app.py:10-24",
        pinned=True,
        branch="feature/ü",
        session_id="sess-1",
        source_event_id=7,
        diff_text="--- a\n+++ b\n",
        diff_files=("a.py", "b/ç.py"),
        error_trace="Traceback…",
        integration="claude-code",
        written_at=datetime(2026, 1, 2, 3, 4, 5, 999999, tzinfo=UTC),
        occurred_at=datetime(1999, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
        weight=0.123456789012345,
        replaces=3,
    )
    memory_id = store.add_memory(new)
    [got] = store.get_memories([memory_id])
    assert got == as_stored(memory_id, new)
    assert got.written_at.tzinfo is UTC and got.occurred_at.utcoffset() == timedelta(0)


def test_a_memory_added_with_its_event_names_it_and_is_named_by_it(store: Store) -> None:
    before = store.add_memory(new_memory(content="before"))
    new = new_memory(content="with its event", tags=("db", "ops"), session_id="s1", replaces=2)
    memory_id, event_id = store.add_memory_with_event(
        new, lambda made: new_event(memory_id=made, payload={"content": "with its event"})
    )
    assert memory_id > before
    [got] = store.get_memories([memory_id])
    assert got == as_stored(memory_id, replace(new, source_event_id=event_id))
    [event] = store.get_events([event_id])
    assert event == Event(
        id=event_id, kind="remember", scope=SCOPE, session_id="s1", at=new_event().at,
        integration="python", memory_id=memory_id, payload={"content": "with its event"},
    )  # fmt: skip
    tagged = store.filter_ids(active(tags=("ops",)), [before, memory_id])
    assert tagged == {memory_id}  # the tag rows filters read
    assert store.add_memory(new_memory(content="after")) > memory_id  # the sequences moved on
    assert store.add_event(new_event()) > event_id


def test_a_memory_added_with_links_is_related_to_them(store: Store) -> None:
    older, other = (store.add_memory(new_memory(content=c)) for c in ("older", "other"))
    new = new_memory(content="newer")
    links = [(other, "relates_to"), (older, "may_update"), (other, "relates_to")]
    memory_id, _ = store.add_memory_with_event(
        new, lambda made: new_event(memory_id=made), links=links
    )
    found = store.relations_of([memory_id])
    assert len(found) == 2  # the same link twice is one relation
    assert set(found) == {
        Relation(memory_id, other, "relates_to"),
        Relation(memory_id, older, "may_update"),
    }
    unlinked, _ = store.add_memory_with_event(new_memory(), lambda made: new_event(memory_id=made))
    assert store.relations_of([unlinked]) == []


def test_a_memory_added_indexed_is_found_by_its_vector_and_its_words_at_once(
    store: Store,
) -> None:
    plain = store.add_memory(new_memory(content="plain"))
    store.put_vector(plain, IDENTITY, unit(0, 1, 0))
    vector = unit(1, 0.2, 0)
    new = new_memory(content="The gateway retries twice", tags=("net",))
    memory_id, event_id = store.add_memory_with_event(
        new,
        lambda made: new_event(memory_id=made),
        Indexed(IDENTITY, vector, doc("gateway retri twice", tags="net")),
    )
    [got] = store.get_memories([memory_id])
    assert got == as_stored(memory_id, replace(new, source_event_id=event_id))
    assert np.array_equal(store.get_vectors([memory_id], IDENTITY)[memory_id], vector)
    [(nearest, similarity)] = store.nearest(active(), IDENTITY, unit(1, 0.2, 0), 1)
    assert nearest == memory_id and similarity == pytest.approx(1.0, abs=1e-6)
    rows = store.lexical_candidates(active(), ["retri"], 10)
    assert [(row.memory_id, row.doc.content, row.doc.tags) for row in rows] == [
        (memory_id, "gateway retri twice", "net")
    ]
    assert store.lexical_stats(active(), ["gateway"]).document_frequency == {"gateway": 1}
    assert [m.id for m in store.get_memories([plain])] == [plain]  # nothing else moved


def test_resembling_gives_the_same_content_or_the_close_memories_of_the_scope(
    store: Store,
) -> None:
    def added(content: str, vector: np.ndarray, scope: str = SCOPE) -> int:
        memory_id = store.add_memory(new_memory(content=content, scope=scope))
        store.put_vector(memory_id, IDENTITY, vector)
        return memory_id

    query = unit(1, 0, 0, 0)
    closest = added("closest", unit(1, 0.1, 0, 0))
    resting = added("resting", unit(1, 0.3, 0, 0))
    store.update_memory(resting, {"status": "resting"})
    far = added("far", unit(0.2, 1, 0, 0))
    retired = added("retired", unit(1, 0.05, 0, 0))
    store.update_memory(retired, {"status": "retired"})
    added("elsewhere", query, scope=OTHER)

    def search(k: int = 5, at_least: float = 0.5) -> NearSearch:
        return NearSearch(IDENTITY, lambda: query, k, at_least)

    found = store.resembling(SCOPE, "h-none", search())
    assert found.same is None
    assert [(m.id, m.content) for m, _ in found.near] == [
        (closest, "closest"),
        (resting, "resting"),
    ]
    assert [round(cosine, 4) for _, cosine in found.near] == [
        round(float(unit(1, 0.1, 0, 0) @ query), 4), round(float(unit(1, 0.3, 0, 0) @ query), 4)
    ]  # fmt: skip
    assert far not in {m.id for m, _ in store.resembling(SCOPE, "h-x", search(5, 0.3)).near}
    assert [m.id for m, _ in store.resembling(SCOPE, "h-x", search(1, 0.0)).near] == [closest]
    asked: list[str] = []

    def vector_asked() -> np.ndarray:
        asked.append("vector")
        return query

    same = store.resembling(SCOPE, "h-far", NearSearch(IDENTITY, vector_asked, 5, 0.5))
    assert same.same is not None and same.same.id == far and same.near == ()
    assert asked == []  # a restatement never waits for its vector
    assert store.resembling(SCOPE, "h-retired", search()).same is None


def test_naive_and_offset_times_are_stored_as_utc(store: Store) -> None:
    aware = datetime(2026, 3, 1, 14, 0, tzinfo=UTC)
    offset = aware.astimezone(timezone(timedelta(hours=5, minutes=30)))
    memory_id = store.add_memory(
        new_memory(written_at=offset, occurred_at=aware.replace(tzinfo=None))
    )
    [got] = store.get_memories([memory_id])
    assert got.written_at == aware and got.occurred_at == aware
    assert got.written_at.utcoffset() == timedelta(0)


def test_get_memories_keeps_the_asked_order_and_skips_unknown_ids(store: Store) -> None:
    ids = [store.add_memory(new_memory(content=f"m{i}")) for i in range(3)]
    got = store.get_memories([ids[2], 999_999, ids[0], ids[2]])
    assert [m.id for m in got] == [ids[2], ids[0], ids[2]]
    assert store.get_memories([]) == []


def test_update_memory_changes_every_updatable_field(store: Store) -> None:
    memory_id = store.add_memory(new_memory(tags=("old",)))
    changes: dict[str, Any] = {
        "status": "retired",
        "until": at(5),
        "replaced_by": 42,
        "weight": 0.9,
        "pinned": True,
        "access_count": 3,
        "last_accessed_at": at(6),
        "confirmed": 1,
        "cited": 2,
        "contradicted": 4,
        "evidence": {"confirmed_by": ["evt_1"], "note": "ünï"},
        "last_cited_at": at(7),
        "content": "new content ✓",
        "summary": "new summary",
        "reason": "new reason",
        "diff_text": "diff",
        "error_trace": "trace",
        "tags": ("new", "tags"),
        "source_ref": "x.py",
        "source_event_id": 9,
    }
    store.update_memory(memory_id, changes)
    [got] = store.get_memories([memory_id])
    for name, value in changes.items():
        assert getattr(got, name) == value, name
    store.update_memory(memory_id, {"until": None, "replaced_by": None, "reason": None})
    [got] = store.get_memories([memory_id])
    assert got.until is None and got.replaced_by is None and got.reason is None


def test_update_memory_refuses_unknown_fields_and_ignores_empty_changes(store: Store) -> None:
    memory_id = store.add_memory(new_memory())
    with pytest.raises(InvalidInput):
        store.update_memory(memory_id, {"scope": "elsewhere"})
    store.update_memory(memory_id, {})
    assert store.get_memories([memory_id])[0].scope == SCOPE


def test_updating_tags_rewrites_the_tag_filter(store: Store) -> None:
    memory_id = store.add_memory(new_memory(tags=("a", "b")))
    assert store.filter_ids(active(tags=("a",)), [memory_id]) == {memory_id}
    store.update_memory(memory_id, {"tags": ("b", "c")})
    assert store.filter_ids(active(tags=("a",)), [memory_id]) == set()
    assert store.filter_ids(active(tags=("c",)), [memory_id]) == {memory_id}
    store.update_memory(memory_id, {"tags": ()})
    assert store.filter_ids(active(tags=("b", "c")), [memory_id]) == set()


def test_increment_adds_to_counters_only(store: Store) -> None:
    memory_id = store.add_memory(new_memory())
    store.increment(memory_id, "access_count")
    store.increment(memory_id, "access_count", 4)
    store.increment(memory_id, "cited", 2)
    [got] = store.get_memories([memory_id])
    assert (got.access_count, got.cited, got.confirmed) == (5, 2, 0)
    with pytest.raises(InvalidInput):
        store.increment(memory_id, "weight")


def test_find_current_by_hash_sees_only_current_memories_of_the_scope(store: Store) -> None:
    first = store.add_memory(new_memory(content_hash="same"))
    store.add_memory(new_memory(content_hash="same", scope=OTHER))
    assert store.find_current_by_hash(SCOPE, "same").id == first  # type: ignore[union-attr]
    store.update_memory(first, {"status": "resting"})
    assert store.find_current_by_hash(SCOPE, "same").id == first  # type: ignore[union-attr]
    store.update_memory(first, {"status": "retired"})
    assert store.find_current_by_hash(SCOPE, "same") is None
    second = store.add_memory(new_memory(content_hash="same"))
    store.update_memory(second, {"until": at(1)})
    assert store.find_current_by_hash(SCOPE, "same") is None
    assert store.find_current_by_hash("nowhere", "same") is None


def test_filter_ids_applies_every_filter_field(store: Store) -> None:
    a = store.add_memory(new_memory(content="a", type="fact", tags=("db",), occurred_at=at(0)))
    b = store.add_memory(new_memory(content="b", type="task", tags=("ui",), occurred_at=at(10)))
    c = store.add_memory(new_memory(content="c", scope=OTHER, occurred_at=at(20)))
    d = store.add_memory(new_memory(content="d", occurred_at=at(30)))
    store.update_memory(d, {"status": "resting"})
    ids = [a, b, c, d, 123_456]
    assert store.filter_ids(active(), ids) == {a, b}
    assert store.filter_ids(active(SCOPE, OTHER), ids) == {a, b, c}
    assert store.filter_ids(active(statuses=("active", "resting")), ids) == {a, b, d}
    assert store.filter_ids(active(types=("task",)), ids) == {b}
    assert store.filter_ids(active(tags=("db", "ui")), ids) == {a, b}
    assert store.filter_ids(active(tags=("none",)), ids) == set()
    assert store.filter_ids(active(since=at(10)), ids) == {b}
    assert store.filter_ids(active(until=at(5)), ids) == {a}
    assert store.filter_ids(active(since=at(0), until=at(10)), ids) == {a, b}
    assert store.filter_ids(MemoryFilter(scopes=()), ids) == set()
    assert store.filter_ids(active(), []) == set()


def test_as_of_sees_what_was_believed_then(store: Store) -> None:
    old = store.add_memory(new_memory(content="old", written_at=at(0)))
    new = store.add_memory(new_memory(content="new", written_at=at(10), replaces=old))
    store.update_memory(old, {"until": at(10), "replaced_by": new, "status": "active"})
    gone = store.add_memory(new_memory(content="gone", written_at=at(0)))
    store.update_memory(gone, {"status": "purged"})
    retired = store.add_memory(new_memory(content="retired", written_at=at(0)))
    store.update_memory(retired, {"status": "retired", "until": at(20)})
    ids = [old, new, gone, retired]
    assert store.filter_ids(MemoryFilter(scopes=(SCOPE,), as_of=at(5)), ids) == {old, retired}
    assert store.filter_ids(MemoryFilter(scopes=(SCOPE,), as_of=at(10)), ids) == {new, retired}
    assert store.filter_ids(MemoryFilter(scopes=(SCOPE,), as_of=at(25)), ids) == {new}
    assert store.filter_ids(MemoryFilter(scopes=(SCOPE,), as_of=at(-1)), ids) == set()
    assert store.filter_ids(active(), ids) == {new}


def test_count_by_groups_and_restricts_to_scopes(store: Store) -> None:
    store.add_memory(new_memory(content="1", type="fact"))
    store.add_memory(new_memory(content="2", type="task"))
    store.add_memory(new_memory(content="3", type="task", scope=OTHER))
    assert store.count_by("type", None) == {"fact": 1, "task": 2}
    assert store.count_by("type", [SCOPE]) == {"fact": 1, "task": 1}
    assert store.count_by("scope", None) == {SCOPE: 2, OTHER: 1}
    assert store.count_by("status", []) == {}
    with pytest.raises(InvalidInput):
        store.count_by("content", None)


def test_iter_memories_returns_all_in_id_order(store: Store) -> None:
    with store.transaction():
        ids = [store.add_memory(new_memory(content=f"m{i}")) for i in range(520)]
    assert [m.id for m in store.iter_memories()] == ids


# events -------------------------------------------------------------------------------------
def test_events_round_trip_and_list_per_memory_newest_first(store: Store) -> None:
    ids = [store.add_event(new_event(memory_id=5, at=at(i))) for i in range(4)]
    other = store.add_event(new_event(memory_id=6))
    got = store.get_events([ids[1], 424242, ids[0]])
    assert [e.id for e in got] == [ids[1], ids[0]]
    assert got[0] == Event(
        id=ids[1], kind="remember", scope=SCOPE, session_id="s1", at=at(1),
        integration="python", memory_id=5, payload=new_event().payload,
    )  # fmt: skip
    later = store.add_event(new_event(memory_id=6))
    found = store.events_for_memories([5, 77, 6], limit=3)
    assert {k: [e.id for e in v] for k, v in found.items()} == {
        5: ids[::-1][:3],
        6: [later, other],
    }
    assert store.events_for_memories([], limit=3) == {}


def test_redact_events_keeps_purge_records(store: Store) -> None:
    keep = store.add_event(new_event(memory_id=5, kind="purge", payload={"why": "asked"}))
    hit = [store.add_event(new_event(memory_id=5)) for _ in range(2)]
    store.add_event(new_event(memory_id=6))
    assert store.redact_events(5, note="purged by user") == 2
    by_id = {e.id: e for e in store.get_events([keep, *hit])}
    assert by_id[keep].payload == {"why": "asked"}
    assert all(by_id[i].payload == {"redacted": "purged by user"} for i in hit)


def test_iter_events_returns_all_in_id_order(store: Store) -> None:
    with store.transaction():
        ids = [store.add_event(new_event(payload={"i": i})) for i in range(510)]
    assert [e.id for e in store.iter_events()] == ids


# vectors ------------------------------------------------------------------------------------
def test_vectors_round_trip_bit_exact_and_replace(store: Store) -> None:
    rng = np.random.default_rng(7)
    first = rng.standard_normal(4).astype(np.float32)
    second = rng.standard_normal(4).astype(np.float32)
    store.put_vector(1, IDENTITY, first)
    store.put_vector(2, IDENTITY, second)
    got = store.get_vectors([1, 2, 3], IDENTITY)
    assert set(got) == {1, 2} and np.array_equal(got[1], first) and got[1].dtype == np.float32
    store.put_vector(1, IDENTITY, second)
    assert np.array_equal(store.get_vectors([1], IDENTITY)[1], second)
    assert store.get_vectors([1], "other/4") == {}
    store.delete_vector(2)
    assert store.vector_identities() == {IDENTITY: 1}
    assert [(i, ident) for i, ident, _ in store.iter_vectors()] == [(1, IDENTITY)]


def _add_with_vector(store: Store, vector: np.ndarray, **overrides: Any) -> int:
    memory_id = store.add_memory(new_memory(**overrides))
    store.put_vector(memory_id, IDENTITY, vector)
    return memory_id


def test_nearest_orders_by_cosine_and_applies_the_filter(store: Store) -> None:
    close = _add_with_vector(store, unit(1, 0.1, 0, 0), content="close", tags=("db",))
    mid = _add_with_vector(store, unit(1, 1, 0, 0), content="mid", type="task", occurred_at=at(9))
    far = _add_with_vector(store, unit(0, 0, 1, 0), content="far")
    other = _add_with_vector(store, unit(1, 0, 0, 0), content="other", scope=OTHER)
    rest = _add_with_vector(store, unit(1, 0, 0, 0), content="rest")
    store.update_memory(rest, {"status": "resting"})
    query = unit(1, 0, 0, 0)
    hits = store.nearest(active(), IDENTITY, query, 10)
    assert [i for i, _ in hits] == [close, mid, far]
    assert hits[0][1] == pytest.approx(float(unit(1, 0.1, 0, 0) @ query), abs=1e-6)
    assert hits[2][1] == pytest.approx(0.0, abs=1e-6)
    assert [i for i, _ in store.nearest(active(), IDENTITY, query, 2)] == [close, mid]
    assert [i for i, _ in store.nearest(active(SCOPE, OTHER), IDENTITY, query, 1)] == [other]
    both = active(statuses=("active", "resting"))
    assert store.nearest(both, IDENTITY, query, 1)[0][0] == rest
    assert [i for i, _ in store.nearest(active(types=("task",)), IDENTITY, query, 5)] == [mid]
    assert [i for i, _ in store.nearest(active(tags=("db",)), IDENTITY, query, 5)] == [close]
    assert [i for i, _ in store.nearest(active(since=at(1)), IDENTITY, query, 5)] == [mid]
    assert [i for i, _ in store.nearest(active(until=at(1)), IDENTITY, query, 5)] == [close, far]
    assert store.nearest(active(), "unknown/4", query, 5) == []
    assert store.nearest(active("nowhere"), IDENTITY, query, 5) == []
    assert store.nearest(active(), IDENTITY, query, 0) == []


def test_nearest_as_of_sees_replaced_vectors(store: Store) -> None:
    old = _add_with_vector(store, unit(1, 0, 0, 0), content="old", written_at=at(0))
    new = _add_with_vector(store, unit(0, 1, 0, 0), content="new", written_at=at(10))
    store.update_memory(old, {"until": at(10), "replaced_by": new})
    query = unit(1, 0, 0, 0)
    assert [i for i, _ in store.nearest(active(), IDENTITY, query, 5)] == [new]
    then = MemoryFilter(scopes=(SCOPE,), as_of=at(5))
    assert [i for i, _ in store.nearest(then, IDENTITY, query, 5)] == [old]


def test_vectors_of_different_embedders_never_mix(store: Store) -> None:
    a = store.add_memory(new_memory(content="a"))
    b = store.add_memory(new_memory(content="b"))
    store.put_vector(a, "small/3", unit(1, 0, 0))
    store.put_vector(b, "large/5", unit(1, 0, 0, 0, 0))
    assert [i for i, _ in store.nearest(active(), "small/3", unit(1, 0, 0), 5)] == [a]
    assert [i for i, _ in store.nearest(active(), "large/5", unit(1, 0, 0, 0, 0), 5)] == [b]
    assert store.vector_identities() == {"small/3": 1, "large/5": 1}


# lexical ------------------------------------------------------------------------------------
def _add_with_doc(store: Store, lexical: LexicalDoc, **overrides: Any) -> int:
    memory_id = store.add_memory(new_memory(content=lexical.content, **overrides))
    store.put_lexical(memory_id, lexical)
    return memory_id


def test_lexical_candidates_share_a_term_and_respect_the_filter(store: Store) -> None:
    a = _add_with_doc(store, doc("deploy the api to stage", tags="ops"))
    b = _add_with_doc(store, doc("the web app", reason="deploy late"), type="task")
    _add_with_doc(store, doc("deploy elsewher"), scope=OTHER)
    _add_with_doc(store, doc("unrelated word"))
    rows = store.lexical_candidates(active(), ["deploy", "missing"], 10)
    assert {r.memory_id for r in rows} == {a, b}
    by_id = {r.memory_id: r.doc for r in rows}
    assert by_id[a] == doc("deploy the api to stage", tags="ops")
    assert by_id[b] == doc("the web app", reason="deploy late")
    assert [
        r.memory_id for r in store.lexical_candidates(active(types=("task",)), ["deploy"], 10)
    ] == [b]
    assert len(store.lexical_candidates(active(SCOPE, OTHER), ["deploy"], 10)) == 3
    assert len(store.lexical_candidates(active(), ["deploy"], 1)) == 1
    assert store.lexical_candidates(active(), [], 10) == []
    assert store.lexical_candidates(active(), ["absent"], 10) == []


def test_lexical_candidates_prefer_rare_terms_when_limited(store: Store) -> None:
    with store.transaction():
        for i in range(30):
            _add_with_doc(store, doc(f"common common filler{i}"))
        rare = _add_with_doc(store, doc("common zanzibar"))
    rows = store.lexical_candidates(active(), ["common", "zanzibar"], 1)
    assert [r.memory_id for r in rows] == [rare]


def test_lexical_documents_are_replaced_and_deleted(store: Store) -> None:
    memory_id = _add_with_doc(store, doc("first words"))
    store.put_lexical(memory_id, doc("second words"))
    assert store.lexical_candidates(active(), ["first"], 5) == []
    assert [r.memory_id for r in store.lexical_candidates(active(), ["second"], 5)] == [memory_id]
    store.delete_lexical(memory_id)
    assert store.lexical_candidates(active(), ["words"], 5) == []
    assert store.lexical_stats(active(), ["words"]).doc_count == 0


def test_lexical_stats_count_over_the_filter(store: Store) -> None:
    _add_with_doc(store, doc("alpha beta beta", tags="x y"))
    _add_with_doc(store, doc("alpha gamma", source_ref="src app py", reason="why"))
    _add_with_doc(store, doc("alpha alpha alpha alpha"), scope=OTHER)
    retired = _add_with_doc(store, doc("beta"))
    store.update_memory(retired, {"status": "retired"})
    stats = store.lexical_stats(active(), ["alpha", "beta", "delta", "alpha"])
    assert stats.doc_count == 2
    assert dict(stats.document_frequency) == {"alpha": 2, "beta": 1, "delta": 0}
    assert stats.average_length == {
        "content": 2.5, "tags": 1.0, "source_ref": 1.5, "reason": 0.5, "context": 0.0
    }  # fmt: skip
    empty = store.lexical_stats(active("nowhere"), ["alpha"])
    assert empty.doc_count == 0 and dict(empty.document_frequency) == {"alpha": 0}
    assert all(v == 0.0 for v in empty.average_length.values())


def test_lexical_stats_follow_every_write_including_another_handles(store: Store) -> None:
    # Both backends keep these statistics between recalls; no write may leave them stale.
    first = _add_with_doc(store, doc("alpha beta"))
    assert store.lexical_stats(active(), ["alpha"]).document_frequency == {"alpha": 1}
    second = _add_with_doc(store, doc("alpha"))
    assert store.lexical_stats(active(), ["alpha"]).doc_count == 2
    store.set_lexical_context(first, "gamma delta epsilon zeta")
    assert store.lexical_stats(active(), ["gamma"]).average_length["context"] == 2.0
    store.update_memory(second, {"status": "retired"})
    assert store.lexical_stats(active(), ["alpha"]).document_frequency == {"alpha": 1}
    tagged = active(tags=("ops",))
    assert store.lexical_stats(tagged, ["alpha"]).doc_count == 0
    store.update_memory(first, {"tags": ("ops",)})
    assert store.lexical_stats(tagged, ["alpha"]).doc_count == 1
    other = open_store(store.location)  # another process, as far as caches go
    try:
        _add_with_doc(other, doc("alpha again"))
    finally:
        other.close()
    assert store.lexical_stats(active(), ["alpha"]).document_frequency == {"alpha": 2}


def test_the_lexical_pool_is_the_candidates_their_statistics_and_a_wider_count(
    store: Store,
) -> None:
    _add_with_doc(store, doc("alpha beta", tags="x"))
    task = _add_with_doc(store, doc("alpha gamma"), type="task")
    _add_with_doc(store, doc("alpha delta"), scope=OTHER)
    _add_with_doc(store, doc("unrelated"))
    for filt, terms in (
        (active(), ["alpha", "beta"]),
        (active(types=("task",)), ["alpha"]),
        (active(SCOPE, OTHER), ["alpha", "delta"]),
    ):
        sized = MemoryFilter(scopes=filt.scopes)
        pool = store.lexical_pool(filt, terms, 2, sized)
        assert pool.rows == store.lexical_candidates(filt, terms, 2) and pool.rows
        assert pool.stats == store.lexical_stats(filt, terms)
        assert pool.sized == store.lexical_stats(sized, ()).doc_count
    assert [r.memory_id for r in store.lexical_pool(active(types=("task",)), ["alpha"], 5,
        MemoryFilter(scopes=(SCOPE,))).rows] == [task]  # fmt: skip
    nothing = store.lexical_pool(active(), ["absent"], 5, MemoryFilter(scopes=(SCOPE,)))
    assert (nothing.rows, nothing.stats, nothing.sized) == ([], None, 3)
    no_terms = store.lexical_pool(active(), [], 5, MemoryFilter(scopes=(SCOPE, OTHER)))
    assert (no_terms.rows, no_terms.stats, no_terms.sized) == ([], None, 4)
    # A write between two pools is seen by the next one.
    _add_with_doc(store, doc("alpha again"))
    again = store.lexical_pool(active(), ["alpha"], 10, MemoryFilter(scopes=(SCOPE,)))
    assert again.stats is not None and again.stats.document_frequency == {"alpha": 3}
    assert again.sized == 4 and len(again.rows) == 3


def test_lexical_terms_match_exactly_as_analysed(store: Store) -> None:
    # Terms reach the store folded and stemmed; whatever they are, they must match themselves.
    terms = ["привет", "日本語", "x2e", "007", "o'neil", "back\\slash", "ß"]
    memory_id = _add_with_doc(store, doc(" ".join(terms)))
    for term in terms:
        rows = store.lexical_candidates(active(), [term], 5)
        assert [r.memory_id for r in rows] == [memory_id], term
    assert store.lexical_candidates(active(), ["ss"], 5) == []
    assert store.lexical_stats(active(), terms).document_frequency == dict.fromkeys(terms, 1)


# whole-store copy ---------------------------------------------------------------------------
def test_import_keeps_ids_and_later_inserts_follow_them(store: Store) -> None:
    memory = replace(
        as_stored(0, new_memory(content="copied", tags=("t",))),
        id=40, status="retired", until=at(3), replaced_by=41, confirmed=2, cited=1,
        contradicted=1, evidence={"k": "v"}, last_cited_at=at(4), access_count=9,
        last_accessed_at=at(5),
    )  # fmt: skip
    store.import_memory(memory)
    event = Event(id=70, kind="remember", scope=SCOPE, session_id=None, at=at(1),
                  integration=None, memory_id=40, payload={"x": 1})  # fmt: skip
    store.import_event(event)
    assert store.get_memories([40]) == [memory]
    assert store.get_events([70]) == [event]
    assert store.filter_ids(MemoryFilter((SCOPE,), as_of=at(1), tags=("t",)), [40]) == {40}
    assert store.add_memory(new_memory(content="next")) > 40
    assert store.add_event(new_event()) > 70
    lower = replace(memory, id=3, until=None, status="active")
    store.import_memory(lower)
    assert store.add_memory(new_memory(content="after")) > 41
    assert store.filter_ids(active(tags=("t",)), [3]) == {3}


# transactions and concurrency ---------------------------------------------------------------
def test_a_failed_transaction_writes_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        memory_id = store.add_memory(new_memory())
        store.put_vector(memory_id, IDENTITY, unit(1, 0, 0, 0))
        with store.transaction():  # nested calls join the outer transaction
            store.put_lexical(memory_id, doc("words"))
        raise RuntimeError("boom")
    assert list(store.iter_memories()) == []
    assert store.vector_identities() == {}
    assert store.lexical_stats(active(), ["words"]).doc_count == 0
    with store.transaction():
        kept = store.add_memory(new_memory())
    assert [m.id for m in store.iter_memories()] == [kept]


def test_reads_inside_a_transaction_see_its_own_writes(store: Store) -> None:
    with store.transaction():
        memory_id = store.add_memory(new_memory(content_hash="mine"))
        assert store.find_current_by_hash(SCOPE, "mine") is not None
        assert store.filter_ids(active(), [memory_id]) == {memory_id}


def _run_in_threads(count: int, work: Callable[[int], None]) -> None:
    """Run `work(n)` on `count` threads at once; any exception fails the test."""
    with ThreadPoolExecutor(max_workers=count) as pool:
        for future in [pool.submit(work, n) for n in range(count)]:
            future.result()


def test_concurrent_writers_lose_nothing(store: Store) -> None:
    threads, writes = 8, 200

    def writer(n: int) -> None:
        for i in range(writes):
            with store.transaction():
                store.add_memory(new_memory(content=f"w{n}-{i}", content_hash=f"{n}-{i}"))

    _run_in_threads(threads, writer)
    memories = list(store.iter_memories())
    assert len(memories) == threads * writes
    assert len({m.id for m in memories}) == threads * writes
    expected = {f"{n}-{i}" for n in range(threads) for i in range(writes)}
    assert {m.content_hash for m in memories} == expected


def test_concurrent_dedup_checks_never_double_insert(store: Store) -> None:
    threads, hashes = 8, 25
    barrier = threading.Barrier(threads)

    def writer(_: int) -> None:
        barrier.wait()
        for h in range(hashes):
            with store.transaction():
                if store.find_current_by_hash(SCOPE, f"h{h}") is None:
                    store.add_memory(new_memory(content=f"c{h}", content_hash=f"h{h}"))

    _run_in_threads(threads, writer)
    stored = sorted(m.content_hash for m in store.iter_memories())
    assert stored == sorted(f"h{h}" for h in range(hashes))


def test_store_reports_backend_location_and_size(store: Store) -> None:
    store.add_memory(new_memory())
    assert store.backend in {"sqlite", "postgres"}
    assert store.location
    assert store.size_bytes() > 0


def test_touch_counts_one_access_each(store: Store) -> None:
    from datetime import UTC, datetime

    ids = [store.add_memory(new_memory(content=f"touch {i}")) for i in range(3)]
    at = datetime(2026, 9, 1, 8, 30, tzinfo=UTC)
    store.touch(ids[:2], at)
    store.touch(ids[:1], at)
    got = {m.id: m for m in store.get_memories(ids)}
    assert [got[i].access_count for i in ids] == [2, 1, 0]
    assert got[ids[0]].last_accessed_at == at and got[ids[2]].last_accessed_at is None
    store.touch([], at)
