"""The pages index on either SQL backend: documentation files and their heading chunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.records.pages import Page, PageChunk, PageFile
from cairn.store.sql.dialect import Run, Sql

PAGE_COLUMNS = "id, scope, path, heading, line_start, line_end, text, digest"


class PageRows:
    """Mixin of the SQL stores: the `PageStore` part of the Protocol."""

    _sql: Sql

    def page_files(self, scope: str) -> dict[str, PageFile]:
        rows = self._sql.all(
            "SELECT path, mtime_ns, size, digest FROM page_files WHERE scope = ?", (scope,)
        )
        return {row[0]: PageFile(row[0], int(row[1]), int(row[2]), row[3]) for row in rows}

    def sync_page_file(self, scope: str, file: PageFile, chunks: Sequence[PageChunk]) -> None:
        with self._sql.write() as run:
            run.execute(
                "INSERT INTO page_files (scope, path, mtime_ns, size, digest)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, path) DO UPDATE SET"
                " mtime_ns = excluded.mtime_ns, size = excluded.size, digest = excluded.digest",
                (scope, file.path, file.mtime_ns, file.size, file.digest),
            )
            old: dict[str, list[int]] = {}
            for page_id, digest in run.all(
                "SELECT id, digest FROM pages WHERE scope = ? AND path = ? ORDER BY id",
                (scope, file.path),
            ):
                old.setdefault(digest, []).append(int(page_id))
            for chunk in chunks:
                _write_chunk(run, scope, file.path, chunk, old.get(chunk.digest))
            stale = [page_id for ids in old.values() for page_id in ids]
            for part in run.dialect.chunks(stale):
                among, params = run.dialect.among("id", part)
                run.execute(f"DELETE FROM pages WHERE {among}", params)

    def drop_page_files(self, scope: str, paths: Sequence[str]) -> None:
        with self._sql.write() as run:
            for part in run.dialect.chunks(paths):
                among, params = run.dialect.among("path", part, "text")
                run.execute(f"DELETE FROM pages WHERE scope = ? AND {among}", (scope, *params))
                run.execute(f"DELETE FROM page_files WHERE scope = ? AND {among}", (scope, *params))

    def pages_in(self, scope: str) -> list[Page]:
        rows = self._sql.all(
            f"SELECT {PAGE_COLUMNS} FROM pages WHERE scope = ? ORDER BY path, line_start, id",
            (scope,),
        )
        return [_page(row) for row in rows]

    def get_pages(self, ids: Sequence[int]) -> list[Page]:
        wanted = list(dict.fromkeys(ids))
        rows = self._sql.select_in(
            f"SELECT {PAGE_COLUMNS} FROM pages WHERE {{among}}", "id", wanted
        )
        found = {int(row[0]): _page(row) for row in rows}
        return [found[i] for i in ids if i in found]


def _write_chunk(
    run: Run, scope: str, path: str, chunk: PageChunk, reusable: list[int] | None
) -> None:
    """Update a chunk whose digest is unchanged in place (it keeps its `doc_` ref), else add it."""
    if reusable:
        run.execute(
            "UPDATE pages SET heading = ?, line_start = ?, line_end = ?, text = ? WHERE id = ?",
            (chunk.heading, chunk.line_start, chunk.line_end, chunk.text, reusable.pop(0)),
        )
        return
    run.execute(
        "INSERT INTO pages (scope, path, heading, line_start, line_end, text, digest) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (scope, path, chunk.heading, chunk.line_start, chunk.line_end, chunk.text, chunk.digest),
    )


def _page(row: Sequence[Any]) -> Page:
    page_id, scope, path, heading, line_start, line_end, text, digest = row
    return Page(int(page_id), scope, path, heading, int(line_start), int(line_end), text, digest)
