"""Memory and event rows on either SQL backend: the `Store` methods that only persist and look
up. Dense search and the lexical index stay with each backend (`store/<backend>/store.py`).

A mixin of the SQL stores. Three hooks are the backend's: `_write_tags` (SQLite also moves its
statistics generation; PostgreSQL's triggers do that), `_filtered_columns_changed` (SQLite's
vector cache must reload) and `_memories_added` (PostgreSQL refreshes planner statistics).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput
from cairn.models import Event, Memory, NewEvent, NewMemory
from cairn.store.base import (
    COUNTER_FIELDS,
    UPDATABLE_FIELDS,
    EventFor,
    Indexed,
    LexicalDoc,
    Links,
    MemoryFilter,
    NearSearch,
    Resembling,
)
from cairn.store.sql.dialect import Run, Sql, assignments
from cairn.store.sql.filters import filter_sql
from cairn.store.sql.rows import (
    EVENTS,
    MEMORY_COLUMNS,
    NEW_EVENTS,
    encode_value,
    full_memory_params,
    memory_from_row,
    new_memory_params,
)
from cairn.store.sql.sessions import ADD_RELATION

T = TypeVar("T")
CURRENT_BY_HASH = (
    f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = ? AND content_hash = ? "
    "AND until IS NULL AND status IN ('active', 'resting') ORDER BY id LIMIT 1"
)
PAGE = 500  # rows per page when iterating a whole table
_BEFORE_ALL_IDS = -(2**63)
_COUNTABLE = frozenset({"type", "status", "scope", "durability"})
# Changing these columns changes what a dense or lexical filter admits.
FILTERED_COLUMNS = frozenset({"status", "until", "type", "occurred_at", "written_at"})


def resembled_filter(scope: str) -> MemoryFilter:
    """The memories a new claim of `scope` is compared with: its scope's active and resting."""
    return MemoryFilter(scopes=(scope,), statuses=("active", "resting"))


