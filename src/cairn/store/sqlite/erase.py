"""Purge for the SQLite backend: every copy of purged memories' text, removed for good.

`erase_memories` runs inside the purge transaction, after the core has blanked the memory rows,
redacted their events and refreshed their neighbours' context and windows. It deletes the
memories' own vectors, window vectors, lexical entries, citation rows and the tidy proposals
that name them (a merge proposal quotes both texts), then merges the lexical index into one
segment (FTS5 `'optimize'`): an FTS5 delete only appends a tombstone, and the deleted terms
stay in the older segments of `lexical_data` / `lexical_idx` until a merge drops them. FTS5's
`secure-delete` option removes them at the delete instead, but it needs SQLite 3.44 (Python
ships older ones: 3.40 here) and a table with it set cannot be read by an older SQLite, so the
merge it is; its cost grows with the index (see the README's purge section).

`erase_freed` runs after the commit. Every connection zeroes what it frees (`PRAGMA
secure_delete = ON`, connection.py), so the deleted rows, the rewritten cells and the merged
segments leave zeros behind. What remains is the write-ahead log, which holds every page image
written since the last checkpoint, the memory's text included: `PRAGMA wal_checkpoint(TRUNCATE)`
copies the newest pages into the main file and empties the log. It waits, up to the busy
timeout, for other connections to finish their reads; if one keeps reading longer,
`StoreBusy` says the log still holds the text. A store written before secure_delete was on
(`meta.freed_space` = 'unscrubbed', migration 0007) may hold old text in freed space anywhere,
so its first purge also rebuilds the file once (VACUUM, with its temporary copy in memory).
"""

from __future__ import annotations

import sqlite3

from cairn.errors import StoreBusy, StoreError
from cairn.store.sql.dialect import Run
from cairn.store.sql.erase import SharedErase
from cairn.store.sql.meta import MetaRows
from cairn.store.sqlite import dense_files
from cairn.store.sqlite.connection import BUMP_EPOCH, BUMP_LEXEPOCH, BUMP_LEXGEN, Connections


class EraseRows(SharedErase, MetaRows):
    _db: Connections
    _PER_MEMORY = (
        ("vectors", "memory_id"),
        ("windows", "memory_id"),
        ("lexical", "rowid"),
        ("lexical_lengths", "memory_id"),
        ("memory_tags", "memory_id"),
        ("citations", "memory_id"),
    )

    def _erased(self, run: Run) -> None:
        run.execute("INSERT INTO lexical (lexical) VALUES ('optimize')")
        run.execute(BUMP_LEXGEN)
        run.execute(BUMP_LEXEPOCH)  # the postings pool rebuilds without the purged words
        # Vectors and windows left: the dense caches reload, and their files go.
        run.execute(BUMP_EPOCH)
        dense_files.drop(self._db.path)

    def erase_freed(self) -> None:
        if self._db.path == ":memory:":
            return  # nothing on disk
        if self._db.in_transaction:
            raise StoreError("erase_freed runs after the purge commits, not inside a transaction")
        # Again after the commit: a process that saved a cache while the purge ran checked the
        # epoch before the purge committed, and kept its files (`dense_files`, `postings_files`).
        dense_files.drop(self._db.path)
        conn = self._db.get()
        try:
            if self.get_meta("freed_space") == "unscrubbed":
                _vacuum(conn)
                self.set_meta("freed_space", "zeroed")
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError as exc:
            raise self._still_held(str(exc)) from exc
        if busy:
            raise self._still_held("another connection kept reading")

    def _still_held(self, why: str) -> StoreBusy:
        return StoreBusy(
            f"the purge is committed, but {self._db.path} or its -wal may still hold the old "
            f"text ({why}): close the other processes using the store. SQLite empties the log "
            "when the last connection to it closes; the next purge finishes the rest."
        )


def _vacuum(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA temp_store = MEMORY")  # no temporary copy of the store on disk
    try:
        conn.execute("VACUUM")
    finally:
        conn.execute("PRAGMA temp_store = DEFAULT")
