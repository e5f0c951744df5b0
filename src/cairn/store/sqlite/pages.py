"""The pages index for the SQLite backend: documentation files and their heading chunks."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.records.pages import Page, PageChunk, PageFile
from cairn.store.sqlite.connection import Connections

PAGE_COLUMNS = "id, scope, path, heading, line_start, line_end, text, digest"


class PageRows:
    """Mixin of `SqliteStore`: the `PageStore` part of the Protocol."""

    _db: Connections

    def page_files(self, scope: str) -> dict[str, PageFile]:
        rows = self._db.get().execute(
            "SELECT path, mtime_ns, size, digest FROM page_files WHERE scope = ?", (scope,)
        )
        return {row[0]: PageFile(*row) for row in rows}

    def sync_page_file(self, scope: str, file: PageFile, chunks: Sequence[PageChunk]) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO page_files (scope, path, mtime_ns, size, digest) "
                "VALUES (?, ?, ?, ?, ?)",
                (scope, file.path, file.mtime_ns, file.size, file.digest),
            )
            old: dict[str, list[int]] = {}
            for page_id, digest in conn.execute(
                "SELECT id, digest FROM pages WHERE scope = ? AND path = ? ORDER BY id",
                (scope, file.path),
            ).fetchall():
                old.setdefault(digest, []).append(page_id)
            for chunk in chunks:
                reused = old.get(chunk.digest)
                if reused:
                    conn.execute(
                        "UPDATE pages SET heading = ?, line_start = ?, line_end = ?, text = ? "
                        "WHERE id = ?",
                        (
                            chunk.heading,
                            chunk.line_start,
                            chunk.line_end,
                            chunk.text,
                            reused.pop(0),
                        ),
                    )
                    continue
                conn.execute(
                    "INSERT INTO pages (scope, path, heading, line_start, line_end, text, digest) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        scope,
                        file.path,
                        chunk.heading,
                        chunk.line_start,
                        chunk.line_end,
                        chunk.text,
                        chunk.digest,
                    ),
                )
            stale = [page_id for ids in old.values() for page_id in ids]
            conn.executemany("DELETE FROM pages WHERE id = ?", [(i,) for i in stale])

    def drop_page_files(self, scope: str, paths: Sequence[str]) -> None:
        with self._db.transaction() as conn:
            for path in paths:
                conn.execute("DELETE FROM pages WHERE scope = ? AND path = ?", (scope, path))
                conn.execute("DELETE FROM page_files WHERE scope = ? AND path = ?", (scope, path))

    def pages_in(self, scope: str) -> list[Page]:
        rows = self._db.get().execute(
            f"SELECT {PAGE_COLUMNS} FROM pages WHERE scope = ? ORDER BY path, line_start, id",
            (scope,),
        )
        return [Page(*row) for row in rows]

    def get_pages(self, ids: Sequence[int]) -> list[Page]:
        wanted = list(dict.fromkeys(ids))[:500]
        if not wanted:
            return []
        marks = ", ".join("?" for _ in wanted)
        rows = self._db.get().execute(
            f"SELECT {PAGE_COLUMNS} FROM pages WHERE id IN ({marks})", wanted
        )
        found = {row[0]: Page(*row) for row in rows}
        return [found[i] for i in ids if i in found]