class MemoryRows(ABC):
    _sql: Sql

    @abstractmethod
    def _write_tags(self, run: Run, memory_id: int, tags: Sequence[str], *, new: bool) -> None:
        """Store a memory's tags the backend's way (SQLite keeps them in FTS5 too)."""

    def _filtered_columns_changed(self, run: Run) -> None:  # noqa: B027 - optional hook
        """A write changed a column in `FILTERED_COLUMNS`, or a copied memory arrived."""

    def _memories_added(self, count: int) -> None:  # noqa: B027 - optional hook
        """`count` memories were committed by this process."""

    # events -------------------------------------------------------------------------------
    def add_event(self, event: NewEvent) -> int:
        return self._sql.insert(NEW_EVENTS.insert(), NEW_EVENTS.values(self._sql.dialect, event))

    def get_events(self, ids: Sequence[int]) -> list[Event]:
        rows = self._sql.select_in(
            f"SELECT {EVENTS.columns} FROM events WHERE {{among}}", "id", ids
        )
        found = {int(row[0]): EVENTS.read(self._sql.dialect, row) for row in rows}
        return [found[i] for i in ids if i in found]

    def events_for_memories(
        self, memory_ids: Sequence[int], *, limit: int
    ) -> dict[int, list[Event]]:
        rows = self._sql.select_in(
            f"SELECT {EVENTS.columns} FROM (SELECT {EVENTS.columns}, row_number() OVER "
            "(PARTITION BY memory_id ORDER BY id DESC) AS n FROM events "
            "WHERE {among}) AS e WHERE n <= ? ORDER BY memory_id, id DESC",
            "memory_id",
            memory_ids,
            after=(limit,),
        )
        found: dict[int, list[Event]] = {}
        for row in rows:
            found.setdefault(int(row[6]), []).append(EVENTS.read(self._sql.dialect, row))
        return found

    def redact_events(self, memory_id: int, *, note: str) -> int:
        return self._sql.run(
            "UPDATE events SET payload = ? WHERE memory_id = ? AND kind <> 'purge'",
            (self._sql.dialect.json({"redacted": note}), memory_id),
        )

    def iter_events(self) -> Iterator[Event]:
        def read(row: Any) -> Event:
            return EVENTS.read(self._sql.dialect, row)

        return self._pages_of(f"SELECT {EVENTS.columns} FROM events", read, lambda e: e.id)

    # memories -----------------------------------------------------------------------------
    def add_memory(self, memory: NewMemory) -> int:
        params = new_memory_params(self._sql.dialect, memory)
        with self._sql.write() as run:
            memory_id = run.insert(
                f"INSERT INTO memories ({', '.join(params)}) VALUES ({_marks(params)})",
                list(params.values()),
            )
            self._write_tags(run, memory_id, memory.tags, new=True)
        self._memories_added(1)
        return memory_id

    def add_memory_with_event(
        self, memory: NewMemory, event: EventFor, indexed: Indexed | None = None, links: Links = ()
    ) -> tuple[int, int]:
        with self._sql.write() as run:
            memory_id = self.add_memory(memory)
            event_id = self.add_event(event(memory_id))
            self.update_memory(memory_id, {"source_event_id": event_id})
            if indexed is not None:
                self.put_vector(memory_id, indexed.identity, indexed.vector)
                self.put_lexical(memory_id, indexed.doc)
            at = self._sql.dialect.time(memory.written_at)
            for to_id, kind in links:
                run.execute(ADD_RELATION, (memory_id, to_id, kind, at))
        return memory_id, event_id

    @abstractmethod
    def put_vector(self, memory_id: int, identity: str, vector: Vector) -> None: ...

    @abstractmethod
    def put_lexical(self, memory_id: int, doc: LexicalDoc) -> None: ...

    def get_memories(self, ids: Sequence[int]) -> list[Memory]:
        rows = self._sql.select_in(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {{among}}", "id", ids
        )
        found = {int(row[0]): memory_from_row(self._sql.dialect, row) for row in rows}
        return [found[i] for i in ids if i in found]

    def find_current_by_hash(self, scope: str, content_hash: str) -> Memory | None:
        row = self._sql.one(CURRENT_BY_HASH, (scope, content_hash))
        return None if row is None else memory_from_row(self._sql.dialect, row)

    def resembling(self, scope: str, content_hash: str, search: NearSearch) -> Resembling:
        same = self.find_current_by_hash(scope, content_hash)
        if same is not None:
            return Resembling(same)
        near = self.nearest(resembled_filter(scope), search.identity, search.vector(), search.k)
        close = [(i, s) for i, s in near if s >= search.at_least]
        rows = {m.id: m for m in self.get_memories([i for i, _ in close])}
        return Resembling(None, tuple((rows[i], s) for i, s in close if i in rows))

    @abstractmethod
    def nearest(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int
    ) -> list[tuple[int, float]]: ...

    def update_memory(self, memory_id: int, changes: Mapping[str, Any]) -> None:
        columns = assignments(changes, UPDATABLE_FIELDS, "memory")
        if not columns:
            return
        d = self._sql.dialect
        values = [encode_value(d, column, value) for column, value in changes.items()]
        with self._sql.write() as run:
            run.execute(f"UPDATE memories SET {columns} WHERE id = ?", (*values, memory_id))
            if "tags" in changes:
                self._write_tags(run, memory_id, list(changes["tags"] or ()), new=False)
            if FILTERED_COLUMNS & set(changes):
                self._filtered_columns_changed(run)

    def increment(self, memory_id: int, counter: str, by: int = 1) -> None:
        if counter not in COUNTER_FIELDS:
            raise InvalidInput(f"{counter} is not a counter; counters are {sorted(COUNTER_FIELDS)}")
        self._sql.run(
            f"UPDATE memories SET {counter} = {counter} + ? WHERE id = ?", (by, memory_id)
        )

    def touch(self, memory_ids: Sequence[int], at: datetime) -> None:
        d = self._sql.dialect
        with self._sql.write() as run:
            for chunk in d.chunks(memory_ids):
                among, params = d.among("id", chunk)
                run.execute(
                    "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? "
                    f"WHERE {among}",
                    (d.time(at), *params),
                )

    def filter_ids(self, filt: MemoryFilter, ids: Sequence[int]) -> set[int]:
        where, params = filter_sql(self._sql.dialect, filt)
        rows = self._sql.select_in(
            f"SELECT m.id FROM memories m WHERE {where} AND {{among}}", "m.id", ids, before=params
        )
        return {int(row[0]) for row in rows}

    def iter_memories(self) -> Iterator[Memory]:
        def read(row: Any) -> Memory:
            return memory_from_row(self._sql.dialect, row)

        return self._pages_of(f"SELECT {MEMORY_COLUMNS} FROM memories", read, lambda m: m.id)

    def count_by(self, column: str, scopes: Sequence[str] | None) -> dict[str, int]:
        if column not in _COUNTABLE:
            raise InvalidInput(f"cannot count memories by {column}")
        where, params = "", list[Any]()
        if scopes is not None:
            among, params = self._sql.dialect.among("scope", scopes, "text")
            where = f" WHERE {among}"
        rows = self._sql.all(
            f"SELECT {column}, count(*) FROM memories{where} GROUP BY {column}", params
        )
        return {str(key): int(count) for key, count in rows}

    # whole-store copy ---------------------------------------------------------------------
    def import_memory(self, memory: Memory) -> None:
        params = full_memory_params(self._sql.dialect, memory)
        with self._sql.write() as run:
            run.execute(
                f"INSERT INTO memories ({', '.join(params)}) VALUES ({_marks(params)})",
                list(params.values()),
            )
            run.dialect.advance_sequence(run, "memories", memory.id)
            self._write_tags(run, memory.id, memory.tags, new=True)
            self._filtered_columns_changed(run)

    def import_event(self, event: Event) -> None:
        with self._sql.write() as run:
            run.execute(EVENTS.insert(), EVENTS.values(run.dialect, event))
            run.dialect.advance_sequence(run, "events", event.id)

    def _pages_of(
        self, select: str, read: Callable[[Any], T], key: Callable[[T], int]
    ) -> Iterator[T]:
        """Keyset pagination by id; no connection is held while the caller consumes a page."""
        after = _BEFORE_ALL_IDS
        while True:
            rows = self._sql.all(f"{select} WHERE id > ? ORDER BY id LIMIT ?", (after, PAGE))
            if not rows:
                return
            page = [read(row) for row in rows]
            yield from page
            after = key(page[-1])


def _marks(params: Mapping[str, Any]) -> str:
    return ", ".join("?" for _ in params)
