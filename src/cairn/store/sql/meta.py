"""The store's own key/value notes (`meta`: `store_id`, migration checkpoints, cache counters)
on either SQL backend. They are never copied with the store."""

from __future__ import annotations

from cairn.store.sql.dialect import Sql


class MetaRows:
    _sql: Sql

    def get_meta(self, key: str) -> str | None:
        row = self._sql.one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self._sql.run("DELETE FROM meta WHERE key = ?", (key,))
            return
        self._sql.run(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )
