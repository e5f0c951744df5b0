"""Purge for the PostgreSQL backend: every copy of purged memories' text, removed for good.

`erase_memories` runs inside the purge transaction, after the core has blanked the memory rows,
redacted their events and refreshed their neighbours' context and windows: it deletes the
memories' own vectors, window vectors, lexical entries (text, tsvector), tag rows, citation
rows and the tidy proposals that name them (a merge proposal quotes both texts).

From then on no row a query can see holds the text. The bytes are another matter: an UPDATE or
DELETE leaves the old row version in its page as a dead tuple. `erase_freed` runs after the
commit, outside any transaction, `VACUUM (ANALYZE)` on the tables a purge touches: VACUUM
removes the dead tuples (heap and TOAST) and their index entries from what PostgreSQL reads, and
ANALYZE replaces the planner statistics (`pg_statistic`), whose most-common-value lists sample
column values and tsvector lexemes; the statistics of a table the purge emptied, which ANALYZE
leaves alone, are cleared. VACUUM does not zero the space it frees, so the old bytes stay in
the data files (heap pages, B-tree and GIN index pages, the dead statistics rows) until
overwritten; measured, a purged word was still in the files of `memories`, `events`,
`lexical`, its GIN index, the tag indexes and `pg_statistic` after it. Rewriting those files
takes `VACUUM FULL` (an exclusive lock on each table for the time it takes), which purge leaves
to the operator: the README's purge section gives the command, and the server's write-ahead
log (`pg_wal`), WAL archives, replicas and backups, which no command here can reach.
"""

from __future__ import annotations

import psycopg.errors

from cairn.errors import StoreError
from cairn.store.postgres.connection import Conn, Database
from cairn.store.sql.erase import SharedErase

# Every table a purge writes to: the memory rows, their events, and the derived rows below.
TOUCHED_TABLES = (
    "memories",
    "memory_tags",
    "events",
    "vectors",
    "windows",
    "lexical",
    "lexical_terms",  # its triggers delete a purged word's row when no document holds it
    "citations",
    "tidy_proposals",
)
# What erases the bytes VACUUM leaves (README, purge): rewrites each table and its indexes.
VACUUM_FULL = f"VACUUM FULL {', '.join(TOUCHED_TABLES)}, pg_statistic"


class EraseRows(SharedErase):
    _db: Database
    _PER_MEMORY = tuple(
        (table, "memory_id")
        for table in ("vectors", "windows", "lexical", "memory_tags", "citations")
    )

    def erase_freed(self) -> None:
        if self._db.in_transaction:
            raise StoreError("erase_freed runs after the purge commits, not inside a transaction")
        with self._db.connection() as conn:
            # Autocommit: VACUUM cannot run inside a transaction block.
            conn.execute(f"VACUUM (ANALYZE) {', '.join(TOUCHED_TABLES)}")
            _clear_stale_statistics(conn)


def _clear_stale_statistics(conn: Conn) -> None:
    """ANALYZE leaves a table's statistics as they were when it finds no row, so a table the
    purge emptied would keep its last sample (a purged tag, say). PostgreSQL 18 can clear them
    (`pg_clear_attribute_stats`, for the table's owner); older servers keep them until the
    table is analysed with rows in it again."""
    if conn.execute("SELECT to_regproc('pg_clear_attribute_stats')").fetchone() == (None,):
        return
    for table in TOUCHED_TABLES:
        if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone() == (True,):
            continue
        try:
            conn.execute(
                "SELECT pg_clear_attribute_stats(current_schema(), %(table)s, s.attname::text,"
                " s.inherited) FROM pg_stats s WHERE s.schemaname = current_schema()"
                " AND s.tablename = %(table)s",
                {"table": table},
            )
        except psycopg.errors.InsufficientPrivilege:
            continue  # a role that does not own the table: as on older servers (README)
