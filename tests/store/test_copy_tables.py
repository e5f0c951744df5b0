"""Whole-store copy at the store level, on both backends: every table and every neutral kind
round-trips, sequences move past copied ids, collisions are conflicts, and no table is left
out of the copy by accident."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from cairn.errors import Conflict, InvalidInput
from cairn.store.base import MemoryFilter, Store
from cairn.store.sqlite.store import SqliteStore
from cairn.store.tables import NOT_COPIED, TABLES, Table, table_sum, time_text, vector_text
from storekit import SCOPE, T0, at, new_memory

_FTS_SHADOW = re.compile(r"^lexical_(data|idx|content|docsize|config)$")
VECTOR = [0.25, -1.5, 3.0e-8, 7.0]


def nullable_columns(tmp_path: Path) -> dict[str, set[str]]:
    """Which columns may be NULL, as SQLite's schema says (PostgreSQL's says the same)."""
    path = tmp_path / "schema.db"
    SqliteStore(str(path)).close()
    found: dict[str, set[str]] = {}
    with sqlite3.connect(path) as conn:
        for spec in TABLES:
            rows = conn.execute(f"PRAGMA table_info({spec.name})").fetchall()
            found[spec.name] = {row[1] for row in rows if not row[3] and not row[5]}
    found["lexical"] = set()  # FTS5 declares no constraints; documents are never NULL
    return found


def value(spec: Table, column: str, kind: str, i: int) -> Any:
    if column == "dims":
        return len(VECTOR)
    if column in spec.key or kind == "int":
        return i + 1 if kind == "int" else f"key-{i}-é"
    return {
        "real": 0.1 + i,
        "text": f"row {i}: é 🙂 ' \" \\ %_ \t\n end",
        "bool": i % 2 == 0,
        "time": time_text(at(i * 61.5)),
        "json": {"b": [1, 2.5, "ü", None], "a": {"nested": True}, "i": i},
        "texts": ["x", f"ÿ {i}", ""],
        "ints": [i, i + 10],
        "vector": vector_text([*VECTOR[:-1], float(i)]),
    }[kind]


def synthetic_rows(spec: Table, nullable: set[str], count: int = 3) -> list[dict[str, Any]]:
    rows = [{c.name: value(spec, c.name, c.kind, i) for c in spec.columns} for i in range(count)]
    # One more row with every nullable column NULL.
    last = {c.name: value(spec, c.name, c.kind, count) for c in spec.columns}
    rows.append({name: None if name in nullable else v for name, v in last.items()})
    return rows


def physical_tables(store: Store, url: str) -> set[str]:
    if store.backend == "sqlite":
        with sqlite3.connect(url) as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return {r[0] for r in rows if not _FTS_SHADOW.match(r[0])}
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
    return {r[0] for r in rows}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def located(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A fresh store and the path or URL it was opened at."""
    if request.param == "sqlite":
        url = str(tmp_path / "copy.db")
        opened: Store = SqliteStore(url)
    else:
        from cairn.store.postgres import PostgresStore

        url = request.getfixturevalue("postgres_database_url")
        opened = PostgresStore(url)
    try:
        yield opened, url
    finally:
        opened.close()


def test_every_table_is_copied_or_known_to_be_derived(located: tuple[Store, str]) -> None:
    store, url = located
    unknown = physical_tables(store, url) - {spec.name for spec in TABLES} - NOT_COPIED
    assert unknown == set(), "add these tables to cairn.store.tables.TABLES (or NOT_COPIED)"
    assert store.table_names() == [spec.name for spec in TABLES]


def test_every_table_and_kind_round_trips(located: tuple[Store, str], tmp_path: Path) -> None:
    store, _ = located
    nullable = nullable_columns(tmp_path)
    expected = {spec.name: synthetic_rows(spec, nullable[spec.name]) for spec in TABLES}
    with store.transaction():
        for spec in TABLES:
            store.load_rows(spec.name, expected[spec.name])
    store.finish_load()
    for spec in TABLES:
        assert list(store.dump_table(spec.name)) == expected[spec.name], spec.name
        assert store.count_rows(spec.name) == len(expected[spec.name])
        assert table_sum(store.dump_table(spec.name)) == table_sum(expected[spec.name])


