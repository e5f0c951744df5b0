"""The lessons part of the `Store` contract (migration 0005), the same on SQLite and PostgreSQL:
citations by path, lessons given per session, mute rules, agent sessions."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.models import NewMemory
from cairn.records.code import CitationRow
from cairn.records.lessons import GivenLesson
from cairn.store.base import Store
from cairn.store.sqlite.store import SqliteStore

if str(Path(__file__).parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parents[1]))

from storekit import new_memory

T0 = datetime(2026, 8, 1, 12, tzinfo=UTC)
SCOPE = "project:example/api"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened: Store
    if request.param == "sqlite":
        opened = SqliteStore(str(tmp_path / "memory.db"))
    else:
        from cairn.store.postgres import PostgresStore

        opened = PostgresStore(request.getfixturevalue("postgres_database_url"))
    try:
        yield opened
    finally:
        opened.close()


def cite(store: Store, path: str, *, scope: str = SCOPE, memory: NewMemory | None = None) -> int:
    memory_id = store.add_memory(memory or new_memory(content=path, scope=scope))
    store.put_citation(
        CitationRow(
            memory_id, scope, "lines", path, None, None, "/repo", 1, 2, "d", ("a",), (), (), "f", T0
        )
    )
    return memory_id


def test_citations_on_paths(store: Store) -> None:
    exact = cite(store, "src/app.py")
    nested = cite(store, "src/billing/charge.py")
    globbed = cite(store, "migrations/*.sql")
    cite(store, "src/app.py", scope="project:example/other")
    cite(store, "docs/a.md")
    retired = cite(store, "src/app.py")
    store.update_memory(retired, {"status": "retired", "until": T0})
    found = {r.memory_id for r in store.citations_on_paths([SCOPE], ["src/app.py", "src"], [])}
    assert found == {exact, globbed}
    under = {r.memory_id for r in store.citations_on_paths([SCOPE], [], ["src/billing/"])}
    assert under == {nested, globbed}
    assert {r.memory_id for r in store.citations_on_paths([SCOPE], [], ["sr"])} == {globbed}


def test_given_lessons_per_session(store: Store) -> None:
    rows = [GivenLesson("s1", "mem_1", "src/app.py", "note", SCOPE, T0),
            GivenLesson("s1", "mem_1", "src/app.py", "question", SCOPE, T0),
            GivenLesson("s2", "proc_3", "npm publish", "note", SCOPE, T0)]  # fmt: skip
    store.add_given_lessons(rows)
    store.add_given_lessons([replace(rows[0], at=T0 + timedelta(minutes=1))])  # ignored
    assert store.given_lessons("s1") == rows[:2]
    assert store.given_lessons("nobody") == []
    assert store.forget_given_lessons("s1") == 2
    assert store.given_lessons("s1") == [] and store.given_lessons("s2") == rows[2:]


def test_mute_rules(store: Store) -> None:
    rule, created = store.add_mute(SCOPE, "type", "warning", T0, "cli")
    assert created and rule.scope == SCOPE and rule.value == "warning" and rule.created_at == T0
    again, created_again = store.add_mute(SCOPE, "type", "warning", T0, "cli")
    assert again == rule and not created_again
    store.add_mute("global", "path", "docs/**", T0, None)
    store.add_mute("project:example/other", "tag", "x", T0, None)
    assert [(r.scope, r.kind) for r in store.mute_rules([SCOPE, "global"])] == [
        (SCOPE, "type"), ("global", "path"),
    ]  # fmt: skip
    assert store.remove_mute(SCOPE, "type", "warning") is True
    assert store.remove_mute(SCOPE, "type", "warning") is False


def test_lesson_sessions(store: Store) -> None:
    assert store.lesson_session("s1") is None
    store.touch_lesson_session("s1", SCOPE, T0, changed=False)
    state = store.lesson_session("s1")
    assert state is not None and not state.owes_reminder and state.scope == SCOPE
    store.touch_lesson_session("s1", None, T0 + timedelta(minutes=1), changed=True)
    state = store.lesson_session("s1")
    assert state is not None and state.owes_reminder and state.scope == SCOPE
    store.mark_reminded("s1", T0 + timedelta(minutes=2))
    state = store.lesson_session("s1")
    assert state is not None and not state.owes_reminder
    store.touch_lesson_session("s1", None, T0 + timedelta(minutes=3), changed=False)
    assert not store.lesson_session("s1").owes_reminder  # type: ignore[union-attr]
    store.touch_lesson_session("s1", None, T0 + timedelta(minutes=4), changed=True)
    assert not store.lesson_session("s1").owes_reminder  # type: ignore[union-attr]  # once only
