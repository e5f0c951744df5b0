"""The SQLite backend: one file, WAL, FTS5 for lexical candidates, numpy for dense search."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput
from cairn.models import Event, Memory, NewEvent, NewMemory
from cairn.store.base import (
    COUNTER_FIELDS,
    LEXICAL_FIELDS,
    UPDATABLE_FIELDS,
    LexicalDoc,
    LexicalRow,
    LexicalStats,
    MemoryFilter,
)
from cairn.store.sqlite import lexical
from cairn.store.sqlite.code import CodeRows
from cairn.store.sqlite.connection import BUMP_LEXGEN, Connections, ensure_parent, migrate
from cairn.store.sqlite.context import ContextRows
from cairn.store.sqlite.copy import CopyRows
from cairn.store.sqlite.erase import EraseRows
from cairn.store.sqlite.errors import translate
from cairn.store.sqlite.lessons import LessonRows
from cairn.store.sqlite.pages import PageRows
from cairn.store.sqlite.procedures import ProcedureRows
from cairn.store.sqlite.rows import (
    EVENT_COLUMNS,
    MEMORY_COLUMNS,
    dump_payload,
    encode_value,
    event_from_row,
    full_memory_params,
    memory_from_row,
    new_memory_params,
)
from cairn.store.sqlite.sessions import SessionRows
from cairn.store.sqlite.sql import chunks, filter_sql, marks
from cairn.store.sqlite.vectors import VectorIndex
from cairn.timeutil import to_micros

# Changing these columns changes what the dense filter admits, so the vector cache reloads.
_FILTERED_COLUMNS = frozenset({"status", "until", "type", "occurred_at", "written_at"})
_STATS_CACHE_MAX = 50_000


class SqliteStore(
    SessionRows, ProcedureRows, CodeRows, LessonRows, ContextRows, PageRows, CopyRows, EraseRows
):
    backend = "sqlite"

    def __init__(self, path: str, *, busy_timeout_ms: int = 30_000) -> None:
        ensure_parent(path)
        self._path = path
        self._db = Connections(path, busy_timeout_ms=busy_timeout_ms)
        self._stats: dict[tuple[MemoryFilter, Any], Any] = {}
        self._stats_generation: tuple[Any, ...] = ()
        self._stats_lock = threading.Lock()
        self._vectors = VectorIndex(path)
        try:
            migrate(self._db)
        except sqlite3.Error as exc:
            self._db.close()
            raise translate(exc, path) from exc
        except BaseException:
            self._db.close()
            raise

    @property
    def location(self) -> str:
        return self._path

    def close(self) -> None:
        self._db.close()

    def transaction(self) -> AbstractContextManager[None]:
        return self._tx()

    def maintain(self) -> None:
        with self._db.transaction() as conn:
            conn.execute("INSERT INTO lexical (lexical) VALUES ('optimize')")
        self._db.get().execute("PRAGMA optimize")

    @contextmanager
    def _tx(self) -> Iterator[None]:
        with self._db.transaction():
            yield

    def _bump_epoch(self) -> None:
        self._db.get().execute(
            "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'epoch'"
        )

    # events -------------------------------------------------------------------------------
    def add_event(self, event: NewEvent) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO events (kind, scope, session_id, at, integration, memory_id, payload)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    event.kind,
                    event.scope,
                    event.session_id,
                    to_micros(event.at),
                    event.integration,
                    event.memory_id,
                    dump_payload(event.payload),
                ),
            )
            return int(cur.lastrowid or 0)

    def get_events(self, ids: Sequence[int]) -> list[Event]:
        found: dict[int, Event] = {}
        for chunk in chunks(ids):
            rows = self._db.get().execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE id IN ({marks(chunk)})", chunk
            )
            found.update((row[0], event_from_row(row)) for row in rows)
        return [found[i] for i in ids if i in found]

    def events_for_memories(
        self, memory_ids: Sequence[int], *, limit: int
    ) -> dict[int, list[Event]]:
        found: dict[int, list[Event]] = {}
        for chunk in chunks(memory_ids):
            rows = self._db.get().execute(
                f"SELECT {EVENT_COLUMNS} FROM (SELECT {EVENT_COLUMNS}, row_number() OVER "
                "(PARTITION BY memory_id ORDER BY id DESC) AS n FROM events "
                f"WHERE memory_id IN ({marks(chunk)})) WHERE n <= ? ORDER BY memory_id, id DESC",
                (*chunk, limit),
            )
            for row in rows:
                event = event_from_row(row)
                found.setdefault(row[6], []).append(event)
        return found

    def redact_events(self, memory_id: int, *, note: str) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "UPDATE events SET payload = ? WHERE memory_id = ? AND kind != 'purge'",
                (dump_payload({"redacted": note}), memory_id),
            )
            return cur.rowcount

    def iter_events(self) -> Iterator[Event]:
        rows = self._db.get().execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY id")
        for row in rows.fetchall():
            yield event_from_row(row)

    # memories -----------------------------------------------------------------------------
    def add_memory(self, memory: NewMemory) -> int:
        params = new_memory_params(memory)
        columns = ", ".join(params)
        with self._db.transaction() as conn:
            cur = conn.execute(
                f"INSERT INTO memories ({columns}) VALUES ({marks(list(params))})",
                list(params.values()),
            )
            memory_id = int(cur.lastrowid or 0)
            self._write_tags(memory_id, memory.tags)
            return memory_id

    def _write_tags(self, memory_id: int, tags: Sequence[str]) -> None:
        conn = self._db.get()
        if (
            tags
            or conn.execute(
                "SELECT 1 FROM memory_tags WHERE memory_id = ? LIMIT 1", (memory_id,)
            ).fetchone()
        ):
            conn.execute(BUMP_LEXGEN)  # BM25 statistics are cached per filter, tags included
        conn.execute("DELETE FROM memory_tags WHERE memory_id = ?", (memory_id,))
        conn.executemany(
            "INSERT OR IGNORE INTO memory_tags (memory_id, tag) VALUES (?, ?)",
            [(memory_id, tag) for tag in tags],
        )

    def get_memories(self, ids: Sequence[int]) -> list[Memory]:
        found: dict[int, Memory] = {}
        for chunk in chunks(ids):
            rows = self._db.get().execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks(chunk)})", chunk
            )
            found.update((row[0], memory_from_row(row)) for row in rows)
        return [found[i] for i in ids if i in found]

    def find_current_by_hash(self, scope: str, content_hash: str) -> Memory | None:
        row = (
            self._db.get()
            .execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = ? AND content_hash = ? "
                "AND until IS NULL AND status IN ('active', 'resting') ORDER BY id LIMIT 1",
                (scope, content_hash),
            )
            .fetchone()
        )
        return None if row is None else memory_from_row(row)

    def update_memory(self, memory_id: int, changes: Mapping[str, Any]) -> None:
        unknown = set(changes) - UPDATABLE_FIELDS
        if unknown:
            raise InvalidInput(f"cannot update memory fields {sorted(unknown)}")
        if not changes:
            return
        assignments = ", ".join(f"{column} = ?" for column in changes)
        values = [encode_value(column, value) for column, value in changes.items()]
        with self._db.transaction() as conn:
            conn.execute(f"UPDATE memories SET {assignments} WHERE id = ?", (*values, memory_id))
            if "tags" in changes:
                self._write_tags(memory_id, list(changes["tags"]))
            if _FILTERED_COLUMNS & set(changes):
                self._bump_epoch()

    def increment(self, memory_id: int, counter: str, by: int = 1) -> None:
        if counter not in COUNTER_FIELDS:
            raise InvalidInput(f"{counter} is not a counter; counters are {sorted(COUNTER_FIELDS)}")
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE memories SET {counter} = {counter} + ? WHERE id = ?", (by, memory_id)
            )

    def touch(self, memory_ids: Sequence[int], at: datetime) -> None:
        with self._db.transaction() as conn:
            for chunk in chunks(memory_ids):
                conn.execute(
                    "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? "
                    f"WHERE id IN ({marks(chunk)})",
                    (to_micros(at), *chunk),
                )

    def filter_ids(self, filt: MemoryFilter, ids: Sequence[int]) -> set[int]:
        where, params = filter_sql(filt)
        allowed: set[int] = set()
        for chunk in chunks(ids):
            rows = self._db.get().execute(
                f"SELECT m.id FROM memories m WHERE {where} AND m.id IN ({marks(chunk)})",
                (*params, *chunk),
            )
            allowed.update(row[0] for row in rows)
        return allowed

    def iter_memories(self) -> Iterator[Memory]:
        rows = self._db.get().execute(f"SELECT {MEMORY_COLUMNS} FROM memories ORDER BY id")
        for row in rows.fetchall():
            yield memory_from_row(row)

    def count_by(self, column: str, scopes: Sequence[str] | None) -> dict[str, int]:
        if column not in {"type", "status", "scope", "durability"}:
            raise InvalidInput(f"cannot count memories by {column}")
        sql = f"SELECT {column}, count(*) FROM memories"
        params: tuple[str, ...] = ()
        if scopes is not None:
            sql += f" WHERE scope IN ({marks(list(scopes))})"
            params = tuple(scopes)
        rows = self._db.get().execute(sql + f" GROUP BY {column}", params)
        return {str(key): int(count) for key, count in rows}

    # vectors ------------------------------------------------------------------------------
    def put_vector(self, memory_id: int, identity: str, vector: Vector) -> None:
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        with self._db.transaction() as conn:
            existed = conn.execute(
                "SELECT 1 FROM vectors WHERE memory_id = ?", (memory_id,)
            ).fetchone()
            conn.execute(
                "INSERT OR REPLACE INTO vectors (memory_id, identity, dims, vector) "
                "VALUES (?, ?, ?, ?)",
                (memory_id, identity, int(vector.shape[0]), blob),
            )
            newest = conn.execute("SELECT max(memory_id) FROM vectors").fetchone()[0]
            # Caches append by ascending id; anything else must make them reload.
            if existed or memory_id < newest:
                self._bump_epoch()

    def delete_vector(self, memory_id: int) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM vectors WHERE memory_id = ?", (memory_id,))
            self._bump_epoch()

    def get_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]:
        found: dict[int, Vector] = {}
        for chunk in chunks(ids):
            rows = self._db.get().execute(
                f"SELECT memory_id, vector FROM vectors WHERE identity = ? "
                f"AND memory_id IN ({marks(chunk)})",
                (identity, *chunk),
            )
            for memory_id, blob in rows:
                found[memory_id] = np.frombuffer(blob, dtype=np.float32)
        return found

    def nearest(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int
    ) -> list[tuple[int, float]]:
        allowed = self._tagged_ids(filt) if filt.tags is not None else None
        return self._vectors.nearest(self._db.get(), filt, identity, vector, k, allowed)

    def _tagged_ids(self, filt: MemoryFilter) -> set[int]:
        tags = list(filt.tags or ())
        rows = self._db.get().execute(
            f"SELECT memory_id FROM memory_tags WHERE tag IN ({marks(tags)})", tags
        )
        return {row[0] for row in rows}

    def vector_identities(self) -> dict[str, int]:
        rows = self._db.get().execute("SELECT identity, count(*) FROM vectors GROUP BY identity")
        return {identity: int(count) for identity, count in rows}

    def stale_vectors(
        self, scopes: Sequence[str] | None, identity: str, limit: int
    ) -> tuple[int, list[int]]:
        where = "m.status != 'purged' AND (v.identity IS NULL OR v.identity != ?)"
        params: list[Any] = [identity]
        if scopes is not None:
            where += f" AND m.scope IN ({marks(list(scopes))})"
            params.extend(scopes)
        sql = f"FROM memories m LEFT JOIN vectors v ON v.memory_id = m.id WHERE {where}"
        conn = self._db.get()
        count = conn.execute(f"SELECT count(*) {sql}", params).fetchone()[0]
        rows = conn.execute(f"SELECT m.id {sql} ORDER BY m.id LIMIT ?", (*params, limit))
        return int(count), [int(row[0]) for row in rows]

    # lexical ------------------------------------------------------------------------------
    def _stats_cache_for(self, conn: sqlite3.Connection) -> dict[tuple[MemoryFilter, Any], Any]:
        generation = tuple(
            conn.execute("SELECT key, value FROM meta WHERE key IN ('epoch', 'lexgen')")
        )
        with self._stats_lock:
            if generation != self._stats_generation or len(self._stats) > _STATS_CACHE_MAX:
                self._stats = {}
                self._stats_generation = generation
            return self._stats

    def put_lexical(self, memory_id: int, doc: LexicalDoc) -> None:
        fields = [doc.field(name) for name in LEXICAL_FIELDS]
        lengths = [len(text.split()) for text in fields]
        with self._db.transaction() as conn:
            conn.execute(BUMP_LEXGEN)
            conn.execute("DELETE FROM lexical WHERE rowid = ?", (memory_id,))
            conn.execute(
                "INSERT INTO lexical (rowid, content, tags, source_ref, reason, context) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (memory_id, *fields),
            )
            conn.execute(
                "INSERT OR REPLACE INTO lexical_lengths "
                "(memory_id, content, tags, source_ref, reason, context) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (memory_id, *lengths),
            )

    def delete_lexical(self, memory_id: int) -> None:
        with self._db.transaction() as conn:
            conn.execute(BUMP_LEXGEN)
            conn.execute("DELETE FROM lexical WHERE rowid = ?", (memory_id,))
            conn.execute("DELETE FROM lexical_lengths WHERE memory_id = ?", (memory_id,))

    def lexical_candidates(
        self, filt: MemoryFilter, terms: Sequence[str], limit: int
    ) -> list[LexicalRow]:
        conn = self._db.get()
        return lexical.candidates(conn, filt, terms, limit, self._stats_cache_for(conn))

    def lexical_stats(self, filt: MemoryFilter, terms: Sequence[str]) -> LexicalStats:
        """Counted once per (filter, term) until the lexical index or a filtered column changes.

        Counting a common term's documents walks its whole FTS5 doclist (tens of ms at 10k
        memories), and the same words recur across recalls; the cache is keyed by the store's
        `epoch` and `lexgen` counters, which other processes' writes bump too."""
        conn = self._db.get()
        cache = self._stats_cache_for(conn)
        averages = lexical.averages(conn, filt, cache)
        frequencies = lexical.document_frequencies(conn, filt, terms, cache)
        return LexicalStats(
            doc_count=int(averages[0]),
            document_frequency=frequencies,
            average_length={
                name: float(value or 0.0)
                for name, value in zip(LEXICAL_FIELDS, averages[1:], strict=True)
            },
        )

    # whole-store copy ---------------------------------------------------------------------
    def import_memory(self, memory: Memory) -> None:
        params = full_memory_params(memory)
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO memories ({', '.join(params)}) VALUES ({marks(list(params))})",
                list(params.values()),
            )
            self._write_tags(memory.id, memory.tags)
            self._bump_epoch()

    def import_event(self, event: Event) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO events ({EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    event.id,
                    event.kind,
                    event.scope,
                    event.session_id,
                    to_micros(event.at),
                    event.integration,
                    event.memory_id,
                    dump_payload(event.payload),
                ),
            )

    def iter_vectors(self) -> Iterator[tuple[int, str, Vector]]:
        rows = self._db.get().execute(
            "SELECT memory_id, identity, vector FROM vectors ORDER BY memory_id"
        )
        for memory_id, identity, blob in rows.fetchall():
            yield memory_id, identity, np.frombuffer(blob, dtype=np.float32)

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            try:
                total += os.path.getsize(self._path + suffix)
            except OSError:
                continue
        return total
