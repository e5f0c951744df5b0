"""The dialects the shared queries run through: placeholders, codecs, lists and chunks.

The value codecs are checked as round trips (what a dialect writes, it reads back unchanged);
the list matching on a real store, with id lists longer than SQLite's chunk, duplicated ids and
ids that name nothing, on both backends (`store`).
"""

from __future__ import annotations

import math
from dataclasses import fields
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from cairn.models import Memory
from cairn.store.base import MemoryFilter, Store
from cairn.store.postgres.dialect import POSTGRES
from cairn.store.sql.dialect import Sql
from cairn.store.sql.filters import filter_sql
from cairn.store.sql.rows import MEMORY_FIELDS
from cairn.store.sqlite.dialect import SQLITE
from cairn.store.sqlite.store import SqliteStore
from storekit import SCOPE, new_memory

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
moments = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


@given(st.lists(st.integers(), max_size=1300))
def test_chunks_keep_every_value_in_order_and_respect_the_limit(values: list[int]) -> None:
    for dialect in (SQLITE, POSTGRES):
        parts = list(dialect.chunks(values))
        assert [v for part in parts for v in part] == values
        assert all(part for part in parts)
        if dialect.chunk:
            assert all(len(part) <= dialect.chunk for part in parts)
        else:
            assert len(parts) == (1 if values else 0)


@given(st.lists(st.integers(1, 10**9), min_size=1, max_size=40))
def test_among_binds_every_value_once(values: list[int]) -> None:
    condition, params = SQLITE.among("m.id", values)
    assert condition.count("?") == len(values) and params == values
    condition, params = POSTGRES.among("m.id", values, "bigint")
    assert condition == "m.id = ANY(?::bigint[])" and params == [values]


def read_back(translated: str) -> str:
    """How psycopg reads a statement: `%%` is a literal `%`, `%s` a parameter."""
    out, i = [], 0
    while i < len(translated):
        pair = translated[i : i + 2]
        assert translated[i] != "%" or pair in ("%%", "%s"), translated
        out.append({"%%": "%", "%s": "?"}.get(pair, translated[i]))
        i += 2 if pair in ("%%", "%s") else 1
    return "".join(out)


@given(st.text(alphabet=st.sampled_from("?%s( )'x")))
def test_postgres_placeholders_leave_no_stray_percent(text: str) -> None:
    assert read_back(POSTGRES.sql(text)) == text


@given(moments)
def test_sqlite_times_round_trip_to_the_microsecond(moment: datetime) -> None:
    assert SQLITE.read_time(SQLITE.time(moment)) == moment
    assert SQLITE.read_opt_time(SQLITE.opt_time(None)) is None


@given(json_values)
def test_sqlite_json_round_trips(value: Any) -> None:
    assert SQLITE.read_json(SQLITE.json(value)) == value
    assert SQLITE.read_json(SQLITE.json(value, sort=False)) == value


@given(st.lists(st.text(), max_size=8))
def test_list_columns_round_trip(items: list[str]) -> None:
    assert SQLITE.read_texts(SQLITE.texts(items)) == tuple(items)
    assert POSTGRES.read_texts(POSTGRES.texts(items)) == tuple(items)


@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=16))
def test_plain_vectors_round_trip_bit_for_bit(values: list[float]) -> None:
    vector = np.asarray(values, dtype=np.float32)
    for dialect in (SQLITE, POSTGRES):
        back = dialect.read_vector(dialect.vector(vector))
        assert back.dtype == np.float32 and back.tobytes() == vector.tobytes()


def test_postgres_reads_times_back_in_utc() -> None:
    east = datetime(2026, 3, 1, 12, tzinfo=UTC).astimezone(timezone(timedelta(hours=5)))
    assert POSTGRES.read_time(east).tzinfo is UTC
    assert POSTGRES.read_time(east) == east
    assert POSTGRES.time(datetime(2026, 3, 1, 12)).tzinfo is UTC  # naive means UTC


def test_a_filter_binds_one_parameter_per_mark() -> None:
    filt = MemoryFilter(
        scopes=("a", "b"),
        statuses=("active", "resting"),
        types=("fact",),
        tags=("x", "y", "z"),
        since=datetime(2026, 1, 1, tzinfo=UTC),
        until=datetime(2026, 2, 1, tzinfo=UTC),
    )
    for dialect in (SQLITE, POSTGRES):
        where, params = filter_sql(dialect, filt)
        assert where.count("?") == len(params)
    where, params = filter_sql(SQLITE, MemoryFilter(scopes=("a",), as_of=filt.since))
    assert where.count("?") == len(params) == 3


def test_reads_in_chunks_find_exactly_the_stored_rows(store: Store) -> None:
    stored = [
        store.add_memory(new_memory(content=f"row {i}", content_hash=f"h{i}")) for i in range(5)
    ]
    wanted = [*range(-3, 1200), *stored, stored[0]]  # past SQLite's 500, repeats, strangers
    found = store.get_memories(wanted)
    assert [m.id for m in found] == [i for i in wanted if i in set(stored)]
    assert store.filter_ids(MemoryFilter(scopes=(SCOPE,)), wanted) == set(stored)
    assert set(store.occurred_times(wanted)) == set(stored)
    assert store.get_events(list(range(1, 1200))) == []


@hypothesis_settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1).filter(lambda t: "\x00" not in t), weight=st.floats(0, 1))
def test_memory_text_round_trips_through_the_shared_rows(
    tmp_path: Path, text: str, weight: float
) -> None:
    store = SqliteStore(str(tmp_path / "dialect.db"))
    try:
        memory_id = store.add_memory(
            new_memory(content=text, summary=text[:40], tags=(text[:8],), weight=weight)
        )
        (memory,) = store.get_memories([memory_id])
        assert memory.content == text and memory.tags == (text[:8],)
        assert math.isclose(memory.weight, weight)
        sql = Sql(store._db, SQLITE)  # type: ignore[attr-defined]
        assert sql.one("SELECT content FROM memories WHERE id = ?", (memory_id,)) == (text,)
    finally:
        store.close()


def test_memory_columns_are_the_memory_fields_in_order() -> None:
    # memory_from_row builds a Memory positionally from a row of MEMORY_COLUMNS.
    assert tuple(f.name for f in fields(Memory)) == MEMORY_FIELDS
