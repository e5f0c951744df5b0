"""The pages index for the PostgreSQL backend: documentation files and their heading chunks.

A mixin of `PostgresStore`, statement for statement the SQLite backend's `PageRows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.records.pages import Page, PageChunk, PageFile
from cairn.store.postgres.connection import Database

PAGE_COLUMNS = "id, scope, path, heading, line_start, line_end, text, digest"


class PageRows:
    _db: Database

    def page_files(self, scope: str) -> dict[str, PageFile]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT path, mtime_ns, size, digest FROM page_files WHERE scope = %s", (scope,)
            ).fetchall()
        return {row[0]: PageFile(row[0], int(row[1]), int(row[2]), row[3]) for row in rows}

    def sync_page_file(self, scope: str, file: PageFile, chunks: Sequence[PageChunk]) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO page_files (scope, path, mtime_ns, size, digest)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (scope, path) DO UPDATE SET"
                " mtime_ns = EXCLUDED.mtime_ns, size = EXCLUDED.size, digest = EXCLUDED.digest",
                (scope, file.path, file.mtime_ns, file.size, file.digest),
            )
            old: dict[str, list[int]] = {}
            for page_id, digest in conn.execute(
                "SELECT id, digest FROM pages WHERE scope = %s AND path = %s ORDER BY id",
                (scope, file.path),
            ).fetchall():
                old.setdefault(digest, []).append(int(page_id))
            for chunk in chunks:
                reused = old.get(chunk.digest)
                if reused:
                    conn.execute(
                        "UPDATE pages SET heading = %s, line_start = %s, line_end = %s,"
                        " text = %s WHERE id = %s",
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
                    "INSERT INTO pages (scope, path, heading, line_start, line_end, text, digest)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s)",
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
            if stale:
                conn.execute("DELETE FROM pages WHERE id = ANY(%s::bigint[])", (stale,))

    def drop_page_files(self, scope: str, paths: Sequence[str]) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "DELETE FROM pages WHERE scope = %s AND path = ANY(%s::text[])",
                (scope, list(paths)),
            )
            conn.execute(
                "DELETE FROM page_files WHERE scope = %s AND path = ANY(%s::text[])",
                (scope, list(paths)),
            )

    def pages_in(self, scope: str) -> list[Page]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {PAGE_COLUMNS} FROM pages WHERE scope = %s ORDER BY path, line_start, id",
                (scope,),
            ).fetchall()
        return [_page(r) for r in rows]

    def get_pages(self, ids: Sequence[int]) -> list[Page]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {PAGE_COLUMNS} FROM pages WHERE id = ANY(%s::bigint[])", (wanted,)
            ).fetchall()
        found = {int(r[0]): _page(r) for r in rows}
        return [found[i] for i in ids if i in found]


def _page(row: tuple[Any, ...]) -> Page:
    page_id, scope, path, heading, line_start, line_end, text, digest = row
    return Page(int(page_id), scope, path, heading, int(line_start), int(line_end), text, digest)