def test_dumps_page_by_key(located: tuple[Store, str], tmp_path: Path) -> None:
    store, _ = located
    nullable = nullable_columns(tmp_path)
    for name in ("memories", "assessments", "page_files"):
        spec = next(s for s in TABLES if s.name == name)
        rows = synthetic_rows(spec, nullable[name], count=7)
        store.load_rows(name, rows)
        first = list(store.dump_table(name, limit=3))
        rest = list(store.dump_table(name, after=spec.key_of(first[-1])))
        assert first + rest == rows and len(first) == 3


def test_loaded_rows_are_found_by_search_and_tags(located: tuple[Store, str]) -> None:
    store, _ = located
    memory = {**_memory_row(5), "tags": ["deploy"]}
    store.load_rows("memories", [memory])
    store.load_rows(
        "vectors", [{"memory_id": 5, "identity": "e/4", "dims": 4, "vector": vector_text(VECTOR)}]
    )
    doc = {"memory_id": 5, "content": "deploy stage", "tags": "deploy", "source_ref": "",
           "reason": "", "context": ""}  # fmt: skip
    store.load_rows("lexical", [doc])
    store.finish_load()
    filt = MemoryFilter((SCOPE,), tags=("deploy",))
    assert [i for i, _ in store.nearest(filt, "e/4", np.asarray(VECTOR, np.float32), 3)] == [5]
    assert [r.memory_id for r in store.lexical_candidates(filt, ["stage"], 5)] == [5]
    assert store.lexical_stats(filt, ["stage"]).document_frequency == {"stage": 1}


def test_ids_and_sequences_move_past_copied_rows(located: tuple[Store, str]) -> None:
    store, _ = located
    store.load_rows("memories", [_memory_row(40)])
    assert store.sequences()["memories"] >= 40
    assert store.add_memory(new_memory()) == 41
    store.advance_sequences({"memories": 100, "events": 7})
    assert store.add_memory(new_memory()) == 101
    assert store.sequences()["events"] == 7
    store.advance_sequences({"memories": 50})  # never moves a sequence back
    assert store.add_memory(new_memory()) == 102


def test_a_row_that_collides_is_a_conflict(located: tuple[Store, str]) -> None:
    store, _ = located
    store.load_rows("memories", [_memory_row(3)])
    with pytest.raises(Conflict, match="collides"):
        store.load_rows("memories", [_memory_row(4), _memory_row(3)])
    assert [row["id"] for row in store.dump_table("memories")] == [3]
    doc = {"memory_id": 3, "content": "a", "tags": "", "source_ref": "", "reason": "",
           "context": ""}  # fmt: skip
    store.load_rows("lexical", [doc])
    with pytest.raises(Conflict, match="collides"):
        store.load_rows("lexical", [{**doc, "content": "b"}])
    assert [row["content"] for row in store.dump_table("lexical")] == ["a"]


def test_rows_of_another_shape_or_unreadable_values_are_refused(
    located: tuple[Store, str],
) -> None:
    store, _ = located
    with pytest.raises(InvalidInput, match="expected"):
        store.load_rows("memories", [{**_memory_row(1), "colour": "red"}])
    with pytest.raises(InvalidInput, match="written_at"):
        store.load_rows("memories", [{**_memory_row(1), "written_at": "yesterday"}])
    with pytest.raises(InvalidInput, match="not a table"):
        store.load_rows("nonsense", [{}])
    assert store.count_rows("memories") == 0


def test_meta_holds_an_identity_and_notes(located: tuple[Store, str]) -> None:
    store, _ = located
    identity = store.get_meta("store_id")
    assert identity and re.fullmatch(r"[0-9a-f]{32}", identity)
    assert store.get_meta("note") is None
    store.set_meta("note", "é one")
    store.set_meta("note", "two")
    assert store.get_meta("note") == "two"
    store.set_meta("note", None)
    assert store.get_meta("note") is None


def _memory_row(memory_id: int) -> dict[str, Any]:
    spec = next(s for s in TABLES if s.name == "memories")
    row: dict[str, Any] = dict.fromkeys(spec.names)
    row.update(
        id=memory_id, scope=SCOPE, type="fact", content=f"memory {memory_id}", summary="s",
        durability="semantic", weight=0.5, tags=[], pinned=False, diff_files=[],
        content_hash=f"h{memory_id}", written_at=time_text(T0), occurred_at=time_text(T0),
        status="active", confirmed=0, cited=0, contradicted=0, evidence={}, access_count=0,
    )  # fmt: skip
    return row
