"""The part of a purge (`EraseStore.erase_memories`) that reads the same on every SQL backend:
deleting the rows that hold a purged memory's text or an image of it. What the engine's files
still hold afterwards, and what erases it, is each backend's own (`store/<backend>/erase.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.store.sql.dialect import Run, Sql


class SharedErase:
    """A backend's `EraseRows` names its tables in `_PER_MEMORY` and may extend `_erased`."""

    _sql: Sql
    # Rows keyed by memory id that hold a memory's text or an image of it: (table, id column).
    _PER_MEMORY: tuple[tuple[str, str], ...]

    def erase_memories(self, memory_ids: Sequence[int]) -> None:
        ids = sorted(set(memory_ids))
        if not ids:
            return
        d = self._sql.dialect
        with self._sql.write() as run:
            for chunk in d.chunks(ids):
                for table, column in self._PER_MEMORY:
                    among, params = d.among(column, chunk)
                    run.execute(f"DELETE FROM {table} WHERE {among}", params)
                # A merge proposal quotes the texts of the memories it names.
                naming, params = d.overlaps("memory_ids", chunk)
                run.execute(f"DELETE FROM tidy_proposals WHERE {naming}", params)
            self._erased(run)

    def _erased(self, run: Run) -> None:
        """Inside the purge transaction, after the rows are gone."""
