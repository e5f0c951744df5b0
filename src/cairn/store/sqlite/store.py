"""The SQLite backend: one file, WAL, FTS5 for lexical candidates, numpy for dense search."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from cairn.embeddings.base import Vector
from cairn.store.base import (
    LexicalDoc,
    LexicalPool,
    LexicalRow,
    LexicalStats,
    MemoryFilter,
)
from cairn.store.sql.dialect import Run, Sql
from cairn.store.sql.parts import SharedRows
from cairn.store.sql.procedures import plain_vectors
from cairn.store.sqlite import lexical
from cairn.store.sqlite.connection import (
    BUMP_EPOCH,
    BUMP_LEXGEN,
    Connections,
    ensure_parent,
    migrate,
)
from cairn.store.sqlite.context import ContextRows
from cairn.store.sqlite.copy import CopyRows
from cairn.store.sqlite.dialect import SQLITE
from cairn.store.sqlite.erase import EraseRows
from cairn.store.sqlite.postings_index import PostingsIndex
from cairn.store.sqlite.sql import tagged_ids
from cairn.store.sqlite.vectors import VectorIndex
from cairn.store.stats_cache import GenerationCache

_STATS_CACHE_MAX = 50_000


class SqliteStore(SharedRows, ContextRows, CopyRows, EraseRows):
    backend = "sqlite"
    # Its searches are this process's own CPU work (numpy, FTS5) on a connection per thread,
    # with no server beside it to overlap with: recall's two searches stay on one thread.
    concurrent_reads = False
    remote = False  # nothing to overlap a claim's embedding with: it is embedded first

    def __init__(self, path: str, *, busy_timeout_ms: int = 30_000) -> None:
        ensure_parent(path)
        self._path = path
        self._db = Connections(path, busy_timeout_ms=busy_timeout_ms)
        self._sql = Sql(self._db, SQLITE)
        self._stats = GenerationCache(_STATS_CACHE_MAX)
        self._vectors = VectorIndex(path)
        self._postings = PostingsIndex(path)
        try:
            with self._db.translated():
                migrate(self._db)
        except BaseException:
            self._db.close()
            raise

    @property
    def location(self) -> str:
        return self._path

    def close(self) -> None:
        self._postings.close()
        super().close()

    def maintain(self) -> None:
        with self._db.transaction() as conn:
            conn.execute("INSERT INTO lexical (lexical) VALUES ('optimize')")
        self._db.get().execute("PRAGMA optimize")

    # hooks of the shared memory rows -----------------------------------------------------
    def _write_tags(self, run: Run, memory_id: int, tags: Sequence[str], *, new: bool) -> None:
        if tags or (
            not new
            and run.one("SELECT 1 FROM memory_tags WHERE memory_id = ? LIMIT 1", (memory_id,))
        ):
            run.execute(BUMP_LEXGEN)  # BM25 statistics are cached per filter, tags included
        if not new:
            run.execute("DELETE FROM memory_tags WHERE memory_id = ?", (memory_id,))
        run.many(
            "INSERT OR IGNORE INTO memory_tags (memory_id, tag) VALUES (?, ?)",
            [(memory_id, tag) for tag in tags],
        )

    def _filtered_columns_changed(self, run: Run) -> None:
        self._bump_epoch()  # the vector cache reloads

    def _vectors_deleted(self, run: Run) -> None:
        run.execute(BUMP_EPOCH)  # the cache cannot patch a row away; it reloads

    def _bump_epoch(self) -> None:
        self._db.get().execute(BUMP_EPOCH)

    # vectors ------------------------------------------------------------------------------
    def put_vector(self, memory_id: int, identity: str, vector: Vector) -> None:
        with self._db.transaction() as conn:
            existed = conn.execute(
                "SELECT 1 FROM vectors WHERE memory_id = ?", (memory_id,)
            ).fetchone()
            conn.execute(
                "INSERT OR REPLACE INTO vectors (memory_id, identity, dims, vector) "
                "VALUES (?, ?, ?, ?)",
                (memory_id, identity, int(vector.shape[0]), SQLITE.vector(vector)),
            )
            newest = conn.execute("SELECT max(memory_id) FROM vectors").fetchone()[0]
            # Caches append by ascending id; anything else must make them reload.
            if existed or memory_id < newest:
                self._bump_epoch()

    def get_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]:
        return plain_vectors(self._sql, "vectors", "memory_id", ids, identity)

    def nearest(
        self, filt: MemoryFilter, identity: str, vector: Vector, k: int
    ) -> list[tuple[int, float]]:
        conn = self._db.get()
        return self._vectors.nearest(conn, filt, identity, vector, k, tagged_ids(conn, filt))

    # lexical ------------------------------------------------------------------------------
    def _stats_cache_for(self, conn: sqlite3.Connection) -> dict[tuple[MemoryFilter, Any], Any]:
        generation = tuple(
            conn.execute("SELECT key, value FROM meta WHERE key IN ('epoch', 'lexgen')")
        )
        return self._stats.current(generation)

    def put_lexical(self, memory_id: int, doc: LexicalDoc) -> None:
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM lexical WHERE rowid = ?", (memory_id,))
            lexical.write_entries(conn, [(memory_id, doc)])

    def delete_lexical(self, memory_id: int) -> None:
        with self._db.transaction() as conn:
            conn.execute(BUMP_LEXGEN)
            conn.execute("DELETE FROM lexical WHERE rowid = ?", (memory_id,))
            conn.execute("DELETE FROM lexical_lengths WHERE memory_id = ?", (memory_id,))

    def lexical_candidates(
        self, filt: MemoryFilter, terms: Sequence[str], limit: int
    ) -> list[LexicalRow]:
        conn = self._db.get()
        cache = self._stats_cache_for(conn)
        return lexical.candidates(conn, filt, terms, limit, cache, self._postings)

    def lexical_stats(self, filt: MemoryFilter, terms: Sequence[str]) -> LexicalStats:
        """Counted once per (filter, term) until the lexical index or a filtered column changes.

        Counting a common term's documents walks its whole FTS5 doclist (tens of ms at 10k
        memories), and the same words recur across recalls; the cache is keyed by the store's
        `epoch` and `lexgen` counters, which other processes' writes bump too."""
        conn = self._db.get()
        cache = self._stats_cache_for(conn)
        averages = lexical.averages(conn, filt, cache)
        frequencies = lexical.document_frequencies(conn, filt, terms, cache, self._postings)
        return LexicalStats.counted(averages, frequencies)

    def lexical_pool(
        self, filt: MemoryFilter, terms: Sequence[str], limit: int, sized: MemoryFilter
    ) -> LexicalPool:
        """The three reads in turn: an in-process check of the counters costs nothing here."""
        size = self.lexical_stats(sized, ()).doc_count
        rows = self.lexical_candidates(filt, terms, limit) if terms else []
        return LexicalPool(rows, self.lexical_stats(filt, terms) if rows else None, size)

    def iter_vectors(self) -> Iterator[tuple[int, str, Vector]]:
        rows = self._db.get().execute(
            "SELECT memory_id, identity, vector FROM vectors ORDER BY memory_id"
        )
        for memory_id, identity, blob in rows.fetchall():
            yield memory_id, identity, SQLITE.read_vector(blob)

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            try:
                total += os.path.getsize(self._path + suffix)
            except OSError:
                continue
        return total
