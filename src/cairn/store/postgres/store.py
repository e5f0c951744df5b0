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

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from cairn.embeddings.base import Vector
from cairn.models import NewMemory
from cairn.store.base import (
    EventFor,
    Indexed,
    LexicalDoc,
    LexicalPool,
    LexicalRow,
    LexicalStats,
    Links,
    MemoryFilter,
    NearSearch,
    Resembling,
)
from cairn.store.postgres import integrity, lexical, vectors
from cairn.store.postgres.connection import Conn, Database
from cairn.store.postgres.context import ContextRows
from cairn.store.postgres.copy import CopyRows
from cairn.store.postgres.dialect import POSTGRES
from cairn.store.postgres.erase import EraseRows
from cairn.store.postgres.options import PoolOptions, redact, split_url
from cairn.store.postgres.resembling import resembling
from cairn.store.sql.dialect import Run, Sql
from cairn.store.sql.parts import SharedRows
from cairn.store.sql.rows import NEW_EVENTS, new_memory_params

T = TypeVar("T")
_BEFORE_ALL_IDS = -(2**63)
# Replace a memory's tag rows in one statement: drop the ones no longer listed, add the rest.
_WRITE_TAGS = (
    "WITH gone AS (DELETE FROM memory_tags WHERE memory_id = %(id)s"
    " AND NOT (tag = ANY(%(tags)s::text[])))"
    " INSERT INTO memory_tags (memory_id, tag)"
    " SELECT DISTINCT %(id)s::bigint, tag FROM unnest(%(tags)s::text[]) AS tag"
    " ON CONFLICT DO NOTHING"
)


# The lexical entry of the memory the statement before drew its id for (same connection).
_INDEX_NEW = (
    f"INSERT INTO lexical (memory_id, {lexical.ENTRY_COLUMNS})"
    f" VALUES (currval('memories_id_seq'), {lexical.ENTRY_VALUES})"
)

# A new memory's relations, pipelined after the statement that drew its id.
_LINK_NEW = (
    "INSERT INTO relations (from_id, to_id, kind, at)"
    " SELECT currval('memories_id_seq'), l.to_id, l.kind, %(at)s"
    " FROM unnest(%(to_ids)s::bigint[], %(kinds)s::text[]) AS l(to_id, kind)"
    " ON CONFLICT DO NOTHING"
)


def _link_params(memory: NewMemory, links: Links) -> dict[str, Any]:
    return {
        "at": POSTGRES.time(memory.written_at),
        "to_ids": [to_id for to_id, _ in links],
        "kinds": [kind for _, kind in links],
    }


@lru_cache(maxsize=8)
def _add_with_event_sql(
    memory_columns: tuple[str, ...],
    event_columns: tuple[str, ...],
    *,
    tagged: bool,
    indexed: bool,
) -> str:
    """A memory, its event, its tag rows and (`indexed`) its vector in one statement, each id
    named by the other rows; returns the ids and whether the vector's embedder already has its
    index. The lexical entry is a statement of its own (`_INDEX_NEW`): inserted beside the
    memory row, both statistics triggers (the memory's and the entry's) would count it."""
    mid, eid = "(SELECT mid FROM ids)", "(SELECT eid FROM ids)"
    marks = ", ".join(f"%(m_{name})s" for name in memory_columns)
    event_marks = ", ".join(f"%(e_{name})s" for name in event_columns)
    parts = [
        "WITH ids AS MATERIALIZED (SELECT nextval('memories_id_seq') AS mid,"
        " nextval('events_id_seq') AS eid)",
        f"m AS (INSERT INTO memories (id, source_event_id, {', '.join(memory_columns)})"
        f" VALUES ({mid}, {eid}, {marks}))",
        f"e AS (INSERT INTO events (id, memory_id, {', '.join(event_columns)})"
        f" VALUES ({eid}, {mid}, {event_marks}))",
    ]
    if tagged:
        parts.append(
            f"t AS (INSERT INTO memory_tags (memory_id, tag) SELECT DISTINCT {mid}, tag"
            " FROM unnest(%(tag_list)s::text[]) AS tag ON CONFLICT DO NOTHING)"
        )
    indexed_already = "NULL::boolean"
    if indexed:
        parts.append(
            "v AS (INSERT INTO vectors (memory_id, identity, dims, embedding)"
            f" VALUES ({mid}, %(v_identity)s, %(v_dims)s, %(v_vector)b::vector))"
        )
        indexed_already = (
            "EXISTS (SELECT 1 FROM vector_indexes WHERE kind = 'vectors'"
            " AND identity = %(v_identity)s AND dims = %(v_dims)s)"
        )
    return ", ".join(parts) + f" SELECT mid, eid, {indexed_already} FROM ids"


