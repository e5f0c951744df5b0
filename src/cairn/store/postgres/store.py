"""The PostgreSQL backend: psycopg pool, tsvector + GIN, pgvector with HNSW.

Same Protocol, same semantics as the SQLite backend; what differs lives in the sibling modules:
connections, the write lock and migrations (`connection.py`), URL options (`options.py`), dense
search (`vectors.py`), lexical search (`lexical.py`); the session layer, procedures and code
awareness are mixins (`sessions.py`, `procedures.py`, `code.py`), as in the SQLite backend.
Every query reads the tables, with one exception: BM25 statistics are kept in process until a
generation counter that triggers move on every relevant write (`lexical.StatsCache`) changes.

Ids come from sequences. Whole-store copies insert explicit ids and then move the sequence past
them (`setval`), so later inserts never collide with copied rows - what SQLite's AUTOINCREMENT
does by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any, TypeVar

from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput
from cairn.models import Event, Memory, NewEvent, NewMemory
from cairn.store.base import (
    COUNTER_FIELDS,
    UPDATABLE_FIELDS,
    LexicalDoc,
    LexicalRow,
    LexicalStats,
    MemoryFilter,
)
from cairn.store.postgres import integrity, lexical, vectors
from cairn.store.postgres.browse import BrowseRows
from cairn.store.postgres.code import CodeRows
from cairn.store.postgres.connection import Conn, Database
from cairn.store.postgres.context import ContextRows
from cairn.store.postgres.copy import CopyRows
from cairn.store.postgres.erase import EraseRows
from cairn.store.postgres.filters import filter_sql
from cairn.store.postgres.lessons import LessonRows
from cairn.store.postgres.options import PoolOptions, redact, split_url
from cairn.store.postgres.pages import PageRows
from cairn.store.postgres.procedures import ProcedureRows
from cairn.store.postgres.rows import (
    EVENT_COLUMNS,
    MEMORY_COLUMNS,
    encode_value,
    event_from_row,
    full_memory_params,
    marks,
    memory_from_row,
    new_memory_params,
    payload_json,
)
from cairn.store.postgres.sessions import SessionRows
from cairn.timeutil import as_utc

T = TypeVar("T")
_PAGE = 500
_BEFORE_ALL_IDS = -(2**63)
_COUNTABLE = frozenset({"type", "status", "scope", "durability"})
# Replace a memory's tag rows in one statement: drop the ones no longer listed, add the rest.
_WRITE_TAGS = (
    "WITH gone AS (DELETE FROM memory_tags WHERE memory_id = %(id)s"
    " AND NOT (tag = ANY(%(tags)s::text[])))"
    " INSERT INTO memory_tags (memory_id, tag)"
    " SELECT DISTINCT %(id)s::bigint, tag FROM unnest(%(tags)s::text[]) AS tag"
    " ON CONFLICT DO NOTHING"
)


class PostgresStore(
    SessionRows,
    ProcedureRows,
    CodeRows,
    LessonRows,
    ContextRows,
    PageRows,
    CopyRows,
    EraseRows,
    BrowseRows,
):
    """A cairn store in a PostgreSQL database with the pgvector extension.

    Pool and lock settings come from the URL's query (see `options.py`) or these arguments;
    the URL wins.
    """

    backend = "postgres"

    def __init__(
        self,
        url: str,
        *,
        pool_min_size: int | None = None,
        pool_max_size: int | None = None,
        pool_timeout: float | None = None,
        busy_timeout_ms: int | None = None,
        hnsw_ef_search: int | None = None,
    ) -> None:
        given: dict[str, Any] = {
            "pool_min_size": pool_min_size,
            "pool_max_size": pool_max_size,
            "pool_timeout": pool_timeout,
            "busy_timeout_ms": busy_timeout_ms,
            "hnsw_ef_search": hnsw_ef_search,
        }
        defaults = PoolOptions(**{k: v for k, v in given.items() if v is not None})
        conninfo, options = split_url(url, defaults)
        self._location = redact(url)
        self._db = Database(conninfo, options, display=self._location)
        self._stats = lexical.StatsCache()

    @property
    def location(self) -> str:
        return self._location

    @property
    def options(self) -> PoolOptions:
        return self._db.options

    def close(self) -> None:
        self._db.close()

    def integrity_problems(self) -> tuple[list[str], list[str]]:
        """(problems, notes on what could not be checked); see `integrity.py`."""
        return integrity.integrity_problems(self._db)

    def maintain(self) -> None:
        with self._db.connection() as conn:
            conn.execute("ANALYZE")

    def transaction(self) -> AbstractContextManager[None]:
        return self._tx()

    @contextmanager
    def _tx(self) -> Iterator[None]:
        with self._db.transaction():
            yield

    def _pages(self, fetch: Callable[[Conn, int], list[T]], key: Callable[[T], int]) -> Iterator[T]:
        """Keyset pagination by id; no connection is held while the caller consumes a page."""
        after = _BEFORE_ALL_IDS
        while True:
            with self._db.connection() as conn:
                page = fetch(conn, after)
            if not page:
                return
            yield from page
            after = key(page[-1])

    # events -------------------------------------------------------------------------------
    def add_event(self, event: NewEvent) -> int:
        with self._db.transaction() as conn:
            row = conn.execute(
                "INSERT INTO events (kind, scope, session_id, at, integration, memory_id, payload)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    event.kind,
                    event.scope,
                    event.session_id,
                    as_utc(event.at),
                    event.integration,
                    event.memory_id,
                    payload_json(event.payload),
                ),
            ).fetchone()
        return int(row[0]) if row else 0

    def get_events(self, ids: Sequence[int]) -> list[Event]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE id = ANY(%s::bigint[])", (list(ids),)
            ).fetchall()
        found = {row[0]: event_from_row(row) for row in rows}
        return [found[i] for i in ids if i in found]

    def events_for_memories(
        self, memory_ids: Sequence[int], *, limit: int
    ) -> dict[int, list[Event]]:
        if not memory_ids:
            return {}
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM (SELECT {EVENT_COLUMNS}, row_number() OVER "
                "(PARTITION BY memory_id ORDER BY id DESC) AS n FROM events "
                "WHERE memory_id = ANY(%s)) AS e WHERE n <= %s ORDER BY memory_id, id DESC",
                (list(memory_ids), limit),
            ).fetchall()
        found: dict[int, list[Event]] = {}
        for row in rows:
            found.setdefault(row[6], []).append(event_from_row(row))
        return found

    def redact_events(self, memory_id: int, *, note: str) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "UPDATE events SET payload = %s WHERE memory_id = %s AND kind <> 'purge'",
                (payload_json({"redacted": note}), memory_id),
            )
            return cur.rowcount

    def iter_events(self) -> Iterator[Event]:
        def fetch(conn: Conn, after: int) -> list[Event]:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE id > %s ORDER BY id LIMIT %s",
                (after, _PAGE),
            ).fetchall()
            return [event_from_row(row) for row in rows]

        return self._pages(fetch, lambda event: event.id)

    # memories -----------------------------------------------------------------------------
    def add_memory(self, memory: NewMemory) -> int:
        params = new_memory_params(memory)
        with self._db.transaction() as conn:
            row = conn.execute(
                f"INSERT INTO memories ({', '.join(params)}) VALUES ({marks(params)}) RETURNING id",
                params,
            ).fetchone()
            memory_id = int(row[0]) if row else 0
            if memory.tags:
                conn.execute(_WRITE_TAGS, {"id": memory_id, "tags": list(memory.tags)})
        self._db.note_growth(1)
        return memory_id

    def get_memories(self, ids: Sequence[int]) -> list[Memory]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ANY(%s::bigint[])",
                (list(ids),),
            ).fetchall()
        found = {row[0]: memory_from_row(row) for row in rows}
        return [found[i] for i in ids if i in found]

    def find_current_by_hash(self, scope: str, content_hash: str) -> Memory | None:
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = %s AND content_hash = %s"
                " AND until IS NULL AND status IN ('active', 'resting') ORDER BY id LIMIT 1",
                (scope, content_hash),
            ).fetchone()
        return None if row is None else memory_from_row(row)

    def update_memory(self, memory_id: int, changes: Mapping[str, Any]) -> None:
        unknown = set(changes) - UPDATABLE_FIELDS
        if unknown:
            raise InvalidInput(f"cannot update memory fields {sorted(unknown)}")
        if not changes:
            return
        assignments = ", ".join(f"{column} = %({column})s" for column in changes)
        params = {column: encode_value(column, value) for column, value in changes.items()}
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE memories SET {assignments} WHERE id = %(memory_id)s",
                {**params, "memory_id": memory_id},
            )
            if "tags" in changes:
                conn.execute(_WRITE_TAGS, {"id": memory_id, "tags": list(changes["tags"] or ())})

    def increment(self, memory_id: int, counter: str, by: int = 1) -> None:
        if counter not in COUNTER_FIELDS:
            raise InvalidInput(f"{counter} is not a counter; counters are {sorted(COUNTER_FIELDS)}")
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE memories SET {counter} = {counter} + %s WHERE id = %s", (by, memory_id)
            )

    def touch(self, memory_ids: Sequence[int], at: datetime) -> None:
        if not memory_ids:
            return
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = %s "
                "WHERE id = ANY(%s::bigint[])",
                (at, list(memory_ids)),
            )

    def filter_ids(self, filt: MemoryFilter, ids: Sequence[int]) -> set[int]:
        where, params = filter_sql(filt)
        params["ids"] = list(ids)
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT m.id FROM memories m WHERE {where} AND m.id = ANY(%(ids)s::bigint[])",
                params,
            ).fetchall()
        return {int(row[0]) for row in rows}

    def iter_memories(self) -> Iterator[Memory]:
        def fetch(conn: Conn, after: int) -> list[Memory]:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id > %s ORDER BY id LIMIT %s",
                (after, _PAGE),
            ).fetchall()
            return [memory_from_row(row) for row in rows]

        return self._pages(fetch, lambda memory: memory.id)

    def count_by(self, column: str, scopes: Sequence[str] | None) -> dict[str, int]:
        if column not in _COUNTABLE:
            raise InvalidInput(f"cannot count memories by {column}")
        where = ""
        params: tuple[list[str], ...] = ()
        if scopes is not None:
            where, params = " WHERE scope = ANY(%s::text[])", (list(scopes),)
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {column}, count(*) FROM memories{where} GROUP BY {column}", params
            ).fetchall()
        return {str(key): int(count) for key, count in rows}

    # vectors ------------------------------------------------------------------------------
    def put_vector(self, memory_id: int, identity: str, vector: Vector) -> None:
        with self._db.transaction() as conn:
            vectors.put_vector(conn, memory_id, identity, vector)

    def delete_vector(self, memory_id: int) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM vectors WHERE memory_id = %s", (memory_id,))

    def get_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]:
        with self._db.connection() as conn:
            return vectors.get_vectors(conn, ids, identity)

    def nearest(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int
    ) -> list[tuple[int, float]]:
        with self._db.connection() as conn:
            return vectors.nearest(conn, filt, identity, vector, k)

    def vector_identities(self) -> dict[str, int]:
        with self._db.connection() as conn:
            return vectors.vector_identities(conn)

    def stale_vectors(
        self, scopes: Sequence[str] | None, identity: str, limit: int
    ) -> tuple[int, list[int]]:
        with self._db.connection() as conn:
            return vectors.stale_vectors(conn, scopes, identity, limit)

    # lexical ------------------------------------------------------------------------------
    def put_lexical(self, memory_id: int, doc: LexicalDoc) -> None:
        with self._db.transaction() as conn:
            lexical.put_lexical(conn, memory_id, doc)

    def delete_lexical(self, memory_id: int) -> None:
        with self._db.transaction() as conn:
            lexical.delete_lexical(conn, memory_id)

    def lexical_candidates(
        self, filt: MemoryFilter, terms: Sequence[str], limit: int
    ) -> list[LexicalRow]:
        with self._db.connection() as conn:
            stats = self._stats.stats(conn, filt, terms)
            return lexical.lexical_candidates(conn, filt, terms, limit, stats)

    def lexical_stats(self, filt: MemoryFilter, terms: Sequence[str]) -> LexicalStats:
        with self._db.connection() as conn:
            return self._stats.stats(conn, filt, terms)

    # whole-store copy ---------------------------------------------------------------------
    def import_memory(self, memory: Memory) -> None:
        params = full_memory_params(memory)
        with self._db.transaction() as conn:
            conn.execute(
                f"WITH ins AS (INSERT INTO memories ({', '.join(params)})"
                f" VALUES ({marks(params)}) RETURNING id)"
                " SELECT setval('memories_id_seq', greatest(ins.id, s.last_value))"
                " FROM ins, memories_id_seq s",
                params,
            )
            if memory.tags:
                conn.execute(_WRITE_TAGS, {"id": memory.id, "tags": list(memory.tags)})

    def import_event(self, event: Event) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"WITH ins AS (INSERT INTO events ({EVENT_COLUMNS})"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id)"
                " SELECT setval('events_id_seq', greatest(ins.id, s.last_value))"
                " FROM ins, events_id_seq s",
                (
                    event.id,
                    event.kind,
                    event.scope,
                    event.session_id,
                    as_utc(event.at),
                    event.integration,
                    event.memory_id,
                    payload_json(event.payload),
                ),
            )

    def iter_vectors(self) -> Iterator[tuple[int, str, Vector]]:
        return self._pages(vectors.vector_page, lambda item: item[0])

    def size_bytes(self) -> int:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'S') AND c.relname"
                " = ANY(ARRAY['events', 'memories', 'memory_tags', 'vectors', 'vector_indexes',"
                " 'lexical', 'schema_migrations', 'events_id_seq', 'memories_id_seq'])"
            ).fetchone()
        return int(row[0]) if row else 0