class PostgresStore(SharedRows, ContextRows, CopyRows, EraseRows):
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
        self._sql = Sql(self._db, POSTGRES)
        self._stats = lexical.StatsCache()

    @property
    def location(self) -> str:
        return self._location

    @property
    def options(self) -> PoolOptions:
        return self._db.options

    @property
    def concurrent_reads(self) -> bool:
        """A pooled connection on another thread sees the committed state this thread reads,
        unless this thread is inside a transaction (whose writes only its connection sees)."""
        return not self._db.in_transaction

    @property
    def remote(self) -> bool:
        return True

    def integrity_problems(self) -> tuple[list[str], list[str]]:
        """(problems, notes on what could not be checked); see `integrity.py`."""
        return integrity.integrity_problems(self._db)

    def maintain(self) -> None:
        with self._db.connection() as conn:
            conn.execute("ANALYZE")

    # hooks of the shared memory rows -----------------------------------------------------
    def _write_tags(self, run: Run, memory_id: int, tags: Sequence[str], *, new: bool) -> None:
        if tags or not new:
            run.conn.execute(_WRITE_TAGS, {"id": memory_id, "tags": list(tags)})

    def _memories_added(self, count: int) -> None:
        self._db.note_growth(count)

    def add_memory_with_event(
        self, memory: NewMemory, event: EventFor, indexed: Indexed | None = None, links: Links = ()
    ) -> tuple[int, int]:
        """One round trip: both ids drawn first, so the memory row is written once with its
        `source_event_id`, its event, tag rows and vector beside it, the lexical entry and the
        links pipelined after (the shared way takes five or six round trips, and writes the
        memory row twice, running its statistics trigger twice)."""
        row_values = new_memory_params(POSTGRES, memory)
        row_values.pop("source_event_id")  # the statement's own
        made = event(0)  # its memory_id is the statement's own
        values = dict(zip(NEW_EVENTS.names, NEW_EVENTS.values(POSTGRES, made), strict=True))
        values.pop("memory_id")
        params = {f"m_{k}": v for k, v in row_values.items()}
        params.update({f"e_{k}": v for k, v in values.items()})
        if memory.tags:
            params["tag_list"] = list(memory.tags)
        if indexed is not None:
            params.update(
                v_identity=indexed.identity,
                v_dims=int(indexed.vector.shape[0]),
                v_vector=vectors.vector_param(indexed.vector),
            )
        statement = _add_with_event_sql(
            tuple(row_values),
            tuple(values),
            tagged=bool(memory.tags),
            indexed=indexed is not None,
        )
        with self._db.transaction() as conn:
            with conn.pipeline():
                cursor = conn.execute(statement, params)
                if indexed is not None:
                    conn.execute(_INDEX_NEW, lexical.entry_params(indexed.doc))
                if links:
                    conn.execute(_LINK_NEW, _link_params(memory, links))
            row = cursor.fetchone()
            assert row is not None
            if indexed is not None and not row[2]:
                vectors.first_vector_indexed(conn, indexed.identity, indexed.vector)
        self._memories_added(1)
        return int(row[0]), int(row[1])

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

    # vectors ------------------------------------------------------------------------------
    def put_vector(self, memory_id: int, identity: str, vector: Vector) -> None:
        with self._db.transaction() as conn:
            vectors.put_vector(conn, memory_id, identity, vector)

    def get_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]:
        with self._db.connection() as conn:
            return vectors.get_vectors(conn, ids, identity)

    def resembling(self, scope: str, content_hash: str, search: NearSearch) -> Resembling:
        ef = self._db.options.hnsw_ef_search
        with self._db.connection() as conn:
            return resembling(conn, scope, content_hash, search, session_ef=ef)

    def nearest(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int
    ) -> list[tuple[int, float]]:
        with self._db.connection() as conn:
            return vectors.nearest(conn, filt, identity, vector, k, self._db.options.hnsw_ef_search)

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
            stats, total = self._stats.stats_and_total(conn, filt, terms)
            return lexical.lexical_candidates(conn, filt, terms, limit, stats, total)

    def lexical_stats(self, filt: MemoryFilter, terms: Sequence[str]) -> LexicalStats:
        with self._db.connection() as conn:
            return self._stats.stats(conn, filt, terms)

    def lexical_pool(
        self, filt: MemoryFilter, terms: Sequence[str], limit: int, sized: MemoryFilter
    ) -> LexicalPool:
        with self._db.connection() as conn:
            return lexical.lexical_pool(conn, self._stats, filt, terms, limit, sized)

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
